# SPDX-License-Identifier: BSD-2-Clause
"""fpgatest_reflector in fpgatest_port: every kind of frame reflected byte for byte as the scapy reference
says, frames not addressed to the port or damaged left alone, line rate at minimum gap, the store-and-
forward turnaround to the tick, a full ring counted, the generator kept off the wire."""

import random
import struct
import zlib

import cocotb
import pytest
from cocotb.triggers import ClockCycles, Timer
from cocotbext.eth import GmiiFrame
from scapy.layers.inet import ICMP, IP, UDP
from scapy.layers.inet6 import ICMPv6DestUnreach, ICMPv6EchoRequest, IPv6
from scapy.layers.l2 import ARP, Dot1Q, Ether
from scapy.packet import Raw

from common.frames import StreamConfig, echo_reply, mac_str, with_fcs
from common.runner import run
from common.tb import CLK_PERIOD_PS, TB

MAC = 0x02_00_00_00_00_02          # the reflecting port
PEER = "02:00:00:00:00:01"
BUF = 1 << 12                      # the harness's ring (tb_port REFLECT_LOG2)
ERR_REFLECT = 0x40
# from the clock edge that puts a frame's SFD on the port's RX pins to the one that puts its
# reflection's SFD on the TX pins: L + TURNAROUND ticks (L the frame's length incl. FCS; rx clock =
# tester clock) while the transmitter is free; else the reflection follows the one before at minimum
# gap, its SFD L' + 20 ticks after that one's. (cocotbext-eth's sim_time_sfd is one clock after that
# edge for a GmiiSource, two for a GmiiSink: see sim/checker and sim/gen)
TURNAROUND = 18
SOURCE_SFD_LAG, SINK_SFD_LAG = CLK_PERIOD_PS, 2 * CLK_PERIOD_PS


def due(frames: list, sfd_in: list) -> list:
    """SFD times (ps) of the reflections of frames (with their SFD times in) as the rule above says."""
    out = []
    for data, t_in in zip(frames, sfd_in):
        t = t_in + (len(data) + TURNAROUND) * CLK_PERIOD_PS
        if out:
            t = max(t, out[-1][1] + (len(out[-1][0]) + 20) * CLK_PERIOD_PS)
        out.append((data, t))
    return [t for _, t in out]


def reflection(frame: bytes) -> bytes:
    """What a reflector returns for `frame` (with FCS), built with scapy from the fields: MACs swapped;
    behind at most one tag, IPv4 without options or IPv6: addresses swapped, UDP ports swapped, an echo
    request made a reply with its checksum computed anew."""
    etype, l3 = frame[12:14], 14
    if etype in (b"\x81\x00", b"\x88\xa8"):
        etype, l3 = frame[16:18], 18
    v4 = etype == b"\x08\x00" and frame[l3] == 0x45
    v6 = etype == b"\x86\xdd" and frame[l3] >> 4 == 6
    pkt = Ether(frame[:-4])
    pkt.src, pkt.dst = pkt.dst, pkt.src
    if v4:
        pkt[IP].src, pkt[IP].dst = pkt[IP].dst, pkt[IP].src
        if ICMP in pkt and pkt[ICMP].type == 8 and pkt[ICMP].code == 0:
            pkt[ICMP].type = 0
            del pkt[ICMP].chksum
    if v6:
        pkt[IPv6].src, pkt[IPv6].dst = pkt[IPv6].dst, pkt[IPv6].src
        if ICMPv6EchoRequest in pkt and pkt[ICMPv6EchoRequest].code == 0:
            pkt[ICMPv6EchoRequest].type = 129
            del pkt[ICMPv6EchoRequest].cksum
    if (v4 or v6) and UDP in pkt:
        pkt[UDP].sport, pkt[UDP].dport = pkt[UDP].dport, pkt[UDP].sport
    data = bytes(pkt)
    assert len(data) == len(frame) - 4, "the reference changed the frame's length"
    return data + struct.pack("<I", zlib.crc32(data))


def payload(rng: random.Random, n: int) -> bytes:
    return bytes(rng.randrange(256) for _ in range(max(0, n)))


def kinds(rng: random.Random, size: int) -> dict:
    """One frame of every kind the reflector tells apart, `size` bytes with FCS, addressed to the port."""
    me = mac_str(MAC)
    eth = Ether(src=PEER, dst=me)
    v4 = IP(src="192.168.0.1", dst="192.168.1.1", ttl=rng.randrange(1, 256))
    v6 = IPv6(src="2001:db8::1", dst="2001:db8:1::1", hlim=rng.randrange(1, 256))

    def fill(pkt):
        data = bytes(pkt)
        return with_fcs(data + payload(rng, size - 4 - len(data)))

    def sized(layers, head):
        return fill(layers / Raw(payload(rng, size - 4 - head)))

    return {
        "ipv4_udp": sized(eth / v4 / UDP(sport=rng.randrange(65536), dport=rng.randrange(65536)), 42),
        "ipv4_echo_request": sized(eth / v4 / ICMP(type=8, id=rng.randrange(65536), seq=rng.randrange(65536)), 42),
        "ipv4_echo_reply": sized(eth / v4 / ICMP(type=0, id=7, seq=9), 42),
        "ipv4_unreachable": sized(eth / v4 / ICMP(type=3, code=1), 42),
        "ipv4_options": sized(eth / IP(src="192.168.0.1", dst="192.168.1.1", options=b"\x94\x04\x00\x00")
                              / UDP(sport=1, dport=2), 46),
        "vlan_ipv4_udp": sized(eth / Dot1Q(vlan=100, prio=5) / v4 / UDP(sport=11, dport=22), 46),
        "qinq_ipv4": sized(Ether(src=PEER, dst=me, type=0x88A8) / Dot1Q(vlan=7) / Dot1Q(vlan=8) / v4 / UDP(), 50),
        "ipv6_udp": sized(eth / v6 / UDP(sport=rng.randrange(65536), dport=rng.randrange(65536)), 62),
        "ipv6_echo_request": sized(eth / v6 / ICMPv6EchoRequest(id=3, seq=rng.randrange(65536)), 62),
        "vlan_ipv6_echo_request": sized(eth / Dot1Q(vlan=5) / v6 / ICMPv6EchoRequest(id=4, seq=5), 66),
        "ipv6_unreachable": sized(eth / v6 / ICMPv6DestUnreach(), 62),
        "raw": sized(Ether(src=PEER, dst=me, type=0x88B5), 14),
        "arp_to_me": fill(eth / ARP(op=2, hwsrc=PEER, psrc="192.168.0.1", hwdst=me, pdst="192.168.1.1")),
    }


def left_alone(rng: random.Random, size: int) -> dict:
    """Frames the reflector must not send back: another destination, broadcast, a bad FCS, a receive
    error, a runt."""
    me = mac_str(MAC)
    good = with_fcs(bytes(Ether(src=PEER, dst=me) / IP() / UDP()) + payload(rng, size - 46))
    bad_fcs = bytearray(good)
    bad_fcs[30] ^= 0x10
    return {
        "other_mac": with_fcs(bytes(Ether(src=PEER, dst="02:00:00:00:00:03") / IP() / UDP()) + payload(rng, size - 46)),
        "near_mac": with_fcs(bytes(Ether(src=PEER, dst="02:00:00:00:01:02") / IP() / UDP()) + payload(rng, size - 46)),
        "broadcast": with_fcs(bytes(Ether(src=PEER, dst="ff:ff:ff:ff:ff:ff") / ARP()) + payload(rng, size - 46)),
        "bad_fcs": bytes(bad_fcs),
        "rx_error": good,
        "runt": with_fcs(bytes(Ether(src=PEER, dst=me) / IP() / UDP()) + payload(rng, 10)),
    }


class Wire:
    """The port's transmitter: every frame with its SFD time (ps)."""

    def __init__(self, tb: TB):
        self.frames = []
        cocotb.start_soon(self._run(tb))

    async def _run(self, tb):
        while True:
            frame = await tb.tx_sink.recv()
            self.frames.append((bytes(frame.get_payload(strip_fcs=False)), frame.sim_time_sfd - SINK_SFD_LAG))


async def start(dut) -> tuple[TB, Wire]:
    tb = TB(dut, rx_ppm=0)
    await tb.reset()
    tb.set(cfg_src_mac=MAC, cfg_reflect=1)
    return tb, Wire(tb)


async def offer(tb: TB, frames: list, errors: dict | None = None) -> list[int]:
    """Send frames back to back at minimum gap; returns the edge that put each one's SFD on the RX pins (ps)."""
    sent = []
    for i, data in enumerate(frames):
        frame = GmiiFrame.from_raw_payload(data)
        if errors and i in errors:
            frame.error = [0] * 30 + [1] + [0] * (len(data) + 8 - 31)
        frame.tx_complete = lambda f: sent.append(f.sim_time_sfd - SOURCE_SFD_LAG)
        await tb.rx_source.send(frame)
    await tb.rx_source.wait()
    await ClockCycles(tb.dut.clk, 20_000)
    return sent


@cocotb.test()
async def run_test_every_kind(dut):
    """Every kind of frame addressed to the port comes back exactly as the reference, in order, each
    L + TURNAROUND ticks after it arrived; the others do not; tx_frames counts the reflections."""
    tb, wire = await start(dut)
    rng = random.Random(5)
    frames, expect, errors = [], [], {}
    for size in (64, 65, 99, 128, 511, 1518, 2000):
        good = kinds(rng, size)
        bad = left_alone(rng, size)
        mixed = [(k, v, True) for k, v in good.items()] + [(k, v, False) for k, v in bad.items()]
        rng.shuffle(mixed)
        for kind, data, reflected in mixed:
            if kind == "rx_error":
                errors[len(frames)] = True
            frames.append(data)
            expect.append((kind, reflection(data) if reflected else None))
            if kind in ("ipv4_echo_request", "ipv6_echo_request"):
                assert reflection(data) == echo_reply(data), "the reference disagrees with a host's echo reply"
    sent = await offer(tb, frames, errors)
    s = await tb.snapshot()
    want = [(kind, data, t) for (kind, data), t in zip(expect, sent) if data is not None]
    assert len(wire.frames) == len(want), (len(wire.frames), len(want))
    for (kind, data, _), (got, _) in zip(want, wire.frames):
        assert got == data, f"{kind}: reflected\n{got.hex()}\nexpected\n{data.hex()}"
    assert [t for _, t in wire.frames] == due([d for _, d, _ in want], [t for _, _, t in want])
    turn = [(t_out - t_in) // CLK_PERIOD_PS - len(d) for (_, d, t_in), (_, t_out) in zip(want, wire.frames)]
    assert min(turn) == TURNAROUND
    assert s["stat_tx_frames"] == len(want) and s["stat_tx_bytes"] == sum(len(d) for _, d, _ in want)
    assert s["stat_reflect_dropped"] == 0 and s["stat_rx_frames"] == len(frames)
    tb.log.info("%d frames offered, %d reflected as the reference, each L + %d ticks later or at minimum gap "
                "after the one before (L + %d..%d ticks)", len(frames), len(want), TURNAROUND, min(turn), max(turn))


@cocotb.test()
async def run_test_line_rate(dut):
    """At line rate and minimum gap: 64-byte and 2000-byte frames all come back, 12 idle bytes apart
    (the wire's rate); 3000-byte frames overfill the 4 KiB ring: every frame is reflected whole or
    counted in reflect_dropped."""
    tb, wire = await start(dut)
    rng = random.Random(9)
    for size, count in ((64, 300), (2000, 12), (3000, 12)):
        wire.frames.clear()
        await tb.pulse("ctl_clear")
        frames = [kinds(rng, size)["ipv4_echo_request"] for _ in range(count)]
        sent = await offer(tb, frames)
        s = await tb.snapshot()
        reflected = {d: t for d, t in wire.frames}
        want = [reflection(d) for d in frames]
        assert all(d in want for d in reflected), "a reflected frame is not one that was sent"
        assert s["stat_tx_frames"] == len(wire.frames) and s["stat_tx_frames"] + s["stat_reflect_dropped"] == count
        spacing = [b[1] - a[1] for a, b in zip(wire.frames, wire.frames[1:])]
        if 2 * size <= BUF:
            assert len(wire.frames) == count, (size, len(wire.frames))
            assert set(spacing) == {(size + 20) * CLK_PERIOD_PS}, (size, set(spacing))
            assert [t for _, t in wire.frames] == [t + (size + TURNAROUND) * CLK_PERIOD_PS for t in sent]
        else:
            assert s["stat_reflect_dropped"] > 0 and len(wire.frames) > 0
            assert min(spacing) >= (size + 20) * CLK_PERIOD_PS
        tb.log.info("%d-byte frames at line rate: %d of %d reflected, %d counted dropped",
                    size, len(wire.frames), count, s["stat_reflect_dropped"])


@cocotb.test()
async def run_test_off_and_generator(dut):
    """Reflecting off: nothing comes back. On: the generator refuses to start (ERR_REFLECT) and the
    wire stays the reflector's; off again, the generator runs."""
    tb, wire = await start(dut)
    rng = random.Random(3)
    tb.set(cfg_reflect=0)
    await offer(tb, [kinds(rng, 100)["ipv4_udp"] for _ in range(5)])
    assert wire.frames == []
    tb.set(cfg_reflect=1)
    tb.configure(StreamConfig(size=64, count=10, src_mac=MAC))
    await tb.pulse("ctl_start")
    await ClockCycles(dut.clk, 50)
    assert tb.get("stat_tx_error") == ERR_REFLECT and not tb.get("stat_tx_busy")
    assert wire.frames == []
    tb.set(cfg_reflect=0)
    await tb.pulse("ctl_start")
    await tb.wait_idle()
    await ClockCycles(dut.clk, 200)
    assert tb.get("stat_tx_error") == 0 and len(wire.frames) == 10


@pytest.mark.parametrize("scenario", ["run_test_every_kind", "run_test_line_rate", "run_test_off_and_generator"])
def test_reflector(scenario):
    run("reflector.test_reflector", "tb_port", "tb_port", testcase=scenario)
