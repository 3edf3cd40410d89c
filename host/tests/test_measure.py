# SPDX-License-Identifier: BSD-2-Clause
"""Where a sweep sets the histogram's bins as the latency moves (measure._Bins), interval by interval."""

from fpgatest.measure import SweepPlan, _Bins
from fpgatest.tester import HIST_BINS, Tester, lat_ns


class Histogram:
    """The receiver's bins as the host sets them (Tester.set_histogram's arithmetic), and where
    each of a run's intervals falls: wholly inside the bins, or not."""

    def __init__(self):
        self.settings = []

    def set_histogram(self, port: int, low_ns: float, high_ns: float) -> dict:
        base, shift = Tester.histogram_bins(low_ns, high_ns)
        self.settings.append((low_ns, high_ns))
        return {"base_ns": lat_ns(base), "bin_ns": lat_ns(1 << shift), "bins": HIST_BINS}


def run(latencies: list[tuple[float, float]]) -> list[tuple[int, float]]:
    """Intervals of (min, max) latency, 1000 frames each, through _Bins as poll_intervals drives it:
    returns (interval, bin width) of every setting."""
    plan = SweepPlan("ipv4", [64], 12, None, 1.0, 0.1)
    bins, hist, rows, set_at = _Bins(plan), Histogram(), [], []
    below = above = 0
    for i, (lo, hi) in enumerate(latencies):
        prev = {"ports": [{}, {"hist_below": below, "hist_above": above}]}
        if bins.hist:   # the frames outside the bins that held this interval (all of its low or high end)
            low_edge = bins.hist["base_ns"]
            high_edge = low_edge + HIST_BINS * bins.hist["bin_ns"]
            below += 500 if lo < low_edge else 0
            above += 500 if hi >= high_edge else 0
        cur = {"ports": [{}, {"hist_below": below, "hist_above": above}]}
        row = {"interval": i, "lat_count": 1000, "latency_min_ns": lo, "latency_max_ns": hi}
        if over := bins.due(rows, prev, cur, row):
            bins.set(hist, over)
            bins.judged_from = i + 2
            set_at.append((i, bins.hist["bin_ns"]))
        rows.append(row)
    return set_at


def test_bins_narrow_once_a_filled_queue_settles():
    # a queue fills over four intervals, then holds its latency within one frame time
    fill = [(1_000, 5_000), (5_000, 200_000), (200_000, 600_000), (600_000, 764_000)]
    full = [(763_500, 764_300)] * 12
    set_at = run(fill + full)
    # the first interval; moved by the third (the second was binned partly before the first setting);
    # the bins set over it (16 us each) hold the full queue, 512 times too wide; narrowed over the three
    # intervals binned wholly over them
    assert [i for i, _ in set_at] == [0, 2, 6]
    assert set_at[-1][1] * 4 <= set_at[-2][1]
    assert set_at[-1][1] == 32.0        # 800 ns and 200 ns each side: 64 bins of 32 ns (16 ns reach 1024)


def test_bins_that_move_again_after_narrowing_stay_wide():
    # bursts: four calm intervals, one with a 50 us tail, again and again
    calm, burst = (1_000, 1_100), (1_000, 50_000)
    set_at = run(([calm] * 4 + [burst]) * 6)
    # the first interval; the first burst moves them; narrowed over the calm that follows (the burst at
    # 9 was binned partly before that); the next burst moves them again, and from then on the bins hold
    # the bursts and the calm alike
    assert [i for i, _ in set_at] == [0, 4, 8, 14]
    widths = [w for _, w in set_at]
    assert widths[1] > widths[0] and widths[2] * 4 <= widths[1] and widths[3] == widths[1]
