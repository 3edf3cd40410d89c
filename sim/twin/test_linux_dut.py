# SPDX-License-Identifier: BSD-2-Clause
"""The Linux kernel as the device under test (twin:linux, twin:linux-bridge): each twin port joined to a
TAP interface in a network namespace that routes IPv4 and IPv6 between them, or bridges them. Needs
root and /dev/net/tun; skipped, with the reason, where they are missing."""

import json
import subprocess
import sys
import time

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.inet6 import ICMPv6ND_NS, IPv6
from scapy.layers.l2 import ARP, Ether
from scapy.utils import PcapNgReader

from boards import twin
from fpgatest.capture import TwinCapture
from fpgatest.cli import main
from fpgatest.driver import Device
from fpgatest.tester import Tester

MISSING = twin.linux_missing()
needs_linux = pytest.mark.skipif(MISSING is not None, reason=f"the kernel as DUT: {MISSING}")

# the router's interfaces take the MAC that the facing port sends to by default (its peer's)
ROUTER_MAC = ["02:00:00:00:00:02", "02:00:00:00:00:01"]      # facing port 0, facing port 1
PORT_MAC_1 = "02:00:00:00:00:02"
SOURCE_MAC = "02:00:00:00:00:aa"     # port 0's source for the sweep: the rewrite is then visible
TTL = 64                             # the generator's default TTL / hop limit


@pytest.fixture(scope="module", autouse=True)
def _one_twin_at_a_time(no_session_twin):
    """The Etherbone twin built before any twin of this module runs: in a fresh clone its build took
    237 s beside three running twins (each takes a core) and the bitstream's nextpnr, 51 s beside
    nextpnr alone."""
    if MISSING is None:
        twin.ensure_built(twin.default_build_dir("full", etherbone=True), "full", etherbone=True)


@pytest.fixture(scope="module")
def linux_twin(tmp_path_factory):
    log = open(tmp_path_factory.mktemp("twin-linux") / "twin.log", "w")
    with twin.running(log=log, linux="router") as (url, csr):
        yield url, csr, int(url.rsplit(":", 1)[1])
    log.close()


@pytest.fixture()
def etherbone_twin(tmp_path_factory):
    """The twin built with Etherbone on port 1 (boards.twin --etherbone), the kernel routing; stopped
    after its one test."""
    log = open(tmp_path_factory.mktemp("twin-etherbone") / "twin.log", "w")
    with twin.running(log=log, linux="router", etherbone=True) as (url, csr):
        yield url, csr, int(url.rsplit(":", 1)[1])
    log.close()


@pytest.fixture()
def bridge_twin(tmp_path_factory):
    """The kernel bridging the ports; stopped after its one test, the module's first (no other twin
    running then)."""
    log = open(tmp_path_factory.mktemp("twin-bridge") / "twin.log", "w")
    with twin.running(log=log, linux="bridge") as (url, csr):
        yield url, csr
    log.close()


def kernel_sent(port: int) -> list[int]:
    """Frames the kernel has sent on each port's TAP so far."""
    counts = []
    for tap in twin.tap_names(port):
        out = subprocess.run(["ip", "-n", twin.netns_name(port), "-s", "-j", "link", "show", tap],
                             capture_output=True, text=True, check=True).stdout
        counts.append(json.loads(out)[0]["stats64"]["tx"]["packets"])
    return counts


def in_namespace(port: int, code: str) -> None:
    subprocess.run(["ip", "netns", "exec", twin.netns_name(port), sys.executable, "-c", code],
                   check=True, capture_output=True, timeout=30)


@needs_linux
def test_sweep_through_a_linux_bridge(bridge_twin, tmp_path):
    """Through the kernel's bridge (a learning switch) every test frame arrives and is recognised, and
    leaves the bridge byte for byte as it entered (FCS included): a switch forwards, it does not route."""
    url, csr = bridge_twin
    out, pcap = tmp_path / "sweep", tmp_path / "wire.pcapng"
    assert main(["sweep", "--url", url, "--csr", str(csr), "--calibration", "none", "--proto", "ipv4",
                 "--sizes", "64,1518", "--duration", "0.002", "--interval", "0.001", "--out", str(out),
                 "--capture", str(pcap)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert json.loads((out / "run.json").read_text())["dut"]["linux"]["mode"] == "bridge"
    received = sum(row["frames"]["rx"] for row in summary["sizes"])
    for row in summary["sizes"]:
        f = row["frames"]
        assert f["tx"] == f["rx"] > 0 and f["lost"] == f["reordered"] == f["duplicate"] == 0
    sent, got = set(), []
    for pkt in PcapNgReader(str(pcap)):
        frame = bytes(pkt)
        if UDP not in Ether(frame[:-4]):
            continue
        if pkt.sniffed_on == "port0" and pkt.direction == 2:
            sent.add(frame)
        elif pkt.sniffed_on == "port1" and pkt.direction == 1:
            got.append(frame)
    assert len(got) == received and all(frame in sent for frame in got)


@needs_linux
def test_echo_through_a_bridge_says_and_gets_what_answers(bridge_twin, tmp_path, capsys):
    """fpgatest echo through the kernel's bridge, to its default address (port 1's): the bridge has no
    address and port 1's reflector is off, so nothing answers, and one line says that port 1's reflector
    would. With it (--reflector 1) every request comes back through the bridge."""
    url, csr = bridge_twin
    base = ["echo", "--url", url, "--csr", str(csr), "--calibration", "none", "--pings", "8"]
    assert main([*base, "--out", str(tmp_path / "none")]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "fpgatest: error: no echo reply came back: nothing answers the requests at the device under test; "
        "the Linux bridge answers nothing itself: let port 1's reflector answer (--reflector 1)"]
    out = tmp_path / "reflected"
    assert main([*base, "--reflector", "1", "--out", str(out)]) == 0
    idle = json.loads((out / "results.json").read_text())["idle"]
    assert idle["replies"] == idle["pings"] == 8 and idle["lost"] == 0, idle


# an address of port 1's subnet the router has no static neighbour for (port 1's default is
# 192.168.1.1); the IPv6 one ends in it, as the port holds one address for both
REFLECTOR_IP4, REFLECTOR_IP6 = "192.168.1.2", "2001:db8:0:1::c0a8:102"
PING = """
import socket, struct
family, proto, request, reply = {family}, {proto}, {request}, {reply}
s = socket.socket(family, socket.SOCK_RAW, proto)
s.settimeout(60)
body = struct.pack('!BBHHH', request, 0, 0, 0x4654, 7) + b'fpgatest reflector'
if family == socket.AF_INET:       # (the kernel sums ICMPv6 itself)
    words = sum(struct.unpack('!%dH' % (len(body) // 2), body))
    words = (words & 0xFFFF) + (words >> 16)
    body = body[:2] + struct.pack('!H', ~(words + (words >> 16)) & 0xFFFF) + body[4:]
s.sendto(body, ('{address}', 0))
while True:
    data, peer = s.recvfrom(2048)
    icmp = data[(data[0] & 15) * 4:] if family == socket.AF_INET else data
    if peer[0] == '{address}' and icmp[0] == reply and icmp[4:8] == body[4:8]:
        break
"""


@needs_linux
def test_kernel_own_frames_are_counted_foreign(linux_twin):
    """What the kernel sends on its own (IPv6 neighbour discovery and MLD when the links come up, ARP and
    neighbour solicitations for an address nobody has) reaches the ports and is counted foreign, every
    frame: each port's receive count equals what the kernel sent on its TAP."""
    url, csr, port = linux_twin
    with Device(url, csr) as dev:
        t = Tester(dev)
        assert t.tap_ports() == [0, 1] and not t.has_dut_model and not t.has_echo_model
        capture = TwinCapture(t, csr.parent / f"run-{port}")
        capture.start()
        # a datagram to a neighbour nobody answers for: ARP on port 1's side, then NS for IPv6
        in_namespace(port, "import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM)"
                           ".sendto(b'x', ('192.168.1.77', 9))")
        in_namespace(port, "import socket; socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)"
                           ".sendto(b'x', ('2001:db8:0:1::77', 9))")
        deadline = time.monotonic() + 30
        while True:      # settled: the kernel sent nothing while the tester counted
            before = kernel_sent(port)
            t.wait_ticks(20_000)
            snap = t.snapshot()
            if kernel_sent(port) == before and [p["rx_frames"] for p in snap["ports"]] == before:
                break
            assert time.monotonic() < deadline, (before, snap["ports"])
        pcap = csr.parent / f"run-{port}" / "kernel.pcapng"
        capture.stop(pcap)
    for p in snap["ports"]:
        assert p["foreign"] == p["rx_frames"] and p["test_frames"] == 0
        assert p["fcs_errors"] == p["runts"] == p["giants"] == 0
    frames = [Ether(bytes(pkt)[:-4]) for pkt in PcapNgReader(str(pcap)) if pkt.sniffed_on == "port1"]
    assert any(ARP in f and f[ARP].op == 1 and f[ARP].pdst == "192.168.1.77" for f in frames)
    assert any(ICMPv6ND_NS in f and f[ICMPv6ND_NS].tgt == "2001:db8:0:1::77" for f in frames)
    assert all(f.src == ROUTER_MAC[1] for f in frames)


@needs_linux
@pytest.mark.parametrize("proto, sizes", [("ipv4", "64,512,1518"), ("ipv6", "84,512,1518")])
def test_sweep_through_the_kernel(linux_twin, tmp_path, proto, sizes):
    """fpgatest sweep at line rate through the kernel's forwarding: every test frame arrives and is
    recognised (none lost or reordered; foreign frames are only the kernel's own), routed as a router must: the TTL or hop limit one lower, MACs
    rewritten to the router's and port 1's, the IPv4 header checksum recomputed; the payload (signature,
    sequence number, TX stamp) and the UDP checksum unchanged."""
    url, csr, port = linux_twin
    out, pcap = tmp_path / "sweep", tmp_path / "wire.pcapng"
    assert main(["sweep", "--url", url, "--csr", str(csr), "--calibration", "none", "--proto", proto,
                 "--sizes", sizes, "--duration", "0.002", "--interval", "0.001", "--src-mac", SOURCE_MAC, "--out", str(out),
                 "--capture", str(pcap)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    received = foreign = 0
    for row in summary["sizes"]:
        f = row["frames"]
        assert f["tx"] == f["rx"] > 0 and f["lost"] == f["reordered"] == f["duplicate"] == 0, row["size_bytes"]
        assert f["fcs_errors"] == 0
        received += f["rx"]
        foreign += f["foreign"]
    # the record says what the device was: the kernel as the launcher set it up (kernel.json)
    assert json.loads((out / "run.json").read_text())["dut"] == {"linux_tap_ports": [0, 1],
                                                                 "linux": twin.kernel_info(port, "router")}

    layer = IP if proto == "ipv4" else IPv6
    sent, got, kernel_own = {}, [], []
    for pkt in PcapNgReader(str(pcap)):
        frame = Ether(bytes(pkt)[:-4])
        if layer not in frame or UDP not in frame:
            if pkt.sniffed_on == "port1":
                kernel_own.append(frame)
            continue
        datagram = bytes(frame[UDP])[:frame[UDP].len]      # without the Ethernet padding
        if pkt.sniffed_on == "port0" and pkt.direction == 2:
            sent[datagram] = frame
        elif pkt.sniffed_on == "port1" and pkt.direction == 1:
            got.append((datagram, frame))
    assert len(got) == received and len(sent) >= received
    # anything else on port 1 is the kernel's own (here: ARP, IPv6 neighbour discovery or MLD; the
    # first test's unanswered neighbour requests are retried for seconds), counted foreign
    assert all(ARP in f or f.type == 0x86DD and f[IPv6].nh in (0, 58) for f in kernel_own), kernel_own
    assert foreign <= len(kernel_own)
    for datagram, frame in got:
        before = sent[datagram]          # the UDP datagram (payload and checksum) as it left port 0
        assert (before.src, before.dst) == (SOURCE_MAC, ROUTER_MAC[0])
        assert (frame.src, frame.dst) == (ROUTER_MAC[1], PORT_MAC_1)
        if proto == "ipv4":
            assert (before[IP].ttl, frame[IP].ttl) == (TTL, TTL - 1)
            header = frame[IP].copy()
            header.chksum = None                            # scapy computes it again
            assert IP(bytes(header)).chksum == frame[IP].chksum != before[IP].chksum
        else:
            assert (before[IPv6].hlim, frame[IPv6].hlim) == (TTL, TTL - 1)


@needs_linux
def test_echo_answered_by_the_kernel(linux_twin, tmp_path):
    """fpgatest echo to the router's own address: the kernel answers every echo request (it copies the
    data, so the checker knows each reply by its signature), and the window of 4 keeps port 0 sending
    at line rate. An idle ping's RTT is at least the request's wire time (576 B + 8 B preamble, the
    kernel takes the frame after its last byte) and at most one TAP poll (16 ticks) and a tick more."""
    url, csr, port = linux_twin
    out = tmp_path / "echo"
    assert main(["echo", "--url", url, "--csr", str(csr), "--calibration", "none", "--window", "4",
                 "--dst-ip", "192.168.0.254", "--out", str(out)]) == 0
    r = json.loads((out / "results.json").read_text())
    wire_ns = (576 + 8) * 8
    assert r["idle"]["replies"] == r["idle"]["pings"] > 0 and r["idle"]["lost"] == 0
    assert wire_ns <= r["idle"]["rtt_min_ns"] <= wire_ns + 17 * 8
    level = r["levels"][0]
    assert level["replies"] == level["sent"] > 0 and level["lost"] == level["timeouts"] == 0
    line_rate_mbps = 1000 * 576 / (576 + 20)
    assert 0.98 * line_rate_mbps <= level["throughput_mbps"] <= line_rate_mbps + level["throughput_resolution_mbps"]
    assert level["truth"] is None, "no switch model to predict it"


@needs_linux
def test_info_says_what_the_kernel_is(linux_twin, capsys):
    """fpgatest info on a twin through the kernel names the router, its namespace and its addresses (as
    the launcher set them up: kernel.json in the twin's run directory)."""
    url, csr, port = linux_twin
    assert main(["info", "--url", url, "--csr", str(csr)]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("dut ")]
    assert lines == [f"dut         the Linux kernel, a router (network namespace {twin.netns_name(port)}; its addresses "
                     "192.168.0.254 and 2001:db8::fe facing port 0; 192.168.1.254 and 2001:db8:0:1::fe facing "
                     "port 1), ports 0, 1 joined to TAP interfaces (twin:linux)"], lines


@needs_linux
def test_echo_that_nothing_answers_names_the_router(linux_twin, tmp_path, capsys):
    """fpgatest echo to its default address, port 1's: the router forwards the requests to port 1, whose
    reflector is off, so nothing answers. One line says so and names the address that does answer, the
    router's own (the test above)."""
    url, csr, port = linux_twin
    out = tmp_path / "echo"
    assert main(["echo", "--url", url, "--csr", str(csr), "--calibration", "none", "--out", str(out)]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "fpgatest: error: no echo reply came back: nothing answers the requests at the device under test; "
        "the Linux router answers for itself: --dst-ip 192.168.0.254"]


@needs_linux
def test_the_kernel_finds_the_reflector(linux_twin):
    """Port 1 answers ARP and neighbour solicitation for its addresses (fpgatest reflect --ip): the
    kernel, with no static neighbour for them, resolves both by itself, and its pings to them come
    back (reflected echo replies); the neighbour entries it learned carry port 1's MAC."""
    url, csr, port = linux_twin
    ns = twin.netns_name(port)
    assert main(["reflect", "--url", url, "--csr", str(csr), "--port", "1",
                 "--ip", REFLECTOR_IP4, "--ip", REFLECTOR_IP6]) == 0
    try:
        for address, family, proto, request, reply in ((REFLECTOR_IP4, "socket.AF_INET", "socket.IPPROTO_ICMP", 8, 0),
                                                       (REFLECTOR_IP6, "socket.AF_INET6", "socket.IPPROTO_ICMPV6", 128, 129)):
            in_namespace(port, PING.format(family=family, proto=proto, request=request, reply=reply, address=address))
            entries = json.loads(subprocess.run(["ip", "-n", ns, "-j", "neigh", "show", "to", address],
                                                capture_output=True, text=True, check=True).stdout)
            assert [(e["lladdr"], e["dev"]) for e in entries] == [(PORT_MAC_1, twin.tap_names(port)[1])], entries
            assert "PERMANENT" not in entries[0]["state"]
    finally:
        assert main(["reflect", "--url", url, "--csr", str(csr), "--port", "1", "--off"]) == 0


ETHERBONE_READS = 40
ETHERBONE_CLIENT = """
from litex.tools.remote.comm_udp import CommUDP
comm = CommUDP("{ip}", {port}, timeout=5.0)
comm.open()                                          # a probe
for n in range({reads}):
    assert len(comm.read(0x100000, 1 + n % 255)) == 1 + n % 255
"""


@needs_linux
def test_etherbone_through_the_kernel(etherbone_twin, linux_twin, tmp_path):
    """The host's bus over udp:// (Etherbone on port 1, litex_soc/management.py), routed by the kernel:
    `fpgatest sweep` run through it, with port 1 sending at line rate through the router to port 0
    while the host's requests and the core's replies share port 1's wire: every test frame arrives,
    intact and in order (the replies go out between test frames). Then 40 reads of 1-40 words and a
    probe: every frame the kernel sent to port 1 is counted there, the Etherbone ones as management
    (at least the 41 requests), the rest foreign; none damaged. The default twin has no Etherbone."""
    with Device(*linux_twin[:2]) as dev:
        assert Tester(dev).etherbone() is None
    url, csr, port = etherbone_twin
    with Device(url, csr) as dev:
        eb = Tester(dev).etherbone()
    assert eb == {"port": 1, "url": "udp://192.168.1.50:1234"}
    out = tmp_path / "sweep"
    subprocess.run(["ip", "netns", "exec", twin.netns_name(port), sys.executable, "-m", "fpgatest", "sweep",
                    "--url", eb["url"], "--csr", str(csr), "--calibration", "none", "--proto", "ipv4",
                    "--tx-port", "1", "--rx-port", "0", "--sizes", "64,1518", "--duration", "0.002",
                    "--interval", "0.001", "--out", str(out)], check=True, capture_output=True, timeout=600)
    summary = json.loads((out / "summary.json").read_text())
    for row in summary["sizes"]:
        f = row["frames"]
        assert f["tx"] == f["rx"] > 0 and f["lost"] == f["reordered"] == f["duplicate"] == 0, row["size_bytes"]
        assert f["fcs_errors"] == 0
    with Device(url, csr) as dev:
        t = Tester(dev)
        t.clear()
        before = kernel_sent(port)[1]
        in_namespace(port, ETHERBONE_CLIENT.format(ip="192.168.1.50", port=1234, reads=ETHERBONE_READS))
        deadline = time.monotonic() + 30
        while True:      # settled: the kernel sent nothing while the tester counted
            sent = kernel_sent(port)[1] - before
            t.wait_ticks(20_000)
            p = t.snapshot()["ports"][1]
            if kernel_sent(port)[1] - before == sent == p["rx_frames"]:
                break
            assert time.monotonic() < deadline, (sent, p)
    assert p["mgmt_frames"] >= ETHERBONE_READS + 1 and p["mgmt_frames"] + p["foreign"] == p["rx_frames"]
    assert p["fcs_errors"] == p["runts"] == p["giants"] == p["test_frames"] == 0


@needs_linux
def test_no_switch_model_to_set(linux_twin, tmp_path, capsys):
    """With the kernel on the path, switch-model settings are refused with one line, before anything is
    written."""
    url, csr, port = linux_twin
    for argv in (["dut"], ["sweep", "--dut", "latency_ns=100", "--sizes", "64", "--out", str(tmp_path / "r")]):
        assert main([argv[0], "--url", url, "--csr", str(csr), *argv[1:]]) == 2
        err = capsys.readouterr().err.splitlines()
        assert len(err) == 1 and "the ports go through the Linux kernel (twin:linux)" in err[0], err
    assert not (tmp_path / "r").exists()


def test_without_root_one_line_and_nothing_started(monkeypatch, capsys):
    """Where the kernel cannot be the DUT (here: not root), the launcher behind --url twin:linux announces
    one error naming what is missing (fpgatest prints it as its one error line, exit status 2), and
    starts, builds and writes nothing."""
    monkeypatch.setattr(twin.os, "geteuid", lambda: 1000)
    reason = twin.linux_missing()
    assert reason is not None
    done = []
    monkeypatch.setattr(twin.subprocess, "Popen", lambda *a, **k: done.append(a))
    monkeypatch.setattr(twin, "ensure_built", lambda *a: done.append(a))
    assert twin.serve(None, twin.BUILD_DIR, linux=True, for_tool=True) == 2
    assert capsys.readouterr().out.splitlines() == [json.dumps({"error": f"the Linux kernel as DUT: {reason}"})]
    assert not done
