#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""fpgatest on the Colorlight i9 (ECP5 LFE5U-45F, v7.2) on its extension board: two RGMII 1 GbE ports,
both directions on both.

    python -m boards.colorlight_i9 --build            # bitstream into build/colorlight_i9
    python -m boards.colorlight_i9 --load             # SRAM load with openFPGALoader (the ext board's DAPLink)
    python -m boards.colorlight_i9 --flash            # SPI flash with openFPGALoader

The build the LFE5U-25F of the 5A-75B has no room for: generator and receiver on both ports (send and
receive on the same ports: bidirectional RFC 2544, single-ended echo tests). It does not meet timing
yet: with the reflectors it does not route in reasonable time, without them seed 1 reached a tester clock
of 106.73 MHz (docs/board.md); with the interval recorder too (`--intervals`) it did not route. Pins are litex-boards' colorlight_i5 platform (board "i9", revision 7.2): the two B50612D
PHYs on the module (tester port 0 = litex-boards eth 0 at MDIO address 0, port 1 = eth 1 at address 1;
litex-boards orders them by their PHYA[0] strap, not by the connectors' names), UARTBone at 115200
8N1 on litex-boards' `serial` (J17 TX, H18 RX). The PHYs' shared reset pin (P4) is requested once and
never driven. None of this has been checked on a board.
"""

import sys
from pathlib import Path

from litex_boards.platforms import colorlight_i5

from boards.colorlight import ColorlightSoC, SharedPhyPins, main as board_main
from litex_soc.tester import ROOT

BUILD_DIR = ROOT / "build" / "colorlight_i9"
PHY_ADDR = (0, 1)


class Platform(SharedPhyPins, colorlight_i5.Platform):
    """litex-boards' platform for the i9 module, the shared MDIO and reset pins requested once."""

    def __init__(self, gateware_dir: Path, revision: str = "7.2", toolchain: str = "trellis"):
        colorlight_i5.Platform.__init__(self, board="i9", revision=revision, toolchain=toolchain)
        self.share_phy_pins(gateware_dir)


class BaseSoC(ColorlightSoC):
    TARGET_FILE = Path(__file__)
    IDENT = "fpgatest colorlight_i9"
    PHY_ADDR = PHY_ADDR
    REVISION = "7.2"
    BUILD_DIR = BUILD_DIR
    FULL_DUPLEX = True
    INTERVALS = False     # with both directions, the recorder's build did not route (docs/board.md)
    SEED = 1

    @classmethod
    def make_platform(cls, gateware_dir: Path, revision: str):
        return Platform(gateware_dir, revision=revision)


if __name__ == "__main__":
    sys.exit(board_main(
        __doc__, BaseSoC, "colorlight_i9", ["7.2"], ["-b", "colorlight-i9"],
        full_duplex_help="generator and receiver on both ports (default; --no-full-duplex: the 5A-75B's split)",
        intervals_help="the interval recorder (with both directions it did not route: docs/board.md)",
        default_cable="cmsisdap"))
