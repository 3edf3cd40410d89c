# SPDX-License-Identifier: BSD-2-Clause
"""PHY link state over IEEE 802.3 clause 22 MDIO, bit-banged through LiteEth's MDIO core (<csr>_w/r: ethmdio
for the PHYs' shared bus on the Colorlight boards, ethphyN_mdio for port N's own bus where each PHY has one)."""

from dataclasses import dataclass

# <csr>_w fields (liteeth.phy.common.LiteEthPHYMDIO): mdc, oe, w
MDC, OE, DO = 1, 2, 4

# clause 22 registers and bits
BMCR, BMSR, PHYSID1, PHYSID2, ANAR, ANLPAR, GBCR, GBSR = 0, 1, 2, 3, 4, 5, 9, 10
BMCR_ANEG_EN, BMCR_SPEED_LSB, BMCR_SPEED_MSB, BMCR_FULL = 1 << 12, 1 << 13, 1 << 6, 1 << 8
BMSR_LINK, BMSR_ANEG_DONE = 1 << 2, 1 << 5
GBCR_1000FD, GBCR_1000HD, GBSR_LP_1000FD, GBSR_LP_1000HD = 1 << 9, 1 << 8, 1 << 11, 1 << 10
# (advertised & partner) bits of ANAR/ANLPAR, best first
AN_MODES = ((1 << 8, 100, True), (1 << 7, 100, False), (1 << 6, 10, True), (1 << 5, 10, False))
PHY_ADDRESSES = range(32)   # clause 22's five address bits: where a scan looks


class MdioError(Exception):
    """No PHY answers at the address."""


@dataclass(frozen=True)
class LinkStatus:
    phy_addr: int
    phy_id: int            # PHYSID1 << 16 | PHYSID2
    up: bool
    speed_mbps: int | None  # resolved speed when up
    full_duplex: bool | None

    @property
    def usable(self) -> bool:
        """The ECP5 RGMII PHY carries 1000 Mb/s full duplex only."""
        return self.up and self.speed_mbps == 1000 and bool(self.full_duplex)

    def describe(self) -> str:
        if not self.up:
            return f"PHY {self.phy_addr} (id {self.phy_id:#010x}): link down"
        duplex = "full" if self.full_duplex else "half"
        return f"PHY {self.phy_addr} (id {self.phy_id:#010x}): link up {self.speed_mbps} Mb/s {duplex} duplex"


class Mdio:
    """Clause 22 frames as the LiteX BIOS sends them (libliteeth/mdio.c): data set with MDC low, the
    PHY samples on the rising edge; read bits are sampled with MDC low after the PHY's rising edge."""

    def __init__(self, device, csr: str = "ethmdio"):
        self.dev = device
        self.w, self.r = f"{csr}_w", f"{csr}_r"

    def _w(self, *values: int) -> None:
        self.dev.write_series(self.w, list(values))

    @staticmethod
    def _bits(value: int, bits: int) -> list[int]:
        """ethmdio_w values that send `bits` bits of value, MSB first, and leave MDC low."""
        out = []
        for i in reversed(range(bits)):
            d = DO if (value >> i) & 1 else 0
            out += [OE | d, OE | d | MDC]
        return out + [OE]

    def read(self, phy: int, reg: int) -> int:
        if not (0 <= phy < 32 and 0 <= reg < 32):
            raise ValueError(f"MDIO address out of range: PHY {phy}, register {reg}")
        turnaround = [MDC, 0, MDC, 0]
        # preamble, start 01, read 10, PHY, register, the turnaround: the PHY drives the first data
        # bit; then each bit is read and MDC pulsed for the next (one request where the bridge allows)
        head = [*self._bits(0xFFFFFFFF, 32), *self._bits((0b0110 << 10) | (phy << 5) | reg, 14), *turnaround]
        bits = self.dev.series_and_read(self.w, [head] + [[MDC, 0]] * 15, self.r)
        self._w(MDC, 0, *turnaround)
        value = 0
        for bit in bits:
            value = (value << 1) | (bit & 1)
        return value

    def scan(self) -> list[int]:
        """The addresses (PHY_ADDRESSES, 0..31) at which a PHY answers: its PHYSID1 is neither all zeros
        nor all ones (the bus is pulled up, so an address nobody answers reads 0xFFFF)."""
        return [phy for phy in PHY_ADDRESSES if self.read(phy, PHYSID1) not in (0, 0xFFFF)]

    def link(self, phy: int) -> LinkStatus:
        ident = (self.read(phy, PHYSID1) << 16) | self.read(phy, PHYSID2)
        if ident in (0, 0xFFFFFFFF):
            raise MdioError(f"no PHY answers at MDIO address {phy}")
        bmsr = self.read(phy, BMSR)
        if not bmsr & BMSR_LINK:            # the link bit latches low: a 0 may be a drop since the last
            bmsr = self.read(phy, BMSR)     # read; a 1 is a link up now (IEEE 802.3 22.2.4.2.13)
        up = bool(bmsr & BMSR_LINK)
        if not up:
            return LinkStatus(phy, ident, False, None, None)
        bmcr = self.read(phy, BMCR)
        if not bmcr & BMCR_ANEG_EN:
            speed = 1000 if bmcr & BMCR_SPEED_MSB else 100 if bmcr & BMCR_SPEED_LSB else 10
            return LinkStatus(phy, ident, True, speed, bool(bmcr & BMCR_FULL))
        if not bmsr & BMSR_ANEG_DONE:
            return LinkStatus(phy, ident, True, None, None)
        gbcr, gbsr = self.read(phy, GBCR), self.read(phy, GBSR)
        if gbcr & GBCR_1000FD and gbsr & GBSR_LP_1000FD:
            return LinkStatus(phy, ident, True, 1000, True)
        if gbcr & GBCR_1000HD and gbsr & GBSR_LP_1000HD:
            return LinkStatus(phy, ident, True, 1000, False)
        common = self.read(phy, ANAR) & self.read(phy, ANLPAR)
        for bit, speed, full in AN_MODES:
            if common & bit:
                return LinkStatus(phy, ident, True, speed, full)
        return LinkStatus(phy, ident, True, None, None)
