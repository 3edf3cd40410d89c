# SPDX-License-Identifier: BSD-2-Clause
"""fpgatest against the twin over TCP + UARTBone: fits recover the switch model, calibration, drops, bad input."""

import csv
import json
import os
import signal
import subprocess
import sys

import pytest

from common.switch_state import KNOWN_PATH
from fpgatest.cli import main, parse_dut
from fpgatest.driver import Device
from fpgatest.measure import SweepPlan, calibrate, histogram_range, sweep
from fpgatest.output import ResultsDir, markdown_table
from fpgatest.tester import Tester, lat_ns
from models.ref_switch import drops, period_bytes

DEFAULT_SWITCH = [f"{key}={int(value)}" for key, value in KNOWN_PATH.items()]     # as --dut KEY=VALUE


def cli(twin_link, *args, dut=()):
    url, csr = twin_link
    argv = [args[0], "--url", url, "--csr", str(csr), "--calibration", "none"]
    for item in [*DEFAULT_SWITCH, *dut]:
        argv += ["--dut", item]
    return main([*argv, *args[1:]])


def _samples_of(path, size):
    from fpgatest.output import load

    return [r for r in load(path)[1] if r["size_bytes"] == size]


def summary_of(path):
    return json.loads((path / "summary.json").read_text())


@pytest.mark.parametrize("latency_ns,per_byte_ns,cut_through", [(2000.0, 8.0, 0), (1500.0, 9.51, 0), (600.0, 0.0, 1)])
def test_sweep_fit_recovers_switch(twin_link, tmp_path, latency_ns, per_byte_ns, cut_through):
    """Slope and intercept of the latency-vs-size fit are the model's per-byte time and latency.

    Latency is counted in 8 ns ticks and the model rounds each frame's exit up to a tick; at line
    rate a frame cannot leave before the one ahead of it, so the latest arrival phase sets the pace
    and sizes do not average their rounding out. Tolerance: slope within 0.01 ns/B of the model (and
    within 4 standard errors), intercept within 2 ticks (16 ns) of the model's latency.
    """
    out = tmp_path / "sweep"
    dut = [f"latency_ns={latency_ns}", f"per_byte_ns={per_byte_ns}", f"cut_through={cut_through}", "dither=1"]
    # ten intervals asked: percentiles need three (host-timed intervals on the twin overran 2.6-fold
    # under load, giving four)
    assert cli(twin_link, "sweep", "--sizes", "64,256,512,1024,1518", "--duration", "0.02", "--interval", "0.002",
               "--out", str(out), dut=dut) == 0
    s = summary_of(out)
    fit = s["fit"]
    assert abs(fit["slope_ns_per_byte"] - per_byte_ns) <= 0.01
    assert abs(fit["slope_ns_per_byte"] - per_byte_ns) <= max(4 * fit["slope_se"], 0.01)
    assert abs(fit["intercept_ns"] - latency_ns) <= 16.0
    assert fit["mode"] == ("cut-through" if cut_through else "store-and-forward")
    # the reported uncertainty covers the model: two standard errors plus the stamp-resolution bound
    # (with dither the model's mean reads one tick, 8 ns, above its latency: docs of dut_switch_path)
    assert fit["points"] == 5 and fit["slope_se"] is not None and fit["intercept_resolution_ns"] == 4.0
    assert abs(fit["slope_ns_per_byte"] - per_byte_ns) <= 2 * fit["slope_se"] + fit["slope_resolution"]
    assert abs(fit["intercept_ns"] - (latency_ns + 8.0)) <= 2 * fit["intercept_se"] + fit["intercept_resolution_ns"]
    # RFC 1242: the table's latency column is LIFO for store-and-forward, FIFO otherwise, never negative
    rows = [line.split("|") for line in markdown_table(s).split("\n\n")[0].splitlines() if line.startswith("| ")
            and line.split("|")[1].strip().isdigit()]
    assert rows and all(float(r[13]) >= 0 for r in rows), rows
    # received against the line-rate maximum: printed with its resolution, one frame in the window
    assert all(len(r[8].split("±")) == 2 for r in rows), rows
    if not cut_through and per_byte_ns == 8.0:
        assert abs(fit["bandwidth_gbps"] - 1.0) < 0.002
    for size in s["sizes"]:
        assert size["frames"]["lost"] == 0 and size["frames"]["tx"] == size["frames"]["rx"] > 0
        # LIFO (RFC 1242): FIFO less the frame's time on the wire, 8 ns a byte at 1 Gb/s (not the switch's per-byte)
        assert size["latency_lifo_ns"]["mean"] == pytest.approx(size["latency_ns"]["mean"] - 8 * size["size_bytes"])
        samples = _samples_of(out, size["size_bytes"])
        period_s = 1 / size["theoretical_fps"]
        # the rate's window: the intervals after the first, which begins before the first frame is through
        rest = samples[1:]
        window_s, frames = sum(r["duration_s"] for r in rest), sum(r["rx_frames"] for r in rest)
        assert size["rate_from_interval"] == 1 and size["rx_fps"] == pytest.approx(frames / window_s, rel=1e-12)
        assert size["drop_rate_vs_theoretical_resolution"] == pytest.approx(period_s / window_s, rel=1e-9)
        if per_byte_ns in (0.0, 8.0):
            # an egress at line rate forwards at line rate: the intervals hold the frames of their exact
            # length, to one frame and the tick an exit may be rounded by, and the figure says so
            assert abs(frames - window_s / period_s) <= 1 + 8e-9 / period_s, (size["size_bytes"], frames, window_s)
            assert size["drop_rate_vs_theoretical"] <= (
                size["drop_rate_vs_theoretical_resolution"] * (1 + 8e-9 / period_s)), size["size_bytes"]
        # percentiles over the intervals after the bins were set from the first: every frame of those
        # intervals binned once (the recorder's edges cleared the bins until then), in order, in [min, max]
        h, pct = size["histogram"], size["percentiles"]
        assert len(samples) == 10 and 1 <= h["from_interval"] < len(samples)
        assert sum(h["counts"]) + h["below"] + h["above"] == h["frames"] > 0
        assert h["frames"] == sum(r["lat_count"] for r in samples[h["from_interval"]:])
        values = [q["value_ns"] for q in pct]
        assert None not in values and values == sorted(values)
        assert size["latency_ns"]["min"] <= values[0] and values[-1] <= size["latency_ns"]["max"] + 4.0
    for name in ("samples.csv", "summary.json", "latency_vs_size.png", "drop_rate.png", "timeseries_64.png"):
        assert (out / name).exists()
    # the report command re-analyses the directory without hardware and finds the same fit
    summary_before = summary_of(out)
    assert main(["report", str(out)]) == 0
    assert summary_of(out)["fit"]["slope_ns_per_byte"] == pytest.approx(summary_before["fit"]["slope_ns_per_byte"])


def test_bottleneck_drops_exact_and_thesis_rate(twin_link, tmp_path):
    url, csr = twin_link
    with Device(url, csr) as dev:
        t = Tester(dev)
        t.dut_set("ab", **parse_dut(DEFAULT_SWITCH))
        t.dut_set("ab", rate_mbps=500, buffer_bytes=32 * 1024)
        t.set_calibration(0, [0, 0])
        before = t.dut_get("ab")
        plan = SweepPlan("ipv4", [512, 1518], 12, None, 0.004, 0.002)
        summary = sweep(t, plan, ResultsDir(tmp_path / "b", {}))
        after = t.dut_get("ab")
    dropped = after["drop_buffer"] - before["drop_buffer"]
    lost = sum(s["frames"]["lost"] for s in summary["sizes"])
    assert dropped > 0 and lost == dropped, "the tracker's exact losses are the switch's drops"
    for s in summary["sizes"]:
        assert s["frames"]["tx"] - s["frames"]["rx"] == s["frames"]["lost"]
        assert 0.40 < s["drop_rate"] < 0.55
        # received frames/s against the line-rate maximum: half gets through a 500 Mb/s egress
        assert 0.40 < s["drop_rate_vs_theoretical"] < 0.55
        # the categories testers name: a tail-drop queue drops, never reorders or duplicates; once
        # full it drops every other frame, so there are far more loss runs than the record keeps
        seq = s["sequence"]
        assert seq["dropped"] == s["frames"]["lost"] and seq["in_order"] == s["frames"]["rx"]
        assert seq["reordered"] == seq["late"] == seq["duplicate"] == 0
        assert seq["loss_runs"] == {"count": None, "longest": None, "read": 64, "complete": False}
        # the first loss is the frame the reference model of the queue drops first
        first = drops(s["size_bytes"], period_bytes(s["size_bytes"], 100.0), 5000, buffer_bytes=32 * 1024, pace=2.0)[0]
        assert s["loss_events"][0][0] == first and len(s["loss_events"]) == 64


def _sweep_into_a_filling_queue(twin_link, out, duration_s: float):
    """64-byte frames at line rate into the switch model's 900 Mb/s egress for duration_s of tester
    time in 2 ms intervals: the size's record, the frames the switch dropped, the interval samples."""
    url, csr = twin_link
    with Device(url, csr) as dev:
        t = Tester(dev)
        t.dut_set("ab", **parse_dut(DEFAULT_SWITCH))
        t.dut_set("ab", rate_mbps=900)
        t.set_calibration(0, [0, 0])
        before = t.dut_get("ab")["drop_buffer"]
        summary = sweep(t, SweepPlan("ipv4", [64], 12, None, duration_s, 0.002), ResultsDir(out, {}))
        dropped = t.dut_get("ab")["drop_buffer"] - before
    return summary["sizes"][0], dropped, _samples_of(out, 64)


def test_percentiles_follow_a_filling_queue(twin_link, tmp_path):
    """A line-rate stream of 64-byte frames into a 900 Mb/s egress: the queue fills over about seven
    2 ms intervals until it holds the switch model's 1024 frames, then tail-drops. The histogram's
    bins, set over the first interval, follow the latency while more than 0.1 % of an interval falls
    outside them, so the percentiles describe the full queue: every frame from the last setting on is
    binned, at most 0.1 % of them outside the bins (the first interval's range alone would leave
    nearly all of them above), in [min, max]; and once the queue is full the bins narrow to it (the
    bins set while it filled were far wider). And the full queue drops single frames, each counted by
    the switch: the tester's losses are its drops (a model that overwrote its own queue once lost
    1024 frames at a time, uncounted)."""
    size, dropped, samples = _sweep_into_a_filling_queue(twin_link, tmp_path / "fill", 0.04)
    assert size["frames"]["lost"] == dropped > 0
    assert size["sequence"]["loss_runs"]["longest"] in (1, None)
    h, pct = size["histogram"], size["percentiles"]
    first, last = samples[0], samples[-1]
    assert last["latency_min_ns"] > 2 * first["latency_max_ns"], "the queue filled during the run"
    assert 2 <= h["from_interval"] < len(samples) - 2
    binned = samples[h["from_interval"]:]
    assert h["frames"] == sum(r["lat_count"] for r in binned) > 0
    assert sum(h["counts"]) + h["below"] + h["above"] == h["frames"]
    assert h["below"] + h["above"] <= 0.001 * h["frames"], h
    values = [q["value_ns"] for q in pct]
    assert None not in values and values == sorted(values)
    assert min(r["latency_min_ns"] for r in binned) <= values[0] and values[-1] <= max(r["latency_max_ns"] for r in binned)
    # the bins narrowed to the full queue: at most one power of two wider than the binned frames' range
    # needs (with the bins set while the queue filled, the percentiles were +-304 ns)
    _, shift = Tester.histogram_bins(*histogram_range(binned))
    assert h["bin_ns"] <= 2 * lat_ns(1 << shift), (h, shift)


def test_percentiles_of_a_run_that_ends_while_the_queue_fills(twin_link, tmp_path):
    """The filling queue above in a run of six 2 ms intervals: the latency leaves the first interval's
    bins in the last intervals, where setting them again would have them cleared by the run's last
    edges and bin nothing. The bins set first stay instead, and the percentiles describe the intervals
    binned over them, the frames outside the bins counted as such (a run whose bins moved in its last
    intervals had no percentiles)."""
    size, _, samples = _sweep_into_a_filling_queue(twin_link, tmp_path / "short", 0.012)
    assert len(samples) == 6
    h, pct = size["histogram"], size["percentiles"]
    assert h is not None and pct is not None
    assert 2 <= h["from_interval"] <= len(samples) - 1
    binned = samples[h["from_interval"]:]
    assert h["frames"] == sum(r["lat_count"] for r in binned) > 0
    assert sum(h["counts"]) + h["below"] + h["above"] == h["frames"]
    # the bins are the first interval's: the queue had filled past them
    assert h["edges_ns"][-1] < binned[0]["latency_max_ns"] and h["above"] > 0.001 * h["frames"]
    assert pct[-1]["value_ns"] is None and pct[-1]["low_ns"] >= h["edges_ns"][-1]     # "> low_ns"
    # a size with latencies and none is named under the tables, not left out of them unsaid
    summary = summary_of(tmp_path / "short")
    assert "No percentiles" not in markdown_table(summary)
    summary["sizes"][0]["percentiles"] = summary["sizes"][0]["histogram"] = None
    assert "No percentiles for 64 B: no interval with latencies was binned" in markdown_table(summary)


def test_calibration_recovers_cable_speed(twin_link):
    """The twin's cables delay 4.72 ns/m behind a 400 ns stand-in for the PHYs; the fit finds both.

    Each frame's exit is rounded up to a tick after a random arrival phase, so the mean reads one
    tick (8 ns) above the true delay: the internal delay is 400 + 8 ns, and cable differences far
    below a tick are resolved by averaging 2000 frames per cable.
    """
    url, csr = twin_link
    with Device(url, csr) as dev:
        t = Tester(dev)
        cal = calibrate(t, [0.2, 1.04, 5.05, 10.04, 15.09, 25.25], frames=2000)
    assert cal["ns_per_m"] == pytest.approx(4.72, abs=0.05)
    assert cal["internal_ns"] == pytest.approx(408.0, abs=2.0)
    assert 0.6 < cal["velocity_factor"] < 0.8


def test_calibrate_command_writes_registers(twin_link, tmp_path):
    out = tmp_path / "cal.json"
    assert cli(twin_link, "calibrate", "--cables", "1,10,20", "--frames", "500", "--port-cables", "2,3",
               "--out", str(out)) == 0
    cal = json.loads(out.read_text())
    url, csr = twin_link
    with Device(url, csr) as dev:
        t = Tester(dev)
        written = t.calibration()
        assert written["internal_ns"] == pytest.approx(cal["internal_ns"], abs=0.5)
        assert written["cables_ns"] == pytest.approx([2 * cal["ns_per_m"], 3 * cal["ns_per_m"]], abs=0.5)
        t.set_calibration(0, [0, 0])


def test_interrupted_sweep_keeps_finished_sizes(twin_link, tmp_path):
    url, csr = twin_link

    class StopAfterFirstSize:
        sizes = 0

        def start_size(self, size):
            self.sizes += 1
            if self.sizes == 2:
                raise KeyboardInterrupt

        def end_size(self, size):
            pass

        def sample(self, row):
            pass

    with Device(url, csr) as dev:
        t = Tester(dev)
        plan = SweepPlan("ipv4", [64, 128, 256], 12, None, 0.002, 0.002)
        with pytest.raises(KeyboardInterrupt):
            sweep(t, plan, ResultsDir(tmp_path / "r", {}), StopAfterFirstSize())
        assert not t.busy(0), "the generator is stopped"
    run = json.loads((tmp_path / "r" / "run.json").read_text())
    assert run["stopped_at"] == {"size_bytes": 128, "finished_sizes": [64]}
    assert [s["size_bytes"] for s in summary_of(tmp_path / "r")["sizes"]] == [64]
    assert main(["report", str(tmp_path / "r")]) == 0


BAD = [
    (["sweep", "--sizes", "32,64"], "frame size 32 out of range"),
    (["sweep", "--sizes", "64", "--ifg", "8"], "--ifg: 8 out of range 12..4294967295 bytes"),
    (["sweep", "--proto", "ipv6", "--sizes", "64"], "frame size 64 out of range 84..16383 bytes for ipv6"),
    (["sweep", "--sizes", "banana"], "bad size list"),
    (["run", "--size", "20000"], "--size: 20000 out of range 64..16383 bytes"),
    (["sweep", "--rate", "150"], "--rate: 150 out of range (0, 100] %"),
    (["sweep", "--twins", "0"], "--twins: 0 out of range 1..64"),
    (["calibrate", "--cables", "1"], "at least two different cable lengths"),
    (["sweep", "--dut", "speed=9"], "bad --dut"),
    (["sweep", "--rx-port", "5"], "--rx-port 5 out of range: this tester has ports 0..1"),
    (["run", "--tx-port", "2"], "--tx-port 2 out of range"),
]


@pytest.mark.parametrize("argv,message", BAD)
def test_bad_input_one_line_error(twin_link, tmp_path, argv, message):
    url, csr = twin_link
    cmd = [sys.executable, "-m", "fpgatest", argv[0], "--url", url, "--csr", str(csr), *argv[1:],
           *(["--out", str(tmp_path / "o")] if argv[0] == "sweep" else [])]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], r.stderr
    assert not (tmp_path / "o" / "samples.csv").exists(), "nothing written for refused input"


def test_bad_target_one_line_error(tmp_path, twin_link):
    _, csr = twin_link
    for argv, message in [
        (["info", "--url", "socket://127.0.0.1:1", "--csr", str(csr)], "cannot open socket://127.0.0.1:1"),
        (["info", "--url", "socket://127.0.0.1:1", "--csr", str(tmp_path / "missing.json")], "cannot read register map"),
        (["sweep", "--proto", "ipx"], "invalid choice: 'ipx'"),
        (["report", str(tmp_path)], "cannot read results"),
    ]:
        r = subprocess.run([sys.executable, "-m", "fpgatest", *argv], capture_output=True, text=True, timeout=60)
        assert r.returncode == 2, (argv, r.stderr)
        assert message in r.stderr.strip().splitlines()[-1], (argv, r.stderr)


def test_info(twin_link, capsys):
    assert cli(twin_link, "info") == 0
    text = capsys.readouterr().out
    assert "matches the gateware" in text and "dut ab: store-and-forward" in text
    assert "ports       2: port 0 sends and receives, port 1 sends and receives" in text
    assert "dut ab2: a wire (enable=0)" in text


def test_run_shows_each_interval_to_the_frame(twin_link, capsys):
    """fpgatest run: one row per interval, its rate to one frame per interval (at line rate through a
    1 Gb/s switch: each 2 ms interval after the first holds 2976 or 2977 frames of 64 bytes,
    1,488,095.2 a second at line rate; the first may begin before the first frame is through), then
    the exact totals and the latency with the stamps' bound."""
    assert cli(twin_link, "run", "--size", "64", "--duration", "0.008", "--interval", "0.002") == 0
    text = capsys.readouterr().out
    rows = [line.split() for line in text.splitlines() if line.strip().startswith("0.00")]
    assert [r[0] for r in rows] == ["0.0020", "0.0040", "0.0060", "0.0080"], text
    for r in rows:
        assert r[2] == "±" and r[3] == "500" and r[4] == "1488095.2", r
    for r in rows[1:]:
        assert int(r[1]) in (1488000, 1488500), r
    assert "(stamps ± 4 ns)" in text and "latency stdev 0.0 ± 4 ns" in text and "drop rate 0.0000 % (exact: sequence numbers)" in text


def test_socket_url_defaults_to_the_twins_map(twin_link, capsys):
    """The README's `fpgatest dut --url socket://...` needs no --csr: socket:// is a twin."""
    url, csr = twin_link
    assert main(["dut", "--url", url, "--calibration", "none", "--dut-path", "ba", "--dut", "latency_ns=1000"]) == 0
    assert '"latency_ns": 1000.0' in capsys.readouterr().out
    # the full twin's map (build/twin-full), found by the build id it answers with, not the default's
    assert main(["info", "--url", url]) == 0
    assert f"register map {csr} " in capsys.readouterr().out and csr.parent.name == "twin-full"


def test_calibrate_restores_the_twin(twin_link, monkeypatch):
    """The switch model after calibrate is as before it, on success and on failure; a failed
    calibration leaves the calibration registers as they were."""
    import fpgatest.measure as measure

    url, csr = twin_link
    with Device(url, csr) as dev:
        t = Tester(dev)
        t.dut_set("ab", latency_ns=1234, per_byte_ns=8, dither=False, cable_in_ns=5, cut_through=False,
                  cross_mbps=50, cross_size=64)
        # a second hop on: calibration must see cables only (it makes hop 2 a wire for its runs)
        t.dut_set("ab2", enable=True, latency_ns=3000, per_byte_ns=20, rate_mbps=400)
        t.set_calibration(16, [8, 4])

        def state():
            return t.dut_registers("ab"), t.dut_registers("ab2"), t.calibration()

        before = state()
        cal = calibrate(t, [1, 10], frames=200)
        assert state() == before
        assert cal["ns_per_m"] == pytest.approx(4.72, abs=0.2) and cal["internal_ns"] == pytest.approx(408, abs=4)

        calls = []

        def failing(tester, frames):
            calls.append(frames)
            if len(calls) == 2:
                raise RuntimeError("calibration: the cable came loose")
            return 400.0

        monkeypatch.setattr(measure, "measure_cable", failing)
        with pytest.raises(RuntimeError):
            calibrate(t, [1, 10, 20], frames=200)
        assert state() == before
        assert not t.busy(0)
        t.set_calibration(0, [0, 0])
        t.dut_set("ab", latency_ns=1000, cable_in_ns=0, cross_mbps=0)
        t.dut_set("ab2", enable=False)


def _twins() -> int:
    """Twin processes running now."""
    r = subprocess.run(["pgrep", "-f", "twin/gateware/obj_dir/Vsim"], capture_output=True, text=True)
    return len(r.stdout.split())


def _twins_after_they_go(before: int) -> int:
    """Twin processes running once those a command started are gone: they are stopped as it ends and
    leave soon after (waits up to 10 s for the count to fall to `before`)."""
    import time

    deadline = time.monotonic() + 10
    while _twins() > before and time.monotonic() < deadline:
        time.sleep(0.1)
    return _twins()


@pytest.mark.parametrize("twins", [1, 2])
def test_sigterm_stops_sweep_and_its_twin(twin_link, tmp_path, twins):
    """SIGTERM during a sweep on a twin the command started (or on two, their sizes measured at once):
    the run is marked stopped, the twins end."""
    import signal
    import time

    before = _twins()
    out = tmp_path / "r"
    proc = subprocess.Popen([sys.executable, "-m", "fpgatest", "sweep", "--sizes", "64,128,256,512,1024,1518",
                             "--calibration", "none", "--twins", str(twins), "--out", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not (out / "samples.csv").exists():
        assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.poll() else "slow"
        time.sleep(0.05)
    assert _twins() == before + twins
    time.sleep(0.5)                     # the sizes under way (one takes seconds)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 128 + signal.SIGTERM
    err = proc.stderr.read()
    assert "Traceback" not in err and "finished sizes are kept" in err, err
    assert "stopped_at" in json.loads((out / "run.json").read_text())
    assert _twins_after_they_go(before) == before, "the twin this sweep started is stopped"


def test_sigterm_stops_owd_on_two_twins(twin_link, tmp_path):
    """SIGTERM during owd on two twins of its own: the sizes under way end, probes.csv keeps whole sizes
    in the plan's order, run.json stays marked stopped and no results are written, both twins end."""
    import signal
    import time

    from fpgatest.probes import random_sizes

    before = _twins()
    out = tmp_path / "owd"
    proc = subprocess.Popen([sys.executable, "-m", "fpgatest", "owd", "--probes", "100", "--twins", "2",
                             "--calibration", "none", "--out", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not (out / "probes.csv").exists() or len((out / "probes.csv").read_text().splitlines()) < 2:
        assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.poll() else "slow"
        time.sleep(0.05)
    assert _twins() == before + 2
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 128 + signal.SIGTERM
    err = proc.stderr.read()
    assert "Traceback" not in err and "interrupted; what was measured is kept" in err, err
    assert json.loads((out / "run.json").read_text())["stopped"] is True
    assert not (out / "results.json").exists()
    rows = list(csv.DictReader(open(out / "probes.csv")))
    done = len(rows) // 100
    assert len(rows) == 100 * done and 1 <= done < 16, len(rows)
    assert [int(r["size_bytes"]) for r in rows[::100]] == random_sizes(16, 64, 1518, 1)[:done]
    assert _twins_after_they_go(before) == before, "both twins this owd started are stopped"


def test_sweep_on_two_twins_at_once(twin_link, tmp_path):
    """--twins 2: two twins of the command's own, a size on each at once; every size measured exactly as
    on one (the default switch: 1 us + 8 ns/B, store-and-forward), written in size order."""
    import threading
    import time

    from fpgatest.output import load

    before, most = _twins(), []
    ended = threading.Event()

    def count():
        while not ended.is_set():
            most.append(_twins() - before)
            time.sleep(0.1)

    counter = threading.Thread(target=count)
    counter.start()
    out = tmp_path / "r"
    try:
        r = subprocess.run([sys.executable, "-m", "fpgatest", "sweep", "--sizes", "64,512,1518,128", "--twins", "2",
                            "--calibration", "none", "--duration", "0.004", "--interval", "0.001", "--out", str(out)],
                           capture_output=True, text=True, timeout=300)
    finally:
        ended.set()
        counter.join()
    assert r.returncode == 0, r.stderr
    assert max(most) == 2, "two twins ran at once"
    assert _twins_after_they_go(before) == before, "both twins are stopped"
    assert json.loads((out / "run.json").read_text())["tester"]["twins"] == 2
    summary = summary_of(out)
    assert [s["size_bytes"] for s in summary["sizes"]] == [64, 512, 1518, 128]
    for record in summary["sizes"]:
        size = record["size_bytes"]
        assert record["frames"]["lost"] == 0 and record["frames"]["tx"] == record["frames"]["rx"] > 0, record
        assert record["latency_ns"]["min"] == record["latency_ns"]["max"] == 1000 + 8 * size, record
        rows = _samples_of(out, size)
        assert [row["interval"] for row in rows] == [0, 1, 2, 3]
        assert all(row["duration_s"] == pytest.approx(0.001, abs=1e-12) for row in rows), rows
    rows = [row["size_bytes"] for row in load(out)[1]]
    assert rows == [64] * 4 + [512] * 4 + [1518] * 4 + [128] * 4, "samples.csv in the sizes' order"
    fit = summary["fit"]
    assert fit["slope_ns_per_byte"] == pytest.approx(8.0) and fit["intercept_ns"] == pytest.approx(1000.0), fit


def test_sizes_shared_out_are_written_in_order_and_a_failure_keeps_the_finished(tmp_path, monkeypatch):
    """sweep on two testers: sizes finished out of order are written in size order; when one size fails,
    the size in progress on the other tester runs to its end, no size is started after the failure, and
    every finished size is kept (the measurement itself is a stand-in here: what is tested is the
    sharing out; test_sweep_on_two_twins_at_once measures on two twins)."""
    import threading

    from fpgatest import measure
    from fpgatest.output import load

    started, failing = [], []
    failed = threading.Event()

    def measured(tester, plan, stream, results, on_sample=None):
        started.append((tester, stream.size))
        if stream.size == 64:           # the slow one: ends once the other tester's thread has failed and ended
            failed.wait(10)
            failing[0].join(10)
        if stream.size == 256:
            failing.append(threading.current_thread())
            failed.set()
            raise RuntimeError("the device under test went away")
        rows = [{"size_bytes": stream.size, "interval": k, "tx_frames": 1, "rx_frames": 1, "lat_count": 1}
                for k in range(2)]
        return {"size_bytes": stream.size}, rows

    monkeypatch.setattr(measure, "measure_size", measured)
    monkeypatch.setattr(measure, "results_meta", lambda tester, plan, testers: {"testers": testers})
    monkeypatch.setattr(measure, "summarize", lambda meta, samples, sizes: {"sizes": list(sizes)})
    plan = SweepPlan("ipv4", [64, 128, 256, 512], 12, None, 0.002, 0.001)
    with pytest.raises(RuntimeError, match="went away"):
        sweep(["tester A", "tester B"], plan, ResultsDir(tmp_path / "r", {}))
    by_size = {size: tester for tester, size in started}
    assert sorted(by_size) == [64, 128, 256] and by_size[128] == by_size[256] != by_size[64], started
    run = json.loads((tmp_path / "r" / "run.json").read_text())
    assert run["stopped_at"] == {"size_bytes": 256, "finished_sizes": [64, 128]}
    _, samples, sizes = load(tmp_path / "r")
    assert [r["size_bytes"] for r in sizes] == [64, 128]
    assert [(r["size_bytes"], r["interval"]) for r in samples] == [(64, 0), (64, 1), (128, 0), (128, 1)]


def test_twins_only_where_the_command_starts_them(tmp_path, capsys):
    """--twins N: refused, one line, for a URL the command does not start, the kernel as the device and a
    capture (of one wire), before anything is started or written; for a sweep's sizes and owd's."""
    for command in ("sweep", "owd"):
        for extra, message in ((["--url", "socket://127.0.0.1:9"], "--url is a twin this command starts"),
                               (["--url", "twin:linux"], "has one Linux namespace as the device"),
                               (["--capture", str(tmp_path / "c.pcapng")], "--capture writes one twin's wires")):
            assert main([command, "--twins", "2", *extra, "--out", str(tmp_path / "o")]) == 2
            lines = capsys.readouterr().err.strip().splitlines()
            assert len(lines) == 1 and message in lines[0], (command, lines)
            assert not (tmp_path / "o").exists() and not (tmp_path / "c.pcapng").exists()


@pytest.mark.parametrize("raised, status", [("Stopped(signal.SIGTERM)", 7), ("KeyboardInterrupt()", -signal.SIGINT)])
def test_stop_survives_a_string_exec(tmp_path, raised, status):
    """A stop caught after it passed through a string exec (a dataclass built in a lazy import)
    leaves the exit status to main. CPython under `python -m` turns a bare KeyboardInterrupt there
    into death by SIGINT (the control case); the sweep test above met it once in ~40 runs."""
    (tmp_path / "stopcase.py").write_text(
        "import signal, sys\n"
        "from fpgatest.stop import Stopped\n"
        "try:\n"
        f"    exec('raise E', {{'E': {raised}}})\n"
        "except KeyboardInterrupt:\n"
        "    sys.exit(7)\n")
    run = subprocess.run([sys.executable, "-m", "stopcase"], cwd=tmp_path, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])})
    assert run.returncode == status, run.stderr


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")   # the loss this test makes
def test_a_stop_lost_in_a_finalizer_comes_back(twin_link):
    """A signal whose Stopped is raised inside a finalizer is "ignored" there by Python; the next
    register access raises it again, while cleanup during a propagating stop still reaches the device."""
    from fpgatest import stop
    from fpgatest.stop import Stopped

    class Finalized:
        def __del__(self):
            stop.handler(signal.SIGTERM, None)      # the signal lands while a finalizer runs

    url, csr = twin_link
    with Device(url, csr) as dev:
        try:
            Finalized()                              # prints "Exception ignored in ...": lost here
            with pytest.raises(Stopped) as caught:
                dev.read("tester_time")
            assert caught.value.signum == signal.SIGTERM
            with pytest.raises(Stopped):
                try:
                    raise Stopped(signal.SIGTERM)
                finally:
                    assert dev.read("tester_build_id") == dev.map.build_id   # cleanup is not refused
        finally:
            stop.reset()
        dev.read("tester_time")                      # reset: accesses work again


def test_broken_pipe_ends_quietly(twin_link):
    url, csr = twin_link
    proc = subprocess.Popen([sys.executable, "-m", "fpgatest", "info", "--url", url, "--csr", str(csr),
                             "--calibration", "none"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()      # as `| head -0` does before the first line
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141 and err == "", err


def test_stream_fields_from_the_command_line():
    """--vlan/--src-mac/--dst-ip become the generator's registers; IPv6 defaults to the
    documentation prefix; the default size list starts at the protocol's minimum."""
    import ipaddress

    from fpgatest.cli import build_parser, stream_fields
    from fpgatest.measure import parse_sizes
    from fpgatest.tester import min_size

    args = build_parser().parse_args(["sweep", "--proto", "ipv6", "--vlan", "100", "--vlan-pcp", "5",
                                      "--src-mac", "02:00:00:00:00:0a", "--dst-ip", "2001:db8::99"])
    vlan, extra = stream_fields(args, 0, 1)
    assert vlan == 5 << 13 | 100
    assert extra == {"cfg_src_mac": 0x02000000000A, "cfg_dst_ip": int(ipaddress.ip_address("2001:db8::99")),
                     "cfg_src_ip": int(ipaddress.ip_address("2001:db8:0:0::1"))}
    assert parse_sizes("rfc2544", min_size("ipv6", True)) == [88, 128, 256, 512, 1024, 1280, 1518]
    assert parse_sizes("rfc2544", min_size("ipv4")) == [64, 128, 256, 512, 1024, 1280, 1518]


def test_ipv6_sweep_with_default_sizes(twin_link, tmp_path):
    out = tmp_path / "v6"
    assert cli(twin_link, "sweep", "--proto", "ipv6", "--vlan", "7", "--duration", "0.001", "--interval", "0.001",
               "--out", str(out)) == 0
    s = summary_of(out)
    assert [x["size_bytes"] for x in s["sizes"]] == [88, 128, 256, 512, 1024, 1280, 1518]
    assert all(x["frames"]["tx"] == x["frames"]["rx"] > 0 for x in s["sizes"])


def test_an_interval_below_the_recorders_reach_is_refused_before_anything(twin_link, tmp_path, capsys):
    """--interval shorter than the recorder's 4096 ticks: one line, nothing sent, nothing written."""
    from fpgatest.driver import Device

    url, csr = twin_link
    with Device(url, csr) as dev:
        before = dev.snapshot()["port0_stat_tx_frames"]
    out = tmp_path / "sweep"
    capsys.readouterr()
    assert cli(twin_link, "sweep", "--interval", "0.00002", "--duration", "0.0001", "--out", str(out)) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--interval 2e-05: an interval of 2e-05 s: the interval recorder takes 32.768 us" in err[0]
    assert not out.exists()
    with Device(url, csr) as dev:
        assert dev.snapshot()["port0_stat_tx_frames"] == before
