# SPDX-License-Identifier: BSD-2-Clause
"""The fpgatest SoC: CPU-less LiteX SoC with a UARTBone host bridge and the tester; shared by board and twin."""

from litex.gen import LiteXModule
from litex.soc.cores import uart
from litex.soc.interconnect import stream
from litex.soc.integration.soc_core import SoCMini


class FPGATestSoC(SoCMini):
    """CPU-less SoC; the host reaches the CSR bus through UARTBone (or Etherbone on a board)."""

    def __init__(self, platform, sys_clk_freq, ident="fpgatest", **kwargs):
        SoCMini.__init__(self, platform, clk_freq=int(sys_clk_freq), ident=ident, ident_version=False,
                         csr_data_width=32, **kwargs)

    def add_uartbone_phy(self, phy, timeout_s: float = 0.1, rx_fifo_depth: int = 0):
        """UARTBone on an existing UART PHY (RS232 on a board, a stream model in the twin).

        The bridge drops a half-received command after timeout_s of *simulated* time with no byte;
        the twin passes a long timeout so that host-side TCP delays never cut a command in two.

        A UART receiver does not wait (LiteX's RS232PHYRX has no ready): a byte that arrives while the
        bridge sends a reply is lost unless it waits in a FIFO of rx_fifo_depth bytes. With one, the
        host may send its next commands before a reply is in, as long as the replies they wait behind
        are shorter than the FIFO (while a reply goes out at the line's rate, as many bytes come in):
        the constant UARTBONE_RX_FIFO_DEPTH tells it.
        """
        bridge = uart.UARTBone(phy=phy if not rx_fifo_depth else _FifoRx(phy, rx_fifo_depth),
                               clk_freq=self.sys_clk_freq * timeout_s / 0.1,
                               address_width=self.bus.address_width)
        self.add_module("uartbone_phy", phy)
        self.add_module("uartbone", bridge)
        self.bus.add_master(name="uartbone", master=bridge.wishbone)
        if rx_fifo_depth:
            self.add_constant("UARTBONE_RX_FIFO_DEPTH", rx_fifo_depth)


class _FifoRx(LiteXModule):
    """A UART PHY's received bytes through a FIFO (its transmit side unchanged)."""

    def __init__(self, phy, depth: int):
        self.fifo = stream.SyncFIFO([("data", 8)], depth, buffered=True)
        self.comb += phy.source.connect(self.fifo.sink)
        self.sink, self.source = phy.sink, self.fifo.source
