# SPDX-License-Identifier: BSD-2-Clause
"""Analysis of sweep results: least-squares fits with standard errors, latency statistics, drop rates."""

import math

import numpy as np
from scipy import stats

from fpgatest.driver import TICK_NS    # the tester's stamp resolution

LINE_RATE_BPS = 1e9
BYTE_NS = 8.0  # one byte time at 1 GbE


def linear_fit(x, y) -> dict:
    """Ordinary least squares y = slope*x + intercept with the textbook standard errors (residual
    variance over n - 2 degrees of freedom); with two points there is no error estimate (None)."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    n = len(x)
    if n < 2 or np.ptp(x) == 0:
        return {"slope": None, "intercept": None, "slope_se": None, "intercept_se": None, "n": int(n)}
    r = stats.linregress(x, y)
    slope_se = intercept_se = None
    if n > 2:
        residuals = y - (r.slope * x + r.intercept)
        s2 = float(np.sum(residuals ** 2)) / (n - 2)
        sxx = float(np.sum((x - x.mean()) ** 2))
        slope_se = math.sqrt(s2 / sxx)
        intercept_se = math.sqrt(s2 * (1 / n + x.mean() ** 2 / sxx))
    return {"slope": float(r.slope), "intercept": float(r.intercept), "slope_se": slope_se,
            "intercept_se": intercept_se, "n": int(n)}


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
            "stdev": math.sqrt(var), "count": n, **combine_jitter(intervals)}


def combine_jitter(intervals: list[dict]) -> dict:
    """Jitter (RFC 4689: |latency change| between consecutive frames) of a size from its intervals:
    each interval has lat_count - 1 pairs (a clear starts the pairs again). None where the results
    predate the jitter counters."""
    pairs = sum(i["lat_count"] - 1 for i in intervals if i["lat_count"] > 1)
    if not pairs or any(i.get("jit_sum_ns") is None for i in intervals if i["lat_count"] > 1):
        return {"jitter_mean": None, "jitter_max": None, "jitter_pairs": pairs}
    return {"jitter_mean": sum(i["jit_sum_ns"] for i in intervals if i["lat_count"] > 1) / pairs,
            "jitter_max": max(i["jitter_max_ns"] for i in intervals if i["lat_count"] > 1), "jitter_pairs": pairs}


def forwarding_mode(slope_ns_per_byte: float | None) -> str:
    """Store-and-forward latency grows with the whole frame (~8 ns/byte at 1 GbE); cut-through does not."""
    if slope_ns_per_byte is None:
        return "unknown"
    if slope_ns_per_byte > BYTE_NS / 2:
        return "store-and-forward"
    if abs(slope_ns_per_byte) < 1.0:
        return "cut-through"
    return "unknown"


def _fit_record(points: list[tuple[int, float]], estimator: str) -> dict:
    """Fit latency = slope * size + intercept through one point per size, with both uncertainties:
    the statistical standard error from the scatter between sizes (n - 2 degrees of freedom; none
    for two sizes), and the bound the 8 ns stamps set (each point may be off by up to a tick, so
    the intercept by +-4 ns and the slope by +-8 ns over the size range)."""
    xs = [p[0] for p in points]
    fit = linear_fit(xs, [p[1] for p in points])
    slope = fit["slope"]
    span = (max(xs) - min(xs)) if len(xs) > 1 else 0

    def pct(se, value):
        return None if se is None or not value else abs(se / value) * 100

    bandwidth = BYTE_NS / slope if slope and forwarding_mode(slope) == "store-and-forward" else None
    resolution = TICK_NS / span if span else None
    # bandwidth = 8 / slope: its uncertainties are the slope's, scaled by bandwidth / slope (first order)
    bw_se = bandwidth * fit["slope_se"] / slope if bandwidth is not None and fit["slope_se"] is not None else None
    bw_resolution = bandwidth * resolution / slope if bandwidth is not None and resolution else None
    warnings = []
    # above line rate only when the slope is below one byte time by more than the stamps' bound and the
    # fit's 95 % interval (Student's t over n - 2 degrees of freedom; the bound alone with two sizes)
    reach = (resolution or 0) + (stats.t.ppf(0.975, len(xs) - 2) * fit["slope_se"] if fit["slope_se"] is not None else 0)
    if bandwidth is not None and span and slope + reach < BYTE_NS:
        warnings.append("per-byte time below one byte time at 1 Gb/s by more than the stamp resolution and the "
                        "fit's 95 % interval: the device does not store whole frames at line rate (cut-through "
                        "above a size?)")
    return {
        "slope_ns_per_byte": slope, "slope_se": fit["slope_se"], "slope_se_pct": pct(fit["slope_se"], slope),
        "slope_resolution": resolution,
        "intercept_ns": fit["intercept"], "intercept_se": fit["intercept_se"],
        "intercept_se_pct": pct(fit["intercept_se"], fit["intercept"]),
        "intercept_resolution_ns": TICK_NS / 2,
        "points": fit["n"],
        "bandwidth_gbps": bandwidth, "bandwidth_se_gbps": bw_se, "bandwidth_resolution_gbps": bw_resolution,
        "mode": forwarding_mode(slope),
        "warnings": warnings,
        "estimator": estimator,
    }


def size_fits(sizes: list[dict], samples: list[dict]) -> dict:
    """Latency vs size (thesis Table 4.1) through each size's exact mean, and through its minimum (the
    one-packet method). One point per size: the intervals of one size are not independent draws."""
    means = [(s["size_bytes"], s["latency_ns"]["mean"]) for s in sizes if s["latency_ns"]["mean"] is not None]
    mins = [(s["size_bytes"], s["latency_ns"]["min"]) for s in sizes if s["latency_ns"]["min"] is not None]
    fit = _fit_record(means, "ordinary least squares through each size's mean latency (every frame of the "
                             "size); standard errors from the scatter between sizes; stamp resolution "
                             "bounds +-4 ns (intercept) and +-8 ns / size range (slope)")
    fit["min_fit"] = _fit_record(mins, "ordinary least squares through each size's minimum latency "
                                       "(one-packet method); the same uncertainties")
    fit["outlying_sizes"] = outlying_sizes(means)
    fit["refit"] = None
    if fit["outlying_sizes"]:
        kept = [p for p in means if p[0] not in fit["outlying_sizes"]]
        fit["warnings"].append(f"sizes {', '.join(map(str, fit['outlying_sizes']))} lie off the line through the "
                               "others by more than the data allow (the device changes behaviour with size?): "
                               "see the refit without them")
        fit["refit"] = _fit_record(kept, "the same fit without the outlying sizes")
    return fit


def outlying_sizes(points: list[tuple[int, float]]) -> list[int]:
    """Sizes whose point lies off the line through the other sizes by more than the data allow: two
    ticks (the stamps' resolution at both ends of a difference) or four residual standard deviations
    of that line, whichever is larger. Needs at least four sizes."""
    if len(points) < 4:
        return []
    out = []
    for i, (x, y) in enumerate(points):
        rest = points[:i] + points[i + 1:]
        fit = linear_fit([p[0] for p in rest], [p[1] for p in rest])
        resid = [p[1] - (fit["slope"] * p[0] + fit["intercept"]) for p in rest]
        spread = math.sqrt(sum(r * r for r in resid) / (len(rest) - 2))
        if abs(y - (fit["slope"] * x + fit["intercept"])) > max(2 * TICK_NS, 4 * spread):
            out.append(x)
    return out


def rfc1242_latency(mode: str) -> str:
    """RFC 1242 3.8: store-and-forward devices report LIFO latency, bit-forwarding ones FIFO."""
    return "lifo" if mode == "store-and-forward" else "fifo"


def rfc1242_value(mode: str, fifo: float | None, lifo: float | None) -> float | None:
    """The RFC 1242 latency figure for the mode; a negative LIFO is never shown as a latency (None)."""
    value = lifo if rfc1242_latency(mode) == "lifo" else fifo
    return value if value is None or value >= 0 else None


def time_series_fit(samples: list[dict]) -> dict:
    """Latency trend within one size: one straight line (ns per second), and where the data show a
    ramp and then a plateau (a buffer filling, or draining, then steady), each phase on its own."""
    pts = [(s["t_start_s"] + s["duration_s"] / 2, s["latency_mean_ns"]) for s in samples if s["lat_count"]]
    fit = linear_fit([p[0] for p in pts], [p[1] for p in pts])
    # the stamps' bound: each interval's mean may sit up to a tick off the truth (the arrival phase
    # within the tick may drift), so the slope by up to a tick over the span of the intervals' midpoints
    span = max(p[0] for p in pts) - min(p[0] for p in pts) if pts else 0
    return {"slope_ns_per_s": fit["slope"], "slope_se": fit["slope_se"],
            "slope_resolution_ns_per_s": TICK_NS / span if fit["slope"] is not None and span else None,
            "n": fit["n"], "phases": ramp_plateau(pts)}


def _sse_line(pts) -> tuple[float, float]:
    fit = linear_fit([p[0] for p in pts], [p[1] for p in pts])
    return sum((p[1] - fit["slope"] * p[0] - fit["intercept"]) ** 2 for p in pts), fit["slope"]


def ramp_plateau(pts: list[tuple[float, float]]) -> dict | None:
    """Split (time, latency) points into a ramp (its first point or points) and a plateau (a
    constant over the three or more after it) where that explains the points far better than one
    line (less than a quarter of its squared error, and a step larger than a tick); returns the
    ramp's rate (ns/s; > 0 filling, < 0 draining; None when the ramp is one point: the change
    happened within the first sample), the plateau's latency and when the ramp ended (s, at its
    last point), or None."""
    if len(pts) < 5:
        return None
    one_line, _ = _sse_line(pts)
    best = None
    for k in range(1, len(pts) - 2):
        ramp, plateau = pts[:k], pts[k:]
        level = sum(p[1] for p in plateau) / len(plateau)
        sse_ramp, rate = _sse_line(ramp) if k > 1 else (0.0, None)
        sse = sse_ramp + sum((p[1] - level) ** 2 for p in plateau)
        if best is None or sse < best[0]:
            best = (sse, rate, level, ramp[-1][0], ramp[0][1])
    sse, rate, level, end_s, first = best
    if sse >= one_line / 4 or abs(level - first) <= TICK_NS:
        return None
    return {"rate_ns_per_s": rate, "steady_latency_ns": level, "ramp_end_s": end_s,
            "kind": "fill" if level > first else "drain"}


PERCENTILES = (50.0, 90.0, 99.0, 99.9)


def percentiles(bins: list[int], edges_ns: list[float], below: int, above: int,
                lat_min: float | None = None, lat_max: float | None = None, ps=PERCENTILES) -> list[dict]:
    """Latency percentiles (nearest rank: the smallest latency with at least p % of the frames at or
    below it) from a histogram of `bins`, bin i holding [edges_ns[i], edges_ns[i+1]) (linear or
    logarithmic: Tester.set_histogram), with `below` frames under the first edge and `above` at or
    beyond the last. Each is the bin that holds it: [low_ns, high_ns], narrowed by the exact minimum
    and maximum where given; value_ns is its middle and bound_ns half its width (the error bound from
    the bin width) plus half a tick, the stamps' own resolution (each latency is a difference of 8 ns
    stamps). A rank in the below/above counts has only the open side of the bound (value None)."""
    assert len(edges_ns) == len(bins) + 1
    total = below + sum(bins) + above
    out = []
    for p in ps:
        rank = max(1, math.ceil(p / 100 * total)) if total else 0
        low = high = None
        if total == 0:
            pass
        elif rank <= below:
            high = edges_ns[0]
        elif rank > total - above:
            low = edges_ns[-1]
        else:
            cum = below
            for i, n in enumerate(bins):
                cum += n
                if cum >= rank:
                    low, high = edges_ns[i], edges_ns[i + 1]
                    break
        if low is not None and lat_min is not None:
            low = max(low, lat_min)
        if high is not None and lat_max is not None:
            high = min(high, lat_max)
        if low is not None and high is not None:
            out.append({"p": p, "value_ns": (low + high) / 2, "bound_ns": (high - low) / 2 + TICK_NS / 2,
                        "low_ns": low, "high_ns": high})
        else:
            out.append({"p": p, "value_ns": None, "bound_ns": None, "low_ns": low, "high_ns": high})
    return out
