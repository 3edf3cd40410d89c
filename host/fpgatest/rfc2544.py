# SPDX-License-Identifier: BSD-2-Clause
"""RFC 2544 benchmarks: throughput, latency, frame loss rate and back-to-back frames.

Every benchmark is built from one trial (RFC 2544 section 23): learning frames before a size's
trials, a stream of a known number of frames, the path drained before the counters are read, so a
frame still in the device is never counted lost. Loss is exact: every frame carries a sequence number.
"""

import csv
import math
import threading
from dataclasses import dataclass, field
from pathlib import Path

from fpgatest.analysis import (BYTE_NS, forwarding_mode, linear_fit, percentiles, rfc1242_latency, rfc1242_value,
                               theoretical_fps)
from fpgatest.driver import TICK_NS
from fpgatest.measure import drain, frames_lost, histogram_setting, send_and_drain, shared_out
from fpgatest.output import bins_text, number_text, percentile_text, write_json_atomic
from fpgatest.tester import MIN_IFG, SettingError, Stream, Tester, lat_ns

TESTS = ("throughput", "latency", "loss", "back-to-back")
TRIAL_COLUMNS = ["test", "tx_port", "rx_port", "bidirectional", "size_bytes", "rate_percent", "frames", "tx_frames", "rx_frames",
                 "lost", "loss_percent", "duration_s", "latency_count", "latency_min_ns", "latency_mean_ns",
                 "latency_max_ns"]


# address registers a stream on the way back takes from the other side's
SWAPPED = {"cfg_src_mac": "cfg_dst_mac", "cfg_dst_mac": "cfg_src_mac", "cfg_src_ip": "cfg_dst_ip", "cfg_dst_ip": "cfg_src_ip"}


@dataclass
class Rfc2544Plan:
    """What to run and how long: RFC trial lengths on a board, short ones on the twin (simulated time)."""
    proto: str
    sizes: list[int]
    directions: list[tuple[int, int]]
    bidirectional: bool = False       # RFC 2544 14: both directions at once, the same rate offered each way
    trial_s: float = 60.0             # throughput and frame-loss trials (RFC: at least 60 s)
    latency_trial_s: float = 120.0    # latency trials (RFC: 120 s)
    latency_trials: int = 20          # RFC: at least 20, averaged
    resolution_percent: float = 0.5   # throughput search: stop when the bracket is this narrow
    accept_loss_percent: float = 0.0  # 0: the RFC's zero loss; > 0: a partial-drop rate
    loss_step_percent: float = 10.0   # frame loss rate: from 100 % down in steps of at most 10 %
    burst_s: float = 2.0              # back-to-back: the longest burst tried (RFC: at least 2 s)
    burst_trials: int = 50            # RFC: at least 50, averaged
    drain_s: float = 2.0              # RFC: wait 2 s for residual frames
    learning_frames: int = 16         # frames sent backwards before a size's trials (RFC 2544 23 B)
    hist_scale: str = "auto"          # the latency histogram's bins (measure.histogram_setting)
    vlan: int | None = None
    extra: dict = field(default_factory=dict)

    def check(self) -> None:
        for size in self.sizes:
            self.stream(size, 100.0).check()
        if not 0 < self.resolution_percent < 100:
            raise SettingError(f"throughput resolution {self.resolution_percent} % out of range (0, 100)")
        if not 0 <= self.accept_loss_percent < 100:
            raise SettingError(f"accepted loss {self.accept_loss_percent} % out of range [0, 100)")
        if not 0 < self.loss_step_percent <= 10:
            raise SettingError(f"loss step {self.loss_step_percent} % out of range (0, 10] (RFC 2544 26.3)")
        if min(self.trial_s, self.latency_trial_s, self.burst_s, self.drain_s) <= 0:
            raise SettingError("trial, burst and drain times must be > 0")
        if self.latency_trials < 1 or self.burst_trials < 1 or self.learning_frames < 0:
            raise SettingError("latency and burst repetitions must be >= 1, learning frames >= 0")

    def groups(self) -> list[list[tuple[int, int]]]:
        """The flows each benchmark runs at once: every direction on its own, or both together."""
        return [list(self.directions)] if self.bidirectional else [[d] for d in self.directions]

    def addresses(self, flow: tuple[int, int] | None = None) -> dict:
        """The generator registers given for a flow's stream (extra): as given on the first direction,
        with source and destination swapped on the way back."""
        if flow is None or flow == self.directions[0]:
            return dict(self.extra)
        return {SWAPPED.get(k, k): v for k, v in self.extra.items()}

    def stream(self, size: int, rate_percent: float, count: int = 0, flow: tuple[int, int] | None = None) -> Stream:
        """The test stream of a flow (addresses as `addresses` gives them)."""
        return Stream(proto=self.proto, size=size, rate_percent=rate_percent, count=count, vlan=self.vlan,
                      extra=self.addresses(flow))

    def frames(self, size: int, rate_percent: float, seconds: float) -> int:
        """Frames a trial of `seconds` at a rate sends (at least one)."""
        return max(1, round(seconds * theoretical_fps(size, MIN_IFG) * rate_percent / 100))


class TrialLog:
    """trials.csv: every trial of the run, one row each, flushed as it ends (in the order they end: with
    several twins, theirs interleaved; each row names its size and path)."""

    def __init__(self, path: Path):
        self.file = open(path, "w", newline="")
        self.writer = csv.DictWriter(self.file, fieldnames=TRIAL_COLUMNS)
        self.writer.writeheader()
        self.lock = threading.Lock()

    def add(self, row: dict) -> None:
        with self.lock:
            self.writer.writerow({k: row.get(k) for k in TRIAL_COLUMNS})
            self.file.flush()

    def close(self) -> None:
        self.file.close()


class Bench:
    """One tester, one plan: the trial and the four benchmarks built on it."""

    def __init__(self, tester: Tester, plan: Rfc2544Plan, log: TrialLog | None = None, on_trial=None):
        self.t = tester
        self.plan = plan
        self.log = log
        self.on_trial = on_trial
        for tx, rx in plan.directions:
            if not (tester.has(tx, "tx") and tester.has(rx, "rx")):
                raise SettingError(f"port {tx} -> {rx}: this build cannot send on {tx} and receive on {rx}")
        if plan.bidirectional and (len(plan.directions) != 2 or plan.directions[1] != plan.directions[0][::-1]):
            raise SettingError("bidirectional traffic needs one path and its way back")

    # ---- one trial (RFC 2544 23) -----------------------------------------------------------------

    def learn(self, direction: tuple[int, int], size: int) -> bool:
        """Learning frames from the receiving port back to the sending one, so that a learning switch
        knows where the test stream's destination lives (the receiving port's default addresses are the
        test stream's swapped; given --src-mac/--dst-mac are swapped here). False when the receiving
        port has no generator in this build (the board's RX-only port): nothing is sent."""
        tx, rx = direction
        if not self.plan.learning_frames or not self.t.has(rx, "tx"):
            return False
        sent = self.plan.addresses(direction)
        extra = {mine: sent[theirs] for mine, theirs in (("cfg_src_mac", "cfg_dst_mac"), ("cfg_dst_mac", "cfg_src_mac"))
                 if theirs in sent}
        stream = Stream(proto="eth", size=64, ifg=1000, count=self.plan.learning_frames, vlan=self.plan.vlan,
                        extra=extra)
        self.t.configure(rx, stream)
        self.t.start(rx)
        self.t.wait_idle(rx)
        if self.t.has(tx, "rx"):
            drain(self.t, [tx], self.plan.drain_s)
        else:
            self.t.wait_ticks(max(1, round(self.plan.drain_s / (TICK_NS * 1e-9))))
        return True

    def trial(self, test: str, flows: list[tuple[int, int]], size: int, rate_percent: float, frames: int,
              histogram: bool = False) -> list[dict]:
        """`frames` frames of `size` at `rate_percent` of line rate on every flow at once; counters read
        once every path is empty (and each receiver's latency histogram with its below/above counts,
        where asked). One row per flow."""
        streams = [self.plan.stream(size, rate_percent, frames, flow) for flow in flows]
        snap = send_and_drain(self.t, flows, streams, self.plan.drain_s,
                              timeout_s=60.0 + 10 * frames / theoretical_fps(size, MIN_IFG) * 100 / rate_percent)
        rows = []
        for (tx, rx), stream in zip(flows, streams):
            p_tx, p_rx = snap["ports"][tx], snap["ports"][rx]
            sent = p_tx["tx_frames"]
            if sent != frames:
                raise RuntimeError(f"port {tx} sent {sent} of {frames} frames in a trial: the generator stopped early")
            lost = frames_lost(p_rx, stream.seq_start, sent)
            lat = Tester.latency_summary(p_rx)
            row = {"test": test, "tx_port": tx, "rx_port": rx, "bidirectional": len(flows) > 1, "size_bytes": size,
                   "rate_percent": rate_percent, "frames": frames, "tx_frames": sent, "rx_frames": sent - lost,
                   "lost": lost, "loss_percent": 100 * lost / sent if sent else 0.0,
                   "duration_s": sent / (theoretical_fps(size, MIN_IFG) * rate_percent / 100),
                   "latency_count": lat["count"], "latency_min_ns": lat["min"], "latency_mean_ns": lat["mean"],
                   "latency_max_ns": lat["max"], "latency_stdev_ns": lat["stdev"],
                   "jitter_sum_ns": lat_ns(p_rx["jit_sum"]), "jitter_max_ns": lat["jitter_max"]}
            if histogram:
                row["histogram"] = {"bins": self.t.histogram(rx), "below": p_rx["hist_below"],
                                    "above": p_rx["hist_above"]}
            rows.append(row)
        for row in rows:
            if self.log:
                self.log.add(row)
            if self.on_trial:
                self.on_trial(row)
        return rows

    def passes(self, rows: list[dict]) -> bool:
        """Every flow of a trial passes: no loss, or at most the accepted loss."""
        if self.plan.accept_loss_percent == 0:
            return all(row["lost"] == 0 for row in rows)
        return all(row["loss_percent"] <= self.plan.accept_loss_percent for row in rows)

    @staticmethod
    def _record(flows, flow, size, **fields) -> dict:
        return {"size_bytes": size, "tx_port": flow[0], "rx_port": flow[1], "bidirectional": len(flows) > 1, **fields}

    # ---- 26.1 throughput ----------------------------------------------------------------------------

    def throughput(self, flows, size) -> list[dict]:
        """Binary search for the highest rate whose trial passes (no loss, or at most the accepted
        loss, on every flow), starting at line rate: the throughput lies between the highest rate that
        passed and the lowest that failed, at most the resolution apart. Bidirectional: the rate
        offered each way at once (RFC 2544 14), one record per flow."""
        plan = self.plan
        trials = []

        def run(rate):
            rows = self.trial("throughput", flows, size, rate, plan.frames(size, rate, plan.trial_s))
            trials.append(rows)
            return self.passes(rows)

        lo, hi = search_rate(run, plan.resolution_percent)
        found = lo > 0
        fps = theoretical_fps(size, MIN_IFG) * lo / 100 if found else None
        out = []
        for i, flow in enumerate(flows):
            at = [rows[i] for rows in trials if rows[i]["rate_percent"] == lo and rows[i]["latency_count"]]
            out.append(self._record(
                flows, flow, size, throughput_percent=lo if found else None, failed_at_percent=hi if lo < 100 else None,
                resolution_percent=plan.resolution_percent, accept_loss_percent=plan.accept_loss_percent,
                frames_per_s=fps, mbps=fps * size * 8 / 1e6 if fps else None,
                latency_range_ns=[at[-1]["latency_min_ns"], at[-1]["latency_max_ns"]] if at else None,
                latency_mean_ns=at[-1]["latency_mean_ns"] if at else None,
                trials=len(trials)))
        return out

    # ---- 26.2 latency -------------------------------------------------------------------------------

    def latency(self, flows, size, rate_percent, throughput: list[dict]) -> list[dict]:
        """latency_trials trials at the throughput rate; every frame is stamped (the RFC stamps one per
        trial), each trial gives its mean, and the trials' means are averaged as the RFC asks.
        Percentiles come from each receiver's histogram, its 64 bins set over that flow's latency in
        the throughput trial at this rate (its record in `throughput`: range and mean), as a sweep
        sets them (measure.histogram_setting: linear with a margin, or logarithmic for a heavy tail);
        frames outside are counted apart."""
        plan = self.plan
        hists = []
        for (_, rx), found in zip(flows, throughput):
            hist = None
            if found["latency_range_ns"] is not None:
                low, high = found["latency_range_ns"]
                estimate = {"lat_count": 1, "latency_min_ns": low, "latency_max_ns": high,
                            "latency_mean_ns": found["latency_mean_ns"]}
                hist = self.t.set_histogram(rx, *histogram_setting([estimate], plan.hist_scale))
            hists.append(hist)
        trials = [self.trial("latency", flows, size, rate_percent, plan.frames(size, rate_percent, plan.latency_trial_s),
                             histogram=any(h is not None for h in hists))
                  for _ in range(plan.latency_trials)]
        return [self._latency_record(flows, flow, size, rate_percent, [rows[i] for rows in trials], hists[i])
                for i, flow in enumerate(flows)]

    def _latency_record(self, flows, flow, size, rate_percent, rows: list[dict], hist: dict | None) -> dict:
        record = self._record(flows, flow, size, rate_percent=rate_percent, trials=len(rows))
        means = [r["latency_mean_ns"] for r in rows if r["latency_count"]]
        if not means:
            return {**record, "fifo_ns": None}
        avg = sum(means) / len(means)
        spread = math.sqrt(sum((m - avg) ** 2 for m in means) / (len(means) - 1)) if len(means) > 1 else None
        lat_min = min(r["latency_min_ns"] for r in rows if r["latency_count"])
        lat_max = max(r["latency_max_ns"] for r in rows if r["latency_count"])
        paired = [r for r in rows if r["latency_count"] > 1]
        pairs = sum(r["latency_count"] - 1 for r in paired)
        # LILO equals FIFO and FILO is FIFO + the frame time when the frame leaves at the rate it came
        record.update({"fifo_ns": avg, "lifo_ns": avg - BYTE_NS * size, "lilo_ns": avg, "filo_ns": avg + BYTE_NS * size,
                       "trial_stdev_ns": spread,
                       "min_ns": lat_min, "max_ns": lat_max, "frames": sum(r["latency_count"] for r in rows),
                       # RFC 4689 jitter over the pairs of every trial (count - 1 per trial)
                       "jitter_mean_ns": sum(r["jitter_sum_ns"] for r in paired) / pairs if pairs else None,
                       "jitter_max_ns": max((r["jitter_max_ns"] for r in paired), default=None),
                       "resolution_ns": TICK_NS / 2})
        if hist is not None:
            bins = [sum(col) for col in zip(*(r["histogram"]["bins"] for r in rows))]
            below = sum(r["histogram"]["below"] for r in rows)
            above = sum(r["histogram"]["above"] for r in rows)
            pct = percentiles(bins, hist["edges_ns"], below, above, lat_min, lat_max)
            record.update({"histogram": {**hist, "counts": bins, "below": below, "above": above},
                           "percentiles": pct,
                           # RFC 5481 packet delay variation: latency above the smallest, per percentile
                           # (the smallest is a stamp difference too: half a tick more)
                           "pdv_ns": [{"p": q["p"], "value_ns": None if q["value_ns"] is None else q["value_ns"] - lat_min,
                                       "bound_ns": None if q["bound_ns"] is None else q["bound_ns"] + TICK_NS / 2,
                                       "low_ns": None if q["low_ns"] is None else q["low_ns"] - lat_min}
                                      for q in pct]})
        return record

    # ---- 26.3 frame loss rate -----------------------------------------------------------------------

    def loss(self, flows, size) -> list[dict]:
        """From line rate down in steps of loss_step_percent until two successive trials lose nothing
        (on any flow)."""
        plan = self.plan
        points, clean = [[] for _ in flows], 0
        k = 0
        while clean < 2:
            rate = round(100.0 - k * plan.loss_step_percent, 6)
            if rate <= 0:
                break
            rows = self.trial("loss", flows, size, rate, plan.frames(size, rate, plan.trial_s))
            for flow_points, row in zip(points, rows):
                flow_points.append({"rate_percent": rate, "loss_percent": row["loss_percent"],
                                    "tx_frames": row["tx_frames"], "lost": row["lost"]})
            clean = clean + 1 if all(row["lost"] == 0 for row in rows) else 0
            k += 1
        return [self._record(flows, flow, size, points=flow_points) for flow, flow_points in zip(flows, points)]

    # ---- 26.4 back-to-back frames -------------------------------------------------------------------

    def back_to_back(self, flows, size) -> list[dict]:
        """The longest burst at minimum gap that passes through without loss (on every flow), searched
        to one frame, up to burst_s of line rate; repeated burst_trials times and averaged. A repetition
        first checks the previous answer and the burst one frame longer, and searches again only if they
        disagree."""
        plan = self.plan
        longest = plan.frames(size, 100.0, plan.burst_s)
        results, trials = [], 0

        def clean(n):
            nonlocal trials
            trials += 1
            return all(row["lost"] == 0 for row in self.trial("back-to-back", flows, size, 100.0, n))

        for _ in range(plan.burst_trials):
            results.append(search_burst(clean, longest, results[-1] if results else None))
        avg = sum(results) / len(results)
        return [self._record(flows, flow, size, frames=avg, min_frames=min(results), max_frames=max(results),
                             burst_s=avg / theoretical_fps(size, MIN_IFG), longest_tried=longest,
                             at_limit=min(results) == longest, repetitions=len(results), trials=trials)
                for flow in flows]


def search_rate(passes, resolution: float) -> tuple[float, float]:
    """(lo, hi): the highest rate (% of line rate) found to pass and the lowest found to fail, by
    binary search from line rate down to a bracket of `resolution`; lo 0 when nothing passed (0 %
    is never tried), hi 100 when line rate passed (then lo is 100 too)."""
    if passes(100.0):
        return 100.0, 100.0
    lo, hi = 0.0, 100.0
    while hi - lo > resolution:
        mid = round((lo + hi) / 2, 6)
        lo, hi = (mid, hi) if passes(mid) else (lo, mid)
    return lo, hi


def search_burst(clean, longest: int, previous: int | None = None) -> int:
    """The longest burst (frames) for which clean(n) holds, up to `longest`, to one frame. With the
    previous repetition's answer, that answer and one frame more are tried first, and the full binary
    search runs only when they do not confirm it."""
    if previous == longest:
        if clean(longest):
            return longest
    elif previous is not None and (previous == 0 or clean(previous)) and not clean(previous + 1):
        return previous
    elif clean(longest):
        return longest
    lo, hi = 0, longest          # lo passes (0 trivially), hi fails
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if clean(mid) else (lo, mid)
    return lo


def forwarding(latency: list[dict]) -> str:
    """Store-and-forward or cut-through (RFC 1242 3.8) from the slope over size of the smallest latency
    of the trials: a frame that finds the queue empty. The mean at the throughput rate includes
    queueing, which need not grow with size."""
    pts = [(r["size_bytes"], r["min_ns"]) for r in latency if r.get("fifo_ns") is not None]
    if len({p[0] for p in pts}) < 2:
        return "unknown"
    return forwarding_mode(linear_fit([p[0] for p in pts], [p[1] for p in pts])["slope"])


def run(benches: Bench | list[Bench], tests: list[str], out: Path, meta: dict) -> dict:
    """The chosen benchmarks over every group of flows (each direction in turn, or both at once) and
    size; results.json rewritten after each. On several benches (identical twins) the groups and sizes
    are shared out, one on each at once (measure.shared_out), their records kept in the same order."""
    benches = benches if isinstance(benches, list) else [benches]
    plan = benches[0].plan
    records = ("throughput", "latency", "loss", "back_to_back", "learning")
    results = {"meta": meta, "tests": tests, **{key: [] for key in records}}
    units = [(flows, size) for flows in plan.groups() for size in plan.sizes]

    def measure(bench: Bench, i: int) -> dict:
        flows, size = units[i]
        part = {key: [] for key in records}
        for flow in flows:
            part["learning"].append({"tx_port": flow[0], "rx_port": flow[1], "size_bytes": size,
                                     "sent": bench.learn(flow, size)})
        if "throughput" in tests or "latency" in tests:
            part["throughput"] = bench.throughput(flows, size)
        if "latency" in tests:
            rate = part["throughput"][0]["throughput_percent"]
            part["latency"] = (bench.latency(flows, size, rate, part["throughput"]) if rate
                               else [Bench._record(flows, flow, size, rate_percent=None, fifo_ns=None, trials=0)
                                     for flow in flows])
        if "loss" in tests:
            part["loss"] = bench.loss(flows, size)
        if "back-to-back" in tests:
            part["back_to_back"] = bench.back_to_back(flows, size)
        return part

    def write(i: int, part: dict) -> None:
        for key, records in part.items():
            results[key] += records
        write_json_atomic(out / "results.json", finish(results))

    shared_out(benches, len(units), measure, write)
    return finish(results)


def finish(results: dict) -> dict:
    """Forwarding mode per direction from the latency trials, and each latency's RFC 1242 figure."""
    for direction in {(r["tx_port"], r["rx_port"]) for r in results["latency"]}:
        rows = [r for r in results["latency"] if (r["tx_port"], r["rx_port"]) == direction]
        mode = forwarding(rows)
        for r in rows:
            r["mode"] = mode
            r["rfc1242"] = rfc1242_latency(mode)
            r["rfc1242_ns"] = rfc1242_value(mode, r.get("fifo_ns"), r.get("lifo_ns"))
    return results


# ---- report ----------------------------------------------------------------------------------------

def path_text(r: dict) -> str:
    """The path of a record; "(both ways)" where the way back carried traffic at the same time."""
    return f"{r['tx_port']}→{r['rx_port']}" + (" (both ways)" if r.get("bidirectional") else "")


def tables(results: dict) -> str:
    """The RFC 2544 section 26 report tables, Markdown."""
    f = number_text
    meta = results["meta"]
    lines = [f"RFC 2544 on {meta['target']}, {meta['proto']}: {meta['trial_note']}", ""]
    if meta.get("directions_note"):        # --directions both on a build with one direction
        lines += [f"One direction only: {meta['directions_note']}.", ""]
    if meta["plan"].get("bidirectional"):
        lines += ["Bidirectional traffic (RFC 2544 section 14): both ways at once, the same load offered each way; "
                  "a trial passes only if neither way loses more than allowed. Rates are per direction; the "
                  "aggregate is twice the frames/s and Mb/s shown.", ""]
    if results["throughput"]:
        lines += ["Throughput (26.1): highest offered load with "
                  + ("no loss" if meta["plan"]["accept_loss_percent"] == 0
                     else f"at most {meta['plan']['accept_loss_percent']:g} % loss (partial-drop rate)")
                  + f"; binary search to {meta['plan']['resolution_percent']:g} % of line rate, the throughput lies "
                  "in [throughput, failed at).", "",
                  "| path | size (B) | throughput (% line) | failed at (%) | frames/s | Mb/s (frame bits) | "
                  "line rate (frames/s) | trials |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for r in results["throughput"]:
            lines.append(f"| {path_text(r)} | {r['size_bytes']} | {f(r['throughput_percent'], '.3f')} | "
                         f"{f(r['failed_at_percent'], '.3f')} | {f(r['frames_per_s'], '.0f')} | {f(r['mbps'], '.1f')} | "
                         f"{theoretical_fps(r['size_bytes'], MIN_IFG):.0f} | {r['trials']} |")
        lines.append("")
    if results["latency"]:
        lines += ["Latency (26.2) at the throughput rate: mean over all frames of a trial, averaged over the "
                  "trials; RFC 1242 column LIFO for store-and-forward, FIFO otherwise (never a negative LIFO); "
                  "stamps resolve ±4 ns (so a stdev between trials lies within 4 ns of the trials' own: each trial "
                  "mean's error lies within one 8 ns tick); jitter = |latency change| between consecutive frames (RFC 4689).", "",
                  "| path | size (B) | rate (%) | FIFO (ns) | LIFO (ns) | RFC 1242 (ns) | stdev between trials (ns) | "
                  "min (ns) | max (ns) | jitter mean / max (ns) | frames | trials | mode |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
        for r in results["latency"]:
            lifo = r.get("lifo_ns")
            lines.append(f"| {path_text(r)} | {r['size_bytes']} | {f(r['rate_percent'], '.3f')} | {f(r['fifo_ns'])} | "
                         f"{f(lifo if lifo is not None and lifo >= 0 else None)} | {f(r.get('rfc1242_ns'))} | "
                         f"{f(r.get('trial_stdev_ns'))} | {f(r.get('min_ns'))} | {f(r.get('max_ns'))} | "
                         f"{f(r.get('jitter_mean_ns'))} / {f(r.get('jitter_max_ns'))} | "
                         f"{r.get('frames', 0)} | {r['trials']} | {r.get('mode', '-')} |")
        with_pct = [r for r in results["latency"] if r.get("percentiles")]
        if with_pct:
            lines += ["", "Latency percentiles (nearest rank, FIFO) over every frame of the latency trials, from the "
                          "receiver's histogram set over the range the throughput trial showed: the middle of the "
                          "bin that holds each (narrowed by the exact min and max), ± half its width plus the "
                          "stamps' ±4 ns; PDV (RFC 5481) = percentile − min, ± 4 ns more.", "",
                      "| path | size (B) | bin (ns) | p50 (ns) | p90 (ns) | p99 (ns) | p99.9 (ns) | PDV p99.9 (ns) | "
                      "outside the bins |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
            for r in with_pct:
                cells = [percentile_text(q) for q in r["percentiles"]]
                pdv = r["pdv_ns"][-1]
                h = r["histogram"]
                lines.append(f"| {path_text(r)} | {r['size_bytes']} | {bins_text(h)} | {' | '.join(cells)} | "
                             f"{percentile_text(pdv)} | {h['below'] + h['above']} |")
        lines.append("")
    if results["loss"]:
        lines += ["Frame loss rate (26.3): ((sent - received) / sent) × 100 per offered load, from line rate down "
                  "until two successive trials lose nothing.", "",
                  "| path | size (B) | offered (% line) | sent | lost | loss (%) |", "|---|---:|---:|---:|---:|---:|"]
        for r in results["loss"]:
            for p in r["points"]:
                lines.append(f"| {path_text(r)} | {r['size_bytes']} | {p['rate_percent']:g} | {p['tx_frames']} | "
                             f"{p['lost']} | {p['loss_percent']:.3f} |")
        lines.append("")
    if results["back_to_back"]:
        lines += ["Back-to-back frames (26.4): longest burst at minimum gap (96 ns) with no loss, searched to one "
                  "frame and averaged over the repetitions; '≥' where the longest burst tried passed.", "",
                  "| path | size (B) | frames (mean) | min | max | burst (µs) | repetitions | trials |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for r in results["back_to_back"]:
            at = "≥ " if r["at_limit"] else ""
            lines.append(f"| {path_text(r)} | {r['size_bytes']} | {at}{r['frames']:.1f} | {r['min_frames']} | "
                         f"{r['max_frames']} | {at}{r['burst_s'] * 1e6:.2f} | {r['repetitions']} | {r['trials']} |")
        lines.append("")
    skipped = [r for r in results["learning"] if not r["sent"]]
    if skipped and meta["plan"]["learning_frames"]:
        lines.append("note: no learning frames on " + ", ".join(sorted({path_text(r) for r in skipped}))
                     + ": the receiving port has no generator in this build")
    return "\n".join(lines).rstrip() + "\n"


def plot(out: Path, results: dict) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from fpgatest.output import save

    written = []
    paths = sorted({(r["tx_port"], r["rx_port"]) for key in ("throughput", "latency", "loss", "back_to_back")
                    for r in results[key]})

    def rows(key, path):
        return [r for r in results[key] if (r["tx_port"], r["rx_port"]) == path]

    if results["throughput"]:
        fig, ax = plt.subplots(figsize=(7, 4.5))
        sizes = sorted({r["size_bytes"] for r in results["throughput"]})
        ax.plot(sizes, [theoretical_fps(s, MIN_IFG) for s in sizes], "k--", label="line rate")
        for path in paths:
            rs = [r for r in rows("throughput", path) if r["frames_per_s"]]
            ax.plot([r["size_bytes"] for r in rs], [r["frames_per_s"] for r in rs], "o-",
                    label=f"throughput {path[0]}→{path[1]}")
        ax.set_xlabel("frame size (bytes)")
        ax.set_ylabel("frames per second")
        ax.set_yscale("log")
        ax.set_title("RFC 2544 throughput")
        ax.legend()
        written.append(save(fig, ax, out / "throughput.png"))
    if any(r.get("fifo_ns") is not None for r in results["latency"]):
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for path in paths:
            rs = [r for r in rows("latency", path) if r.get("fifo_ns") is not None]
            ax.errorbar([r["size_bytes"] for r in rs], [r["fifo_ns"] for r in rs],
                        yerr=[[r["fifo_ns"] - r["min_ns"] for r in rs], [r["max_ns"] - r["fifo_ns"] for r in rs]],
                        fmt="o-", capsize=3, label=f"FIFO {path[0]}→{path[1]} (bars: min..max)")
        ax.set_xlabel("frame size (bytes)")
        ax.set_ylabel("latency (ns)")
        ax.set_title("RFC 2544 latency at the throughput rate")
        ax.legend()
        written.append(save(fig, ax, out / "latency.png"))
    if results["loss"]:
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for r in results["loss"]:
            ax.plot([p["rate_percent"] for p in r["points"]], [p["loss_percent"] for p in r["points"]], "o-",
                    label=f"{r['size_bytes']} B {path_text(r)}")
        ax.set_xlabel("offered load (% of line rate)")
        ax.set_ylabel("frame loss rate (%)")
        ax.set_title("RFC 2544 frame loss rate")
        ax.legend(fontsize="small")
        written.append(save(fig, ax, out / "loss.png"))
    if results["back_to_back"]:
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for path in paths:
            rs = rows("back_to_back", path)
            ax.plot([r["size_bytes"] for r in rs], [r["frames"] for r in rs], "o-", label=f"{path[0]}→{path[1]}")
        ax.set_xlabel("frame size (bytes)")
        ax.set_ylabel("longest lossless burst (frames)")
        ax.set_yscale("log")
        ax.set_title("RFC 2544 back-to-back frames")
        ax.legend()
        written.append(save(fig, ax, out / "back_to_back.png"))
    return written
