# SPDX-License-Identifier: BSD-2-Clause
"""make bench/synth: Yosys ECP5 synthesis of the tester cores (one port + time base) -> resource report."""

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

from boards.colorlight import timing_report
from boards.colorlight_5a_75b import BUILD_DIR
from litex_soc.tester import rtl_include_dir, rtl_sources

ROOT = Path(__file__).resolve().parents[2]

CELLS = {
    "LUT4": "lut4",
    "TRELLIS_FF": "ff",
    "CCU2C": "carry_ccu2c",
    "DP16KD": "bram_dp16kd",
    "TRELLIS_DPR16X4": "lutram_dpr16x4",
    "MULT18X18D": "dsp_mult18x18d",
}


def synthesize(top: str, files: list[str], workdir: Path) -> dict:
    # YoWASP tools see a private /tmp: run from the repository with relative paths only
    workdir.mkdir(parents=True, exist_ok=True)
    rel = workdir.relative_to(ROOT)
    include = rtl_include_dir("ecp5").relative_to(ROOT)
    script = "; ".join([f"read_verilog -I{include} {' '.join(files)}",
                        f"synth_ecp5 -top {top} -json {rel}/{top}.json",
                        f"tee -o {rel}/{top}_stat.txt stat"])
    log = subprocess.run(["yosys", "-q", "-p", script], cwd=ROOT, capture_output=True, text=True)
    if log.returncode != 0:
        sys.stderr.write(log.stdout + log.stderr)
        raise SystemExit(f"yosys failed for {top}")
    text = (workdir / f"{top}_stat.txt").read_text()
    report = {"top": top}
    for cell, key in CELLS.items():
        m = re.search(rf"^\s*(\d+)\s+(?:\S+\s+)?{cell}\s*$", text, re.M) or \
            re.search(rf"^\s*{cell}\s+(\d+)\s*$", text, re.M)
        report[key] = int(m.group(1)) if m else 0
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    files = [str(p.relative_to(ROOT)) for p in rtl_sources("ecp5")]
    workdir = ROOT / "build" / "synth"
    reports = [synthesize(top, files, workdir) for top in ("fpgatest_port", "fpgatest_timebase")]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    board = timing_report(BUILD_DIR / "build.log")
    args.out.write_text(json.dumps({"device": "ECP5 (synth_ecp5)", "cores": reports, "board": board}, indent=1))
    for r in reports:
        print(" ".join(f"{k}={v}" for k, v in r.items()))
    if board:
        for clock, v in board["clocks"].items():
            print(f"board {clock}: {v['fmax_mhz']} MHz ({v['result']} at {v['target_mhz']} MHz)")
    else:
        print("board: no build/colorlight_5a_75b/build.log (run make bitstream for Fmax and utilisation)")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
