# SPDX-License-Identifier: BSD-2-Clause
"""make bench: line rate at minimum IFG per frame size, measured in simulated time -> linerate.json."""

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common.runner import run  # noqa: E402

SIZES = "64,65,128,1518,9000,16383"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, required=True, help="JSON file to write")
    parser.add_argument("--window-us", type=float, default=1000.0,
                        help="simulated measurement window per size in microseconds (default 1000)")
    args = parser.parse_args()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_suffix(".part")
    run("gen.test_gen", "tb_port", "tb_port", testcase="run_test_line_rate",
        extra_env={"FPGATEST_SIZES": SIZES, "FPGATEST_WINDOW_US": str(args.window_us),
                   "FPGATEST_LINERATE_OUT": str(tmp.resolve())})
    records = json.loads(tmp.read_text())
    os.replace(tmp, args.out)
    print(f"{'size':>6} {'sent':>8} {'theory':>8} {'ratio':>6} {'fps':>12} {'lost':>5}")
    for r in records:
        print(f"{r['size_bytes']:>6} {r['frames_sent']:>8} {r['frames_theoretical']:>8} {r['ratio']:>6.3f} "
              f"{r['frames_per_second']:>12.1f} {r['frames_lost']:>5}")
    print(f"wrote {args.out}")
    return 0 if all(r["ratio"] == 1.0 and r["frames_lost"] == 0 for r in records) else 1


if __name__ == "__main__":
    sys.exit(main())
