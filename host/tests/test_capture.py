# SPDX-License-Identifier: BSD-2-Clause
"""--capture on the twin: a pcapng of both ports' wires, read back with scapy, every frame checked
against the tester's own records, and opened with tshark as a user's Wireshark would."""

import csv
import os
import re
import stat
import struct
import subprocess
import sys
import threading
import time
import zlib
from decimal import Decimal
from pathlib import Path

import pytest
from scapy.utils import PcapNgReader

from fpgatest.cli import main
from fpgatest.driver import Device
from fpgatest.tester import Tester
from common.frames import parse_signature

SIG_AT = 14 + 20 + 8          # IPv4/UDP: the signature follows the UDP header
ROOT = Path(__file__).resolve().parents[2]


def packets_of(pcap: Path) -> list[tuple]:
    """A capture's packets as scapy reads them: (interface, direction, time in ns, bytes)."""
    with PcapNgReader(str(pcap)) as reader:
        return [(p.sniffed_on, p.direction, int(p.time * 10**9), bytes(p)) for p in reader]


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

    packets = packets_of(pcap)
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


# ---- the capture as Wireshark reads it ----------------------------------------------------------

# Wireshark's own checks on: the FCS (the capture says every frame ends in one), IPv4 header and UDP
# checksums (ICMP and ICMPv6 checksums are checked by default)
TSHARK_CHECKS = ["-o", "eth.check_fcs:TRUE", "-o", "ip.check_checksum:TRUE", "-o", "udp.check_checksum:TRUE"]
FIELDS = ["frame.interface_name", "frame.packet_flags_direction", "frame.time_epoch", "eth.fcs.status",
          "ip.checksum.status", "udp.checksum.status", "icmp.checksum.status", "icmpv6.checksum.status", "eth.type"]
CROSS = "0x88b5"             # the switch model's cross traffic (foreign to the tester)
GOOD = "1"                   # Wireshark's checksum status: 0 bad, 1 good, 2 unverified
BROKEN = "_ws.malformed || _ws.expert.severity >= error"


def tshark(pcap, *args) -> list[list[str]]:
    """tshark's field rows for a capture (it must read the file without a complaint)."""
    done = subprocess.run(["tshark", "-r", str(pcap), *TSHARK_CHECKS, *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert not [line for line in done.stderr.splitlines() if "Running as user" not in line], done.stderr
    return [line.split("\t") for line in done.stdout.splitlines()]


@pytest.mark.parametrize("argv,sides", [
    (["run", "--proto", "ipv4", "--vlan", "5", "--size", "100", "--dut", "cross_mbps=50", "--duration", "0.0002",
      "--interval", "0.0001"], {("port0", "0x00000002"), ("port1", "0x00000001")}),
    (["run", "--proto", "ipv6", "--size", "200", "--duration", "0.0002", "--interval", "0.0001"],
     {("port0", "0x00000002"), ("port1", "0x00000001")}),
    (["echo", "--proto", "ipv4", "--window", "2", "--pings", "4", "--duration", "0.0005", "--interval", "0.0002"],
     {("port0", "0x00000002"), ("port0", "0x00000001"), ("port1", "0x00000001")}),
    (["echo", "--proto", "ipv6", "--window", "2", "--pings", "4", "--duration", "0.0005", "--interval", "0.0002"],
     {("port0", "0x00000002"), ("port0", "0x00000001"), ("port1", "0x00000001")}),
], ids=["run-ipv4-vlan-cross", "run-ipv6", "echo-ipv4", "echo-ipv6"])
def test_tshark_reads_every_frame_as_sent(twin_link, tmp_path, capsys, argv, sides):
    """The capture as a user opens it: Wireshark's dissectors (tshark) read every frame, none malformed
    and no expert error, every FCS and every IPv4, UDP, ICMP and ICMPv6 checksum good (the UDP one
    with the stamp and its compensation field in the payload); each frame on the interface and in the
    direction it was captured; timestamps to the nanosecond, each the tester's 8 ns tick, as scapy
    reads them. A copy with one byte changed shows that these checks see a broken frame."""
    url, csr = twin_link
    pcap = tmp_path / "wire.pcapng"
    out = ["--out", str(tmp_path / "out")] if argv[0] == "echo" else []
    assert main([*argv, "--url", url, "--csr", str(csr), "--calibration", "none", "--capture", str(pcap), *out]) == 0
    captured = int(re.search(r"(\d+) frames captured", capsys.readouterr().err).group(1))

    rows = tshark(pcap, "-T", "fields", *[a for f in FIELDS for a in ("-e", f)])
    assert len(rows) == captured > 50
    assert tshark(pcap, "-Y", BROKEN) == []
    assert {(r[0], r[1]) for r in rows} == sides
    for row in rows:
        assert row[3] == GOOD, row                                    # the FCS
        assert all(status in ("", GOOD) for status in row[4:8]), row  # every checksum the frame has
    with PcapNgReader(str(pcap)) as reader:
        scapy_ns = [int(p.time * 10**9) for p in reader]
    tshark_ns = [int(Decimal(r[2]) * 10**9) for r in rows]
    assert tshark_ns == scapy_ns and all(ns % 8 == 0 for ns in tshark_ns)
    # every frame but the cross traffic is a test frame whose checksums Wireshark checked and found good
    cross = [r for r in rows if r[8] == CROSS]
    assert bool(cross) == ("--dut" in argv) and all(r[0] == "port1" for r in cross)
    tested = len(rows) - len(cross)
    checked = {"ip": sum(r[4] == GOOD for r in rows), "udp": sum(r[5] == GOOD for r in rows),
               "icmp": sum(r[6] == GOOD or r[7] == GOOD for r in rows)}
    assert checked["udp" if argv[0] == "run" else "icmp"] == tested
    assert checked["icmp" if argv[0] == "run" else "udp"] == 0
    assert checked["ip"] == (tested if "ipv4" in argv else 0)

    # one byte of the first frame changed: Wireshark finds its FCS (and checksum) bad
    data = bytearray(pcap.read_bytes())
    endian = "<" if data[8:12] == b"\x4d\x3c\x2b\x1a" else ">"     # the section header's byte-order magic
    pos = 0
    while struct.unpack(endian + "I", data[pos:pos + 4])[0] != 6:     # to the first enhanced packet block
        pos += struct.unpack(endian + "I", data[pos + 4:pos + 8])[0]
    data[pos + 28 + 40] ^= 0xFF                                       # its packet data starts at byte 28
    broken = tmp_path / "broken.pcapng"
    broken.write_bytes(bytes(data))
    assert [r[0] for r in tshark(broken, "-Y", BROKEN, "-T", "fields", "-e", "frame.number")] == ["1"]


# ---- the twin's own capture (python -m boards.twin --run --capture FILE) --------------------------------

def test_the_twins_own_capture_holds_its_whole_run(tmp_path, capsys):
    """A twin started with --capture FILE (make twin TWIN_ARGS="--capture FILE") writes FILE when it stops:
    every frame its wires carried from its start, port 0's outbound ones as many as port 0 sent, port 1's
    inbound ones as many as port 1 received, in time order; tshark reads it without a complaint. A
    command's own --capture meanwhile gets the frames of its own time and leaves the twin's capture on."""
    from boards import twin

    port, life, mine = twin.free_port(), tmp_path / "life.pcapng", tmp_path / "mine.pcapng"
    url, csr = f"socket://127.0.0.1:{port}", twin.BUILD_DIR / "csr.json"
    proc = subprocess.Popen([sys.executable, "-m", "boards.twin", "--run", "--port", str(port), "--capture", str(life)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert f"; capturing its wires to {life} (written when it stops)" in proc.stdout.readline()
        run = ["run", "--url", url, "--csr", str(csr), "--calibration", "none", "--duration", "0.0001",
               "--interval", "0.0001"]
        sent = []       # each command's frames: port 0's sent and port 1's received (counted from its start)
        for own in ([], ["--capture", str(mine)], [], ["--size", "1518"]):
            assert main([*run, *own]) == 0
            with Device(url, csr) as dev:
                t = Tester(dev)
                t.wait_ticks(20_000)
                ports = t.snapshot()["ports"]
                assert dev.read("capture_enable") == 1, "a command's capture leaves the twin's on"
            sent.append((ports[0]["tx_frames"], ports[1]["rx_frames"]))
        total = [sum(s[0] for s in sent), sum(s[1] for s in sent)]
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    frames = packets_of(life)
    assert f"{len(frames)} frames captured to {life}" in err
    assert [sum(1 for f in frames if f[:2] == side) for side in (("port0", 2), ("port1", 1))] == total, sent
    assert len(frames) == sum(total) and [f[2] for f in frames] == sorted(f[2] for f in frames)
    assert {len(f[3]) for f in frames} == {64, 1518}
    # the command's own: the frames sent and received while it ran, each one also in the twin's capture
    own = packets_of(mine)
    assert [sum(1 for f in own if f[:2] == side) for side in (("port0", 2), ("port1", 1))] == list(sent[1])
    assert set(own) <= set(frames)
    rows = tshark(life, "-T", "fields", "-e", "eth.fcs.status", "-e", "udp.checksum.status")
    assert len(rows) == len(frames) and all(r == [GOOD, GOOD] for r in rows)
    assert tshark(life, "-Y", BROKEN) == []


def test_a_capture_leaves_out_a_frame_the_twin_had_not_ended(tmp_path):
    """A tap's last line without its newline (the twin stopped while a frame was on the wire) is not a
    frame: the capture the twin writes when it stops has the whole frames only."""
    from fpgatest.capture import TwinCapture

    class Map(dict):
        constants = {"capture_port0_tx": "port0-tx.txt", "capture_port1_rx": "port1-rx.txt"}

    class Dev:
        map = Map(capture_enable=None)

        def read(self, name):
            return 0

        def write(self, name, value):
            pass

    tester = type("T", (), {"dev": Dev(), "n_ports": 2})()
    (tmp_path / "port0-tx.txt").write_text("8 " + "ab" * 64 + "\n")
    (tmp_path / "port1-rx.txt").write_text("")
    capture = TwinCapture(tester, tmp_path)
    capture.start()
    with open(tmp_path / "port0-tx.txt", "a") as f:
        f.write("16 " + "cd" * 64 + "\n24 " + "ef" * 30)
    with open(tmp_path / "port1-rx.txt", "a") as f:
        f.write("20 " + "01" * 64 + "\n")
    assert capture.collect(tmp_path / "c.pcapng") == 2
    assert [(p.sniffed_on, bytes(p)) for p in PcapNgReader(str(tmp_path / "c.pcapng"))] == \
        [("port0", b"\xcd" * 64), ("port1", b"\x01" * 64)]


# ---- live captures: a named pipe, as Wireshark's `-k -i PIPE` reads one ----------------------------

class PipeReader(threading.Thread):
    """Reads a named pipe as Wireshark would, as it comes; `blocks()` parses what has arrived."""

    def __init__(self, path: Path, keep_open: bool = True):
        super().__init__(daemon=True)
        self.path, self.keep_open, self.data, self.eof = path, keep_open, bytearray(), threading.Event()

    def run(self):
        with open(self.path, "rb", buffering=0) as f:
            while chunk := f.read(1 << 16):
                self.data += chunk
                if not self.keep_open and self.blocks():       # the header read: the reader goes away
                    break
        self.eof.set()

    def _whole(self) -> tuple[list[int], bytes]:
        """The types of the whole pcapng blocks read so far (little-endian: what fpgatest writes), and
        their bytes."""
        types, pos, data = [], 0, bytes(self.data)
        while pos + 8 <= len(data):
            kind, length = struct.unpack("<II", data[pos:pos + 8])
            if pos + length > len(data):
                break
            types.append(kind)
            pos += length
        return types, data[:pos]

    def blocks(self) -> list[int]:
        return self._whole()[0]

    def save(self, path: Path) -> Path:
        """The whole blocks read so far written to path, a pcapng file."""
        path.write_bytes(self._whole()[1])
        return path


EPB = 6     # pcapng's enhanced packet block


def test_a_live_capture_to_a_pipe_has_every_frame(twin_link, tmp_path, capsys):
    """--capture PIPE: the frames written to the named pipe as they come, read by a reader that opened
    it before the command started; the stream holds every frame port 0 sent and port 1 received (as
    many as the counters say), every FCS good, port 1's frames port 0's in order, each later by the
    switch's one latency (no dither); tshark reads it. The pipe is still a pipe after (a file
    capture's rename would have replaced it)."""
    url, csr = twin_link
    pipe = tmp_path / "wire.pipe"
    os.mkfifo(pipe)
    reader = PipeReader(pipe)
    reader.start()
    run = ["run", "--url", url, "--csr", str(csr), "--calibration", "none", "--size", "200", "--duration", "0.002",
           "--interval", "0.001", "--dut", "dither=0"]
    assert main([*run, "--capture", str(pipe)]) == 0
    err = capsys.readouterr().err
    assert reader.eof.wait(30) and stat.S_ISFIFO(pipe.stat().st_mode)
    frames = int(re.search(r"(\d+) frames captured to .* \(live\)", err).group(1))
    saved = reader.save(tmp_path / "from-pipe.pcapng")
    packets = packets_of(saved)
    assert len(packets) == frames > 1000
    with Device(url, csr) as dev:
        ports = Tester(dev).snapshot()["ports"]
    counts = [sum(1 for p in packets if p[:2] == side) for side in (("port0", 2), ("port1", 1))]
    assert counts == [ports[0]["tx_frames"], ports[1]["rx_frames"]] and counts[0] == counts[1]
    assert {len(p[3]) for p in packets} == {200}
    assert all(struct.unpack("<I", b[-4:])[0] == zlib.crc32(b[:-4]) for *_, b in packets)
    # port 1's frames are port 0's, in order, each later by the switch's latency
    sent = [p for p in packets if p[0] == "port0"]
    got = [p for p in packets if p[0] == "port1"]
    assert [p[3] for p in sent] == [p[3] for p in got]
    assert len({g[2] - s[2] for s, g in zip(sent, got)}) == 1
    rows = tshark(saved, "-T", "fields", "-e", "eth.fcs.status", "-e", "udp.checksum.status")
    assert len(rows) == frames and all(r == [GOOD, GOOD] for r in rows)


def test_a_live_capture_without_a_reader_or_whose_reader_leaves_ends_the_command_well(twin_link, tmp_path, capsys):
    """A pipe no one reads, and a reader that goes away after the header: the command runs to its end
    (exit 0) and says what became of the capture in one line; nothing waits for a reader."""
    url, csr = twin_link
    pipe = tmp_path / "wire.pipe"
    os.mkfifo(pipe)
    run = ["run", "--url", url, "--csr", str(csr), "--calibration", "none", "--duration", "0.001",
           "--interval", "0.001", "--capture", str(pipe)]
    assert main(run) == 0
    assert "fpgatest: live capture to" in (err := capsys.readouterr().err) and "(no reader opened the pipe)" in err
    reader = PipeReader(pipe, keep_open=False)
    reader.start()
    assert main(run) == 0
    err = capsys.readouterr().err
    assert re.search(r"live capture to .* ended early \(Broken pipe\): \d+ frames written", err), err
    assert reader.eof.is_set() and reader.blocks()[:3] == [0x0A0D0D0A, 1, 1]   # its header: SHB, two IDBs


def test_the_twins_own_live_capture_has_a_commands_frames_while_it_runs(tmp_path):
    """python -m boards.twin --run --capture PIPE: a reader of the pipe has every frame of a command
    soon after the command ends, while the twin still runs (written as they come, not when it stops).
    The command's own live capture meanwhile (the twin's taps already on) has the frames of its own
    time: as many as the command sent and received, each also in the twin's."""
    from boards import twin

    port, pipe, mine = twin.free_port(), tmp_path / "life.pipe", tmp_path / "mine.pipe"
    os.mkfifo(pipe)
    os.mkfifo(mine)
    url, csr = f"socket://127.0.0.1:{port}", twin.BUILD_DIR / "csr.json"
    proc = subprocess.Popen([sys.executable, "-m", "boards.twin", "--run", "--port", str(port), "--capture", str(pipe)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    reader, own = PipeReader(pipe), PipeReader(mine)
    reader.start()
    own.start()
    try:
        assert f"; capturing its wires to {pipe} (live, as the frames come)" in proc.stdout.readline()
        assert main(["run", "--url", url, "--csr", str(csr), "--calibration", "none", "--duration", "0.0005",
                     "--interval", "0.0005", "--capture", str(mine)]) == 0
        with Device(url, csr) as dev:
            t = Tester(dev)
            t.wait_ticks(20_000)
            ports = t.snapshot()["ports"]
        expected = ports[0]["tx_frames"] + ports[1]["rx_frames"]
        deadline = time.monotonic() + 30
        while reader.blocks().count(EPB) < expected and time.monotonic() < deadline:
            time.sleep(0.05)
        assert reader.blocks().count(EPB) == expected > 0 and proc.poll() is None
        assert own.eof.wait(10)
        frames = packets_of(own.save(tmp_path / "own.pcapng"))
        assert [sum(1 for f in frames if f[:2] == side) for side in (("port0", 2), ("port1", 1))] == \
            [ports[0]["tx_frames"], ports[1]["rx_frames"]]
        assert set(frames) <= set(packets_of(reader.save(tmp_path / "life.pcapng")))
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert reader.eof.wait(10)
    assert f"{expected} frames captured to {pipe} (live)" in err
