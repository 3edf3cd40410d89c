# SPDX-License-Identifier: BSD-2-Clause
"""The fpgatest SoC: CPU-less LiteX SoC with a UARTBone host bridge and the tester; shared by board and twin."""

from litex.soc.cores import uart
from litex.soc.integration.soc_core import SoCMini


class FPGATestSoC(SoCMini):
    """CPU-less SoC; the host reaches the CSR bus through UARTBone (or Etherbone on a board)."""

    def __init__(self, platform, sys_clk_freq, ident="fpgatest", **kwargs):
        SoCMini.__init__(self, platform, clk_freq=int(sys_clk_freq), ident=ident, ident_version=False,
                         csr_data_width=32, **kwargs)

    def add_uartbone_phy(self, phy, timeout_s: float = 0.1):
        """UARTBone on an existing UART PHY (RS232 on a board, a stream model in the twin).

        The bridge drops a half-received command after timeout_s of *simulated* time with no byte;
        the twin passes a long timeout so that host-side TCP delays never cut a command in two.
        """
        bridge = uart.UARTBone(phy=phy, clk_freq=self.sys_clk_freq * timeout_s / 0.1,
                               address_width=self.bus.address_width)
        self.add_module("uartbone_phy", phy)
        self.add_module("uartbone", bridge)
        self.bus.add_master(name="uartbone", master=bridge.wishbone)
