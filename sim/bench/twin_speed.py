# SPDX-License-Identifier: BSD-2-Clause
"""make bench: speed of the digital twin in simulated clock cycles per wall-clock second, the twin's
build beside LiteX's own build of the same SoC, measured in one run -> twin_speed.json. Both are the
full twin (boards.twin --full: both directions on both ports, every engine), the one whose two ports
can both send at line rate. The default twin (the 5A-75B's directions: port 0 sends, port 1 receives) is
measured beside them, with its one sender at line rate, and the full twin built with Etherbone on port 1
(boards.twin --etherbone: LiteEth's UDP/IP core and Etherbone master beside port 1, idle while measured;
what the option costs the twin's speed). And in the same rounds the twin issue 11 measured, main as it
was when the issue was filed (ISSUE_TWIN_COMMIT: both directions on both ports, as the full twin),
taken from this repository's history and measured by its own bench script: the speed-up the issue
asks for, side by side."""

import argparse
import inspect
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from boards import twin  # noqa: E402
from fpgatest.driver import Device  # noqa: E402
from fpgatest.tester import Stream, Tester  # noqa: E402


# main when issue 11 ("the twin: four to ten times faster") was filed
ISSUE_TWIN_COMMIT = "41e5ebadb60eef0e961890882f3f7a579b0422a7"
# the figures beside the cycle rates that each build's rounds give a median of
BUS_FIGURES = ("register_read_ms", "snapshot_ms", "snapshot_round_trips")
# and those of today's builds' interval recorder (the issue's twin has none)
RING_FIGURES = ("ring_records", "ring_drain_ms", "ring_round_trips")


def issue_twin_tree(out_dir: Path) -> Path:
    """The sources of ISSUE_TWIN_COMMIT in out_dir/twin-issue11 (from git; kept while they are that
    commit's). RuntimeError where the history does not hold the commit (a shallow clone)."""
    tree = out_dir / "twin-issue11"
    stamp = tree / ".commit"
    if stamp.exists() and stamp.read_text() == ISSUE_TWIN_COMMIT:
        return tree
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ISSUE_TWIN_COMMIT], capture_output=True)
    if archive.returncode:
        raise RuntimeError(f"commit {ISSUE_TWIN_COMMIT[:7]} is not in this clone's history "
                           f"({archive.stderr.decode(errors='replace').strip()}): a full clone measures it")
    shutil.rmtree(tree, ignore_errors=True)
    tree.mkdir(parents=True)
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    stamp.write_text(ISSUE_TWIN_COMMIT)
    return tree


def issue_run(tree: Path, what: str, *args: str) -> str:
    """python *args in the issue's tree, with its own host, sim and boards; its stdout."""
    env = {k: v for k, v in os.environ.items() if k != "FPGATEST_ROOT"}
    env["PYTHONPATH"] = os.pathsep.join(str(tree / d) for d in ("host", "sim", "."))
    done = subprocess.run([sys.executable, *args], cwd=tree, env=env, capture_output=True, text=True)
    if done.returncode:
        tail = (done.stdout + done.stderr).strip().splitlines()[-5:]
        raise RuntimeError(f"the issue's twin ({ISSUE_TWIN_COMMIT[:7]}) failed {what}: " + " / ".join(tail))
    return done.stdout


def issue_speed(tree: Path, seconds: float) -> dict:
    """One round of the issue's twin, built and measured by its own bench script (its first run builds
    it, in tree/build/twin): idle, and both ports sending 64-byte frames at line rate; then its snapshot,
    with its own host and twin, timed as today's (snapshot_cost's text run there)."""
    out = tree / "build" / "bench" / "round.json"
    issue_run(tree, "its bench", "-m", "sim.bench.twin_speed", "--out", str(out), "--seconds", str(seconds))
    report = json.loads(out.read_text())
    script = "\n".join(["import json, time", "from boards import twin", "from fpgatest.driver import Device",
                         "from fpgatest.tester import Tester", inspect.getsource(round_trips),
                         inspect.getsource(snapshot_cost),
                         "with twin.running() as (url, csr), Device(url, csr) as dev:",
                         "    print(json.dumps(snapshot_cost(dev, Tester(dev))))"])
    snapshot = json.loads(issue_run(tree, "its snapshot", "-c", script).strip().splitlines()[-1])
    return {"idle": report["idle"], "line_rate": {**report["line_rate_both_ports"], "senders": [0, 1]},
            "register_read_ms": report["register_read_ms"], **snapshot}


def issue_instructions(tree: Path, seconds: float) -> dict:
    """instruction_cost of the issue's twin (built by issue_speed), idle and at line rate, with its own
    host: instruction_cost's text run there."""
    script = "\n".join(["import json, time", "from boards import twin", "from fpgatest.driver import Device",
                         "from fpgatest.tester import Stream, Tester", inspect.getsource(instruction_cost),
                         f"print(json.dumps({{state: instruction_cost(twin.BUILD_DIR, {seconds}, state == 'line_rate')"
                         " for state in ('idle', 'line_rate')}))"])
    return json.loads(issue_run(tree, "its instruction count", "-c", script).strip().splitlines()[-1])


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
        cost = snapshot_cost(dev, t)
        ring = ring_cost(t)
    return {"idle": idle, "line_rate": {**busy, "senders": senders}, "register_read_ms": read_ms, **cost, **ring}


def instruction_cost(build_dir, seconds: float, busy: bool) -> float:
    """CPU instructions the twin built in build_dir executes per tester clock cycle, idle or with every
    port that has a generator sending 64-byte frames at line rate: counted by valgrind's callgrind, so
    the figure is the same on a loaded machine and on a quiet one (wall-clock rates here move by 10 to
    50 % with the machine's load; this by about 0.5 %). The counting runs from one toggle to the other
    and the tester's time is read after each, so both windows start and end a register read after a
    toggle. The issue's twin runs this function's text in its tree (issue_instructions): what it needs
    beyond twin, Device, Stream, Tester and time is imported here."""
    import re
    import socket
    import subprocess
    import tempfile
    from pathlib import Path

    port = twin.free_port()
    cmd, cwd = twin.command(port, Path(build_dir))
    with tempfile.TemporaryDirectory() as tmp:
        out, log = Path(tmp) / "callgrind.out", Path(tmp) / "valgrind.log"
        proc = subprocess.Popen(["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}",
                                 f"--log-file={log}", *cmd], cwd=cwd, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            deadline = time.monotonic() + 300
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    if time.monotonic() > deadline or proc.poll() is not None:
                        text = log.read_text(errors="replace") if log.exists() else ""
                        said = [line.partition("== ")[2] for line in text.splitlines()
                                if "nrecognised instruction" in line]
                        raise RuntimeError(f"the twin in {build_dir} did not start under valgrind"
                                           + (f": {said[0]}" if said else ""))
                    time.sleep(0.5)
            time.sleep(0.5)
            with Device(f"socket://127.0.0.1:{port}", Path(build_dir) / "csr.json") as dev:
                t = Tester(dev)
                if busy:
                    for p in range(t.n_ports):
                        if t.has(p, "tx"):
                            t.configure(p, Stream(proto="ipv4", size=64))
                            t.start(p)
                subprocess.run(["callgrind_control", "-i", "on", str(proc.pid)], check=True, capture_output=True)
                first = t.now_ticks()
                time.sleep(seconds)
                subprocess.run(["callgrind_control", "-i", "off", str(proc.pid)], check=True, capture_output=True)
                ticks = t.now_ticks() - first
        finally:
            proc.terminate()
            proc.wait()
        total = int(re.search(r"^totals: (\d+)", out.read_text(), re.M).group(1))
    return total / ticks


def round_trips(dev, action):
    """action()'s result and the UARTBone round trips it took: requests that wait for a reply (a write,
    such as a snapshot's pulse, is sent without waiting)."""
    trips = []
    exchange = dev.bus._exchange
    dev.bus._exchange = lambda request, reply_len, *a: (trips.append(1) if reply_len else None,
                                                        exchange(request, reply_len, *a))[1]
    try:
        return action(), len(trips)
    finally:
        dev.bus._exchange = exchange


def snapshot_cost(dev, tester) -> dict:
    """Five full snapshots: wall time and round trips each. The issue's twin runs this function's text
    (and round_trips') with its own host (see issue_speed)."""
    start = time.monotonic()
    _, trips = round_trips(dev, lambda: [tester.snapshot() for _ in range(5)])
    return {"snapshot_ms": (time.monotonic() - start) / 5 * 1000, "snapshot_round_trips": trips / 5}


def ring_cost(tester) -> dict:
    """The interval recorder's ring filled with hardware-timed snapshots (every port's counters and
    statistics at each edge, edges the minimum period apart), then drained at once: how many, and the
    wall time and round trips for them all."""
    ring = tester.intervals()
    ring.start(ring.period_min, ring.depth - 1)
    deadline = time.monotonic() + 60
    while ring.status()["written"] < ring.depth:
        if time.monotonic() > deadline:
            raise RuntimeError(f"the ring holds {ring.status()['written']} of {ring.depth} records after 60 s")
    start = time.monotonic()
    (records, status), trips = round_trips(tester.dev, ring.drain)
    drain_ms = (time.monotonic() - start) * 1000
    if len(records) != ring.depth or status["lost"]:
        raise RuntimeError(f"the ring gave {len(records)} of {ring.depth} records ({status['lost']} lost)")
    return {"ring_records": len(records), "ring_drain_ms": drain_ms, "ring_round_trips": trips}


def medians(runs: list[dict], keys: tuple[str, ...]) -> dict:
    """One build's figures over its rounds (the higher middle value): cycles per second idle and at
    line rate, which ports sent, and the other figures named in keys."""
    def median(value) -> float:
        return statistics.median_high(value(run) for run in runs)
    return {"idle_cycles_per_s": median(lambda run: run["idle"]["cycles_per_s"]),
            "line_rate_cycles_per_s": median(lambda run: run["line_rate"]["cycles_per_s"]),
            "line_rate_senders": runs[0]["line_rate"]["senders"],
            **{key: median(lambda run, key=key: run[key]) for key in keys}}


def speedup(build: dict, reference: dict) -> dict:
    """build's medians over reference's, idle and at line rate."""
    return {state: build[f"{state}_cycles_per_s"] / reference[f"{state}_cycles_per_s"] for state in ("idle", "line_rate")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seconds", type=float, default=5.0, help="wall-clock seconds per measurement")
    parser.add_argument("--rounds", type=int, default=3,
                        help="measurements of each build, taken in turn (the machine's load drifts)")
    parser.add_argument("--count-seconds", type=float, default=10.0,
                        help="wall-clock seconds of each instruction count under valgrind (about 12,000 "
                             "tester cycles a second there)")
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
    issue_skipped = None
    try:
        issue_tree = issue_twin_tree(args.out.resolve().parent)
    except RuntimeError as err:
        issue_tree, issue_skipped = None, str(err)
        print(f"warning: {err}", file=sys.stderr)
    runs = {flow: [] for flow in builds}
    issue_runs = []
    for _ in range(args.rounds):
        for flow, (build_dir, variant, etherbone) in builds.items():
            runs[flow].append(speed(build_dir, variant, etherbone, args.seconds))
        if issue_tree:
            issue_runs.append(issue_speed(issue_tree, args.seconds))

    report = {"rounds": args.rounds, "seconds_per_measurement": args.seconds, "runs": runs,
              "median": {flow: medians(runs[flow], BUS_FIGURES + RING_FIGURES)
                         for flow in builds}}
    m = report["median"]
    report["speedup_over_litex"] = speedup(m["twin"], m["litex"])
    # instructions per tester cycle (callgrind): the same on any machine and under any load
    counts = {}
    if shutil.which("valgrind"):
        for flow in ("twin", "default"):
            counts[flow] = {state: instruction_cost(builds[flow][0], args.count_seconds, state == "line_rate")
                            for state in ("idle", "line_rate")}
        if issue_tree:
            counts["issue_twin"] = issue_instructions(issue_tree, args.count_seconds)
        report["instructions_per_cycle"] = counts
        if "issue_twin" in counts:
            report["instructions_over_issue_twin"] = {
                flow: {state: counts["issue_twin"][state] / counts[flow][state] for state in counts[flow]}
                for flow in ("twin", "default")}
    else:
        report["instructions_per_cycle"] = {"skipped": "valgrind is not installed"}
    if issue_runs:
        issue = medians(issue_runs, BUS_FIGURES)
        report["issue_twin"] = {"commit": ISSUE_TWIN_COMMIT, "runs": issue_runs, "median": issue}
        # today's twins against the issue's, in the same rounds (the default twin has one sender)
        report["speedup_over_issue_twin"] = {flow: speedup(m[flow], issue) for flow in ("twin", "default")}
    else:
        report["issue_twin"] = {"commit": ISSUE_TWIN_COMMIT, "skipped": issue_skipped}
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
              f"{m[flow]['snapshot_round_trips']:g} round trips; the interval recorder's ring of "
              f"{m[flow]['ring_records']} hardware-timed snapshots drained in {m[flow]['ring_round_trips']} "
              f"round trips, {m[flow]['ring_drain_ms']:.1f} ms (median of {args.rounds})")
    s = report["speedup_over_litex"]
    print(f"the twin's build against LiteX's: {s['idle']:.2f}x idle, {s['line_rate']:.2f}x at line rate")
    if issue_runs:
        print(f"the issue's twin ({ISSUE_TWIN_COMMIT[:7]}, both directions): {issue['idle_cycles_per_s'] / 1e6:.2f} M "
              f"cycles/s idle, {issue['line_rate_cycles_per_s'] / 1e6:.2f} M with both ports at line rate "
              f"(median of {args.rounds}, in the same rounds); one register read {issue['register_read_ms']:.1f} ms; a full "
              f"snapshot {issue['snapshot_ms']:.1f} ms in {issue['snapshot_round_trips']:g} round trips")
        for flow, label in (("twin", "full twin"), ("default", "default twin")):
            x = report["speedup_over_issue_twin"][flow]
            print(f"{label} against the issue's twin: {x['idle']:.2f}x idle, {x['line_rate']:.2f}x at line rate")
    labels = {"twin": "full twin", "default": "default twin", "issue_twin": "the issue's twin"}
    for flow, count in counts.items():
        print(f"{labels[flow]}: {count['idle']:,.0f} instructions per tester cycle idle, {count['line_rate']:,.0f} "
              f"at line rate (callgrind)"
              + (f"; {report['instructions_over_issue_twin'][flow]['idle']:.2f}x / "
                 f"{report['instructions_over_issue_twin'][flow]['line_rate']:.2f}x fewer than the issue's twin"
                 if flow in report.get("instructions_over_issue_twin", {}) else ""))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
