# SPDX-License-Identifier: BSD-2-Clause
"""fpgatest: host tool for the open FPGA Ethernet tester (board or digital twin)."""

__version__ = "0.1.0"
