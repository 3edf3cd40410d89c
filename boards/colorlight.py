# SPDX-License-Identifier: BSD-2-Clause
"""What the Colorlight boards fpgatest builds for have in common: an ECP5 clocked from 25 MHz, two
Broadcom B50612D RGMII PHYs on one MDIO bus (and, on some, one reset pin), UARTBone on a serial line.

A board target (boards/colorlight_5a_75b.py, boards/colorlight_i9.py) gives its litex-boards
platform, its PHY addresses and its build options; this module makes the SoC around the tester: the
PLL (125 MHz tester clock, 50 MHz CSR clock), the UART, LiteEth's MDIO core, and one LiteEth ECP5 RGMII
PHY per port with TX clocked by the tester clock.
"""

import argparse
import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path

from migen import ClockDomain, ClockDomainsRenamer, ClockSignal, Instance, ResetSignal, Signal
from migen.genlib.resetsync import AsyncResetSynchronizer
from migen.fhdl.specials import Tristate

from litex.build.generic_platform import IOStandard, Misc, Subsignal
from litex.gen import LiteXModule
from litex.soc.cores.clock import ECP5PLL
from litex.soc.cores.uart import RS232PHY
from litex.soc.integration.builder import Builder

from liteeth.phy.common import LiteEthPHYMDIO
from liteeth.phy.ecp5rgmii import LiteEthPHYRGMII

from litex_soc.management import DEFAULT_IP, DEFAULT_MAC
from litex_soc.soc import FPGATestSoC
from litex_soc.tester import ROOT, add_tester, build_variant, gateware_id

TESTER_CLK_FREQ = 125e6  # one byte per clock at 1 GbE: the 8 ns tick
SYS_CLK_FREQ = 50e6      # CSR bus and UARTBone
UART_BAUD = 115200
UART_RX_FIFO_DEPTH = 512          # one DP16KD: commands queue while UARTBone replies


class SharedPhyPins:
    """Mixin for a litex-boards ECP5 platform whose two "eth" entries repeat the shared MDIO pins (and
    the reset pin): they come out of the per-port pads so that each is requested once, as "eth_mdio"
    and "eth_rst_n". Sources and include paths are kept relative to the gateware directory: YoWASP
    tools put a private directory over /tmp, so an absolute path under /tmp (a clone in /tmp, say) is
    invisible to them; relative paths work wherever the repository is."""

    def share_phy_pins(self, gateware_dir: Path, eth_fixes: dict[int, dict[str, Subsignal]] | None = None):
        """eth_fixes: per port, Subsignals that replace the platform's (pins litex-boards has wrong)."""
        self.gateware_dir = Path(gateware_dir).resolve()
        shared, available = {}, []
        for name, number, *items in self.constraint_manager.available:
            if name == "eth":
                for item in items:
                    if isinstance(item, Subsignal) and item.name in ("mdio", "mdc", "rst_n"):
                        shared[item.name] = item.constraints
                items = [i for i in items if not (isinstance(i, Subsignal) and i.name in ("mdio", "mdc", "rst_n"))]
                fixes = (eth_fixes or {}).get(number, {})
                items = [fixes.get(i.name, i) if isinstance(i, Subsignal) else i for i in items]
            available.append((name, number, *items))
        self.constraint_manager.available = available
        self.add_extension([("eth_mdio", 0,
                             Subsignal("mdio", *shared["mdio"]), Subsignal("mdc", *shared["mdc"]),
                             IOStandard("LVCMOS33"))])
        self.shared_phy_reset = "rst_n" in shared
        if self.shared_phy_reset:
            self.add_extension([("eth_rst_n", 0, *shared["rst_n"], IOStandard("LVCMOS33"), Misc("PULLMODE=UP"))])

    def add_source(self, filename, language=None, library=None, copy=False):
        before = len(self.sources)
        super().add_source(filename, language, library, copy)
        if len(self.sources) > before:
            path, *rest = self.sources[-1]
            self.sources[-1] = (os.path.relpath(path, self.gateware_dir), *rest)

    def add_verilog_include_path(self, path):
        super().add_verilog_include_path(path)
        self.verilog_include_paths[-1] = os.path.relpath(self.verilog_include_paths[-1], self.gateware_dir)


class _CRG(LiteXModule):
    """25 MHz crystal -> PLL -> 125 MHz tester clock (time base, TX clock) and a slower SoC clock.

    Each domain is held in reset until the PLL locks. The tester domain's reset reaches about 350
    flip-flops across the die; on general routing that one net made nextpnr's router several times
    slower (docs/board.md), so it leaves its synchroniser through a DCCA onto a global network, as
    the clocks do. The path stays timed: nextpnr takes the DCCA as a combinational arc."""

    def __init__(self, platform, sys_clk_freq):
        self.rst = Signal()
        self.cd_sys = ClockDomain()
        self.cd_tester = ClockDomain()
        self.cd_tester_por = ClockDomain()      # the tester clock; its reset is the synchroniser's output
        self.pll = pll = ECP5PLL()
        self.comb += pll.reset.eq(self.rst)
        pll.register_clkin(platform.request("clk25"), 25e6)
        pll.create_clkout(self.cd_tester, TESTER_CLK_FREQ, with_reset=False)
        self.comb += self.cd_tester_por.clk.eq(self.cd_tester.clk)
        self.specials += AsyncResetSynchronizer(self.cd_tester_por, ~pll.locked)
        self.specials += Instance("DCCA", i_CLKI=self.cd_tester_por.rst, i_CE=1, o_CLKO=self.cd_tester.rst)
        pll.create_clkout(self.cd_sys, sys_clk_freq)


def port_directions(full_duplex: bool) -> list[tuple[bool, bool]]:
    """(with_tx, with_rx) per port: both directions on both ports, or port 0 generating and port 1
    receiving (the thesis' setup) where the device holds one direction only."""
    return [(True, True)] * 2 if full_duplex else [(True, False), (False, True)]


def build_extra(target_file: Path, revision: str) -> str:
    """The board's part of the gateware identity: the target file and this one shape the board's
    register map too (MDIO, PHY CSRs)."""
    h = hashlib.sha256()
    for path in (Path(target_file), Path(__file__)):
        h.update(path.read_bytes())
    return f"{Path(target_file).stem}-{revision}-" + h.hexdigest()


def etherbone_setting(ip: str | None) -> dict | None:
    """Etherbone on port 1 at ip (None: no Etherbone). Port 1: on a one-direction build it only
    receives, so its transmitter is free and a reply never delays a test frame."""
    return {"port": 1, "ip": ip, "mac": DEFAULT_MAC} if ip else None


def board_id(target_file: Path, revision: str, full_duplex: bool, intervals: bool, etherbone: str | None = None) -> int:
    """FPGATEST_BUILD_ID of a board build from the sources as they are now."""
    return gateware_id(build_extra(target_file, revision)
                       + build_variant(port_directions(full_duplex), intervals, etherbone=etherbone_setting(etherbone)))


class ColorlightSoC(FPGATestSoC):
    """The tester on a Colorlight board. A target names what is its own in class attributes: its file
    (part of the build's identity), platform, SoC identifier, PHY addresses, default revision and
    default build (one direction or both, with or without the interval recorder)."""

    TARGET_FILE: Path
    IDENT: str
    PHY_ADDR: tuple[int, int]      # MDIO addresses of the PHYs of tester ports 0 and 1
    REVISION: str                  # the default board revision
    BUILD_DIR: Path                # the default build directory
    FULL_DUPLEX: bool
    INTERVALS: bool
    SEED: int                      # nextpnr's placement seed of the default build

    @classmethod
    def make_platform(cls, gateware_dir: Path, revision: str):
        """The target's platform (with SharedPhyPins)."""
        raise NotImplementedError

    @classmethod
    def build_id(cls, revision: str | None = None, full_duplex: bool | None = None,
                 intervals: bool | None = None, etherbone: str | None = None) -> int:
        """FPGATEST_BUILD_ID of a build of this target from the sources as they are now (default build)."""
        return board_id(cls.TARGET_FILE, revision or cls.REVISION,
                        cls.FULL_DUPLEX if full_duplex is None else full_duplex,
                        cls.INTERVALS if intervals is None else intervals, etherbone)

    def __init__(self, revision: str | None = None, with_tester=True, build_dir: Path | None = None,
                 full_duplex: bool | None = None, intervals: bool | None = None, sys_clk_freq=SYS_CLK_FREQ,
                 etherbone: str | None = None):
        """etherbone: an IPv4 address: LiteEth UDP/IP + Etherbone on port 1 (litex_soc/management.py)."""
        full_duplex = self.FULL_DUPLEX if full_duplex is None else full_duplex
        intervals = self.INTERVALS if intervals is None else intervals
        platform = self.make_platform(Path(build_dir or self.BUILD_DIR) / "gateware", revision or self.REVISION)
        FPGATestSoC.__init__(self, platform, sys_clk_freq, ident=self.IDENT)
        self.crg = _CRG(platform, sys_clk_freq)
        self.add_uartbone_phy(RS232PHY(platform.request("serial"), sys_clk_freq, UART_BAUD),
                              rx_fifo_depth=UART_RX_FIFO_DEPTH)
        # the PHYs' shared management bus: link, speed and duplex (host-driven, LiteEth's MDIO core)
        self.ethmdio = LiteEthPHYMDIO(platform.request("eth_mdio"))
        for index, addr in enumerate(self.PHY_ADDR):
            self.add_constant(f"FPGATEST_PORT{index}_PHY_ADDR", addr)
        if platform.shared_phy_reset:
            # the shared PHY reset may also reset the PHY whose clock feeds the FPGA: never driven
            self.specials += Tristate(platform.request("eth_rst_n"), 0, 0)
        if not with_tester:
            return
        ports = []
        for index in range(2):
            # TX in the tester clock: frames leave on the tester's own 125 MHz, stamps stay exact
            phy = LiteEthPHYRGMII(
                clock_pads         = platform.request("eth_clocks", index),
                pads               = platform.request("eth", index),
                tx_delay           = 0e-9,
                with_hw_init_reset = False,
                tx_clk             = self.crg.cd_tester.clk,
            )
            phy = ClockDomainsRenamer({"eth_tx": f"eth{index}_tx", "eth_rx": f"eth{index}_rx"})(phy)
            self.add_module(f"ethphy{index}", phy)
            gmii = {
                "tx": {"data": Signal(8), "en": Signal(), "er": Signal()},
                "rx": {"data": phy.source.data, "dv": phy.source.valid, "er": Signal()},
                "rx_clk": ClockSignal(f"eth{index}_rx"),
                "rx_rst": ResetSignal(f"eth{index}_rx"),
            }
            self.comb += [
                phy.sink.valid.eq(gmii["tx"]["en"]),
                phy.sink.data.eq(gmii["tx"]["data"]),
                phy.sink.last_be.eq(0),
                phy.source.ready.eq(1),
            ]
            ports.append(gmii)
        add_tester(self, ports, target="ecp5", build_extra=build_extra(self.TARGET_FILE, platform.revision),
                   directions=port_directions(full_duplex), intervals=intervals,
                   etherbone=etherbone_setting(etherbone))


def timing_report(log: Path) -> dict | None:
    """Fmax per clock and utilisation from a build log (the routed design: nextpnr's last report)."""
    if not log.exists():
        return None
    text = log.read_text(errors="replace")
    fmax = {}
    for m in re.finditer(r"Max frequency for clock\s+'([^']+)': ([0-9.]+) MHz \((PASS|FAIL) at ([0-9.]+) MHz\)", text):
        fmax[m.group(1)] = {"fmax_mhz": float(m.group(2)), "target_mhz": float(m.group(4)), "result": m.group(3)}
    util = {m.group(1): {"used": int(m.group(2)), "available": int(m.group(3))}
            for m in re.finditer(r"Info:\s+(\w+):\s+(\d+)/\s*(\d+)\s+\d+%", text)}
    return {"log": str(log.relative_to(ROOT)) if log.is_relative_to(ROOT) else str(log), "clocks": fmax,
            "utilisation": util, "timing_met": bool(fmax) and all(v["result"] == "PASS" for v in fmax.values())}


def main(doc: str, soc_class, build_name: str, revisions: list[str], loader: list[str],
         full_duplex_help: str, intervals_help: str, default_cable: str, placer: str | None = None) -> int:
    """A board target's command line: build, load into SRAM or write to flash. placer: nextpnr's
    placer where the target's timing was measured with another than nextpnr's default (HeAP)."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", action="store_true", help="build the bitstream")
    parser.add_argument("--load", action="store_true", help="load the bitstream into SRAM (openFPGALoader)")
    parser.add_argument("--flash", action="store_true", help="write the bitstream to SPI flash (openFPGALoader)")
    parser.add_argument("--revision", default=revisions[0], choices=revisions,
                        help=f"board revision (default {revisions[0]})")
    parser.add_argument("--cable", default=default_cable, help=f"openFPGALoader cable (default {default_cable})")
    parser.add_argument("--build-dir", type=Path, default=soc_class.BUILD_DIR)
    parser.add_argument("--seed", type=int, default=soc_class.SEED,
                        help=f"nextpnr placement seed (default {soc_class.SEED}, the target's own)")
    parser.add_argument("--full-duplex", action=argparse.BooleanOptionalAction, default=soc_class.FULL_DUPLEX,
                        help=full_duplex_help)
    parser.add_argument("--intervals", action=argparse.BooleanOptionalAction, default=soc_class.INTERVALS,
                        help=intervals_help)
    parser.add_argument("--etherbone", nargs="?", const=DEFAULT_IP, default=None, metavar="IP",
                        help=f"Etherbone on port 1 at IP (default {DEFAULT_IP}): the host reaches the board at "
                             "udp://IP through the device under test, beside UARTBone (docs/board.md)")
    args = parser.parse_args()

    bitstream = args.build_dir / "gateware" / f"{build_name}.bit"
    if args.build:
        soc = soc_class(revision=args.revision, build_dir=args.build_dir, full_duplex=args.full_duplex,
                        intervals=args.intervals, etherbone=args.etherbone)
        builder = Builder(soc, output_dir=str(args.build_dir), compile_software=False,
                          csr_json=str(args.build_dir / "csr.json"), csr_csv=str(args.build_dir / "csr.csv"))
        if placer:
            # LiteX has no option for it: added to the toolchain's nextpnr options
            soc.platform.toolchain._pnr_opts += f"--placer {placer} "
        builder.build(build_name=build_name, seed=args.seed, timingstrict=True)
    if args.load or args.flash:
        if not bitstream.exists():
            print(f"error: {bitstream} not found: build it first", file=sys.stderr)
            return 1
        cmd = ["openFPGALoader", *loader, "-c", args.cable] + (["-f"] if args.flash else []) + [str(bitstream)]
        return subprocess.call(cmd)
    return 0
