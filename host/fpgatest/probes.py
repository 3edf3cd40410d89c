# SPDX-License-Identifier: BSD-2-Clause
"""The seeds' path methods on the tester's cores, every probe stamped in gateware at 8 ns:

- one-packet bandwidth from one-way delay (seed 000): the minimum one-way delay per probe size, a
  least-squares line over size, bandwidth from its slope, the sender/receiver "delay increase
  rate" alpha (ns/bit, eq. 9-10) measured on a cable-only run and removed;
- packet pairs (seed 001): the bottleneck's capacity from the dispersion of back-to-back pairs, its
  utilisation from pairs whose spacing the bottleneck sees (eq. 1), and the paper's bottleneck call
  with the TCP throughput model of Padhye et al. fed with the RTT and loss the tester measured;
- available bandwidth by probe streams (seed 003, ImTCP): streams at the sub-interval rates of a
  search interval, the first whose one-way delay grows bounds the available bandwidth, the next
  interval from the 95 % interval of past results, smoothed with gamma;
- single-ended throughput with ICMP echo (seed 004, Treno): echo requests from one port, the replies
  taken back on it as acknowledgements, at most a window of requests unanswered (fixed, or Reno-like),
  enforced in gateware; throughput from the replies per second against background load.

A probe run is one generator stream (a size, a gap, bursts of two for pairs) whose every frame the
receiver's sample FIFO records: sequence number, RX tick and latency. The frame's TX time is its RX
time minus its latency, so spacings at departure and arrival come from the same two stamps of one
oscillator; calibration offsets cancel in every spacing.
"""

import csv
import math
import random
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from fpgatest.analysis import linear_fit
from fpgatest.driver import TICK_NS
from fpgatest.measure import drain, frames_lost, send_and_drain, shared_out
from fpgatest.output import number_text, write_json_atomic
from fpgatest.tester import MAX_GAP, MIN_IFG, SettingError, Stream, Tester

WIRE_OVERHEAD = 20          # preamble 8 + minimum gap 12 bytes: a frame's share of a link at line rate
TCP_WIRE_OVERHEAD = 40 + 18 + WIRE_OVERHEAD   # a TCP segment's bytes on the wire beyond its MSS (no options)


def gap_bytes(size: int, spacing_ns: float) -> int:
    """IFG (bytes) that puts preambles spacing_ns apart: at least the minimum gap."""
    ifg = round(spacing_ns / TICK_NS) - size - 8
    if ifg > MAX_GAP:
        raise SettingError(f"a spacing of {spacing_ns / 1000:g} us is beyond the generator's gap")
    return max(MIN_IFG, ifg)


def probe_run(t: Tester, tx: int, rx: int, stream: Stream, drain_s: float) -> tuple[dict, list[dict]]:
    """Send one stream and record every frame on rx: (receiver's counters, records oldest first), each
    record {seq, rx_ns, owd_ns, tx_ns} with tx_ns = rx_ns - owd_ns (the departure time, up to the
    calibration's constant offset)."""
    depth = int(t.dev.map.constants["fpgatest_sample_depth"])
    if not 0 < stream.count <= depth:
        raise SettingError(f"{stream.count} probes in one run: the sample FIFO holds {depth}")
    t.dev.write(f"port{rx}_cfg_sample_every", 1)
    try:
        snap = send_and_drain(t, [(tx, rx)], [stream], drain_s, timeout_s=60.0)
        samples = t.samples(rx, limit=depth + 1)
    finally:
        t.dev.write(f"port{rx}_cfg_sample_every", 0)
    p_rx = snap["ports"][rx]
    sent = snap["ports"][tx]["tx_frames"]
    counters = {"sent": sent, "lost": frames_lost(p_rx, stream.seq_start, sent),
                "sample_dropped": p_rx["sample_dropped"]}
    records = [{"seq": seq - stream.seq_start, "rx_ns": tick * TICK_NS, "owd_ns": owd,
                "tx_ns": tick * TICK_NS - owd} for seq, tick, owd in samples]
    return counters, records


# ---- one-way delay: the one-packet method (seed 000) -------------------------------------------------

@dataclass
class OwdPlan:
    proto: str
    sizes: list[int]                 # in the order sent
    probes: int = 10                 # per size
    spacing_us: float = 100.0        # preamble to preamble: each probe crosses the path alone
    drain_s: float = 0.0002
    vlan: int | None = None
    extra: dict = field(default_factory=dict)
    hop_pairs: int = 0               # > 0: back-to-back pairs after the sizes, to split the slope per hop
    pair_size: int = 1518            # their frame size: the longer the pair, the finer the rate

    def stream(self, size: int) -> Stream:
        return Stream(proto=self.proto, size=size, ifg=gap_bytes(size, self.spacing_us * 1000), count=self.probes,
                      vlan=self.vlan, extra=self.extra)

    def pairs_plan(self) -> "PairsPlan":
        return PairsPlan(self.proto, capacity_size=self.pair_size, pairs=self.hop_pairs,
                         pair_spacing_us=self.spacing_us, drain_s=self.drain_s, vlan=self.vlan, extra=self.extra)

    def check(self) -> None:
        if len(set(self.sizes)) < 2:
            raise SettingError("the one-packet method needs at least two probe sizes")
        for size in self.sizes:
            self.stream(size).check()
        if self.hop_pairs:
            self.pairs_plan().check()


def random_sizes(count: int, low: int, high: int, seed: int) -> list[int]:
    """`count` distinct sizes drawn from [low, high], in random order (the paper: random sizes, so that
    nothing periodic on the path lines up with the size)."""
    if high - low + 1 < count:
        raise SettingError(f"{count} distinct sizes asked from {low}..{high} bytes")
    return random.Random(seed).sample(range(low, high + 1), count)


def owd_fit(per_size: list[dict], alpha: dict | None = None) -> dict:
    """Least squares of the minimum one-way delay over size. Uncertainty: the standard error from the
    scatter between sizes and the stamp bound (each minimum is a whole tick late by less than one
    tick: the slope is uncertain by up to 8 ns over the size span). alpha (a cable-only run's fit)
    is the delay increase rate of the tester itself; 1/B = slope - alpha (eq. 10)."""
    pts = [(r["size_bytes"], r["owd_min_ns"]) for r in per_size if r["owd_min_ns"] is not None]
    fit = linear_fit([p[0] for p in pts], [p[1] for p in pts])
    if fit["slope"] is None:
        return {"points": len(pts), "slope_ns_per_byte": None}
    span = max(p[0] for p in pts) - min(p[0] for p in pts)
    resolution = TICK_NS / span
    slope, se = fit["slope"], fit["slope_se"]
    alpha_b = alpha["slope_ns_per_byte"] if alpha else 0.0
    alpha_err = (2 * (alpha["slope_se"] or 0) + alpha["slope_resolution"]) if alpha else 0.0
    per_byte = slope - alpha_b
    err = 2 * (se or 0.0) + resolution + alpha_err      # two standard errors plus the bounds
    out = {
        "points": len(pts), "estimator": "OLS over the minimum one-way delay of each size",
        "slope_ns_per_byte": slope, "slope_se": se, "slope_resolution": resolution,
        "slope_ns_per_bit": slope / 8, "intercept_ns": fit["intercept"], "intercept_se": fit["intercept_se"],
        "alpha_ns_per_bit": alpha_b / 8 if alpha else None, "alpha_from": alpha.get("from") if alpha else None,
        "per_byte_ns": per_byte, "per_byte_error_ns": err,
        "residuals_ns": [y - (slope * x + fit["intercept"]) for x, y in pts],
    }
    if per_byte - err > 0:
        # the slope is the sum of 1/B over every store-and-forward hop: one hop gives its rate
        out["bandwidth_mbps"] = 8000 / per_byte
        out["bandwidth_range_mbps"] = [8000 / (per_byte + err), 8000 / (per_byte - err)]
    else:
        out["bandwidth_mbps"] = None
        out["bandwidth_range_mbps"] = None
        out["note"] = ("no per-byte time resolved above the error: a cut-through path or a wire "
                       "(the delay does not grow with the frame)")
    return out


def owd(testers: Tester | list[Tester], plan: OwdPlan, tx: int, rx: int, out: Path, alpha: dict | None = None,
        on_size=None) -> dict:
    """Probe every size, writing probes.csv as the sizes are done and results.json at the end. On one
    tester the sizes in plan order, each size's rows written as they come; on several (identical twins,
    a process each) a size to each tester that is free (shared_out), each size's rows written in plan
    order once it and every size before it are done. The --per-hop pairs run after the sizes, on the
    first tester."""
    testers = testers if isinstance(testers, list) else [testers]
    per_size = []
    with open(out / "probes.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["size_bytes", "seq", "tx_ns", "rx_ns", "owd_ns"])
        w.writeheader()

        def measure(tester: Tester, i: int) -> tuple[dict, list[dict]]:
            return probe_run(tester, tx, rx, plan.stream(plan.sizes[i]), plan.drain_s)

        def write(i: int, result: tuple[dict, list[dict]]) -> None:
            size, (counters, records) = plan.sizes[i], result
            for r in records:
                w.writerow({"size_bytes": size, **r})
            f.flush()
            owds = [r["owd_ns"] for r in records]
            row = {"size_bytes": size, "probes": counters["sent"], "received": len(records),
                   "lost": counters["lost"], "owd_min_ns": min(owds) if owds else None,
                   "owd_median_ns": float(np.median(owds)) if owds else None,
                   "owd_max_ns": max(owds) if owds else None}
            per_size.append(row)
            if on_size:
                on_size(row)

        shared_out(testers, len(plan.sizes), measure, write)
    results = {"method": "one-packet bandwidth from one-way delay (seed 000)", "tx_port": tx, "rx_port": rx,
               "sizes": per_size, "fit": owd_fit(per_size, alpha)}
    if plan.hop_pairs:
        with open(out / "pairs.csv", "w", newline="") as f:
            try:
                cap = capacity_run(testers[0], plan.pairs_plan(), tx, rx,
                                   csv.DictWriter(f, fieldnames=PAIRS_CSV_FIELDS))
            except SettingError as err:     # the sizes' fit stands without the split
                cap = None
                results["per_hop"] = {"note": f"{err}: the slope is not split (pairs.csv has what arrived)"}
        if cap:
            results["per_hop"] = per_hop(results["fit"], cap)
    write_json_atomic(out / "results.json", results)
    return results


def per_hop(fit: dict, cap: dict) -> dict:
    """The slope split over two store-and-forward hops. Back-to-back pairs leave the narrowest link
    spaced by one frame's time on it: their dispersion gives its rate C (seed 001). The one-way-delay
    slope is the sum of 8/B over every store-and-forward hop (seed 000). If the narrowest link stores
    and forwards, what C does not explain, slope - 8000/C ns/B, belongs to the other hops: with one
    other hop, its rate. Ranges: the slope's error (two SE plus the stamp bound) and C's stamp range,
    at their ends."""
    c = cap["capacity_mbps"]
    c_lo, c_hi = cap["capacity_range_mbps"]
    out = {"estimator": "slope - 8000/C, C the narrowest link's rate from back-to-back pairs",
           "capacity": cap, "bottleneck_mbps": c, "bottleneck_range_mbps": [c_lo, c_hi],
           "bottleneck_ns_per_byte": 8000 / c, "rest_ns_per_byte": None, "rest_range_ns_per_byte": None,
           "other_hop_mbps": None, "other_hop_range_mbps": None}
    if fit.get("per_byte_ns") is None:
        out["note"] = "no slope: nothing to split"
        return out
    slope, err = fit["per_byte_ns"], fit["per_byte_error_ns"]
    rest = slope - 8000 / c
    lo, hi = slope - err - 8000 / c_lo, slope + err - 8000 / c_hi
    out.update(rest_ns_per_byte=rest, rest_range_ns_per_byte=[lo, hi])
    if hi < 0:
        out["note"] = ("the slope is below the narrowest link's time per byte: that link does not store and "
                       "forward (cut-through), so the slope cannot be split by it")
    elif lo <= 0:
        out["note"] = ("the narrowest link explains the whole slope: it is the only store-and-forward hop that "
                       "the error resolves" + (f" (any other is faster than {8000 / hi:.0f} Mb/s)" if hi > 0 else ""))
    else:
        out["other_hop_mbps"] = 8000 / rest
        out["other_hop_range_mbps"] = [8000 / hi, 8000 / lo]
        out["note"] = ("with exactly two store-and-forward hops, the other hop's rate; with more, the harmonic "
                       "sum of theirs")
    return out


def owd_report(results: dict) -> str:
    fit = results["fit"]
    lines = [f"# One-way delay over probe size, port {results['tx_port']} → {results['rx_port']}", ""]
    if fit.get("slope_ns_per_byte") is None:
        return "\n".join(lines + ["no fit: fewer than two sizes received"])
    lines += [f"- per-byte time: {fit['slope_ns_per_byte']:.4f} ns/B (SE {fit['slope_se'] or 0:.4f}, stamp bound "
              f"±{fit['slope_resolution']:.4f}) = {fit['slope_ns_per_bit']:.5f} ns/bit, over {fit['points']} sizes "
              f"({fit['estimator']})",
              f"- intercept (size-independent delay): {fit['intercept_ns']:.1f} ns (SE {fit['intercept_se'] or 0:.1f}, "
              f"stamp bound ±4)"]
    if fit["alpha_ns_per_bit"] is not None:
        lines.append(f"- alpha (the tester's own delay increase rate, from {fit['alpha_from']}): "
                     f"{fit['alpha_ns_per_bit']:.5f} ns/bit, removed")
    else:
        lines.append("- alpha: not removed (no --alpha-from run); the tester stamps both ends at the SFD, so its "
                     "own rate is 0 by design: a cable-only run shows it")
    if fit["bandwidth_mbps"]:
        lo, hi = fit["bandwidth_range_mbps"]
        lines.append(f"- bandwidth 1/slope: **{fit['bandwidth_mbps']:.2f} Mb/s** (range {lo:.2f} … {hi:.2f} Mb/s: "
                     f"two SE plus the stamp bound)")
        lines.append("- on a path of several store-and-forward hops the slope is the sum of 1/B over them, so "
                     "1/slope is their harmonic sum, not any one link; a hop at 1 Gb/s adds 8 ns/B" +
                     ("" if "per_hop" in results else ". `--per-hop` splits it by the narrowest link's rate "
                      "from back-to-back pairs"))
    else:
        lines.append(f"- bandwidth: none ({fit['note']})")
    hop = results.get("per_hop")
    if hop and "capacity" not in hop:
        lines.append(f"- per hop: {hop['note']}")
    elif hop:
        cap = hop["capacity"]
        lo, hi = hop["bottleneck_range_mbps"]
        lines.append(f"- per hop ({hop['estimator']}): narrowest link **{hop['bottleneck_mbps']:.2f} Mb/s** (range "
                     f"{lo:.2f} … {hi:.2f}, from {cap['pairs']} pairs of {cap['size_bytes']} B, "
                     f"{100 * cap['at_mode']:.0f} % at the mode) = {hop['bottleneck_ns_per_byte']:.4f} ns/B")
        if hop["rest_ns_per_byte"] is not None:
            rlo, rhi = hop["rest_range_ns_per_byte"]
            lines.append(f"- rest of the slope: {hop['rest_ns_per_byte']:.4f} ns/B (range {rlo:.4f} … {rhi:.4f})")
        if hop["other_hop_mbps"]:
            olo, ohi = hop["other_hop_range_mbps"]
            lines.append(f"- other store-and-forward hop: **{hop['other_hop_mbps']:.1f} Mb/s** (range {olo:.1f} … "
                         f"{ohi:.1f})")
        lines.append(f"- {hop['note']}")
    lines += ["", "| size (B) | probes | received | min OWD (ns) | median (ns) | max (ns) |", "|---|---|---|---|---|---|"]
    for r in sorted(results["sizes"], key=lambda r: r["size_bytes"]):
        lines.append(f"| {r['size_bytes']} | {r['probes']} | {r['received']} | {number_text(r['owd_min_ns'])} | "
                     f"{number_text(r['owd_median_ns'])} | {number_text(r['owd_max_ns'])} |")
    lines += ["", f"One-way delays: differences of {TICK_NS:g} ns stamps (SFD to SFD), each ± {TICK_NS / 2:g} ns."]
    return "\n".join(lines) + "\n"


def owd_plot(out: Path, results: dict) -> Path | None:
    """The paper's figure: every probe's delay over size, each size's minimum marked, the fitted line."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from fpgatest.output import save

    fit = results["fit"]
    rows = list(csv.DictReader(open(out / "probes.csv")))
    if not rows or fit.get("slope_ns_per_byte") is None:
        return None
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.scatter([int(r["size_bytes"]) for r in rows], [float(r["owd_ns"]) / 1000 for r in rows], s=6,
               color="0.7", label="every probe")
    mins = [(r["size_bytes"], r["owd_min_ns"]) for r in results["sizes"] if r["owd_min_ns"] is not None]
    ax.scatter([m[0] for m in mins], [m[1] / 1000 for m in mins], s=14, color="k", label="minimum per size")
    xs = np.array([min(m[0] for m in mins), max(m[0] for m in mins)])
    ax.plot(xs, (fit["slope_ns_per_byte"] * xs + fit["intercept_ns"]) / 1000, color="C3",
            label=f"{fit['slope_ns_per_byte']:.3f} ns/B")
    ax.set_xlabel("probe size (bytes incl. FCS)")
    ax.set_ylabel("one-way delay (µs)")
    ax.legend()
    return save(fig, ax, out / "owd.png")


# ---- packet pairs: capacity and utilisation (seed 001) ------------------------------------------------

@dataclass
class PairsPlan:
    proto: str
    size: int = 1518                 # utilisation probes
    capacity_size: int = 64          # back-to-back pairs for the capacity: short, so cross traffic rarely splits them
    pairs: int = 200
    pair_spacing_us: float = 100.0   # first frame of a pair to the next pair's: the queue empties between pairs
    window: float = 0.95             # utilisation pairs: input spacing as a fraction of the probe's time at the bottleneck
    probe_load: float = 0.1          # utilisation pairs: at most this share of the bottleneck (sparser than pair_spacing_us)
    drain_s: float = 0.0002
    vlan: int | None = None
    extra: dict = field(default_factory=dict)

    def stream(self, size: int, inner_ifg: int, spacing_us: float | None = None) -> Stream:
        pair_ns = (size + 8 + inner_ifg) * TICK_NS
        spacing_ns = (spacing_us or self.pair_spacing_us) * 1000
        return Stream(proto=self.proto, size=size, ifg=inner_ifg, burst=2,
                      burst_gap=gap_bytes(size, spacing_ns - pair_ns), count=2 * self.pairs,
                      vlan=self.vlan, extra=self.extra)

    def check(self, depth: int = 512) -> None:
        if not 1 <= self.pairs <= depth // 2:
            raise SettingError(f"{self.pairs} pairs: one run records at most {depth // 2} (the sample FIFO)")
        if not 0 < self.window <= 1:
            raise SettingError(f"window {self.window} out of range (0, 1]")
        if not 0 < self.probe_load <= 0.5:
            raise SettingError(f"probe load {self.probe_load} out of range (0, 0.5]")
        for size in (self.size, self.capacity_size):
            self.stream(size, MIN_IFG).check()
            if self.pair_spacing_us * 1000 < 4 * (size + 20) * TICK_NS:
                raise SettingError(f"pair spacing {self.pair_spacing_us} us too short for {size}-byte pairs")


def pair_spacings(records: list[dict]) -> list[dict]:
    """(l_in, l_out) of every pair both of whose frames arrived: departure and arrival spacing, ns."""
    by_seq = {r["seq"]: r for r in records}
    out = []
    for first in sorted(s for s in by_seq if s % 2 == 0):
        second = by_seq.get(first + 1)
        if second:
            a = by_seq[first]
            out.append({"pair": first // 2, "l_in_ns": second["tx_ns"] - a["tx_ns"],
                        "l_out_ns": second["rx_ns"] - a["rx_ns"]})
    return out


def capacity(spacings: list[dict], size: int) -> dict:
    """Bottleneck capacity from back-to-back pairs: the mode of the arrival spacing is one probe's time
    on the bottleneck, s/b, with s = (size + 20) * 8 bits (preamble and minimum gap included: b is the
    link's line rate). Pairs split by cross traffic arrive further apart; the mode ignores them."""
    if not spacings:
        raise SettingError("no pair arrived whole: no capacity")
    ticks = [round(p["l_out_ns"] / TICK_NS) for p in spacings]
    values, counts = np.unique(ticks, return_counts=True)
    mode_ticks = int(values[np.argmax(counts)])
    # the pacing of a rate that is not a whole number of ticks per frame splits the mode between two
    # neighbouring ticks: their weighted mean is the spacing
    near = [(v, c) for v, c in zip(values, counts) if abs(v - mode_ticks) <= 1]
    mode_ns = TICK_NS * sum(v * c for v, c in near) / sum(c for _, c in near)
    bits = (size + WIRE_OVERHEAD) * 8
    at_mode = sum(c for _, c in near) / len(ticks)
    return {"pairs": len(spacings), "size_bytes": size, "dispersion_mode_ns": mode_ns, "at_mode": at_mode,
            "dispersion_quartiles_ns": [float(q) for q in np.percentile([p["l_out_ns"] for p in spacings], [25, 50, 75])],
            "capacity_mbps": bits * 1000 / mode_ns,
            # each spacing is a difference of two stamps: up to a tick either way
            "capacity_range_mbps": [bits * 1000 / (mode_ns + TICK_NS), bits * 1000 / max(mode_ns - TICK_NS, 1e-9)],
            "line_rate_note": "line rate of the bottleneck: preamble and minimum gap counted as the link carries them"}


PAIRS_CSV_FIELDS = ["phase", "pair", "l_in_ns", "l_out_ns", "utilisation"]


def capacity_run(t: Tester, plan: PairsPlan, tx: int, rx: int, w: csv.DictWriter) -> dict:
    """plan.pairs back-to-back pairs of plan.capacity_size bytes: the capacity of the narrowest link,
    each pair's spacings written to w (pairs.csv, with its header)."""
    counters, records = probe_run(t, tx, rx, plan.stream(plan.capacity_size, MIN_IFG), plan.drain_s)
    sp = pair_spacings(records)
    w.writeheader()
    for p in sp:
        w.writerow({"phase": "capacity", **p, "utilisation": ""})
    return {**capacity(sp, plan.capacity_size), "sent": counters["sent"], "lost": counters["lost"]}


def utilisation(spacings: list[dict], size: int, capacity_mbps: float) -> dict:
    """u = (l_n b - s) / (l_{n-1} b) per pair (eq. 1): the cross traffic that reached the bottleneck
    between the two probes' arrivals went out between them. Valid while the second probe arrives
    before the first has left (l_{n-1} <= s/b, which the plan's window keeps)."""
    b = capacity_mbps * 1e6
    s = (size + WIRE_OVERHEAD) * 8
    us = [(p["l_out_ns"] * 1e-9 * b - s) / (p["l_in_ns"] * 1e-9 * b) for p in spacings]
    if not us:
        raise SettingError("no pair arrived whole: no utilisation")
    arr = np.array(us)
    se = float(arr.std(ddof=1) / math.sqrt(len(arr))) if len(arr) > 1 else None
    l_in = float(np.mean([p["l_in_ns"] for p in spacings]))
    return {"pairs": len(us), "size_bytes": size, "l_in_mean_ns": l_in,
            "l_out_mean_ns": float(np.mean([p["l_out_ns"] for p in spacings])),
            "utilisation": float(arr.mean()), "utilisation_se": se,
            # a stamp difference is off by up to a tick: u by up to 8 ns / l_in per pair, and so in the mean
            "utilisation_resolution": TICK_NS / l_in, "utilisation_median": float(np.median(arr)),
            "cross_traffic_mbps": float(arr.mean()) * capacity_mbps, "per_pair": us}


def loss_interval_95(lost: int, sent: int) -> tuple[float, float]:
    """A loss rate's 95 % interval from lost of sent: [0, 3/sent] with no loss (the rule of three, as the
    report's "below ... at 95 %"), else Clopper-Pearson's exact interval; never 1 (the model needs < 1)."""
    from scipy.stats import beta

    if not sent:
        return 0.0, 0.0
    if lost == 0:
        return 0.0, min(3.0 / sent, 0.999)
    hi = 1.0 if lost == sent else float(beta.ppf(0.975, lost + 1, sent - lost))
    return float(beta.ppf(0.025, lost, sent - lost + 1)), min(hi, 0.999)


def tcp_throughput(rtt_s: float, loss: float, window_packets: float, mss_bytes: int = 1460, acked_per_ack: int = 2,
                   rto_s: float = 0.2) -> dict:
    """Padhye, Firoiu, Towsley, Kurose (SIGCOMM '98), the full model (their eq. 31):
        B = min(W/RTT, 1 / (RTT sqrt(2bp/3) + T0 min(1, 3 sqrt(3bp/8)) p (1 + 32 p^2)))  packets/s
    and the expected unconstrained window E[W] = (2+b)/(3b) + sqrt(8(1-p)/(3bp) + ((2+b)/(3b))^2).
    The seed's call: E[W] >= W means the receiver's window (buffer) is what limits ('buffer
    shortage'); below it, losses on the path do ('enough')."""
    if rtt_s <= 0 or not 0 <= loss < 1 or window_packets <= 0:
        raise SettingError("TCP model: RTT > 0, 0 <= loss < 1 and a window > 0 are needed")
    b, p = acked_per_ack, loss
    window_limit = window_packets / rtt_s
    if p == 0:
        expected_window = math.inf
        rate = window_limit
    else:
        k = (2 + b) / (3 * b)
        expected_window = k + math.sqrt(8 * (1 - p) / (3 * b * p) + k * k)
        loss_limit = 1 / (rtt_s * math.sqrt(2 * b * p / 3) + rto_s * min(1.0, 3 * math.sqrt(3 * b * p / 8)) * p * (1 + 32 * p * p))
        rate = min(window_limit, loss_limit)
    return {"rtt_ms": rtt_s * 1000, "loss": p, "window_packets": window_packets, "mss_bytes": mss_bytes,
            "acked_per_ack": b, "rto_ms": rto_s * 1000, "expected_window_packets": expected_window,
            "packets_per_s": rate, "throughput_mbps": rate * mss_bytes * 8 / 1e6,
            "buffer": "shortage" if expected_window >= window_packets else "enough"}


def pairs_plot(out: Path, results: dict) -> Path | None:
    """Arrival spacing of the capacity pairs and the utilisation of each utilisation pair."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from fpgatest.output import save

    rows = list(csv.DictReader(open(out / "pairs.csv")))
    if not rows:
        return None
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 4))
    cap = [float(r["l_out_ns"]) / 1000 for r in rows if r["phase"] == "capacity"]
    use = [float(r["utilisation"]) for r in rows if r["phase"] == "utilisation"]
    if cap:
        a1.hist(cap, bins=50, color="0.4")
        a1.axvline(results["capacity"]["dispersion_mode_ns"] / 1000, color="C3",
                   label=f"mode: {results['capacity']['capacity_mbps']:.1f} Mb/s")
        a1.set_xlabel("back-to-back pair: arrival spacing (µs)")
        a1.set_ylabel("pairs")
        a1.legend()
    if use:
        a2.hist(use, bins=40, color="0.4")
        a2.axvline(results["utilisation"]["utilisation"], color="C3",
                   label=f"mean u = {results['utilisation']['utilisation']:.3f}")
        a2.set_xlabel("utilisation per pair (eq. 1)")
        a2.legend()
    a1.grid(alpha=0.3)
    return save(fig, a2, out / "pairs.png")


def pairs_check(t: Tester, tx: int, rx: int, tcp: dict) -> None:
    """What pairs() needs of the build, refused before anything is sent: an RTT given, or a way back."""
    if tcp.get("rtt_s") is None and not (t.has(rx, "tx") and t.has(tx, "rx")):
        raise SettingError("no RTT: give --rtt-ms (this build cannot send back from the receiving port)")


def pairs(t: Tester, plan: PairsPlan, tx: int, rx: int, out: Path, tcp: dict) -> dict:
    """Capacity from back-to-back pairs, then utilisation from pairs spaced by the window, then the
    TCP model with the loss of the probes and the RTT (tcp['rtt_s'] or, where the build can send
    back, the minimum one-way delay there and back)."""
    pairs_check(t, tx, rx, tcp)
    results = {"method": "packet pairs: bottleneck capacity and utilisation (seed 001)", "tx_port": tx, "rx_port": rx}
    with open(out / "pairs.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=PAIRS_CSV_FIELDS)
        results["capacity"] = capacity_run(t, plan, tx, rx, w)
        counters = {"sent": results["capacity"]["sent"], "lost": results["capacity"]["lost"]}
        cap = results["capacity"]["capacity_mbps"]
        probe_ns = (plan.size + WIRE_OVERHEAD) * 8 * 1000 / cap          # s/b: one probe on the bottleneck
        inner = gap_bytes(plan.size, plan.window * probe_ns)
        if (plan.size + 8 + inner) * TICK_NS > probe_ns:
            raise SettingError(f"the bottleneck ({cap:.1f} Mb/s) is not slower than the tester's line rate: "
                               "pairs cannot sample its cross traffic")
        # sparse enough that the probes themselves do not fill the bottleneck's queue
        spacing_us = max(plan.pair_spacing_us, 2 * probe_ns / plan.probe_load / 1000)
        counters2, records2 = probe_run(t, tx, rx, plan.stream(plan.size, inner, spacing_us), plan.drain_s)
        sp2 = pair_spacings(records2)
        util = utilisation(sp2, plan.size, cap)
        for p, u in zip(sp2, util.pop("per_pair")):
            w.writerow({"phase": "utilisation", **p, "utilisation": u})
        results["utilisation"] = {**util, "lost": counters2["lost"], "sent": counters2["sent"],
                                  "pair_spacing_us": spacing_us}
    sent = counters["sent"] + counters2["sent"]
    lost = counters["lost"] + counters2["lost"]
    owd_min = min(r["owd_ns"] for r in records2) if records2 else None
    rtt_s = tcp.get("rtt_s")
    rtt_from = "given"
    if rtt_s is None:
        if owd_min is None:
            raise SettingError("no RTT: no probe arrived to measure the way there; give --rtt-ms")
        back = Stream(proto=plan.proto, size=64, ifg=gap_bytes(64, plan.pair_spacing_us * 1000), count=10,
                      vlan=plan.vlan)
        _, back_records = probe_run(t, rx, tx, back, plan.drain_s)
        if not back_records:
            raise SettingError(f"no RTT: nothing came back on port {tx}; give --rtt-ms")
        rtt_s = (owd_min + min(r["owd_ns"] for r in back_records)) * 1e-9
        rtt_from = f"minimum one-way delay {tx}→{rx} ({plan.size} B) + {rx}→{tx} (64 B)"
    model_args = (tcp["window_bytes"] / tcp["mss_bytes"], tcp["mss_bytes"], tcp["acked_per_ack"], tcp["rto_s"])
    model = tcp_throughput(rtt_s, lost / sent if sent else 0.0, *model_args)
    p_lo, p_hi = loss_interval_95(lost, sent)
    model.update({"rtt_from": rtt_from, "loss_frames": [lost, sent],
                  "loss_upper_95": (p_hi if lost == 0 and sent else None)})
    # the ranges the inputs allow: the RTT by its stamps (a measured one-way delay is a difference of two
    # stamps, off by up to a tick: two of them), the loss over its 95 % interval; the model falls with both
    rtt_d = 0.0 if rtt_from == "given" else 2 * TICK_NS * 1e-9
    model["rtt_resolution_ms"] = rtt_d * 1000
    model["loss_interval_95"] = [p_lo, p_hi]
    model["throughput_range_mbps"] = [tcp_throughput(rtt_s + rtt_d, p_hi, *model_args)["throughput_mbps"],
                                      tcp_throughput(max(rtt_s - rtt_d, 1e-9), p_lo, *model_args)["throughput_mbps"]]
    # the model knows no link: the path gives TCP at most what the bottleneck leaves, in segments
    # (an MSS carries TCP/IP headers 40 B, Ethernet 18 B and preamble and gap 20 B on the wire); its range
    # from the capacity's and the utilisation's (two standard errors and the stamp bound)
    segments = model["mss_bytes"] / (model["mss_bytes"] + TCP_WIRE_OVERHEAD)
    cap_lo, cap_hi = results["capacity"]["capacity_range_mbps"]
    util = results["utilisation"]
    u, u_d = util["utilisation"], 2 * (util["utilisation_se"] or 0.0) + util["utilisation_resolution"]
    model["path_limit_mbps"] = results["capacity"]["capacity_mbps"] * max(0.0, 1 - u) * segments
    model["path_limit_range_mbps"] = [cap_lo * max(0.0, 1 - min(1.0, u + u_d)) * segments,
                                      cap_hi * max(0.0, 1 - max(0.0, u - u_d)) * segments]
    model["expected_mbps"] = min(model["throughput_mbps"], model["path_limit_mbps"])
    model["expected_range_mbps"] = [min(model["throughput_range_mbps"][i], model["path_limit_range_mbps"][i])
                                    for i in (0, 1)]
    model["bottleneck"] = ("the bottleneck link (what its other traffic leaves)"
                           if model["path_limit_mbps"] < model["throughput_mbps"] else
                           "the receiver's window (buffer shortage)" if model["buffer"] == "shortage" else
                           "losses on the path")
    results["tcp_model"] = model
    write_json_atomic(out / "results.json", results)
    return results


def mbps_range(record: dict, key: str) -> str:
    """' (range lo … hi)' of a figure whose range the record has (results before the ranges: '')."""
    if record.get(key) is None:
        return ""
    lo, hi = record[key]
    return f" (range {lo:.1f} … {hi:.1f})"


def pairs_report(results: dict) -> str:
    c, u, m = results["capacity"], results["utilisation"], results["tcp_model"]
    lo, hi = c["capacity_range_mbps"]
    se = u["utilisation_se"] or 0.0
    lines = [f"# Packet pairs, port {results['tx_port']} → {results['rx_port']}", "",
             f"- bottleneck capacity: **{c['capacity_mbps']:.2f} Mb/s** line rate (range {lo:.2f} … {hi:.2f}: a "
             f"spacing is two stamps, ±8 ns), from the mode of {c['pairs']} back-to-back {c['size_bytes']}-byte pairs "
             f"({100 * c['at_mode']:.0f} % at the mode; quartiles "
             + ", ".join(f"{q / 1000:.3f}" for q in c["dispersion_quartiles_ns"]) + " µs)",
             f"- utilisation (eq. 1): **{u['utilisation']:.3f} ± {se:.3f}** (SE over {u['pairs']} pairs of "
             f"{u['size_bytes']} B; stamp bound ±{u['utilisation_resolution']:.4f}; median {u['utilisation_median']:.3f}), "
             f"input spacing {u['l_in_mean_ns'] / 1000:.3f} µs → output {u['l_out_mean_ns'] / 1000:.3f} µs, a pair "
             f"every {u['pair_spacing_us']:.1f} µs; "
             f"other traffic on the bottleneck ≈ {u['cross_traffic_mbps']:.1f} Mb/s",
             f"- probes lost: {u['lost']} of {u['sent']} (utilisation pairs), {c['lost']} (capacity pairs)", "",
             "## TCP throughput model (Padhye et al., the seed's bottleneck call)", "",
             f"- RTT {m['rtt_ms']:.4f} ms" + (f" ± {m['rtt_resolution_ms'] * 1e6:.0f} ns" if m.get("rtt_resolution_ms") else "")
             + f" ({m['rtt_from']}), loss {m['loss']:.3g} ({m['loss_frames'][0]} of "
             f"{m['loss_frames'][1]} probe frames" + (f"; below {m['loss_upper_95']:.2g} at 95 %" if m["loss_upper_95"] else "")
             + f"), window {m['window_packets']:.1f} packets of {m['mss_bytes']} B, b = {m['acked_per_ack']}, "
             f"T0 = {m['rto_ms']:g} ms",
             "- expected window E[W] = " + ("∞ (no loss)" if math.isinf(m["expected_window_packets"])
                                             else f"{m['expected_window_packets']:.1f} packets"),
             f"- model throughput: {m['throughput_mbps']:.1f} Mb/s{mbps_range(m, 'throughput_range_mbps')}; receiver "
             f"buffer: **{m['buffer']}**"
             + (" (the window limits the model, not losses)" if m["buffer"] == "shortage" else " (losses limit the model)"),
             f"- what the bottleneck leaves a TCP flow: {m['path_limit_mbps']:.1f} Mb/s of segments"
             f"{mbps_range(m, 'path_limit_range_mbps')} (capacity × (1 − u), headers and wire overhead off)",
             f"- expected TCP throughput: **{m['expected_mbps']:.1f} Mb/s**{mbps_range(m, 'expected_range_mbps')}, "
             f"limited by {m['bottleneck']}"]
    if m.get("throughput_range_mbps") is not None:
        lines += ["", "Ranges: the model's from the RTT's stamps (±2 ticks measured, none given) and the loss over its "
                  "95 % interval; the path's from the capacity's range and the utilisation ± two standard errors and "
                  "its stamp bound."]
    return "\n".join(lines) + "\n"


# ---- available bandwidth by probe streams (seed 003, ImTCP) ---------------------------------------------

LINE_MBPS = 1000.0                   # the fastest a stream is sent (100 %: minimum gap), line rate


@dataclass
class AvailPlan:
    proto: str
    size: int = 1518
    frames: int = 64                 # per probe stream
    streams: int = 4                 # sub-intervals of the search interval, one stream each
    rounds: int = 10
    gamma: float = 0.3               # smoothing: A <- (1 - gamma) A + gamma A_cur
    history: int = 5                 # past results that set the next search interval
    train: int = 64                  # the initial back-to-back train (Cprobe)
    drain_s: float = 0.0002
    vlan: int | None = None
    extra: dict = field(default_factory=dict)

    def check(self, depth: int = 512) -> None:
        if not 8 <= self.frames <= depth or not 2 <= self.train <= depth:
            raise SettingError(f"streams of 8..{depth} frames and a train of 2..{depth}: the sample FIFO")
        if not 2 <= self.streams <= 16 or not 1 <= self.rounds <= 10_000 or not 2 <= self.history <= 100:
            raise SettingError("2..16 streams per round, 1..10000 rounds and a history of 2..100 results")
        if not 0 < self.gamma <= 1:
            raise SettingError(f"gamma {self.gamma} out of range (0, 1]")
        Stream(proto=self.proto, size=self.size, vlan=self.vlan, extra=self.extra).check()

    def stream(self, rate_mbps: float, count: int) -> Stream:
        # rate_mbps is a line rate (preamble and gap included), as the tester's rate in percent of 1 Gb/s
        return Stream(proto=self.proto, size=self.size, rate_percent=min(100.0, rate_mbps / 10), count=count,
                      vlan=self.vlan, extra=self.extra)


def owd_trend(owds: list[float]) -> dict:
    """Whether one-way delays grow over a stream (its rate is above the available bandwidth), by
    pathload's two tests on the medians of sqrt(N) groups: PCT, the share of increases between
    consecutive medians, and PDT, the net change over the sum of absolute changes. Increasing when
    both pass pathload's threshold for a trend: PCT > 0.66 and PDT > 0.55. Either test alone, or a
    looser PDT, called trends in streams whose delays only wander (a queue fed by Poisson cross
    traffic, 10 % below the available bandwidth, on the twin)."""
    n = len(owds)
    groups = max(2, int(math.sqrt(n)))
    size = n // groups
    med = [float(np.median(owds[i * size:(i + 1) * size])) for i in range(groups)]
    steps = [b - a for a, b in zip(med, med[1:])]
    pct = sum(1 for d in steps if d > 0) / len(steps)
    total = sum(abs(d) for d in steps)
    pdt = (med[-1] - med[0]) / total if total else 0.0
    return {"pct": pct, "pdt": pdt, "increasing": pct > 0.66 and pdt > 0.55}


def next_interval(past: list[float], edge: str | None, floor_mbps: float, top_mbps: float) -> tuple[float, float]:
    """The next search interval: the 95 % interval of the recent results (mean +- 1.96 sd, at least
    +-10 % of the mean); a result at an edge of its interval (the truth may lie beyond) widens that side
    by the interval's width, so that a step is followed."""
    mean = float(np.mean(past))
    half = max(1.96 * float(np.std(past, ddof=1)) if len(past) > 1 else 0.0, 0.1 * mean)
    lo, hi = mean - half, mean + half
    if edge == "high":
        hi += 2 * half
    elif edge == "low":
        lo -= 2 * half
    return max(floor_mbps, lo), min(top_mbps, max(hi, lo + 2 * floor_mbps))


def availbw(t: Tester, plan: AvailPlan, tx: int, rx: int, out: Path, on_round=None) -> dict:
    """Cprobe's train for the first search interval, then rounds of probe streams at the sub-interval
    boundaries of the interval, lowest rate first, until one's one-way delay grows: the available
    bandwidth lies between the last rate that did not and the first that did. rounds.csv and
    results.json are written as rounds finish; on_round(round, record) may change the path (a test
    steps the cross traffic)."""
    _, train = probe_run(t, tx, rx, plan.stream(LINE_MBPS, plan.train), plan.drain_s)
    if len(train) < 2:
        raise SettingError("the initial train did not arrive: no path to measure")
    span = train[-1]["rx_ns"] - train[0]["rx_ns"]
    adr = (len(train) - 1) * (plan.size + WIRE_OVERHEAD) * 8 * 1000 / span       # Mb/s, line rate
    floor = 1.0
    lo, hi = max(floor, adr / 2), adr
    results = {"method": "available bandwidth by probe streams (seed 003, ImTCP)", "tx_port": tx, "rx_port": rx,
               "train_dispersion_mbps": adr, "rounds": []}
    smoothed = smoothed_range = None
    found: list[float] = []
    with open(out / "rounds.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["round", "t_ms", "lo_mbps", "hi_mbps", "rate_mbps", "pct", "pdt",
                                          "increasing", "lost", "a_cur_mbps", "a_smoothed_mbps"])
        w.writeheader()
        t0 = t.now_ticks()
        for rnd in range(plan.rounds):
            step = (hi - lo) / plan.streams
            rates = [lo + (j + 1) * step for j in range(plan.streams)]
            below, above, tried = lo, None, []
            for rate in rates:
                counters, records = probe_run(t, tx, rx, plan.stream(rate, plan.frames), plan.drain_s)
                trend = owd_trend([r["owd_ns"] for r in sorted(records, key=lambda r: r["seq"])]) \
                    if len(records) >= 8 else {"pct": None, "pdt": None, "increasing": True}
                increasing = trend["increasing"] or counters["lost"] > 0     # a loss is a queue that overflowed
                tried.append({"rate_mbps": rate, **trend, "increasing": increasing, "lost": counters["lost"]})
                if increasing:
                    above = rate
                    break
                below = rate
            edge = "high" if above is None else "low" if above == rates[0] else None
            a_range = round_range(edge, [s["rate_mbps"] for s in tried], hi)
            if edge == "high":
                a_cur = a_range[0]
            elif edge == "low":
                a_cur = lo
            else:
                a_cur = (below + above) / 2
            smoothed = a_cur if smoothed is None else (1 - plan.gamma) * smoothed + plan.gamma * a_cur
            # the smoothing is a weighted sum: the same sum of the rounds' ranges holds the same sum of
            # their truths
            smoothed_range = a_range if smoothed_range is None else \
                tuple((1 - plan.gamma) * s + plan.gamma * a for s, a in zip(smoothed_range, a_range))
            record = {"round": rnd, "t_ms": (t.now_ticks() - t0) * TICK_NS * 1e-6, "lo_mbps": lo, "hi_mbps": hi,
                      "streams": tried, "a_cur_mbps": a_cur, "a_cur_range_mbps": list(a_range), "edge": edge,
                      "a_smoothed_mbps": smoothed, "a_smoothed_range_mbps": list(smoothed_range),
                      "resolution_mbps": step, "model_available_mbps": model_available(t)}
            for s in tried:
                w.writerow({"round": rnd, "t_ms": record["t_ms"], "lo_mbps": lo, "hi_mbps": hi, **s,
                            "a_cur_mbps": a_cur, "a_smoothed_mbps": smoothed})
            f.flush()
            if on_round:
                on_round(rnd, record)
            results["rounds"].append(record)
            write_json_atomic(out / "results.json", results)
            # a result at an edge says the path changed: the results before it no longer describe it
            found = found + [a_cur] if edge is None else [a_cur]
            lo, hi = next_interval(found[-plan.history:], edge, floor, LINE_MBPS)
    return results


def model_available(t: Tester, paths: tuple = ("ab", "ab2"), added: dict | None = None) -> float | None:
    """On the twin, what the switch model leaves over `paths` (default port 0 -> 1): the smallest
    egress rate minus its cross traffic, and minus `added` Mb/s of further load on a path, over the
    enabled hops (line rate); with every hop a wire, the line less that load. None elsewhere."""
    if not t.has_dut_model:
        return None
    added = added or {}
    left = [h["rate_mbps"] - h["cross_mbps"] - added.get(p, 0.0)
            for p, h in ((p, t.dut_get(p)) for p in t.dut_paths() if p in paths) if h["enable"]]
    return min(left) if left else 1000.0 - sum(added.values())


def availbw_report(results: dict) -> str:
    rows = [_with_ranges(r) for r in results["rounds"]]
    lines = [f"# Available bandwidth by probe streams, port {results['tx_port']} → {results['rx_port']}", "",
             f"- initial search interval from a back-to-back train's dispersion rate: "
             f"{results['train_dispersion_mbps']:.1f} Mb/s (Cprobe; above the available bandwidth under cross traffic)",
             "- rates are line rates (preamble and gap included); a round's A_cur lies between the last stream "
             "whose one-way delay did not grow and the first that did (the column 'A_cur range'); when every stream "
             "passed, between the fastest and the line rate; when the slowest grew, below it. Ā smooths A_cur with "
             "gamma; the same smoothing of the rounds' ranges holds it",
             "", "| round | tester time (ms) | interval (Mb/s) | streams | A_cur (Mb/s) | A_cur range (Mb/s) | Ā (Mb/s) "
             "| Ā range (Mb/s) |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        (lo, hi), (slo, shi) = r["a_cur_range_mbps"], r["a_smoothed_range_mbps"]
        lines.append(f"| {r['round']} | {r['t_ms']:.2f} | {r['lo_mbps']:.1f} … {r['hi_mbps']:.1f} | {len(r['streams'])} | "
                     f"{a_cur_text(r)} | {lo:.1f} … {hi:.1f} | {r['a_smoothed_mbps']:.1f} | {slo:.1f} … {shi:.1f} |")
    return "\n".join(lines) + "\n"


def round_range(edge: str | None, rates: list[float], hi: float) -> tuple[float, float]:
    """Where a round's available bandwidth lies, from the rates of the streams it sent (lowest first, up
    to the first that grew) and its interval's top: between the last rate that did not grow and the first
    that did; past the top edge, between the fastest stream and the line rate (no path carries more), so
    a line-rate stream that did not grow is the line rate; below the bottom edge, under the slowest."""
    if edge == "high":
        return min(hi, LINE_MBPS), LINE_MBPS
    if edge == "low":
        return 0.0, rates[0]
    return rates[-2], rates[-1]


def _with_ranges(r: dict) -> dict:
    """A round as results.json holds it. One written before the ranges were (2026-11-29) gets its own range
    from its streams as availbw() sets it now, and Ā's range from the smoothed half sub-intervals it held
    then."""
    if "a_cur_range_mbps" in r:
        return r
    own = round_range(r["edge"], [s["rate_mbps"] for s in r["streams"]], r["hi_mbps"])
    s_half = r["a_smoothed_resolution_mbps"]
    return {**r, "a_cur_range_mbps": list(own),
            "a_smoothed_range_mbps": [r["a_smoothed_mbps"] - s_half, r["a_smoothed_mbps"] + s_half]}


def a_cur_text(r: dict) -> str:
    """A round's A_cur as the report and the progress line give it: a value between two streams, or the
    bound an edge gives (the line rate itself when a line-rate stream did not grow)."""
    lo, hi = r["a_cur_range_mbps"]
    if r["edge"] == "high":
        return f"{hi:.1f} (line rate)" if lo == hi else f"≥ {lo:.1f} (top edge)"
    if r["edge"] == "low":
        return f"< {hi:.1f} (bottom edge)"
    return f"{r['a_cur_mbps']:.1f}"


def availbw_plot(out: Path, results: dict) -> Path | None:
    """The paper's Fig. 3: the measured and the smoothed available bandwidth over time (and, on the
    twin, what the model leaves: capacity minus cross traffic)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from fpgatest.output import save

    rows = [_with_ranges(r) for r in results["rounds"]]
    if not rows:
        return None
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ts = [r["t_ms"] for r in rows]
    # a round between two streams: A_cur and its range; at an edge the bound it gives (below the slowest
    # stream, or above the fastest short of the line rate), a value only where the line rate is the bound
    inside = [r for r in rows if r["edge"] is None or r["a_cur_range_mbps"][0] == r["a_cur_range_mbps"][1]]
    ax.errorbar([r["t_ms"] for r in inside], [r["a_cur_mbps"] for r in inside],
                yerr=[[r["a_cur_mbps"] - r["a_cur_range_mbps"][0] for r in inside],
                      [r["a_cur_range_mbps"][1] - r["a_cur_mbps"] for r in inside]],
                fmt="o", color="0.4", capsize=2, label="measured (A_cur and its range)")
    for edge, marker, bound, text in (("low", "v", 1, "below (slowest stream grew)"),
                                      ("high", "^", 0, "above (every stream passed)")):
        at = [r for r in rows if r["edge"] == edge and r not in inside]
        if at:
            ax.plot([r["t_ms"] for r in at], [r["a_cur_range_mbps"][bound] for r in at], marker, color="0.4",
                    linestyle="none", label=f"measured: a bound, A {text}")
    ax.plot(ts, [r["a_smoothed_mbps"] for r in rows], "-", color="C0", label="smoothed (Ā)")
    if all(r["model_available_mbps"] is not None for r in rows):
        ax.step(ts, [r["model_available_mbps"] for r in rows], where="post", color="C3",
                label="twin's model: capacity − cross traffic")
    ax.set_xlabel("tester time (ms)")
    ax.set_ylabel("available bandwidth (Mb/s, line rate)")
    ax.legend()
    return save(fig, ax, out / "availbw.png")



# ---- single-ended throughput with ICMP echo (seed 004, Treno) -----------------------------------------

WINDOW_OPEN_TICKS = 29               # a reply's last byte in -> the next request's SFD out (sim/window)


@dataclass
class EchoPlan:
    proto: str = "ipv4"
    size: int = 576                  # the paper's MTU
    window: int = 56                 # frames: the fixed window, Reno's first (0: no window, send at --rate)
    window_max: int = 0              # Reno's largest window (0: fixed window)
    rate_percent: float | None = None  # without a window: the request rate (default line rate)
    pings: int = 32                  # window-1 requests for the idle RTT
    duration_s: float = 0.01         # tester time per load level
    interval_s: float = 0.002        # progress snapshots (host-polled; each stamped with the tester's time)
    timeout_s: float | None = None   # window timeout (default: 10 idle RTTs, at least 20 us)
    loads_mbps: list = field(default_factory=lambda: [0.0])
    load_size: int = 64
    load_random: bool = False
    load_port: int | None = None     # the load from this port's generator instead of the twin's cross traffic
    reflector: int | None = None     # the far end is this port's reflector (instead of the twin's responder)
    drain_s: float = 0.0002
    vlan: int | None = None
    extra: dict = field(default_factory=dict)

    @property
    def reno(self) -> bool:
        return self.window_max > 0

    def check(self) -> None:
        if self.proto not in ("ipv4", "ipv6"):
            raise SettingError("ICMP echo needs --proto ipv4 or ipv6")
        if not 0 <= self.window < 1 << 16 or not (self.window_max == 0 or self.window <= self.window_max < 1 << 16):
            raise SettingError(f"window {self.window} (largest {self.window_max}) out of range: 0..65535 frames, "
                               "the largest at least the first")
        if self.reno and not self.window:
            raise SettingError("a Reno window needs a first window of at least 1 frame")
        if not 1 <= self.pings <= 512:
            raise SettingError(f"{self.pings} pings: 1..512 (the sample FIFO)")
        if not self.interval_s <= self.duration_s:
            raise SettingError("the progress interval must not exceed the duration")
        if any(not 0 <= x <= 1000 for x in self.loads_mbps) or not 64 <= self.load_size <= 16383:
            raise SettingError("load 0..1000 Mb/s in frames of 64..16383 bytes")
        self.stream(1, 0).check()

    def stream(self, window: int, timeout_ticks: int, count: int = 0, reno: bool = False) -> Stream:
        return Stream(proto=self.proto, size=self.size, count=count, vlan=self.vlan, icmp=True,
                      rate_percent=None if window else self.rate_percent,
                      win_mode=(2 if reno else 1) if window else 0, win_size=window,
                      win_max=self.window_max if reno else 0, win_timeout=timeout_ticks, extra=self.extra)


def echo_truth(t: Tester, size: int, window: int, rtt_ns: float, offered_percent: float | None = None,
               return_load_mbps: float = 0.0) -> dict | None:
    """On the twin, what the model allows an echo run: the bottleneck left by the cross traffic on the
    way out and back, and by return_load_mbps of load from port 1 on the way back (frames carry
    size + 20 bytes of line), and what a fixed window of `window` frames can carry per round trip
    (the window opens once a reply's last byte is in), or without a window what is offered
    (offered_percent of line rate). Frame bits, Mb/s."""
    avail = model_available(t, ("ab", "ab2", "ba"), {"ba": return_load_mbps})
    if avail is None:
        return None
    link = max(0.0, avail) * size / (size + WIRE_OVERHEAD)
    cycle_ns = rtt_ns + (size + WINDOW_OPEN_TICKS) * TICK_NS
    win = window * size * 8 / cycle_ns * 1000 if window else None
    offered = None if offered_percent is None else offered_percent * 10 * size / (size + WIRE_OVERHEAD)
    return {"available_mbps": avail, "link_bound_mbps": link, "window_bound_mbps": win, "offered_mbps": offered,
            "expected_mbps": min(x for x in (link, win, offered) if x is not None)}


def _echo_drops(t: Tester) -> int | None:
    """Frames the twin's model dropped: the switch paths' drops, and the frames the responder had no
    room for (a request among them goes unanswered)."""
    if not t.has_dut_model:
        return None
    switch = sum(h["drop_buffer"] + h["drop_size"] for h in (t.dut_get(p) for p in t.dut_paths()) if h["enable"])
    return switch + (t.echo_get()["no_room"] if t.has_echo_model else 0)


def echo_check(t: Tester, plan: EchoPlan, port: int, reply_port: int) -> None:
    """What echo() needs of the build and the ports, refused before anything is sent or written."""
    twin = t.has_echo_model
    reflector = plan.reflector
    if reflector is not None:
        if reflector == port or not 0 <= reflector < t.n_ports:
            raise SettingError(f"--reflector {reflector}: another port of this tester than --tx-port")
        if reply_port != port:
            raise SettingError("a reflector sends the replies back to the sending port: leave --reply-port out")
        if plan.load_port == reflector:
            raise SettingError("--load-port: the reflecting port cannot send load as well")
        ring = t.require_reflector(reflector)
        if plan.size > ring:
            raise SettingError(f"{plan.size}-byte requests: port {reflector}'s reflector holds frames up to {ring} bytes")
    if not 0 <= reply_port < t.n_ports:
        raise SettingError(f"--reply-port {reply_port} out of range: this tester has ports 0..{t.n_ports - 1}")
    if not twin and plan.loads_mbps != [0.0] and plan.load_port is None:
        raise SettingError("background load (--load) without --load-port is the twin's model: twin only")
    if plan.load_port is not None:
        if not 0 <= plan.load_port < t.n_ports or plan.load_port == port or not t.has(plan.load_port, "tx"):
            raise SettingError(f"--load-port {plan.load_port}: not a sending port of this tester other than --tx-port")
    if plan.window and reply_port != port:
        raise SettingError("a window needs the replies on the sending port (the window is in that port's gateware)")
    if not t.has(reply_port, "rx"):
        raise SettingError(f"port {reply_port} has no receiver in this build: the replies cannot be counted")


def no_reply_hint(t: Tester, proto: str, port: int, reflector: int | None, twin: bool) -> str:
    """What would answer echo requests from `port` that none did: through the twin's kernel the router's
    own address, or (a bridge) the reflector of the port they go to by default; else what the far end
    answers and where the requests could have been lost."""
    addressed = (port + 1) % t.n_ports
    kernel = t.kernel or {}
    if t.tap_ports():
        if port < len(kernel.get("router") or ()):
            router = kernel["router"][port]["ipv6" if proto == "ipv6" else "ipv4"]
            return f"the Linux router answers for itself: --dst-ip {router}"
        if reflector is None and kernel.get("mode") == "bridge":
            return f"the Linux bridge answers nothing itself: let port {addressed}'s reflector answer (--reflector {addressed})"
        if reflector is None:
            return ("through the Linux kernel: a router answers for itself at its own address (--dst-ip), a bridge "
                    f"not at all (let port {addressed}'s reflector answer: --reflector {addressed})")
    if reflector is not None:
        return (f"port {reflector}'s reflector answers every request to its MAC that reaches it: the path lost the "
                "requests or the replies, or --dst-mac sent them elsewhere")
    if twin:
        return ("the twin's responder answers every request that reaches it: the switch model's paths lost the "
                "requests or the replies (fpgatest dut)")
    return "address a host that answers ping (--dst-ip, --dst-mac) or let a port's reflector answer (--reflector N)"


def echo(t: Tester, plan: EchoPlan, port: int, reply_port: int, out: Path, on_level=None) -> dict:
    """Idle RTT from window-1 pings, then per load level a windowed run of plan.duration_s: replies per
    second between two snapshots (exact tester times), RTTs of every reply, losses from the sequence
    tracker after the path has drained, the window's own view (cwnd, losses, cuts, timeouts).
    On the twin each level sets the model's cross traffic on path ab (background load on the way to the
    responder) and the responder answers; everything the command changed is put back."""
    echo_check(t, plan, port, reply_port)
    twin = t.has_echo_model
    reflector = plan.reflector
    peer = (reply_port + 1) % t.n_ports
    saved_echo = t.echo_get() if twin else None
    saved_ab = t.dut_registers("ab") if twin else None
    far_end = (f"port {reflector}'s reflector" if reflector is not None
               else "the twin's echo responder" if twin else "the device under test")
    results = {"method": "single-ended throughput with ICMP echo (seed 004, Treno)", "port": port,
               "reply_port": reply_port, "far_end": far_end, "size": plan.size, "window": plan.window,
               "window_max": plan.window_max, "mode": "reno" if plan.reno else "fixed" if plan.window else "none",
               "levels": []}
    # the replies carry the sending port's stream (port n sends stream n + 1, the register layout's
    # default): the reply port counts it, and takes back its own default (its peer's stream) at the end
    t.dev.write(f"port{reply_port}_cfg_rx_stream_id", port + 1)
    if reflector is not None:
        # the requests go to the reflecting port's own MAC, unless the user addressed them
        plan.extra.setdefault("cfg_dst_mac", int(t.dev.map.constants[f"fpgatest_port{reflector}_mac"]))
    try:
        if twin:
            t.echo_set(enable=reflector is None)
        if reflector is not None:
            t.reflect(reflector, True)
        # one request at a time (a window of 1; a lost one holds the next back only until the timeout,
        # 1 ms unless given), or without a window (replies on another port, or none asked for) spaced
        # by that time
        ping_ticks = round((plan.timeout_s if plan.timeout_s is not None else 1e-3) / (TICK_NS * 1e-9))
        if plan.window and reply_port == port:
            pings = plan.stream(1, ping_ticks, count=plan.pings)
        else:
            pings = plan.stream(0, 0, count=plan.pings)
            pings.rate_percent, pings.ifg = None, min(MAX_GAP, max(MIN_IFG, ping_ticks - plan.size - 8))
        counters, records = probe_run(t, port, reply_port, pings, plan.drain_s)
        if not records:
            raise SettingError(f"no echo reply came back: nothing answers the requests at {far_end}; "
                               f"{no_reply_hint(t, plan.proto, port, reflector, twin)}")
        rtts = [r["owd_ns"] for r in records]
        idle = {"pings": plan.pings, "replies": len(records), "lost": counters["lost"], "rtt_min_ns": min(rtts),
                "rtt_mean_ns": float(np.mean(rtts)), "rtt_max_ns": max(rtts)}
        results["idle"] = idle
        timeout_s = plan.timeout_s if plan.timeout_s is not None else max(10 * idle["rtt_max_ns"] * 1e-9, 20e-6)
        timeout_ticks = round(timeout_s / (TICK_NS * 1e-9))
        if not 1 <= timeout_ticks < 1 << 32:
            raise SettingError(f"window timeout {timeout_s} s out of range")
        results["timeout_us"] = timeout_ticks * TICK_NS / 1000
        with open(out / "intervals.csv", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=["load_mbps", "t_ms", "sent", "replies", "cwnd", "throughput_mbps"])
            w.writeheader()
            for load in plan.loads_mbps:
                if twin and plan.load_port is None:
                    t.dut_set("ab", cross_mbps=load, cross_size=plan.load_size, cross_random=plan.load_random)
                level = _echo_level(t, plan, port, reply_port, timeout_ticks, load, w)
                level["truth"] = echo_truth(t, plan.size, plan.window if not plan.reno else 0, idle["rtt_min_ns"],
                                            None if plan.window else plan.rate_percent or 100.0,
                                            load if plan.load_port is not None else 0.0)
                f.flush()
                results["levels"].append(level)
                write_json_atomic(out / "results.json", results)
                if on_level:
                    on_level(level)
    finally:
        t.dev.write(f"port{reply_port}_cfg_rx_stream_id", peer + 1)     # the layout's default: the peer's stream
        if reflector is not None:
            t.reflect(reflector, False)
        if twin:
            t.dut_restore(saved_ab)
            t.echo_set(enable=saved_echo["enable"])
    return results


def _echo_level(t: Tester, plan: EchoPlan, port: int, reply_port: int, timeout_ticks: int, load: float, w) -> dict:
    stream = plan.stream(plan.window, timeout_ticks, reno=plan.reno)
    drops0 = _echo_drops(t)
    t.clear()
    t.configure(port, stream)
    loading = plan.load_port is not None and load > 0
    if loading:
        # the far end's load: the other port's generator at the level's line rate for the whole run
        t.configure(plan.load_port, Stream(proto="ipv4", size=plan.load_size, rate_percent=load / 10))
        t.start(plan.load_port)
    first = t.snapshot()
    t.start(port)
    rows = []
    try:
        end = first["time_ticks"] + round(plan.duration_s / (TICK_NS * 1e-9))
        step = max(1, round(plan.interval_s / (TICK_NS * 1e-9)))
        prev = first
        # at least two progress snapshots: the throughput is taken between the first and the last
        while prev["time_ticks"] < end or len(rows) < 2:
            t.wait_ticks(step)
            snap = t.snapshot()
            tx, rx = snap["ports"][port], snap["ports"][reply_port]
            dt = (snap["time_ticks"] - prev["time_ticks"]) * TICK_NS * 1e-9
            replies = rx["test_frames"] - prev["ports"][reply_port]["test_frames"]
            row = {"load_mbps": load, "t_ms": (snap["time_ticks"] - first["time_ticks"]) * TICK_NS * 1e-6,
                   "sent": tx["tx_frames"], "replies": rx["test_frames"], "cwnd": tx["win_cwnd"],
                   "throughput_mbps": replies * plan.size * 8 / dt / 1e6}
            w.writerow(row)
            rows.append({**row, "time_ticks": snap["time_ticks"]})
            prev = snap
    finally:
        t.stop(port)
        if loading:
            t.stop(plan.load_port)
    final = drain(t, [reply_port], plan.drain_s)
    p_tx, p_rx = final["ports"][port], final["ports"][reply_port]
    # throughput between the first progress snapshot and the last: the start-up (slow start, the first
    # round trip) left out; +-1 reply at each end of the span is the counting resolution
    a, b = rows[0], rows[-1]
    span_s = (b["time_ticks"] - a["time_ticks"]) * TICK_NS * 1e-9
    count = b["replies"] - a["replies"]
    rate = count * plan.size * 8 / span_s / 1e6 if span_s > 0 else None
    sent = p_tx["tx_frames"]
    lost = frames_lost(p_rx, stream.seq_start, sent)
    drops1 = _echo_drops(t)
    return {"load_mbps": load, "sent": sent, "replies": p_rx["test_frames"], "lost": lost,
            "model_drops": None if drops0 is None else drops1 - drops0,
            "throughput_mbps": rate, "throughput_resolution_mbps": 2 * plan.size * 8 / span_s / 1e6 if span_s > 0 else None,
            "span_ms": span_s * 1000, "replies_in_span": count,
            "rtt": Tester.latency_summary(p_rx), "cwnd": p_tx["win_cwnd"], "window_lost": p_tx["win_lost"],
            "cuts": p_tx["win_cuts"], "timeouts": p_tx["win_timeouts"], "foreign": p_rx["foreign"],
            "reflector_dropped": None if plan.reflector is None
            else final["ports"][plan.reflector]["reflect_dropped"],
            "progress": rows}


def echo_report(results: dict) -> str:
    idle = results["idle"]
    mode = {"reno": f"Reno-like window, first {results['window']}, largest {results['window_max']} frames",
            "fixed": f"fixed window of {results['window']} frames", "none": "no window"}[results["mode"]]
    timeout = f"; window timeout {results['timeout_us']:.1f} us" if results["mode"] != "none" else ""
    lines = [f"# Single-ended throughput with ICMP echo, port {results['port']} (replies on port {results['reply_port']})",
             "", f"- {results['size']}-byte echo requests, {mode}{timeout}; far end: {results.get('far_end', 'the device under test')}",
             f"- idle RTT ({idle['replies']} of {idle['pings']} pings answered): min {idle['rtt_min_ns']:.0f} ns, "
             f"mean {idle['rtt_mean_ns']:.1f} ns, max {idle['rtt_max_ns']:.0f} ns (stamps: 8 ns)",
             "- throughput: reply frames' bits per second between the first and the last progress snapshot "
             "(± the counting resolution: one reply at each end of the span)", "",
             "| load (Mb/s) | sent | replies | lost | model drops | throughput (Mb/s) | expected (Mb/s) | "
             "RTT min / mean / max (ns) | cwnd | cuts | timeouts |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for lv in results["levels"]:
        rtt = lv["rtt"]
        truth = lv["truth"]
        lines.append(
            f"| {lv['load_mbps']:g} | {lv['sent']} | {lv['replies']} | {lv['lost']} | "
            f"{number_text(lv['model_drops'], 'd')} | {number_text(lv['throughput_mbps'], '.2f')} ± "
            f"{number_text(lv['throughput_resolution_mbps'], '.2f')} | "
            f"{number_text(truth['expected_mbps'] if truth else None, '.2f')} | "
            f"{number_text(rtt['min'], '.0f')} / {number_text(rtt['mean'], '.1f')} / {number_text(rtt['max'], '.0f')} | "
            f"{lv['cwnd']} | {lv['cuts']} | {lv['timeouts']} |")
    if any(lv["truth"] for lv in results["levels"]):
        lines += ["", "expected (twin): the smaller of what the bottleneck leaves (capacity − load, less preamble "
                      "and gap) and, for a fixed window, W·size per round trip (idle RTT + the reply's own length "
                      "+ 29 ticks until the window opens), or without a window what is offered."]
    return "\n".join(lines) + "\n"


def echo_plot(out: Path, results: dict) -> Path | None:
    """The paper's Figs. 2-5: throughput against background load (with the bounds the twin knows), and
    the window over tester time per load."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from fpgatest.output import save

    levels = [lv for lv in results["levels"] if lv["throughput_mbps"] is not None]
    if not levels:
        return None
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 4.5))
    loads = [lv["load_mbps"] for lv in levels]
    ax.errorbar(loads, [lv["throughput_mbps"] for lv in levels], yerr=[lv["throughput_resolution_mbps"] for lv in levels],
                fmt="o-", color="C0", label="measured (replies)")
    if all(lv["truth"] for lv in levels):
        ax.plot(loads, [lv["truth"]["link_bound_mbps"] for lv in levels], "--", color="C3",
                label="bottleneck − load (twin's model)")
        if levels[0]["truth"]["window_bound_mbps"] is not None:
            ax.plot(loads, [lv["truth"]["window_bound_mbps"] for lv in levels], ":", color="C2", label="window / RTT")
    ax.set_xlabel("background load (Mb/s)")
    ax.set_ylabel("echo throughput (Mb/s, frame bits)")
    ax.legend()
    for i, lv in enumerate(levels):
        ax2.step([r["t_ms"] for r in lv["progress"]], [r["cwnd"] for r in lv["progress"]], where="post",
                 color=f"C{i % 10}", label=f"load {lv['load_mbps']:g} Mb/s")
    ax2.set_xlabel("tester time (ms)")
    ax2.set_ylabel("window at each snapshot (frames)")
    ax2.legend(fontsize="small")
    return save(fig, ax, out / "echo.png")
