# SPDX-License-Identifier: BSD-2-Clause
"""Analysis of sweep results: least-squares fits with standard errors, latency statistics, drop rates."""

import math

import numpy as np
from scipy import stats

LINE_RATE_BPS = 1e9
BYTE_NS = 8.0  # one byte time at 1 GbE


def linear_fit(x, y) -> dict:
    """Ordinary least squares y = slope*x + intercept with asymptotic standard errors (scipy linregress)."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if len(x) < 2 or np.ptp(x) == 0:
        return {"slope": None, "intercept": None, "slope_se": None, "intercept_se": None, "n": int(len(x))}
    r = stats.linregress(x, y)
    se = (lambda v: 0.0 if len(x) == 2 or not math.isfinite(v) else float(v))
    return {"slope": float(r.slope), "intercept": float(r.intercept), "slope_se": se(r.stderr),
            "intercept_se": se(r.intercept_stderr), "n": int(len(x)), "r2": float(r.rvalue ** 2)}


def theoretical_fps(size: int, gap_bytes: float) -> float:
    """Frames per second at line rate for a frame size (incl. FCS) and average gap (preamble 8 B extra)."""
    return LINE_RATE_BPS / 8 / (size + 8 + gap_bytes)


def combine_latency(intervals: list[dict]) -> dict:
    """Latency statistics (ns) of a size from its intervals' exact count/sum/sum of squares/min/max."""
    n = sum(i["lat_count"] for i in intervals)
    if n == 0:
        return {"min": None, "mean": None, "max": None, "stdev": None, "count": 0}
    total = sum(i["lat_sum_ns"] for i in intervals)
    total_sq = sum(i["lat_sumsq_ns2"] for i in intervals)
    mean = total / n
    var = max(0.0, total_sq / n - mean * mean)
    return {"min": min(i["latency_min_ns"] for i in intervals if i["lat_count"]),
            "mean": mean,
            "max": max(i["latency_max_ns"] for i in intervals if i["lat_count"]),
            "stdev": math.sqrt(var), "count": n}


def forwarding_mode(slope_ns_per_byte: float | None) -> str:
    """Store-and-forward latency grows with the whole frame (~8 ns/byte at 1 GbE); cut-through does not."""
    if slope_ns_per_byte is None:
        return "unknown"
    if slope_ns_per_byte > BYTE_NS / 2:
        return "store-and-forward"
    if abs(slope_ns_per_byte) < 1.0:
        return "cut-through"
    return "unknown"


def size_fits(sizes: list[dict], samples: list[dict]) -> dict:
    """Latency vs size over all interval samples (thesis Table 4.1) and over per-size minima."""
    xs = [s["size_bytes"] for s in samples if s["lat_count"]]
    ys = [s["latency_mean_ns"] for s in samples if s["lat_count"]]
    fit = linear_fit(xs, ys)
    mins = [(s["size_bytes"], s["latency_ns"]["min"]) for s in sizes if s["latency_ns"]["min"] is not None]
    fit_min = linear_fit([m[0] for m in mins], [m[1] for m in mins])

    def pct(se, value):
        return None if se is None or not value else abs(se / value) * 100

    slope = fit["slope"]
    return {
        "slope_ns_per_byte": slope, "slope_se": fit["slope_se"], "slope_se_pct": pct(fit["slope_se"], slope),
        "intercept_ns": fit["intercept"], "intercept_se": fit["intercept_se"],
        "intercept_se_pct": pct(fit["intercept_se"], fit["intercept"]),
        "samples": fit["n"],
        "bandwidth_gbps": (BYTE_NS / slope) if slope and slope > 0.5 else None,
        "mode": forwarding_mode(slope),
        "estimator": "ordinary least squares on per-interval mean latency; asymptotic standard errors",
        "min_fit": {"slope_ns_per_byte": fit_min["slope"], "slope_se": fit_min["slope_se"],
                    "intercept_ns": fit_min["intercept"], "intercept_se": fit_min["intercept_se"],
                    "bandwidth_gbps": (BYTE_NS / fit_min["slope"]) if fit_min["slope"] and fit_min["slope"] > 0.5
                    else None,
                    "estimator": "ordinary least squares on the per-size minimum latency (one-packet method)"},
    }


def time_series_fit(samples: list[dict]) -> dict:
    """Latency trend within one size (ns per second): buffers filling (>0) or draining (<0)."""
    pts = [(s["t_start_s"] + s["duration_s"] / 2, s["latency_mean_ns"]) for s in samples if s["lat_count"]]
    fit = linear_fit([p[0] for p in pts], [p[1] for p in pts])
    return {"slope_ns_per_s": fit["slope"], "slope_se": fit["slope_se"], "n": fit["n"]}
