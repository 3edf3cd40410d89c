# SPDX-License-Identifier: BSD-2-Clause
"""Testbench for the tb_port harness: clocks, GMII models, register access by name, snapshots."""

import logging

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge
from cocotbext.eth import GmiiSink, GmiiSource

from common.frames import StreamConfig
from common.harness import RTL, port_ports
from litex_soc.verilog_ports import counter_names

COUNTERS = counter_names(RTL / "fpgatest_port.v")

CLK_PERIOD_PS = 8000  # 125 MHz: one byte per clock, one tick = 8 ns
# the per-frame engines' clock: about 50 MHz as on the board, unrelated to the tester clock, so every
# port test runs the record FIFO across two clocks that drift against each other
ENG_PERIOD_PS = 19_994

# checker defaults: stream 1, every size up to 16383 bytes is not a giant
CHECKER_DEFAULTS = {
    "cfg_rx_stream_id": 1,
    "cfg_max_size": 16383,
    "cfg_cal_internal": 0,
    "cfg_cal_tx_cable": 0,
    "cfg_cal_rx_cable": 0,
    "cfg_hist_base": 0,
    "cfg_hist_shift": 4,
    "cfg_hist_log": 0,
    "cfg_hist_addr": 0,
    "cfg_sample_every": 0,
}

# the control pulses, which of them act in the engine clock and which travel as markers: from the port list
CTL = [p for p in port_ports() if p.name.startswith("ctl_")]
ENGINE_CTL = {p.name for p in CTL if "engine clock" in p.description}
MARKERS = {p.name for p in CTL if "marker" in p.description}


class TB:
    def __init__(self, dut, rx_ppm: float | None = None, loopback_delay: int | None = None,
                 rx_source_reset: bool = True):
        # rx_source_reset False: the link partner's frames go on through rx_rst (a local PHY reset)
        self.dut = dut
        self.log = logging.getLogger("cocotb.tb")
        self.log.setLevel(logging.INFO)
        cocotb.start_soon(Clock(dut.clk, CLK_PERIOD_PS, unit="ps").start())
        self.eng_clk = dut.eng_clk
        self._eng_clock = None
        self.set_eng_period(ENG_PERIOD_PS)
        if rx_ppm is not None:
            # the PHY's receive clock, off by rx_ppm; with 1 ps resolution +-100 ppm becomes 7999 / 8001 ps,
            # i.e. +-125 ppm, a little worse than asked
            period = round(CLK_PERIOD_PS / (1 + rx_ppm * 1e-6))
            if rx_ppm:
                period = CLK_PERIOD_PS - 1 if rx_ppm > 0 else CLK_PERIOD_PS + 1
            cocotb.start_soon(Clock(dut.rx_clk_ext, period, period_high=period // 2, unit="ps").start())
            self.rx_period_ps = period
        else:
            self.rx_period_ps = CLK_PERIOD_PS
        dut.tb_loop_en.value = 1 if loopback_delay is not None else 0
        dut.tb_loop_delay.value = loopback_delay or 0
        dut.ext_rxd.value = 0
        dut.ext_rx_dv.value = 0
        dut.ext_rx_er.value = 0
        for p in CTL:
            getattr(dut, p.name).value = 0
        dut.eng_marker_sent.value = 0
        dut.tx_hold.value = 0
        dut.cnt_rd_addr.value = 0
        self.tx_sink = GmiiSink(dut.gmii_txd, dut.gmii_tx_er, dut.gmii_tx_en, dut.clk, dut.rst)
        self.rx_source = None
        if rx_ppm is not None:
            self.rx_source = GmiiSource(dut.ext_rxd, dut.ext_rx_er, dut.ext_rx_dv, dut.rx_clk_ext,
                                        dut.rx_rst if rx_source_reset else None)
        for model in (self.tx_sink, self.rx_source):
            if model is not None:
                model.log.setLevel(logging.WARNING)
        self.configure(StreamConfig())
        self.set(**CHECKER_DEFAULTS)

    def set_eng_period(self, period_ps: int):
        """(Re)start the engine clock with another period."""
        if self._eng_clock is not None:
            self._eng_clock.cancel()
        clock = Clock(self.eng_clk, period_ps, period_high=period_ps // 2, unit="ps")
        self._eng_clock = cocotb.start_soon(clock.start())

    def set(self, **regs):
        for name, value in regs.items():
            getattr(self.dut, name).value = value

    def configure(self, cfg: StreamConfig):
        for name, value in vars(cfg).items():
            if name != "extra":
                getattr(self.dut, "cfg_" + name).value = value

    async def reset(self):
        self.dut.rst.value = 1
        self.dut.rx_rst.value = 1
        self.dut.eng_rst.value = 1
        await ClockCycles(self.dut.eng_clk, 10)
        self.dut.rst.value = 0
        self.dut.rx_rst.value = 0
        self.dut.eng_rst.value = 0
        await ClockCycles(self.dut.clk, 10)
        await self.pulse("ctl_clear")
        await ClockCycles(self.dut.clk, 40)

    async def _pulse_on(self, clk, names):
        await RisingEdge(clk)
        for name in names:
            getattr(self.dut, name).value = 1
        await RisingEdge(clk)
        for name in names:
            getattr(self.dut, name).value = 0

    async def pulse(self, *names) -> int:
        """One-clock pulses, each in its own clock, as the SoC gives them. Returns the time (ps) of the
        tester edge where the cores act on the tester-clock ones (the port registers them once); a
        marker is also announced in the engine clock, as the CSR side does, before this returns."""
        engine = [n for n in names if n in ENGINE_CTL]
        tester = [n for n in names if n not in ENGINE_CTL]
        announce = None
        if any(n in MARKERS for n in tester):
            announce = cocotb.start_soon(self._pulse_on(self.eng_clk, ["eng_marker_sent"]))
        if engine:
            await self._pulse_on(self.eng_clk, engine)
        acted = None
        if tester:
            await self._pulse_on(self.dut.clk, tester)
            await RisingEdge(self.dut.clk)
            acted = int(cocotb.utils.get_sim_time("ps"))
        if announce is not None:
            await announce
        return acted

    def get(self, name) -> int:
        return int(getattr(self.dut, name).value)

    async def _until_idle(self, *busy, what: str, limit: int = 100_000):
        """Wait (engine clocks) until every busy flag is low; a marker that never arrives fails the test."""
        await RisingEdge(self.eng_clk)
        for _ in range(limit):
            if not any(self.get(name) for name in busy):
                return
            await RisingEdge(self.eng_clk)
        raise AssertionError(f"{what} never completed (a marker lost?)")

    async def flush(self):
        """Retire the tracker's whole window and wait until it is done (as the host does)."""
        await self.pulse("ctl_flush")
        await self._until_idle("stat_seq_busy", what="the flush")

    async def snapshot(self) -> dict:
        """Latch everything and read every stat_* register."""
        await self.pulse("ctl_snapshot")
        return await self.read_stats()

    async def snapshot_at(self, edge_time_ps: int) -> dict:
        """Snapshot latched exactly at the rising edge edge_time_ps (which must be >= 3 clocks ahead)."""
        await RisingEdge(self.dut.clk)
        now = int(cocotb.utils.get_sim_time("ps"))
        await ClockCycles(self.dut.clk, (edge_time_ps - now) // CLK_PERIOD_PS - 3)
        acted = await self.pulse("ctl_snapshot")
        assert acted == edge_time_ps
        return await self.read_stats()

    async def read_stats(self) -> dict:
        """Every stat_* port and every event counter (as stat_<counter name>) of the last snapshot."""
        await self._until_idle("stat_hist_busy", "stat_counters_busy", what="the snapshot")
        await ReadOnly()
        stats = {h._name: int(h.value) for h in self.dut if h._name.startswith("stat_")}
        await RisingEdge(self.eng_clk)
        for index, (name, _) in enumerate(COUNTERS):
            self.dut.cnt_rd_addr.value = index
            await ClockCycles(self.eng_clk, 2)
            stats["stat_" + name] = self.get("cnt_rd_data")
        return stats

    async def histogram(self) -> list[int]:
        bins = []
        for addr in range(64):
            self.dut.cfg_hist_addr.value = addr
            await ClockCycles(self.eng_clk, 2)
            bins.append(self.get("stat_hist_count"))
        return bins

    async def pop_samples(self) -> list[tuple[int, int, int]]:
        samples = []
        while True:
            await self.pulse("ctl_sample_pop")
            await RisingEdge(self.eng_clk)
            if not self.get("stat_sample_valid"):
                return samples
            samples.append((self.get("stat_sample_seq"), self.get("stat_sample_rx_tick"), self.get("stat_sample_latency")))

    async def pop_events(self) -> list[tuple[int, int]]:
        events = []
        while True:
            await self.pulse("ctl_event_pop")
            await RisingEdge(self.eng_clk)
            if not self.get("stat_seq_event_valid"):
                return events
            events.append((self.get("stat_seq_event_first"), self.get("stat_seq_event_length")))

    async def wait_idle(self, limit_cycles: int = 10_000_000):
        for _ in range(limit_cycles):
            await RisingEdge(self.dut.clk)
            if not self.get("stat_tx_busy"):
                return
        raise AssertionError("generator still busy")

    def tick_at(self, sim_time_ps: int) -> int:
        """Tick counter value during the clock cycle that starts at the rising edge sim_time_ps."""
        return (sim_time_ps - self.tick0_time_ps) // CLK_PERIOD_PS + self.tick0

    async def sync_time(self):
        """Record (edge time, tick in the following cycle) to convert simulated time to ticks."""
        await RisingEdge(self.dut.clk)
        await ReadOnly()
        self.tick0 = int(self.dut.time_tick.value)
        self.tick0_time_ps = int(cocotb.utils.get_sim_time("ps"))
        await RisingEdge(self.dut.clk)



class TxHold:
    """Drives the port's tx_hold (a management frame wanting the wire, litex_soc/management.py) in
    random holds and gaps, and records (tx_hold, gmii_tx_en) at every clock."""

    def __init__(self, dut, rng):
        self.dut, self.rng = dut, rng
        self.trace = []
        self._task = None
        cocotb.start_soon(self._watch())

    async def _watch(self):
        while True:
            await RisingEdge(self.dut.clk)
            self.trace.append((int(self.dut.tx_hold.value), int(self.dut.gmii_tx_en.value)))

    async def _toggle(self):
        rng = self.rng
        while True:
            self.dut.tx_hold.value = 1
            await ClockCycles(self.dut.clk, rng.choice([1, 2, 3, 5, 17, rng.randrange(20, 400)]))
            self.dut.tx_hold.value = 0
            await ClockCycles(self.dut.clk, rng.choice([1, 2, 11, 12, rng.randrange(13, 300)]))

    def start(self):
        self._task = cocotb.start_soon(self._toggle())

    def stop(self):
        if self._task is not None:
            self._task.cancel()
            self._task = None
        self.dut.tx_hold.value = 0

    def starts(self) -> list[tuple[int, int]]:
        """(clocks the hold had lasted, idle clocks before) for every frame start on tx_en."""
        out, held, idle = [], 0, 10**9
        for k, (hold, en) in enumerate(self.trace):
            held = held + 1 if hold else 0
            if en and k and not self.trace[k - 1][1]:
                out.append((held, idle))
            idle = 0 if en else idle + 1
        return out

    def long_holds(self, clocks: int) -> int:
        """Clocks at which the hold had lasted at least `clocks`."""
        held, n = 0, 0
        for hold, _ in self.trace:
            held = held + 1 if hold else 0
            n += held >= clocks
        return n
