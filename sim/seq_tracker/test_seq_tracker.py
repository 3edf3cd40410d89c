# SPDX-License-Identifier: BSD-2-Clause
"""fpgatest_seq_tracker against the Python reference on seeded random storms of loss, duplication, reordering."""

import os
import random

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge

from common.runner import run
from models.ref_tracker import MOD, RefTracker

WINDOW = 1024
EVENT_DEPTH = 256


EVENTS = ("received", "late", "duplicate", "stale", "input_dropped", "event_dropped")


class TB:
    def __init__(self, dut):
        self.dut = dut
        cocotb.start_soon(Clock(dut.clk, 8, unit="ns").start())
        for name in ("in_valid", "in_seq", "ctl_snapshot", "ctl_clear", "ctl_flush", "ctl_event_pop"):
            getattr(dut, name).value = 0
        # the event outputs feed fpgatest_counters in a port; here a monitor counts them, and keeps
        # the counts and the stat_* registers at each cnt_snapshot (where the port's counters freeze)
        self.counts = dict.fromkeys(EVENTS, 0)
        self.snapshots = []
        self.stalls = 0
        cocotb.start_soon(self._count_events())

    async def _count_events(self):
        while True:
            await RisingEdge(self.dut.clk)
            for name in EVENTS:
                self.counts[name] += int(getattr(self.dut, "cnt_" + name).value)
            if int(self.dut.cnt_snapshot.value):
                self.snapshots.append({**self.counts, **self.stats()})

    def stats(self) -> dict:
        d = self.dut
        return {"lost": int(d.stat_lost.value), "highest": int(d.stat_highest_seq.value),
                "oldest": int(d.stat_oldest_seq.value), "first": int(d.stat_first_seq.value),
                "started": int(d.stat_started.value)}

    async def reset(self):
        self.dut.rst.value = 1
        await ClockCycles(self.dut.clk, 4)
        self.dut.rst.value = 0
        await ClockCycles(self.dut.clk, 40)

    async def pulse(self, name):
        await RisingEdge(self.dut.clk)
        getattr(self.dut, name).value = 1
        await RisingEdge(self.dut.clk)
        getattr(self.dut, name).value = 0

    async def push(self, seq, gap):
        """Offer one number as fpgatest_port does: only while in_ready is high (it waits, never drops)."""
        await RisingEdge(self.dut.clk)
        while not int(self.dut.in_ready.value):
            self.stalls += 1
            await RisingEdge(self.dut.clk)
        self.dut.in_valid.value = 1
        self.dut.in_seq.value = seq % MOD
        await RisingEdge(self.dut.clk)
        self.dut.in_valid.value = 0
        if gap > 1:
            await ClockCycles(self.dut.clk, gap - 1)

    async def drain(self):
        await ClockCycles(self.dut.clk, 2)  # let the last input reach the queue before asking
        while int(self.dut.stat_busy.value):
            await RisingEdge(self.dut.clk)
        await ClockCycles(self.dut.clk, 2)

    async def until(self, done, what: str, limit: int = 64 * 400):
        """Wait for done(); a full queue of jumps past the window is worked through in fewer clocks."""
        for _ in range(limit):
            if done():
                return
            await RisingEdge(self.dut.clk)
        raise AssertionError(f"{what} never came")

    async def counters(self):
        """A snapshot: the counts and registers at its cnt_snapshot."""
        taken = len(self.snapshots)
        await self.pulse("ctl_snapshot")
        await self.until(lambda: len(self.snapshots) > taken, "the snapshot")
        s = self.snapshots[-1]
        return {k: s[k] for k in ("received", "lost", "late", "duplicate", "stale", "highest", "first")}

    async def events(self):
        out = []
        while True:
            await self.pulse("ctl_event_pop")
            await RisingEdge(self.dut.clk)
            if not int(self.dut.stat_event_valid.value):
                return out
            out.append((int(self.dut.stat_event_first.value), int(self.dut.stat_event_length.value)))


def storm(rng: random.Random, start: int, count: int, p_loss: float, p_burst: float, p_dup: float,
          p_reorder: float, p_stale: float) -> list[int]:
    """Sequence numbers as a misbehaving network delivers them."""
    out = []
    seq = start
    sent = 0
    held = []  # (release_at_index, seq) for reordered frames
    while sent < count:
        if rng.random() < p_burst:
            seq += rng.choice([rng.randint(2, 40), rng.randint(500, 1500), rng.randint(3000, 9000)])
        if rng.random() < p_loss:
            seq += 1
            continue
        if rng.random() < p_reorder:
            held.append((len(out) + rng.randint(1, 1200), seq))
        else:
            out.append(seq)
            if rng.random() < p_dup:
                out.append(seq if rng.random() < 0.7 else seq - rng.randint(1, 900))
        if rng.random() < p_stale:
            out.append(seq - rng.randint(1100, 5000))
        for h in [h for h in held if h[0] <= len(out)]:
            out.append(h[1])
            held.remove(h)
        seq += 1
        sent += 1
    out.extend(s for _, s in held)
    return [s % MOD for s in out]


async def check(tb: TB, seqs: list[int], gaps: list[int]):
    ref = RefTracker(WINDOW)
    await tb.pulse("ctl_clear")
    await ClockCycles(tb.dut.clk, 40)
    tb.counts = dict.fromkeys(EVENTS, 0)
    for s, g in zip(seqs, gaps):
        ref.push(s)
        await tb.push(s, g)
    await tb.drain()
    mid = await tb.counters()
    await tb.pulse("ctl_flush")
    await ClockCycles(tb.dut.clk, 2)
    await tb.drain()
    ref.flush()
    got = await tb.counters()
    want = {"received": ref.received, "lost": ref.lost, "late": ref.late, "duplicate": ref.duplicate,
            "stale": ref.stale, "highest": ref.highest, "first": ref.first}
    assert got == want, f"gateware {got} != reference {want}"
    assert mid["received"] == got["received"], "flush must not change what was received"
    events = await tb.events()
    # the event FIFO holds EVENT_DEPTH entries; later events are counted as dropped, never garbled
    dropped = tb.counts["event_dropped"]
    assert events == ref.events[:EVENT_DEPTH], "loss events differ from the reference"
    assert dropped == max(0, len(ref.events) - EVENT_DEPTH)
    assert tb.counts["input_dropped"] == 0
    return got, len(events)


@cocotb.test()
async def run_test_random_storms(dut):
    """Seeded random loss / bursts / duplicates / reordering / stale frames, exact against the reference."""
    seed = int(os.environ.get("FPGATEST_SEED", random.randrange(2**32)))
    dut._log.info("seed %d (set FPGATEST_SEED to repeat)", seed)
    rng = random.Random(seed)
    tb = TB(dut)
    await tb.reset()
    profiles = [
        dict(p_loss=0.0, p_burst=0.0, p_dup=0.0, p_reorder=0.0, p_stale=0.0),
        dict(p_loss=0.05, p_burst=0.0, p_dup=0.0, p_reorder=0.0, p_stale=0.0),
        dict(p_loss=0.02, p_burst=0.01, p_dup=0.02, p_reorder=0.03, p_stale=0.005),
        dict(p_loss=0.3, p_burst=0.02, p_dup=0.05, p_reorder=0.1, p_stale=0.01),
    ]
    for profile in profiles:
        for start in (0, MOD - 1500):  # the second run wraps the 48-bit sequence space
            seqs = storm(rng, start, 3000, **profile)
            # what the port offers: one record per two engine clocks at most (back to back after a
            # stall), else a 64-byte frame per 33.6 clocks at 50 MHz, or longer frames
            gaps = [rng.choice([2, 2, 34, 40, 84, 200]) for _ in seqs]
            tb.stalls = 0
            got, n_events = await check(tb, seqs, gaps)
            dut._log.info("%s start=%d: %s, %d loss events, %d clocks waiting for in_ready",
                          profile, start, got, n_events, tb.stalls)


@cocotb.test()
async def run_test_known_pattern(dut):
    """A hand-made case with every outcome: numbers worked out by hand, not by the model."""
    tb = TB(dut)
    await tb.reset()
    seqs = [100, 101, 103, 104, 102, 102, 105, 99, 110, 2000, 106]
    # 100,101,103,104 new; 102 late; 102 duplicate; 105 new; 99 stale (before first);
    # 110 new (106..109 missing); 2000 slides the window to 977: 106..109 and 111..976 lost;
    # 106 then is stale. Flush retires 977..1999: lost.
    got, _ = await check(tb, seqs, [84] * len(seqs))
    assert got["received"] == 8 and got["late"] == 1 and got["duplicate"] == 1 and got["stale"] == 2
    assert got["lost"] == (1999 - 100 + 1) - 7
    events = await tb.events()
    assert events == [], "events were already popped by check()"


@cocotb.test()
async def run_test_queue_full_is_exact(dut):
    """Inputs every clock while each costs ~160 (a jump past the window retires it word by word): the
    input queue fills, and an input is dropped, and counted, exactly when 64 are already waiting."""
    tb = TB(dut)
    await tb.reset()
    await tb.pulse("ctl_clear")
    await ClockCycles(dut.clk, 40)
    tb.counts = dict.fromkeys(EVENTS, 0)
    n, expect_dropped = 1000, 0
    for i in range(n):
        dut.in_valid.value = 1
        dut.in_seq.value = (i + 1) * 3000
        await ReadOnly()
        level = (int(dut.in_wr_reg.value) - int(dut.in_rd_reg.value)) % 128
        assert level <= 64
        expect_dropped += level == 64
        await RisingEdge(dut.clk)
    dut.in_valid.value = 0
    await tb.drain()
    assert expect_dropped > 900, "the queue never filled: the test does not test it"
    assert tb.counts["input_dropped"] == expect_dropped
    assert tb.counts["received"] == n - expect_dropped   # every accepted number, none overwritten


@cocotb.test()
async def run_test_snapshot_is_a_barrier(dut):
    """A snapshot while numbers wait in the queue (jumps past the window make each cost up to a few
    hundred clocks, the numbers come every 2-40): its registers and the counts at its cnt_snapshot are
    the reference's after exactly the numbers offered before the snapshot's clock, while more keep
    coming (a number offered at that clock counts after it)."""
    seed = int(os.environ.get("FPGATEST_SEED", random.randrange(2**32)))
    dut._log.info("seed %d (set FPGATEST_SEED to repeat)", seed)
    rng = random.Random(seed)
    tb = TB(dut)
    await tb.reset()
    await tb.pulse("ctl_clear")
    await ClockCycles(dut.clk, 40)
    tb.counts = dict.fromkeys(EVENTS, 0)
    seqs = storm(rng, MOD - 700, 1500, p_loss=0.1, p_burst=0.04, p_dup=0.03, p_reorder=0.05, p_stale=0.01)
    marks = sorted(rng.sample(range(50, len(seqs)), 12))
    ref, want, levels = RefTracker(WINDOW), [], []
    for i, seq in enumerate(seqs):
        if marks and i == marks[0]:
            marks.pop(0)
            # one snapshot at a time (as the port sends them): the last one is taken before the next
            await tb.until(lambda: len(tb.snapshots) == len(want), "the last snapshot")
            await RisingEdge(dut.clk)
            await ReadOnly()
            levels.append((int(dut.in_wr_reg.value) - int(dut.in_rd_reg.value)) % 128)
            await RisingEdge(dut.clk)
            with_number = rng.random() < 0.5
            while with_number and not int(dut.in_ready.value):
                await RisingEdge(dut.clk)
            dut.ctl_snapshot.value = 1
            if with_number:               # the number at the snapshot's clock comes after it
                dut.in_valid.value = 1
                dut.in_seq.value = seq
            want.append({"received": ref.received, "late": ref.late, "duplicate": ref.duplicate,
                         "stale": ref.stale, "input_dropped": 0, "lost": ref.lost,
                         # nobody pops the event FIFO here: what does not fit is counted
                         "event_dropped": max(0, len(ref.events) - EVENT_DEPTH),
                         "highest": ref.highest, "oldest": ref.oldest, "first": ref.first,
                         "started": int(ref.started)})
            await RisingEdge(dut.clk)
            dut.ctl_snapshot.value = 0
            dut.in_valid.value = 0
            ref.push(seq)
            if not with_number:
                await tb.push(seq, 1)
            continue
        ref.push(seq)
        await tb.push(seq, rng.choice([2, 2, 20, 34, 40]))
    await tb.drain()
    dut._log.info("queue levels at the snapshots: %s", levels)
    assert max(levels) >= 8, "the queue was never deep at a snapshot: the test does not test the barrier"
    assert len(tb.snapshots) == len(want)
    for k, (got, w) in enumerate(zip(tb.snapshots, want)):
        assert got == w, f"snapshot {k} (queue {levels[k]} deep): gateware {got} != reference {w}"
    got = await tb.counters()
    assert got["received"] == ref.received and got["lost"] == ref.lost


@pytest.mark.parametrize("scenario", ["run_test_known_pattern", "run_test_random_storms",
                                      "run_test_queue_full_is_exact", "run_test_snapshot_is_a_barrier"])
def test_seq_tracker(scenario):
    run("seq_tracker.test_seq_tracker", "fpgatest_seq_tracker", "seq_tracker", testcase=scenario)
