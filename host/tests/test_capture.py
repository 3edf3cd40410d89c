# SPDX-License-Identifier: BSD-2-Clause
"""--capture on the twin: a pcapng of both ports' wires, read back with scapy, every frame checked
against the tester's own records."""

import csv
import struct
import zlib

from scapy.utils import PcapNgReader

from fpgatest.cli import main
from fpgatest.driver import Device
from fpgatest.tester import Tester
from common.frames import parse_signature

SIG_AT = 14 + 20 + 8          # IPv4/UDP: the signature follows the UDP header


def test_capture_holds_every_frame_with_the_testers_time(twin_link, tmp_path, capsys):
    """An owd run with cross traffic on the path: the capture has every probe on port 0 (outbound)
    and on port 1 (inbound), byte for byte the same, every FCS good; a probe's timestamp on port 0
    is its TX stamp (8 ns ticks) and on port 1 its TX stamp plus the latency the tester reported;
    the cross-traffic frames appear on port 1 only, as the model sent them."""
    url, csr = twin_link
    with Device(url, csr) as dev:
        t = Tester(dev)
        t.dut_set("ab", enable=True, latency_ns=1000, per_byte_ns=8, rate_mbps=1000, cut_through=False,
                  dither=False, cable_in_ns=0, cable_out_ns=0, cross_mbps=20, cross_size=100, cross_random=False)
        t.dut_set("ab2", enable=False, cross_mbps=0)
        cross_before = t.dut_get("ab")["cross_out"]
    pcap = tmp_path / "wire.pcapng"
    out = tmp_path / "owd"
    try:
        assert main(["owd", "--url", url, "--csr", str(csr), "--calibration", "none", "--sizes", "64,512",
                     "--probes", "4", "--out", str(out), "--capture", str(pcap)]) == 0
    finally:
        with Device(url, csr) as dev:
            t = Tester(dev)
            t.dut_set("ab", cross_mbps=0)
            t.wait_ticks(20_000)
            cross_after = t.dut_get("ab")["cross_out"]
    assert f"frames captured to {pcap}" in capsys.readouterr().err

    packets = []
    with PcapNgReader(str(pcap)) as reader:
        for p in reader:
            packets.append((p.sniffed_on, p.direction, int(p.time * 10**9), bytes(p)))
    assert packets and all(len(b) >= 64 for _, _, _, b in packets)
    # every frame on the wire has a good FCS
    assert all(struct.unpack("<I", b[-4:])[0] == zlib.crc32(b[:-4]) for _, _, _, b in packets)

    sent = [(ts, b) for ifname, d, ts, b in packets if ifname == "port0" and d == 2]
    got = [(ts, b) for ifname, d, ts, b in packets if ifname == "port1" and d == 1]
    assert not [p for p in packets if p[0] == "port1" and p[1] == 2 or p[0] == "port0" and p[1] == 1]
    probes = {(int(r["size_bytes"]), int(r["seq"])): float(r["owd_ns"]) for r in csv.DictReader(open(out / "probes.csv"))}
    assert len(sent) == len(probes) == 8
    by_bytes = {}
    for ts, b in sent:
        stream, seq, tx_tick = parse_signature(b[SIG_AT:SIG_AT + 18])
        assert ts == tx_tick * 8, "port 0's timestamp is the frame's own TX stamp"
        by_bytes[b] = (ts, len(b), seq)
    test_frames = [(ts, b) for ts, b in got if b in by_bytes]
    foreign = [(ts, b) for ts, b in got if b not in by_bytes]
    assert len(test_frames) == 8
    for ts, b in test_frames:
        tx_ts, size, seq = by_bytes[b]
        assert ts - tx_ts == probes[(size, seq)], "port 1's timestamp minus port 0's is the reported latency"
    # the cross traffic: 100-byte broadcast frames of EtherType 0x88B5, on port 1 only
    assert foreign and all(len(b) == 100 and b[:6] == b"\xff" * 6 and b[12:14] == b"\x88\xb5" for _, b in foreign)
    assert len(foreign) <= cross_after - cross_before
