# SPDX-License-Identifier: BSD-2-Clause
"""Results on disk: samples.csv and sizes.jsonl written as they come, summary.json, PNG plots, Markdown table."""

import csv
import json
import math
import os
from pathlib import Path

from fpgatest.analysis import TICK_NS, rfc1242_value

SAMPLE_COLUMNS = [
    "size_bytes", "interval", "t_start_s", "duration_s", "tx_frames", "rx_frames", "rx_fps",
    "theoretical_fps", "lat_count", "latency_min_ns", "latency_mean_ns", "latency_max_ns", "latency_stdev_ns",
    "lat_sum_ns", "lat_sumsq_ns2", "jit_sum_ns", "jitter_max_ns",
]


def write_text_atomic(path: Path, text: str) -> None:
    """Write to a temporary file and rename: a reader never sees half a file, an interruption keeps the old one."""
    tmp = path.with_name(path.name + ".part")
    tmp.write_text(text)
    os.replace(tmp, path)


def write_json_atomic(path: Path, data) -> None:
    write_text_atomic(path, json.dumps(data, indent=1))


class ResultsDir:
    """One run's directory. Rows and per-size records are appended and flushed one by one."""

    def __init__(self, path: Path, meta: dict):
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)
        if (self.path / "samples.csv").exists():
            raise FileExistsError(f"{self.path} already holds results; choose another --out")
        self._csv_file = open(self.path / "samples.csv", "w", newline="")
        self._csv = csv.DictWriter(self._csv_file, fieldnames=SAMPLE_COLUMNS)
        self._csv.writeheader()
        self._sizes = open(self.path / "sizes.jsonl", "w")
        write_json_atomic(self.path / "run.json", meta)

    def add_sample(self, row: dict) -> None:
        self._csv.writerow({k: row.get(k) for k in SAMPLE_COLUMNS})
        self._csv_file.flush()

    def add_size(self, record: dict) -> None:
        self._sizes.write(json.dumps(record) + "\n")
        self._sizes.flush()

    def close(self) -> None:
        self._csv_file.close()
        self._sizes.close()


def load(path: Path) -> tuple[dict, list[dict], list[dict]]:
    """(run meta, samples, per-size records) of a results directory."""
    path = Path(path)
    try:
        meta = json.loads((path / "run.json").read_text())
        with open(path / "samples.csv", newline="") as f:
            samples = []
            for row in csv.DictReader(f):
                samples.append({k: (float(v) if v not in ("", None) else None) for k, v in row.items()})
            for s in samples:
                for k in ("size_bytes", "interval", "tx_frames", "rx_frames", "lat_count"):
                    s[k] = int(s[k])
        sizes = [json.loads(line) for line in (path / "sizes.jsonl").read_text().splitlines() if line.strip()]
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise ValueError(f"cannot read results in {path}: {str(err) or type(err).__name__}") from None
    if not isinstance(meta, dict) or not all(isinstance(r, dict) for r in sizes):
        raise ValueError(f"cannot read results in {path}: run.json or sizes.jsonl is not a record")
    return meta, samples, sizes


def trend_text(trend: dict) -> str:
    """The latency trend of one size: its ramp and plateau where it has them, else one slope (ns/s)."""
    phases = trend.get("phases")
    if phases:
        rate = "within the first sample" if phases["rate_ns_per_s"] is None else f"{phases['rate_ns_per_s']:.3g} ns/s"
        return f"{phases['kind']} {rate} to {phases['ramp_end_s']:.4g} s, then {phases['steady_latency_ns']:.1f} ns"
    slope, se, resolution = trend["slope_ns_per_s"], trend.get("slope_se"), trend.get("slope_resolution_ns_per_s")
    if slope is None:
        return "-"
    return f"{slope:.1f}" + ("" if se is None else f" ± {se:.1f}") + ("" if resolution is None else f" ± {resolution:.3g}")


def drop_vs_line_rate_text(size: dict) -> str:
    """Received frames against the line-rate maximum (%), ± one frame in the window: a window holds a
    whole number of frames, so that is what the count can resolve; as many decimals as that supports."""
    value, resolution = 100 * size["drop_rate_vs_theoretical"], size.get("drop_rate_vs_theoretical_resolution")
    if resolution is None:          # results written before the resolution was recorded
        return f"{value:.3f}"
    resolution *= 100
    decimals = min(8, max(3, 1 - math.floor(math.log10(resolution))))
    return f"{value:.{decimals}f} ± {resolution:.{decimals}f}"


def percentile_text(q: dict) -> str:
    """A percentile as value ± bound, or the open side where it fell outside the histogram's bins."""
    if q["value_ns"] is not None:
        return f"{q['value_ns']:.1f} ± {q['bound_ns']:.1f}"
    if q.get("low_ns") is not None:
        return f"> {q['low_ns']:.1f}"
    return "-" if q.get("high_ns") is None else f"< {q['high_ns']:.1f}"


def bins_text(h: dict) -> str:
    """A histogram's bin width for a table: the one width (linear), or narrowest to widest (log)."""
    if h.get("scale") == "log":
        edges = h["edges_ns"]
        return f"{h['bin_ns']:g}-{edges[-1] - edges[-2]:g} log"
    return f"{h['bin_ns']:g}"


def number_text(v, spec: str = ".1f") -> str:
    """A figure for a table: '-' where there is none."""
    return "-" if v is None else format(v, spec)


def markdown_table(summary: dict) -> str:
    f = number_text
    lines = ["| size (B) | tx frames | rx frames | lost | reordered | dup | drop % | drop % (vs line rate) | "
             "min FIFO (ns) | mean FIFO (ns) | max FIFO (ns) | stdev (ns) | RFC 1242 mean (ns) | trend (ns/s) | "
             "jitter mean / max (ns) |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for s in summary["sizes"]:
        lat = s["latency_ns"]
        fr = s["frames"]
        rfc = rfc1242_value(summary["fit"]["mode"], lat["mean"], s["latency_lifo_ns"]["mean"])
        lines.append(
            f"| {s['size_bytes']} | {fr['tx']} | {fr['rx']} | {fr['lost']} | {fr['reordered']} | {fr['duplicate']} | "
            f"{f(100 * s['drop_rate'], '.3f')} | {drop_vs_line_rate_text(s)} | "
            f"{f(lat['min'])} | {f(lat['mean'])} | {f(lat['max'])} | {f(lat['stdev'])} | "
            f"{f(rfc)} | {trend_text(s['trend'])} | {f(lat.get('jitter_mean'))} / {f(lat.get('jitter_max'))} |")
    with_pct = [s for s in summary["sizes"] if s.get("percentiles")]
    if with_pct:
        lines += ["", "| size (B) | bin (ns) | p50 (ns) | p90 (ns) | p99 (ns) | p99.9 (ns) | frames | outside the bins |",
                  "|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for s in with_pct:
            h = s["histogram"]
            lines.append(f"| {s['size_bytes']} | {bins_text(h)} | " + " | ".join(percentile_text(q) for q in s["percentiles"])
                         + f" | {h['frames']} | {h['below'] + h['above']} |")
        lines.append("")
        lines.append("Percentiles (nearest rank, FIFO) from the histogram, over the intervals after the bins were set "
                     "from the first interval's range (summary.json: histogram.from_interval): the middle of the bin that "
                     f"holds each, narrowed by the exact min and max, ± half its width plus the stamps' ±{TICK_NS / 2:g} ns.")
    without = [s["size_bytes"] for s in summary["sizes"] if s["latency_ns"].get("count") and not s.get("percentiles")]
    if without:
        lines += ["", f"No percentiles for {', '.join(map(str, without))} B: no interval with latencies was binned "
                      "wholly over the histogram's bins as last set (summary.json: histogram null)."]
    fit = summary["fit"]
    lines += ["", "| fit | slope (ns/B) | ± se | ± resolution | intercept (ns) | ± se | ± resolution | "
                  "bandwidth (Gb/s) | ± se | ± resolution | mode |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    fits = [("per-size mean", fit), ("per-size minimum", fit["min_fit"])]
    if fit.get("refit"):
        fits.append((f"without {', '.join(map(str, fit['outlying_sizes']))} B", fit["refit"]))
    for label, m in fits:
        lines.append(f"| {label} | {f(m['slope_ns_per_byte'], '.4f')} | {f(m['slope_se'], '.4f')} | "
                     f"{f(m['slope_resolution'], '.4f')} | {f(m['intercept_ns'], '.1f')} | "
                     f"{f(m['intercept_se'], '.2f')} | {f(m['intercept_resolution_ns'], '.1f')} | "
                     f"{f(m['bandwidth_gbps'], '.4f')} | {f(m.get('bandwidth_se_gbps'), '.4f')} | "
                     f"{f(m.get('bandwidth_resolution_gbps'), '.4f')} | {m['mode']} |")
    lines.append("")
    lines.append(f"Latency min/mean/max and the RFC 1242 column: differences of {TICK_NS:g} ns stamps, each "
                 f"± {TICK_NS / 2:g} ns; stdev: of those differences, within {TICK_NS / 2:g} ns of the latencies' own "
                 f"(each difference's error lies within one {TICK_NS:g} ns tick, so its spread is at most half that). Drop %: "
                 "exact, from the sequence numbers; vs line rate: received frames/s over the intervals after the "
                 "first (which begins as the first frame is sent) against the maximum, ± one frame in that window. "
                 "se: statistical standard error from the scatter between sizes (- with two sizes); "
                 f"resolution: the bound the {TICK_NS:g} ns stamps set. Jitter: |latency change| between consecutive "
                 f"frames (RFC 4689), each change a difference of stamps (±{TICK_NS:g} ns per frame pair). "
                 f"Trend: the intervals' mean latency against time, least squares, ± se ± resolution ({TICK_NS:g} ns "
                 "over the intervals' span). "
                 + ("Latency column per RFC 1242: LIFO (store-and-forward)." if fit["mode"] == "store-and-forward"
                    else "Latency column per RFC 1242: FIFO (not store-and-forward)."))
    lines += [f"warning: {w}" for w in fit["warnings"] + fit["min_fit"]["warnings"]]
    return "\n".join(lines)


def save(fig, ax, target: Path) -> Path:
    """Grid, tight layout, PNG, close: the finish every plot shares."""
    import matplotlib.pyplot as plt

    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(target, dpi=110)
    plt.close(fig)
    return target


def plot(path: Path, summary: dict, samples: list[dict]) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = Path(path)
    written = []
    fit = summary["fit"]
    xs = [s["size_bytes"] for s in samples if s["lat_count"]]
    ys = [s["latency_mean_ns"] for s in samples if s["lat_count"]]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.plot(xs, ys, "o", ms=4, label="interval mean")
    if fit["slope_ns_per_byte"] is not None and xs:
        lo, hi = min(xs), max(xs)
        ax.plot([lo, hi], [fit["intercept_ns"] + fit["slope_ns_per_byte"] * x for x in (lo, hi)], "-",
                label=f"fit: {fit['slope_ns_per_byte']:.3f} ns/B · size + {fit['intercept_ns']:.0f} ns")
    ax.set_xlabel("frame size (bytes)")
    ax.set_ylabel("latency (ns, FIFO)")
    ax.set_title(f"latency vs frame size ({summary['proto']})")
    ax.legend()
    written.append(save(fig, ax, path / "latency_vs_size.png"))

    fig, ax = plt.subplots(figsize=(7, 4.5))
    sz = [s["size_bytes"] for s in summary["sizes"]]
    ax.plot(sz, [100 * s["drop_rate"] for s in summary["sizes"]], "o-", label="exact (sequence tracker)")
    ax.errorbar(sz, [100 * s["drop_rate_vs_theoretical"] for s in summary["sizes"]],
                yerr=[100 * (s.get("drop_rate_vs_theoretical_resolution") or 0) for s in summary["sizes"]],
                fmt="s--", capsize=3, label="received vs line-rate maximum (± one frame in the window)")
    ax.set_xlabel("frame size (bytes)")
    ax.set_ylabel("frame drop rate (%)")
    ax.legend()
    written.append(save(fig, ax, path / "drop_rate.png"))

    for s in summary["sizes"]:
        rows = [r for r in samples if r["size_bytes"] == s["size_bytes"] and r["lat_count"]]
        if not rows:
            continue
        fig, ax = plt.subplots(figsize=(7, 3.5))
        t = [r["t_start_s"] + r["duration_s"] / 2 for r in rows]
        ax.errorbar(t, [r["latency_mean_ns"] for r in rows],
                    yerr=[[r["latency_mean_ns"] - r["latency_min_ns"] for r in rows],
                          [r["latency_max_ns"] - r["latency_mean_ns"] for r in rows]], fmt="o", ms=3, capsize=2)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("latency (ns)")
        trend = trend_text(s["trend"])      # as the table gives it: the phases, or the slope with its errors
        ax.set_title(f"{s['size_bytes']} B" + ("" if trend == "-" else
                                               f": trend {trend}" + ("" if s["trend"].get("phases") else " ns/s")))
        written.append(save(fig, ax, path / f"timeseries_{s['size_bytes']}.png"))
    return written
