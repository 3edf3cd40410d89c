# SPDX-License-Identifier: BSD-2-Clause
"""fpgatest_gen: frame content against scapy, TX stamps against cocotbext-eth, line rate, gaps, bursts, bad settings."""

import json
import os
import random

import cocotb
import pytest
from cocotb.triggers import ClockCycles
from scapy.layers.inet import ICMP, IP, UDP
from scapy.layers.inet6 import ICMPv6EchoRequest, IPv6
from scapy.layers.l2 import Ether
from scapy.utils import rdpcap, wrpcap

from common.frames import PROTO_IPV4, PROTO_IPV6, PROTO_RAW, StreamConfig, min_size, parse_signature
from common.runner import SIM_BUILD, run, worker_suffix
from common.tb import TB, TxHold
from common.harness import RTL
from litex_soc.verilog_ports import module_values

# the TX stamp is the tick while the SFD is on gmii_txd; cocotbext-eth's sim_time_sfd is the edge
# that samples the byte after it, i.e. the start of the cycle that follows the SFD cycle + 1
SFD_TICK_OFFSET = -2

IPV6_SRC = 0x2001_0DB8_0000_0000_0000_0000_0000_0001
IPV6_DST = 0x2001_0DB8_0000_0000_0000_0000_0000_0002

SHAPES = [
    ("eth", StreamConfig(proto=PROTO_RAW, size=64)),
    ("eth_vlan", StreamConfig(proto=PROTO_RAW, vlan_en=1, vlan_tci=0xA00C, size=65)),
    ("ipv4", StreamConfig(proto=PROTO_IPV4, size=64)),
    ("ipv4_odd", StreamConfig(proto=PROTO_IPV4, size=129, ip_tos=0xB8)),
    ("ipv4_vlan", StreamConfig(proto=PROTO_IPV4, vlan_en=1, size=68)),
    ("ipv6", StreamConfig(proto=PROTO_IPV6, size=84, src_ip=IPV6_SRC, dst_ip=IPV6_DST)),
    ("ipv6_vlan_big", StreamConfig(proto=PROTO_IPV6, vlan_en=1, size=1518, src_ip=IPV6_SRC, dst_ip=IPV6_DST,
                                   ip_tos=0x2E)),
    ("icmp4", StreamConfig(proto=PROTO_IPV4, icmp=1, size=64, udp_src=0xBEEF)),
    ("icmp4_vlan_odd", StreamConfig(proto=PROTO_IPV4, icmp=1, vlan_en=1, size=577, ip_tos=0x10)),
    ("icmp6", StreamConfig(proto=PROTO_IPV6, icmp=1, size=84, src_ip=IPV6_SRC, dst_ip=IPV6_DST)),
    ("icmp6_big", StreamConfig(proto=PROTO_IPV6, icmp=1, size=1518, src_ip=IPV6_SRC, dst_ip=IPV6_DST, udp_src=7)),
]


def _same_ones_complement(a: int, b: int) -> bool:
    """Equal checksums, 0x0000 and 0xFFFF being the same number in one's complement."""
    return a == b or {a, b} == {0, 0xFFFF}


async def send(tb: TB, cfg: StreamConfig):
    tb.configure(cfg)
    await tb.pulse("ctl_start")
    await tb.wait_idle()
    frames = []
    while not tb.tx_sink.empty():
        frames.append(tb.tx_sink.recv_nowait())
    return frames


@cocotb.test()
async def run_test_frames_match_reference(dut):
    """Every byte equals the scapy-built reference; stamps match sim_time_sfd; pcap parses with right checksums."""
    tb = TB(dut)
    await tb.reset()
    await tb.sync_time()
    pcap_packets = []
    for name, shape in SHAPES:
        cfg = StreamConfig(**{**vars(shape), "count": 5, "seq_start": 2**48 - 3, "ifg": 12})
        frames = await send(tb, cfg)
        assert len(frames) == 5, name
        for k, frame in enumerate(frames):
            payload = bytes(frame.get_payload(strip_fcs=False))
            assert frame.check_fcs(), name
            # GmiiSink drops the first byte of a frame; the preamble length is checked by the spacing tests
            assert bytes(frame.get_preamble()) == b"\x55" * 6 + b"\xd5"
            assert len(payload) == cfg.size, name
            sig_at = {PROTO_RAW: 14, PROTO_IPV4: 42, PROTO_IPV6: 62}[cfg.proto] + 4 * cfg.vlan_en
            stream, seq, tx48 = parse_signature(payload[sig_at:sig_at + 18])
            assert stream == cfg.tx_stream_id
            assert seq == (cfg.seq_start + k) % 2**48, "sequence numbers count up and wrap at 48 bits"
            expected_tick = tb.tick_at(frame.sim_time_sfd) + SFD_TICK_OFFSET
            assert tx48 == expected_tick % 2**48, f"{name}: TX stamp {tx48} != {expected_tick}"
            assert payload == cfg.frame(seq, tx48), f"{name} frame {k} differs from the reference"
            pcap_packets.append(Ether(payload[:-4]))
        tb.log.info("%s: %d frames identical to the scapy reference", name, len(frames))

    # an independent decoder: write a pcap, read it back, let scapy recompute every checksum
    pcap = SIM_BUILD / f"gen_frames{worker_suffix()}.pcap"
    wrpcap(str(pcap), pcap_packets)
    checked = 0
    for pkt in rdpcap(str(pcap)):
        if ICMP in pkt:
            rebuilt = pkt.copy()
            del rebuilt[IP].chksum, rebuilt[ICMP].chksum
            rebuilt = Ether(bytes(rebuilt))
            assert rebuilt[IP].chksum == pkt[IP].chksum and pkt[ICMP].type == 8 and pkt[IP].proto == 1
            assert _same_ones_complement(rebuilt[ICMP].chksum, pkt[ICMP].chksum)
            checked += 1
        elif ICMPv6EchoRequest in pkt:
            rebuilt = pkt.copy()
            del rebuilt[IPv6].plen, rebuilt[ICMPv6EchoRequest].cksum
            rebuilt = Ether(bytes(rebuilt))
            assert rebuilt[IPv6].plen == pkt[IPv6].plen and pkt[IPv6].nh == 58
            assert _same_ones_complement(rebuilt[ICMPv6EchoRequest].cksum, pkt[ICMPv6EchoRequest].cksum)
            checked += 1
        elif IP in pkt:
            ip = pkt[IP]
            rebuilt = pkt.copy()
            del rebuilt[IP].chksum, rebuilt[IP].len, rebuilt[UDP].chksum, rebuilt[UDP].len
            rebuilt = Ether(bytes(rebuilt))
            assert rebuilt[IP].chksum == ip.chksum and rebuilt[IP].len == ip.len
            assert rebuilt[UDP].chksum == pkt[UDP].chksum and rebuilt[UDP].len == pkt[UDP].len
            checked += 1
        elif IPv6 in pkt:
            rebuilt = pkt.copy()
            del rebuilt[IPv6].plen, rebuilt[UDP].chksum, rebuilt[UDP].len
            rebuilt = Ether(bytes(rebuilt))
            assert pkt[UDP].chksum != 0, "UDP checksum is mandatory over IPv6"
            assert rebuilt[UDP].chksum == pkt[UDP].chksum and rebuilt[IPv6].plen == pkt[IPv6].plen
            checked += 1
    assert checked == 5 * 9


@cocotb.test()
async def run_test_line_rate(dut):
    """At minimum IFG a frame starts every size+20 byte times: exact counts in a window, none lost in loopback."""
    sizes = [int(s) for s in os.environ.get("FPGATEST_SIZES", LINE_RATE_SIZES).split(",")]
    window_us = float(os.environ.get("FPGATEST_WINDOW_US", "0"))
    records = []
    tb = TB(dut, loopback_delay=5)
    await tb.reset()
    for size in sizes:
        period = size + 20
        # a whole number of frame periods, so the theoretical count is an integer
        frames = round(window_us * 125 / period) if window_us else max(4, min(40, 60_000 // period))
        cfg = StreamConfig(proto=PROTO_IPV4, size=size, ifg=12, count=0)
        tb.configure(cfg)
        await tb.pulse("ctl_clear")
        await tb.pulse("ctl_start")
        await ClockCycles(dut.clk, 3 * period)
        first_edge = await tb.pulse("ctl_snapshot")
        first = await tb.read_stats()
        window = frames * period
        second = await tb.snapshot_at(first_edge + window * 8000)
        sent = second["stat_tx_frames"] - first["stat_tx_frames"]
        assert sent == frames, f"{size} B: {sent} frames in {window} byte times, expected {frames}"
        await tb.pulse("ctl_stop")
        await tb.wait_idle()
        await ClockCycles(dut.clk, 2 * period + 100)
        await tb.flush()
        final = await tb.snapshot()
        sfd_times = [f.sim_time_sfd for f in tb.tx_sink.queue._queue]
        tb.tx_sink.clear()
        assert {b - a for a, b in zip(sfd_times, sfd_times[1:])} == {period * 8000}, f"{size} B: SFD spacing"
        lost = final["stat_tx_frames"] - final["stat_seq_received"]
        assert final["stat_test_frames"] == final["stat_tx_frames"] and lost == 0, "checker lost frames at line rate"
        assert final["stat_seq_lost"] == 0 and final["stat_fcs_errors"] == 0 and final["stat_foreign"] == 0
        assert final["stat_record_dropped"] == 0, "a per-frame record was lost at line rate"
        tb.log.info("%d B: %d frames in %d byte times (theory %d); %d sent, %d received", size, sent, window,
                    frames, final["stat_tx_frames"], final["stat_test_frames"])
        records.append({"size_bytes": size, "ifg_bytes": 12, "window_ns": window * 8,
                        "frames_sent": sent, "frames_theoretical": frames, "ratio": sent / frames,
                        "frames_per_second": sent / (window * 8e-9),
                        "frames_per_second_theoretical": 125e6 / period,
                        "frames_total": final["stat_tx_frames"], "frames_lost": lost})
    out = os.environ.get("FPGATEST_LINERATE_OUT")
    if out:
        with open(out, "w") as f:
            json.dump(records, f, indent=1)


@cocotb.test()
async def run_test_gaps_rate_and_bursts(dut):
    """Integer IFG, fractional (average-rate) gap and bursts give exactly the programmed spacing."""
    tb = TB(dut)
    await tb.reset()

    async def spacings(cfg):
        frames = await send(tb, cfg)
        assert len(frames) == cfg.count
        return [(b.sim_time_sfd - a.sim_time_sfd) // 8000 for a, b in zip(frames, frames[1:])]

    # integer gap
    assert set(await spacings(StreamConfig(size=100, ifg=40, count=6))) == {100 + 8 + 40}

    # average rate 3/7 of a byte extra per frame: Bresenham pattern, exact on average
    gaps = await spacings(StreamConfig(size=64, ifg=12, ifg_frac_num=3, ifg_frac_den=7, count=15))
    extra = [g - 84 for g in gaps]
    assert set(extra) <= {0, 1}
    assert sum(extra) == (14 * 3) // 7, extra  # 14 gaps carry floor(14 * 3/7) extra bytes

    # bursts of 3 frames at minimum gap, 1000 bytes between bursts (back-to-back / packet pairs)
    gaps = await spacings(StreamConfig(size=64, ifg=12, burst_len=3, burst_gap=1000, count=9))
    assert gaps == [84, 84, 72 + 1000, 84, 84, 72 + 1000, 84, 84], gaps

    # stop in the middle of an endless run: the frame on the wire completes, then idle
    tb.configure(StreamConfig(size=1000, ifg=12, count=0))
    await tb.pulse("ctl_start")
    await ClockCycles(dut.clk, 2500)
    await tb.pulse("ctl_stop")
    await tb.wait_idle()
    frames = []
    while not tb.tx_sink.empty():
        frames.append(tb.tx_sink.recv_nowait())
    assert len(frames) == 3 and all(f.check_fcs() and len(f.get_payload(strip_fcs=False)) == 1000 for f in frames)


@cocotb.test()
async def run_test_bad_settings(dut):
    """Out-of-range settings are refused with an error bit and nothing is sent."""
    tb = TB(dut)
    await tb.reset()
    cases = [
        (StreamConfig(size=63), 0x01),
        (StreamConfig(size=16384), 0x01),
        (StreamConfig(proto=PROTO_IPV6, size=83), 0x01),
        (StreamConfig(proto=PROTO_IPV4, vlan_en=1, size=67), 0x01),
        (StreamConfig(ifg=11), 0x02),
        (StreamConfig(burst_len=4, burst_gap=0), 0x04),
        (StreamConfig(ifg_frac_num=5, ifg_frac_den=5), 0x08),
        (StreamConfig(proto=3), 0x10),
        (StreamConfig(proto=PROTO_RAW, icmp=1), 0x10),
        (StreamConfig(win_mode=1, win_size=0), 0x20),
        (StreamConfig(win_mode=3, win_size=4), 0x20),
        (StreamConfig(win_mode=2, win_size=8, win_max=4), 0x20),
        (StreamConfig(size=0, ifg=0), 0x03),
    ]
    for cfg, error in cases:
        cfg.count = 3
        tb.configure(cfg)
        await tb.pulse("ctl_start")
        await ClockCycles(dut.clk, 400)
        assert tb.get("stat_tx_error") == error, (cfg, tb.get("stat_tx_error"))
        assert tb.get("stat_tx_busy") == 0
        assert tb.tx_sink.empty(), "a refused setting sent a frame"
    # smallest legal size per protocol is accepted
    for proto in (PROTO_RAW, PROTO_IPV4, PROTO_IPV6):
        for vlan in (0, 1):
            cfg = StreamConfig(proto=proto, vlan_en=vlan, size=min_size(proto, vlan), count=1,
                               src_ip=IPV6_SRC if proto == PROTO_IPV6 else 0xC0A80001)
            frames = await send(tb, cfg)
            assert tb.get("stat_tx_error") == 0 and len(frames) == 1 and frames[0].check_fcs()
    # settings changed during a run do not touch frames on the wire
    cfg = StreamConfig(size=200, count=6)
    tb.configure(cfg)
    await tb.pulse("ctl_start")
    await ClockCycles(dut.clk, 300)
    tb.configure(StreamConfig(size=64, proto=PROTO_RAW, ifg=11))
    await tb.wait_idle()
    frames = []
    while not tb.tx_sink.empty():
        frames.append(tb.tx_sink.recv_nowait())
    assert [len(f.get_payload(strip_fcs=False)) for f in frames] == [200] * 6
    assert all(f.check_fcs() for f in frames)


@cocotb.test()
async def run_test_tx_hold(dut):
    """tx_hold (a management frame wants the wire) stretches the gap and delays the first frame of a
    run: no frame starts TX_HOLD_CLOCKS clocks or more after tx_hold rose, every gap stays >= 12 idle
    clocks, every frame intact and its TX stamp its own SFD's (latency through the loopback exact)."""
    hold_clocks = module_values(RTL / "fpgatest_port.v")["TX_HOLD_CLOCKS"]
    tb = TB(dut, loopback_delay=5)
    await tb.reset()
    hold = TxHold(dut, random.Random(7))
    sent = 0
    for size, count in ((64, 400), (1518, 30), (97, 200)):
        # held from before the start: the first frame waits too
        dut.tx_hold.value = 1
        tb.configure(StreamConfig(proto=PROTO_IPV4, size=size, count=count, seq_start=sent))
        await tb.pulse("ctl_start")
        await ClockCycles(dut.clk, 300)
        hold.start()
        await tb.wait_idle()
        hold.stop()
        sent += count
    await ClockCycles(dut.clk, 200)
    await tb.flush()
    s = await tb.snapshot()
    assert s["stat_tx_frames"] == s["stat_test_frames"] == s["stat_seq_received"] == sent
    assert s["stat_fcs_errors"] == s["stat_foreign"] == s["stat_seq_lost"] == 0
    # the loopback: every latency the same exact value
    assert s["stat_lat_min"] == s["stat_lat_max"], "a held frame's TX stamp is not its SFD's"
    starts = hold.starts()
    assert len(starts) == sent and min(idle for _, idle in starts) >= 12
    latest = max(held for held, _ in starts)
    assert latest < hold_clocks, f"a frame started {latest} clocks into a hold"
    tb.log.info("%d frames; the latest start %d clocks into a hold; %d clocks held >= %d", len(starts), latest,
                hold.long_holds(hold_clocks), hold_clocks)
    assert hold.long_holds(hold_clocks) > 1000, "the holds never lasted long enough to test"


LINE_RATE_SIZES = "64,65,128,1518,9000,16383"


@pytest.mark.parametrize("scenario", ["run_test_frames_match_reference", "run_test_gaps_rate_and_bursts",
                                      "run_test_bad_settings", "run_test_line_rate", "run_test_tx_hold"])
def test_gen(scenario):
    run("gen.test_gen", "tb_port", "tb_port", testcase=scenario,
        extra_env={"FPGATEST_SIZES": LINE_RATE_SIZES})
