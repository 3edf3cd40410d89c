# SPDX-License-Identifier: BSD-2-Clause
"""fpgatest_checker + fpgatest_rx_cdc + fpgatest_latency_stats: exact latency, +-100 ppm RX clocks, frame classes, statistics."""

import os
import random

import cocotb
import pytest
from cocotb.triggers import ClockCycles, RisingEdge
from cocotbext.eth import GmiiFrame
from scapy.contrib.lldp import LLDPDU, LLDPDUChassisID, LLDPDUEndOfLLDPDU, LLDPDUPortID, LLDPDUTimeToLive
from scapy.layers.inet import ICMP, IP, UDP
from scapy.layers.l2 import ARP, Dot1Q, Ether
from scapy.packet import Raw

from common.frames import PROTO_IPV4, PROTO_IPV6, PROTO_RAW, StreamConfig, echo_reply, ip4_str, mac_str, with_fcs
from common.runner import run
from common.tb import TB
from models.ref_tracker import RefTracker

Q = 16  # latency unit: 1/16 tick


async def run_stream(tb: TB, cfg: StreamConfig):
    tb.configure(cfg)
    await tb.pulse("ctl_start")
    await tb.wait_idle()
    await ClockCycles(tb.dut.clk, 2000)


@cocotb.test()
async def run_test_loopback_latency_exact(dut):
    """Through a fixed-delay loopback every frame's latency is the delay, to the tick, for every protocol."""
    tb = TB(dut, loopback_delay=1)
    await tb.reset()
    for delay in (1, 2, 37, 1023):
        for proto, vlan, size in ((PROTO_RAW, 0, 64), (PROTO_IPV4, 1, 333), (PROTO_IPV6, 0, 1518)):
            dut.tb_loop_delay.value = delay
            await tb.pulse("ctl_clear")
            await ClockCycles(dut.clk, 100)
            cfg = StreamConfig(proto=proto, vlan_en=vlan, size=size, count=20, seq_start=random.randrange(2**48),
                               src_ip=0x20010DB8 << 96 | 1 if proto == PROTO_IPV6 else 0xC0A80001)
            await run_stream(tb, cfg)
            s = await tb.snapshot()
            ticks = delay + 1  # the harness delays TX by tb_loop_delay + 1 clocks
            assert s["stat_test_frames"] == 20 and s["stat_lat_count"] == 20, s
            assert s["stat_lat_min"] == s["stat_lat_max"] == ticks * Q, (delay, s["stat_lat_min"], s["stat_lat_max"])
            assert s["stat_lat_sum"] == 20 * ticks * Q and s["stat_lat_sumsq"] == 20 * (ticks * Q) ** 2
            assert s["stat_seq_received"] == 20 and s["stat_seq_lost"] == 0 and s["stat_foreign"] == 0
            assert s["stat_seq_first_seq"] == cfg.seq_start
        tb.log.info("delay %d clocks: latency %d ticks on every frame", delay + 1, delay + 1)

    # calibration: internal + both cables are removed, in 1/16 tick; too much clamps at 0 and is counted
    dut.tb_loop_delay.value = 99
    tb.set(cfg_cal_internal=5 * Q + 3, cfg_cal_tx_cable=7, cfg_cal_rx_cable=2 * Q)
    await tb.pulse("ctl_clear")
    await run_stream(tb, StreamConfig(size=128, count=10))
    s = await tb.snapshot()
    assert s["stat_lat_min"] == s["stat_lat_max"] == 100 * Q - (5 * Q + 3) - 7 - 2 * Q
    tb.set(cfg_cal_internal=101 * Q, cfg_cal_tx_cable=0, cfg_cal_rx_cable=0)
    await tb.pulse("ctl_clear")
    await run_stream(tb, StreamConfig(size=128, count=10))
    s = await tb.snapshot()
    assert s["stat_lat_max"] == 0 and s["stat_lat_clamped"] == 10


@cocotb.test()
async def run_test_statistics(dut):
    """Count/min/max/sum/sumsq, histogram bins, samples and snapshot+clear intervals, against Python."""
    tb = TB(dut, loopback_delay=1)
    await tb.reset()
    rng = random.Random(7)
    base, shift = 20 * Q, 5  # bins of 32/16 = 2 ticks from 20 ticks
    tb.set(cfg_hist_base=base, cfg_hist_shift=shift, cfg_sample_every=3)
    await tb.pulse("ctl_clear")
    await ClockCycles(dut.clk, 100)
    latencies = []
    seq = 0
    for _ in range(12):
        delay = rng.choice([5, 19, 20, 40, 100, 147, 148, 600])
        n = rng.randint(1, 9)
        dut.tb_loop_delay.value = delay
        await ClockCycles(dut.clk, 10)
        await run_stream(tb, StreamConfig(size=rng.choice([64, 200]), count=n, seq_start=seq))
        seq += n
        latencies += [(delay + 1) * Q] * n
    s = await tb.snapshot()
    assert s["stat_lat_count"] == len(latencies)
    assert s["stat_lat_min"] == min(latencies) and s["stat_lat_max"] == max(latencies)
    assert s["stat_lat_sum"] == sum(latencies) and s["stat_lat_sumsq"] == sum(x * x for x in latencies)
    assert s["stat_lat_last"] == latencies[-1]
    # jitter (RFC 4689 / RFC 3393 IPDV in arrival order): |change| between consecutive frames
    changes = [abs(b - a) for a, b in zip(latencies, latencies[1:])]
    assert s["stat_jit_sum"] == sum(changes) and s["stat_jit_max"] == max(changes) > 0, (s["stat_jit_sum"], changes)
    bins = [0] * 64
    below = above = 0
    for lat in latencies:
        if lat < base:
            below += 1
        elif (lat - base) >> shift > 63:
            above += 1
        else:
            bins[(lat - base) >> shift] += 1
    assert await tb.histogram() == bins
    assert (s["stat_hist_below"], s["stat_hist_above"]) == (below, above)
    samples = await tb.pop_samples()
    assert [x[0] for x in samples] == list(range(2, seq, 3)), "every 3rd frame is sampled"
    assert [x[2] for x in samples] == latencies[2::3]
    assert all(b[1] > a[1] for a, b in zip(samples, samples[1:])), "RX ticks rise"

    # snapshot + clear together: the interval statistics add up to the total, nothing lost in between
    dut.tb_loop_delay.value = 29
    tb.configure(StreamConfig(size=64, count=0, seq_start=seq))
    await tb.pulse("ctl_clear")
    await tb.pulse("ctl_start")
    counts = []
    for _ in range(5):
        await ClockCycles(dut.clk, rng.randint(300, 3000))
        await tb.pulse("ctl_snapshot", "ctl_clear")
        s = await tb.read_stats()
        counts.append((s["stat_lat_count"], sum(await tb.histogram())))
        # one delay throughout: no change between frames, except from the previous interval's frames,
        # which the clear does not pair with this one's
        assert s["stat_jit_sum"] == 0 and s["stat_jit_max"] == 0, s
    await tb.pulse("ctl_stop")
    await tb.wait_idle()
    await ClockCycles(dut.clk, 200)
    await tb.pulse("ctl_snapshot", "ctl_clear")
    s = await tb.read_stats()
    counts.append((s["stat_lat_count"], sum(await tb.histogram())))
    assert all(c == h for c, h in counts), counts
    total_sent = int(dut.stat_tx_seq_next.value) - seq
    assert sum(c for c, _ in counts) == total_sent, (counts, total_sent)


@cocotb.test()
async def run_test_snapshot_at_every_phase(dut):
    """A snapshot at any tester clock of a frame's period, the one where its result is recorded included,
    never splits a test frame from its latency or its sequence number: test_frames, lat_count, lat_sum
    and the tracker's seq_received and highest number agree at every one."""
    delay = 29
    tb = TB(dut, loopback_delay=delay)
    await tb.reset()
    period = 84                    # 64-byte frames at the minimum IFG: one SFD every 84 ticks
    tb.configure(StreamConfig(size=64, ifg=12, count=0))
    await tb.pulse("ctl_clear")
    await tb.pulse("ctl_start")
    await RisingEdge(dut.clk)
    first = int(cocotb.utils.get_sim_time("ps")) + 1000 * 8000
    # 6 periods + 1 clock apart: the snapshot edge walks through all 84 phases of the stream, one per step
    step = 6 * period + 1
    for k in range(period):
        s = await tb.snapshot_at(first + k * step * 8000)
        assert s["stat_lat_count"] == s["stat_test_frames"] == s["stat_rx_frames"] > 0, (k, s)
        assert s["stat_lat_sum"] == s["stat_lat_count"] * (delay + 1) * Q, (k, s)
        assert s["stat_seq_received"] == s["stat_test_frames"] == s["stat_seq_highest_seq"], (k, s)
    await tb.pulse("ctl_stop")
    await tb.wait_idle()


def foreign_frames(cfg: StreamConfig) -> list[bytes]:
    arp = Ether(dst="ff:ff:ff:ff:ff:ff", src="02:00:00:00:00:09") / ARP(pdst="192.168.0.2")
    lldp = Ether(dst="01:80:c2:00:00:0e", src="02:00:00:00:00:09") / LLDPDU() / LLDPDUChassisID(
        subtype=4, id="02:00:00:00:00:09") / LLDPDUPortID(subtype=5, id="p1") / LLDPDUTimeToLive(ttl=120) / \
        LLDPDUEndOfLLDPDU()
    rnd = random.Random(3)
    frames = [bytes(arp), bytes(lldp)]
    frames += [bytes(rnd.randrange(256) for _ in range(rnd.randint(60, 300))) for _ in range(5)]
    # our own format with a wrong check field: bit flip in the check, in the seq, in the stamp
    good = cfg.frame(5, 1000)[:-4]
    for at in (42 + 17, 42 + 3, 42 + 12):
        bad = bytearray(good)
        bad[at] ^= 0x10
        frames.append(bytes(bad))
    # UDP to our port with a plausible payload
    frames.append(bytes(Ether() / IP(dst="192.168.0.2") / UDP(dport=cfg.udp_dst) / Raw(b"\x00\x01" + bytes(40))))
    return [with_fcs(f.ljust(60, b"\x00")) for f in frames]


@cocotb.test()
async def run_test_frame_classes(dut):
    """Foreign, other-stream, FCS-corrupted, rx_er, runt and giant frames each counted apart; test frames exact."""
    tb = TB(dut, rx_ppm=0)
    await tb.reset()
    tb.set(cfg_max_size=1518)
    await tb.pulse("ctl_clear")
    cfg = StreamConfig(proto=PROTO_IPV4, size=100)
    expected = {"stat_test_frames": 0, "stat_foreign": 0, "stat_other_stream": 0, "stat_fcs_errors": 0,
                "stat_runts": 0, "stat_giants": 0}
    sends = []

    def add(data, kind, error=None):
        frame = GmiiFrame.from_raw_payload(data)
        if error is not None:
            frame.error = error
        sends.append(frame)
        if kind:
            expected[kind] += 1

    seq = 0
    for data in foreign_frames(cfg):
        add(cfg.frame(seq, 50), "stat_test_frames")
        seq += 1
        add(data, "stat_foreign")
    other = StreamConfig(proto=PROTO_IPV6, size=120, tx_stream_id=9, src_ip=1, dst_ip=2)
    add(other.frame(77, 1234), "stat_other_stream")
    corrupt = bytearray(cfg.frame(seq, 60))
    corrupt[30] ^= 1
    add(bytes(corrupt), "stat_fcs_errors")
    seq += 1  # the corrupted one used a number: it must show as lost, not received
    errored = cfg.frame(seq, 70)
    add(errored, "stat_fcs_errors", error=[0] * 40 + [1] + [0] * (len(errored) + 8 - 41))
    seq += 1
    add(with_fcs(bytes(40)), "stat_runts")
    add(bytes(cfg.frame(seq, 80)[:30]), "stat_runts")  # truncated test frame, no FCS at all
    seq += 1
    add(StreamConfig(proto=PROTO_RAW, size=2000).frame(seq, 90), "stat_giants")
    seq += 1
    for _ in range(3):
        add(cfg.frame(seq, 100), "stat_test_frames")
        seq += 1
    # ICMP echo requests and replies carrying the signature are test frames (the echo method's
    # replies come back to the sending port); a signed payload over TCP, or a plain ping, is foreign
    for make in (lambda f: f, echo_reply):
        for proto, src, dst in ((PROTO_IPV4, 0xC0A80001, 0xC0A80002), (PROTO_IPV6, 1 << 100, 2 << 100)):
            icmp = StreamConfig(proto=proto, icmp=1, size=150, src_ip=src, dst_ip=dst)
            add(make(icmp.frame(seq, 110)), "stat_test_frames")
            seq += 1
    tcp = bytearray(cfg.frame(seq, 120)[:-4])
    tcp[23] = 6
    add(with_fcs(bytes(tcp)), "stat_foreign")
    add(with_fcs(bytes(Ether() / IP(dst="192.168.0.2") / ICMP() / Raw(bytes(40)))), "stat_foreign")
    for frame in sends:
        await tb.rx_source.send(frame)
    await tb.rx_source.wait()
    await ClockCycles(dut.clk, 500)
    s = await tb.snapshot()
    got = {k: s[k] for k in expected}
    assert got == expected, got
    assert s["stat_rx_frames"] == len(sends)
    assert s["stat_rx_bytes"] == sum(len(f.data) - 8 for f in sends)
    # lost = the corrupted, errored, truncated and giant test frames: 4 numbers never received
    await tb.flush()
    s = await tb.snapshot()
    assert s["stat_seq_received"] == expected["stat_test_frames"] and s["stat_seq_lost"] == 4
    assert await tb.pop_events() == [(11, 4)], "one loss event: sequence numbers 11..14"


MGMT_MAC = 0x10E2D5000001   # the management core's MAC in the build of run_test_management_frames
MGMT_IP = 0xC0A80132        # and its IPv4 address, 192.168.1.50


@cocotb.test()
async def run_test_management_frames(dut):
    """Built with MGMT_MAC and MGMT_IP: good frames to the MAC without a signature, and broadcast ARP
    frames for the address (the host asking for the core's MAC), are management frames, counted apart
    from foreign ones; a frame to the MAC with a bad FCS is an FCS error, one with our signature a
    test frame; a destination that differs from MGMT_MAC in any one byte is foreign, and so is a
    broadcast ARP frame for an address one byte off, one with a VLAN tag, one to an address one bit
    off broadcast, and a broadcast frame of another type with MGMT_IP where ARP's target would be."""
    tb = TB(dut, rx_ppm=0)
    await tb.reset()
    await tb.pulse("ctl_clear")
    mgmt, mgmt_ip = mac_str(MGMT_MAC), ip4_str(MGMT_IP)
    cfg = StreamConfig(proto=PROTO_IPV4, size=100)
    expected = {"stat_mgmt_frames": 0, "stat_foreign": 0, "stat_fcs_errors": 0, "stat_test_frames": 0}
    sends = []

    def add(data: bytes, kind: str):
        sends.append(GmiiFrame.from_raw_payload(data))
        expected[kind] += 1

    request = Ether(dst=mgmt, src="02:00:00:00:00:99") / IP(dst=mgmt_ip) / UDP(dport=1234) / Raw(bytes(20))
    for size in (0, 1, 200, 1400):   # Etherbone records of several lengths, each a management frame
        add(with_fcs(bytes(request / Raw(bytes(size)))), "stat_mgmt_frames")
    for k in range(6):               # one byte of the destination wrong
        wrong = mac_str(MGMT_MAC ^ (0x01 << (8 * (5 - k))))
        add(with_fcs(bytes(Ether(dst=wrong) / IP() / UDP() / Raw(bytes(30)))), "stat_foreign")
    host = Ether(dst="ff:ff:ff:ff:ff:ff", src="02:00:00:00:00:99")
    arp = ARP(op=1, hwsrc="02:00:00:00:00:99", psrc="192.168.1.99", pdst=mgmt_ip)
    add(with_fcs(bytes(host / arp / Raw(bytes(18)))), "stat_mgmt_frames")      # who has MGMT_IP?
    add(with_fcs(bytes(Ether(dst=mgmt) / ARP(op=2, pdst=mgmt_ip) / Raw(bytes(18)))), "stat_mgmt_frames")
    for k in range(4):               # one byte of the target address wrong
        pdst = ip4_str(MGMT_IP ^ (0x10 << (8 * (3 - k))))
        add(with_fcs(bytes(host / ARP(op=1, pdst=pdst) / Raw(bytes(18)))), "stat_foreign")
    add(with_fcs(bytes(host / Dot1Q(vlan=5) / arp / Raw(bytes(18)))), "stat_foreign")
    add(with_fcs(bytes(Ether(dst="ff:ff:ff:ff:ff:fe") / arp / Raw(bytes(18)))), "stat_foreign")
    other = bytearray(bytes(host / IP(dst="192.168.1.255") / UDP() / Raw(bytes(30))))
    other[38:42] = MGMT_IP.to_bytes(4, "big")
    add(with_fcs(bytes(other)), "stat_foreign")
    bad = bytearray(with_fcs(bytes(request)))
    bad[40] ^= 0x10
    add(bytes(bad), "stat_fcs_errors")
    signed = bytearray(cfg.frame(0, 50)[:-4])
    signed[0:6] = MGMT_MAC.to_bytes(6, "big")
    add(with_fcs(bytes(signed)), "stat_test_frames")
    for k in range(3):               # back to back with test frames
        add(cfg.frame(1 + k, 60), "stat_test_frames")
        add(with_fcs(bytes(request)), "stat_mgmt_frames")
    for frame in sends:
        await tb.rx_source.send(frame)
    await tb.rx_source.wait()
    await ClockCycles(dut.clk, 500)
    s = await tb.snapshot()
    assert {k: s[k] for k in expected} == expected
    assert s["stat_rx_frames"] == len(sends)
    assert s["stat_other_stream"] == s["stat_runts"] == s["stat_giants"] == 0


@cocotb.test()
@cocotb.parametrize(ppm=[100, -100])
async def run_test_rx_clock_offset(dut, ppm):
    """With the PHY RX clock +-100 ppm off, nothing is lost and the mean latency error is below one tick."""
    tb = TB(dut, rx_ppm=ppm)
    await tb.reset()
    await tb.sync_time()
    tb.set(cfg_sample_every=1)
    await tb.pulse("ctl_clear")
    sent = []
    received_on_rx = []

    async def forward():
        # the "DUT": every frame the generator sends is sent again on the RX clock
        while True:
            frame = await tb.tx_sink.recv()
            sent.append(frame)
            # the sink dropped the first preamble byte; the source reports its SFD time on completion
            copy = GmiiFrame(b"\x55" + bytes(frame.data), tx_complete=received_on_rx.append)
            await tb.rx_source.send(copy)

    cocotb.start_soon(forward())
    count = 400
    await run_stream(tb, StreamConfig(size=64, count=count, ifg=12))
    await run_stream(tb, StreamConfig(size=1518, count=60, ifg=12, seq_start=count))
    await tb.rx_source.wait()
    await ClockCycles(dut.clk, 500)
    s = await tb.snapshot()
    total = count + 60
    assert s["stat_test_frames"] == total and s["stat_seq_lost"] == 0 and s["stat_rx_fifo_overflow"] == 0
    assert s["stat_record_dropped"] == 0
    samples = await tb.pop_samples()
    assert len(samples) == total
    errors = []
    for tx, rx, (seq, rx_tick, latency) in zip(sent, received_on_rx, samples):
        tx_sfd_start = tx.sim_time_sfd - 2 * 8000  # start of the cycle with SFD on TXD (see test_gen)
        rx_sfd_start = rx.sim_time_sfd - tb.rx_period_ps  # the RX edge that put SFD on RXD
        true_ps = rx_sfd_start - tx_sfd_start
        errors.append(latency * 8000 / Q - true_ps)
    mean = sum(errors) / len(errors)
    tb.log.info("%+d ppm: latency error mean %.0f ps, min %.0f ps, max %.0f ps over %d frames",
                ppm, mean, min(errors), max(errors), len(errors))
    assert abs(mean) < 8000, "mean latency error must stay below one tick"
    assert max(abs(e) for e in errors) <= 16000


@cocotb.test()
async def run_test_reset_of_one_side(dut):
    """A PHY reset (the RX side alone) cutting frames, then a SoC reset (tester and engine clocks, not the
    PHY's) while frames arrive: no stale crossing-FIFO entry becomes a frame, a frame cut on the RX side
    counts once as damaged, one cut on the system side is not seen at all, and what follows is exact."""
    tb = TB(dut, rx_ppm=100, rx_source_reset=False)
    await tb.reset()

    async def forward():
        while True:
            frame = await tb.tx_sink.recv()
            await tb.rx_source.send(GmiiFrame(b"\x55" + bytes(frame.data)))

    cocotb.start_soon(forward())

    # PHY resets, three RX clocks each, at random points of a 300-frame stream (84 clocks a frame)
    n, resets = 300, 5
    tb.configure(StreamConfig(size=64, count=n, ifg=12))
    await tb.pulse("ctl_start")
    for _ in range(resets):
        await ClockCycles(dut.rx_clk_ext, random.randrange(1500, 4000))
        dut.rx_rst.value = 1
        await ClockCycles(dut.rx_clk_ext, 3)
        dut.rx_rst.value = 0
    await tb.wait_idle()
    await tb.rx_source.wait()
    await ClockCycles(dut.clk, 500)
    await tb.flush()               # the tracker's pending gaps become lost
    s = await tb.snapshot()
    damaged = s["stat_fcs_errors"] + s["stat_runts"]
    tb.log.info("PHY resets: %d of %d frames received, %d damaged, %d lost", s["stat_test_frames"], n, damaged,
                s["stat_seq_lost"])
    assert n - resets <= s["stat_test_frames"] <= n and s["stat_test_frames"] + s["stat_seq_lost"] == n, s
    assert damaged <= resets and s["stat_rx_frames"] == s["stat_test_frames"] + damaged, s
    assert s["stat_foreign"] == s["stat_giants"] == s["stat_other_stream"] == 0, s
    assert s["stat_seq_duplicate"] == s["stat_seq_late"] == s["stat_seq_stale"] == 0, s
    assert s["stat_rx_fifo_overflow"] == 0 and s["stat_record_dropped"] == 0, s

    # a SoC reset while frames arrive: the generator stops, the frames already on the link come in
    tb.configure(StreamConfig(size=64, count=n, ifg=12, seq_start=1000))
    await tb.pulse("ctl_start")
    await ClockCycles(dut.clk, random.randrange(2000, 4000))
    dut.rst.value = 1
    dut.eng_rst.value = 1
    await ClockCycles(dut.eng_clk, 10)
    dut.rst.value = 0
    dut.eng_rst.value = 0
    await tb.rx_source.wait()
    await ClockCycles(dut.clk, 500)
    s = await tb.snapshot()
    tb.log.info("SoC reset: %d frames after it, all whole", s["stat_rx_frames"])
    assert s["stat_rx_frames"] == s["stat_test_frames"] <= 2, s
    assert s["stat_fcs_errors"] == s["stat_runts"] == s["stat_foreign"] == 0, s
    assert s["stat_record_dropped"] == 0, s

    # and the next run is exact
    await tb.pulse("ctl_clear")
    tb.configure(StreamConfig(size=64, count=100, ifg=12, seq_start=5000))
    await tb.pulse("ctl_start")
    await tb.wait_idle()
    await tb.rx_source.wait()
    await ClockCycles(dut.clk, 500)
    s = await tb.snapshot()
    assert s["stat_rx_frames"] == s["stat_test_frames"] == s["stat_seq_received"] == 100, s
    assert s["stat_seq_lost"] == s["stat_fcs_errors"] == s["stat_runts"] == 0, s


@cocotb.test()
async def run_test_record_fifo_full(dut):
    """Engines far too slow for the wire: records are lost and counted, markers are delayed but never lost,
    and whatever is counted stays exact; at the board's engine clock nothing is lost at line rate."""
    tb = TB(dut, loopback_delay=9)
    await tb.reset()
    ticks = 10
    tb.set_eng_period(2_000_000)   # 500 kHz: one record per 4 us against three per 672 ns on the wire
    await tb.pulse("ctl_clear")
    n = 100
    tb.configure(StreamConfig(size=64, ifg=12, count=n))
    await tb.pulse("ctl_start")
    await ClockCycles(dut.clk, 40 * 84)
    mid = await tb.snapshot()      # its marker waits behind a full FIFO and still arrives
    await tb.wait_idle()
    await ClockCycles(dut.clk, 200)
    s = await tb.snapshot()
    assert mid["stat_tx_frames"] <= s["stat_tx_frames"]
    dropped = s["stat_record_dropped"]
    counted = s["stat_tx_frames"] + s["stat_rx_frames"] + s["stat_lat_count"]
    missing = 3 * n - counted      # every frame makes three events: sent, received, its result
    tb.log.info("slow engines: %d records lost, %d of %d events missing", dropped, missing, 3 * n)
    assert dropped > 0 and dropped <= missing <= 3 * dropped, (dropped, missing)
    assert s["stat_rx_frames"] == s["stat_test_frames"] and s["stat_fcs_errors"] == 0
    assert s["stat_lat_min"] == s["stat_lat_max"] == ticks * Q, "what is counted is exact"

    # back at the board's ratio (50 MHz against 125 MHz): line rate, nothing lost
    tb.set_eng_period(19_994)
    await ClockCycles(dut.clk, 100)
    await tb.pulse("ctl_clear")
    tb.configure(StreamConfig(size=64, ifg=12, count=500, seq_start=1000))
    await tb.pulse("ctl_start")
    await tb.wait_idle()
    await ClockCycles(dut.clk, 200)
    await tb.flush()
    s = await tb.snapshot()
    assert s["stat_record_dropped"] == 0 and s["stat_tx_frames"] == s["stat_test_frames"] == 500
    assert s["stat_lat_count"] == 500 and s["stat_seq_received"] == 500 and s["stat_seq_lost"] == 0


@cocotb.test()
async def run_test_snapshot_behind_sequence_jumps(dut):
    """64-byte test frames at the minimum IFG whose numbers jump past the tracker's window three frames
    in a row every 60 frames (each jump costs the tracker a few hundred engine clocks, so its queue fills,
    and empties again before the next three): a snapshot taken while it is deep still holds the same frames
    in every counter, the tracker's included (its counters freeze when it has worked through the
    numbers before the marker, the others at the marker), and the tracker's figures are the
    reference's after exactly those frames; no record is lost."""
    seed = int(os.environ.get("FPGATEST_SEED", random.randrange(2**32)))
    tb = TB(dut, rx_ppm=100)
    tb.log.info("seed %d (set FPGATEST_SEED to repeat)", seed)
    rng = random.Random(seed)
    await tb.reset()
    cfg = StreamConfig(size=64)
    period, every, frames = 84, 60, 420    # tester clocks a frame; frames between jumps; frames
    seqs, seq = [], 1 << 40
    for i in range(frames):
        seq += rng.randint(1100, 6000) if 10 <= i % every < 13 else 1
        seqs.append(seq)
    preamble = b"\x55" * 7 + b"\xd5"
    await RisingEdge(dut.clk)
    start = int(cocotb.utils.get_sim_time("ps"))
    for n in seqs:
        await tb.rx_source.send(GmiiFrame(preamble + cfg.frame(n, 0)))
    tracker = dut.port_inst.engines.tracker_inst
    lags = []

    async def lag():
        # engine clocks from the marker's edge (the other counters freeze) to the tracker's part
        await RisingEdge(dut.port_inst.e_snapshot)
        clocks = 0
        while not int(tracker.cnt_snapshot.value):
            await RisingEdge(tb.eng_clk)
            clocks += 1
        lags.append(clocks)

    for c in range(frames // every):
        # a few frames after the jumps, while the tracker works through them
        at = start + (c * every + 13 + rng.randint(0, 6)) * period * 8000
        await ClockCycles(dut.clk, max(1, (at - int(cocotb.utils.get_sim_time("ps"))) // 8000))
        cocotb.start_soon(lag())
        s = await tb.snapshot()
        k = s["stat_test_frames"]
        ref = RefTracker(1024)
        for n in seqs[:k]:
            ref.push(n)
        counts = {n: s["stat_" + n] for n in ("record_dropped", "rx_frames", "lat_count", "test_frames")}
        assert counts == {"record_dropped": 0, "rx_frames": k, "lat_count": k, "test_frames": k}, counts
        got = {n: s["stat_seq_" + n] for n in ("received", "late", "duplicate", "stale", "lost", "highest_seq")}
        want = {"received": ref.received, "late": 0, "duplicate": 0, "stale": 0, "lost": ref.lost,
                "highest_seq": ref.highest}
        assert got == want, (k, got, want)
    tb.log.info("the tracker's counters froze %s engine clocks after the others", lags)
    assert len(lags) == frames // every and min(lags) >= 50, "a snapshot did not wait for the tracker: not a test"
    await tb.rx_source.wait()


SCENARIOS = ["run_test_loopback_latency_exact", "run_test_statistics", "run_test_snapshot_at_every_phase",
             "run_test_frame_classes",
             "run_test_rx_clock_offset", "run_test_reset_of_one_side", "run_test_record_fifo_full",
             "run_test_snapshot_behind_sequence_jumps"]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_checker(scenario):
    run("checker.test_checker", "tb_port", "tb_port", testcase=scenario)


def test_checker_management_frames():
    run("checker.test_checker", "tb_port", "tb_port_mgmt", testcase="run_test_management_frames",
        parameters={"MGMT_MAC": f"48'h{MGMT_MAC:012x}",
                    "MGMT_IP": f"32'h{MGMT_IP:08x}"})
