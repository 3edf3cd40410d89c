# SPDX-License-Identifier: BSD-2-Clause
"""The twin with its device model on clocks of its own (boards/twin.py --dut-ppm): path ab (port 0 to
port 1) 100 ppm fast, path ba 100 ppm slow (boards.twin.DRIFT_PPM), so each port receives in a clock of
its own frequency as from a real device, and every RX crossing (the time base in, the frame FIFO out)
runs against a drifting clock. Counts stay exact; latencies move by what a real device with such a
clock would do to them, which the tester measures: a slow device's egress queue grows by exactly its
ppm of the bytes offered."""

import json
import math

import pytest

from boards import twin
from boards.twin import DRIFT_PPM
from common.switch_state import PER_BYTE_NS, store_and_forward_ns
from fpgatest.cli import main
from fpgatest.tester import TICK_NS, Stream, Tester

from test_intervals import FRAME_TICKS, SIZE, record_run

START = 6                  # sim/models/gmii_elastic.v: its delay is START + 6 to START + 7 of its clocks


# (sender, receiver, the model's clock the frames leave in, MAC FIFOs on the way: port 0 -> ab; port 1
# -> ab (the echo responder's input) -> ba)
DIRECTIONS = [(0, 1, 0, 1), (1, 0, 1, 2)]


@pytest.mark.parametrize("size,count", [(64, 3000), (1518, 3000), (9000, 300)])
def test_line_rate_through_a_device_on_clocks_of_its_own(drift_tester, size, count):
    """Minimum IFG both ways. Every frame counted once, none lost or damaged. The path's delays are in
    its own clock's ticks (shorter when it is fast), and the MAC FIFOs add theirs: START + 6 to
    START + 7 clocks each from the edge a byte is driven on (sim/models/test_gmii_elastic.py), START + 5
    to START + 7 against the twin's stamps, and a tick either way for the stamps' crossing (where in
    its phases the drift is when a run starts depends on how long the twin has run). Into the fast
    clock (ab) nothing queues: every latency within one tick of another. The slow one (ba) carries
    1 - 100 ppm of line rate, so its queue grows by the difference: the last frame's latency exceeds
    the first's by (count - 1) * (L + 20) bytes * 8 ns * (1 / (1 + ppm) - 1), to the two stamps' tick."""
    t = drift_tester
    realised = twin.realised_ppm(DRIFT_PPM)
    for tx, rx, clock, fifos in DIRECTIONS:
        t.clear()
        t.configure(tx, Stream(proto="ipv4", size=size, count=count))
        t.start(tx)
        t.wait_idle(tx)
        t.wait_ticks(20_000)            # the slow path's queue drains (its growth is < 4 us)
        t.flush(rx)
        s = t.snapshot()
        sent, got = s["ports"][tx], s["ports"][rx]
        where = (tx, rx, size)
        assert sent["tx_frames"] == got["rx_frames"] == got["test_frames"] == got["seq_received"] == count, where
        assert got["seq_lost"] == got["seq_late"] == got["fcs_errors"] == got["foreign"] == 0, (where, got)
        lat = Tester.latency_summary(got)
        # the path's delays count the device's clock ticks: 72 us for a 9000-byte frame is 7.2 ns
        # less at +100 ppm
        ppm = realised[clock]
        nominal = store_and_forward_ns(size) / (1 + ppm * 1e-6)
        fifo_ticks = ((START + 5) * fifos - 1, (START + 7) * fifos + 1)
        assert fifo_ticks[0] * TICK_NS <= lat["min"] - nominal <= fifo_ticks[1] * TICK_NS, (where, lat)
        if ppm > 0:
            assert lat["max"] - lat["min"] <= TICK_NS, (where, lat)
        else:
            growth = (count - 1) * (size + 20) * TICK_NS * (1 / (1 + ppm * 1e-6) - 1)
            assert abs(lat["max"] - lat["min"] - growth) <= 2 * TICK_NS, (where, lat, growth)


def test_every_count_of_an_interval_from_one_edge_while_the_rx_clock_drifts(drift_tester):
    """The interval recorder against port 1's RX clock 100 ppm fast: edges exactly the period apart
    (the tester clock's), and in every record the frames received, their latencies and the tracker's
    numbers are the same frames, whatever phase the drifting clock had at the edge."""
    period, count = 12_345, 8
    records, status = record_run(drift_tester, period, count)
    assert status == {"written": count + 1, "lost": 0, "running": False}
    whole = period // FRAME_TICKS
    for a, b in zip(records, records[1:]):
        assert b["time"] - a["time"] == period
        sent = b["port0_tx_frames"] - a["port0_tx_frames"]
        got = b["port1_test_frames"] - a["port1_test_frames"]
        assert sent in (whole, whole + 1) and got in (whole, whole + 1), (sent, got)
        assert b["port1_lat_count"] - a["port1_lat_count"] == got
        assert b["port1_seq_received"] - a["port1_seq_received"] == got
        assert b["port1_rx_frames"] - a["port1_rx_frames"] == got
        # half-nanosecond units: within one tick, the device being faster than the tester
        assert 0 <= b["port1_lat_max"] - b["port1_lat_min"] <= 2 * TICK_NS, b
        assert b["port1_lat_min"] >= 2 * store_and_forward_ns(SIZE), b


@pytest.mark.parametrize("ppm,linux,message", [
    ((250.0, 0.0), None, "within +-200 ppm"),
    ((float("nan"), 0.0), None, "within +-200 ppm"),
    ((10.0, -10.0), "router", "with the kernel as the device under test"),
])
def test_device_clocks_the_model_cannot_run_are_refused(capsys, ppm, linux, message):
    """One line, exit 2, before anything is built or started."""
    assert twin.serve(None, twin.FULL_BUILD_DIR, linux, for_tool=True, variant="full", dut_ppm=ppm) == 2
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1 and message in json.loads(out[0])["error"], out


def test_realised_offsets_are_the_asked_ones():
    """The simulator's half periods are whole femtoseconds (0.25 ppm steps of a 4 ns half period): an
    offset comes out within half a step of the one asked for."""
    for asked in (*DRIFT_PPM, 0.1, -37.3, 199.9):
        got, _ = twin.realised_ppm((asked, 0.0))
        assert math.isclose(asked, got, abs_tol=0.125), (asked, got)


def test_sweep_on_the_drifting_twin(tmp_path):
    """`fpgatest sweep --url twin:drift` (the launcher's --dut-ppm): the fit recovers the device's own
    per-byte time, 8 ns of its ticks at +100 ppm (7.9992 ns), within the stamps' resolution, and the
    latencies spread over the tick that a device clock of its own puts on them."""
    out = tmp_path / "sweep"
    assert main(["sweep", "--url", "twin:drift", "--calibration", "none", "--proto", "ipv4", "--sizes", "64,1518",
                 "--duration", "0.002", "--interval", "0.001", "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    fit = summary["fit"]
    true_slope = PER_BYTE_NS / (1 + twin.realised_ppm(DRIFT_PPM)[0] * 1e-6)
    assert abs(fit["slope_ns_per_byte"] - true_slope) <= fit["slope_resolution"], fit
    for record in summary["sizes"]:
        assert record["frames"]["tx"] == record["frames"]["rx"] > 0 and record["frames"]["lost"] == 0
        assert record["latency_ns"]["max"] - record["latency_ns"]["min"] == TICK_NS, record["latency_ns"]
