# SPDX-License-Identifier: BSD-2-Clause
"""fpgatest command line: info, run, sweep, calibrate, dut, report. The default target is the digital twin."""

import argparse
import contextlib
import json
import sys
import time
from pathlib import Path

from fpgatest import __version__

ROOT = Path(__file__).resolve().parents[2]
TWIN_CSR = ROOT / "build" / "twin" / "csr.json"
BOARD_CSR = ROOT / "build" / "colorlight_5a_75b" / "csr.json"
DEFAULT_CALIBRATION = ROOT / "build" / "calibration.json"

# thesis method on a board: 100 s per size, 1 s samples; on the twin durations are simulated time
BOARD_DURATION_S, BOARD_INTERVAL_S = 100.0, 1.0
TWIN_DURATION_S, TWIN_INTERVAL_S = 0.02, 0.002


class UserError(Exception):
    """Reported as one line, exit status 2."""


# ---- target ----------------------------------------------------------------------------------------

@contextlib.contextmanager
def open_tester(args):
    """A Tester at --url (the twin, started for this command, when --url is 'twin')."""
    from fpgatest.driver import Device
    from fpgatest.tester import Tester

    if args.url == "twin":
        sys.path.insert(0, str(ROOT))
        from boards import twin

        log = open(ROOT / "build" / "twin-run.log", "w") if (ROOT / "build").is_dir() else None
        try:
            with twin.running(log=log) as (url, csr):
                with Device(url, Path(args.csr) if args.csr else csr) as dev:
                    yield Tester(dev)
        finally:
            if log:
                log.close()
    else:
        csr = Path(args.csr) if args.csr else BOARD_CSR
        with Device(args.url, csr) as dev:
            yield Tester(dev)


def is_twin(args) -> bool:
    return args.url == "twin" or args.url.startswith("socket://")


def check_links(tester, args, ports) -> None:
    """Measure only over links at 1000 Mb/s full duplex (the ECP5 RGMII PHY carries nothing else)."""
    if not args.ignore_link:
        tester.require_links(ports)


def load_calibration(tester, args) -> dict | None:
    from fpgatest.measure import check_calibration_file

    path = Path(args.calibration) if args.calibration else DEFAULT_CALIBRATION
    if args.calibration is None and not path.exists():
        return None
    if args.calibration == "none":
        tester.set_calibration(0, [0] * tester.n_ports)
        return None
    try:
        cal = check_calibration_file(json.loads(path.read_text()))
    except (OSError, ValueError) as err:
        raise UserError(f"cannot read calibration {path}: {err}") from None
    tester.set_calibration(cal["internal_ns"], (cal["cables_ns"] + [0.0] * tester.n_ports)[:tester.n_ports])
    return cal


DUT_KEYS = {"latency_ns": float, "per_byte_ns": float, "rate_mbps": float, "ppm": float, "buffer_bytes": int,
            "max_frame": int, "cable_in_ns": float, "cable_out_ns": float, "cut_through": int, "dither": int}


def parse_dut(items: list[str]) -> dict:
    out = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or key not in DUT_KEYS:
            raise UserError(f"bad --dut {item!r}: use KEY=VALUE with KEY one of {', '.join(DUT_KEYS)}")
        try:
            out[key] = DUT_KEYS[key](value)
        except ValueError:
            raise UserError(f"bad --dut {item!r}: {value!r} is not a number") from None
    return out


def apply_dut(tester, args) -> None:
    settings = parse_dut(getattr(args, "dut", None))
    if not settings:
        return
    paths = ["ab", "ba"] if args.dut_path == "both" else [args.dut_path]
    for path in paths:
        tester.dut_set(path, **settings)


# ---- commands --------------------------------------------------------------------------------------

def cmd_info(args) -> int:
    with open_tester(args) as t:
        load_calibration(t, args)
        apply_dut(t, args)
        dev = t.dev
        print(f"target      {dev.url}")
        print(f"register map {dev.map.path}  build id {dev.map.build_id:#010x} (matches the gateware)")
        print(f"ports       {t.n_ports}")
        links = t.links()
        for i, link in enumerate(links or []):
            print(f"link port {i}: {link.describe()}")
        if links is None:
            print("links       no PHY management in this build (the twin's links are ideal, always 1000/full)")
        snap = t.snapshot()
        print(f"tester time {snap['time_ticks']} ticks ({snap['time_ticks'] * 8e-9:.6f} s)")
        cal = t.calibration()
        print(f"calibration internal {cal['internal_ns']:.1f} ns, cables "
              + ", ".join(f"port {i}: {c:.1f} ns" for i, c in enumerate(cal["cables_ns"])))
        for i, p in enumerate(snap["ports"]):
            print(f"port {i}: {'sending' if p['tx_busy'] else 'idle'}, tx {p['tx_frames']} frames, "
                  f"rx {p['rx_frames']} frames ({p['test_frames']} test, {p['foreign']} foreign, "
                  f"{p['fcs_errors']} bad FCS, {p['runts']} runts, {p['giants']} giants)")
        if t.has_dut_model:
            for path in t.dut_paths():
                d = t.dut_get(path)
                print(f"dut {path}: {'cut-through' if d['cut_through'] else 'store-and-forward'}, "
                      f"latency {d['latency_ns']:.1f} ns, {d['per_byte_ns']:.3f} ns/B, {d['rate_mbps']:.1f} Mb/s, "
                      f"buffer {d['buffer_bytes']} B, max frame {d['max_frame']} B, cables "
                      f"{d['cable_in_ns']:.1f}/{d['cable_out_ns']:.1f} ns")
    return 0


def cmd_run(args) -> int:
    from rich.console import Console
    from rich.table import Table

    from fpgatest.measure import SweepPlan, measure_size
    from fpgatest.tester import Stream

    stream = Stream(proto=args.proto, size=args.size, ifg=args.ifg, rate_percent=args.rate)
    stream.check()
    duration, interval = durations(args)
    plan = SweepPlan(args.proto, [args.size], args.ifg, args.rate, duration, interval, args.tx_port, args.rx_port)
    plan.streams()
    console = Console()
    with open_tester(args) as t:
        check_links(t, args, [args.tx_port, args.rx_port])
        load_calibration(t, args)
        apply_dut(t, args)
        console.print(f"[bold]{args.proto} {args.size} B[/] port {args.tx_port} -> port {args.rx_port}, "
                      f"{duration} s in {interval} s intervals")
        console.print(f"{'t (s)':>10} {'rx fps':>12} {'line-rate fps':>13} {'min ns':>9} {'mean ns':>9} "
                      f"{'max ns':>9}")

        def show(row):
            console.print(f"{row['t_start_s'] + row['duration_s']:>10.4f} {row['rx_fps']:>12.1f} "
                          f"{row['theoretical_fps']:>13.1f} {fmt(row['latency_min_ns']):>9} "
                          f"{fmt(row['latency_mean_ns']):>9} {fmt(row['latency_max_ns']):>9}")

        record, _ = measure_size(t, plan, stream, None, on_sample=show)
    table = Table(title="result")
    for col in ("tx", "rx", "lost", "reordered", "duplicate", "foreign", "fcs_errors"):
        table.add_column(col, justify="right")
    fr = record["frames"]
    table.add_row(*(str(fr[k]) for k in ("tx", "rx", "lost", "reordered", "duplicate", "foreign", "fcs_errors")))
    console.print(table)
    lat = record["latency_ns"]
    console.print(f"latency min {fmt(lat['min'])} / mean {fmt(lat['mean'])} / max {fmt(lat['max'])} ns, "
                  f"stdev {fmt(lat['stdev'])} ns; drop rate {100 * record['drop_rate']:.4f} %")
    return 0


def fmt(v) -> str:
    return "-" if v is None else f"{v:.1f}"


def durations(args) -> tuple[float, float]:
    twin = is_twin(args)
    duration = args.duration if args.duration is not None else (TWIN_DURATION_S if twin else BOARD_DURATION_S)
    interval = args.interval if args.interval is not None else (TWIN_INTERVAL_S if twin else BOARD_INTERVAL_S)
    if duration <= 0 or interval <= 0 or interval > duration:
        raise UserError("need 0 < --interval <= --duration")
    return duration, interval


class Progress:
    """Progress bar over sizes (and their intervals) with ETA, on stderr."""

    def __init__(self, sizes, intervals_per_size):
        from rich.progress import BarColumn, Progress as RichProgress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

        self.bar = RichProgress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                                TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(), transient=True)
        self.task = self.bar.add_task("sweep", total=len(sizes) * intervals_per_size)

    def __enter__(self):
        self.bar.__enter__()
        return self

    def __exit__(self, *exc):
        self.bar.__exit__(*exc)

    def start_size(self, size):
        self.bar.update(self.task, description=f"{size:>5} B")

    def sample(self, row):
        self.bar.advance(self.task)


def cmd_sweep(args) -> int:
    from fpgatest.measure import SweepPlan, parse_sizes, sweep
    from fpgatest.output import ResultsDir, markdown_table, plot

    duration, interval = durations(args)
    plan = SweepPlan(args.proto, parse_sizes(args.sizes), args.ifg, args.rate, duration, interval,
                     args.tx_port, args.rx_port)
    plan.streams()  # every size checked before the tester is touched
    parse_dut(args.dut)
    out = Path(args.out) if args.out else ROOT / "build" / "results" / time.strftime(f"sweep-{args.proto}-%Y%m%d-%H%M%S")
    if (out / "samples.csv").exists():
        raise UserError(f"{out} already holds results; choose another --out")
    with open_tester(args) as t:
        check_links(t, args, [args.tx_port, args.rx_port])
        load_calibration(t, args)
        apply_dut(t, args)
        results = ResultsDir(out, {})
        intervals = max(1, round(duration / interval))
        try:
            with Progress(plan.sizes, intervals) as progress:
                summary = sweep(t, plan, results, progress)
        except KeyboardInterrupt:
            print(f"fpgatest: interrupted; finished sizes are kept in {out}", file=sys.stderr)
            return 130
    plot(out, summary, _samples(out))
    print(markdown_table(summary))
    print(f"\nresults: {out}")
    return 0


def _samples(out: Path) -> list[dict]:
    from fpgatest.output import load

    return load(out)[1]


def cmd_report(args) -> int:
    from fpgatest.measure import summarize
    from fpgatest.output import load, markdown_table, plot, write_json_atomic

    path = Path(args.dir)
    meta, samples, sizes = load(path)
    if not sizes:
        raise UserError(f"{path} holds no finished size")
    summary = summarize(meta, samples, sizes)
    write_json_atomic(path / "summary.json", summary)
    plot(path, summary, samples)
    print(markdown_table(summary))
    if "stopped_at" in meta:
        print(f"\nnote: the run stopped early: {meta['stopped_at']}")
    return 0


def cmd_calibrate(args) -> int:
    from fpgatest.measure import apply_calibration, calibrate
    from fpgatest.output import write_json_atomic

    try:
        lengths = [float(v) for v in args.cables.split(",") if v.strip()]
        port_cables = [float(v) for v in args.port_cables.split(",")] if args.port_cables else None
    except ValueError:
        raise UserError("cable lengths must be numbers in metres, e.g. --cables 0.2,1.04,5.05") from None

    def ask(length):
        if not sys.stdin.isatty():
            raise UserError("on a board, calibration asks to swap cables: run it in a terminal")
        input(f"connect port {args.tx_port} to port {args.rx_port} with the {length} m cable, then press Enter ")

    with open_tester(args) as t:
        check_links(t, args, range(t.n_ports))
        cal = calibrate(t, lengths, args.frames, ask=ask)
        port_cables = port_cables if port_cables is not None else [0.0] * t.n_ports
        cables_ns = apply_calibration(t, cal, port_cables)
    cal.update({"port_cables_m": port_cables, "cables_ns": cables_ns})
    out = Path(args.out) if args.out else DEFAULT_CALIBRATION
    out.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(out, cal)
    print("| cable (m) | latency (ns) |\n|---:|---:|")
    for p in cal["points"]:
        print(f"| {p['length_m']:g} | {p['latency_ns']:.2f} |")
    print(f"\nt(L) = {cal['ns_per_m']:.4f} ns/m (± {cal['ns_per_m_se']:.4f}) × L + {cal['internal_ns']:.2f} ns "
          f"(± {cal['internal_ns_se']:.2f})")
    print(f"signal speed {cal['signal_speed_m_per_s']:.4g} m/s = {100 * cal['velocity_factor']:.1f} % of c")
    print(f"written: internal delay {cal['internal_ns']:.2f} ns, port cables "
          + ", ".join(f"{c:.2f} ns" for c in cables_ns) + f"; calibration file {out}")
    return 0


def cmd_dut(args) -> int:
    with open_tester(args) as t:
        if not t.has_dut_model:
            raise UserError("dut: this target has no simulated device under test (twin only)")
        apply_dut(t, args)
        for path in t.dut_paths():
            print(f"{path}: " + json.dumps(t.dut_get(path)))
    return 0


# ---- parser -----------------------------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    fmt_cls = argparse.ArgumentDefaultsHelpFormatter
    p = argparse.ArgumentParser(prog="fpgatest", description=__doc__, formatter_class=fmt_cls)
    p.add_argument("--version", action="version", version=f"fpgatest {__version__}")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--url", default="twin",
                        help="'twin' (start the digital twin), /dev/ttyUSB0 (board UART), socket://HOST:PORT "
                             "(a running twin) or udp://IP[:PORT] (Etherbone)")
    common.add_argument("--csr", default=None, help="csr.json of the build (default: the twin's or the board's)")
    common.add_argument("--calibration", default=None,
                        help=f"calibration file to apply (default {DEFAULT_CALIBRATION} if present; 'none' for none)")
    common.add_argument("--tx-port", type=int, default=0, help="sending port")
    common.add_argument("--rx-port", type=int, default=1, help="receiving port")
    common.add_argument("--ignore-link", action="store_true",
                        help="measure even when a port's PHY reports no link at 1000 Mb/s full duplex (experts)")
    common.add_argument("--dut", action="append", metavar="KEY=VALUE",
                        help="twin only: set the switch model first, e.g. latency_ns=2000, rate_mbps=500, "
                             "buffer_bytes=16384, cut_through=1 (repeatable)")
    common.add_argument("--dut-path", default="ab", choices=["ab", "ba", "both"],
                        help="which direction of the switch model --dut sets (ab = port 0 -> 1)")
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("info", parents=[common], formatter_class=fmt_cls,
                       help="identity, ports, counters, calibration in force")
    s.set_defaults(func=cmd_info)

    stream_opts = argparse.ArgumentParser(add_help=False)
    stream_opts.add_argument("--proto", default="ipv4", choices=["eth", "ipv4", "ipv6"], help="protocol")
    stream_opts.add_argument("--ifg", type=int, default=12, help="inter-frame gap in bytes (>= 12 = 96 ns)")
    stream_opts.add_argument("--rate", type=float, default=None,
                             help="average rate in percent of line rate instead of --ifg")
    stream_opts.add_argument("--duration", type=float, default=None,
                             help=f"seconds per size (default {BOARD_DURATION_S} on a board, "
                                  f"{TWIN_DURATION_S} simulated on the twin)")
    stream_opts.add_argument("--interval", type=float, default=None,
                             help=f"seconds per sample (default {BOARD_INTERVAL_S} on a board, "
                                  f"{TWIN_INTERVAL_S} simulated on the twin)")

    s = sub.add_parser("run", parents=[common, stream_opts], formatter_class=fmt_cls,
                       help="one stream with a live per-interval table")
    s.add_argument("--size", type=int, default=64, help="frame size in bytes incl. FCS")
    s.set_defaults(func=cmd_run)

    s = sub.add_parser("sweep", parents=[common, stream_opts], formatter_class=fmt_cls,
                       help="latency and drops per frame size, with fits (the thesis method)")
    s.add_argument("--sizes", default="rfc2544", help="rfc2544 | 64,128,... | START:STOP:STEP (bytes)")
    s.add_argument("--out", default=None, help="results directory (default build/results/sweep-PROTO-TIME)")
    s.set_defaults(func=cmd_sweep)

    s = sub.add_parser("calibrate", parents=[common], formatter_class=fmt_cls,
                       help="fit delay = a*L + b over cables of known length and write the calibration")
    s.add_argument("--cables", required=True, help="cable lengths in metres, e.g. 0.2,1.04,5.05,10.04")
    s.add_argument("--port-cables", default=None,
                   help="lengths (m) of the cables used later on each port, e.g. 1.0,1.0 (default 0)")
    s.add_argument("--frames", type=int, default=2000, help="frames per cable")
    s.add_argument("--out", default=None, help=f"calibration file (default {DEFAULT_CALIBRATION})")
    s.set_defaults(func=cmd_calibrate)

    s = sub.add_parser("dut", parents=[common], formatter_class=fmt_cls,
                       help="twin only: show or set the simulated switch (use --url of a running twin)")
    s.set_defaults(func=cmd_dut)

    s = sub.add_parser("report", formatter_class=fmt_cls, help="re-analyse and re-plot a results directory")
    s.add_argument("dir", help="results directory of a sweep")
    s.set_defaults(func=cmd_report)
    return p


def main(argv=None) -> int:
    from fpgatest.driver import MapError
    from fpgatest.tester import SettingError
    from fpgatest.transport import LinkError

    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (UserError, SettingError, MapError, LinkError, FileExistsError, ValueError, RuntimeError,
            TimeoutError) as err:
        print(f"fpgatest: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("fpgatest: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
