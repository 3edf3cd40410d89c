# SPDX-License-Identifier: BSD-2-Clause
"""Where a sweep sets the histogram's bins as the latency moves (measure._Bins), interval by interval."""

import pytest

from fpgatest.measure import SweepPlan, _Bins, histogram_setting
from fpgatest.tester import SettingError, Tester, histogram_edges, lat_ns


class Histogram:
    """The receiver's bins as the host sets them (Tester.set_histogram's arithmetic), and where
    each of a run's intervals falls: wholly inside the bins, or not."""

    def __init__(self):
        self.settings = []

    def set_histogram(self, port: int, low_ns: float, high_ns: float, log: bool = False) -> dict:
        base, shift = Tester.histogram_bins(low_ns, high_ns, log)
        self.settings.append((low_ns, high_ns, log))
        return Tester.histogram_record(base, shift, log)


def run(latencies: list[tuple], plan: SweepPlan | None = None) -> list[tuple[int, float]]:
    """Intervals of (min, max[, mean]) latency (mean: the middle unless given), 1000 frames each,
    through _Bins as poll_intervals drives it: returns (interval, narrowest bin width) of every setting."""
    plan = plan or SweepPlan("ipv4", [64], 12, None, 1.0, 0.1)
    bins, hist, rows, set_at = _Bins(plan), Histogram(), [], []
    below = above = 0
    for i, (lo, hi, *mean) in enumerate(latencies):
        prev = {"ports": [{}, {"hist_below": below, "hist_above": above}]}
        if bins.hist:   # the frames outside the bins that held this interval (all of its low or high end)
            low_edge, high_edge = bins.hist["edges_ns"][0], bins.hist["edges_ns"][-1]
            below += 500 if lo < low_edge else 0
            above += 500 if hi >= high_edge else 0
        cur = {"ports": [{}, {"hist_below": below, "hist_above": above}]}
        row = {"interval": i, "lat_count": 1000, "latency_min_ns": lo, "latency_max_ns": hi,
               "latency_mean_ns": mean[0] if mean else (lo + hi) / 2}
        # room as poll_intervals gives it: the interval after next is still to come
        if over := bins.due(rows, prev, cur, row, lambda: i + 2 < len(latencies)):
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


@pytest.mark.parametrize("last", [1, 2])
def test_bins_set_too_late_to_hold_an_interval_are_not_set(last):
    # a queue fills, then holds: the bins set while it filled would narrow after three calm intervals,
    # but the run ends before any interval could be binned over narrower ones
    fill, full = [(1_000, 5_000), (5_000, 200_000), (200_000, 600_000)], (600_000, 600_800)
    assert [i for i, _ in run(fill + [full] * 6)] == [0, 2, 6]      # with room, as above
    # the same narrowing due in the last interval, or in the one before it
    assert [i for i, _ in run(fill + [full] * (3 + last))] == [0, 2]
    # the latency moves in the last two intervals: the bins stay, the frames outside them counted so
    calm = [(1_000, 1_100)] * 6
    assert [i for i, _ in run(calm + [(1_000, 1_100)] * (2 - last) + [(1_000, 90_000)] * last)] == [0]
    assert [i for i, _ in run(calm + [(1_000, 90_000)] * 3)] == [0, 6]


def test_a_heavy_tail_gets_logarithmic_bins_that_hold_it():
    # the bursts above as they are: most frames calm, so the mean stays near the calm latency
    calm, burst = (1_000, 1_100, 1_050), (1_000, 50_000, 1_400)
    set_at = run(([calm] * 4 + [burst]) * 6)
    # the first interval is calm (linear bins of 0.5 ns); the first burst moves them, and with the mean
    # in the first 1/16 of the range they become logarithmic from just below the calm latency: 0.5 ns
    # bins by the base, every burst inside their reach (2^17 units of 0.5 ns = 65.5 us), never moved
    assert [i for i, _ in set_at] == [0, 4]
    assert set_at[1][1] == 0.5
    row = {"lat_count": 1000, "latency_min_ns": 1_000, "latency_max_ns": 50_000, "latency_mean_ns": 1_400}
    low, high, log = histogram_setting([row])
    assert log and low == 992.0 and high == 50_000 + 0.25 * 49_000
    edges = histogram_edges(*Tester.histogram_bins(low, high, log), log)
    assert lat_ns(edges[-1]) >= high and lat_ns(edges[1] - edges[0]) == 0.5
    # each bin past the first four at most a quarter of its distance from the base wide
    assert all((b - a) * 4 <= a - edges[0] for a, b in zip(edges[4:], edges[5:]))


def test_the_scale_can_be_asked_for():
    spread = {"lat_count": 1000, "latency_min_ns": 1_000, "latency_max_ns": 2_000, "latency_mean_ns": 1_500}
    tail = {**spread, "latency_mean_ns": 1_010}
    assert histogram_setting([spread])[2] is False and histogram_setting([tail])[2] is True
    assert histogram_setting([spread], "log")[2] is True and histogram_setting([tail], "linear")[2] is False
    with pytest.raises(SettingError, match="auto, linear or log"):
        histogram_setting([spread], "logarithmic")
