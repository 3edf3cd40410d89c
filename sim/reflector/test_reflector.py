# SPDX-License-Identifier: BSD-2-Clause
"""fpgatest_reflector in fpgatest_port: every kind of frame reflected, and ARP requests and neighbour
solicitations for the port's address answered, byte for byte as the scapy reference says; frames not
for the port or damaged left alone; line rate at minimum gap, the store-and-forward turnaround to the
tick, a full ring counted, the generator kept off the wire (or, with ARP/ND alone, let on)."""

import random
import socket
import struct
import zlib

import cocotb
import pytest
from cocotb.triggers import ClockCycles
from cocotbext.eth import GmiiFrame
from scapy.layers.inet import ICMP, IP, UDP
from scapy.layers.inet6 import (ICMPv6DestUnreach, ICMPv6EchoRequest, ICMPv6ND_NA, ICMPv6ND_NS,
                                ICMPv6NDOptDstLLAddr, ICMPv6NDOptSrcLLAddr, IPv6, in6_getnsma, in6_getnsmac)
from scapy.layers.l2 import ARP, Dot1Q, Ether
from scapy.packet import Raw
from scapy.pton_ntop import inet_pton

from common.frames import StreamConfig, echo_reply, mac_str, with_fcs
from common.runner import run
from common.harness import RTL
from common.tb import CLK_PERIOD_PS, TB, TxHold
from litex_soc.tester import contract_constants
from litex_soc.verilog_ports import module_values

MAC = 0x02_00_00_00_00_02          # the reflecting port
PEER = "02:00:00:00:00:01"
BUF = 1 << 12                      # the harness's ring (tb_port REFLECT_LOG2)
CONTRACT = contract_constants()     # the refusal bit and cfg_reflect's bits, as csr.json has them
ERR_REFLECT = CONTRACT["FPGATEST_GEN_ERR_REFLECT"]
ON, ARP_BIT, ND_BIT = (CONTRACT[f"FPGATEST_REFLECT_{bit}"] for bit in ("ON", "ARP", "ND"))
MY_IP4 = "192.168.1.2"                # the port's address: IPv4 in the low 32 bits of the IPv6 one
MY_IP6 = "2001:db8:0:1::c0a8:102"
MY_IP = int.from_bytes(inet_pton(socket.AF_INET6, MY_IP6), "big")
# from the clock edge that puts a frame's SFD on the port's RX pins to the one that puts its
# reflection's SFD on the TX pins: L + TURNAROUND ticks (L the frame's length incl. FCS; rx clock =
# tester clock) while the transmitter is free; else the reflection follows the one before at minimum
# gap, its SFD L' + 20 ticks after that one's. (cocotbext-eth's sim_time_sfd is one clock after that
# edge for a GmiiSource, two for a GmiiSink: see sim/checker and sim/gen)
TURNAROUND = 18
SOURCE_SFD_LAG, SINK_SFD_LAG = CLK_PERIOD_PS, 2 * CLK_PERIOD_PS


def due(lengths: list, sfd_in: list) -> list:
    """SFD times (ps) of the answers to frames (their lengths in and out, their SFD times in) as the
    rule above says."""
    out = []
    for (n_in, n_out), t_in in zip(lengths, sfd_in):
        t = t_in + (n_in + TURNAROUND) * CLK_PERIOD_PS
        if out:
            t = max(t, out[-1][1] + (out[-1][0] + 20) * CLK_PERIOD_PS)
        out.append((n_out, t))
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


def l3_of(frame: bytes) -> tuple[bytes, int]:
    """(EtherType, first byte after it) behind at most one 802.1Q/802.1ad tag."""
    if frame[12:14] in (b"\x81\x00", b"\x88\xa8"):
        return frame[16:18], 18
    return frame[12:14], 14


def snm_mac(address: str) -> str:
    """The MAC of an IPv6 address's solicited-node multicast group (33:33:ff and its last 24 bits)."""
    return in6_getnsmac(in6_getnsma(inet_pton(socket.AF_INET6, address)))


def arp_reply(frame: bytes) -> bytes | None:
    """RFC 826's reply to `frame` if it is an ARP request for MY_IP4 to the port or to everyone."""
    etype, l3 = l3_of(frame)
    pkt = Ether(frame[:-4])
    if etype != b"\x08\x06" or ARP not in pkt or pkt.dst not in (mac_str(MAC), "ff:ff:ff:ff:ff:ff"):
        return None
    arp = pkt[ARP]
    if (arp.hwtype, arp.ptype, arp.hwlen, arp.plen, arp.op) != (1, 0x0800, 6, 4, 1) or arp.pdst != MY_IP4:
        return None
    pkt.dst, pkt.src = pkt.src, mac_str(MAC)
    arp.op = 2
    arp.hwdst, arp.pdst = arp.hwsrc, arp.psrc
    arp.hwsrc, arp.psrc = mac_str(MAC), MY_IP4
    return with_fcs(bytes(pkt))


def advertisement(frame: bytes) -> bytes | None:
    """RFC 4861 7.2.4's neighbour advertisement for `frame` if it is a solicitation for MY_IP6 the
    reflector answers (hop limit 255, code 0, not duplicate address detection, to the port's or the
    solicited-node MAC, no option or the source link-layer address option alone)."""
    etype, l3 = l3_of(frame)
    if etype != b"\x86\xdd":
        return None
    pkt = Ether(frame[:-4])
    ip = pkt[IPv6]
    ns = pkt.getlayer(ICMPv6ND_NS)
    if ns is None or ip.hlim != 255 or ns.code != 0 or ns.tgt != MY_IP6 or ip.src == "::":
        return None
    if pkt.dst not in (mac_str(MAC), snm_mac(MY_IP6)):
        return None
    options = bytes(ns.payload)[:ip.plen - 24]
    if ip.plen not in (24, 32) or (ip.plen == 32 and options[:2] != b"\x01\x01"):
        return None
    head = Ether(dst=pkt.src, src=mac_str(MAC), type=pkt.type)
    if l3 == 18:
        head = Ether(bytes(pkt)[:18])
        head.dst, head.src = pkt.src, mac_str(MAC)
        head[Dot1Q].remove_payload()
    na = (head / IPv6(tc=ip.tc, fl=ip.fl, hlim=255, src=MY_IP6, dst=ip.src)
          / ICMPv6ND_NA(R=0, S=1, O=1, tgt=MY_IP6) / ICMPv6NDOptDstLLAddr(lladdr=mac_str(MAC)))
    data = bytes(na)
    assert len(data) == l3 + 72
    return with_fcs(data)


def answer(frame: bytes, bits: int) -> bytes | None:
    """What the reflector sends back for `frame` (intact, with FCS) with cfg_reflect = bits, or None."""
    if bits & ARP_BIT and (reply := arp_reply(frame)):
        return reply
    if bits & ND_BIT and (reply := advertisement(frame)):
        return reply
    if bits & ON and frame[:6] == MAC.to_bytes(6, "big"):
        return reflection(frame)
    return None


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
    } | neighbours(rng, size)


def neighbours(rng: random.Random, size: int) -> dict:
    """ARP requests and neighbour solicitations, some for the port's address (answered with ARP/ND on),
    some not; padded to `size` bytes where they are shorter."""
    me = mac_str(MAC)
    snm = snm_mac(MY_IP6)
    peer6 = "2001:db8:0:1::1"

    def pad(pkt):
        data = bytes(pkt)
        return with_fcs(data + payload(rng, size - 4 - len(data)))

    def ns(dst_mac, src=peer6, hlim=255, tgt=MY_IP6, option=True, tag=None, nonce=False):
        eth = Ether(src=PEER, dst=dst_mac)
        if tag is not None:
            eth = eth / Dot1Q(vlan=tag)
        pkt = eth / IPv6(src=src, dst=socket.inet_ntop(socket.AF_INET6, in6_getnsma(inet_pton(socket.AF_INET6, tgt))),
                         hlim=hlim, tc=rng.randrange(256), fl=rng.randrange(1 << 20)) / ICMPv6ND_NS(tgt=tgt)
        if option:
            pkt = pkt / ICMPv6NDOptSrcLLAddr(lladdr=PEER)
        if nonce:
            pkt = pkt / Raw(b"\x0e\x01" + payload(rng, 6))
        return pad(pkt)

    def who_has(dst_mac, pdst=MY_IP4, tag=None, **arp):
        eth = Ether(src=PEER, dst=dst_mac)
        if tag is not None:
            eth = eth / Dot1Q(vlan=tag)
        return pad(eth / ARP(op=1, hwsrc=PEER, psrc="192.168.1.1", pdst=pdst, **arp))

    return {
        "arp_request": who_has("ff:ff:ff:ff:ff:ff"),
        "arp_request_unicast": who_has(me),
        "vlan_arp_request": who_has("ff:ff:ff:ff:ff:ff", tag=rng.randrange(1, 4095)),
        "arp_request_other_ip": who_has("ff:ff:ff:ff:ff:ff", pdst="192.168.1.3"),
        "arp_request_other_mac": who_has("02:00:00:00:00:09"),
        "arp_request_plen_6": who_has("ff:ff:ff:ff:ff:ff", plen=6),
        "ns_multicast": ns(snm),
        "ns_unicast_no_option": ns(me, option=False),
        "ns_unicast": ns(me),
        "ns_multicast_no_option": ns(snm, option=False),
        "vlan_ns": ns(snm, tag=rng.randrange(1, 4095)),
        "ns_other_target": ns(snm_mac("2001:db8:0:1::c0a8:103"),
                              tgt="2001:db8:0:1::c0a8:103"),
        "ns_hlim_254": ns(snm, hlim=254),
        "ns_dad": ns(snm, src="::", option=False),
        "ns_nonce": ns(snm, option=False, nonce=True),
        "ns_to_other_mac": ns("02:00:00:00:00:09"),
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


DAMAGED = ("bad_fcs", "rx_error", "runt")


async def start(dut, bits: int = ON) -> tuple[TB, Wire]:
    tb = TB(dut, rx_ppm=0)
    await tb.reset()
    tb.set(cfg_src_mac=MAC, cfg_src_ip=MY_IP, cfg_reflect=bits)
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


async def every_kind(dut, bits: int, sizes: tuple, seed: int):
    """Every kind of frame, damaged ones too, shuffled, at minimum gap: what comes back is exactly
    what the reference answers, in order, each L + TURNAROUND ticks after its frame arrived or at
    minimum gap after the answer before; tx_frames counts the answers."""
    tb, wire = await start(dut, bits)
    rng = random.Random(seed)
    frames, expect, errors = [], [], {}
    for size in sizes:
        mixed = list(kinds(rng, size).items()) + list(left_alone(rng, size).items())
        rng.shuffle(mixed)
        for kind, data in mixed:
            if kind == "rx_error":
                errors[len(frames)] = True
            frames.append(data)
            expect.append((kind, None if kind in DAMAGED else answer(data, bits)))
            if kind in ("ipv4_echo_request", "ipv6_echo_request") and bits & ON:
                assert reflection(data) == echo_reply(data), "the reference disagrees with a host's echo reply"
    sent = await offer(tb, frames, errors)
    s = await tb.snapshot()
    want = [(kind, data, t, len(frame)) for (kind, data), t, frame in zip(expect, sent, frames) if data is not None]
    got = {f for f, _ in wire.frames}
    assert len(wire.frames) == len(want), ("not sent back:", sorted({k for k, d, *_ in want if d not in got}),
                                           "not expected:", len(got - {d for _, d, *_ in want}))
    for (kind, data, *_), (got, _) in zip(want, wire.frames):
        assert got == data, f"{kind}: sent back\n{got.hex()}\nexpected\n{data.hex()}"
    assert [t for _, t in wire.frames] == due([(n, len(d)) for _, d, _, n in want], [t for _, _, t, _ in want])
    turn = [(t_out - t_in) // CLK_PERIOD_PS - n for (_, _, t_in, n), (_, t_out) in zip(want, wire.frames)]
    assert min(turn) == TURNAROUND
    assert s["stat_tx_frames"] == len(want) and s["stat_tx_bytes"] == sum(len(d) for _, d, _, _ in want)
    assert s["stat_reflect_dropped"] == 0 and s["stat_rx_frames"] == len(frames)
    answered = sorted({k for k, *_ in want})
    tb.log.info("cfg_reflect %d: %d frames offered, %d answered as the reference (%s), each L + %d ticks "
                "later or at minimum gap after the one before (L + %d..%d ticks)", bits, len(frames), len(want),
                ", ".join(answered), TURNAROUND, min(turn), max(turn))
    return {k for k, *_ in want}


@cocotb.test()
async def run_test_every_kind(dut):
    """Reflecting, ARP and ND all on, every frame size."""
    answered = await every_kind(dut, ON | ARP_BIT | ND_BIT, (64, 65, 99, 128, 511, 1518, 2000), 5)
    assert {"arp_request", "vlan_arp_request", "ns_multicast", "ns_unicast_no_option", "vlan_ns"} <= answered


@cocotb.test()
async def run_test_each_bit(dut):
    """Each of cfg_reflect's bits alone and ARP with ND: only what that bit answers comes back."""
    for bits, seed in ((ON, 11), (ARP_BIT, 12), (ND_BIT, 13), (ARP_BIT | ND_BIT, 14)):
        answered = await every_kind(dut, bits, (64, 128), seed)
        assert bool(bits & ON) == ("ipv4_udp" in answered)
        assert bool(bits & ARP_BIT) == ("arp_request" in answered)
        assert bool(bits & ND_BIT) == ("ns_multicast" in answered)


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
async def run_test_tx_hold(dut):
    """tx_hold (a management frame wants the wire): no reflection starts TX_HOLD_CLOCKS clocks or more
    after it rose, gaps stay >= 12 idle clocks, and every frame is reflected intact or, when the
    holds fill the ring, counted in reflect_dropped."""
    hold_clocks = module_values(RTL / "fpgatest_port.v")["TX_HOLD_CLOCKS"]
    tb, wire = await start(dut)
    rng = random.Random(17)
    hold = TxHold(dut, rng)
    hold.start()
    frames = [kinds(rng, size)["ipv4_echo_request"] for size in [64] * 200 + [700] * 30]
    await offer(tb, frames)
    hold.stop()
    await ClockCycles(dut.clk, 2000)
    s = await tb.snapshot()
    want = [reflection(d) for d in frames]
    assert all(d in want for d, _ in wire.frames), "a reflected frame is not one that was sent"
    assert s["stat_tx_frames"] == len(wire.frames) and s["stat_tx_frames"] + s["stat_reflect_dropped"] == len(frames)
    starts = hold.starts()
    assert len(starts) == len(wire.frames) > 100 and min(idle for _, idle in starts) >= 12
    latest = max(held for held, _ in starts)
    assert latest < hold_clocks, f"a reflection started {latest} clocks into a hold"
    tb.log.info("%d of %d reflected (%d dropped while held), the latest start %d clocks into a hold",
                len(wire.frames), len(frames), s["stat_reflect_dropped"], latest)


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


@cocotb.test()
async def run_test_neighbours_beside_the_generator(dut):
    """ARP and ND alone leave the generator free: a run starts and keeps its wire; requests that arrive
    meanwhile are answered after its last frame, at minimum gap."""
    tb, wire = await start(dut, ARP_BIT | ND_BIT)
    rng = random.Random(21)
    tb.configure(StreamConfig(size=64, count=40, src_mac=MAC, src_ip=MY_IP))  # (the port's address too)
    await tb.pulse("ctl_start")
    await ClockCycles(dut.clk, 20)
    asked = [neighbours(rng, 64)[k] for k in ("arp_request", "ns_multicast", "vlan_arp_request")]
    await offer(tb, asked)
    assert tb.get("stat_tx_error") == 0
    s = await tb.snapshot()
    assert s["stat_tx_frames"] == 40 + len(asked)
    generated, answers = wire.frames[:40], wire.frames[40:]
    assert all(Ether(f[:-4]).src == mac_str(MAC) and len(f) == 64 for f, _ in generated)
    assert [f for f, _ in answers] == [answer(d, ARP_BIT | ND_BIT) for d in asked]
    # the first answer at minimum gap after the generator's last frame, the others after it
    assert answers[0][1] - generated[-1][1] == (64 + 20) * CLK_PERIOD_PS
    assert [b[1] - a[1] for a, b in zip(answers, answers[1:])] == [(len(a[0]) + 20) * CLK_PERIOD_PS for a in answers[:-1]]


@pytest.mark.parametrize("scenario", ["run_test_every_kind", "run_test_each_bit", "run_test_line_rate",
                                      "run_test_off_and_generator", "run_test_neighbours_beside_the_generator",
                                      "run_test_tx_hold"])
def test_reflector(scenario):
    run("reflector.test_reflector", "tb_port", "tb_port", testcase=scenario)
