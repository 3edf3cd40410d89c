# SPDX-License-Identifier: BSD-2-Clause
"""make bench: speed of the digital twin in simulated clock cycles per wall-clock second, the twin's
build beside LiteX's own build of the same SoC, measured in one run -> twin_speed.json. Both are the
full twin (boards.twin --full: both directions on both ports, every engine), the one whose two ports
can both send at line rate. The default twin (the 5A-75B's directions: port 0 sends, port 1 receives) is
measured beside them, with its one sender at line rate, and the full twin built with Etherbone on port 1
(boards.twin --etherbone: LiteEth's UDP/IP core and Etherbone master beside port 1, idle while measured;
what the option costs the twin's speed)."""

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from boards import twin  # noqa: E402
from fpgatest.driver import Device  # noqa: E402
from fpgatest.tester import Stream, Tester  # noqa: E402


def measure(tester: Tester, seconds: float) -> dict:
    start_wall = time.monotonic()
    start_tick = tester.now_ticks()
    time.sleep(seconds)
    ticks = tester.now_ticks() - start_tick
    wall = time.monotonic() - start_wall
    return {"cycles": ticks, "wall_s": wall, "cycles_per_s": ticks / wall,
            "simulated_s_per_wall_s": ticks * 8e-9 / wall}


def speed(build_dir: Path, variant: str, etherbone: bool, seconds: float) -> dict:
    """Tester clock cycles per second idle and with every port that has a generator sending 64-byte
    frames at line rate through the switch model; one register read and one full snapshot (every
    port's counters, latency statistics, the tester's time) in wall time and UARTBone round trips."""
    with twin.running(build_dir=build_dir, variant=variant, etherbone=etherbone) as (url, csr), \
            Device(url, csr) as dev:
        t = Tester(dev)
        idle = measure(t, seconds)
        senders = [port for port in range(t.n_ports) if t.has(port, "tx")]
        for port in senders:
            t.configure(port, Stream(proto="ipv4", size=64))
        t.start(*senders)
        busy = measure(t, seconds)
        for port in senders:
            t.stop(port)
        # the same client: the twin serves one at a time
        start = time.monotonic()
        for _ in range(20):
            dev.read("tester_build_id")
        read_ms = (time.monotonic() - start) / 20 * 1000
        trips = []
        exchange = dev.bus._exchange
        dev.bus._exchange = lambda *a: (trips.append(1), exchange(*a))[1]
        start = time.monotonic()
        for _ in range(5):
            t.snapshot()
        snapshot_ms = (time.monotonic() - start) / 5 * 1000
        dev.bus._exchange = exchange
    return {"idle": idle, "line_rate": {**busy, "senders": senders}, "register_read_ms": read_ms,
            "snapshot_ms": snapshot_ms, "snapshot_round_trips": len(trips) / 5}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seconds", type=float, default=5.0, help="wall-clock seconds per measurement")
    parser.add_argument("--rounds", type=int, default=3,
                        help="measurements of each build, taken in turn (the machine's load drifts)")
    args = parser.parse_args()
    # (build directory, variant, Etherbone): the full twin in the twin's build and in LiteX's, the
    # default twin, the full twin with Etherbone
    builds = {"twin": (twin.FULL_BUILD_DIR, "full", False),
              "litex": (args.out.resolve().parent / "twin-litex", "full", False),
              "default": (twin.BUILD_DIR, "board", False),
              "etherbone": (twin.ETHERBONE_BUILD_DIR, "full", True)}
    for flow in ("twin", "default", "etherbone"):
        twin.ensure_built(*builds[flow])
    # LiteX's own build of the same SoC (its build_sim.sh: VCD tracing compiled in, its glue, no profile)
    litex_dir = builds["litex"][0]
    if not twin.up_to_date(litex_dir, "full"):
        litex_dir.mkdir(parents=True, exist_ok=True)
        with open(litex_dir / "build.log", "w") as log:
            print(f"building LiteX's build of the twin (log {litex_dir / 'build.log'}) ...", flush=True)
            saved = sys.stdout, sys.stderr
            sys.stdout = sys.stderr = log
            try:
                twin.build(litex_dir, flow="litex", variant="full")
            finally:
                sys.stdout, sys.stderr = saved
    runs = {flow: [] for flow in builds}
    for _ in range(args.rounds):
        for flow, (build_dir, variant, etherbone) in builds.items():
            runs[flow].append(speed(build_dir, variant, etherbone, args.seconds))

    def median(flow: str, value) -> float:
        return statistics.median_high(value(run) for run in runs[flow])

    report = {"rounds": args.rounds, "seconds_per_measurement": args.seconds, "runs": runs, "median": {}}
    for flow in builds:
        report["median"][flow] = {
            "idle_cycles_per_s": median(flow, lambda run: run["idle"]["cycles_per_s"]),
            "line_rate_cycles_per_s": median(flow, lambda run: run["line_rate"]["cycles_per_s"]),
            "line_rate_senders": runs[flow][0]["line_rate"]["senders"],
            **{key: median(flow, lambda run, key=key: run[key])
               for key in ("register_read_ms", "snapshot_ms", "snapshot_round_trips")}}
    m = report["median"]
    report["speedup_over_litex"] = {
        "idle": m["twin"]["idle_cycles_per_s"] / m["litex"]["idle_cycles_per_s"],
        "line_rate": m["twin"]["line_rate_cycles_per_s"] / m["litex"]["line_rate_cycles_per_s"]}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1))
    names = {"twin": "full twin, twin's build", "litex": "full twin, LiteX's build",
             "default": "default twin (5A-75B)", "etherbone": "full twin with Etherbone, twin's build"}
    for flow in builds:
        senders = m[flow]["line_rate_senders"]
        print(f"{names[flow]}: {m[flow]['idle_cycles_per_s'] / 1e6:.2f} M cycles/s idle, "
              f"{m[flow]['line_rate_cycles_per_s'] / 1e6:.2f} M cycles/s with "
              f"{'both ports' if len(senders) == 2 else f'port {senders[0]}'} at line rate "
              f"({m[flow]['line_rate_cycles_per_s'] * 8e-9 * 1e3:.1f} ms simulated per second); one register "
              f"read {m[flow]['register_read_ms']:.1f} ms; a full snapshot {m[flow]['snapshot_ms']:.1f} ms in "
              f"{m[flow]['snapshot_round_trips']:g} round trips (median of {args.rounds})")
    s = report["speedup_over_litex"]
    print(f"the twin's build against LiteX's: {s['idle']:.2f}x idle, {s['line_rate']:.2f}x at line rate")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
