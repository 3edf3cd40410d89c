#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The digital twin: the fpgatest SoC in Verilator, its two ports joined through a simulated switch.

    python -m boards.twin --build            # generate + compile into build/twin
    python -m boards.twin --run --port 4327  # serve UARTBone on socket://127.0.0.1:4327
    python -m boards.twin --run --full       # both directions on both ports (build/twin-full)
    python -m boards.twin --run --linux      # the full twin, a Linux router between the ports (root)

The twin has the Colorlight 5A-75B's port directions (port 0 generating, port 1 receiving, no
reflector), so a command does on the twin what it does on that board, and the interval recorder, as
that board's default build has it (a board build with --no-intervals leaves it out; the host then
times the intervals itself, and every command runs the same). --full builds both
directions on both ports and a reflector in each (fpgatest --url twin:full): what a larger board
holds, for the methods that need a port that sends and receives.

With --linux (fpgatest --url twin:linux), each port is joined to a TAP interface
(sim/twin/modules/fpgatest_tap) instead of the switch model, and both TAPs sit in a network namespace
of their own that forwards IPv4 and IPv6 between them: the kernel is the device under test. With
--linux bridge (--url twin:linux-bridge) the namespace bridges the two TAPs instead (a learning switch).
"""

import argparse
import contextlib
import fcntl
import hashlib
import json
import math
import os
import platform
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from migen import ClockDomain, If, Mux, Signal
from migen.genlib.resetsync import AsyncResetSynchronizer

from litex.build.generic_platform import Pins, Subsignal
from litex.build.sim import SimPlatform
from litex.build.sim.config import SimConfig
from litex.gen import LiteXModule
from litex.soc.integration.builder import Builder
from litex.soc.interconnect import stream

from boards.colorlight import port_directions
from boards.colorlight_5a_75b import BaseSoC as Board
from litex_soc.management import DEFAULT_IP, DEFAULT_MAC
from litex_soc.dut_model import MODEL_SOURCES, add_switch_model, gmii_signals
from litex_soc.soc import FPGATestSoC
from litex_soc.tester import ROOT, add_tester, port_defaults, rtl_files

# the board's two clocks: tester 125 MHz, sys (the CSR bus, UARTBone and the per-frame engines) 50 MHz,
# so the twin's tests run every sys/tester crossing (record FIFO, control strobes) with the board's
# two clocks and their edges as they fall on the board (the simulator steps from edge to edge:
# sim/twin/core/sim.c)
TESTER_CLK_FREQ = 125e6
SYS_CLK_FREQ = 50e6
# the power-on reset's length in sys clocks (_CRG)
POR_CLOCKS = 16
# the twin's reflectors: a 32 KiB ring, so the largest frame (16383 bytes) is reflected at line rate
TWIN_REFLECT_LOG2 = 15
# --etherbone: a twin with Etherbone on port 1 (litex_soc/management.py), udp://192.168.1.50 through a
# TAP (--linux), the host's bus on the wire the port tests, as on a board built with --etherbone. A
# build of its own: LiteEth's core costs the twin 30 % of its speed (0.74 -> 0.52 M cycles/s idle)
TWIN_ETHERBONE = {"port": 1, "ip": DEFAULT_IP, "mac": DEFAULT_MAC}
# the twin's builds: "board" (the default) is the 5A-75B's default build (its port directions, no
# reflector, the interval recorder); "full" both directions on both ports, a reflector in each and the
# recorder (and, with Etherbone, only that one is built)
VARIANTS = ("board", "full")
BUILD_DIR = ROOT / "build" / "twin"
FULL_BUILD_DIR = ROOT / "build" / "twin-full"
ETHERBONE_BUILD_DIR = ROOT / "build" / "twin-etherbone"
DEFAULT_PORT = 4327
# the UARTBone bridge to TCP: LiteX's serial2tcp made safe for a shared machine (loopback only, one
# client at a time, a client may come and go): sim/twin/modules/fpgatest_serial2tcp
MODULES = ROOT / "sim" / "twin" / "modules"
SERIAL_MODULE = "fpgatest_serial2tcp"
# a port's GMII to a Linux TAP (loaded only when the kernel is the device under test)
TAP_MODULE = "fpgatest_tap"
# the device model's own clocks, --dut-ppm (only then): an entry of sim_config's that the twin's main
# loop carries out itself, as it drives every clock (sim/twin/core/sim.c)
DUTCLK_MODULE = "fpgatest_dutclk"
# how far off the tester clock they may be: gmii_elastic's margin (2x at +-250 ppm), and beyond the
# +-100 ppm a gigabit PHY is specified for
DUT_PPM_MAX = 200
# the drifting twin the tests use (conftest's drift_twin_link, sim/twin/test_dut_clocks.py): path ab (what
# port 1 receives) 100 ppm fast, ba (what port 0 receives) 100 ppm slow, a gigabit PHY's tolerance
DRIFT_PPM = (100.0, -100.0)
# the twin's simulator build: LiteX's simulator core with the twin's glue and flags (build())
CORE = ROOT / "sim" / "twin" / "core"
# clocks whose falling edges no logic acts on: the main loop takes no time step for them (sim.c;
# build() checks the Verilated model's triggers)
RISING_ONLY = ("sys_clk",)
FLOWS = ("twin", "litex")

_io = [
    ("sys_clk", 0, Pins(1)),
    ("tester_clk", 0, Pins(1)),
    ("serial", 0,
        Subsignal("source_valid", Pins(1)),
        Subsignal("source_ready", Pins(1)),
        Subsignal("source_data",  Pins(8)),
        Subsignal("sink_valid",   Pins(1)),
        Subsignal("sink_ready",   Pins(1)),
        Subsignal("sink_data",    Pins(8)),
    ),
    # the device model's own clocks (--dut-ppm: the main loop drives them, sim/twin/core/sim.c; own = 0 without)
    ("dutclk", 0,
        Subsignal("own", Pins(1)),
        Subsignal("ab",  Pins(1)),
        Subsignal("ba",  Pins(1)),
    ),
    *[("tap", n,
        Subsignal("on",      Pins(1)),
        Subsignal("tx_data", Pins(8)),
        Subsignal("tx_en",   Pins(1)),
        Subsignal("rx_data", Pins(8)),
        Subsignal("rx_dv",   Pins(1)),
    ) for n in (0, 1)],
]


class Platform(SimPlatform):
    def __init__(self):
        SimPlatform.__init__(self, "SIM", _io)


class _CRG(LiteXModule):
    """The simulated clocks: "sys" (SoC and engines) and "tester" (125 MHz), and the device model's
    "dut_ab" and "dut_ba": the tester clock, or fpgatest_dutclk's while it runs (own_clocks).

    A power-on reset, as on the board (whose domains are held in reset until the PLL locks): every
    domain in reset for its first clocks, released through a synchroniser of its own. It comes from a
    flip-flop, not from a pad, so no logic hangs off a top-level input: Verilator evaluates what
    depends on an input at every time step, what depends on a flip-flop only at its clock's edges."""

    def __init__(self, platform):
        self.cd_sys = ClockDomain()
        self.cd_tester = ClockDomain()
        self.cd_dut_ab = ClockDomain()
        self.cd_dut_ba = ClockDomain()
        self.cd_por = ClockDomain(reset_less=True)
        sys_clk = platform.request("sys_clk")
        dut = platform.request("dutclk")
        # dutclk.own: set by the main loop before the first edge with --dut-ppm; a flip-flop for the same reason
        self.own_clocks = Signal()
        por_count = Signal(max=POR_CLOCKS + 1, reset=POR_CLOCKS)
        por = Signal()
        self.comb += [
            self.cd_por.clk.eq(sys_clk),
            self.cd_sys.clk.eq(sys_clk),
            self.cd_tester.clk.eq(platform.request("tester_clk")),
            self.cd_dut_ab.clk.eq(Mux(self.own_clocks, dut.ab, self.cd_tester.clk)),
            self.cd_dut_ba.clk.eq(Mux(self.own_clocks, dut.ba, self.cd_tester.clk)),
            por.eq(por_count != 0),
        ]
        self.sync.por += [self.own_clocks.eq(dut.own), If(por, por_count.eq(por_count - 1))]
        self.specials += [AsyncResetSynchronizer(cd, por)
                          for cd in (self.cd_sys, self.cd_tester, self.cd_dut_ab, self.cd_dut_ba)]


class _SerialPHYModel(LiteXModule):
    """The UARTBone bridge's byte streams on the serial pads (fpgatest_serial2tcp drives them), as LiteX's
    RS232PHYModel, with a flip-flop stage each way (stream.PipeValid in, stream.Buffer out): no logic
    between a pad and the bridge's state machine, which Verilator then evaluates at sys edges only, not
    at every time step. The module takes a byte per clock either way, as before."""

    def __init__(self, pads):
        self.sink = stream.Endpoint([("data", 8)])
        self.source = stream.Endpoint([("data", 8)])
        self.rx = rx = stream.PipeValid([("data", 8)])
        self.tx = tx = stream.Buffer([("data", 8)], pipe_valid=True, pipe_ready=True)
        self.comb += [
            rx.sink.valid.eq(pads.sink_valid), rx.sink.data.eq(pads.sink_data),
            pads.sink_ready.eq(rx.sink.ready),
            rx.source.connect(self.source),
            self.sink.connect(tx.sink),
            pads.source_valid.eq(tx.source.valid), pads.source_data.eq(tx.source.data),
            tx.source.ready.eq(pads.source_ready),
        ]


def default_build_dir(variant: str = "board", etherbone: bool = False) -> Path:
    return ETHERBONE_BUILD_DIR if etherbone else FULL_BUILD_DIR if variant == "full" else BUILD_DIR


def variant_of(variant: str, etherbone: bool = False, linux: str | None = None) -> str:
    """The variant a twin has: Etherbone and the Linux kernel as the device under test come with the
    full twin only (the kernel's own frames, echo replies and the reflector need ports that send and
    receive; no board holds a kernel, so there is no board's build to follow there)."""
    assert variant in VARIANTS, variant
    return "full" if etherbone or linux else variant


def build_shape(variant: str) -> tuple[list[tuple[bool, bool]], bool]:
    """(port directions, interval recorder) of a variant: the board's default build, or both directions on
    both ports with the recorder (the sweep's samples exactly as long as asked)."""
    if variant == "board":
        return port_directions(Board.FULL_DUPLEX), Board.INTERVALS
    return port_directions(True), True


class TwinSoC(FPGATestSoC):
    def __init__(self, variant: str = "board", etherbone: bool = False):
        platform = Platform()
        FPGATestSoC.__init__(self, platform, SYS_CLK_FREQ, ident="fpgatest twin")
        self.crg = _CRG(platform)
        # 10 s of simulated time before a half-received UARTBone command is dropped
        self.add_uartbone_phy(_SerialPHYModel(platform.request("serial")), timeout_s=10.0)
        ports = [gmii_signals(), gmii_signals()]
        # each receive side in the clock of the model's path that sends to it (port 0 from dut_ba, port
        # 1 from dut_ab), inverted, as a PHY's recovered clock: by default the tester's frequency half a
        # period later, so every RX crossing (the time base in, the frame FIFO out) runs between two
        # clocks whose edges never meet and the stamps stay exact to the tick (both sides of the SFD's
        # crossing move by the same half period); with --dut-ppm a clock of its own frequency
        for port, sender in zip(ports, (self.crg.cd_dut_ba, self.crg.cd_dut_ab)):
            port["rx_clk"] = Signal()
            port["rx_rst"] = Signal()
            self.comb += [port["rx_clk"].eq(~sender.clk), port["rx_rst"].eq(sender.rst)]
        directions, intervals = build_shape(variant_of(variant, etherbone))
        add_tester(self, ports, target="generic", build_extra="twin", model_sources=MODEL_SOURCES,
                   directions=directions, intervals=intervals, reflect_log2=TWIN_REFLECT_LOG2,
                   etherbone=TWIN_ETHERBONE if etherbone else None)
        add_switch_model(self, ports[0], ports[1], self.crg.own_clocks,
                         taps=[platform.request("tap", n) for n in (0, 1)])


def dut_clock_args(dut_ppm: tuple[float, float]) -> dict:
    """fpgatest_dutclk's arguments: each path's clock at the tester's frequency * (1 + ppm 1e-6), its
    half period in whole femtoseconds (0.25 ppm steps: realised_ppm), the two phases apart from the tester's edges
    and each other's at the start (they drift through every phase: 8 ns in 80 us at 100 ppm)."""
    half = [round(5e14 / (TESTER_CLK_FREQ * (1 + ppm * 1e-6))) for ppm in dut_ppm]
    return {"ab_half_fs": half[0], "ab_phase_fs": 1_000_000, "ba_half_fs": half[1], "ba_phase_fs": 3_000_000}


def realised_ppm(dut_ppm: tuple[float, float]) -> tuple[float, float]:
    """The frequency offsets the simulator runs for dut_ppm (its half periods are whole femtoseconds)."""
    args = dut_clock_args(dut_ppm)
    return tuple(5e14 / (TESTER_CLK_FREQ * args[f"{p}_half_fs"]) * 1e6 - 1e6 for p in ("ab", "ba"))


def refuse_dut_ppm(dut_ppm, linux: str | None) -> None:
    """RuntimeError for device clocks the model cannot run."""
    if dut_ppm is None:
        return
    if linux:
        raise RuntimeError("--dut-ppm: with the kernel as the device under test the ports receive from the TAPs "
                           "in the tester clock; there is no device clock to set")
    if len(dut_ppm) != 2 or not all(math.isfinite(p) and abs(p) <= DUT_PPM_MAX for p in dut_ppm):
        raise RuntimeError(f"--dut-ppm {','.join(map(str, dut_ppm))}: two offsets (ab,ba) within "
                           f"+-{DUT_PPM_MAX} ppm are what the model's MAC FIFOs carry")


def sim_config(port: int, linux: str | None = None, dut_ppm: tuple[float, float] | None = None) -> SimConfig:
    config = SimConfig()
    for clock, freq in (("sys_clk", SYS_CLK_FREQ), ("tester_clk", TESTER_CLK_FREQ)):
        args = {"freq_hz": int(freq), "phase_deg": 0, "rising_only": int(clock in RISING_ONLY)}
        config.add_module("clocker", [], clocks=clock, tickfirst=True, args=args)
    if dut_ppm is not None:
        config.add_module(DUTCLK_MODULE, [("dutclk", 0)], clocks=[], tickfirst=True, args=dut_clock_args(dut_ppm))
    config.add_module(SERIAL_MODULE, "serial", args={"port": port})
    if linux:
        for n, name in enumerate(tap_names(port)):
            config.add_module(TAP_MODULE, [("tap", n)], clocks="tester_clk", args={"interface": name})
    return config


# ---- the Linux kernel as the device under test -------------------------------------------------------

def tap_names(port: int) -> list[str]:
    """The TAP interface of each tester port, for the twin serving `port`."""
    return [f"ft{port}p{n}" for n in (0, 1)]


def netns_name(port: int) -> str:
    return f"fpgatest-{port}"


def linux_missing() -> str | None:
    """Why this machine cannot put the kernel between the twin's ports, or None when it can."""
    if not Path("/dev/net/tun").exists():
        return "/dev/net/tun is missing (no TUN/TAP driver)"
    if os.geteuid() != 0:
        return "creating TAP interfaces and a network namespace needs root"
    if not shutil.which("ip"):
        return "the ip command (iproute2) is missing"
    return None


def refuse_linux(linux: str | None) -> None:
    """RuntimeError when the kernel is asked for as the DUT and this machine cannot put it there."""
    if linux and (missing := linux_missing()):
        raise RuntimeError(f"the Linux kernel as DUT: {missing}")


def _mac(value: int) -> str:
    return ":".join(f"{(value >> s) & 0xFF:02x}" for s in range(40, -1, -8))


LINUX_MODES = ("router", "bridge")
# in the run directory of a twin whose ports go through the kernel: kernel_info(), read by fpgatest
KERNEL_INFO = "kernel.json"


def router_addresses(n: int) -> dict[str, str]:
    """The router's own addresses on port n's subnet (port n's are 192.168.n.1 and 2001:db8:0:n::1), the
    IPv6 one written as `ip` shows it."""
    import ipaddress

    return {"ipv4": f"192.168.{n}.254", "ipv6": str(ipaddress.IPv6Address(f"2001:db8:0:{n}::fe"))}


def kernel_info(port: int, mode: str) -> dict:
    """What a twin's run directory says of its kernel (KERNEL_INFO, for fpgatest: what answers there)."""
    return {"mode": mode, "netns": netns_name(port), "taps": tap_names(port),
            "router": [router_addresses(n) for n in range(2)] if mode == "router" else None}


def kernel_plan(port: int, mode: str = "router") -> list[list[str]]:
    """The commands that make the namespace holding the twin's TAPs a device under test: a bridge of the
    two (a learning switch, no STP), or a router. As a router each interface takes the MAC the facing
    tester port sends to by default (its peer's), so a stream needs no new addresses; port n's
    addresses are static neighbours (no ARP or ND needed for test frames)."""
    assert mode in LINUX_MODES, mode
    ns = netns_name(port)
    plan = [["ip", "netns", "add", ns]]
    plan += [["ip", "link", "set", tap, "netns", ns] for tap in tap_names(port)]
    if mode == "bridge":
        plan += [["ip", "-n", ns, "link", "add", "br0", "type", "bridge", "stp_state", "0"]]
        plan += [step for tap in tap_names(port) for step in
                 (["ip", "-n", ns, "link", "set", tap, "master", "br0"], ["ip", "-n", ns, "link", "set", tap, "up"])]
        return plan + [["ip", "-n", ns, "link", "set", "br0", "up"]]
    plan += [["ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv4.ip_forward=1",
              "net.ipv6.conf.all.forwarding=1", "net.ipv6.conf.default.forwarding=1"],
             ["ip", "-n", ns, "link", "set", "lo", "up"]]
    for n, tap in enumerate(tap_names(port)):
        own, router = port_defaults(n, 1 - n), router_addresses(n)
        plan += [["ip", "-n", ns, "link", "set", tap, "address", _mac(own["cfg_dst_mac"])],
                 ["ip", "-n", ns, "addr", "add", f"{router['ipv4']}/24", "dev", tap],
                 ["ip", "-n", ns, "-6", "addr", "add", f"{router['ipv6']}/64", "dev", tap, "nodad"],
                 ["ip", "-n", ns, "link", "set", tap, "up"],
                 ["ip", "-n", ns, "neigh", "replace", f"192.168.{n}.1", "lladdr", _mac(own["cfg_src_mac"]),
                  "dev", tap, "nud", "permanent"],
                 ["ip", "-n", ns, "-6", "neigh", "replace", f"2001:db8:0:{n}::1", "lladdr",
                  _mac(own["cfg_src_mac"]), "dev", tap, "nud", "permanent"]]
    return plan


def _ip(cmd: list[str]) -> None:
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {result.stderr.strip() or f'exit {result.returncode}'}")


def build(build_dir: Path = BUILD_DIR, flow: str = "twin", variant: str = "board", etherbone: bool = False) -> None:
    """Generate the SoC, csr.json/csr.csv and the Verilator model (compiled into build_dir/gateware).
    flow "twin": the twin's own simulator build (sim/twin/core/Makefile: LiteX's simulator core, no
    tracing, Verilator's fast X handling, the model compiled for this machine's CPU).
    flow "litex": LiteX's own build_sim.sh, as LiteX builds any simulation (make bench's reference).
    variant: "board" (the 5A-75B's default build) or "full" (both directions, every engine).
    etherbone: Etherbone on port 1 (TWIN_ETHERBONE), a full twin."""
    assert flow in FLOWS, flow
    variant = variant_of(variant, etherbone)
    soc = TwinSoC(variant, etherbone)
    builder = Builder(soc, output_dir=str(build_dir), compile_software=False, compile_gateware=False,
                      csr_json=str(build_dir / "csr.json"), csr_csv=str(build_dir / "csr.csv"))
    # our serial bridge module, built beside LiteX's (LiteX writes a variables.mak next to it: a copy
    # in the build directory keeps the source tree clean)
    mods = build_dir / "extra_mods"
    shutil.rmtree(mods, ignore_errors=True)
    extra = [SERIAL_MODULE, TAP_MODULE]
    for module in extra:
        shutil.copytree(MODULES / module, mods / module)
    builder.build(sim_config=sim_config(DEFAULT_PORT), run=False, opt_level="O3",
                  interactive=False, extra_mods=extra, extra_mods_path=str(mods))
    gateware = build_dir / "gateware"
    if flow == "litex":     # LiteX compiles only when it also runs; compile here so --run starts at once
        _step(["bash", "build_sim.sh"], gateware)
    else:
        sources = " ".join(f"--cc {name}" for name, *_ in soc.platform.sources
                           if Path(name).suffix not in (".hex", ".init"))
        shutil.rmtree(gateware / "obj_dir", ignore_errors=True)
        _step(["make", "-f", str(CORE / "Makefile"), f"CC_SRCS={sources}"], gateware)
        check_rising_only(gateware / "obj_dir")
    constants = json.loads((build_dir / "csr.json").read_text())["constants"]
    (build_dir / "twin.built").write_text(json.dumps({"build_id": constants["fpgatest_build_id"], "flow": flow,
                                                      "variant": variant, "etherbone": etherbone,
                                                      **({"cpu": cpu()} if flow == "twin" else {})}))


def check_rising_only(obj_dir: Path) -> None:
    """RuntimeError where logic of the Verilated model acts on a RISING_ONLY clock other than at its
    rising edge (the main loop would move such a falling edge to the next time step)."""
    for source in sorted(obj_dir.glob("Vsim___024root*.cpp")):
        for trigger in set(re.findall(r"trigger index \d+ is active: (@\(.*?\))\\n", source.read_text())):
            for clock in RISING_ONLY:
                if re.search(rf"\b{clock}\b", trigger) and trigger != f"@(posedge {clock})":
                    raise RuntimeError(f"twin: the model acts on {clock} at {trigger}, not only at its rising "
                                       f"edge (boards/twin.py RISING_ONLY)")


def _step(cmd: list[str], cwd: Path) -> None:
    result = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    sys.stdout.write(result.stdout)
    sys.stderr.write(result.stderr)
    if result.returncode != 0:
        raise RuntimeError(f"twin: {' '.join(cmd[:3])} ... failed (exit {result.returncode})")


def run_directory(build_dir: Path, port: int) -> Path:
    """Where the twin serving port runs: its sim_config.js, its capture taps' files, kernel.json."""
    return Path(build_dir) / f"run-{port}"


def command(port: int, build_dir: Path = BUILD_DIR, linux: str | None = None,
            dut_ppm: tuple[float, float] | None = None) -> tuple[list[str], Path]:
    """The command that runs the twin serving UARTBone on 127.0.0.1:port, and its working directory."""
    build_dir = Path(build_dir).resolve()     # the command runs in the run directory
    gateware = build_dir / "gateware"
    run_dir = run_directory(build_dir, port)
    run_dir.mkdir(parents=True, exist_ok=True)
    # the model reads sim_config.js from its working directory: one directory per TCP port
    (run_dir / "sim_config.js").write_text(sim_config(port, linux, dut_ppm).get_json())
    for module in (gateware / "modules").glob("*.so"):
        target = run_dir / "modules" / module.name
        target.parent.mkdir(exist_ok=True)
        shutil.copy2(module, target)
    # a kernel.json left by a twin that was killed on this port is not this twin's (running() writes its own)
    (run_dir / KERNEL_INFO).unlink(missing_ok=True)
    return [str(gateware / "obj_dir" / "Vsim")], run_dir


# what a twin is built from (the board's target files: the default variant is its default build)
SOURCES = [*rtl_files(), *sorted((ROOT / "sim" / "models").glob("*.v")),
           *sorted((ROOT / "litex_soc").glob("*.py")), *sorted(MODULES.rglob("*")), *sorted(CORE.glob("*")),
           Path(__file__), ROOT / "boards" / "colorlight.py", ROOT / "boards" / "colorlight_5a_75b.py"]


def cpu(cpuinfo: str | None = None) -> str:
    """This machine's CPU (or that of cpuinfo, a /proc/cpuinfo text): its model and its instruction set
    (a hash of its flags), as the twin's build is compiled for it (-march=native): a model name such as
    "AMD EPYC" covers CPUs with and without instructions the compiler may use."""
    if cpuinfo is None:
        with contextlib.suppress(OSError):
            cpuinfo = Path("/proc/cpuinfo").read_text()
    fields = {}
    for line in (cpuinfo or "").splitlines():
        key, _, value = line.partition(":")
        fields.setdefault(key.strip(), value.strip())
    if "model name" not in fields:
        return platform.machine()
    flags = " ".join(sorted(fields.get("flags", "").split()))
    return f"{fields['model name']} (flags {hashlib.sha256(flags.encode()).hexdigest()[:8]})"


def up_to_date(build_dir: Path = BUILD_DIR, variant: str = "board", etherbone: bool = False) -> bool:
    """Built from these sources, as asked (the variant, with Etherbone or not), for this CPU (a checkout
    copied to another machine builds again)."""
    marker = build_dir / "twin.built"
    if not marker.exists() or any(p.stat().st_mtime > marker.stat().st_mtime for p in SOURCES):
        return False
    with contextlib.suppress(ValueError):
        built = json.loads(marker.read_text())
        return (built.get("cpu", cpu()) == cpu() and built.get("etherbone", False) == etherbone
                and built.get("variant") == variant_of(variant, etherbone))
    return False


def ensure_built(build_dir: Path = BUILD_DIR, variant: str = "board", etherbone: bool = False) -> None:
    """Build when a source changed: one line on stderr, LiteX's and Verilator's output in
    build_dir/build.log (named in the error when the build fails). Two processes that need the same
    build (two `fpgatest` commands, two test workers) build it once: the second waits for the first."""
    if up_to_date(build_dir, variant, etherbone):
        return
    build_dir.mkdir(parents=True, exist_ok=True)
    with open(build_dir / "build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not up_to_date(build_dir, variant, etherbone):
            _build_logged(build_dir, variant, etherbone)


def _build_logged(build_dir: Path, variant: str, etherbone: bool) -> None:
    log_path = build_dir / "build.log"
    start = time.monotonic()
    print(f"fpgatest: building the twin (LiteX + Verilator, a few minutes; log {log_path}) ...",
          file=sys.stderr, flush=True)
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    try:
        with open(log_path, "w") as log:
            os.dup2(log.fileno(), 1)
            os.dup2(log.fileno(), 2)
            try:   # Python's own streams too: a caller (pytest) may have replaced them
                with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
                    build(build_dir, variant=variant, etherbone=etherbone)
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os.dup2(saved[0], 1)
                os.dup2(saved[1], 2)
    except BaseException as err:
        if isinstance(err, KeyboardInterrupt):
            raise
        raise RuntimeError(f"the twin did not build ({err}): see {log_path}") from None
    finally:
        os.close(saved[0])
        os.close(saved[1])
    print(f"fpgatest: twin built in {time.monotonic() - start:.0f} s", file=sys.stderr, flush=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def running(port: int | None = None, build_dir: Path | None = None, log=None, linux: str | None = None,
            variant: str = "board", etherbone: bool = False, dut_ppm: tuple[float, float] | None = None,
            on_exit=None):
    """Build if needed, start the twin on a TCP port, yield (url, csr.json path), stop it; on_exit(), when
    given, is called once the simulator has ended, before its run directory is removed.
    variant: "board" (the 5A-75B's default build, in build/twin) or "full" (build/twin-full).
    linux: "router" or "bridge", the ports joined through the kernel (kernel_plan) instead of the
    switch model. etherbone: the build with Etherbone on port 1 (in build/twin-etherbone by default).
    With either, the twin is the full one (variant_of). dut_ppm: (ab, ba), the device model's two
    clocks that many ppm off the tester's (None: the model runs on the tester clock)."""
    refuse_linux(linux)
    refuse_dut_ppm(dut_ppm, linux)
    variant = variant_of(variant, etherbone, linux)
    build_dir = build_dir or default_build_dir(variant, etherbone)
    ensure_built(build_dir, variant, etherbone)
    port = port or free_port()
    if linux:   # a namespace left by a twin that was killed
        subprocess.run(["ip", "netns", "del", netns_name(port)], capture_output=True)
    cmd, cwd = command(port, build_dir, linux, dut_ppm)
    proc = subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.DEVNULL, stdout=log or subprocess.DEVNULL,
                            stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"twin exited with {proc.returncode} before serving port {port}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"twin did not open port {port} within 60 s") from None
                time.sleep(0.1)
        # the bridge frees its session when it sees the probe's EOF (or when the next client comes)
        time.sleep(0.1)
        # LiteX's own glue (build flow "litex") opens sim.vcd whether or not tracing was asked for
        # (only a header is written): nothing is left in the run directory
        (cwd / "sim.vcd").unlink(missing_ok=True)
        if linux:
            for step in kernel_plan(port, linux):
                _ip(step)
            (cwd / KERNEL_INFO).write_text(json.dumps(kernel_info(port, linux)))
        yield f"socket://127.0.0.1:{port}", build_dir / "csr.json"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if linux:   # the TAPs went with the twin
            subprocess.run(["ip", "netns", "del", netns_name(port)], capture_output=True)
        try:
            if on_exit:
                on_exit()
        finally:
            shutil.rmtree(cwd, ignore_errors=True)


def serve(port: int | None, build_dir: Path, linux: str | None, for_tool: bool, variant: str = "board",
          etherbone: bool = False, dut_ppm: tuple[float, float] | None = None, capture: Path | None = None) -> int:
    """Run the twin until SIGTERM, SIGINT or SIGHUP (or, for_tool, until stdin closes: the fpgatest that
    started it is gone). Announce it on stdout: one JSON line {"url", "csr"} or {"error"} for fpgatest,
    a sentence for a person. The simulator's own output goes to build/twin-run.log.
    capture: every frame on the twin's wires from its start to its end written there as pcapng when it
    stops (fpgatest.capture; the taps stay on while fpgatest commands take captures of their own)."""
    done = threading.Event()
    taps = None     # the capture (fpgatest.capture.TwinCapture), once the twin serves

    def write_capture():
        if taps:
            frames = taps.collect(capture)
            print(f"fpgatest twin: {taps.outcome(frames, capture)}", file=sys.stderr, flush=True)

    def say(**fields):
        if for_tool:
            print(json.dumps(fields), flush=True)
        elif "error" in fields:
            print(fields["error"], file=sys.stderr, flush=True)
        else:
            print(f"fpgatest twin: UARTBone on {fields['url']}  (csr: {fields['csr']})"
                  + (f"; ports through the kernel ({linux}) in network namespace {netns_name(port)}: "
                     f"{', '.join(tap_names(port))}" if linux else "")
                  + (f"; capturing its wires to {capture} ({capture_when(capture)})" if capture else ""), flush=True)

    port = port or free_port()
    variant = variant_of(variant, etherbone, linux)
    try:
        refuse_linux(linux)     # before anything is built, started or written
        refuse_dut_ppm(dut_ppm, linux)
        refuse_capture(capture)
        # a signal here ends the launcher and, for fpgatest, its build's processes
        ensure_built(build_dir, variant, etherbone)
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, lambda *_: done.set())
        if for_tool:
            threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
        with open(build_dir.parent / "twin-run.log", "w") as log, \
                running(port, build_dir, log=log, linux=linux, variant=variant, etherbone=etherbone,
                        dut_ppm=dut_ppm, on_exit=write_capture) as (url, csr):
            if capture:
                taps = start_capture(url, csr, run_directory(build_dir, port), capture)
            say(url=url, csr=str(csr))
            while not done.wait(0.5):
                pass
    except (RuntimeError, OSError) as err:
        say(error=f"{err}" if for_tool else f"fpgatest twin: {err}")
        return 2
    return 0


def refuse_capture(capture: Path | None) -> None:
    """RuntimeError (one line) when a capture could not be written at the end: its directory is missing
    or not writable, or it names a directory."""
    if capture is None:
        return
    if capture.is_dir() or not capture.parent.is_dir() or not os.access(capture.parent, os.W_OK):
        raise RuntimeError(f"--capture {capture}: not a file in a writable directory")


def capture_when(capture: Path) -> str:
    """When the twin's own capture is written: as the frames come (a named pipe) or when it stops."""
    from fpgatest.capture import is_pipe

    return "live, as the frames come" if is_pipe(capture) else "written when it stops"


def start_capture(url: str, csr: Path, run_dir: Path, capture_target: Path | None = None):
    """Turn on the capture taps of the twin at url (running in run_dir) for the whole of its run, and
    release the bus at once (the twin serves one client at a time). Returns the capture, for its
    collect() once the twin has stopped."""
    from fpgatest.capture import TwinCapture
    from fpgatest.driver import Device, MapError
    from fpgatest.tester import Tester
    from fpgatest.transport import LinkError

    try:
        with Device(url, csr) as dev:
            capture = TwinCapture(Tester(dev), run_dir)
            capture.start(capture_target)
    except (MapError, LinkError) as err:
        raise RuntimeError(f"--capture: {err}") from None
    return capture


def _ppm_pair(text: str) -> tuple[float, float]:
    try:
        values = tuple(float(v) for v in text.split(","))
    except ValueError:
        values = ()
    if len(values) != 2:
        raise argparse.ArgumentTypeError(f"{text!r}: two offsets in ppm, AB,BA (e.g. 100,-100)")
    return values


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", action="store_true", help="generate and compile the twin")
    parser.add_argument("--run", action="store_true", help="run the twin in the foreground")
    parser.add_argument("--serve", action="store_true",
                        help="for fpgatest --url twin: run on a free port, announce {url, csr} as one JSON line, "
                             "end when stdin closes")
    parser.add_argument("--port", type=int, default=None, help=f"TCP port for UARTBone (--run: default {DEFAULT_PORT})")
    parser.add_argument("--build-dir", type=Path, default=None,
                        help="build directory (default build/twin; --full, --linux: build/twin-full; "
                             "--etherbone: build/twin-etherbone)")
    parser.add_argument("--full", action="store_true",
                        help="both directions on both ports and a reflector in each (default: the 5A-75B's "
                             "directions, port 0 generating and port 1 receiving)")
    parser.add_argument("--linux", nargs="?", const="router", choices=LINUX_MODES, default=None,
                        help="the ports joined through the Linux kernel, a router (default) or a bridge "
                             "(namespace fpgatest-PORT; root); the full twin")
    parser.add_argument("--etherbone", action="store_true",
                        help=f"Etherbone on port 1 at {DEFAULT_IP} (with --linux: fpgatest --url udp://{DEFAULT_IP} "
                             "in the namespace); a build of its own, 30 %% slower")
    parser.add_argument("--dut-ppm", type=_ppm_pair, default=None, metavar="AB,BA",
                        help="run the switch model's two directions on clocks of their own, AB and BA ppm off the "
                             f"tester's (within +-{DUT_PPM_MAX}; e.g. 100,-100): each port then receives in a clock "
                             "of its own frequency, as from a real device (default: the tester clock)")
    parser.add_argument("--capture", type=lambda text: Path(text).resolve(), default=None, metavar="FILE",
                        help="with --run: every frame on both ports' wires, both directions, from the start to the "
                             "stop written to FILE as pcapng when the twin stops (the tester's clock in ns; as "
                             "fpgatest --capture, which works beside it)")
    args = parser.parse_args()
    if args.capture and not args.run:
        print("fpgatest twin: --capture goes with --run (fpgatest --capture FILE captures a command's own frames)",
              file=sys.stderr)
        return 2
    variant = variant_of("full" if args.full else "board", args.etherbone, args.linux)
    build_dir = args.build_dir or default_build_dir(variant, args.etherbone)
    if args.build:
        build(build_dir, variant=variant, etherbone=args.etherbone)
    if args.serve:
        return serve(args.port, build_dir, args.linux, for_tool=True, variant=variant, etherbone=args.etherbone,
                     dut_ppm=args.dut_ppm)
    if args.run:
        return serve(args.port or DEFAULT_PORT, build_dir, args.linux, for_tool=False, variant=variant,
                     etherbone=args.etherbone, dut_ppm=args.dut_ppm, capture=args.capture)
    return 0


if __name__ == "__main__":
    sys.exit(main())
