# SPDX-License-Identifier: BSD-2-Clause
"""fpgatest_latency_stats' histogram, linear and logarithmic: every latency in the bin (or below/above
count) the bin rule says, at every bin edge and on seeded random latencies over the whole 32-bit range,
and in the bin whose edges the host computes (fpgatest.tester.histogram_edges); results offered as fast
as res_ready lets them, through snapshots that copy the bins meanwhile, none lost."""

import random

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, RisingEdge

from common.runner import run
from fpgatest.tester import histogram_edges

BINS = 64
INPUTS = ("res_valid", "res_seq", "res_latency", "res_rx_tick", "ctl_snapshot", "ctl_clear", "ctl_clear_hist",
          "ctl_sample_pop", "cfg_hist_base", "cfg_hist_shift", "cfg_hist_log", "cfg_hist_addr", "cfg_sample_every")


def ref_bin(latency: int, base: int, shift: int, log: bool):
    """The core's bin rule (its header comment), written from the rule: a bin index, 'below' or 'above'."""
    if latency < base:
        return "below"
    u = (latency - base) >> shift
    if not log:
        return u if u < BINS else "above"
    if u < 4:
        return u
    k = u.bit_length() - 1                   # 2^k <= u < 2^(k+1)
    if k > 16:
        return "above"
    return 4 * (k - 1) + ((u >> (k - 2)) & 3)


class TB:
    def __init__(self, dut):
        self.dut = dut
        cocotb.start_soon(Clock(dut.clk, 20, unit="ns").start())   # the engine clock, as on the board
        for name in INPUTS:
            getattr(dut, name).value = 0
        self.outside = {"below": 0, "above": 0}
        self.longest_wait = 0         # clocks the longest offer waited for res_ready
        cocotb.start_soon(self._count_events())

    async def _count_events(self):
        # the below/above events feed fpgatest_counters in a port; here a monitor counts them
        while True:
            await RisingEdge(self.dut.clk)
            self.outside["below"] += int(self.dut.cnt_hist_below.value)
            self.outside["above"] += int(self.dut.cnt_hist_above.value)

    async def reset(self):
        self.dut.rst.value = 1
        await ClockCycles(self.dut.clk, 4)
        self.dut.rst.value = 0
        await ClockCycles(self.dut.clk, 4)

    async def pulse(self, name):
        await RisingEdge(self.dut.clk)
        getattr(self.dut, name).value = 1
        await RisingEdge(self.dut.clk)
        getattr(self.dut, name).value = 0

    async def add(self, latency: int):
        """One result, offered as fpgatest_port offers it: only while res_ready is high."""
        await RisingEdge(self.dut.clk)
        waited = 0
        while not int(self.dut.res_ready.value):
            waited += 1
            await RisingEdge(self.dut.clk)
        self.longest_wait = max(self.longest_wait, waited)
        self.dut.res_valid.value = 1
        self.dut.res_latency.value = latency
        await RisingEdge(self.dut.clk)
        self.dut.res_valid.value = 0

    async def histogram(self) -> list[int]:
        """Snapshot, then the 64 bins as the readable bank holds them."""
        await ClockCycles(self.dut.clk, 8)
        await self.pulse("ctl_snapshot")
        await RisingEdge(self.dut.clk)
        while int(self.dut.stat_hist_busy.value):
            await RisingEdge(self.dut.clk)
        bins = []
        for addr in range(BINS):
            self.dut.cfg_hist_addr.value = addr
            await ClockCycles(self.dut.clk, 2)
            bins.append(int(self.dut.stat_hist_count.value))
        return bins


def latencies_for(base: int, shift: int, log: bool, rng: random.Random) -> list[int]:
    """Both sides of every bin edge and of the base and the reach, and random latencies on every scale."""
    edges = histogram_edges(base, shift, log)
    out = [0, base - 1, base, (1 << 32) - 1]
    for edge in edges:
        out += [edge - 1, edge, edge + 1]
    out += [rng.randrange(1 << rng.randrange(1, 33)) for _ in range(300)]
    return [x for x in out if 0 <= x < 1 << 32]


@cocotb.test()
async def run_test_bins(dut):
    """Linear and logarithmic bins, units of 1 and of 2^5: each latency where the rule puts it. Every
    50th result a snapshot is set off beside the results: its 67-clock copy holds the histogram's
    queue while results keep coming at res_ready's pace, so res_ready must hold them back."""
    tb = TB(dut)
    await tb.reset()
    rng = random.Random(11)
    for log, base, shift in ((True, 0, 0), (True, 1000, 0), (True, 77, 5), (False, 1000, 0), (False, 77, 5)):
        dut.cfg_hist_log.value = int(log)
        dut.cfg_hist_base.value = base
        dut.cfg_hist_shift.value = shift
        await tb.pulse("ctl_clear_hist")
        tb.outside = {"below": 0, "above": 0}
        latencies = latencies_for(base, shift, log, rng)
        want, outside = [0] * BINS, {"below": 0, "above": 0}
        edges = histogram_edges(base, shift, log)
        tb.longest_wait = 0
        for i, latency in enumerate(latencies):
            if i % 50 == 25:
                cocotb.start_soon(tb.pulse("ctl_snapshot"))
            await tb.add(latency)
            where = ref_bin(latency, base, shift, log)
            if isinstance(where, str):
                outside[where] += 1
                assert (latency < edges[0]) if where == "below" else (latency >= edges[-1]), (latency, where)
            else:
                want[where] += 1
                # the host's edges put the latency in the same bin
                assert edges[where] <= latency < edges[where + 1], (latency, where, edges[where:where + 2])
        got = await tb.histogram()
        assert got == want, (log, base, shift, sum(got), sum(want), tb.outside, outside, [(i, g, w) for i, (g, w) in enumerate(zip(got, want)) if g != w])
        assert tb.outside == outside, (tb.outside, outside)
        assert all(want), "every bin was hit"
        assert tb.longest_wait > 20, "no copy held the results back: the queue's back-pressure was not tried"
        dut._log.info("%s bins from %d in units of 2^%d: %d latencies, every bin hit, %d below, %d above, reach %d; "
                      "results held back up to %d clocks by the copies", "log" if log else "linear", base, shift,
                      len(latencies), outside["below"], outside["above"], edges[-1], tb.longest_wait)


@pytest.mark.parametrize("scenario", ["run_test_bins"])
def test_latency_stats(scenario):
    run("latency_stats.test_latency_stats", "fpgatest_latency_stats", "latency_stats", testcase=scenario)
