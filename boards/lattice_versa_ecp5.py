#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""fpgatest on the Lattice ECP5 Versa (ECP5-5G LFE5UM5G-45F-8BG381C, or the earlier LFE5UM-45F-8): two RGMII
1 GbE ports, both directions on both.

    python -m boards.lattice_versa_ecp5 --build       # bitstream into build/lattice_versa_ecp5
    python -m boards.lattice_versa_ecp5 --load        # SRAM load with openFPGALoader (the board's FT2232H)
    python -m boards.lattice_versa_ecp5 --flash       # SPI flash with openFPGALoader

The full-duplex build: generator and receiver on both ports (bidirectional RFC 2544, single-ended echo
tests with the host's ICMP echo). The Colorlight i9's LFE5U-45F has the same cells at speed grade 6 and
does not close it; this board's part is speed grade 8 (docs/board.md has the figures). No reflector and no
interval recorder: with them the build does not route on a 45F (docs/board.md), and the host refuses what
needs them.

Pins are litex-boards' lattice_versa_ecp5 platform: 100 MHz LVDS oscillator, UARTBone at 115200 8N1 on
its `serial` (C11 RX, A11 TX), and each port's PHY (Marvell 88E1512) on an MDIO bus and a reset
pin of its own: the reset is LiteEth's power-up pulse (no PHY clocks the FPGA here), the bus LiteEth's MDIO
core per port (`ethphyN_mdio`). The pads' delays are litex-boards' (LiteEth's defaults: 2 ns on TX and on
RX). None of this has been on a board.
"""

import sys
from pathlib import Path

from migen import ClockDomain, ClockDomainsRenamer, ClockSignal, Instance, ResetSignal, Signal
from migen.genlib.resetsync import AsyncResetSynchronizer

from litex.gen import LiteXModule
from litex.soc.cores.clock import ECP5PLL
from litex.soc.cores.uart import RS232PHY
from litex_boards.platforms import lattice_versa_ecp5

from liteeth.phy.ecp5rgmii import LiteEthPHYRGMII

from boards.colorlight import (SYS_CLK_FREQ, TESTER_CLK_FREQ, UART_BAUD, UART_RX_FIFO_DEPTH, SharedPhyPins,
                               build_extra, etherbone_setting, main as board_main, port_directions)
from litex_soc.soc import FPGATestSoC
from litex_soc.tester import ROOT, add_tester, build_variant, gateware_id

BUILD_DIR = ROOT / "build" / "lattice_versa_ecp5"
PHY_ADDR = (0, 0)          # each PHY alone on its bus (not checked on a board: `fpgatest info` scans)
REFLECT_LOG2 = 0           # no reflector
# nextpnr's analytic placer: with its default (HeAP) this build did not route on two seeds of three and
# missed 125 MHz on the third (docs/board.md)
PLACER = "static"


class Platform(SharedPhyPins, lattice_versa_ecp5.Platform):
    """litex-boards' platform; sources kept relative to the gateware directory (SharedPhyPins: YoWASP's
    /tmp). Nothing is shared between the ports here."""

    def __init__(self, gateware_dir: Path, device: str = "LFE5UM5G", toolchain: str = "trellis"):
        lattice_versa_ecp5.Platform.__init__(self, device=device, toolchain=toolchain)
        self.gateware_dir = Path(gateware_dir).resolve()
        self.revision = device


class _CRG(LiteXModule):
    """100 MHz oscillator -> PLL -> 125 MHz tester clock and the 50 MHz CSR clock; each held in reset
    until the PLL locks, the tester's reset on a global (DCCA) as on the Colorlight boards."""

    def __init__(self, platform, sys_clk_freq):
        self.rst = Signal()
        self.cd_sys = ClockDomain()
        self.cd_tester = ClockDomain()
        self.cd_tester_por = ClockDomain()
        self.pll = pll = ECP5PLL()
        self.comb += pll.reset.eq(self.rst)
        pll.register_clkin(platform.request("clk100"), 100e6)
        pll.create_clkout(self.cd_tester, TESTER_CLK_FREQ, with_reset=False)
        self.comb += self.cd_tester_por.clk.eq(self.cd_tester.clk)
        self.specials += AsyncResetSynchronizer(self.cd_tester_por, ~pll.locked)
        self.specials += Instance("DCCA", i_CLKI=self.cd_tester_por.rst, i_CE=1, o_CLKO=self.cd_tester.rst)
        pll.create_clkout(self.cd_sys, sys_clk_freq)


class BaseSoC(FPGATestSoC):
    TARGET_FILE = Path(__file__)
    IDENT = "fpgatest lattice_versa_ecp5"
    PHY_ADDR = PHY_ADDR
    REVISION = "LFE5UM5G"
    BUILD_DIR = BUILD_DIR
    FULL_DUPLEX = True
    INTERVALS = False
    SEED = 1

    @classmethod
    def build_id(cls, revision: str | None = None, full_duplex: bool | None = None,
                 intervals: bool | None = None, etherbone: str | None = None) -> int:
        """FPGATEST_BUILD_ID of a build of this target from the sources as they are now (default build)."""
        directions = port_directions(cls.FULL_DUPLEX if full_duplex is None else full_duplex)
        return gateware_id(build_extra(cls.TARGET_FILE, revision or cls.REVISION)
                           + build_variant(directions, cls.INTERVALS if intervals is None else intervals,
                                           REFLECT_LOG2, etherbone=etherbone_setting(etherbone)))

    def __init__(self, revision: str | None = None, build_dir: Path | None = None, full_duplex: bool | None = None,
                 intervals: bool | None = None, etherbone: str | None = None):
        full_duplex = self.FULL_DUPLEX if full_duplex is None else full_duplex
        intervals = self.INTERVALS if intervals is None else intervals
        platform = Platform(Path(build_dir or BUILD_DIR) / "gateware", device=revision or self.REVISION)
        FPGATestSoC.__init__(self, platform, SYS_CLK_FREQ, ident=self.IDENT)
        self.crg = _CRG(platform, SYS_CLK_FREQ)
        self.add_uartbone_phy(RS232PHY(platform.request("serial"), SYS_CLK_FREQ, UART_BAUD),
                              rx_fifo_depth=UART_RX_FIFO_DEPTH)
        ports = []
        for index in range(2):
            self.add_constant(f"FPGATEST_PORT{index}_PHY_ADDR", PHY_ADDR[index])
            # TX in the tester clock; LiteEth's MDIO core on the port's own bus (ethphyN_mdio)
            phy = LiteEthPHYRGMII(
                clock_pads = platform.request("eth_clocks", index),
                pads       = platform.request("eth", index),
                tx_clk     = self.crg.cd_tester.clk,
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
                   directions=port_directions(full_duplex), intervals=intervals, reflect_log2=REFLECT_LOG2,
                   etherbone=etherbone_setting(etherbone))


if __name__ == "__main__":
    sys.exit(board_main(
        __doc__, BaseSoC, "lattice_versa_ecp5", ["LFE5UM5G", "LFE5UM"], [],
        full_duplex_help="generator and receiver on both ports (default; --no-full-duplex: the 5A-75B's split)",
        intervals_help="the interval recorder (with both directions it does not route on a 45F: docs/board.md)",
        default_cable="ft2232", placer=PLACER))
