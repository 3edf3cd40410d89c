#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The digital twin: the fpgatest SoC in Verilator, its two ports joined through a simulated switch.

    python -m boards.twin --build            # generate + compile into build/twin
    python -m boards.twin --run --port 4327  # serve UARTBone on socket://127.0.0.1:4327
"""

import argparse
import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

from migen import ClockDomain, Signal

from litex.build.generic_platform import Pins, Subsignal
from litex.build.sim import SimPlatform
from litex.build.sim.config import SimConfig
from litex.gen import LiteXModule
from litex.soc.cores.uart import RS232PHYModel
from litex.soc.integration.builder import Builder

from litex_soc.dut_model import MODEL_SOURCES, add_switch_model, gmii_signals
from litex_soc.soc import FPGATestSoC
from litex_soc.tester import ROOT, add_tester

# the tester clock as on the board; sys (the CSR bus, UARTBone and the per-frame engines) at another
# frequency, so the twin's tests run every sys/tester crossing (record FIFO, control strobes) with
# two clocks; 62.5 MHz keeps the simulation's time step at 4 ns (the board's sys is 50 MHz)
TESTER_CLK_FREQ = 125e6
SYS_CLK_FREQ = 62.5e6
BUILD_DIR = ROOT / "build" / "twin"
DEFAULT_PORT = 4327
# the UARTBone bridge to TCP: LiteX's serial2tcp made safe for a shared machine (loopback only, one
# client at a time, a client may come and go): sim/twin/modules/fpgatest_serial2tcp
MODULES = ROOT / "sim" / "twin" / "modules"
SERIAL_MODULE = "fpgatest_serial2tcp"

_io = [
    ("sys_clk", 0, Pins(1)),
    ("tester_clk", 0, Pins(1)),
    ("sys_rst", 0, Pins(1)),
    ("serial", 0,
        Subsignal("source_valid", Pins(1)),
        Subsignal("source_ready", Pins(1)),
        Subsignal("source_data",  Pins(8)),
        Subsignal("sink_valid",   Pins(1)),
        Subsignal("sink_ready",   Pins(1)),
        Subsignal("sink_data",    Pins(8)),
    ),
]


class Platform(SimPlatform):
    def __init__(self):
        SimPlatform.__init__(self, "SIM", _io)


class _CRG(LiteXModule):
    """Two simulated clocks: "sys" (SoC and engines) and "tester" (125 MHz), one reset."""

    def __init__(self, platform):
        self.cd_sys = ClockDomain()
        self.cd_tester = ClockDomain()
        rst = platform.request("sys_rst")
        self.comb += [
            self.cd_sys.clk.eq(platform.request("sys_clk")), self.cd_sys.rst.eq(rst),
            self.cd_tester.clk.eq(platform.request("tester_clk")), self.cd_tester.rst.eq(rst),
        ]


class TwinSoC(FPGATestSoC):
    def __init__(self):
        platform = Platform()
        FPGATestSoC.__init__(self, platform, SYS_CLK_FREQ, ident="fpgatest twin")
        self.crg = _CRG(platform)
        # 10 s of simulated time before a half-received UARTBone command is dropped
        self.add_uartbone_phy(RS232PHYModel(platform.request("serial")), timeout_s=10.0)
        ports = [gmii_signals(), gmii_signals()]
        for port in ports:
            port["rx_clk"] = Signal()
            port["rx_rst"] = Signal()
            self.comb += [port["rx_clk"].eq(self.crg.cd_tester.clk), port["rx_rst"].eq(self.crg.cd_tester.rst)]
        add_tester(self, ports, target="generic", build_extra="twin", model_sources=MODEL_SOURCES)
        add_switch_model(self, ports[0], ports[1])


def sim_config(port: int) -> SimConfig:
    config = SimConfig()
    config.add_clocker("sys_clk", freq_hz=int(SYS_CLK_FREQ))
    config.add_clocker("tester_clk", freq_hz=int(TESTER_CLK_FREQ))
    config.add_module(SERIAL_MODULE, "serial", args={"port": port})
    return config


def build(build_dir: Path = BUILD_DIR, threads: int = 1) -> None:
    """Generate the SoC, csr.json/csr.csv and the Verilator model (compiled into build_dir/gateware)."""
    soc = TwinSoC()
    builder = Builder(soc, output_dir=str(build_dir), compile_software=False, compile_gateware=False,
                      csr_json=str(build_dir / "csr.json"), csr_csv=str(build_dir / "csr.csv"))
    # our serial bridge module, built beside LiteX's (LiteX writes a variables.mak next to it: a copy
    # in the build directory keeps the source tree clean)
    mods = build_dir / "extra_mods"
    shutil.rmtree(mods, ignore_errors=True)
    shutil.copytree(MODULES / SERIAL_MODULE, mods / SERIAL_MODULE)
    builder.build(sim_config=sim_config(DEFAULT_PORT), run=False, threads=threads, opt_level="O3",
                  interactive=False, extra_mods=[SERIAL_MODULE], extra_mods_path=str(mods))
    gateware = build_dir / "gateware"
    # LiteX compiles only when it also runs; compile here so --run starts at once
    result = subprocess.run(["bash", "build_sim.sh"], cwd=gateware, capture_output=True, text=True)
    sys.stdout.write(result.stdout)
    sys.stderr.write(result.stderr)
    if result.returncode != 0:
        raise RuntimeError("twin: Verilator build failed")
    constants = json.loads((build_dir / "csr.json").read_text())["constants"]
    (build_dir / "twin.built").write_text(json.dumps({"build_id": constants["fpgatest_build_id"]}))


def command(port: int, build_dir: Path = BUILD_DIR) -> tuple[list[str], Path]:
    """The command that runs the twin serving UARTBone on 127.0.0.1:port, and its working directory."""
    gateware = build_dir / "gateware"
    run_dir = build_dir / f"run-{port}"
    run_dir.mkdir(parents=True, exist_ok=True)
    # the model reads sim_config.js from its working directory: one directory per TCP port
    (run_dir / "sim_config.js").write_text(sim_config(port).get_json())
    for module in (gateware / "modules").glob("*.so"):
        target = run_dir / "modules" / module.name
        target.parent.mkdir(exist_ok=True)
        shutil.copy2(module, target)
    return [str(gateware / "obj_dir" / "Vsim")], run_dir


SOURCES = [*sorted((ROOT / "rtl").rglob("*.v")), *sorted((ROOT / "sim" / "models").glob("*.v")),
           *sorted((ROOT / "litex_soc").glob("*.py")), *sorted(MODULES.rglob("*")), Path(__file__)]


def up_to_date(build_dir: Path = BUILD_DIR) -> bool:
    marker = build_dir / "twin.built"
    return marker.exists() and all(p.stat().st_mtime <= marker.stat().st_mtime for p in SOURCES)


def ensure_built(build_dir: Path = BUILD_DIR) -> None:
    """Build when a source changed: one line on stderr, LiteX's and Verilator's output in
    build_dir/build.log (named in the error when the build fails)."""
    if up_to_date(build_dir):
        return
    build_dir.mkdir(parents=True, exist_ok=True)
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
                    build(build_dir)
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
def running(port: int | None = None, build_dir: Path = BUILD_DIR, log=None):
    """Build if needed, start the twin on a TCP port, yield (url, csr.json path), stop it."""
    ensure_built(build_dir)
    port = port or free_port()
    cmd, cwd = command(port, build_dir)
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
        # LiteX's simulator opens sim.vcd whether or not tracing was asked for (only a header is
        # written): nothing is left in the run directory
        (cwd / "sim.vcd").unlink(missing_ok=True)
        yield f"socket://127.0.0.1:{port}", build_dir / "csr.json"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", action="store_true", help="generate and compile the twin")
    parser.add_argument("--run", action="store_true", help="run the twin in the foreground")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"TCP port for UARTBone (default {DEFAULT_PORT})")
    parser.add_argument("--build-dir", type=Path, default=BUILD_DIR, help="build directory (default build/twin)")
    args = parser.parse_args()
    if args.build:
        build(args.build_dir)
    elif args.run:
        ensure_built(args.build_dir)
    if args.run:
        cmd, cwd = command(args.port, args.build_dir)
        print(f"fpgatest twin: UARTBone on socket://127.0.0.1:{args.port}  (csr: {args.build_dir / 'csr.json'})",
              flush=True)
        os.chdir(cwd)
        os.execv(cmd[0], cmd)
    return 0


if __name__ == "__main__":
    sys.exit(main())
