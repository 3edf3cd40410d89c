# SPDX-License-Identifier: BSD-2-Clause
"""make bench: the default sweep's wall time (`fpgatest sweep --proto ipv4` on the default twin) with its
sizes on one twin and shared out among several at once (--twins N, up to one a CPU core), rounds of each
in turn -> sweep_time.json. Each run's per-size latencies (min, mean, max, stdev, jitter) must
equal the first run's: the twin is exact."""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LATENCY = ("min", "mean", "max", "stdev", "jitter_mean", "jitter_max")


def sweep(twins: int, work: Path) -> dict:
    """One default sweep on `twins` twins: its wall time and what it measured."""
    out = work / f"sweep-{twins}-{time.monotonic_ns()}"
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "fpgatest", "sweep", "--proto", "ipv4", "--calibration", "none",
                        "--twins", str(twins), "--out", str(out)], cwd=ROOT, capture_output=True, text=True)
    wall = time.monotonic() - t0
    if r.returncode:
        raise SystemExit(f"sweep on {twins} twin(s) failed: {r.stderr.strip()}")
    summary = json.loads((out / "summary.json").read_text())
    # the latencies, not their counts: the frames in the intervals move by one with where the host started
    # the interval recorder against the stream, on one twin too
    return {"wall_s": wall, "latency_ns": {s["size_bytes"]: {k: s["latency_ns"][k] for k in LATENCY}
                                           for s in summary["sizes"]},
            "lost": sum(s["frames"]["lost"] for s in summary["sizes"])}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, required=True, help="JSON file to write")
    parser.add_argument("--rounds", type=int, default=2, help="runs of each twin count, in turn (default 2)")
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    counts = sorted({1, *(n for n in (2, 4, 7) if n <= cores)})
    runs = {n: [] for n in counts}
    with tempfile.TemporaryDirectory(dir=ROOT / "build") as work:
        for _ in range(args.rounds):
            for n in counts:
                runs[n].append(sweep(n, Path(work)))
    first = runs[1][0]
    differences = [f"--twins {n} run {k + 1}, {size} B: {field} {first['latency_ns'][size][field]} vs {value}"
                   for n, rs in runs.items() for k, r in enumerate(rs) for size, lat in r["latency_ns"].items()
                   for field, value in lat.items() if value != first["latency_ns"][size][field]]
    differences += [f"--twins {n} run {k + 1}: {r['lost']} frames lost"
                    for n, rs in runs.items() for k, r in enumerate(rs) if r["lost"]]
    same = not differences
    one = statistics.median(r["wall_s"] for r in runs[1])
    report = {"cpu_cores": cores, "sizes": list(first["latency_ns"]), "rounds": args.rounds,
              "latencies_equal_and_nothing_lost": same, "differences": differences,
              "twins": {str(n): {"wall_s": [round(r["wall_s"], 2) for r in rs],
                                 "median_s": round(statistics.median(r["wall_s"] for r in rs), 2),
                                 "speedup_over_one": round(one / statistics.median(r["wall_s"] for r in rs), 2)}
                        for n, rs in runs.items()}}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_suffix(".part")
    tmp.write_text(json.dumps(report, indent=1) + "\n")
    os.replace(tmp, args.out)
    for n, r in report["twins"].items():
        print(f"--twins {n}: {r['median_s']:.1f} s (runs {', '.join(f'{w:.1f}' for w in r['wall_s'])}), "
              f"{r['speedup_over_one']:.2f}x one twin")
    for line in differences:
        print(line)
    print(f"latencies equal on every run, nothing lost: {same}\nwrote {args.out}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
