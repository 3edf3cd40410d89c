# SPDX-License-Identifier: BSD-2-Clause
"""The analysis on data with known answers: uncertainties, outlying sizes, fill and plateau."""

import pytest

from fpgatest.analysis import TICK_NS, linear_fit, outlying_sizes, ramp_plateau, size_fits, time_series_fit

SIZES = [64, 128, 256, 512, 1024, 1280, 1518]


def size_records(latency):
    return [{"size_bytes": x, "latency_ns": {"mean": latency(x), "min": latency(x)}} for x in SIZES]


def test_two_points_have_no_standard_error():
    fit = linear_fit([64, 1518], [1512.0, 13144.0])
    assert fit["slope"] == pytest.approx(8.0) and fit["slope_se"] is None and fit["intercept_se"] is None


def test_exact_line_reports_resolution_not_zero():
    fit = size_fits(size_records(lambda x: 1000 + 8 * x), [])
    assert fit["slope_se"] == pytest.approx(0.0, abs=1e-9) and fit["intercept_resolution_ns"] == TICK_NS / 2
    assert fit["slope_resolution"] == pytest.approx(TICK_NS / (1518 - 64))
    assert fit["bandwidth_gbps"] == pytest.approx(1.0) and fit["warnings"] == [] and fit["outlying_sizes"] == []


def test_bandwidth_carries_the_slopes_uncertainties():
    # bandwidth = 8 / slope: its se and resolution are the slope's times bandwidth / slope
    wobble = {64: 0, 128: 8, 256: 0, 512: 8, 1024: 0, 1280: 8, 1518: 0}
    fit = size_fits(size_records(lambda x: 1000 + 8 * x + wobble[x]), [])
    bw, slope = fit["bandwidth_gbps"], fit["slope_ns_per_byte"]
    assert fit["slope_se"] > 0
    assert fit["bandwidth_se_gbps"] == pytest.approx(bw * fit["slope_se"] / slope)
    assert fit["bandwidth_resolution_gbps"] == pytest.approx(bw * TICK_NS / (1518 - 64) / slope)


@pytest.mark.parametrize("slope,jitter,warned", [
    (7.991, 24, False),   # as the Linux kernel measured (se ~0.01 ns/B): 1 Gb/s is inside the 95 % interval
    (7.991, 0, True),     # the same slope with no scatter: below a byte time by more than the resolution
    (7.5, 24, True),      # a device faster than the line: beyond both
])
def test_above_line_rate_only_beyond_resolution_and_the_95_interval(slope, jitter, warned):
    wobble = {64: 0, 128: 1, 256: -1, 512: 1, 1024: -1, 1280: 1, 1518: 0}
    fit = size_fits(size_records(lambda x: 150 + slope * x + jitter * wobble[x]), [])
    assert fit["slope_ns_per_byte"] < 8
    assert any("below one byte time" in w for w in fit["warnings"]) == warned, fit


def test_an_outlying_size_is_flagged_and_refitted():
    # a device that forwards its largest frames early (cut-through above 1280 B): 1518 leaves the line
    fit = size_fits(size_records(lambda x: 1000 + 8 * x if x <= 1280 else 1000 + 8 * 1280 + 2 * (x - 1280)), [])
    assert fit["outlying_sizes"] == [1518]
    assert fit["refit"]["points"] == 6 and any("1518" in w for w in fit["warnings"])


def test_one_tick_of_jitter_is_not_an_outlier():
    wobble = {64: 0, 128: 8, 256: 0, 512: 8, 1024: 0, 1280: 8, 1518: 0}
    assert outlying_sizes([(x, 1000 + 8 * x + wobble[x]) for x in SIZES]) == []


def test_trend_carries_its_se_and_the_stamps_bound():
    # ten 2 ms intervals (midpoints 1..19 ms) of a latency rising 1000 ns/s, one tick of wobble
    samples = [{"t_start_s": 0.002 * i, "duration_s": 0.002, "lat_count": 100,
                "latency_mean_ns": 1000 + 1000 * (0.002 * i + 0.001) + TICK_NS * (i % 2)} for i in range(10)]
    trend = time_series_fit(samples)
    assert trend["n"] == 10 and trend["slope_se"] > 0
    assert abs(trend["slope_ns_per_s"] - 1000) < 3 * trend["slope_se"]
    assert trend["slope_resolution_ns_per_s"] == pytest.approx(TICK_NS / 0.018)
    assert time_series_fit(samples[:1])["slope_resolution_ns_per_s"] is None


def test_fill_then_plateau():
    # a buffer filling at 5e7 ns/s for 4 ms, then steady at 200 us
    pts = [(t * 1e-3, min(2e3 + 5e7 * t * 1e-3, 2e5)) for t in range(0, 11)]
    phases = ramp_plateau(pts)
    assert phases["kind"] == "fill" and phases["rate_ns_per_s"] == pytest.approx(5e7)
    assert phases["steady_latency_ns"] == pytest.approx(2e5) and phases["ramp_end_s"] == pytest.approx(0.003)


def test_flat_or_straight_has_no_phases():
    assert ramp_plateau([(t * 1e-3, 1000.0) for t in range(10)]) is None
    assert ramp_plateau([(t * 1e-3, 1000.0 + 10 * t) for t in range(10)]) is None


def test_fill_within_the_first_sample():
    pts = [(0.001, 9e4)] + [(t * 1e-3, 1e6) for t in range(2, 11)]
    phases = ramp_plateau(pts)
    assert phases["kind"] == "fill" and phases["rate_ns_per_s"] is None
    assert phases["steady_latency_ns"] == pytest.approx(1e6) and phases["ramp_end_s"] == pytest.approx(0.001)


@pytest.mark.parametrize("drop,resolution,text", [
    (0.0000528, 0.000284, "0.005 ± 0.028"),          # 3,520 frames in the window: three decimals
    (0.0, 0.0000336, "0.0000 ± 0.0034"),             # as many decimals as the resolution's first digit needs
    (0.25, 7e-9, "25.00000000 ± 0.00000070"),        # 100 s of 64-byte frames: at most eight
    (0.0000528, None, "0.005"),                      # results written before the resolution was kept
])
def test_drop_against_line_rate_carries_its_resolution(drop, resolution, text):
    from fpgatest.output import drop_vs_line_rate_text

    assert drop_vs_line_rate_text({"drop_rate_vs_theoretical": drop,
                                   "drop_rate_vs_theoretical_resolution": resolution}) == text
