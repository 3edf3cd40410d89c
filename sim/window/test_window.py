# SPDX-License-Identifier: BSD-2-Clause
"""fpgatest_window in fpgatest_port: echo requests answered by a Python responder (with chosen losses),
the window in frames enforced to the clock, Reno's cuts and growth against the reference, timeouts."""

import cocotb
import pytest
from cocotb.triggers import ClockCycles, Timer
from cocotbext.eth import GmiiFrame

from common.frames import PROTO_IPV4, StreamConfig, echo_reply, parse_signature
from common.runner import run
from common.tb import CLK_PERIOD_PS, TB
from models.ref_window import RenoWindow

SIG_AT = 42  # IPv4 + ICMP


class Responder:
    """Answers every echo request after `delay` tester clocks (from the request's end), or after
    late[seq] clocks, except `drop`."""

    def __init__(self, tb: TB, delay: int, drop=(), late=None):
        self.tb, self.delay, self.drop, self.late = tb, delay, set(drop), dict(late or {})
        self.requests = []   # (seq, SFD time ps)
        self.replies = []    # (seq, GmiiFrame as sent, with its sim_time_sfd/end), in the order sent
        cocotb.start_soon(self._run())

    async def _run(self):
        while True:
            frame = await self.tb.tx_sink.recv()
            data = bytes(frame.get_payload(strip_fcs=False))
            _, seq, _ = parse_signature(data[SIG_AT:SIG_AT + 18])
            self.requests.append((seq, frame.sim_time_sfd))
            if seq not in self.drop:
                cocotb.start_soon(self._answer(seq, data, frame.sim_time_end))

    async def _answer(self, seq, data, end_ps):
        now = cocotb.utils.get_sim_time("ps")
        await Timer(end_ps + self.late.get(seq, self.delay) * CLK_PERIOD_PS - now, unit="ps")
        reply = GmiiFrame.from_raw_payload(echo_reply(data))
        # the source sends a copy; its times come back through the completion callback
        reply.tx_complete = lambda sent: self.replies.append((seq, sent))
        await self.tb.rx_source.send(reply)


async def echo_run(dut, cfg: StreamConfig, delay: int, drop=(), late=None):
    tb = TB(dut, rx_ppm=0)
    await tb.reset()
    responder = Responder(tb, delay, drop, late)
    tb.configure(cfg)
    await tb.pulse("ctl_start")
    await tb.wait_idle()
    await ClockCycles(dut.clk, 2 * delay + 2000)
    await tb.rx_source.wait()
    s = await tb.snapshot()
    return tb, responder, s


def clocks(ps: int) -> float:
    return ps / CLK_PERIOD_PS


@cocotb.test()
async def run_test_fixed_window(dut):
    """W frames leave back to back, then each frame waits for the reply W frames before it: the same
    number of clocks after that reply's end every time; never more than W without a reply."""
    w, delay, count = 3, 3000, 30
    cfg = StreamConfig(proto=PROTO_IPV4, icmp=1, size=64, count=count, seq_start=1000, win_mode=1, win_size=w)
    tb, resp, s = await echo_run(dut, cfg, delay)
    tx = [t for _, t in resp.requests]
    assert [q for q, _ in resp.requests] == list(range(1000, 1000 + count))
    assert all(clocks(tx[k] - tx[k - 1]) == 84 for k in range(1, w)), "the first window at line rate"
    end = {q - 1000: f.sim_time_end for q, f in resp.replies}
    opened = {clocks(tx[k] - end[k - w]) for k in range(w, count)}
    assert len(opened) == 1 and 10 < min(opened) < 100, opened
    tb.log.info("frame k+W leaves %s clocks after reply k ends", opened)
    # in flight when each frame left: frames before it whose reply had not begun to arrive
    sfd = sorted(f.sim_time_sfd for _, f in resp.replies)
    in_flight = [k - sum(1 for t in sfd if t < tx[k]) for k in range(count)]
    assert max(in_flight) == w - 1, in_flight
    assert s["stat_test_frames"] == count and s["stat_win_lost"] == 0 and s["stat_win_cwnd"] == w
    assert s["stat_win_cuts"] == 0 and s["stat_win_timeouts"] == 0
    # the run's RTTs (latency of the replies) are the responder's delay plus the frame, to the tick
    assert s["stat_lat_min"] == s["stat_lat_max"], "one RTT for every frame"


@cocotb.test()
async def run_test_reno(dut):
    """Slow start, one cut per window of losses, additive increase: cwnd, losses and cuts as the reference."""
    start, top, count, delay = 2, 16, 400, 2000
    drop = {30, 32, 370}
    cfg = StreamConfig(proto=PROTO_IPV4, icmp=1, size=64, count=count, win_mode=2, win_size=start, win_max=top)
    tb, resp, s = await echo_run(dut, cfg, delay, drop)
    ref = RenoWindow(cwnd=start, max=top)
    tx = [t for _, t in resp.requests]
    for seq, frame in resp.replies:
        # the recovery point: frames sent before this reply was taken (its end; only ordering matters here)
        ref.reply(seq, sum(1 for t in tx if t < frame.sim_time_end))
    assert ref.cuts == 2 and ref.lost == 3 and ref.cwnd < top, "a second loss inside one window; the run ends below the cap"
    got = {k: s["stat_win_" + k] for k in ("cwnd", "lost", "cuts")}
    assert got == {"cwnd": ref.cwnd, "lost": ref.lost, "cuts": ref.cuts}, (got, ref)
    assert s["stat_test_frames"] == count - len(drop) and s["stat_win_timeouts"] == 0
    tb.log.info("Reno: cwnd %d, lost %d, cuts %d", ref.cwnd, ref.lost, ref.cuts)


@cocotb.test()
async def run_test_timeout(dut):
    """A whole window lost: nothing moves until the timeout, then every frame in flight counts as lost
    and sending resumes; every frame sent is answered or counted lost."""
    w, delay, count, timeout = 4, 1500, 40, 6000
    drop = {20, 21, 22, 23}
    cfg = StreamConfig(proto=PROTO_IPV4, icmp=1, size=64, count=count, win_mode=1, win_size=w, win_timeout=timeout)
    tb, resp, s = await echo_run(dut, cfg, delay, drop)
    tx = {q: t for q, t in resp.requests}
    end = {q: f.sim_time_end for q, f in resp.replies}
    # reply 19 opened the window for frame 23 (`opened` clocks after its end); frame 24 waits for the
    # timeout: cfg_timeout ticks after the clock that reply moved ack_next, plus the clock the timeout takes
    opened = clocks(tx[23] - end[19])
    silence = clocks(tx[24] - end[19])
    assert silence == opened + timeout + 1, (silence, opened)
    assert s["stat_win_timeouts"] == 1 and s["stat_win_lost"] == len(drop)
    assert s["stat_test_frames"] + s["stat_win_lost"] == s["stat_tx_frames"] == count


@cocotb.test()
async def run_test_reply_at_the_timeout(dut):
    """Late replies swept clock by clock across the timeout (a window of one frame): a reply that
    lands before it moves the window, one that lands with or after it is for a frame the timeout
    already counted lost and is ignored, even while it is still in the reply pipeline. Every
    timeout loses exactly the one frame in flight; nothing is counted twice."""
    delay, timeout, sweep = 200, 400, range(-20, 21)
    base = 8                                  # frames before the first late one
    # the timer starts when a request leaves; a reply about 160 clocks short of the timeout after its
    # request's end reaches the window with it
    late = {base + 2 * i: timeout - 160 + offset for i, offset in enumerate(sweep)}
    count = base + 2 * len(sweep) + 4
    cfg = StreamConfig(proto=PROTO_IPV4, icmp=1, size=64, count=count, win_mode=1, win_size=1, win_timeout=timeout)
    tb, resp, s = await echo_run(dut, cfg, delay, late=late)
    assert [q for q, _ in resp.requests] == list(range(count))
    assert s["stat_tx_frames"] == s["stat_test_frames"] == count, "every reply reaches the checker"
    assert s["stat_win_lost"] == s["stat_win_timeouts"], (s["stat_win_lost"], s["stat_win_timeouts"])
    # a reply that moves the window lets the next request leave `opened` clocks after its end, as every
    # reply in time does; the sweep spans the timeout: the earliest late replies move the window, the
    # latest come too late
    tx = {q: t for q, t in resp.requests}
    end = {q: f.sim_time_end for q, f in resp.replies}
    opened = {clocks(tx[q + 1] - end[q]) for q in range(count - 1) if q not in late}
    assert len(opened) == 1, opened
    moved = [clocks(tx[q + 1] - end[q]) in opened for q in sorted(late)]
    assert moved[0] and not moved[-1] and moved == sorted(moved, reverse=True), moved
    assert s["stat_win_timeouts"] == moved.count(False), (s["stat_win_timeouts"], moved)
    tb.log.info("late replies: %d moved the window, %d came with or after the timeout",
                moved.count(True), moved.count(False))


SCENARIOS = ["run_test_fixed_window", "run_test_reno", "run_test_timeout", "run_test_reply_at_the_timeout"]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_window(scenario):
    run("window.test_window", "tb_port", "tb_port", testcase=scenario)
