# SPDX-License-Identifier: BSD-2-Clause
"""The board PHYs' side of the FPGA's pins: clause 22 MDIO registers, and the RGMII TX receiver."""

from collections import deque

import cocotb
from cocotb.triggers import FallingEdge, RisingEdge, Timer
from cocotb.utils import get_sim_time
from cocotbext.eth import GmiiFrame

# register values of a PHY whose link came up by autonegotiation (IEEE 802.3 clause 22 / 40)
BMCR_ANEG = 0x1140                      # autonegotiation on, full duplex, 1000 Mb/s select bits
BMSR_UP = 0x796D                        # link up, autonegotiation complete
PHYSID = (0x0362, 0x5E6A)               # an id as a Broadcom gigabit PHY reports it


def phy_registers(speed: int, full_duplex: bool = True) -> dict[int, int]:
    """A PHY linked at `speed` Mb/s after autonegotiation with a partner that offers only that mode."""
    regs = {0: BMCR_ANEG, 1: BMSR_UP, 2: PHYSID[0], 3: PHYSID[1], 4: 0x01E1, 9: 0x0300}   # 1000 FD+HD offered
    if speed == 1000:
        regs[5], regs[10] = 0x0000, 0x0800 if full_duplex else 0x0400
    else:
        regs[5], regs[10] = {(100, True): 0x4100, (100, False): 0x4080,
                             (10, True): 0x4040, (10, False): 0x4020}[(speed, full_duplex)], 0x0000
    return regs


class MdioPhys:
    """PHYs at several addresses on one bus. They sample the bus at MDC's rising edge; in a read they
    drive the turnaround's second bit (0) and then the 16 data bits, each from a rising edge on, and
    release the bus after the last. The bus is pulled up. The FPGA's pad (TRELLIS_IO) shows what the
    FPGA drives (I while T is low); the top-level pad input is what the FPGA reads back."""

    def __init__(self, mdc, pad_in, fpga_out, fpga_tristate, phys: dict[int, dict[int, int]]):
        self.mdc, self.pad_in, self.fpga_out, self.fpga_tristate = mdc, pad_in, fpga_out, fpga_tristate
        self.phys = phys
        self.reads = []                 # (phy, register) of every read frame seen
        self.pad_in.value = 1
        cocotb.start_soon(self._run())

    def _bus(self) -> int:
        if not int(self.fpga_tristate.value):
            return int(self.fpga_out.value)
        return int(self.pad_in.value)

    async def _run(self):
        ones = 0
        while True:
            await RisingEdge(self.mdc)
            bit = self._bus()
            if bit:
                ones += 1
                continue
            if ones < 32:
                ones = 0
                continue
            ones = 0
            # a 0 after the preamble: start bits 01, then op (2), PHY address (5), register (5)
            head = 0
            for _ in range(13):
                await RisingEdge(self.mdc)
                head = (head << 1) | self._bus()
            start1, op, phy, reg = head >> 12, (head >> 10) & 3, (head >> 5) & 31, head & 31
            if start1 != 1 or phy not in self.phys:
                continue
            if op == 0b10:                                  # read
                self.reads.append((phy, reg))
                value = self.phys[phy].get(reg, 0)
                await RisingEdge(self.mdc)                  # turnaround, first bit: nobody drives
                self.pad_in.value = 0                       # second bit: 0 from the PHY
                await RisingEdge(self.mdc)
                for i in reversed(range(16)):
                    self.pad_in.value = (value >> i) & 1
                    await RisingEdge(self.mdc)
                self.pad_in.value = 1
            elif op == 0b01:                                # write: turnaround 10, 16 data bits
                value = 0
                for _ in range(18):
                    await RisingEdge(self.mdc)
                    value = ((value << 1) | self._bus()) & 0xFFFF
                self.phys[phy][reg] = value


class RgmiiIdTx:
    """What the PHY makes of the FPGA's RGMII TX pins. The board sends TXC in phase with the data
    (tx_delay 0) and the PHY delays TXC by 2 ns inside (RGMII-ID): it takes TXD/TX_CTL 2 ns after each
    TXC edge, low nibble after the rising edge, high nibble after the falling one. Frames as
    GmiiFrame (preamble and SFD included); sim_time_start is the TXC edge that launched the first byte,
    sim_time_sfd the edge that launched the byte after the SFD."""

    def __init__(self, txd, tx_ctl, txc, delay_ps: int = 2000):
        self.txd, self.tx_ctl, self.txc, self.delay_ps = txd, tx_ctl, txc, delay_ps
        self.frames = deque()
        cocotb.start_soon(self._run())

    async def _run(self):
        frame = None
        while True:
            if frame is None:
                await RisingEdge(self.tx_ctl)       # TX_EN rises with a TXC rising edge
            else:
                await RisingEdge(self.txc)
            edge = get_sim_time("ps")
            await Timer(self.delay_ps, "ps")
            data, en = int(self.txd.value), int(self.tx_ctl.value)
            await FallingEdge(self.txc)
            await Timer(self.delay_ps, "ps")
            data |= int(self.txd.value) << 4
            err = en ^ int(self.tx_ctl.value)
            if en:
                if frame is None:
                    frame = GmiiFrame(bytearray(), [])
                    frame.sim_time_start = edge
                elif frame.sim_time_sfd is None and frame.data[-1] == 0xD5:
                    frame.sim_time_sfd = edge
                frame.data.append(data)
                frame.error.append(err)
            elif frame is not None:
                frame.sim_time_end = edge
                self.frames.append(frame)
                frame = None
