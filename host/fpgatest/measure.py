# SPDX-License-Identifier: BSD-2-Clause
"""Measurement campaigns over a Tester: the thesis sweep, a single stream, cable calibration."""

import math
import time
from dataclasses import dataclass, field

from fpgatest.analysis import (BYTE_NS, combine_latency, linear_fit, percentiles, size_fits, theoretical_fps,
                               time_series_fit)
from fpgatest.driver import LAT_UNITS_PER_TICK, TICK_NS
from fpgatest.output import ResultsDir, write_json_atomic
from fpgatest.tester import SettingError, Stream, Tester, lat_ns

RFC2544_SIZES = [64, 128, 256, 512, 1024, 1280, 1518]
SPEED_OF_LIGHT_M_PER_NS = 0.299792458


def parse_sizes(text: str, smallest: int = 64) -> list[int]:
    """rfc2544 | 64,128,... | START:STOP:STEP (STOP included). rfc2544 starts at `smallest`, the
    protocol's minimum frame (84 B for IPv6 with the signature), instead of 64 where that is larger."""
    text = text.strip()
    try:
        if text == "rfc2544":
            return [smallest] + [s for s in RFC2544_SIZES if s > smallest]
        if ":" in text:
            start, stop, step = (int(v) for v in text.split(":"))
            if step <= 0 or stop < start:
                raise ValueError
            return list(range(start, stop + 1, step))
        sizes = [int(v) for v in text.split(",") if v.strip()]
        if not sizes:
            raise ValueError
        return sizes
    except ValueError:
        raise SettingError(f"bad size list {text!r}: use rfc2544, 64,128,... or START:STOP:STEP") from None


@dataclass
class SweepPlan:
    proto: str
    sizes: list[int]
    ifg: int
    rate_percent: float | None
    duration_s: float
    interval_s: float
    tx_port: int = 0
    rx_port: int = 1
    drain_s: float = 0.0005
    percentiles: bool = True                             # histogram over the latency range, once it settles
    hist_scale: str = "auto"                             # the histogram's bins: "linear", "log" or "auto" (histogram_setting)
    vlan: int | None = None                              # 802.1Q TCI, or no tag
    extra: dict = field(default_factory=dict)            # further generator registers (addresses)

    def interval_ticks(self) -> int:
        return round(self.interval_s / (TICK_NS * 1e-9))

    def streams(self) -> list[Stream]:
        out = [Stream(proto=self.proto, size=s, ifg=self.ifg, rate_percent=self.rate_percent, vlan=self.vlan,
                      extra=dict(self.extra)) for s in self.sizes]
        for s in out:
            s.check()  # every size is checked before anything is sent
        if self.interval_s <= 0 or self.duration_s < self.interval_s:
            raise SettingError("need 0 < --interval <= --duration")
        return out


def _interval_row(size: int, index: int, t0_ticks: int, prev: dict, cur: dict, plan: SweepPlan, gap: float) -> dict:
    rx_p, tx_p = cur["ports"][plan.rx_port], cur["ports"][plan.tx_port]
    rx_q, tx_q = prev["ports"][plan.rx_port], prev["ports"][plan.tx_port]
    dt = (cur["time_ticks"] - prev["time_ticks"]) * TICK_NS * 1e-9
    rx_frames = rx_p["test_frames"] - rx_q["test_frames"]
    n = rx_p["lat_count"] - rx_q["lat_count"]
    lat = Tester.latency_summary({**rx_p, "lat_count": n})
    return {
        "size_bytes": size, "interval": index,
        "t_start_s": (prev["time_ticks"] - t0_ticks) * TICK_NS * 1e-9, "duration_s": dt,
        "tx_frames": tx_p["tx_frames"] - tx_q["tx_frames"], "rx_frames": rx_frames,
        "rx_fps": rx_frames / dt if dt > 0 else 0.0, "theoretical_fps": theoretical_fps(size, gap),
        "lat_count": n, "latency_min_ns": lat["min"], "latency_mean_ns": lat["mean"],
        "latency_max_ns": lat["max"], "latency_stdev_ns": lat["stdev"],
        "lat_sum_ns": lat_ns(rx_p["lat_sum"]), "lat_sumsq_ns2": rx_p["lat_sumsq"] * (TICK_NS / LAT_UNITS_PER_TICK) ** 2,
        "jit_sum_ns": lat_ns(rx_p["jit_sum"]), "jitter_max_ns": lat["jitter_max"],
    }


def _record_snapshot(record: dict, n_ports: int) -> dict:
    """An interval record in the shape of Tester.snapshot: {'time_ticks', 'ports': [per-port dict]}."""
    ports = [{} for _ in range(n_ports)]
    for name, value in record.items():
        head, _, field_name = name.partition("_")
        if head.startswith("port") and head[4:].isdigit():
            ports[int(head[4:])][field_name] = value
    return {"time_ticks": record["time"], "ports": ports}


OUTSIDE_MAX = 0.001   # latencies of an interval outside the bins beyond which the bins follow (p99.9 inside)
NARROW_BY = 4         # bins this many times narrower than those set fit the latency: set them again ...
NARROW_AFTER = 3      # ... once this many intervals in a row were binned wholly inside the bins set


def histogram_range(rows: list[dict]) -> tuple[float, float]:
    """The intervals' latency range, a quarter of it (at least 8 ns) beyond each side: what the bins cover."""
    lo = min(r["latency_min_ns"] for r in rows if r["lat_count"])
    hi = max(r["latency_max_ns"] for r in rows if r["lat_count"])
    margin = max(8.0, 0.25 * (hi - lo))
    return max(0.0, lo - margin), hi + margin


LOG_WHEN = 16         # "auto": logarithmic bins when the mean lies in the first 1/LOG_WHEN of the range


def histogram_setting(rows: list[dict], scale: str = "auto") -> tuple[float, float, bool]:
    """(low_ns, high_ns, log): what the bins are set to cover over `rows` (intervals). Linear bins
    cover histogram_range. Logarithmic bins start a tick below the smallest latency, where their
    finest bins are, and reach a quarter of the range beyond the largest; they are taken when asked
    or, with "auto", for a heavy-tailed latency: its mean within the first 1/LOG_WHEN of the range,
    where 64 linear bins would give most frames only a few bins (each log bin is at most a quarter
    of its distance from the base wide, so the bulk and the tail are both resolved)."""
    if scale not in ("auto", "linear", "log"):
        raise SettingError(f"histogram scale {scale!r}: auto, linear or log")
    with_lat = [r for r in rows if r["lat_count"]]
    lo = min(r["latency_min_ns"] for r in with_lat)
    hi = max(r["latency_max_ns"] for r in with_lat)
    mean = sum(r["latency_mean_ns"] * r["lat_count"] for r in with_lat) / sum(r["lat_count"] for r in with_lat)
    if scale == "log" or (scale == "auto" and (mean - lo) * LOG_WHEN < hi - lo):
        return max(0.0, lo - TICK_NS), hi + max(TICK_NS, 0.25 * (hi - lo)), True
    return (*histogram_range(rows), False)


class _Bins:
    """Where the histogram's bins are set during a size's intervals, and from which interval on the
    frames are binned wholly over the bins last set (judged_from; the caller sets it after a setting:
    it knows when the setting takes effect)."""

    def __init__(self, plan: SweepPlan):
        self.plan = plan
        self.hist = None          # what was set last (Tester.set_histogram)
        self.judged_from = 0
        self.narrowed = False
        self.may_narrow = True

    def due(self, rows: list[dict], prev: dict, cur: dict, row: dict, room=lambda: True) -> list[dict] | None:
        """The intervals to set the bins over (set()), where one of these holds for this interval (row,
        after rows); else None. The bins are set again (moved or narrowed) only where room() says an
        interval would still be binned wholly over the new setting: else the bins last set stay, holding
        the intervals judged since with the frames outside them counted as such, where a setting would
        clear them and bin nothing (a run that moved or narrowed its bins in its last intervals had no
        percentiles at all).
        - The first interval with latencies.
        - Moved: an interval binned wholly over the bins last set with more than OUTSIDE_MAX of its
          latencies outside them (the event counters hist_below/hist_above between its two snapshots):
          the bins no longer describe the latency, as while a queue fills or drains; set over it.
        - Narrowed: the last NARROW_AFTER intervals binned wholly over them (each inside them, or the
          bins would have moved) fit bins NARROW_BY times narrower: the latency settled inside a range
          set while it moved; set over those intervals. Bins that move again after narrowing stay as
          set (no more narrowing): a latency that comes and goes in bursts keeps its bursts in the
          percentiles."""
        if not self.plan.percentiles or not row["lat_count"]:
            return None
        judged = [r for r in (*rows, row) if r["interval"] >= self.judged_from]
        if self.hist is None:
            over, narrowing = [row], None
        elif not judged or judged[-1] is not row:
            return None
        elif self._outside(prev, cur) > OUTSIDE_MAX * row["lat_count"]:
            over, narrowing = [row], False
        elif self.may_narrow and len(judged) >= NARROW_AFTER and self._narrower(judged[-NARROW_AFTER:]):
            over, narrowing = judged[-NARROW_AFTER:], True
        else:
            return None
        if narrowing is not None and not room():
            return None
        if narrowing is False:
            self.may_narrow = not self.narrowed
        elif narrowing:
            self.narrowed = True
        return over

    def set(self, tester: Tester, over: list[dict]) -> None:
        self.hist = tester.set_histogram(self.plan.rx_port, *histogram_setting(over, self.plan.hist_scale))

    def _outside(self, prev: dict, cur: dict) -> int:
        p, q = cur["ports"][self.plan.rx_port], prev["ports"][self.plan.rx_port]
        return (p["hist_below"] - q["hist_below"]) + (p["hist_above"] - q["hist_above"])

    def _narrower(self, rows: list[dict]) -> bool:
        _, shift = Tester.histogram_bins(*histogram_setting(rows, self.plan.hist_scale))
        return lat_ns(1 << shift) * NARROW_BY <= self.hist["bin_ns"]


def _binned(hist: dict, counts: list[int], first: dict, last: dict, rows: list[dict], from_interval: int) -> dict | None:
    """The histogram record over rows[from_interval:]: its bins, and the frames below and above them
    (event counters, which the clears leave: the difference of the port snapshots `first` and `last`
    at that span's ends); None when those intervals hold no latency."""
    binned = rows[from_interval:]
    if not any(r["lat_count"] for r in binned):
        return None
    return {**hist, "counts": counts, "below": last["hist_below"] - first["hist_below"],
            "above": last["hist_above"] - first["hist_above"], "from_interval": from_interval,
            "frames": sum(r["lat_count"] for r in binned),
            "min_ns": min(r["latency_min_ns"] for r in binned if r["lat_count"]),
            "max_ns": max(r["latency_max_ns"] for r in binned if r["lat_count"])}


def record_intervals(tester: Tester, plan: SweepPlan, stream: Stream, gap: float, keep):
    """Intervals timed by the gateware (the interval recorder): edge 0 now, then one every
    plan.interval_s of tester time, round(duration / interval) intervals, each exactly as long. The
    host only drains the ring. Percentiles: the first interval's latency range sets the histogram's
    bins; edges up to one the host is sure comes after that setting clear it, the later ones let it
    add up, and it is read once, as the last edge latched it. Where a later interval, binned wholly
    over that range, has more than OUTSIDE_MAX of its latencies outside it (a queue filling or
    draining), the bins follow: set again over that interval, cleared again from the next edge, so
    the percentiles describe the latency as it settled; and where it settled in a range far narrower
    than the bins, they narrow (_Bins.due). keep(row) takes each row as it comes.
    Returns the rows and the histogram (or None)."""
    rx = plan.rx_port
    ring = tester.intervals()
    period = plan.interval_ticks()
    count = max(1, round(plan.duration_s / plan.interval_s))
    ring.start(period, count)
    poll_s = min(0.2, max(0.005, period * TICK_NS * 1e-9 / 4))
    patience_s = 60.0 + 100 * period * TICK_NS * 1e-9        # wall time for one record
    records, snaps, rows, bins = [], [], [], _Bins(plan)
    deadline = time.monotonic() + patience_s
    while len(records) < count + 1:
        got, status = ring.drain()
        if status["lost"]:
            raise RuntimeError(f"{status['lost']} interval record(s) lost: the host read the recorder's ring "
                               f"({ring.depth} records) too slowly for --interval {plan.interval_s:g} s over "
                               f"{tester.dev.url}; take a longer interval")
        for record in got:
            if record["index"] != len(records):
                raise RuntimeError(f"interval record {record['index']} where {len(records)} was due")
            records.append(record)
            snaps.append(_record_snapshot(record, tester.n_ports))
            if len(records) < 2:
                continue
            row = _interval_row(stream.size, len(rows), records[0]["time"], snaps[-2], snaps[-1], plan, gap)
            # room: the edge after the setting (the last to clear) before the run's last edge
            if over := bins.due(rows, snaps[-2], snaps[-1], row, lambda: ring.status()["written"] + 2 <= count):
                ring.keep_histogram_after(0xFFFFFFFF)           # every edge clears while the bins change
                bins.set(tester, over)
                # edges so far are at most `written` (one may be copying): the one after is after the
                # setting, and clears last
                bins.judged_from = ring.status()["written"] + 1
                ring.keep_histogram_after(bins.judged_from)
            rows.append(row)
            keep(row)
            deadline = time.monotonic() + patience_s
        if len(records) < count + 1:
            if time.monotonic() > deadline:
                raise TimeoutError(f"interval record {len(records)} of {count} not written in time")
            time.sleep(poll_s)
    if not bins.hist:
        return rows, None
    # the bins hold the frames after the last edge that cleared them, up to the last edge
    cleared = max(i for i, r in enumerate(records) if r["flags"] & 1)
    return rows, _binned(bins.hist, tester.histogram(rx), snaps[cleared]["ports"][rx], snaps[count]["ports"][rx],
                         rows, cleared)


def poll_intervals(tester: Tester, plan: SweepPlan, stream: Stream, gap: float, keep):
    """Intervals timed by the host, for a build without the interval recorder (the default 5A-75B):
    one snapshot-and-clear per interval, each at one clock edge on both ports, but the intervals are
    as long as the host's polling makes them (each row has its exact duration). Percentiles: the
    first interval's range sets the bins; the second has frames binned before and after that, so the
    bins are read and summed from the third on. Where an interval summed has more than OUTSIDE_MAX of
    its latencies outside the bins, or the latency settled far inside them, they follow as in
    record_intervals: set again, and summed again from the second interval after it. keep(row) takes
    each row as it comes. Returns the rows and the histogram (or None)."""
    rx = plan.rx_port
    bins, counts = _Bins(plan), None
    rows = []
    prev = first_binned = tester.snapshot(clear_stats=True)
    t0 = prev["time_ticks"]
    end = t0 + round(plan.duration_s / (TICK_NS * 1e-9))
    while prev["time_ticks"] < end:
        tester.wait_ticks(min(plan.interval_ticks(), end - prev["time_ticks"]))
        cur = tester.snapshot(clear_stats=True)
        row = _interval_row(stream.size, len(rows), t0, prev, cur, plan, gap)
        # room: the interval after next (the first summed after a setting) is still to come, whole
        if over := bins.due(rows, prev, cur, row, lambda: end - cur["time_ticks"] >= 2 * plan.interval_ticks()):
            bins.set(tester, over)
            bins.judged_from, counts = len(rows) + 2, None
        elif bins.hist and len(rows) >= bins.judged_from:   # the snapshot latched this interval's bins and cleared them
            first_binned = prev if counts is None else first_binned
            counts = [a + b for a, b in zip(counts or [0] * bins.hist["bins"], tester.histogram(rx))]
        rows.append(row)
        keep(row)
        prev = cur
    if counts is None:
        return rows, None
    return rows, _binned(bins.hist, counts, first_binned["ports"][rx], prev["ports"][rx], rows, bins.judged_from)


def measure_size(tester: Tester, plan: SweepPlan, stream: Stream, results: ResultsDir | None, on_sample=None):
    """One size: stream for plan.duration_s (tester time) in intervals (timed by the gateware where the
    build has the interval recorder), then exact totals."""
    tx, rx = plan.tx_port, plan.rx_port
    if not 0 <= rx < tester.n_ports or not tester.has(rx, "rx"):
        raise SettingError(f"port {rx} has no receiver in this build")
    recorder = tester.has_intervals()
    if recorder:
        tester.intervals().check_period(plan.interval_ticks())   # before anything is sent

    def keep(row):
        if results:
            results.add_sample(row)
        if on_sample:
            on_sample(row)

    tester.clear()
    tester.configure(tx, stream)
    gap = stream.frame_period_bytes() - stream.size - 8
    tester.start(tx)
    try:
        samples, histogram = (record_intervals if recorder else poll_intervals)(tester, plan, stream, gap, keep)
    finally:
        if recorder:
            tester.intervals().stop()
        tester.stop(tx)
    final = drain(tester, [rx], plan.drain_s)
    p_rx, p_tx = final["ports"][rx], final["ports"][tx]
    sent = p_tx["tx_frames"]
    received = p_rx["seq_received"]
    lost = frames_lost(p_rx, stream.seq_start, sent)
    lat = combine_latency(samples)
    # the rate over the intervals after the first: the first begins as the first frame is sent, so it
    # holds the device's latency's worth of frames fewer (1518 B through 1 us store-and-forward: 1.07)
    rated = samples[1:] if len(samples) > 1 else samples
    window = sum(s["duration_s"] for s in rated)
    rx_fps = sum(s["rx_frames"] for s in rated) / window if window else 0.0
    theo = theoretical_fps(stream.size, gap)
    record = {
        "size_bytes": stream.size, "ifg_bytes": gap,
        "latency_ns": lat,
        # RFC 1242/4689: LIFO = FIFO - frame time; LILO = FIFO (the frame leaves at the rate it came);
        # FILO = FIFO + frame time
        "latency_lifo_ns": {k: (None if lat[k] is None else lat[k] - BYTE_NS * stream.size)
                            for k in ("min", "mean", "max")},
        "latency_filo_ns": {k: (None if lat[k] is None else lat[k] + BYTE_NS * stream.size)
                            for k in ("min", "mean", "max")},
        "frames": {"tx": sent, "rx": received, "lost": lost, "reordered": p_rx["seq_late"],
                   "duplicate": p_rx["seq_duplicate"], "stale": p_rx["seq_stale"],
                   "foreign": p_rx["foreign"], "fcs_errors": p_rx["fcs_errors"],
                   "other_stream": p_rx["other_stream"]},
        "drop_rate": lost / sent if sent else 0.0,
        "rx_fps": rx_fps, "theoretical_fps": theo,
        "drop_rate_vs_theoretical": max(0.0, 1 - rx_fps / theo) if theo else 0.0,
        # a window holds a whole number of frames: at a steady rate, within one frame of rate x window
        "drop_rate_vs_theoretical_resolution": 1 / (theo * window) if theo and window else None,
        "rate_from_interval": len(samples) - len(rated),
        "trend": time_series_fit(samples),
        "loss_events": tester.loss_events(rx, limit=LOSS_EVENTS_KEPT + 1),
    }
    record["histogram"] = record["percentiles"] = None
    if histogram:
        lo, hi = histogram.pop("min_ns"), histogram.pop("max_ns")
        record["histogram"] = histogram
        record["percentiles"] = percentiles(histogram["counts"], histogram["edges_ns"], histogram["below"],
                                            histogram["above"], lo, hi)
    record["sequence"] = sequence_categories(p_rx, lost, record["loss_events"])
    record["loss_events"] = record["loss_events"][:LOSS_EVENTS_KEPT]
    if results:
        results.add_size(record)
    return record, samples


def drain(tester: Tester, rxs: list[int], drain_s: float) -> dict:
    """After a stream: wait drain_s of tester time, and again while frames still arrive on any of the
    ports rxs (the device under test empties its queues), then retire their sequence trackers' windows
    (gaps become losses). Returns the final snapshot: counters read after the paths are empty, no
    phantom loss."""
    last = None
    while True:
        tester.wait_ticks(max(1, round(drain_s / (TICK_NS * 1e-9))))
        counters = tester.dev.counters_now(rxs)
        now = [counters[f"port{rx}_stat_test_frames"] for rx in rxs]
        if now == last:
            break
        last = now
    for rx in rxs:
        tester.flush(rx)
    return tester.snapshot()


def send_and_drain(tester: Tester, flows: list[tuple[int, int]], streams: list[Stream], drain_s: float,
                   timeout_s: float) -> dict:
    """Clear, send each flow's counted stream from its TX port, all at once (one flow, or both ways; all
    are stopped if a start or a wait fails or is interrupted), then drain every RX port: the snapshot
    of a finished trial, read once the paths are empty."""
    tester.clear()
    for (tx, _), stream in zip(flows, streams, strict=True):
        tester.configure(tx, stream)
    try:
        tester.start(*(tx for tx, _ in flows))
        for tx, _ in flows:
            tester.wait_idle(tx, timeout_s=timeout_s)
    except BaseException:
        for tx, _ in flows:
            tester.stop(tx)
        raise
    return drain(tester, [rx for _, rx in flows], drain_s)


def frames_lost(p_rx: dict, seq_start: int, sent: int) -> int:
    """Frames of a stream (numbers seq_start .. seq_start + sent - 1) never received: the tracker's
    gaps, and the numbers before the first or after the highest it saw."""
    if not p_rx["seq_started"]:
        return sent
    head = (p_rx["seq_first_seq"] - seq_start) % (1 << 48)
    tail = (seq_start + sent - p_rx["seq_highest_seq"]) % (1 << 48)
    return head + p_rx["seq_lost"] + tail


LOSS_EVENTS_KEPT = 64   # loss runs (first, length) kept per size in the record


def sequence_categories(p_rx: dict, lost: int, events: list[tuple[int, int]]) -> dict:
    """The tracker's counts under the names RFC 4737 and commercial testers use: in order (a new
    number at or above the highest so far), reordered (a new number below it, inside the window:
    the tracker's "late"), late (older than the window: the tracker's "stale"; its number was
    already retired, so it is also in dropped), duplicate (seen again inside the window), dropped
    (never seen inside the window, plus numbers never reached) and the loss runs (first, length):
    their count and longest, complete only if every run was read and the tracker's event FIFO lost
    none."""
    runs = [length for _, length in events]
    complete = len(events) <= LOSS_EVENTS_KEPT and p_rx.get("seq_event_dropped", 0) == 0
    return {"in_order": p_rx["seq_received"] - p_rx["seq_late"], "reordered": p_rx["seq_late"],
            "late": p_rx["seq_stale"], "duplicate": p_rx["seq_duplicate"], "dropped": lost,
            "loss_runs": {"count": len(runs) if complete else None, "longest": max(runs) if runs and complete else
                          (0 if complete else None), "read": min(len(runs), LOSS_EVENTS_KEPT), "complete": complete}}


def summarize(meta: dict, samples: list[dict], sizes: list[dict]) -> dict:
    """Sweep summary from its samples and per-size records (each record carries its own trend)."""
    summary = {
        "proto": meta["proto"], "tester": meta.get("tester", {}), "settings": meta.get("settings", {}),
        "sizes": sizes, "fit": size_fits(sizes, samples),
    }
    if meta.get("stopped_at") is not None:
        summary["stopped_at"] = meta["stopped_at"]
    return summary


def sweep(testers: Tester | list[Tester], plan: SweepPlan, results: ResultsDir, progress=None) -> dict:
    """The sizes one after another on one tester; on several (identical twins, a process each) a size to
    each tester that is free, each measured as it would be alone (shared_out). Records are written in
    size order: on one tester each row as it comes, on several each size's rows once it and every
    smaller size are done. A stop, or a size that fails, keeps every size finished."""
    testers = testers if isinstance(testers, list) else [testers]
    streams = plan.streams()
    meta, written = {}, []              # written: the indices of the sizes written
    samples, sizes = [], []

    def write(i: int, result: tuple[dict, list[dict]]) -> None:
        record, rows = result
        if len(testers) > 1:            # one tester wrote them as they came
            for row in rows:
                results.add_sample(row)
            results.add_size(record)
        samples.extend(rows)
        sizes.append(record)
        written.append(i)
        write_json_atomic(results.path / "summary.json", summarize(meta, samples, sizes))

    def measure(tester: Tester, i: int) -> tuple[dict, list[dict]]:
        if progress:
            progress.start_size(streams[i].size)
        result = measure_size(tester, plan, streams[i], results if len(testers) == 1 else None,
                              on_sample=progress.sample if progress else None)
        if progress:
            progress.end_size(streams[i].size)
        return result

    try:
        meta.update(results_meta(testers[0], plan, len(testers)))
        write_json_atomic(results.path / "run.json", meta)
        shared_out(testers, len(streams), measure, write)
    except BaseException:
        unfinished = [s.size for i, s in enumerate(streams) if i not in written]
        meta["stopped_at"] = {"size_bytes": unfinished[0] if unfinished else None,
                              "finished_sizes": [s["size_bytes"] for s in sizes]}
        write_json_atomic(results.path / "run.json", meta)
        if sizes:
            write_json_atomic(results.path / "summary.json", summarize(meta, samples, sizes))
        raise
    finally:
        results.close()
    return summarize(meta, samples, sizes)


def shared_out(testers: list, count: int, measure, write) -> None:
    """Units 0..count-1 of a campaign (a sweep's sizes, RFC 2544's) on several testers at once (identical
    twins): a thread per tester takes the next unit no one has taken, measure(tester, i) -> its result,
    and this thread calls write(i, result) in the units' order, each as soon as the units before it are
    written. On a failure, or a stop signal (which this thread takes; the others meet it as an error of
    their next register access, fpgatest.stop), no unit is started after it, the units under way run to
    their end, every unit finished is written (in order, past the gaps) and the first failure raised.
    On one tester the units run in this thread, in order, each written as it ends."""
    import threading

    if len(testers) == 1:
        for i in range(count):
            write(i, measure(testers[0], i))
        return

    changed, failed, ending, done = threading.Condition(), [], [], {}
    untaken = list(range(count))

    def work(tester) -> None:
        while True:
            with changed:
                if failed or ending or not untaken:
                    return
                i = untaken.pop(0)
            try:
                result = measure(tester, i)
            except BaseException as err:
                with changed:
                    failed.append(err)
                    changed.notify()
                return
            with changed:
                done[i] = result
                changed.notify()

    threads = [threading.Thread(target=work, args=(t,), name=f"shared-out-{n}", daemon=True)
               for n, t in enumerate(testers)]
    for thread in threads:
        thread.start()
    written = 0
    try:
        while written < count:
            with changed:
                while written not in done and not failed:
                    changed.wait(0.5)   # a timeout, so that a signal is taken while waiting
                if failed:
                    break
            write(written, done[written])
            written += 1
    finally:
        with changed:
            ending.append(True)         # nothing is started after a failure or a stop
        for thread in threads:
            thread.join()
        for i in sorted(i for i in done if i >= written):
            write(i, done[i])           # finished after the failure, or after a gap
    if failed:
        raise failed[0]


def results_meta(tester: Tester, plan: SweepPlan, testers: int = 1) -> dict:
    """What a sweep's run.json says of it; testers: how many identical twins shared its sizes out."""
    return {
        "proto": plan.proto,
        "settings": {"sizes": plan.sizes, "ifg_bytes": plan.ifg, "rate_percent": plan.rate_percent,
                     "duration_s": plan.duration_s, "interval_s": plan.interval_s,
                     "tx_port": plan.tx_port, "rx_port": plan.rx_port,
                     # who set the sample boundaries: the interval recorder (exactly N ticks) or the
                     # host's polling (each snapshot carries its exact tester time; a build without it)
                     "interval_timer": "gateware" if tester.has_intervals() else "host"},
        "tester": {"url": tester.dev.url, "build_id": tester.dev.map.build_id,
                   "calibration": tester.calibration(),
                   # sizes measured on this many identical twins at once (each size on one of them)
                   **({"twins": testers} if testers > 1 else {})},
        "time_unix": time.time(),
        **({"dut": {"linux_tap_ports": taps, **({"linux": tester.kernel} if tester.kernel else {})}}
           if (taps := tester.tap_ports()) else {}),
    }


# ---- calibration ----------------------------------------------------------------------------------

TWIN_CABLE_NS_PER_M = 4.72  # what the twin's simulated cable does (the thesis' measured UTP value)
TWIN_PHY_NS = 400.0         # the twin's stand-in for two PHYs' latency


def measure_cable(tester: Tester, frames: int, size: int = 64, tx: int = 0, rx: int = 1) -> float:
    """Mean raw latency (ns) of `frames` frames from port tx to port rx with calibration off.

    Frames are spaced (1000-byte gaps) so that each one's arrival phase is its own: back-to-back
    frames would queue behind the latest phase and the sub-tick average would be lost.
    """
    tester.clear()
    tester.configure(tx, Stream(proto="eth", size=size, count=frames, ifg=1000))
    tester.start(tx)
    tester.wait_idle(tx)
    tester.wait_ticks(1000)
    snap = tester.snapshot()
    lat = Tester.latency_summary(snap["ports"][rx])
    if lat["count"] != frames:
        raise RuntimeError(f"calibration: {lat['count']} of {frames} frames came back: check the cable")
    return lat["mean"]


def calibrate(tester: Tester, lengths_m: list[float], frames: int, ask=None) -> dict:
    """Fit delay = a*L + b over cables of known length; on the twin the switch model plays the cable."""
    if len(lengths_m) < 2 or len(set(lengths_m)) < 2:
        raise SettingError("calibration needs at least two different cable lengths")
    if any(length < 0 for length in lengths_m):
        raise SettingError("cable lengths must be >= 0 m")
    if not 1 <= frames < 1 << 32:
        raise SettingError(f"calibration frames {frames} out of range 1..{(1 << 32) - 1}")
    twin = tester.has_dut_model
    # what this changes is put back whatever happens: the calibration registers (the caller writes
    # the result: apply_calibration), the switch model on the twin; a failure stops the generator
    saved = tester.calibration()
    hops = [p for p in tester.dut_paths() if p.startswith("ab")] if twin else []   # port 0 -> 1: ab, ab2
    saved_dut = {p: tester.dut_registers(p) for p in hops}
    tester.set_calibration(0, [0] * tester.n_ports)
    points = []
    try:
        for length in lengths_m:
            if twin:
                tester.dut_set("ab", enable=True, cut_through=True, latency_ns=TWIN_PHY_NS, per_byte_ns=0,
                               rate_mbps=1000, cable_in_ns=TWIN_CABLE_NS_PER_M * length, cable_out_ns=0,
                               dither=True, cross_mbps=0)
                for hop in hops[1:]:
                    tester.dut_set(hop, enable=False)
            elif ask:
                ask(length)
            points.append((length, measure_cable(tester, frames)))
    except BaseException:
        tester.stop(0)
        raise
    finally:
        tester.set_calibration(saved["internal_ns"], saved["cables_ns"])
        for regs in saved_dut.values():
            tester.dut_restore(regs)
    fit = linear_fit([p[0] for p in points], [p[1] for p in points])
    slope = fit["slope"]
    return {
        "points": [{"length_m": p[0], "latency_ns": p[1]} for p in points],
        "ns_per_m": slope, "ns_per_m_se": fit["slope_se"],
        "internal_ns": fit["intercept"], "internal_ns_se": fit["intercept_se"],
        "signal_speed_m_per_s": 1e9 / slope if slope else None,
        "velocity_factor": (1 / slope) / SPEED_OF_LIGHT_M_PER_NS if slope else None,
        "frames_per_point": frames,
    }


def apply_calibration(tester: Tester, cal: dict, port_cables_m: list[float]) -> list[float]:
    """Write the internal delay and each port's cable delay (length * ns/m) into the registers."""
    if len(port_cables_m) != tester.n_ports:
        raise SettingError(f"need one cable length per port ({tester.n_ports}), got {len(port_cables_m)}")
    cables_ns = [length * cal["ns_per_m"] for length in port_cables_m]
    tester.set_calibration(cal["internal_ns"], cables_ns)
    return cables_ns


def check_calibration_file(cal: dict) -> dict:
    def number(v) -> bool:
        return isinstance(v, (int, float)) and not isinstance(v, bool)

    if not isinstance(cal, dict) or "internal_ns" not in cal or "cables_ns" not in cal:
        raise SettingError("calibration file lacks internal_ns / cables_ns")
    internal, cables = cal["internal_ns"], cal["cables_ns"]
    if not number(internal) or not isinstance(cables, list) or not all(number(c) for c in cables):
        raise SettingError("calibration file: internal_ns must be a number and cables_ns a list of numbers")
    internal, cables = float(internal), [float(c) for c in cables]
    if not all(math.isfinite(v) and 0 <= v <= 1e6 for v in [internal, *cables]):
        raise SettingError("calibration values must be finite and in 0..1e6 ns")
    return {"internal_ns": internal, "cables_ns": cables}
