# SPDX-License-Identifier: BSD-2-Clause
"""LiteX integration of the simulated device under test (twin only): switch paths with their CSRs.

Port 0 -> port 1 goes through two hops in series, dut_ab then dut_ab2 (a wire until enabled: a path
of two links with different rates), then past the echo responder dut_echo (answers ping once enabled);
port 1 -> port 0 through dut_ba, whose input is port 1's transmitter, or the responder's replies while
it is enabled. With a TAP joined to a port (twin only, a Linux network stack as the device under
test), the port receives from the TAP instead while the TAP is on.

The model runs on two clocks of its own, "dut_ab" (dut_ab, dut_ab2, dut_echo: what port 1 receives)
and "dut_ba" (dut_ba: what port 0 receives), which the twin makes the tester clock by default and a
few ppm off it on request (boards/twin.py, --dut-ppm): frames then enter each clock through a MAC
FIFO (sim/models/gmii_elastic.v), as in a switch that forwards in its own clock, and each port
receives in the clock of the path that sends to it."""

from migen import ClockSignal, Instance, Mux, ResetSignal, Signal

from litex.gen import LiteXModule
from litex.soc.interconnect.csr import CSRStatus, CSRStorage

from litex_soc.tester import ROOT
from litex_soc.verilog_ports import module_ports

MODEL = ROOT / "sim" / "models" / "dut_switch_path.v"
ECHO = ROOT / "sim" / "models" / "dut_echo.v"
CAPTURE = ROOT / "sim" / "models" / "gmii_capture.v"
ELASTIC = ROOT / "sim" / "models" / "gmii_elastic.v"
RUN_CLOCK = ROOT / "sim" / "models" / "dut_run_clock.v"
# what shapes the twin beyond the tester (its build id): this file and the models
MODEL_SOURCES = (MODEL, ECHO, CAPTURE, ELASTIC, RUN_CLOCK, ROOT / "litex_soc" / "dut_model.py")
# the capture taps: which wire -> file in the twin's run directory; csr.json carries them
# (CAPTURE_PORTn_TX/RX) for host/fpgatest/capture.py
CAPTURE_TAPS = {(port, side): f"port{port}-{side}.txt" for port in (0, 1) for side in ("tx", "rx")}

Q16 = 1 << 16
# a plain gigabit store-and-forward switch: 1 us processing, 8 ns/byte, 1 Gb/s egress, 512 KiB
# buffer shared... per direction 128 KiB, 9216-byte jumbo limit, no cables
MODEL_DEFAULTS = {
    "cfg_enable":       1,
    "cfg_cut_through":  0,
    "cfg_dither":       0,
    "cfg_latency":      125 * Q16,
    "cfg_per_byte":     Q16,
    "cfg_pace":         1 << 32,
    "cfg_buffer_bytes": 128 * 1024,
    "cfg_max_frame":    9216,
    "cfg_cable_in":     0,
    "cfg_cable_out":    0,
    "cfg_cross_mode":   0,
    "cfg_cross_period": 1000 * Q16,
    "cfg_cross_size":   1518,
}


def _model_csrs(module, source, defaults: dict, params: dict) -> None:
    """Every cfg_* port of a model a CSRStorage (reset from defaults), every stat_* a CSRStatus,
    attached to module and wired into the Instance params."""
    for p in module_ports(source):
        if p.name.startswith("cfg_"):
            csr = CSRStorage(p.width, name=p.name, reset=defaults[p.name], description=p.description)
            params["i_" + p.name] = csr.storage
        elif p.name.startswith("stat_"):
            csr = CSRStatus(p.width, name=p.name, description=p.description)
            params["o_" + p.name] = csr.status
        else:
            continue
        setattr(module, p.name, csr)


class SwitchPath(LiteXModule):
    """One direction of the switch model; every cfg_* a CSRStorage, every stat_* a CSRStatus."""

    def __init__(self, gmii_in, gmii_out, enable=1, cd="dut_ab"):
        params = dict(i_clk=ClockSignal(cd), i_rst=ResetSignal(cd),
                      i_in_d=gmii_in["data"], i_in_en=gmii_in["en"],
                      o_out_d=gmii_out["data"], o_out_en=gmii_out["dv"])
        _model_csrs(self, MODEL, {**MODEL_DEFAULTS, "cfg_enable": enable}, params)
        self.specials += Instance("dut_switch_path", **params)


# the echo responder: off (a plain path), 1 us from a request's last byte to its reply
ECHO_DEFAULTS = {"cfg_enable": 0, "cfg_delay": 125}


class EchoResponder(LiteXModule):
    """dut_echo between the forward path and port 1 (every cfg_* a CSRStorage, every stat_* a CSRStatus)."""

    def __init__(self, gmii_in, port_b_rx, port_b_tx, ret):
        params = dict(i_clk=ClockSignal("dut_ab"), i_rst=ResetSignal("dut_ab"),
                      i_in_d=gmii_in["data"], i_in_en=gmii_in["en"],
                      i_other_d=port_b_tx["data"], i_other_en=port_b_tx["en"],
                      o_fwd_d=port_b_rx["data"], o_fwd_en=port_b_rx["dv"],
                      o_ret_d=ret["data"], o_ret_en=ret["dv"])
        _model_csrs(self, ECHO, ECHO_DEFAULTS, params)
        self.specials += Instance("dut_echo", **params)


def gmii_signals():
    return {"tx": {"data": Signal(8), "en": Signal(), "er": Signal()},
            "rx": {"data": Signal(8), "dv": Signal(), "er": Signal()}}


class Capture(LiteXModule):
    """Every frame on the four tester wires written to text files while `enable` is set (twin only)."""

    def __init__(self, time_tick, ports: dict):
        self.enable = CSRStorage(1, description="write every frame on the tester's wires to port<N>-<tx|rx>.txt "
                                                "in the twin's run directory")
        for (port, side), name in CAPTURE_TAPS.items():
            wire = ports[port][side]
            # each wire in the clock its bytes change in: the tester's, or the receiving port's
            clk = ClockSignal("tester") if side == "tx" else ports[port]["rx_clk"]
            self.specials += Instance("gmii_capture", p_FILE=name, i_clk=clk,
                                      i_time_tick=time_tick, i_d=wire["data"],
                                      i_en=wire["en"] if side == "tx" else wire["dv"], i_cfg_enable=self.enable.storage)


class TapStatus(LiteXModule):
    """Which ports a TAP drives (the host then knows the switch model is not the device under test)."""

    def __init__(self, taps_on):
        self.on = CSRStatus(len(taps_on), description="bit N: port N receives from a Linux TAP interface, "
                                                      "not from the switch model")
        self.comb += [self.on.status[i].eq(on) for i, on in enumerate(taps_on)]


class Elastic(LiteXModule):
    """A GMII stream into another clock (gmii_elastic: the model's MAC FIFO), a wire while `bypass`."""

    def __init__(self, gmii_in, in_cd: str, out_cd: str, bypass):
        self.out = {"data": Signal(8), "en": Signal()}
        self.specials += Instance("gmii_elastic", i_bypass=bypass,
                                  i_in_clk=ClockSignal(in_cd), i_in_d=gmii_in["data"], i_in_en=gmii_in["en"],
                                  i_out_clk=ClockSignal(out_cd), o_out_d=self.out["data"], o_out_en=self.out["en"])


def add_switch_model(soc, port_a: dict, port_b: dict, own_clocks, taps=None) -> None:
    """Join two tester ports through the model: a.tx -> path ab -> path ab2 (a wire by default) -> echo
    responder -> b.rx and b.tx (or the responder's replies) -> path ba -> a.rx. The paths run in the
    clock domains "dut_ab" and "dut_ba"; a frame enters each through a MAC FIFO unless own_clocks is
    low (the domains are then the tester clock, and the FIFOs wires).
    taps: per port, the pads of a TAP bridge (sim/twin/modules/fpgatest_tap): its tx_* see the port's
    transmitter, and while its `on` is set the port receives rx_* instead of the model's output."""
    soc.platform.add_source(str(MODEL))
    soc.platform.add_source(str(ECHO))
    soc.platform.add_source(str(ELASTIC))
    soc.platform.add_source(str(RUN_CLOCK))

    def wire():
        w = {"data": Signal(8), "en": Signal(), "dv": Signal()}
        soc.comb += w["en"].eq(w["dv"])
        return w

    model_rx = [port_a["rx"], port_b["rx"]]
    if taps:
        model_rx = [wire(), wire()]
        # the TAP's pads through a flip-flop (in the tester clock, which fpgatest_tap drives them in): no
        # logic hangs off a top-level input, which Verilator would evaluate at every time step
        taps_q = [{"on": Signal(), "rx_data": Signal(8), "rx_dv": Signal()} for _ in taps]
        for port, tap, tap_q, rx in zip((port_a, port_b), taps, taps_q, model_rx):
            soc.sync.tester += [tap_q[name].eq(getattr(tap, name)) for name in tap_q]
            soc.comb += [tap.tx_data.eq(port["tx"]["data"]), tap.tx_en.eq(port["tx"]["en"]),
                         port["rx"]["data"].eq(Mux(tap_q["on"], tap_q["rx_data"], rx["data"])),
                         port["rx"]["dv"].eq(Mux(tap_q["on"], tap_q["rx_dv"], rx["dv"]))]
        soc.add_module("tap", TapStatus([tap_q["on"] for tap_q in taps_q]))
    middle, far, ret = wire(), wire(), wire()
    bypass = ~own_clocks
    into_ab = Elastic(port_a["tx"], "tester", "dut_ab", bypass)
    other_into_ab = Elastic(port_b["tx"], "tester", "dut_ab", bypass)
    into_ba = Elastic(ret, "dut_ab", "dut_ba", bypass)
    soc.submodules += into_ab, other_into_ab, into_ba
    soc.add_module("dut_ab", SwitchPath(into_ab.out, middle))
    soc.add_module("dut_ab2", SwitchPath(middle, far, enable=0))
    soc.add_module("dut_echo", EchoResponder(far, model_rx[1], other_into_ab.out, ret))
    soc.platform.add_source(str(CAPTURE))
    soc.add_module("capture", Capture(soc.tester.time_tick, {0: port_a, 1: port_b}))
    for (port, side), name in CAPTURE_TAPS.items():
        soc.add_constant(f"CAPTURE_PORT{port}_{side.upper()}", name)
    soc.add_module("dut_ba", SwitchPath(into_ba.out, model_rx[0], cd="dut_ba"))
