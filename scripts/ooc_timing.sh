#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Out-of-context place and route of one tester port on the 5A-75B's ECP5 at 125 MHz: a quick
# timing check of the cores without the SoC (make bitstream is the real thing).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p build/ooc
yosys -q -p "read_verilog $(ls rtl/*.v | tr '\n' ' '); synth_ecp5 -top fpgatest_port -json build/ooc/port.json"
nextpnr-ecp5 --25k --package CABGA256 --speed 6 --out-of-context --freq 125 --json build/ooc/port.json \
    --report build/ooc/report.json --seed 1 2>&1 | tee build/ooc/nextpnr.log | grep -E "Max frequency|ERROR|utilisation|TRELLIS_COMB" || true
