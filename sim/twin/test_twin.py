# SPDX-License-Identifier: BSD-2-Clause
"""The digital twin over TCP + UARTBone: identity, streams through the switch model, exact latency and drops;
the model's pacing, second hop and cross traffic against their formulas."""

import json
import math
import socket
import sys
import threading
import time

import pytest

from bench.twin_speed import snapshot_cost
from common.switch_state import store_and_forward_ns
from fpgatest.driver import LATCH_PAD_WORDS, Device, MapError
from fpgatest.measure import send_and_drain
from fpgatest.tester import TICK_NS, SettingError, Stream, Tester
from fpgatest.transport import CMD_READ_BURST_INCR


def run(t: Tester, port: int, stream: Stream) -> dict:
    """The stream from port to the other port, read once the switch is empty (the tool's own drain: until
    2000 ticks pass with no frame arriving; a fixed wait held only while the host was slow)."""
    return send_and_drain(t, [(port, 1 - port)], [stream], drain_s=2000 * TICK_NS * 1e-9, timeout_s=60.0)


def test_identity(twin_link, tmp_path):
    url, csr = twin_link
    with Device(url, csr) as dev:
        assert dev.read("tester_build_id") == json.loads(csr.read_text())["constants"]["fpgatest_build_id"]
        assert dev.read("tester_n_ports") == 2
        # the snapshot's busy flags come first among a port's stat_* registers (Device.snapshot reads
        # them in one burst with the values after them)
        for port in range(2):
            stats = {name: reg.addr for name, reg in dev.map.registers.items()
                     if name.startswith(f"port{port}_stat_")}
            busy = [f"port{port}_stat_{name}_busy" for name in ("counters", "hist", "seq")]
            assert max(stats[name] for name in busy) < min(a for n, a in stats.items() if n not in busy)
    # a register map of another build is refused before anything is written
    other = json.loads(csr.read_text())
    other["constants"]["fpgatest_build_id"] ^= 1
    wrong = tmp_path / "csr.json"
    wrong.write_text(json.dumps(other))
    with pytest.raises(MapError, match="build id"):
        Device(url, wrong)
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(MapError):
        Device(url, tmp_path / "bad.json")


class Intercepted:
    """A device's bus with each request of reads kept (requests) and its replies handed to edit(ops,
    replies) first, which may change them: what the gateware would have said, had a port been latching."""

    def __init__(self, real, edit):
        self.real, self.edit, self.requests = real, edit, []

    def __getattr__(self, name):
        return getattr(self.real, name)

    def transact(self, ops, retry=True):
        self.requests.append(ops)
        replies = self.real.transact(ops, retry)
        self.edit(ops, replies)
        return replies


def test_a_snapshot_read_while_still_latching_is_read_again(twin_link):
    """Device.snapshot sends the snapshot's pulse, then every read in one request, a port's busy flags
    first in its burst: when they say the snapshot is still being latched (here the burst is made to
    say so, with a value after them garbled), the port is read again in one more request, and nothing
    of the first read is kept. A snapshot is one round trip, or two when a port was still latching."""
    url, csr = twin_link
    with Device(url, csr) as dev:
        real = dev.bus
        busy = dev.map["port1_stat_counters_busy"].addr
        lost = dev.map["port1_stat_seq_lost"]
        garbled = []

        def latching(ops, replies):
            reads = [(addr, n) for kind, addr, n in ops if kind == "read"]
            for (addr, n), words in zip(reads, replies):
                if not garbled and addr <= busy < addr + 4 * n:
                    garbled.append(addr)
                    words[(busy - addr) // 4] = 1
                    at = (lost.addr - addr) // 4
                    assert 0 < at < n, "the busy flag comes first in the port's burst"
                    words[at:at + lost.words] = [0xDEAD] * lost.words

        first = dev.snapshot()
        dev.bus = Intercepted(real, latching)
        try:
            second = dev.snapshot()
        finally:
            requests, dev.bus = dev.bus.requests, real
    assert garbled
    assert len(requests) == 2, "every read in one request, the latching port in a second"
    assert all(kind == "read" for ops in requests for kind, _, _ in ops)
    assert any(addr <= busy < addr + 4 * n for _, addr, n in requests[1])
    assert requests[1][-1][1] == dev.map.memories["port1_counters"]
    assert second["port1_stat_counters_busy"] == 0
    assert second["port1_stat_seq_lost"] == first["port1_stat_seq_lost"] != 0xDEAD << 32 | 0xDEAD


def test_counters_now_is_one_request_and_reads_a_latching_port_again(twin_link):
    """Device.counters_now (the drain's look at the frames still arriving) reads as snapshot does: the
    pulse, then each port's busy flag and counter window in one request. A port whose flag says it is
    still latching (here made to say so, its window garbled) is read again in one more request, and
    nothing of the first read is kept. On the idle twin its counters are the snapshot's."""
    url, csr = twin_link
    with Device(url, csr) as dev:
        real = dev.bus
        busy = dev.map["port1_stat_counters_busy"].addr
        window = dev.map.memories["port1_counters"]
        garbled = []

        def latching(ops, replies):
            reads = [addr for kind, addr, _ in ops if kind == "read"]
            if not garbled and busy in reads:
                garbled.append(busy)
                replies[reads.index(busy)][0] = 1
                words = replies[reads.index(window)]
                words[:] = [0xDEAD] * len(words)

        dev.bus = bus = Intercepted(real, latching)
        try:
            now = dev.counters_now([0, 1])
            assert len(bus.requests) == 2, "both ports in one request, the latching one in a second"
            assert all(kind == "read" for ops in bus.requests for kind, _, _ in ops)
            assert [addr for _, addr, _ in bus.requests[1]] == [busy, window], bus.requests[1]
            bus.requests.clear()
            again = dev.counters_now([0, 1])
            assert len(bus.requests) == 1, bus.requests
        finally:
            dev.bus = real
        snap = dev.snapshot()
    names = [f"port{port}_stat_{name}" for port in (0, 1) for name in dev.map.counters()]
    assert sorted(now) == sorted(again) == sorted(names)
    assert {n: now[n] for n in names} == {n: again[n] for n in names} == {n: snap[n] for n in names}
    assert now["port1_stat_rx_frames"] != 0xDEAD << 32 | 0xDEAD


def test_a_snapshot_is_one_round_trip(tester):
    """On the twin a snapshot's reads used to reach the bridge within the latch's few dozen clocks and
    a port found still latching was read again (1.8 round trips on average on this twin): the burst
    read ahead of them (Device.latch_pad_words, 16 words where 6 were enough here) lets every port's
    latch finish first. 50 snapshots, idle and with both ports sending 64-byte frames at line rate,
    counted as `make bench` counts them (snapshot_cost): each one request that waits for a reply.
    The histogram at its power-up bins, which every frame's latency lies above (conftest puts them
    back after every test). With bins over them, as in a sweep's intervals,
    stat_hist_busy is the histogram queue's (not empty, or its engine at work), high for the five
    engine clocks each result takes to bin, about 15 % of the time at 64-byte line rate, copy done or
    not: 1.2 to 1.6 round trips whatever the pad (docs/architecture.md)."""
    dev = tester.dev
    assert dev.latch_pad_words == LATCH_PAD_WORDS
    try:
        for ports in ((), (0, 1)):
            for port in ports:
                tester.configure(port, Stream(proto="ipv4", size=64))
            tester.start(*ports)
            before = tester.snapshot()
            trips = [snapshot_cost(dev, tester)["snapshot_round_trips"] for _ in range(10)]   # 5 each
            after = tester.snapshot()
            assert trips == [1] * 10, (ports, trips)
            for port in ports:      # sending throughout
                assert after["ports"][port]["tx_frames"] > before["ports"][port]["tx_frames"] and tester.busy(port)
    finally:
        for port in (0, 1):
            tester.stop(port)


@pytest.mark.parametrize("proto,size", [("ipv4", 64), ("ipv6", 1518), ("eth", 9000)])
def test_latency_through_default_switch(tester, proto, size):
    """Store-and-forward: latency = processing + 8 ns/byte * size + cables, exact to the tick."""
    cable_in, cable_out = 12.5, 37.0
    tester.dut_set("ab", cable_in_ns=cable_in, cable_out_ns=cable_out)
    s = run(tester, 0, Stream(proto=proto, size=size, count=200))
    rx, tx = s["ports"][1], s["ports"][0]
    expected_ticks = math.ceil((cable_in + store_and_forward_ns(size) + cable_out) / TICK_NS)
    lat = Tester.latency_summary(rx)
    assert tx["tx_frames"] == 200 and rx["test_frames"] == 200 and rx["seq_received"] == 200
    assert rx["seq_lost"] == 0 and rx["foreign"] == 0 and rx["fcs_errors"] == 0
    assert lat["min"] == lat["max"] == expected_ticks * TICK_NS, (lat, expected_ticks)
    model = tester.dut_get("ab")
    assert model["frames_in"] >= 200


def test_calibration_removes_cables(tester):
    tester.dut_set("ab", cable_in_ns=24.0, cable_out_ns=16.0)
    tester.set_calibration(0, [24.0, 16.0])  # port 0's cable into the switch, port 1's out of it
    s = run(tester, 0, Stream(proto="ipv4", size=128, count=50))
    lat = Tester.latency_summary(s["ports"][1])
    assert lat["min"] == lat["max"] == store_and_forward_ns(128)


def test_reverse_path_and_cut_through(tester):
    tester.dut_set("ba", cut_through=True, latency_ns=400)
    s = run(tester, 1, Stream(proto="ipv4", size=1024, count=100))
    lat = Tester.latency_summary(s["ports"][0])
    assert s["ports"][0]["test_frames"] == 100
    assert lat["min"] == lat["max"] == 400, "cut-through latency does not grow with size"


def test_bottleneck_drops_are_exact(tester):
    """500 Mb/s egress and a 16 KiB buffer at line rate: the tracker's losses are the model's drops."""
    tester.dut_set("ab", rate_mbps=500, buffer_bytes=16 * 1024)
    count = 3000
    before = tester.dut_get("ab")  # the model's counters run from power-up
    s = run(tester, 0, Stream(proto="ipv4", size=512, count=count))
    rx = s["ports"][1]
    after = tester.dut_get("ab")
    dropped = after["drop_buffer"] - before["drop_buffer"]
    assert dropped > 1000, "a 2:1 bottleneck must drop about half"
    assert rx["test_frames"] == count - dropped == after["frames_out"] - before["frames_out"]
    # after the flush the window is retired; frames lost after the last received one are the tail
    tail = count - (rx["seq_highest_seq"] - rx["seq_first_seq"])
    assert rx["seq_lost"] + tail == dropped
    assert rx["seq_late"] == 0 and rx["seq_duplicate"] == 0
    events = tester.loss_events(1)
    # a 2:1 bottleneck drops every other frame: more runs than the 256-entry event FIFO holds;
    # the ones that did not fit are counted, never garbled
    assert len(events) == 256 and rx["seq_event_dropped"] > 0
    assert all(length >= 1 for _, length in events)
    assert [first for first, _ in events] == sorted(first for first, _ in events)
    # the thesis' way: received frames per second against the line-rate maximum for the size
    window_s = (count * (512 + 20)) * TICK_NS * 1e-9
    assert rx["test_frames"] / window_s < 0.55 * 1e9 / 8 / (512 + 20)


def test_bad_settings_are_refused(tester):
    with pytest.raises(SettingError, match="frame size"):
        tester.configure(0, Stream(proto="ipv6", size=70))
    with pytest.raises(SettingError, match="IFG"):
        tester.configure(0, Stream(ifg=8))
    with pytest.raises(SettingError, match="egress rate"):
        tester.dut_set("ab", rate_mbps=2000)
    # the gateware refuses on its own too, whatever the host sent
    tester.dev.write("port0_cfg_size", 20)
    with pytest.raises(SettingError, match="frame size out of range"):
        tester.start(0)
    assert not tester.busy(0)


def test_a_start_straight_after_a_stop_starts_a_run(tester):
    """A stop ends the run after the frame on the wire and the gap after it, and until then the generator
    ignores a start without a word: stop() waits for that end, so the start straight after it (the
    next write on the link, here inside a 160 us gap) starts a run. A start while a run goes on is
    refused with one line, the run untouched."""
    stream = Stream(proto="ipv4", size=1518, ifg=20_000)
    period = round(stream.frame_period_bytes())     # ticks from one frame's start to the next
    tester.clear()
    tester.configure(0, stream)
    tester.start(0)
    with pytest.raises(SettingError, match="^port 0 is already sending: stop its run first$"):
        tester.start(0)
    assert tester.busy(0)
    tester.stop(0)
    assert not tester.busy(0)
    stopped = tester.snapshot()["ports"][0]["tx_frames"]
    tester.start(0)
    try:
        tester.wait_ticks(3 * period)
        assert tester.busy(0)
        assert tester.snapshot()["ports"][0]["tx_frames"] - stopped >= 2
    finally:
        tester.stop(0)


def arrival_ticks(t: Tester, stream: Stream) -> list[int]:
    """RX ticks of every frame of a stream from port 0 to port 1 (the sample FIFO at every frame)."""
    t.dev.write("port1_cfg_sample_every", 1)
    try:
        run(t, 0, stream)
        return [tick for _, tick, _ in t.samples(1)]
    finally:
        t.dev.write("port1_cfg_sample_every", 0)


@pytest.mark.parametrize("rate_mbps,ppm", [(1000, -100), (1000, -1000), (500, 100), (500, 1000), (300, 0)])
def test_egress_pacing_is_exact(tester, rate_mbps, ppm):
    """A backlogged egress starts frame k at ceil(start + k * (L + 20) * pace) ticks: the fraction of
    the pace is kept (no tick lost per frame), for clocks slow or fast. The pace register has 32
    fraction bits, so any rate is set to 2.3e-10 of itself; over 399 gaps the span is exact."""
    tester.dut_set("ab", rate_mbps=rate_mbps, ppm=ppm)
    pace = tester.dut_registers("ab")["dut_ab_cfg_pace"]
    assert abs(pace / 2**32 * rate_mbps / 1000 * (1 + ppm * 1e-6) - 1) < 1e-9
    size, n = 64, 400
    ticks = arrival_ticks(tester, Stream(proto="eth", size=size, count=n))
    assert len(ticks) == n
    assert ticks[-1] - ticks[0] == math.ceil((n - 1) * (size + 20) * pace / 2**32)
    gaps = {b - a for a, b in zip(ticks, ticks[1:])}
    assert gaps <= {math.floor((size + 20) * pace / 2**32), math.ceil((size + 20) * pace / 2**32)}


@pytest.mark.parametrize("size", [64, 1518])
def test_second_hop_adds_its_own_store_and_forward(tester, size):
    """Port 0 -> 1 through two store-and-forward hops (1000 then 300 Mb/s): one frame's latency is
    each hop's delay rounded up to a tick in turn; the per-byte times add (8 + 26.67 ns/B)."""
    tester.dut_set("ab2", enable=True, latency_ns=0, per_byte_ns=80 / 3, rate_mbps=300)
    s = run(tester, 0, Stream(proto="eth", size=size, count=1))
    hop1 = math.ceil(store_and_forward_ns(size) / TICK_NS)
    per_byte2 = tester.dut_registers("ab2")["dut_ab2_cfg_per_byte"] / 2**16     # ticks per byte, as set
    hop2 = max(math.ceil(per_byte2 * size), size + 11)                           # the model's floor: L + 11
    lat = Tester.latency_summary(s["ports"][1])
    assert s["ports"][1]["test_frames"] == 1
    assert lat["min"] == (hop1 + hop2) * TICK_NS


def test_cross_traffic_constant_and_poisson(tester):
    """Cross traffic joins the second hop's egress: it arrives at the set rate (constant: one every
    period, exact to one frame; Poisson: within 4 standard deviations), leaves as foreign frames
    with a good FCS, and every frame is accounted for (in = out + dropped)."""
    tester.dut_set("ab2", enable=True, latency_ns=0, per_byte_ns=0, rate_mbps=300)
    size, mbps = 1518, 100.0
    period = (size + 20) * 1000 / mbps          # ticks between cross frames at 100 Mb/s (line rate)
    for random in (False, True):
        before = tester.dut_get("ab2")            # the model's counters run from power-up; no cross traffic now
        tester.clear()
        tester.dut_set("ab2", cross_mbps=mbps, cross_size=size, cross_random=random)
        t1 = tester.now_ticks(); n1 = tester.dut_get("ab2")["cross_in"]; t2 = tester.now_ticks()
        tester.wait_ticks(400_000)
        t3 = tester.now_ticks(); n2 = tester.dut_get("ab2")["cross_in"]; t4 = tester.now_ticks()
        tester.dut_set("ab2", cross_mbps=0)
        tester.wait_ticks(20_000)                 # the queue drains
        got = n2 - n1
        if random:
            mean = (t3 + t4 - t1 - t2) / 2 / period
            assert abs(got - mean) < 4 * math.sqrt(mean) + (t4 - t3 + t2 - t1) / period, (got, mean)
        else:
            assert (t3 - t2) / period - 1 <= got <= (t4 - t1) / period + 1, (got, t1, t2, t3, t4)
        d = tester.dut_get("ab2")
        rx = tester.snapshot()["ports"][1]
        assert d["cross_in"] == d["cross_out"] + d["cross_drop"] and d["cross_drop"] == 0
        assert rx["foreign"] == rx["rx_frames"] == d["cross_out"] - before["cross_out"] > 0
        assert rx["fcs_errors"] == 0 and rx["runts"] == 0
        assert rx["rx_bytes"] == rx["foreign"] * size


def test_the_twin_serves_one_local_client(twin_link):
    """The twin listens on 127.0.0.1 only; while a client is connected, others (a port scan, a second
    tool) are closed at once and the first keeps working; a client may come and go."""
    url, csr = twin_link
    port = int(url.rsplit(":", 1)[1])
    listening = [line.split()[1] for line in open("/proc/net/tcp").read().splitlines()[1:]
                 if line.split()[3] == "0A" and int(line.split()[1].split(":")[1], 16) == port]
    assert listening == [f"0100007F:{port:04X}"], listening
    build_id = json.loads(csr.read_text())["constants"]["fpgatest_build_id"]
    with Device(url, csr) as dev:
        for _ in range(5):
            socket.create_connection(("127.0.0.1", port), timeout=2).close()   # connect and close
        other = socket.create_connection(("127.0.0.1", port), timeout=2)
        other.settimeout(5)
        other.sendall(b"\x02\x01\x00\x00\x00\x00")                       # half a command
        try:
            closed = other.recv(1) == b""
        except ConnectionResetError:       # closed with our bytes unread: a reset
            closed = True
        assert closed, "a second client is closed"
        other.close()
        assert all(dev.read("tester_build_id") == build_id for _ in range(3))
    for _ in range(3):                                                      # one after the other
        with Device(url, csr) as dev:
            assert dev.read("tester_build_id") == build_id
    assert not (csr.parent / f"run-{port}" / "sim.vcd").exists()


def test_a_reply_comes_whole(twin_link):
    """The twin's bridge sends a reply in one go, not one TCP segment per byte: a burst read of a port's
    counter window (50 words, 200 bytes) comes in a handful of segments (the kernel's count, TCP_INFO's
    tcpi_segs_in, which counts the ACK of our request too), the words as Device reads them."""
    url, csr = twin_link
    port = int(url.rsplit(":", 1)[1])
    with Device(url, csr) as dev:
        addr, words = dev.map.memories["port0_counters"], 2 * len(dev.map.counters())
        expect = dev.bus.read(addr, words)
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def segments_in() -> int:   # struct tcp_info: tcpi_segs_in, a u32 at byte 140 (Linux 4.2 on)
            return int.from_bytes(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 232)[140:144], "little")

        before = segments_in()
        sock.sendall(bytes([CMD_READ_BURST_INCR, words]) + (addr // 4).to_bytes(4, "big"))
        reply = b""
        while len(reply) < 4 * words:
            reply += sock.recv(4096)
        assert [int.from_bytes(reply[4 * i:4 * i + 4], "big") for i in range(words)] == expect
        assert segments_in() - before <= 4, "one segment per byte would be 200"


def test_a_twin_build_is_one_line_and_a_log(monkeypatch, tmp_path, capfd):
    """Building the twin shows one line; LiteX's and Verilator's output go to build.log, which a
    failure names (here a build that prints 200 lines and fails)."""
    from boards import twin

    def noisy_build(build_dir, variant="board", etherbone=False):
        for i in range(200):
            print(f"litex says {i}")
        print("verilator: %Error: something", file=sys.stderr)
        raise RuntimeError("twin: Verilator build failed")

    monkeypatch.setattr(twin, "up_to_date", lambda *args, **kwargs: False)
    monkeypatch.setattr(twin, "build", noisy_build)
    with pytest.raises(RuntimeError, match=f"see {tmp_path / 'build.log'}"):
        twin.ensure_built(tmp_path)
    out, err = capfd.readouterr()
    assert out == "" and err.count("\n") == 1 and "building the twin" in err
    log = (tmp_path / "build.log").read_text()
    assert "litex says 199" in log and "%Error: something" in log
    print("stdout is back")
    assert capfd.readouterr().out == "stdout is back\n"


def test_two_that_find_the_twin_out_of_date_build_it_once(monkeypatch, tmp_path, capfd):
    """Two fpgatest commands (or two test workers) that find the twin out of date at once: the first
    builds, the second waits on the build's lock and then finds the first's build."""
    from boards import twin

    inside, builds = threading.Event(), []

    def slow_build(build_dir, variant="board", etherbone=False):
        builds.append(build_dir)
        inside.set()
        time.sleep(1.0)                 # the second caller arrives meanwhile
        (build_dir / "twin.built").write_text(json.dumps({"build_id": 1, "flow": "twin", "cpu": twin.cpu(),
                                                          "variant": variant}))

    monkeypatch.setattr(twin, "build", slow_build)
    errors = []

    def call():
        try:
            twin.ensure_built(tmp_path)
        except Exception as err:        # noqa: BLE001 (reported below)
            errors.append(err)

    first = threading.Thread(target=call)
    first.start()
    assert inside.wait(10)
    second = threading.Thread(target=call)
    second.start()
    first.join(30)
    second.join(30)
    assert not errors and builds == [tmp_path]
    assert twin.up_to_date(tmp_path)
    assert capfd.readouterr().err.count("building the twin") == 1


def test_a_build_for_another_cpu_is_built_again(tmp_path):
    """The twin is compiled for the CPU it runs on (-march=native): a build from another machine's
    checkout is out of date here, one from this CPU with the same sources is not."""
    from boards import twin

    marker = tmp_path / "twin.built"
    board = {"build_id": 1, "flow": "twin", "variant": "board"}
    marker.write_text(json.dumps({**board, "cpu": twin.cpu()}))
    assert twin.up_to_date(tmp_path)
    marker.write_text(json.dumps({**board, "cpu": "a CPU this is not"}))
    assert not twin.up_to_date(tmp_path)
    # the same model name with another instruction set is another CPU (one "AMD EPYC" has AVX-512)
    info = "processor\t: 0\nmodel name\t: AMD EPYC\nflags\t\t: fpu sse2 avx2{}\n\nprocessor\t: 1\n"
    assert twin.cpu(info.format("")) != twin.cpu(info.format(" avx512f")) != twin.cpu()
    assert twin.cpu(info.format(" avx512f")).startswith("AMD EPYC")
    # nor is the board's twin the full one (boards.twin --full), or the other way
    marker.write_text(json.dumps({**board, "cpu": twin.cpu()}))
    assert twin.up_to_date(tmp_path) and not twin.up_to_date(tmp_path, "full")
    marker.write_text(json.dumps({**board, "cpu": twin.cpu(), "variant": "full"}))
    assert twin.up_to_date(tmp_path, "full") and not twin.up_to_date(tmp_path)
    # nor a build without Etherbone one with it (boards.twin --etherbone, a full twin), or the other way
    marker.write_text(json.dumps({**board, "cpu": twin.cpu(), "variant": "full", "etherbone": False}))
    assert twin.up_to_date(tmp_path, "full") and not twin.up_to_date(tmp_path, etherbone=True)
    marker.write_text(json.dumps({**board, "cpu": twin.cpu(), "variant": "full", "etherbone": True}))
    assert twin.up_to_date(tmp_path, etherbone=True) and not twin.up_to_date(tmp_path, "full")
    # a marker from before the variants (the full twin, unnamed) is built again
    marker.write_text(json.dumps({"build_id": 1, "flow": "twin", "cpu": twin.cpu()}))
    assert not twin.up_to_date(tmp_path) and not twin.up_to_date(tmp_path, "full")


def test_no_step_is_skipped_that_the_model_acts_on(board_twin_link, tmp_path):
    """The main loop (sim/twin/core/sim.c) takes no time step for a falling edge of a RISING_ONLY clock:
    sound while nothing in the model acts on that edge. The twin's model acts on sys_clk at its rising
    edge only (the build checked it), and a model that acted on its falling edge too is refused: the
    check reads Verilator's own trigger list, here with one trigger turned to the falling edge."""
    from boards import twin

    obj_dir = twin.BUILD_DIR / "gateware" / "obj_dir"
    twin.check_rising_only(obj_dir)
    source = next(p for p in sorted(obj_dir.glob("Vsim___024root*.cpp")) if "@(posedge sys_clk)" in p.read_text())
    (tmp_path / source.name).write_text(source.read_text().replace("@(posedge sys_clk)", "@(negedge sys_clk)"))
    with pytest.raises(RuntimeError, match=r"acts on sys_clk at @\(negedge sys_clk\)"):
        twin.check_rising_only(tmp_path)
