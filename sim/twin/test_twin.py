# SPDX-License-Identifier: BSD-2-Clause
"""The digital twin over TCP + UARTBone: identity, streams through the switch model, exact latency and drops."""

import json
import math

import pytest

from fpgatest.driver import Device, MapError
from fpgatest.tester import TICK_NS, SettingError, Stream, Tester


@pytest.fixture()
def tester(twin_link):
    url, csr = twin_link
    with Device(url, csr) as dev:
        t = Tester(dev)
        # a known state: default switch on both paths, no calibration, counters clear
        for path in t.dut_paths():
            t.dut_set(path, latency_ns=1000, per_byte_ns=8, rate_mbps=1000, buffer_bytes=128 * 1024,
                      max_frame=9216, cable_in_ns=0, cable_out_ns=0, cut_through=False, dither=False)
        t.set_calibration(0, [0, 0])
        yield t


def run(t: Tester, port: int, stream: Stream) -> dict:
    t.clear()
    t.configure(port, stream)
    t.start(port)
    t.wait_idle(port)
    t.wait_ticks(2000)  # let the switch drain
    t.flush(1 - port)
    return t.snapshot()


def test_identity(twin_link, tmp_path):
    url, csr = twin_link
    with Device(url, csr) as dev:
        assert dev.read("tester_build_id") == json.loads(csr.read_text())["constants"]["fpgatest_build_id"]
        assert dev.read("tester_n_ports") == 2
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


@pytest.mark.parametrize("proto,size", [("ipv4", 64), ("ipv6", 1518), ("eth", 9000)])
def test_latency_through_default_switch(tester, proto, size):
    """Store-and-forward: latency = processing + 8 ns/byte * size + cables, exact to the tick."""
    cable_in, cable_out = 12.5, 37.0
    tester.dut_set("ab", cable_in_ns=cable_in, cable_out_ns=cable_out)
    s = run(tester, 0, Stream(proto=proto, size=size, count=200))
    rx, tx = s["ports"][1], s["ports"][0]
    expected_ticks = math.ceil((cable_in + 1000 + 8 * size + cable_out) / TICK_NS)
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
    assert lat["min"] == lat["max"] == 1000 + 8 * 128


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
