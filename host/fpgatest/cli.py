# SPDX-License-Identifier: BSD-2-Clause
"""fpgatest command line: info, run, sweep, rfc2544, owd, pairs, availbw, echo, calibrate, dut, report. The default target is the
digital twin."""

import argparse
import contextlib
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from fpgatest import __version__, stop


def _checkout() -> Path | None:
    """The fpgatest checkout this tool works with: $FPGATEST_ROOT, else the one this package lies in; None
    for a package installed on its own (pip install ./host), which then reaches a twin or a board only
    through a URL and the csr.json it is given."""
    for root in (os.environ.get("FPGATEST_ROOT"), Path(__file__).resolve().parents[2]):
        if root and (Path(root) / "boards" / "twin.py").is_file():
            return Path(root)
    return None


CHECKOUT = _checkout()
# results and the calibration file: the checkout's build/, else the user's data directory
DATA = (CHECKOUT / "build" if CHECKOUT else
        Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "fpgatest")
# the twin's builds (boards.twin): the default (the 5A-75B's build), --full, --etherbone; a twin served on
# socket:// is described by the one whose build id it answers with
TWIN_CSRS = ([CHECKOUT / "build" / name / "csr.json" for name in ("twin", "twin-full", "twin-etherbone")]
             if CHECKOUT else [])
BOARD_CSR = CHECKOUT / "build" / "colorlight_5a_75b" / "csr.json" if CHECKOUT else None
DEFAULT_CALIBRATION = DATA / "calibration.json"

# thesis method on a board: 100 s per size, 1 s samples; on the twin durations are simulated time
BOARD_DURATION_S, BOARD_INTERVAL_S = 100.0, 1.0
TWIN_DURATION_S, TWIN_INTERVAL_S = 0.02, 0.002


# the twin, started for one command: (the launcher's options) built as the 5A-75B is, or the full twin
# (both directions on both ports, a reflector in each), its ports through the switch model or through the Linux
# kernel (a router or a bridge; the full twin), or the full twin with the switch model on clocks of its own
# (path 0->1 100 ppm fast, 1->0 100 ppm slow: each port receives in a clock of its own frequency)
TWIN_URLS = {"twin": [], "twin:full": ["--full"], "twin:linux": ["--linux", "router"],
             "twin:linux-bridge": ["--linux", "bridge"], "twin:drift": ["--full", "--dut-ppm", "100,-100"]}


class UserError(Exception):
    """Reported as one line, exit status 2."""


# ---- values at the edge: every number finite and inside what the gateware contract allows -----------

MAX_U32 = (1 << 32) - 1
MAX_DURATION_S = 1e6        # longer than any campaign; the twin simulates about 7 ms per second
MAX_CABLE_M = 1000.0        # far beyond the 100 m of 1000BASE-T
MAX_FRAMES = (1 << 32) - 1  # frames per calibration cable (the generator's count is 48 bits)


def _number(text: str, kind):
    try:
        value = kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not {'an integer' if kind is int else 'a number'}") from None
    if kind is float and not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def bounded(kind, low, high, low_open=False, unit=""):
    """argparse type: a number of `kind` in [low, high] ((low, high] with low_open)."""
    def parse(text: str):
        value = _number(text, kind)
        if (value <= low if low_open else value < low) or value > high:
            left = "(" if low_open else "["
            raise argparse.ArgumentTypeError(f"{text} out of range {left}{low:g}, {high:g}]{unit}"
                                             if kind is float else f"{text} out of range {low}..{high}{unit}")
        return value
    return parse


def number_list(text: str, what: str, low: float, high: float) -> list[float]:
    """'0.2,1.04,5' -> [0.2, 1.04, 5.0], each finite and in [low, high]."""
    values = []
    for item in text.split(","):
        if not item.strip():
            continue
        try:
            value = _number(item.strip(), float)
        except argparse.ArgumentTypeError as err:
            raise UserError(f"{what}: {err}") from None
        if not low <= value <= high:
            raise UserError(f"{what}: {value:g} out of range [{low:g}, {high:g}]")
        values.append(value)
    return values


def check_writable(path: Path, what: str) -> None:
    """Refuse an output path that cannot be written, before anything is measured or written."""
    path = Path(path)
    if path.exists() and (path.is_dir() if what == "file" else not path.is_dir()):
        raise UserError(f"{path} exists and is not a {'file' if what == 'file' else 'directory'}")
    probe = path if path.is_dir() else path.parent     # where new files go (an existing file is replaced)
    while not probe.exists():
        probe = probe.parent
    if not probe.is_dir() or not os.access(probe, os.W_OK | os.X_OK):
        raise UserError(f"cannot write {path}: {probe} is not a writable directory")
    try:   # permissions do not tell a read-only mount, or a filesystem like /proc, from a writable one
        with tempfile.TemporaryFile(dir=probe):
            pass
    except OSError as err:
        raise UserError(f"cannot write {path}: {probe} takes no files ({err.strerror})") from None


def mac_address(text: str) -> int:
    """argparse type: aa:bb:cc:dd:ee:ff (or with '-') -> 48-bit integer."""
    parts = text.replace("-", ":").split(":")
    if len(parts) != 6 or not all(len(p) == 2 and all(c in "0123456789abcdefABCDEF" for c in p) for p in parts):
        raise argparse.ArgumentTypeError(f"{text!r} is not a MAC address (aa:bb:cc:dd:ee:ff)")
    return int("".join(parts), 16)


def ip_address(text: str):
    """argparse type: an IPv4 or IPv6 address."""
    import ipaddress

    try:
        return ipaddress.ip_address(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an IPv4 or IPv6 address") from None


def stream_fields(args, tx_port: int, rx_port: int) -> tuple[int | None, dict]:
    """(802.1Q TCI or None, generator address registers) from --vlan/--vlan-pcp/--src-mac/--dst-mac/
    --src-ip/--dst-ip; addresses must be of the stream's protocol."""
    vlan = None if args.vlan is None else (args.vlan_pcp << 13) | args.vlan
    extra = {}
    if args.src_mac is not None:
        extra["cfg_src_mac"] = args.src_mac
    if args.dst_mac is not None:
        extra["cfg_dst_mac"] = args.dst_mac
    version = {"ipv4": 4, "ipv6": 6}.get(args.proto)
    for name, value in (("src", args.src_ip), ("dst", args.dst_ip)):
        if value is None:
            continue
        if version is None:
            raise UserError(f"--{name}-ip: {args.proto} frames carry no IP header")
        if value.version != version:
            raise UserError(f"--{name}-ip: {value} is not an IPv{version} address (--proto {args.proto})")
        extra[f"cfg_{name}_ip"] = int(value)
    if args.proto == "ipv6":     # the receiving port's address, also where it is not the sender's peer
        from fpgatest.tester import ipv6_address

        extra.setdefault("cfg_src_ip", ipv6_address(tx_port))
        extra.setdefault("cfg_dst_ip", ipv6_address(rx_port))
    return vlan, extra


# ---- target ----------------------------------------------------------------------------------------

@contextlib.contextmanager
def open_tester(args):
    """A Tester at --url (the twin, started for this command, when --url is one of TWIN_URLS), its wires
    captured to --capture while the command runs (twin only)."""
    from fpgatest.driver import Device
    from fpgatest.tester import Tester
    from fpgatest.transport import check_url

    if args.url.startswith("twin:") and args.url not in TWIN_URLS:
        raise UserError(f"--url {args.url}: the twin is {', '.join(TWIN_URLS)}")
    if args.url in TWIN_URLS:
        with launched_twin(TWIN_URLS[args.url]) as (url, csr):
            with Device(url, Path(args.csr) if args.csr else csr) as dev:
                with _captured(Tester(dev, kernel=twin_kernel(csr, url)), args, csr, url) as t:
                    yield t
    else:
        check_url(args.url)     # a URL of no transport is said as such, not as a register map not found
        # socket:// is how a running twin serves UARTBone: its map is that of the twin's build it runs
        csr = Path(args.csr) if args.csr else twin_map(args.url) if args.url.startswith("socket://") else BOARD_CSR
        if csr is None:
            raise UserError(f"--csr: which register map? (give the csr.json of the build behind {args.url}; "
                            "a twin's is build/twin/csr.json in its checkout)")
        if csr == BOARD_CSR and not args.csr and not csr.exists():
            raise UserError(f"no register map for {args.url}: the board build's {csr} is not there (make bitstream "
                            "builds it), or give the csr.json of the build on the board with --csr")
        kernel = twin_kernel(csr, args.url) if args.url.startswith("socket://") else None
        with Device(args.url, csr) as dev:
            with _captured(Tester(dev, kernel=kernel), args, csr, args.url) as t:
                yield t


def twin_kernel(csr: Path, url: str) -> dict | None:
    """A twin whose ports go through the Linux kernel: how its launcher set the kernel up ("mode": router
    or bridge, "router": the router's addresses per port), from the kernel.json it leaves in the twin's
    run directory (boards/twin.py, KERNEL_INFO) beside csr.json's build. None for any other target."""
    # anything not as the launcher writes it is no kernel: the echo hint then says what a router and a bridge do
    try:
        info = json.loads((twin_run_dir(csr, url) / "kernel.json").read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(info, dict) or info.get("mode") not in ("router", "bridge"):
        return None
    router = info.get("router")
    if router is None:
        return info
    addresses_ok = isinstance(router, list) and all(
        isinstance(r, dict) and isinstance(r.get("ipv4"), str) and isinstance(r.get("ipv6"), str) for r in router)
    return info if addresses_ok else None


def twin_run_dir(csr: Path, url: str) -> Path:
    """The run directory of the twin serving url (socket://HOST:PORT) from the build of csr.json: where
    its capture taps write and its launcher leaves kernel.json."""
    return csr.parent / f"run-{url.rsplit(':', 1)[-1]}"


def twin_map(url: str) -> Path | None:
    """The csr.json of the checkout's twin build that the twin at url runs (its build id), else the
    default build's (the identity check then says which build id answered)."""
    from fpgatest.driver import CsrMap, Device, MapError, join_words

    built = [path for path in TWIN_CSRS if path.exists()]
    if not built:
        return TWIN_CSRS[0] if TWIN_CSRS else None
    try:
        maps = {path: CsrMap(path) for path in built}
        with Device(url, built[0], check_identity=False) as dev:
            for path, csr in maps.items():     # each map's build id where that map says it is
                reg = csr["tester_build_id"]
                if join_words(dev.bus.read(reg.addr, reg.words)) == csr.build_id:
                    return path
    except MapError:
        pass
    return built[0]


@contextlib.contextmanager
def launched_twin(options: list[str]):
    """Start the checkout's twin launcher (python -m boards.twin --serve) and yield (url, csr.json) from
    the line it prints; stop it at the end, however the command ends. The twin is a process behind a
    URL, as a board is: this package imports nothing from the checkout."""
    if CHECKOUT is None:
        raise UserError("--url twin: no fpgatest checkout to start the twin from (set FPGATEST_ROOT to one), "
                        "or give --url socket://HOST:PORT of a running twin and its --csr")
    python = CHECKOUT / ".venv" / "bin" / "python"
    proc = subprocess.Popen([str(python if python.exists() else sys.executable), "-m", "boards.twin", "--serve",
                             *options],
                            cwd=CHECKOUT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            start_new_session=True)    # its life is this command's: a Ctrl-C goes to us
    try:
        line = proc.stdout.readline()
        served = json.loads(line) if line.startswith("{") else {
            "error": f"the twin launcher ended ({proc.wait()}) without serving: see {CHECKOUT / 'build'}"}
        if "error" in served:
            raise RuntimeError(served["error"])
        yield served["url"], Path(served["csr"])
    finally:
        with contextlib.suppress(OSError):
            proc.stdin.close()        # the launcher also ends when this pipe closes (if we are killed)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)     # the launcher, and a build it may be running
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextlib.contextmanager
def _captured(tester, args, csr: Path, url: str):
    """--capture FILE: the twin's taps on from here to the end of the command (however it ends), then
    FILE written as pcapng (a named pipe: written as the frames come). The taps write into the run
    directory of the twin at url (twin_run_dir)."""
    target = getattr(args, "capture", None)
    if not target:
        yield tester
        return
    from fpgatest.capture import TwinCapture

    target = Path(target)
    capture = TwinCapture(tester, twin_run_dir(csr, url))
    capture.start(target)
    try:
        yield tester
    finally:
        frames = capture.stop(target)
        print(f"fpgatest: {capture.outcome(frames, target)}", file=sys.stderr)


def is_twin(args) -> bool:
    """The device is the twin: started for the command, served on socket://, or reached another way
    (udp:// Etherbone through a TAP) with a register map that has the twin's switch model."""
    if args.url in TWIN_URLS or args.url.startswith("socket://"):
        return True
    try:
        return "dut_ab" in json.loads(Path(args.csr).read_text())["csr_bases"] if args.csr else False
    except (OSError, ValueError, KeyError):
        return False        # (Device reports a bad map in its own words)


def target_text(tester, args) -> str:
    """What a record names as the target: the board's URL, the twin, or the twin through the kernel."""
    if not is_twin(args):
        return args.url
    taps = tester.tap_ports()
    mode = f" ({tester.kernel['mode']})" if tester.kernel else ""
    return f"the twin, the Linux kernel{mode} between ports {', '.join(map(str, taps))}" if taps else "the twin"


def kernel_text(kernel: dict | None) -> str:
    """How the twin's kernel is set up, for fpgatest info: a router and its addresses, or a bridge."""
    if not kernel:
        return ""
    where = f"network namespace {kernel.get('netns', '?')}"
    if kernel["mode"] == "bridge":
        return f"a bridge ({where}), "
    faces = "; ".join(f"{r['ipv4']} and {r['ipv6']} facing port {n}" for n, r in enumerate(kernel["router"]))
    return f"a router ({where}; its addresses {faces}), "


def check_ports(tester, args, receives: bool = True) -> None:
    """--tx-port and --rx-port exist on this tester, the first with a generator and (receives: the
    command counts what arrives there) the second with a receiver; checked before anything is written
    to the tester or printed."""
    for name, port in (("--tx-port", args.tx_port), ("--rx-port", args.rx_port)):
        if not 0 <= port < tester.n_ports:
            raise UserError(f"{name} {port} out of range: this tester has ports 0..{tester.n_ports - 1}")
    if not tester.has(args.tx_port, "tx"):
        raise UserError(f"--tx-port {args.tx_port}: the port has no generator in this build")
    if receives and not tester.has(args.rx_port, "rx"):
        raise UserError(f"--rx-port {args.rx_port}: the port has no receiver in this build")


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


# --dut keys: type and range (the switch model's registers: Q16 times in ticks up to 2^32 / 2^16 ticks)
MAX_MODEL_NS = 524_280.0
DUT_KEYS = {
    "latency_ns": (float, 0.0, MAX_MODEL_NS), "per_byte_ns": (float, 0.0, MAX_MODEL_NS),
    "rate_mbps": (float, 0.016, 1000.0), "ppm": (float, -1000.0, 1000.0),
    "buffer_bytes": (int, 1, 1 << 18), "max_frame": (int, 64, 16383),
    "cable_in_ns": (float, 0.0, MAX_MODEL_NS), "cable_out_ns": (float, 0.0, MAX_MODEL_NS),
    "cut_through": (int, 0, 1), "dither": (int, 0, 1), "enable": (int, 0, 1),
    "cross_mbps": (float, 0.0, 1000.0), "cross_size": (int, 64, 16383), "cross_random": (int, 0, 1),
    # the echo responder's, whatever --dut-path says (fpgatest echo turns it on)
    "echo_delay_ns": (float, 128.0, MAX_MODEL_NS),
}


def parse_dut(items: list[str]) -> dict:
    out = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or key not in DUT_KEYS:
            raise UserError(f"bad --dut {item!r}: use KEY=VALUE with KEY one of {', '.join(DUT_KEYS)}")
        kind, low, high = DUT_KEYS[key]
        try:
            out[key] = bounded(kind, low, high)(value.strip())
        except argparse.ArgumentTypeError as err:
            raise UserError(f"bad --dut {item!r}: {err}") from None
    return out


def apply_dut(tester, args) -> None:
    settings = parse_dut(getattr(args, "dut", None))
    if "echo_delay_ns" in settings:
        tester.echo_set(delay_ns=settings.pop("echo_delay_ns"))
    if not settings:
        return
    paths = ["ab", "ba"] if args.dut_path == "both" else [args.dut_path]
    for path in paths:
        tester.dut_set(path, **settings)


def open_testers(args, opened: contextlib.ExitStack, count: int, check) -> list:
    """`count` testers at --url (more than one: twins, each its own process) entered in `opened`, each
    checked by check(tester) (the command's own conditions: before anything is written to it), then set
    up as every measuring command does (prepare)."""
    testers = []
    for _ in range(count):
        tester = opened.enter_context(open_tester(args))
        check(tester)
        prepare(tester, args, [args.tx_port, args.rx_port])
        testers.append(tester)
    return testers


def prepare(tester, args, ports) -> None:
    """What a measurement does once its checks have passed, before it sends: the links of the ports it
    uses up at 1000/full (unless --ignore-link), then the calibration and the --dut settings written."""
    check_links(tester, args, ports)
    load_calibration(tester, args)
    apply_dut(tester, args)


# ---- commands --------------------------------------------------------------------------------------

def cmd_info(args) -> int:
    with open_tester(args) as t:
        load_calibration(t, args)
        apply_dut(t, args)
        dev = t.dev
        print(f"target      {dev.url}")
        print(f"register map {dev.map.path}  build id {dev.map.build_id:#010x} (matches the gateware)")
        roles = [" and ".join(role for role, side in (("sends", "tx"), ("receives", "rx")) if t.has(i, side))
                 for i in range(t.n_ports)]
        print(f"ports       {t.n_ports}: " + ", ".join(f"port {i} {role}" for i, role in enumerate(roles)))
        links = t.links()
        for i, link in enumerate(links or []):
            print(f"link port {i}: {link.describe()}")
        if links is None:
            print("links       no PHY management in this build (the twin's links are ideal, always 1000/full)")
        if taps := t.tap_ports():
            print(f"dut         the Linux kernel, {kernel_text(t.kernel)}port{'s' if len(taps) > 1 else ''} "
                  f"{', '.join(map(str, taps))} joined to TAP interfaces "
                  f"({'twin:linux-bridge' if (t.kernel or {}).get('mode') == 'bridge' else 'twin:linux'})")
        if eb := t.etherbone():
            print(f"etherbone   {eb['url']} on port {eb['port']} (its frames counted as management, not foreign)")
        snap = t.snapshot()
        print(f"tester time {snap['time_ticks']} ticks ({snap['time_ticks'] * 8e-9:.6f} s)")
        cal = t.calibration()
        print(f"calibration internal {cal['internal_ns']:.1f} ns, cables "
              + ", ".join(f"port {i}: {c:.1f} ns" for i, c in enumerate(cal["cables_ns"])))
        for i, p in enumerate(snap["ports"]):
            sides = [f"{'sending' if p['tx_busy'] else 'idle'}, tx {p['tx_frames']} frames"] if t.has(i, "tx") else []
            if t.has(i, "rx"):
                sides.append(f"rx {p['rx_frames']} frames ({p['test_frames']} test, {p['foreign']} foreign, "
                             + (f"{p['mgmt_frames']} management, " if eb and eb["port"] == i else "")
                             + f"{p['fcs_errors']} bad FCS, {p['runts']} runts, {p['giants']} giants)")
            print(f"port {i}: " + ", ".join(sides))
        if t.has_dut_model:
            for path in t.dut_paths():
                d = t.dut_get(path)
                if not d["enable"]:
                    print(f"dut {path}: a wire (enable=0)")
                    continue
                cross = (f", cross traffic {d['cross_mbps']:.3f} Mb/s of {d['cross_size']} B frames "
                         f"({'Poisson' if d['cross_random'] else 'constant'})" if d["cross_mbps"] else "")
                print(f"dut {path}: {'cut-through' if d['cut_through'] else 'store-and-forward'}, "
                      f"latency {d['latency_ns']:.1f} ns, {d['per_byte_ns']:.3f} ns/B, {d['rate_mbps']:.6g} Mb/s, "
                      f"buffer {d['buffer_bytes']} B, max frame {d['max_frame']} B, cables "
                      f"{d['cable_in_ns']:.1f}/{d['cable_out_ns']:.1f} ns{cross}")
    return 0


def cmd_run(args) -> int:
    from rich.console import Console
    from rich.table import Table

    from fpgatest.driver import TICK_NS
    from fpgatest.measure import SweepPlan, measure_size
    from fpgatest.output import number_text
    from fpgatest.tester import Stream

    vlan, extra = stream_fields(args, args.tx_port, args.rx_port)
    stream = Stream(proto=args.proto, size=args.size, ifg=args.ifg, rate_percent=args.rate, vlan=vlan, extra=extra)
    stream.check()
    duration, interval = durations(args)
    plan = SweepPlan(args.proto, [args.size], args.ifg, args.rate, duration, interval, args.tx_port, args.rx_port,
                     vlan=vlan, extra=extra, hist_scale=args.hist_scale)
    plan.streams()
    console = Console()
    with open_tester(args) as t:
        check_interval(t, plan)
        check_ports(t, args)
        prepare(t, args, [args.tx_port, args.rx_port])
        console.print(f"[bold]{args.proto} {args.size} B[/] port {args.tx_port} -> port {args.rx_port}, "
                      f"{duration} s in {interval} s intervals")
        # an interval holds a whole number of frames: its rate is known to one frame per interval
        console.print(f"{'t (s)':>10} {'rx fps (± 1 frame)':>22} {'line-rate fps':>13} {'min ns':>9} {'mean ns':>9} "
                      f"{'max ns':>9}")

        def show(row):
            rate = f"{row['rx_fps']:.0f} ± {1 / row['duration_s']:.0f}" if row["duration_s"] > 0 else "-"
            console.print(f"{row['t_start_s'] + row['duration_s']:>10.4f} {rate:>22} "
                          f"{row['theoretical_fps']:>13.1f} {number_text(row['latency_min_ns']):>9} "
                          f"{number_text(row['latency_mean_ns']):>9} {number_text(row['latency_max_ns']):>9}")

        record, _ = measure_size(t, plan, stream, None, on_sample=show)
    table = Table(title="result")
    for col in ("tx", "rx", "lost", "reordered", "duplicate", "foreign", "fcs_errors"):
        table.add_column(col, justify="right")
    fr = record["frames"]
    table.add_row(*(str(fr[k]) for k in ("tx", "rx", "lost", "reordered", "duplicate", "foreign", "fcs_errors")))
    console.print(table)
    lat = record["latency_ns"]
    console.print(f"latency min {number_text(lat['min'])} / mean {number_text(lat['mean'])} / "
                  f"max {number_text(lat['max'])} ns (stamps ± {TICK_NS / 2:g} ns)")
    console.print(f"latency stdev {number_text(lat['stdev'])} ± {TICK_NS / 2:g} ns (the stamp error's spread is at most half a tick)")
    console.print(f"drop rate {100 * record['drop_rate']:.4f} % (exact: sequence numbers)")
    return 0


def durations(args) -> tuple[float, float]:
    twin = is_twin(args)
    duration = args.duration if args.duration is not None else (TWIN_DURATION_S if twin else BOARD_DURATION_S)
    interval = args.interval if args.interval is not None else (TWIN_INTERVAL_S if twin else BOARD_INTERVAL_S)
    if duration <= 0 or interval <= 0 or interval > duration:
        raise UserError("need 0 < --interval <= --duration")
    return duration, interval


class Progress:
    """Progress bar over sizes (and their intervals) with ETA, on stderr; the sizes in progress (more
    than one where several twins share them out) in its description."""

    def __init__(self, sizes, intervals_per_size):
        from rich.progress import BarColumn, Progress as RichProgress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

        self.bar = RichProgress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                                TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(), transient=True)
        self.task = self.bar.add_task("sweep", total=len(sizes) * intervals_per_size)
        self.sizes = []

    def __enter__(self):
        self.bar.__enter__()
        return self

    def __exit__(self, *exc):
        self.bar.__exit__(*exc)

    def start_size(self, size):
        self.sizes.append(size)
        self._describe()

    def end_size(self, size):
        self.sizes.remove(size)
        self._describe()

    def _describe(self):
        self.bar.update(self.task, description=", ".join(f"{size:>5} B" for size in sorted(self.sizes)))

    def sample(self, row):
        self.bar.advance(self.task)


def check_interval(t, plan) -> None:
    """--interval within the interval recorder's reach, before the tester is touched."""
    if not t.has_intervals():
        return
    try:
        t.intervals().check_period(plan.interval_ticks())
    except ValueError as err:
        raise UserError(f"--interval {plan.interval_s:g}: {err}") from None


def twin_count(text: str):
    """argparse type of --twins: auto, or 1 to 64."""
    if text == "auto":
        return text
    try:
        return bounded(int, 1, 64)(text)
    except argparse.ArgumentTypeError as err:
        raise argparse.ArgumentTypeError(f"{err} (or auto)") from None


TWINS_HELP = ("twin only: start this many identical twins and measure a size on each at once, at most one a "
              "size (a twin takes a CPU core: more than the machine's cores is slower); auto: one a core where "
              "the command starts the twin, else one")


def twins_for(args, sizes: int) -> int:
    """--twins N: how many twins share a campaign's sizes out (at most one a size), each started for the
    command as --url names it; one twin (the kernel's namespace) for twin:linux, one for --capture
    (a file of one wire). --twins auto: one a CPU core where N twins may be started, else one. Says
    so on stderr when more than one."""
    twins = _twins_for(args, sizes)
    if twins > 1:
        print(f"fpgatest: {twins} twins, a size on each at once", file=sys.stderr)
    return twins


def _twins_for(args, sizes: int) -> int:
    # why this command runs on one twin only, if it does (--twins auto then takes one, a number refuses)
    alone = ("starts that many twins, so --url is a twin this command starts "
             f"({', '.join(TWIN_URLS)}), not {args.url}" if args.url not in TWIN_URLS else
             f"--url {args.url} has one Linux namespace as the device; take --twins 1"
             if args.url.startswith("twin:linux") else
             "--capture writes one twin's wires; take --twins 1" if getattr(args, "capture", None) else None)
    if args.twins == "auto":
        return 1 if alone else max(1, min(os.cpu_count() or 1, sizes))
    if args.twins > 1 and alone:
        raise UserError(f"--twins {args.twins}: {alone}")
    return min(args.twins, sizes)


def cmd_sweep(args) -> int:
    from fpgatest.measure import SweepPlan, parse_sizes, sweep
    from fpgatest.output import ResultsDir, markdown_table, plot
    from fpgatest.tester import min_size

    duration, interval = durations(args)
    vlan, extra = stream_fields(args, args.tx_port, args.rx_port)
    plan = SweepPlan(args.proto, parse_sizes(args.sizes, min_size(args.proto, vlan is not None)), args.ifg,
                     args.rate, duration, interval, args.tx_port, args.rx_port, vlan=vlan, extra=extra,
                     hist_scale=args.hist_scale)
    plan.streams()  # every size checked before the tester is touched (--dut values: in main)
    out = Path(args.out) if args.out else DATA / "results" / time.strftime(f"sweep-{args.proto}-%Y%m%d-%H%M%S")
    check_writable(out, "directory")
    if (out / "samples.csv").exists():
        raise UserError(f"{out} already holds results; choose another --out")
    twins = twins_for(args, len(plan.sizes))

    def checks(tester):
        check_interval(tester, plan)
        check_ports(tester, args)

    with contextlib.ExitStack() as opened:
        testers = open_testers(args, opened, twins, checks)
        # marked stopped until the sweep writes its own record (a stop before the first size)
        results = ResultsDir(out, {"stopped_at": {"size_bytes": None, "finished_sizes": []}})
        intervals = max(1, round(duration / interval))
        try:
            with Progress(plan.sizes, intervals) as progress:
                summary = sweep(testers, plan, results, progress)
        except KeyboardInterrupt as stopped:
            print(f"fpgatest: interrupted; finished sizes are kept in {out}", file=sys.stderr)
            return stopped_status(stopped)
    plot(out, summary, _samples(out))
    print(markdown_table(summary))
    print(f"\nresults: {out}")
    return 0


# RFC 2544 timing: as the RFC asks on a board; short trials in simulated time on the twin
RFC2544_BOARD = {"trial_s": 60.0, "latency_trial_s": 120.0, "latency_trials": 20, "burst_s": 2.0, "burst_trials": 50,
                 "drain_s": 2.0, "resolution_percent": 0.5}
RFC2544_TWIN = {"trial_s": 0.001, "latency_trial_s": 0.001, "latency_trials": 3, "burst_s": 0.0005, "burst_trials": 2,
                "drain_s": 0.0002, "resolution_percent": 1.0}


def cmd_rfc2544(args) -> int:
    from dataclasses import asdict

    from fpgatest.measure import parse_sizes
    from fpgatest.output import write_json_atomic
    from fpgatest.rfc2544 import TESTS, Bench, Rfc2544Plan, TrialLog, path_text, plot, run, tables
    from fpgatest.tester import min_size

    twin = is_twin(args)
    timing = dict(RFC2544_TWIN if twin else RFC2544_BOARD)
    timing.update({k: getattr(args, k) for k in timing if getattr(args, k) is not None})
    vlan, extra = stream_fields(args, args.tx_port, args.rx_port)
    plan = Rfc2544Plan(args.proto, parse_sizes(args.sizes, min_size(args.proto, vlan is not None)),
                       [(args.tx_port, args.rx_port)], accept_loss_percent=args.accept_loss_percent,
                       loss_step_percent=args.loss_step_percent, learning_frames=args.learning_frames,
                       vlan=vlan, extra=extra, hist_scale=args.hist_scale, **timing)
    plan.check()
    tests = list(TESTS) if args.test == "all" else [args.test]
    out = Path(args.out) if args.out else DATA / "results" / time.strftime(f"rfc2544-{args.test}-%Y%m%d-%H%M%S")
    check_writable(out, "directory")
    if (out / "trials.csv").exists():
        raise UserError(f"{out} already holds results; choose another --out")
    note = (f"twin, simulated time: trials of {plan.trial_s:g} s, latency {plan.latency_trials} × "
            f"{plan.latency_trial_s:g} s, bursts up to {plan.burst_s:g} s × {plan.burst_trials} (RFC 2544 asks "
            f"60 s, 20 × 120 s, 2 s × 50: use them on a board)" if twin else
            f"trials of {plan.trial_s:g} s, latency {plan.latency_trials} × {plan.latency_trial_s:g} s, bursts up to "
            f"{plan.burst_s:g} s × {plan.burst_trials}")
    # the groups of flows and sizes the twins share out: each direction's sizes, or both at once
    twins = twins_for(args, len(plan.sizes) * (1 if args.directions in ("one", "bidirectional") else 2))
    with contextlib.ExitStack() as opened:
        testers = [opened.enter_context(open_tester(args)) for _ in range(twins)]
        t = testers[0]
        check_ports(t, args)
        back = (args.rx_port, args.tx_port)
        both_ways = t.has(back[0], "tx") and t.has(back[1], "rx")
        if args.directions == "bidirectional" and not both_ways:
            raise UserError(f"--directions bidirectional: this build cannot send on port {back[0]} and receive on "
                            f"port {back[1]}")
        if args.directions != "one" and both_ways:
            plan.directions.append(back)
            plan.bidirectional = args.directions == "bidirectional"
        one_way = (f"{args.rx_port}→{args.tx_port} not tested: this build cannot send on port {back[0]} and "
                   f"receive on port {back[1]}" if args.directions == "both" and not both_ways else None)
        for tester in testers:
            prepare(tester, args, [args.tx_port, args.rx_port])
        meta = {"command": "rfc2544", "target": target_text(t, args), "proto": args.proto, "trial_note": note,
                **({"directions_note": one_way} if one_way else {}),
                "plan": asdict(plan), "build_id": t.dev.map.build_id, "calibration": t.calibration(),
                **({"twins": twins} if twins > 1 else {}), "time_unix": time.time()}
        out.mkdir(parents=True, exist_ok=True)
        write_json_atomic(out / "run.json", {**meta, "stopped": True})   # until the run ends
        log = TrialLog(out / "trials.csv")

        def show(row):
            print(f"fpgatest: {row['test']} {path_text(row)} {row['size_bytes']} B at "
                  f"{row['rate_percent']:.3f} %: {row['tx_frames']} sent, {row['lost']} lost", file=sys.stderr)

        try:
            results = run([Bench(tester, plan, log, on_trial=show) for tester in testers], tests, out, meta)
        except KeyboardInterrupt as stopped:
            print(f"fpgatest: interrupted; the trials so far are kept in {out}", file=sys.stderr)
            return stopped_status(stopped)
        finally:
            log.close()
    return _finish(out, meta, results, tables, plot)


def _finish(out: Path, meta: dict, results, report, plot) -> int:
    """The end every measuring command shares: run.json (no longer marked stopped), report.md from
    report(results), plot(out, results), the report printed."""
    from fpgatest.output import write_json_atomic, write_text_atomic

    write_json_atomic(out / "run.json", meta)
    text = report(results)
    write_text_atomic(out / "report.md", text)
    plot(out, results)
    print(text)
    print(f"results: {out}")
    return 0


PROBE_DRAIN_S = {"twin": 0.0002, "board": 0.01}


def _results_dir(args, name: str, marker: str) -> Path:
    out = Path(args.out) if args.out else DATA / "results" / time.strftime(f"{name}-%Y%m%d-%H%M%S")
    check_writable(out, "directory")
    if (out / marker).exists():
        raise UserError(f"{out} already holds results; choose another --out")
    return out


def _probe_args(args, *size_flags: str) -> tuple[int | None, dict, int, float]:
    """What every probe command takes from the common options: (VLAN tag, address registers, the
    smallest frame of the protocol, the drain time); each of size_flags refused below that frame."""
    from fpgatest.tester import min_size

    vlan, extra = stream_fields(args, args.tx_port, args.rx_port)
    low = min_size(args.proto, vlan is not None)
    for flag in size_flags:
        size = getattr(args, flag.lstrip("-").replace("-", "_"))
        if size < low:
            raise UserError(f"{flag} {size} below the smallest {args.proto} frame ({low} bytes)")
    drain_s = args.drain if args.drain is not None else PROBE_DRAIN_S["twin" if is_twin(args) else "board"]
    return vlan, extra, low, drain_s


def _probe_session(args, out: Path, meta: dict, measure, report, plot, receives: bool = True,
                   check=None, units: int = 0) -> int:
    """Open the tester, check it can do what is asked (check(tester): the method's own conditions),
    set it up as every measuring command does, mark run.json stopped until the end, run
    measure(tester) (what was measured is kept when stopped), then write report.md from
    report(results), plot(out, results), and print the report. receives: --rx-port counts what arrives
    (not for echo, whose replies come back to --reply-port). units > 0: a method of that many
    independent units (owd's sizes) that --twins may share out: measure(testers) takes the list of
    testers opened, one or more, each checked and set up alike."""
    from fpgatest.output import write_json_atomic

    twins = twins_for(args, units) if units else 1

    def checks(tester):
        check_ports(tester, args, receives)
        if check:
            check(tester)

    with contextlib.ExitStack() as opened:
        testers = open_testers(args, opened, twins, checks)
        t = testers[0]
        meta.update({"target": target_text(t, args), "build_id": t.dev.map.build_id,
                     "calibration": t.calibration(), **({"twins": twins} if twins > 1 else {}),
                     "time_unix": time.time()})
        if t.has_dut_model:
            meta["dut"] = {p: t.dut_get(p) for p in t.dut_paths()}
        out.mkdir(parents=True, exist_ok=True)
        write_json_atomic(out / "run.json", {**meta, "stopped": True})
        try:
            results = measure(testers if units else t)
        except KeyboardInterrupt as stopped:
            print(f"fpgatest: interrupted; what was measured is kept in {out}", file=sys.stderr)
            return stopped_status(stopped)
    return _finish(out, meta, results, report, plot)


def cmd_owd(args) -> int:
    from dataclasses import asdict

    from fpgatest.measure import parse_sizes
    from fpgatest.output import number_text
    from fpgatest.probes import OwdPlan, owd, owd_plot, owd_report, random_sizes

    vlan, extra, low, drain_s = _probe_args(args, *(["--pair-size"] if args.per_hop else []))
    if args.sizes:
        sizes = parse_sizes(args.sizes, low)
    else:
        if args.max_size < low:
            raise UserError(f"--max-size {args.max_size} below the smallest {args.proto} probe ({low} bytes)")
        sizes = random_sizes(args.random, low, args.max_size, args.seed)
    plan = OwdPlan(args.proto, sizes, probes=args.probes, spacing_us=args.spacing_us, drain_s=drain_s, vlan=vlan,
                   extra=extra, hop_pairs=args.pairs if args.per_hop else 0, pair_size=args.pair_size)
    plan.check()
    alpha = _alpha_from(Path(args.alpha_from)) if args.alpha_from else None
    out = _results_dir(args, "owd", "probes.csv")

    def show(row):
        print(f"fpgatest: {row['size_bytes']} B: {row['received']}/{row['probes']} probes, min one-way delay "
              f"{number_text(row['owd_min_ns'])} ns", file=sys.stderr)

    return _probe_session(args, out, {"command": "owd", "proto": args.proto, "plan": asdict(plan)},
                          lambda testers: owd(testers, plan, args.tx_port, args.rx_port, out, alpha, on_size=show),
                          owd_report, owd_plot, units=len(sizes))


def _alpha_from(path: Path) -> dict:
    """The fit of an earlier owd run over a cable (or any reference path): its slope is alpha."""
    try:
        fit = json.loads((path / "results.json").read_text())["fit"]
        alpha = {k: fit[k] for k in ("slope_ns_per_byte", "slope_se", "slope_resolution")}
        if not isinstance(alpha["slope_ns_per_byte"], (int, float)) or not math.isfinite(alpha["slope_ns_per_byte"]):
            raise ValueError("it has no slope")
        if alpha["slope_se"] is not None and not isinstance(alpha["slope_se"], (int, float)):
            raise ValueError("slope_se is not a number")
        if not isinstance(alpha["slope_resolution"], (int, float)) or not math.isfinite(alpha["slope_resolution"]):
            raise ValueError("slope_resolution is not a number")
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise UserError(f"--alpha-from {path}: not an owd results directory ({err})") from None
    return {**alpha, "from": str(path)}


def cmd_pairs(args) -> int:
    from dataclasses import asdict

    from fpgatest.probes import PairsPlan, pairs, pairs_check, pairs_plot, pairs_report

    vlan, extra, _, drain_s = _probe_args(args, "--size", "--capacity-size")
    plan = PairsPlan(args.proto, size=args.size, capacity_size=args.capacity_size, pairs=args.pairs,
                     pair_spacing_us=args.spacing_us, window=args.window, probe_load=args.probe_load,
                     drain_s=drain_s, vlan=vlan, extra=extra)
    plan.check()
    tcp = {"rtt_s": args.rtt_ms / 1000 if args.rtt_ms is not None else None, "window_bytes": args.window_bytes,
           "mss_bytes": args.mss, "acked_per_ack": args.acked_per_ack, "rto_s": args.rto_ms / 1000}
    if tcp["window_bytes"] < tcp["mss_bytes"]:
        raise UserError(f"--window-bytes {args.window_bytes} below one --mss ({args.mss} bytes)")
    out = _results_dir(args, "pairs", "pairs.csv")
    return _probe_session(args, out, {"command": "pairs", "proto": args.proto, "plan": asdict(plan), "tcp": tcp},
                          lambda t: pairs(t, plan, args.tx_port, args.rx_port, out, tcp), pairs_report, pairs_plot,
                          check=lambda t: pairs_check(t, args.tx_port, args.rx_port, tcp))


def cmd_availbw(args) -> int:
    from dataclasses import asdict

    from fpgatest.probes import AvailPlan, a_cur_text, availbw, availbw_plot, availbw_report

    vlan, extra, _, drain_s = _probe_args(args, "--size")
    plan = AvailPlan(args.proto, size=args.size, frames=args.frames, streams=args.streams, rounds=args.rounds,
                     gamma=args.gamma, history=args.history, drain_s=drain_s, vlan=vlan, extra=extra)
    plan.check()
    out = _results_dir(args, "availbw", "rounds.csv")

    def show(rnd, r):
        print(f"fpgatest: round {rnd}: {r['lo_mbps']:.1f}…{r['hi_mbps']:.1f} Mb/s, A {a_cur_text(r)}, "
              f"smoothed {r['a_smoothed_mbps']:.1f} Mb/s", file=sys.stderr)

    return _probe_session(args, out, {"command": "availbw", "proto": args.proto, "plan": asdict(plan)},
                          lambda t: availbw(t, plan, args.tx_port, args.rx_port, out, on_round=show),
                          availbw_report, availbw_plot)


ECHO_DEFAULTS = {"twin": {"duration_s": 0.01, "interval_s": 0.002}, "board": {"duration_s": 10.0, "interval_s": 1.0}}


def cmd_echo(args) -> int:
    from dataclasses import asdict

    from fpgatest.output import number_text
    from fpgatest.probes import EchoPlan, echo, echo_check, echo_plot, echo_report

    # addresses default as for a stream to --rx-port; the replies are counted on --reply-port, by
    # default the sending port
    reply_port = args.tx_port if args.reply_port is None else args.reply_port
    vlan, extra, _, drain_s = _probe_args(args, "--size")
    if args.proto not in ("ipv4", "ipv6"):
        raise UserError(f"--proto {args.proto}: ICMP echo needs ipv4 or ipv6")
    defaults = ECHO_DEFAULTS["twin" if is_twin(args) else "board"]
    window = args.window if args.window_bytes is None else args.window_bytes // args.size
    if args.window_bytes is not None and window < 1:
        raise UserError(f"--window-bytes {args.window_bytes} holds no {args.size}-byte frame")
    if args.reno and window < 1:
        raise UserError("--reno needs a window (--window or --window-bytes) of at least one frame")
    plan = EchoPlan(args.proto, size=args.size, window=window,
                    window_max=(args.window_max or max(window, 1024)) if args.reno else 0,
                    rate_percent=args.rate, pings=args.pings,
                    duration_s=args.duration if args.duration is not None else defaults["duration_s"],
                    interval_s=args.interval if args.interval is not None else defaults["interval_s"],
                    timeout_s=args.timeout_us / 1e6 if args.timeout_us is not None else None,
                    loads_mbps=_load_levels(args.load), load_size=args.load_size, load_random=args.load_random,
                    load_port=args.load_port, reflector=args.reflector,
                    drain_s=drain_s, vlan=vlan, extra=extra)
    plan.check()
    out = _results_dir(args, "echo", "intervals.csv")

    def show(lv):
        print(f"fpgatest: load {lv['load_mbps']:g} Mb/s: {lv['replies']}/{lv['sent']} replies, "
              f"{number_text(lv['throughput_mbps'], '.2f')} Mb/s, RTT mean {number_text(lv['rtt']['mean'], '.0f')} ns, "
              f"window {lv['cwnd']}", file=sys.stderr)

    return _probe_session(args, out, {"command": "echo", "proto": args.proto, "plan": asdict(plan)},
                          lambda t: echo(t, plan, args.tx_port, reply_port, out, on_level=show),
                          echo_report, echo_plot, receives=False,
                          check=lambda t: echo_check(t, plan, args.tx_port, reply_port))


def _load_levels(text: str) -> list[float]:
    try:
        levels = [float(x) for x in text.split(",")]
    except ValueError:
        raise UserError(f"--load {text!r}: a comma-separated list of Mb/s") from None
    bad = [x for x in levels if not (math.isfinite(x) and 0 <= x <= 1000)]
    if bad or not levels:
        raise UserError(f"--load {text!r}: each level 0..1000 Mb/s")
    return levels


def _samples(out: Path) -> list[dict]:
    from fpgatest.output import load

    return load(out)[1]


# what report re-renders for each measuring command but sweep: (module, report(results) -> text, plot(dir, results))
METHOD_REPORTS = {"rfc2544": ("fpgatest.rfc2544", "tables", "plot"),
                  "owd": ("fpgatest.probes", "owd_report", "owd_plot"),
                  "pairs": ("fpgatest.probes", "pairs_report", "pairs_plot"),
                  "availbw": ("fpgatest.probes", "availbw_report", "availbw_plot"),
                  "echo": ("fpgatest.probes", "echo_report", "echo_plot")}


def cmd_report(args) -> int:
    from fpgatest.measure import summarize
    from fpgatest.output import load, markdown_table, plot, write_json_atomic

    path = Path(args.dir)
    if not (path / "samples.csv").exists() and (path / "results.json").exists():
        return _report_method(path)
    meta, samples, sizes = load(path)
    if not sizes:
        raise UserError(f"{path} holds no finished size")
    try:
        summary = summarize(meta, samples, sizes)
    except (KeyError, TypeError, ValueError, ZeroDivisionError) as err:
        raise UserError(f"cannot read results in {path}: a record lacks or garbles {err}") from None
    write_json_atomic(path / "summary.json", summary)
    plot(path, summary, samples)
    print(markdown_table(summary))
    if "stopped_at" in meta:
        print(f"\nnote: the run stopped early: {meta['stopped_at']}")
    return 0


def _report_method(path: Path) -> int:
    """report on the results of rfc2544, owd, pairs, availbw or echo: report.md and the plots again from
    results.json, with this version's tables (the figures are not measured again)."""
    import importlib

    from fpgatest.output import write_text_atomic

    try:
        meta = json.loads((path / "run.json").read_text())
        results = json.loads((path / "results.json").read_text())
        if not isinstance(meta, dict) or not isinstance(results, dict):
            raise ValueError("run.json or results.json is not a record")
    except (OSError, ValueError) as err:
        raise UserError(f"cannot read results in {path}: {err}") from None
    # rfc2544's run.json named no command before it did
    command = meta.get("command") or ("rfc2544" if "tests" in results else None)
    if command not in METHOD_REPORTS:
        raise UserError(f"cannot read results in {path}: run.json names no command that writes results.json "
                        f"({command!r}; these are {', '.join(['sweep', *METHOD_REPORTS])})")
    module, report, plot = METHOD_REPORTS[command]
    module = importlib.import_module(module)
    try:
        text = getattr(module, report)(results)
        getattr(module, plot)(path, results)
    except (KeyError, TypeError, ValueError, ZeroDivisionError, IndexError) as err:
        raise UserError(f"cannot read results in {path}: a record lacks or garbles {err}") from None
    write_text_atomic(path / "report.md", text)
    print(text)
    if meta.get("stopped"):
        print("\nnote: the run stopped early: the results hold what was measured until then")
    return 0


def cmd_calibrate(args) -> int:
    from fpgatest.measure import apply_calibration, calibrate
    from fpgatest.output import write_json_atomic

    lengths = number_list(args.cables, "--cables (m)", 0.0, MAX_CABLE_M)
    port_cables = number_list(args.port_cables, "--port-cables (m)", 0.0, MAX_CABLE_M) if args.port_cables else None
    if len(lengths) < 2 or len(set(lengths)) < 2:
        raise UserError("calibration needs at least two different cable lengths (--cables)")
    out = Path(args.out) if args.out else DEFAULT_CALIBRATION
    check_writable(out, "file")

    def ask(length):
        if not sys.stdin.isatty():
            raise UserError("on a board, calibration asks to swap cables: run it in a terminal")
        input(f"connect port {args.tx_port} to port {args.rx_port} with the {length} m cable, then press Enter ")

    with open_tester(args) as t:
        check_ports(t, args)
        port_cables = port_cables if port_cables is not None else [0.0] * t.n_ports
        if len(port_cables) != t.n_ports:
            raise UserError(f"--port-cables: need one length per port ({t.n_ports}), got {len(port_cables)}")
        check_links(t, args, range(t.n_ports))
        cal = calibrate(t, lengths, args.frames, ask=ask)
        cables_ns = apply_calibration(t, cal, port_cables)
    cal.update({"port_cables_m": port_cables, "cables_ns": cables_ns})
    out.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(out, cal)
    print("| cable (m) | latency (ns) |\n|---:|---:|")
    for p in cal["points"]:
        print(f"| {p['length_m']:g} | {p['latency_ns']:.2f} |")
    def se(v, spec):
        return "± n/a with two cables" if v is None else f"± {v:{spec}}"

    print(f"\nt(L) = {cal['ns_per_m']:.4f} ns/m ({se(cal['ns_per_m_se'], '.4f')}) × L + {cal['internal_ns']:.2f} ns "
          f"({se(cal['internal_ns_se'], '.2f')})")
    print(f"signal speed {cal['signal_speed_m_per_s']:.4g} m/s = {100 * cal['velocity_factor']:.1f} % of c")
    print(f"written: internal delay {cal['internal_ns']:.2f} ns, port cables "
          + ", ".join(f"{c:.2f} ns" for c in cables_ns) + f"; calibration file {out}")
    return 0


def cmd_reflect(args) -> int:
    if args.url in TWIN_URLS:
        raise UserError("reflect: the reflector stays on in a running tester: give --url of a board or of a "
                        "running twin (make twin); 'fpgatest echo --reflector PORT' uses one within a command")
    ip4 = [a for a in args.ip if a.version == 4]
    ip6 = [a for a in args.ip if a.version == 6]
    if len(ip4) > 1 or len(ip6) > 1:
        raise UserError("reflect: --ip takes the port's one IPv4 and one IPv6 address at most")
    if args.off and (args.ip or args.neighbours_only):
        raise UserError("reflect --off: no --ip or --neighbours-only with it")
    if args.neighbours_only and not args.ip:
        raise UserError("reflect --neighbours-only: give the port's address with --ip")
    ip4, ip6 = (ip4 or [None])[0], (ip6 or [None])[0]
    with open_tester(args) as t:
        t.reflect(args.port, not args.off, ip4=ip4, ip6=ip6, frames=not args.neighbours_only)
        mac = int(t.dev.map.constants[f"fpgatest_port{args.port}_mac"])
        mac_text = ":".join(f"{b:02x}" for b in mac.to_bytes(6, "big"))
        parts = [] if args.neighbours_only else \
            [f"frames to {mac_text} (up to {t.reflector_bytes(args.port)} bytes) go back out of it"]
        parts += [f"ARP for {ip4} answered ({mac_text})"] if ip4 else []
        parts += [f"neighbour solicitations for {ip6} answered ({mac_text})"] if ip6 else []
        state = "off" if args.off else "on: " + "; ".join(parts)
        print(f"fpgatest: port {args.port} reflector {state}")
    return 0


def cmd_dut(args) -> int:
    with open_tester(args) as t:
        if missing := t.dut_model_missing():
            raise UserError(f"dut: {missing}")
        apply_dut(t, args)
        for path in t.dut_paths():
            print(f"{path}: " + json.dumps(t.dut_get(path)))
        if t.has_echo_model:
            print("echo: " + json.dumps(t.echo_get()))
    return 0


# ---- parser -----------------------------------------------------------------------------------------

class Parser(argparse.ArgumentParser):
    """argparse with the house error format: one line, exit status 2."""

    def error(self, message):
        raise UserError(message)


def build_parser() -> argparse.ArgumentParser:
    fmt_cls = argparse.ArgumentDefaultsHelpFormatter
    p = Parser(prog="fpgatest", description=__doc__, formatter_class=fmt_cls)
    p.add_argument("--version", action="version", version=f"fpgatest {__version__}")
    common = Parser(add_help=False)
    common.add_argument("--url", default="twin",
                        help="'twin' (start the digital twin, built as the 5A-75B is: port 0 sends, port 1 "
                             "receives), 'twin:full' (both directions on both ports, reflectors), 'twin:linux' or "
                             "'twin:linux-bridge' (the full twin with the Linux kernel routing or bridging as the "
                             "device under test: root), /dev/ttyUSB0 (board UART), "
                             "socket://HOST:PORT (a running twin) or udp://IP[:PORT] (Etherbone)")
    common.add_argument("--csr", default=None,
                        help="csr.json of the build (default: the twin's for 'twin' and socket://, else the board's)")
    common.add_argument("--calibration", default=None,
                        help=f"calibration file to apply (default {DEFAULT_CALIBRATION} if present; 'none' for none)")
    common.add_argument("--tx-port", type=bounded(int, 0, 255), default=0, help="sending port")
    common.add_argument("--rx-port", type=bounded(int, 0, 255), default=1, help="receiving port")
    common.add_argument("--ignore-link", action="store_true",
                        help="measure even when a port's PHY reports no link at 1000 Mb/s full duplex (experts)")
    common.add_argument("--capture", default=None, metavar="FILE",
                        help="twin only: write every frame on both ports' wires, both directions, to FILE as "
                             "pcapng (timestamps: the tester's clock, ns); a named pipe is written live "
                             "(mkfifo PIPE; wireshark -k -i PIPE)")
    common.add_argument("--dut", action="append", metavar="KEY=VALUE",
                        help="twin only: set the switch model first, e.g. latency_ns=2000, rate_mbps=500, "
                             "buffer_bytes=16384, cut_through=1 (repeatable)")
    common.add_argument("--dut-path", default="ab", choices=["ab", "ab2", "ba", "both"],
                        help="which path of the switch model --dut sets (ab = port 0 -> 1, ab2 = its second "
                             "hop, a wire until enable=1; ba = back; both = ab and ba)")
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("info", parents=[common], formatter_class=fmt_cls,
                       help="identity, ports, counters, calibration in force")
    s.set_defaults(func=cmd_info)

    frame_opts = Parser(add_help=False)
    frame_opts.add_argument("--proto", default="ipv4", choices=["eth", "ipv4", "ipv6"], help="protocol")
    frame_opts.add_argument("--vlan", type=bounded(int, 0, 4095), default=None, metavar="VID",
                            help="insert an 802.1Q tag with this VLAN id")
    frame_opts.add_argument("--vlan-pcp", type=bounded(int, 0, 7), default=0, help="the tag's priority (PCP)")
    frame_opts.add_argument("--src-mac", type=mac_address, default=None, help="source MAC (default: the port's)")
    frame_opts.add_argument("--dst-mac", type=mac_address, default=None,
                            help="destination MAC (default: the other port's)")
    frame_opts.add_argument("--src-ip", type=ip_address, default=None,
                            help="source address, IPv4 or IPv6 as --proto (default: 192.168.<port>.1, or "
                                 "2001:db8:0:<port>::1 for IPv6)")
    frame_opts.add_argument("--dst-ip", type=ip_address, default=None,
                            help="destination address (default: the receiving port's, as --src-ip)")
    hist_opts = Parser(add_help=False)
    hist_opts.add_argument("--hist-scale", choices=("auto", "linear", "log"), default="auto",
                           help="the latency histogram's 64 bins (percentiles): linear over the latency range, "
                                "or logarithmic (four bins an octave from just below the minimum, each at most a "
                                "quarter of its distance from it wide); auto takes log for a heavy tail (the mean "
                                "in the first 1/16 of the range)")
    stream_opts = Parser(add_help=False, parents=[frame_opts, hist_opts])
    stream_opts.add_argument("--ifg", type=bounded(int, 12, MAX_U32, unit=" bytes"), default=12,
                             help="inter-frame gap in bytes (>= 12 = 96 ns)")
    stream_opts.add_argument("--rate", type=bounded(float, 0.0, 100.0, low_open=True, unit=" %"), default=None,
                             help="average rate in percent of line rate instead of --ifg")
    stream_opts.add_argument("--duration", type=bounded(float, 0.0, MAX_DURATION_S, low_open=True, unit=" s"),
                             default=None,
                             help=f"seconds per size (default {BOARD_DURATION_S} on a board, "
                                  f"{TWIN_DURATION_S} simulated on the twin)")
    stream_opts.add_argument("--interval", type=bounded(float, 0.0, MAX_DURATION_S, low_open=True, unit=" s"),
                             default=None,
                             help=f"seconds per sample (default {BOARD_INTERVAL_S} on a board, "
                                  f"{TWIN_INTERVAL_S} simulated on the twin)")

    s = sub.add_parser("run", parents=[common, stream_opts], formatter_class=fmt_cls,
                       help="one stream with a live per-interval table")
    s.add_argument("--size", type=bounded(int, 64, 16383, unit=" bytes"), default=64,
                   help="frame size in bytes incl. FCS")
    s.set_defaults(func=cmd_run)

    s = sub.add_parser("sweep", parents=[common, stream_opts], formatter_class=fmt_cls,
                       help="latency and drops per frame size, with fits (the thesis method)")
    s.add_argument("--sizes", default="rfc2544", help="rfc2544 | 64,128,... | START:STOP:STEP (bytes)")
    s.add_argument("--out", default=None, help="results directory (default build/results/sweep-PROTO-TIME)")
    s.add_argument("--twins", type=twin_count, default=1, metavar="N|auto", help=TWINS_HELP)
    s.set_defaults(func=cmd_sweep)

    s = sub.add_parser("rfc2544", parents=[common, frame_opts, hist_opts], formatter_class=fmt_cls,
                       help="RFC 2544 benchmarks: throughput, latency, frame loss rate, back-to-back frames")
    s.add_argument("test", choices=["throughput", "latency", "loss", "back-to-back", "all"],
                   help="which benchmark (latency measures the throughput first: it runs at that rate)")
    s.add_argument("--sizes", default="rfc2544", help="rfc2544 | 64,128,... | START:STOP:STEP (bytes)")
    s.add_argument("--directions", default="both", choices=["one", "both", "bidirectional"],
                   help="tx-port -> rx-port only; also back, one way after the other, where the build can send "
                        "and receive both ways; or bidirectional: both ways at once, the same load offered each "
                        "way, a trial passing only if both do (RFC 2544 section 14)")
    seconds = bounded(float, 0.0, MAX_DURATION_S, low_open=True, unit=" s")
    for flag, key, help_text in (
            ("--trial", "trial_s", "seconds per throughput and loss trial"),
            ("--latency-trial", "latency_trial_s", "seconds per latency trial"),
            ("--burst", "burst_s", "longest back-to-back burst tried, in seconds of line rate"),
            ("--drain", "drain_s", "seconds to wait for residual frames after a trial")):
        s.add_argument(flag, dest=key, type=seconds, default=None,
                       help=f"{help_text} (default {RFC2544_BOARD[key]:g} on a board as RFC 2544 asks, "
                            f"{RFC2544_TWIN[key]:g} simulated on the twin)")
    for flag, key, help_text in (("--latency-trials", "latency_trials", "latency trials per size, averaged"),
                                 ("--burst-trials", "burst_trials", "back-to-back repetitions per size, averaged")):
        s.add_argument(flag, dest=key, type=bounded(int, 1, 100_000), default=None,
                       help=f"{help_text} (default {RFC2544_BOARD[key]} on a board, {RFC2544_TWIN[key]} on the twin)")
    s.add_argument("--resolution", dest="resolution_percent", default=None,
                   type=bounded(float, 0.0, 50.0, low_open=True, unit=" %"),
                   help=f"throughput search resolution in %% of line rate (default {RFC2544_BOARD['resolution_percent']:g} "
                        f"on a board, {RFC2544_TWIN['resolution_percent']:g} on the twin)")
    s.add_argument("--accept-loss", dest="accept_loss_percent", default=0.0,
                   type=bounded(float, 0.0, 99.0, unit=" %"),
                   help="throughput: the loss a trial may have and still pass (0 = RFC 2544; > 0 = partial-drop rate)")
    s.add_argument("--loss-step", dest="loss_step_percent", default=10.0,
                   type=bounded(float, 0.0, 10.0, low_open=True, unit=" %"),
                   help="frame loss rate: step of offered load from 100 %% down (RFC: at most 10 %%)")
    s.add_argument("--learning-frames", type=bounded(int, 0, 1_000_000), default=16,
                   help="frames sent from the receiving port before a size's trials (address learning)")
    s.add_argument("--out", default=None, help="results directory (default build/results/rfc2544-TEST-TIME)")
    s.add_argument("--twins", type=twin_count, default=1, metavar="N|auto", help=TWINS_HELP)
    s.set_defaults(func=cmd_rfc2544)

    probe_opts = Parser(add_help=False, parents=[frame_opts])
    probe_opts.add_argument("--spacing-us", type=bounded(float, 1.0, 30_000_000.0, unit=" us"), default=100.0,
                            help="probe (or pair) spacing, preamble to preamble, in microseconds: long enough "
                                 "for the path to empty between probes")
    probe_opts.add_argument("--drain", type=bounded(float, 0.0, MAX_DURATION_S, low_open=True, unit=" s"), default=None,
                            help=f"seconds to wait for late frames after a run (default {PROBE_DRAIN_S['board']:g} on "
                                 f"a board, {PROBE_DRAIN_S['twin']:g} simulated on the twin)")
    probe_opts.add_argument("--out", default=None, help="results directory (default build/results/COMMAND-TIME)")

    s = sub.add_parser("owd", parents=[common, probe_opts], formatter_class=fmt_cls,
                       help="bandwidth from the one-way delay over probe size (one-packet method, seed 000)")
    s.add_argument("--sizes", default=None, help="probe sizes 64,128,... | START:STOP:STEP (default: --random)")
    s.add_argument("--random", type=bounded(int, 2, 10_000), default=16,
                   help="this many distinct random sizes up to --max-size, in random order (default 16)")
    s.add_argument("--max-size", type=bounded(int, 64, 16383, unit=" bytes"), default=1518,
                   help="largest random probe size (default 1518)")
    s.add_argument("--seed", type=bounded(int, 0, MAX_U32), default=1, help="seed of the random sizes")
    s.add_argument("--probes", type=bounded(int, 1, 512), default=10, help="probes per size (the minimum is kept)")
    s.add_argument("--alpha-from", default=None, metavar="DIR",
                   help="an owd results directory of a cable-only run: its slope (the tester's own delay "
                        "increase rate, alpha) is removed")
    s.add_argument("--per-hop", action="store_true",
                   help="after the sizes, back-to-back pairs give the narrowest link's rate (seed 001); the rest "
                        "of the slope is the other store-and-forward hops' (one hop: its rate)")
    s.add_argument("--pairs", type=bounded(int, 1, 256), default=100, help="--per-hop: pairs (at most 256)")
    s.add_argument("--pair-size", type=bounded(int, 64, 16383, unit=" bytes"), default=1518,
                   help="--per-hop: pair frame size (the longer the pair, the finer the rate)")
    s.add_argument("--twins", type=twin_count, default=1, metavar="N|auto", help=TWINS_HELP)
    s.set_defaults(func=cmd_owd)

    s = sub.add_parser("pairs", parents=[common, probe_opts], formatter_class=fmt_cls,
                       help="bottleneck capacity and utilisation from packet pairs, and the TCP model (seed 001)")
    s.add_argument("--size", type=bounded(int, 64, 16383, unit=" bytes"), default=1518,
                   help="utilisation probe size (default 1518: a long probe samples more cross traffic)")
    s.add_argument("--capacity-size", type=bounded(int, 64, 16383, unit=" bytes"), default=64,
                   help="capacity probe size (default 64: a short pair is rarely split by cross traffic)")
    s.add_argument("--pairs", type=bounded(int, 1, 256), default=200, help="pairs per phase (at most 256)")
    s.add_argument("--window", type=bounded(float, 0.0, 1.0, low_open=True), default=0.95,
                   help="utilisation pairs: input spacing as a fraction of one probe's time on the bottleneck")
    s.add_argument("--probe-load", type=bounded(float, 0.0, 0.5, low_open=True), default=0.1,
                   help="utilisation pairs take at most this share of the bottleneck (they are spaced further apart "
                        "than --spacing-us when needed)")
    s.add_argument("--rtt-ms", type=bounded(float, 0.0, 100_000.0, low_open=True, unit=" ms"), default=None,
                   help="RTT for the TCP model (default: measured, one-way there and back)")
    s.add_argument("--window-bytes", type=bounded(int, 1, 1 << 30, unit=" bytes"), default=65535,
                   help="TCP receive window (the socket buffer) for the model")
    s.add_argument("--mss", type=bounded(int, 1, 65535, unit=" bytes"), default=1460, help="TCP segment size")
    s.add_argument("--acked-per-ack", type=bounded(int, 1, 64), default=2, help="segments acknowledged per ACK (b)")
    s.add_argument("--rto-ms", type=bounded(float, 0.0, 100_000.0, low_open=True, unit=" ms"), default=200.0,
                   help="TCP retransmission timeout T0 for the model")
    s.set_defaults(func=cmd_pairs)

    s = sub.add_parser("availbw", parents=[common, probe_opts], formatter_class=fmt_cls,
                       help="available bandwidth by probe streams over rounds (ImTCP, seed 003)")
    s.add_argument("--size", type=bounded(int, 64, 16383, unit=" bytes"), default=1518, help="probe frame size")
    s.add_argument("--frames", type=bounded(int, 8, 512), default=64, help="frames per probe stream")
    s.add_argument("--streams", type=bounded(int, 2, 16), default=4, help="sub-intervals (streams) per round")
    s.add_argument("--rounds", type=bounded(int, 1, 10_000), default=10, help="measurement rounds")
    s.add_argument("--gamma", type=bounded(float, 0.0, 1.0, low_open=True), default=0.3,
                   help="smoothing: A <- (1 - gamma) A + gamma A_cur")
    s.add_argument("--history", type=bounded(int, 2, 100), default=5,
                   help="past results whose 95 %% interval is the next search interval")
    s.set_defaults(func=cmd_availbw)

    s = sub.add_parser("echo", parents=[common, probe_opts], formatter_class=fmt_cls,
                       help="single-ended throughput with ICMP echo and a window in gateware (Treno, seed 004)")
    s.add_argument("--reply-port", type=bounded(int, 0, 255), default=None,
                   help="the port the replies come back to (default the sending port; another one only "
                        "without a window)")
    s.add_argument("--size", type=bounded(int, 64, 16383, unit=" bytes"), default=576,
                   help="echo request size in bytes incl. FCS (the paper's MTU: 576)")
    s.add_argument("--window", type=bounded(int, 0, 65535, unit=" frames"), default=56,
                   help="requests in flight without a reply (0: no window, send at --rate)")
    s.add_argument("--window-bytes", type=bounded(int, 1, 1 << 30, unit=" bytes"), default=None,
                   help="the window in bytes instead (the paper: 32768), rounded down to whole frames")
    s.add_argument("--reno", action="store_true",
                   help="a Reno-like window: --window first, slow start, +1 per round trip, halved on a loss")
    s.add_argument("--window-max", type=bounded(int, 1, 65535, unit=" frames"), default=None,
                   help="Reno's largest window (default the larger of --window and 1024)")
    s.add_argument("--timeout-us", type=bounded(float, 0.0, 34_000_000.0, low_open=True, unit=" us"), default=None,
                   help="no reply for this long: the requests in flight count as lost (default: 1 ms for the pings, "
                        "then 10 idle RTTs and at least 20 us; raise it where queues are deep, the report counts "
                        "the timeouts)")
    s.add_argument("--rate", type=bounded(float, 0.0, 100.0, low_open=True, unit=" %"), default=None,
                   help="without a window: the request rate in percent of line rate")
    s.add_argument("--pings", type=bounded(int, 1, 512), default=32, help="requests one at a time for the idle RTT")
    s.add_argument("--duration", type=bounded(float, 0.0, MAX_DURATION_S, low_open=True, unit=" s"), default=None,
                   help="seconds per load level (default 10 on a board as the paper, 0.01 simulated on the twin)")
    s.add_argument("--interval", type=bounded(float, 0.0, MAX_DURATION_S, low_open=True, unit=" s"), default=None,
                   help="seconds between progress snapshots (default 1 on a board, 0.002 on the twin; "
                        "host-timed: each snapshot carries its exact tester time)")
    s.add_argument("--load", default="0",
                   help="background load levels, Mb/s of line rate, e.g. 0,100,200: the twin's cross traffic on "
                        "the way to the responder, or with --load-port that port's generator")
    s.add_argument("--load-port", type=bounded(int, 0, 255), default=None,
                   help="offer the load from this port (evenly spaced IPv4 frames to its peer; on the twin they "
                        "share the return path with the replies)")
    s.add_argument("--load-size", type=bounded(int, 64, 16383, unit=" bytes"), default=64,
                   help="background load frame size (the paper: 64 and 512)")
    s.add_argument("--load-random", action="store_true",
                   help="twin only, without --load-port: Poisson background load instead of evenly spaced frames")
    s.add_argument("--reflector", type=bounded(int, 0, 255), default=None,
                   help="the far end is this port's reflector (the requests go to its MAC; on the twin instead of "
                        "the echo responder): two ports of one tester, or see 'fpgatest reflect' for another tester")
    s.set_defaults(func=cmd_echo)

    s = sub.add_parser("reflect", parents=[common], formatter_class=fmt_cls,
                       help="make a port the far end of another tester's measurement: frames addressed to it go back "
                            "with addresses swapped, echo requests answered, and with --ip ARP and neighbour "
                            "solicitations for its address answered (stays on until --off)")
    s.add_argument("--port", type=bounded(int, 0, 255), default=1, help="the reflecting port")
    s.add_argument("--ip", type=ip_address, action="append", default=[],
                   help="the port's IPv4 and/or IPv6 address: ARP requests and neighbour solicitations for it "
                        "are answered (with both, the IPv6 address must end in the IPv4 one: the port holds "
                        "one address); it is also the port's source address when it sends")
    s.add_argument("--neighbours-only", action="store_true",
                   help="answer ARP/ND for --ip but reflect nothing: the port's generator stays free (a "
                        "receiving port that a router must find by itself)")
    s.add_argument("--off", action="store_true", help="turn the reflector off again")
    s.set_defaults(func=cmd_reflect)

    s = sub.add_parser("calibrate", parents=[common], formatter_class=fmt_cls,
                       help="fit delay = a*L + b over cables of known length and write the calibration")
    s.add_argument("--cables", required=True, help="cable lengths in metres, e.g. 0.2,1.04,5.05,10.04")
    s.add_argument("--port-cables", default=None,
                   help="lengths (m) of the cables used later on each port, e.g. 1.0,1.0 (default 0)")
    s.add_argument("--frames", type=bounded(int, 1, MAX_FRAMES), default=2000, help="frames per cable")
    s.add_argument("--out", default=None, help=f"calibration file (default {DEFAULT_CALIBRATION})")
    s.set_defaults(func=cmd_calibrate)

    s = sub.add_parser("dut", parents=[common], formatter_class=fmt_cls,
                       help="twin only: show or set the simulated switch (use --url of a running twin)")
    s.set_defaults(func=cmd_dut)

    s = sub.add_parser("report", formatter_class=fmt_cls, help="re-analyse and re-plot a results directory")
    s.add_argument("dir", help="results directory of a sweep (re-analysed), or of rfc2544, owd, pairs, availbw or "
                               "echo (report.md and plots written again from results.json)")
    s.set_defaults(func=cmd_report)
    return p


def stopped_status(stopped: KeyboardInterrupt) -> int:
    """Exit status of a command stopped by a signal: 128 + the signal (130 for Ctrl-C)."""
    return 128 + getattr(stopped, "signum", signal.SIGINT)


def _catch_stop_signals() -> dict:
    """Route the stop signals to fpgatest.stop (Stopped); a signal the caller ignores (nohup,
    background jobs) stays ignored. Returns the previous handlers to put back."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        return {}
    previous = {}
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        handler = signal.getsignal(sig)
        if handler in (signal.SIG_DFL, signal.default_int_handler):
            previous[sig] = signal.signal(sig, stop.handler)
    return previous


def main(argv=None) -> int:
    from fpgatest.driver import MapError
    from fpgatest.tester import SettingError
    from fpgatest.transport import LinkError

    stop.reset()
    previous = _catch_stop_signals()
    args = None
    try:
        args = build_parser().parse_args(argv)
        parse_dut(getattr(args, "dut", None))   # every --dut value checked before anything is opened
        if getattr(args, "capture", None):
            check_writable(Path(args.capture), "file")
        return args.func(args)
    except (UserError, SettingError, MapError, LinkError, FileExistsError, ValueError, RuntimeError,
            TimeoutError, OSError) as err:
        if isinstance(err, BrokenPipeError):
            return _broken_pipe()
        print(f"fpgatest: error: {err}" + (_twin_hint(err, args) if isinstance(err, (UserError, SettingError)) else ""),
              file=sys.stderr)
        return 2
    except KeyboardInterrupt as stopped:
        status = stopped_status(stopped)
        print(f"fpgatest: stopped by {signal.Signals(status - 128).name}", file=sys.stderr)
        return status
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        stop.reset()


def _twin_hint(err: Exception, args) -> str:
    """What a user of the default twin needs to know when a command wants what its build does not have
    (a generator, receiver or reflector on a port): the twin is built as the 5A-75B is, twin:full has
    them all."""
    if "this build" in str(err) and getattr(args, "url", None) == "twin":
        return (" (the twin is built as the 5A-75B is, port 0 sending and port 1 receiving: --url twin:full "
                "has both directions on both ports)")
    return ""


def _broken_pipe() -> int:
    """Output went to a pipe that closed (| head): end quietly, as other tools do."""
    with contextlib.suppress(OSError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    return 141


if __name__ == "__main__":
    sys.exit(main())
