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

import sys
from pathlib import Path

from litex.build.generic_platform import Pins, Subsignal
from litex_boards.platforms import colorlight_5a_75b

from boards.colorlight import ColorlightSoC, SharedPhyPins, main as board_main
from litex_soc.tester import ROOT

BUILD_DIR = ROOT / "build" / "colorlight_5a_75b"
# MDIO addresses of the PHYs behind J3 (port 0) and J4 (port 1); not yet checked on a board:
# `fpgatest info` names the PHY and its id it reads for each port
PHY_ADDR = (0, 1)


# revision 6.1, port 1: the PHY pins as litex-boards' colorlight_i5 wires the same PHY
_V61_ETH1 = {
    "rx_ctl":  Subsignal("rx_ctl",  Pins("M20")),
    "rx_data": Subsignal("rx_data", Pins("P20 N19 N20 M19")),
}


class Platform(SharedPhyPins, colorlight_5a_75b.Platform):
    """litex-boards' platform, the shared MDIO and reset pins requested once. Revision 6.1 of
    litex-boards 2023.12 also gives port 1's rx_ctl the RX clock's pin (L19) and N19 twice, and both
    ports the reset pin P4, which also resets the PHY whose 25 MHz clocks the FPGA; port 1's PHY is
    wired as on the Colorlight i5."""

    def __init__(self, gateware_dir: Path, **kwargs):
        colorlight_5a_75b.Platform.__init__(self, **kwargs)
        self.share_phy_pins(gateware_dir, {1: _V61_ETH1} if self.revision == "6.1" else None)


class BaseSoC(ColorlightSoC):
    TARGET_FILE = Path(__file__)
    IDENT = "fpgatest colorlight_5a_75b"
    PHY_ADDR = PHY_ADDR
    REVISION = "8.0"
    BUILD_DIR = BUILD_DIR
    FULL_DUPLEX = False   # the LFE5U-25F holds one direction (docs/board.md)
    INTERVALS = True      # the interval recorder: hardware-timed samples (docs/board.md)
    # of make bench's three seeds, the one nextpnr routes fastest (half seed 1's time), every clock
    # with more than 10 % to spare (docs/board.md): the bitstream test builds it
    SEED = 2

    @classmethod
    def make_platform(cls, gateware_dir: Path, revision: str):
        return Platform(gateware_dir, revision=revision, toolchain="trellis")


if __name__ == "__main__":
    sys.exit(board_main(
        __doc__, BaseSoC, "colorlight_5a_75b", ["8.0", "7.0", "6.1"], ["-b", "colorlight"],
        full_duplex_help="generator and receiver on both ports (does not fit the LFE5U-25F)",
        intervals_help="the interval recorder (hardware-timed samples; --no-intervals leaves it out and the host "
                       "times the intervals, see docs/board.md)",
        default_cable="ft232RL"))
