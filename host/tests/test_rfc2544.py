# SPDX-License-Identifier: BSD-2-Clause
"""RFC 2544 benchmarks: the searches against the reference queue model, then `fpgatest rfc2544 all`
on the twin over its real transport, every trial checked against the model and the switch's own counters."""

import csv
import json
import math

import pytest

from common.switch_state import KNOWN_PATH, store_and_forward_ns
from fpgatest.cli import main
from fpgatest.driver import Device
from fpgatest.rfc2544 import search_burst, search_rate
from fpgatest.tester import Tester
from models.ref_switch import drops, period_bytes

BOTTLENECK = {"rate_mbps": 500, "buffer_bytes": 4096}    # egress at half line rate, 4 KiB of buffer
PACE = 2.0


# ---- the searches, against the reference model (no twin) ------------------------------------------

@pytest.mark.parametrize("size,buffer_bytes", [(64, 4096), (64, 1000), (512, 9000), (1518, 4096), (1518, 1518)])
def test_burst_search_finds_the_first_drop(size, buffer_bytes):
    """The longest lossless burst is the index of the first frame an endless line-rate burst loses,
    to the frame; a repetition that confirms the previous answer costs two trials."""
    first = drops(size, period_bytes(size, 100.0), 5000, buffer_bytes=buffer_bytes, pace=PACE)[0]
    calls = []

    def clean(n):
        calls.append(n)
        return not drops(size, period_bytes(size, 100.0), n, buffer_bytes=buffer_bytes, pace=PACE)

    assert search_burst(clean, 5000) == first
    assert len(calls) <= 1 + math.ceil(math.log2(5000))
    calls.clear()
    assert search_burst(clean, 5000, previous=first) == first and len(calls) == 2
    calls.clear()
    assert search_burst(clean, 5000, previous=first + 7) == first      # a wrong previous answer: searched again
    assert search_burst(lambda n: True, 300) == 300                   # the longest burst tried passes
    assert search_burst(lambda n: n == 0, 300) == 0                   # even one frame is lost


@pytest.mark.parametrize("threshold", [100.0, 99.99, 53.7, 50.0, 0.3, 0.0])
def test_rate_search_brackets_the_threshold(threshold):
    """lo passes, hi fails, hi - lo <= resolution, the threshold inside, at most 1 + log2(100/res) trials."""
    calls = []

    def passes(rate):
        calls.append(rate)
        return rate <= threshold

    lo, hi = search_rate(passes, 0.5)
    if threshold == 100.0:
        assert (lo, hi, calls) == (100.0, 100.0, [100.0])
        return
    assert lo <= threshold < hi and hi - lo <= 0.5
    assert lo == 0.0 or passes(lo)
    assert len(calls) <= 2 + math.ceil(math.log2(100 / 0.5))


# ---- the command on the twin ----------------------------------------------------------------------

def test_rfc2544_all_on_a_bottleneck(twin_link, tmp_path, capsys):
    """`fpgatest rfc2544 all` through a 500 Mb/s egress with 4 KiB of buffer (port 0 -> 1) and the
    default 1 Gb/s path back: every trial loses exactly the frames the reference model drops, the
    tester's losses equal the switch model's own drop counter, throughput brackets the model's
    zero-loss rate to the search resolution, back-to-back equals the model's first drop, the way
    back is lossless at line rate, and the results directory holds every trial and the report."""
    url, csr = twin_link
    with Device(url, csr) as dev:
        t = Tester(dev)
        t.dut_set("ab", **KNOWN_PATH)
        t.dut_set("ba", **KNOWN_PATH)
        dropped_before = t.dut_get("ab")["drop_buffer"] + t.dut_get("ba")["drop_buffer"]
    out = tmp_path / "rfc"
    argv = ["rfc2544", "all", "--url", url, "--csr", str(csr), "--calibration", "none", "--sizes", "64,1518",
            "--out", str(out)] + [a for k, v in BOTTLENECK.items() for a in ("--dut", f"{k}={v}")]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    with Device(url, csr) as dev:
        t = Tester(dev)
        dropped = t.dut_get("ab")["drop_buffer"] + t.dut_get("ba")["drop_buffer"] - dropped_before
        t.dut_set("ab", rate_mbps=1000, buffer_bytes=131072)

    trials = list(csv.DictReader(open(out / "trials.csv")))
    res = json.loads((out / "results.json").read_text())
    # every trial against the model (the twin is deterministic: the model's count, exactly)
    for row in trials:
        size, rate, frames = int(row["size_bytes"]), float(row["rate_percent"]), int(row["frames"])
        assert int(row["tx_frames"]) == frames
        if row["tx_port"] == "0":
            expect = len(drops(size, period_bytes(size, rate), frames, buffer_bytes=4096, pace=PACE))
        else:
            expect = 0
        assert int(row["lost"]) == expect, row
    assert sum(int(r["lost"]) for r in trials) == dropped > 0, "the tester's losses are the switch's drops"

    for r in res["throughput"]:
        size = r["size_bytes"]
        if r["tx_port"] == 1:
            assert r["throughput_percent"] == 100.0 and r["trials"] == 1
            continue

        def lossless(rate):
            frames = max(1, round(0.001 * 1e9 / 8 / (size + 20) * rate / 100))
            return not drops(size, period_bytes(size, rate), frames, buffer_bytes=4096, pace=PACE)

        lo, hi = r["throughput_percent"], r["failed_at_percent"]
        assert lossless(lo) and not lossless(hi) and hi - lo <= 1.0
        # the analytic zero-loss rate for an endless stream is half the line rate; the buffer lets a
        # 1 ms trial go a little faster, and never slower
        assert 50.0 - 1.0 <= lo and hi > 50.0
    for r in res["back_to_back"]:
        size = r["size_bytes"]
        if r["tx_port"] == 1:
            assert r["at_limit"] and r["frames"] == r["longest_tried"]
            continue
        first = drops(size, period_bytes(size, 100.0), 5000, buffer_bytes=4096, pace=PACE)[0]
        assert r["frames"] == r["min_frames"] == first and not r["at_limit"]
        assert r["repetitions"] == 2
    for r in res["loss"]:
        rates = [p["rate_percent"] for p in r["points"]]
        assert rates == [100.0 - 10 * k for k in range(len(rates))]
        assert [p["lost"] for p in r["points"][-2:]] == [0, 0]          # ends after two lossless trials
        assert all(p["lost"] for p in r["points"][:-2]) or r["tx_port"] == 1
    for r in res["latency"]:
        assert r["trials"] == 3 and r["mode"] == "store-and-forward" and r["rfc1242"] == "lifo"
        assert r["min_ns"] <= r["fifo_ns"] <= r["max_ns"] and r["rfc1242_ns"] == r["lifo_ns"] >= 0
        # an empty path: the known path's store-and-forward latency, the first frame of a trial
        assert r["min_ns"] == store_and_forward_ns(r["size_bytes"])
    for r in res["latency"]:
        # percentiles from the histogram: every frame counted once, in order, inside [min, max]
        h, pct = r["histogram"], r["percentiles"]
        assert sum(h["counts"]) + h["below"] + h["above"] == r["frames"]
        values = [q["value_ns"] for q in pct]
        assert None not in values and values == sorted(values)
        assert all(r["min_ns"] <= q["low_ns"] <= q["high_ns"] <= r["max_ns"] for q in pct)
        assert all(q["bound_ns"] >= 4.0 for q in pct), "never below the stamps' resolution"
    assert {(r["tx_port"], r["rx_port"]) for r in res["throughput"]} == {(0, 1), (1, 0)}
    assert all(r["sent"] for r in res["learning"])
    assert len(trials) == sum(r["trials"] for r in res["throughput"]) + sum(r["trials"] for r in res["latency"]) \
        + sum(len(r["points"]) for r in res["loss"]) + sum(r["trials"] for r in res["back_to_back"])
    report = (out / "report.md").read_text()
    assert report.strip() in printed and "twin, simulated time" in report and "RFC 2544 asks 60 s" in report
    for name in ("throughput.png", "latency.png", "loss.png", "back_to_back.png", "run.json"):
        assert (out / name).stat().st_size > 0
    assert "stopped" not in json.loads((out / "run.json").read_text())


def test_rfc2544_bidirectional(twin_link, tmp_path, capsys, monkeypatch):
    """`--directions bidirectional` (RFC 2544 section 14): every trial sends both ways at once, the same
    frames at the same rate each way, and both generators are sending together; through the 500 Mb/s
    bottleneck one way and line rate the other, the way with the bottleneck loses exactly what the
    reference model drops and the other nothing, so the throughput both ways is the bottleneck's, and
    the back-to-back burst both ways is the bottleneck's first drop."""
    url, csr = twin_link
    with Device(url, csr) as dev:
        t = Tester(dev)
        for path in ("ab", "ba"):
            t.dut_set(path, **KNOWN_PATH)
        t.dut_set("ab", **BOTTLENECK)
    calls, together = [], []
    start, wait_idle = Tester.start, Tester.wait_idle

    def spy_start(self, *ports):
        start(self, *ports)
        calls.append(("start", *ports))
        together.append(self.busy(0) and self.busy(1))

    def spy_wait(self, port, timeout_s=600.0):
        calls.append(("wait", port))
        wait_idle(self, port, timeout_s)

    monkeypatch.setattr(Tester, "start", spy_start)
    monkeypatch.setattr(Tester, "wait_idle", spy_wait)
    out = tmp_path / "bidir"
    argv = ["rfc2544", "throughput", "--url", url, "--csr", str(csr), "--calibration", "none", "--sizes", "64",
            "--directions", "bidirectional", "--learning-frames", "0", "--out", str(out)]
    assert main(argv) == 0
    printed = capsys.readouterr().out

    trials = list(csv.DictReader(open(out / "trials.csv")))
    assert len(trials) % 2 == 0 and len(trials) > 2
    for a, b in zip(trials[::2], trials[1::2]):
        assert (a["tx_port"], b["tx_port"]) == ("0", "1") and a["bidirectional"] == b["bidirectional"] == "True"
        assert a["rate_percent"] == b["rate_percent"] and a["frames"] == b["frames"] == a["tx_frames"] == b["tx_frames"]
        rate, frames = float(a["rate_percent"]), int(a["frames"])
        assert int(a["lost"]) == len(drops(64, period_bytes(64, rate), frames, buffer_bytes=4096, pace=PACE)), a
        assert int(b["lost"]) == 0, b
    assert len(together) == len(trials) // 2 and all(together), "every trial sends both ways at once"
    assert calls[:3] == [("start", 0, 1), ("wait", 0), ("wait", 1)]
    res = json.loads((out / "results.json").read_text())
    ab, ba = res["throughput"]
    assert (ab["tx_port"], ba["tx_port"]) == (0, 1) and ab["bidirectional"] and ba["bidirectional"]
    assert ab["throughput_percent"] == ba["throughput_percent"] < 100 and ab["trials"] == ba["trials"] == len(trials) // 2
    lo, hi = ab["throughput_percent"], ab["failed_at_percent"]
    assert hi - lo <= 1.0 and 50.0 - 1.0 <= lo and hi > 50.0
    assert "Bidirectional traffic (RFC 2544 section 14)" in printed and "0→1 (both ways)" in printed


def test_rfc2544_refuses_a_used_directory(twin_link, tmp_path, capsys):
    url, csr = twin_link
    out = tmp_path / "rfc"
    out.mkdir()
    (out / "trials.csv").write_text("kept\n")
    assert main(["rfc2544", "throughput", "--url", url, "--csr", str(csr), "--calibration", "none",
                 "--out", str(out)]) == 2
    assert "already holds results" in capsys.readouterr().err
    assert (out / "trials.csv").read_text() == "kept\n" and sorted(p.name for p in out.iterdir()) == ["trials.csv"]


@pytest.mark.parametrize("rate_mbps,ifg,latency_ns,log", [(990.0, 12, 1000.0, False), (1000.0, 1000, 1004.0, False),
                                                         (990.0, 12, 1000.0, True)])
def test_histogram_percentiles_hold_every_frames_latency(twin_link, rate_mbps, ifg, latency_ns, log):
    """Percentiles from the gateware histogram against the exact latency of every frame (the sample
    FIFO at every frame): each exact nearest-rank percentile lies in the reported bin; the jitter
    accumulators equal the frames' own |latency change|. A 990 Mb/s
    egress queues a line-rate stream (latencies spread over microseconds); frames spaced 1000 bytes
    apart through a 1000 Mb/s path with a delay of 125.5 ticks each keep their own dithered arrival
    phase, which rounds their exit to one tick or the next. Linear bins 32 ns wide from the middle
    of the latencies; logarithmic ones (log) from the middle too, each bin at most a quarter of its
    distance from the base wide."""
    from fpgatest.analysis import percentiles
    from fpgatest.tester import Stream

    url, csr = twin_link
    frames = 400
    with Device(url, csr) as dev:
        t = Tester(dev)
        t.dut_set("ab", latency_ns=latency_ns, per_byte_ns=8, rate_mbps=rate_mbps, buffer_bytes=131072, max_frame=9216,
                  cable_in_ns=0, cable_out_ns=0, cut_through=0, dither=1)

        def send():
            t.clear()
            t.configure(0, Stream(proto="ipv4", size=64, count=frames, ifg=ifg))
            t.start(0)
            t.wait_idle(0)
            t.wait_ticks(5000)
            return t.snapshot()["ports"][1]

        pilot = Tester.latency_summary(send())
        middle = (pilot["min"] + pilot["max"]) / 2       # bins from the middle on: some frames fall below
        hist = t.set_histogram(1, middle, middle, log=log)
        dev.write("port1_cfg_sample_every", 1)
        try:
            port = send()
            arrival = [lat for _, _, lat in t.samples(1, limit=frames + 1)]
            exact = sorted(arrival)
            bins = t.histogram(1)
        finally:
            dev.write("port1_cfg_sample_every", 0)
            t.dut_set("ab", latency_ns=1000, rate_mbps=1000, dither=0)
    lat = Tester.latency_summary(port)
    assert len(exact) == frames == lat["count"] == sum(bins) + port["hist_below"] + port["hist_above"]
    # jitter (RFC 4689) from the gateware's accumulators equals the one of every frame, exactly
    changes = [abs(b - a) for a, b in zip(arrival, arrival[1:])]
    assert lat["jitter_mean"] == pytest.approx(sum(changes) / (frames - 1), abs=1e-9)
    assert lat["jitter_max"] == max(changes) > 0
    # linear: 64 bins of 0.5 ns (32 ns); logarithmic: 2^17 units of 0.5 ns (65.5 us) reach every frame
    assert port["hist_below"] > 0 and (port["hist_above"] > 0) == (rate_mbps < 1000 and not log), "32 ns of bins"
    pct = percentiles(bins, hist["edges_ns"], port["hist_below"], port["hist_above"],
                      lat["min"], lat["max"], ps=(1, 10, 25, 50, 75, 90, 99, 99.9, 100))
    for q in pct:
        truth = exact[max(1, math.ceil(q["p"] / 100 * frames)) - 1]
        if q["value_ns"] is None:          # outside the bins: only one side is known
            assert (truth >= q["low_ns"]) if q["low_ns"] is not None else (truth <= q["high_ns"]), (q, truth)
        else:
            assert q["low_ns"] <= truth <= q["high_ns"], (q, truth)
            widest = max(hist["bin_ns"], (q["high_ns"] - hist["base_ns"]) / 4) if log else hist["bin_ns"]
            assert q["bound_ns"] == (q["high_ns"] - q["low_ns"]) / 2 + 4.0 <= widest / 2 + 4.0


def test_rfc2544_on_two_twins_at_once(twin_link, tmp_path, capsys):
    """--twins 2: two default twins of the command's own (port 0 -> 1), each size's benchmarks on one of
    them at once, through the same bottleneck: every trial loses exactly the frames the reference model
    drops, throughput and back-to-back are the model's, and the records are in size order, as on one."""
    out = tmp_path / "rfc"
    argv = ["rfc2544", "all", "--url", "twin", "--twins", "2", "--calibration", "none", "--sizes", "64,512,1518",
            "--out", str(out)] + [a for k, v in BOTTLENECK.items() for a in ("--dut", f"{k}={v}")]
    assert main(argv) == 0
    assert "2 twins, a size on each at once" in capsys.readouterr().err
    trials = list(csv.DictReader(open(out / "trials.csv")))
    res = json.loads((out / "results.json").read_text())
    assert json.loads((out / "run.json").read_text())["twins"] == 2
    for row in trials:
        size, rate, frames = int(row["size_bytes"]), float(row["rate_percent"]), int(row["frames"])
        assert int(row["lost"]) == len(drops(size, period_bytes(size, rate), frames, buffer_bytes=4096, pace=PACE)), row
    for key in ("learning", "throughput", "latency", "loss", "back_to_back"):
        assert [r["size_bytes"] for r in res[key]] == [64, 512, 1518], key
    for r in res["throughput"]:
        assert r["throughput_percent"] >= 49.0 and r["failed_at_percent"] - r["throughput_percent"] <= 1.0
    for r in res["back_to_back"]:
        first = drops(r["size_bytes"], period_bytes(r["size_bytes"], 100.0), 5000, buffer_bytes=4096, pace=PACE)[0]
        assert r["frames"] == first
    for r in res["latency"]:
        assert r["min_ns"] == store_and_forward_ns(r["size_bytes"])
    assert len(trials) == sum(r["trials"] for r in res["throughput"]) + sum(r["trials"] for r in res["latency"]) \
        + sum(len(r["points"]) for r in res["loss"]) + sum(r["trials"] for r in res["back_to_back"])
