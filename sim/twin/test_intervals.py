# SPDX-License-Identifier: BSD-2-Clause
"""The interval recorder (litex_soc/intervals.py) in the twin, driven by the host over its real transport:
edges exactly N ticks apart, every record consistent within itself, the histogram left to add up
after the edge asked for, a full ring counted as lost records and drained in two round trips, a period
below the minimum refused."""

import pytest

from bench.twin_speed import round_trips
from common.switch_state import store_and_forward_ns

from fpgatest.tester import Stream

SIZE = 64
FRAME_TICKS = SIZE + 20              # a 64-byte frame at minimum IFG: 84 bytes of 8 ns on the wire
SWITCH_LATENCY_NS = store_and_forward_ns(SIZE)  # the fixture's switch path: processing + store-and-forward
LATENCY_TICKS = SWITCH_LATENCY_NS * 2 // 8      # port 0 to port 1, as the records show it: 378 ticks


def record_run(t, period: int, count: int, until: int | None = None) -> tuple[list[dict], dict]:
    """A line-rate stream from port 0; the recorder over it; every record, read as it comes."""
    ring = t.intervals()
    t.clear()
    t.configure(0, Stream(proto="ipv4", size=SIZE))
    t.start(0)
    # the path full before the first edge (378 ticks: 4.5 frame times): every interval then begins and ends
    # with the same frames between the ports, to one. An edge sooner (the writes can reach a loaded
    # twin within a few hundred ticks) finds the path filling, and its interval receives fewer.
    t.wait_ticks(2 * LATENCY_TICKS)
    ring.start(period, count)
    if until is not None:
        ring.keep_histogram_after(until)
    records = []
    try:
        while len(records) < count + 1:
            got, status = ring.drain()
            records += got
            assert status["lost"] == 0, status
            if not got:
                t.dev.read("tester_build_id")  # a round trip: the twin runs on meanwhile
    finally:
        ring.stop()
        t.stop(0)
    return records, ring.status()


def test_edges_are_exactly_the_period_apart_and_each_record_is_one_edge(tester):
    period, count = 12_345, 8
    records, status = record_run(tester, period, count)
    assert status == {"written": count + 1, "lost": 0, "running": False}
    assert [r["index"] for r in records] == list(range(count + 1))
    whole, extra = divmod(period, FRAME_TICKS)
    for a, b in zip(records, records[1:]):
        assert b["time"] - a["time"] == period
        sent = b["port0_tx_frames"] - a["port0_tx_frames"]
        got = b["port1_test_frames"] - a["port1_test_frames"]
        # a stream with one frame every 84 ticks puts 146 or 147 SFDs in 12345 ticks, never fewer or more
        assert sent in (whole, whole + 1) and got in (whole, whole + 1), (sent, got)
        assert b["port0_tx_bytes"] - a["port0_tx_bytes"] == SIZE * sent
        # one edge for every count: each test frame's latency is in the same interval as the frame
        assert b["port1_lat_count"] - a["port1_lat_count"] == got
        assert b["port1_seq_received"] - a["port1_seq_received"] == got
        # statistics are the interval's own (cleared at each edge): one latency, exact to the tick
        assert b["port1_lat_min"] == b["port1_lat_max"] == SWITCH_LATENCY_NS * 2
        assert b["port1_lat_sum"] == got * SWITCH_LATENCY_NS * 2
        assert b["port1_jit_sum"] == b["port1_jit_max"] == 0
        assert b["flags"] == 1                  # hist_until at its reset value: every edge clears
    # over the whole run the frames sent match the time to one frame
    total = records[-1]["port0_tx_frames"] - records[0]["port0_tx_frames"]
    assert abs(total - count * period / FRAME_TICKS) <= 1


def test_the_histogram_adds_up_after_the_edge_asked_for(tester):
    period, count, until = 12_345, 6, 3
    tester.set_histogram(1, SWITCH_LATENCY_NS - 16, SWITCH_LATENCY_NS + 16)
    records, _ = record_run(tester, period, count, until=until)
    # keep_histogram_after reached the twin long before edge 3 (a 12345-tick interval is ~16 ms of
    # wall time, the write one round trip)
    assert [r["flags"] for r in records] == [1] * (until + 1) + [0] * (count - until)
    bins = tester.histogram(1)     # as the last edge latched it: the frames after edge `until`
    binned = records[-1]["port1_lat_count"] - records[until]["port1_lat_count"]
    outside = (records[-1]["port1_hist_below"] - records[until]["port1_hist_below"]
               + records[-1]["port1_hist_above"] - records[until]["port1_hist_above"])
    assert outside == 0 and sum(bins) == binned > 0
    assert sum(1 for b in bins if b) == 1   # one latency, one bin


def test_a_full_ring_loses_whole_records_and_counts_them(tester):
    ring = tester.intervals()
    count = ring.depth + 5
    tester.clear()
    ring.start(ring.period_min, count)
    while ring.status()["running"]:
        tester.dev.read("tester_build_id")
    tester.wait_ticks(2 * ring.period_min)          # the last edge's record has been tried
    (records, status), trips = round_trips(tester.dev, ring.drain)
    # the first `depth` records were kept, every later one lost: none was written over
    assert status == {"written": ring.depth, "lost": count + 1 - ring.depth, "running": False}
    # the status, then every record in one request (a record a request before 2026-12-03: 17)
    assert trips == 2
    assert [r["index"] for r in records] == list(range(ring.depth))
    assert all(b["time"] - a["time"] == ring.period_min for a, b in zip(records, records[1:]))


def test_a_period_below_the_minimum_starts_nothing(tester):
    ring = tester.intervals()
    with pytest.raises(ValueError, match=f"takes 32.768 us to 34.4 s \\({ring.period_min} to"):
        ring.start(ring.period_min - 1, 1)
    # the gateware refuses it too, if written directly: no edge, no record, the last run's counts kept
    before = ring.status()
    tester.dev.write("tester_interval_period", ring.period_min - 1)
    tester.wait_ticks(4 * ring.period_min)
    assert ring.status() == {**before, "running": False}
