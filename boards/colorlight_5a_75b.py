#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""fpgatest on the Colorlight 5A-75B (ECP5 LFE5U-25F, two RGMII 1 GbE ports).

    python -m boards.colorlight_5a_75b --build            # bitstream into build/colorlight_5a_75b
    python -m boards.colorlight_5a_75b --load             # SRAM load with openFPGALoader
    python -m boards.colorlight_5a_75b --flash            # SPI flash with openFPGALoader

Ports: J3 = tester port 0 (eth 0), J4 = tester port 1 (eth 1) on the board's two RJ45 jacks.
UART (UARTBone, 115200 8N1, 3.3 V): J19 header, TX = DATA_LED- pad, RX = KEY+ pad, plus GND.
The stock litex-boards target also uses KEY+ (R7 on v8.0) as a reset button; here the button is
never requested, so the pin is only the UART RX.
"""

import argparse
import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path

from migen import ClockDomain, ClockDomainsRenamer, ClockSignal, ResetSignal, Signal
from migen.fhdl.specials import Tristate

from litex.build.generic_platform import IOStandard, Misc, Pins, Subsignal
from litex.gen import LiteXModule
from litex.soc.cores.clock import ECP5PLL
from litex.soc.cores.uart import RS232PHY
from litex.soc.integration.builder import Builder
from litex_boards.platforms import colorlight_5a_75b

from liteeth.phy.common import LiteEthPHYMDIO
from liteeth.phy.ecp5rgmii import LiteEthPHYRGMII

from litex_soc.soc import FPGATestSoC
from litex_soc.tester import ROOT, add_tester, build_variant, gateware_id

TESTER_CLK_FREQ = 125e6  # one byte per clock at 1 GbE: the 8 ns tick
SYS_CLK_FREQ = 50e6      # CSR bus and UARTBone
BUILD_DIR = ROOT / "build" / "colorlight_5a_75b"
# MDIO addresses of the PHYs behind J3 (port 0) and J4 (port 1); not yet checked on a board:
# `fpgatest info` names the PHY and its id it reads for each port
PHY_ADDR = (0, 1)


# revision 6.1, port 1: the PHY pins as litex-boards' colorlight_i5 wires the same PHY
_V61_ETH1 = {
    "rx_ctl":  Subsignal("rx_ctl",  Pins("M20")),
    "rx_data": Subsignal("rx_data", Pins("P20 N19 N20 M19")),
}


class Platform(colorlight_5a_75b.Platform):
    """litex-boards platform whose sources are kept relative to the gateware directory.

    YoWASP tools put a private directory over /tmp, so an absolute path under /tmp (a clone in
    /tmp, say) is invisible to them; relative paths work wherever the repository is.
    """

    def __init__(self, gateware_dir: Path, **kwargs):
        colorlight_5a_75b.Platform.__init__(self, **kwargs)
        self.gateware_dir = Path(gateware_dir).resolve()
        # Both PHYs share one MDIO bus (the same two pins in both "eth" entries) and, on 6.1, one
        # reset pin: take them out of the per-port pads so that each is requested once, as
        # "eth_mdio" and "eth_rst_n". Revision 6.1 of litex-boards 2023.12 also gives port 1's
        # rx_ctl the RX clock's pin (L19) and N19 twice; its PHY is wired as on the Colorlight i5.
        shared = {}
        available = []
        for name, number, *items in self.constraint_manager.available:
            if name == "eth":
                for item in items:
                    if isinstance(item, Subsignal) and item.name in ("mdio", "mdc", "rst_n"):
                        shared[item.name] = item.constraints
                items = [i for i in items if not (isinstance(i, Subsignal) and i.name in ("mdio", "mdc", "rst_n"))]
                if self.revision == "6.1" and number == 1:
                    items = [_V61_ETH1.get(i.name, i) if isinstance(i, Subsignal) else i for i in items]
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
        colorlight_5a_75b.Platform.add_source(self, filename, language, library, copy)
        if len(self.sources) > before:
            path, *rest = self.sources[-1]
            self.sources[-1] = (os.path.relpath(path, self.gateware_dir), *rest)


class _CRG(LiteXModule):
    """25 MHz crystal -> PLL -> 125 MHz tester clock (time base, TX clock) and a slower SoC clock."""

    def __init__(self, platform, sys_clk_freq):
        self.rst = Signal()
        self.cd_sys = ClockDomain()
        self.cd_tester = ClockDomain()
        self.pll = pll = ECP5PLL()
        self.comb += pll.reset.eq(self.rst)
        pll.register_clkin(platform.request("clk25"), 25e6)
        # create_clkout also holds each domain in reset until the PLL locks
        pll.create_clkout(self.cd_tester, TESTER_CLK_FREQ)
        pll.create_clkout(self.cd_sys, sys_clk_freq)


class BaseSoC(FPGATestSoC):
    def __init__(self, revision="8.0", sys_clk_freq=SYS_CLK_FREQ, with_tester=True, build_dir=BUILD_DIR,
                 full_duplex=False, intervals=False):
        platform = Platform(Path(build_dir) / "gateware", revision=revision, toolchain="trellis")
        FPGATestSoC.__init__(self, platform, sys_clk_freq, ident="fpgatest colorlight_5a_75b")
        self.crg = _CRG(platform, sys_clk_freq)
        self.add_uartbone_phy(RS232PHY(platform.request("serial"), sys_clk_freq, 115200))
        # the PHYs' shared management bus: link, speed and duplex (host-driven, LiteEth's MDIO core)
        self.ethmdio = LiteEthPHYMDIO(platform.request("eth_mdio"))
        for index, addr in enumerate(PHY_ADDR):
            self.add_constant(f"FPGATEST_PORT{index}_PHY_ADDR", addr)
        if platform.shared_phy_reset:
            # 6.1: the shared PHY reset also resets the PHY whose 25 MHz clocks the FPGA: never driven
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
        add_tester(self, ports, target="ecp5", build_extra=build_extra(revision),
                   directions=port_directions(full_duplex), intervals=intervals)


def port_directions(full_duplex: bool) -> list[tuple[bool, bool]]:
    """(with_tx, with_rx) per port. The LFE5U-25F holds one direction: port 0 generates, port 1
    receives (the thesis' setup); --full-duplex builds both on both ports for a larger device."""
    return [(True, True)] * 2 if full_duplex else [(True, False), (False, True)]


def build_extra(revision: str) -> str:
    # this file shapes the board's register map too (MDIO, PHY CSRs): it is part of the identity
    return f"colorlight_5a_75b-{revision}-" + hashlib.sha256(Path(__file__).read_bytes()).hexdigest()


def board_build_id(revision: str = "8.0", full_duplex: bool = False, intervals: bool = False) -> int:
    """FPGATEST_BUILD_ID of the board build from the sources as they are now."""
    return gateware_id(build_extra(revision) + build_variant(port_directions(full_duplex), intervals))


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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", action="store_true", help="build the bitstream")
    parser.add_argument("--load", action="store_true", help="load the bitstream into SRAM (openFPGALoader)")
    parser.add_argument("--flash", action="store_true", help="write the bitstream to SPI flash (openFPGALoader)")
    parser.add_argument("--revision", default="8.0", choices=["6.1", "7.0", "8.0"], help="board revision (default 8.0)")
    parser.add_argument("--cable", default="ft232RL", help="openFPGALoader cable (default ft232RL)")
    parser.add_argument("--build-dir", type=Path, default=BUILD_DIR)
    parser.add_argument("--seed", type=int, default=1, help="nextpnr placement seed")
    parser.add_argument("--full-duplex", action="store_true",
                        help="generator and receiver on both ports (does not fit the LFE5U-25F)")
    parser.add_argument("--intervals", action="store_true",
                        help="the interval recorder (hardware-timed samples; on the LFE5U-25F it failed "
                             "timing: tester clock 124.4 / 121.3 MHz on seeds 1 / 2, see docs/board.md)")
    args = parser.parse_args()

    bitstream = args.build_dir / "gateware" / "colorlight_5a_75b.bit"
    if args.build:
        soc = BaseSoC(revision=args.revision, build_dir=args.build_dir, full_duplex=args.full_duplex,
                      intervals=args.intervals)
        builder = Builder(soc, output_dir=str(args.build_dir), compile_software=False,
                          csr_json=str(args.build_dir / "csr.json"), csr_csv=str(args.build_dir / "csr.csv"))
        builder.build(build_name="colorlight_5a_75b", seed=args.seed, timingstrict=True)
    if args.load or args.flash:
        if not bitstream.exists():
            print(f"error: {bitstream} not found: build it first (make bitstream)", file=sys.stderr)
            return 1
        cmd = ["openFPGALoader", "-b", "colorlight", "-c", args.cable]
        cmd += (["-f"] if args.flash else []) + [str(bitstream)]
        return subprocess.call(cmd)
    return 0


if __name__ == "__main__":
    sys.exit(main())
