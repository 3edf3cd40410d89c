# SPDX-License-Identifier: BSD-2-Clause
"""The Etherbone master's Wishbone register stage (litex_soc/management.py, WishboneRegisterStage) as
LiteX generates it, in Verilator: a master on one side, a slave with random wait states on the other.
Every access reaches the slave whole and held until it answers, once; each answer (ack with read data,
or err) comes back to the master unchanged, exactly two clocks later than the slave gave it; a
request that arrives while the stage is still replying waits for it. Nothing on the SoC's bus raises
err today: this is where the stage's error path is proven."""

import os
import random

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge

from common.runner import SIM_BUILD, run_sources, worker_suffix

NAME = "stage"
FIELDS_IN = ("adr", "dat_w", "sel", "we", "cyc", "stb")       # the request, master -> slave
ACCESSES = 400
ERR_EVERY = 7                 # the slave answers err for addresses that are multiples of this


def _sig(dut, side: str, field: str):
    return getattr(dut, f"{NAME}_{side}_{field}")


def answers_err(adr: int) -> bool:
    """Whether the slave answers an access to `adr` with err (else ack)."""
    return adr % ERR_EVERY == 0


def read_data(adr: int) -> int:
    """What the slave returns for a read of `adr`."""
    return (adr * 0x9E3779B1 + 0x1234567) & 0xFFFFFFFF


async def slave(dut, rng: random.Random, seen: list, waits: dict):
    """A classic Wishbone slave: after a request has been on the bus `wait` clocks (0-3, random) it
    answers for one clock, err for addresses that are multiples of ERR_EVERY, else ack (read data for
    reads). It checks the request stays the same until its answer and goes away the clock after."""
    answer = None            # clock edges still to wait before answering, while a request is up
    request = None
    while True:
        await RisingEdge(dut.sys_clk)
        await ReadOnly()
        bus = {f: int(_sig(dut, "bus", f).value) for f in FIELDS_IN}
        answered = int(_sig(dut, "bus", "ack").value) | int(_sig(dut, "bus", "err").value)
        if answered:
            # the answer was sampled at this edge: the stage must have dropped its strobe
            assert not (bus["cyc"] or bus["stb"]), ("request held after the answer", bus)
            answer, request = None, None
        elif bus["cyc"] and bus["stb"]:
            if request is None:
                request = bus
                answer = rng.randrange(4)
                waits[len(seen)] = answer
                seen.append(bus)
            else:
                assert bus == request, ("request changed before the answer", request, bus)
                answer -= 1
        await FallingEdge(dut.sys_clk)
        give = request is not None and answer == 0
        error = give and answers_err(request["adr"])
        _sig(dut, "bus", "ack").value = int(give and not error)
        _sig(dut, "bus", "err").value = int(error)
        _sig(dut, "bus", "dat_r").value = read_data(request["adr"]) if give and not request["we"] else 0


@cocotb.test()
async def run_test_every_access_through_once_and_answered_two_clocks_late(dut):
    rng = random.Random(int(os.environ.get("SEED", "1")))
    cocotb.start_soon(Clock(dut.sys_clk, 20, unit="ns").start())
    dut.sys_rst.value = 1
    for f in FIELDS_IN:
        _sig(dut, "request", f).value = 0
    for f in ("ack", "err", "dat_r"):
        _sig(dut, "bus", f).value = 0
    for _ in range(3):
        await RisingEdge(dut.sys_clk)
    dut.sys_rst.value = 0
    seen, waits = [], {}
    cocotb.start_soon(slave(dut, random.Random(rng.random()), seen, waits))

    sent, clocks_taken, back_to_back = [], [], [False]
    await FallingEdge(dut.sys_clk)
    for i in range(ACCESSES):
        we = rng.randrange(2)
        access = {"adr": rng.randrange(1 << 30) if rng.randrange(3) else ERR_EVERY * rng.randrange(1 << 20),
                  "dat_w": rng.randrange(1 << 32) if we else 0, "sel": rng.randrange(16), "we": we,
                  "cyc": 1, "stb": 1}
        sent.append(access)
        for f, v in access.items():
            _sig(dut, "request", f).value = v
        # clocks from the first edge that samples the request to the edge that samples the answer
        clocks = 0
        while True:
            await RisingEdge(dut.sys_clk)
            clocks += 1
            await ReadOnly()
            ack, err = int(_sig(dut, "request", "ack").value), int(_sig(dut, "request", "err").value)
            if ack or err:
                break
            assert clocks < 20, f"access {i}: no answer"
        dat_r = int(_sig(dut, "request", "dat_r").value)
        assert not (ack and err), i
        assert err == answers_err(access["adr"]), (i, access, ack, err)
        if ack and not we:
            assert dat_r == read_data(access["adr"]), (i, hex(dat_r))
        clocks_taken.append(clocks + 1)          # the edge after this ReadOnly samples the answer
        await FallingEdge(dut.sys_clk)
        # the master drops its request after the answer, or (one time in two) puts up the next at once
        back_to_back.append(bool(rng.randrange(2)))
        if not back_to_back[-1]:
            _sig(dut, "request", "cyc").value = 0
            _sig(dut, "request", "stb").value = 0
            for _ in range(rng.randrange(1, 3)):
                await FallingEdge(dut.sys_clk)
    _sig(dut, "request", "cyc").value = 0
    _sig(dut, "request", "stb").value = 0
    for _ in range(10):
        await RisingEdge(dut.sys_clk)

    # each access reached the slave once, as the master gave it
    assert seen == sent, (len(seen), len(sent), [(i, s, t) for i, (s, t) in enumerate(zip(seen, sent)) if s != t][:1])
    errors = sum(1 for a in sent if answers_err(a["adr"]))
    assert 0 < errors < ACCESSES
    # a slave answering after w clocks (connected directly: w + 1 edges from the request to the edge
    # that samples the answer) answers the master through the stage in w + 3: one edge into the
    # stage's request registers, one into its reply registers. A request put up at once after an
    # answer waits one edge more (the stage's reply clock).
    expected = [waits[i] + 3 + back_to_back[i] for i in range(ACCESSES)]
    assert clocks_taken == expected, [(i, c, e) for i, (c, e) in enumerate(zip(clocks_taken, expected)) if c != e][:3]
    dut._log.info("%d accesses (%d err), %d of them back to back", ACCESSES, errors, sum(back_to_back))


def verilog(path):
    """The stage alone, as LiteX writes it (the request and bus sides as ports)."""
    from litex.gen.fhdl.verilog import convert
    from migen import ClockDomain
    from litex.soc.interconnect import wishbone

    from litex_soc.management import WishboneRegisterStage

    stage = WishboneRegisterStage(wishbone.Interface(data_width=32, address_width=32, addressing="word"), name=NAME)
    stage.cd_sys = ClockDomain("sys")
    ios = {getattr(side, f) for side in (stage.slave, stage.master) for f, *_ in side.layout}
    ios |= {stage.cd_sys.clk, stage.cd_sys.rst}
    convert(stage, ios=ios, name="wishbone_register_stage").write(str(path))


def test_register_stage():
    build = SIM_BUILD / f"register_stage{worker_suffix()}"
    build.mkdir(parents=True, exist_ok=True)
    source = build / "wishbone_register_stage.v"
    verilog(source)
    run_sources("management.test_register_stage", "wishbone_register_stage", build, [source],
                extra_env={"SEED": "1"})
