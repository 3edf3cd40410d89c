#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Out-of-context place and route of one tester core (default: a whole port) on the 5A-75B's ECP5 at
# 125 MHz: a quick timing check of the cores without the SoC (make bitstream is the real thing).
#   scripts/ooc_timing.sh [top] [seed]      results in build/ooc/<top>/
set -euo pipefail
cd "$(dirname "$0")/.."
top=${1:-fpgatest_port}
seed=${2:-1}
out=build/ooc/$top
mkdir -p "$out"
yosys -q -p "read_verilog $(ls rtl/*.v rtl/ecp5/*.v | tr '\n' ' '); synth_ecp5 -top $top -json $out/netlist.json"
nextpnr-ecp5 --25k --package CABGA256 --speed 6 --out-of-context --freq 125 --json "$out/netlist.json" \
    --report "$out/report.json" --seed "$seed" 2>&1 | tee "$out/nextpnr.log" \
    | grep -E "Max frequency|ERROR|TRELLIS_COMB" || true
python3 - "$out/report.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
for path in report["critical_paths"]:
    cells = [step["from"]["cell"] for step in path["path"] if step["type"] != "routing"]
    total = sum(step["delay"] for step in path["path"])
    print(f"{path['from']} -> {path['to']}: {total:.2f} ns")
    print("   from", cells[0][:110])
    print("   to  ", path["path"][-1]["to"]["cell"][:110])
PY
