# SPDX-License-Identifier: BSD-2-Clause
"""make bench: speed of the digital twin in simulated clock cycles per wall-clock second -> twin_speed.json."""

import argparse
import json
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seconds", type=float, default=5.0, help="wall-clock seconds per measurement")
    args = parser.parse_args()
    with twin.running() as (url, csr), Device(url, csr) as dev:
        t = Tester(dev)
        idle = measure(t, args.seconds)
        # both ports sending 64-byte frames at line rate through the switch model
        for port in (0, 1):
            t.configure(port, Stream(proto="ipv4", size=64))
            t.start(port)
        busy = measure(t, args.seconds)
        for port in (0, 1):
            t.stop(port)
        # the same client: the twin serves one at a time
        start = time.monotonic()
        for _ in range(20):
            dev.read("tester_build_id")
        read_ms = (time.monotonic() - start) / 20 * 1000
        # a full counter snapshot (every port's counters, latency statistics, the tester's time): wall time
        # and UARTBone round trips (requests answered by the bridge)
        trips = []
        exchange = dev.bus._exchange
        dev.bus._exchange = lambda *a: (trips.append(1), exchange(*a))[1]
        start = time.monotonic()
        for _ in range(5):
            t.snapshot()
        snapshot_ms = (time.monotonic() - start) / 5 * 1000
        dev.bus._exchange = exchange
    report = {"idle": idle, "line_rate_both_ports": busy, "register_read_ms": read_ms,
              "snapshot_ms": snapshot_ms, "snapshot_round_trips": len(trips) / 5}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1))
    print(f"twin: {idle['cycles_per_s'] / 1e6:.2f} M cycles/s idle, {busy['cycles_per_s'] / 1e6:.2f} M cycles/s "
          f"with both ports at line rate ({busy['simulated_s_per_wall_s'] * 1e3:.1f} ms simulated per second); "
          f"one register read {read_ms:.1f} ms; a full snapshot {snapshot_ms:.1f} ms in "
          f"{len(trips) / 5:g} round trips")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
