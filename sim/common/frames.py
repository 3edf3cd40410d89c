# SPDX-License-Identifier: BSD-2-Clause
"""Python reference of the fpgatest frame format (docs/frame-format.md), built with scapy."""

import struct
import zlib
from dataclasses import dataclass, field

from scapy.layers.inet import ICMP, IP, UDP
from scapy.layers.inet6 import ICMPv6EchoRequest, IPv6
from scapy.layers.l2 import Dot1Q, Ether
from scapy.packet import Raw

SIG_MAGIC = 0x46504754  # "FPGT"
SIG_LEN = 18
PROTO_RAW, PROTO_IPV4, PROTO_IPV6 = 0, 1, 2


def sig_check(body14: bytes) -> int:
    """CRC-32 (Ethernet polynomial, reflected) from initial register MAGIC, no final inversion."""
    return zlib.crc32(body14, SIG_MAGIC ^ 0xFFFFFFFF) ^ 0xFFFFFFFF


def signature(stream: int, seq: int, tx_tick: int) -> bytes:
    body = struct.pack(">H", stream) + (seq & (2**48 - 1)).to_bytes(6, "big")
    body += (tx_tick & (2**48 - 1)).to_bytes(6, "big")
    return body + struct.pack(">I", sig_check(body))


def parse_signature(sig: bytes):
    """(stream, seq, tx_tick48) of a valid signature, else None."""
    if len(sig) < SIG_LEN or struct.unpack(">I", sig[14:18])[0] != sig_check(sig[:14]):
        return None
    return struct.unpack(">H", sig[:2])[0], int.from_bytes(sig[2:8], "big"), int.from_bytes(sig[8:14], "big")


def min_size(proto: int, vlan: bool) -> int:
    need = (18 if vlan else 14) + {PROTO_RAW: 0, PROTO_IPV4: 28, PROTO_IPV6: 48}[proto] + SIG_LEN + 4
    return max(64, need)


def mac_str(mac: int) -> str:
    return ":".join(f"{b:02x}" for b in mac.to_bytes(6, "big"))


def ip4_str(ip: int) -> str:
    return ".".join(str(b) for b in (ip & 0xFFFFFFFF).to_bytes(4, "big"))


def ip6_str(ip: int) -> str:
    import ipaddress

    return str(ipaddress.IPv6Address(ip))


@dataclass
class StreamConfig:
    """Generator settings; field names match the cfg_* registers of fpgatest_port."""

    proto: int = PROTO_IPV4
    icmp: int = 0  # IPv4/IPv6: an ICMP echo request (id udp_src, sequence seq & 0xFFFF) instead of UDP
    vlan_en: int = 0
    vlan_tci: int = 0x0064
    dst_mac: int = 0x02_00_00_00_00_02
    src_mac: int = 0x02_00_00_00_00_01
    ethertype: int = 0x88B5  # IEEE local experimental
    ip_ttl: int = 64
    ip_tos: int = 0
    src_ip: int = 0xC0A80001  # 192.168.0.1 (IPv6: set a full address)
    dst_ip: int = 0xC0A80002
    udp_src: int = 0x1234
    udp_dst: int = 0x4D54
    tx_stream_id: int = 1
    seq_start: int = 0
    size: int = 64
    ifg: int = 12
    ifg_frac_num: int = 0
    ifg_frac_den: int = 0
    burst_len: int = 0
    burst_gap: int = 12
    count: int = 0
    win_mode: int = 0  # fpgatest_window: 0 off, 1 fixed, 2 Reno-like
    win_size: int = 0
    win_max: int = 0
    win_timeout: int = 0
    extra: dict = field(default_factory=dict)

    def frame(self, seq: int, tx_tick: int) -> bytes:
        """The frame the generator must send (without preamble, with FCS)."""
        sig = signature(self.tx_stream_id, seq, tx_tick)
        l2 = Ether(dst=mac_str(self.dst_mac), src=mac_str(self.src_mac))
        if self.vlan_en:
            l2 = l2 / Dot1Q(prio=self.vlan_tci >> 13, id=(self.vlan_tci >> 12) & 1, vlan=self.vlan_tci & 0xFFF)
        l2_len = 18 if self.vlan_en else 14
        payload_len = self.size - 4 - l2_len
        if self.proto == PROTO_RAW:
            pkt = l2 / Raw(sig + bytes(payload_len - SIG_LEN))
            if self.vlan_en:
                pkt[Dot1Q].type = self.ethertype
            else:
                pkt[Ether].type = self.ethertype
        elif self.proto == PROTO_IPV4:
            udp_payload = sig + bytes(payload_len - 28 - SIG_LEN)
            l4 = ICMP(type=8, id=self.udp_src, seq=seq & 0xFFFF) if self.icmp else UDP(sport=self.udp_src,
                                                                                      dport=self.udp_dst)
            pkt = l2 / IP(src=ip4_str(self.src_ip), dst=ip4_str(self.dst_ip), ttl=self.ip_ttl, tos=self.ip_tos,
                          id=seq & 0xFFFF, flags="DF") / l4 / Raw(udp_payload)
        else:
            udp_payload = sig + bytes(payload_len - 48 - SIG_LEN)
            l4 = ICMPv6EchoRequest(id=self.udp_src, seq=seq & 0xFFFF) if self.icmp else UDP(sport=self.udp_src,
                                                                                           dport=self.udp_dst)
            pkt = l2 / IPv6(src=ip6_str(self.src_ip), dst=ip6_str(self.dst_ip), hlim=self.ip_ttl, tc=self.ip_tos) / l4 \
                / Raw(udp_payload)
        data = bytes(pkt)
        if self.icmp:
            # an ICMP checksum that sums to 0 goes out as 0xFFFF (the generator's one's-complement choice)
            at = len(data) - len(udp_payload) - 6
            if data[at:at + 2] == b"\x00\x00":
                data = data[:at] + b"\xff\xff" + data[at + 2:]
        assert len(data) == self.size - 4, (len(data), self.size)
        return data + struct.pack("<I", zlib.crc32(data))


def with_fcs(data: bytes) -> bytes:
    return data + struct.pack("<I", zlib.crc32(data))


def echo_reply(frame: bytes) -> bytes:
    """The echo reply a host sends for an ICMP/ICMPv6 echo request (with FCS): addresses swapped, type 0
    (ICMPv6 129), checksum recomputed, the data (our signature) untouched."""
    pkt = Ether(frame[:-4])
    pkt[Ether].src, pkt[Ether].dst = pkt[Ether].dst, pkt[Ether].src
    if ICMP in pkt:
        pkt[IP].src, pkt[IP].dst = pkt[IP].dst, pkt[IP].src
        pkt[ICMP].type = 0
        del pkt[IP].chksum, pkt[ICMP].chksum
    else:
        from scapy.layers.inet6 import ICMPv6EchoReply

        req = pkt[ICMPv6EchoRequest]
        rep = ICMPv6EchoReply(id=req.id, seq=req.seq, data=req.data)
        ip6 = pkt[IPv6]
        ip6.src, ip6.dst = ip6.dst, ip6.src
        ip6.remove_payload()
        ip6.add_payload(rep)
        del ip6.plen
        pkt = pkt.__class__(bytes(pkt))
    data = bytes(pkt)
    return data + struct.pack("<I", zlib.crc32(data))
