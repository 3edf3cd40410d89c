# SPDX-License-Identifier: BSD-2-Clause
"""Bad input and faulty devices: one `fpgatest: error:` line, exit 2, no traceback, nothing written.

The bad-input table runs in-process against a URL where nothing listens: a case that got past the
checks at the edge would end in "cannot open ..." instead of its own message. The fake device is a
UARTBone server on a local socket that answers with a wrong identity, garbage, short replies,
silence, or hangs up.
"""

import json
import random
import socket
import struct
import threading

import pytest

from fpgatest.cli import main
from fpgatest.driver import CsrMap, MapError

NOWHERE = "socket://127.0.0.1:1"


def refused(argv, message, capsys) -> None:
    """main(argv) returns (no traceback) with status 2 and one `fpgatest: error:` line naming `message`."""
    status = main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2, err
    assert len(err) == 1 and err[0].startswith("fpgatest: error: ") and message in err[0], err


def files_under(path):
    return sorted(p.relative_to(path) for p in path.rglob("*"))


# (argv after the subcommand's own options, fragment of the one error line); {out} is a path in tmp
BAD_INPUT = [
    (["sweep", "--ifg", "4294967296"], "--ifg: 4294967296 out of range 12..4294967295"),
    (["owd", "--sizes", "64"], "the one-packet method needs at least two probe sizes"),
    (["owd", "--random", "1"], "--random: 1 out of range 2..10000"),
    (["owd", "--probes", "513"], "--probes: 513 out of range 1..512"),
    (["owd", "--spacing-us", "nan"], "--spacing-us: 'nan' is not a finite number"),
    (["owd", "--max-size", "70", "--random", "20"], "20 distinct sizes asked from 64..70 bytes"),
    (["owd", "--alpha-from", "{tmp}/none"], "--alpha-from {tmp}/none: not an owd results directory"),
    (["pairs", "--pairs", "257"], "--pairs: 257 out of range 1..256"),
    (["pairs", "--window", "0"], "--window: 0 out of range (0, 1]"),
    (["pairs", "--window-bytes", "100"], "--window-bytes 100 below one --mss (1460 bytes)"),
    (["pairs", "--proto", "ipv6", "--capacity-size", "64"], "--capacity-size 64 below the smallest ipv6 frame"),
    (["pairs", "--spacing-us", "1"], "pair spacing 1.0 us too short for 1518-byte pairs"),
    (["pairs", "--rtt-ms", "inf"], "--rtt-ms: 'inf' is not a finite number"),
    (["sweep", "--capture", "/dev/null/wire.pcapng"], "cannot write /dev/null/wire.pcapng"),
    (["owd", "--capture", "{tmp}"], "exists and is not a file"),
    (["availbw", "--frames", "4"], "--frames: 4 out of range 8..512"),
    (["availbw", "--gamma", "0"], "--gamma: 0 out of range (0, 1]"),
    (["availbw", "--streams", "17"], "--streams: 17 out of range 2..16"),
    (["availbw", "--history", "1"], "--history: 1 out of range 2..100"),
    (["availbw", "--proto", "ipv6", "--size", "64"], "--size 64 below the smallest ipv6 frame"),
    (["echo", "--proto", "eth"], "--proto eth: ICMP echo needs ipv4 or ipv6"),
    (["echo", "--dut", "echo_delay_ns=10"], "bad --dut 'echo_delay_ns=10'"),
    (["echo", "--window", "70000"], "--window: 70000 out of range 0..65535"),
    (["echo", "--reno", "--window", "8", "--window-max", "4"], "largest 4) out of range"),
    (["echo", "--reno", "--window", "0"], "--reno needs a window"),
    (["echo", "--window-bytes", "100"], "--window-bytes 100 holds no 576-byte frame"),
    (["echo", "--load", "0,2000"], "--load '0,2000': each level 0..1000 Mb/s"),
    (["echo", "--load", "a"], "--load 'a': a comma-separated list of Mb/s"),
    (["echo", "--pings", "0"], "--pings: 0 out of range 1..512"),
    (["echo", "--timeout-us", "nan"], "--timeout-us"),
    (["echo", "--duration", "0.001", "--interval", "0.01"], "the progress interval must not exceed the duration"),
    (["dut", "--dut", "cross_mbps=2000"], "bad --dut 'cross_mbps=2000': 2000 out of range"),
    (["dut", "--dut", "cross_size=63"], "bad --dut 'cross_size=63': 63 out of range 64..16383"),
    (["dut", "--dut", "enable=2"], "bad --dut 'enable=2': 2 out of range 0..1"),
    (["sweep", "--ifg", "11"], "--ifg: 11 out of range"),
    (["sweep", "--ifg", "1e3"], "--ifg: '1e3' is not an integer"),
    (["sweep", "--rate", "0"], "--rate: 0 out of range (0, 100]"),
    (["sweep", "--rate", "nan"], "--rate: 'nan' is not a finite number"),
    (["sweep", "--rate", "-5"], "--rate: -5 out of range"),
    (["sweep", "--duration", "inf"], "--duration: 'inf' is not a finite number"),
    (["sweep", "--duration", "0"], "--duration: 0 out of range"),
    (["sweep", "--interval", "inf"], "--interval: 'inf' is not a finite number"),
    (["sweep", "--interval", "-1"], "--interval: -1 out of range"),
    (["sweep", "--duration", "0.001", "--interval", "0.002"], "need 0 < --interval <= --duration"),
    (["sweep", "--tx-port", "-1"], "--tx-port: -1 out of range 0..255"),
    (["sweep", "--rx-port", "x"], "--rx-port: 'x' is not an integer"),
    (["sweep", "--sizes", "64,banana"], "bad size list"),
    (["sweep", "--sizes", "20000"], "frame size 20000 out of range"),
    (["sweep", "--sizes", "100:50:10"], "bad size list"),
    (["sweep", "--proto", "ipx"], "invalid choice: 'ipx'"),
    (["sweep", "--dut", "latency_ns=inf"], "bad --dut 'latency_ns=inf': 'inf' is not a finite number"),
    (["sweep", "--dut", "latency_ns=nan"], "is not a finite number"),
    (["sweep", "--dut", "latency_ns=-1"], "out of range"),
    (["sweep", "--dut", "ppm=-1000000"], "bad --dut 'ppm=-1000000': -1000000 out of range [-1000, 1000]"),
    (["sweep", "--dut", "ppm=-2000000"], "out of range"),
    (["sweep", "--dut", "ppm=inf"], "is not a finite number"),
    (["sweep", "--dut", "cut_through=2"], "bad --dut 'cut_through=2': 2 out of range 0..1"),
    (["sweep", "--dut", "dither=yes"], "is not an integer"),
    (["sweep", "--dut", "rate_mbps=0"], "out of range"),
    (["sweep", "--dut", "buffer_bytes=1e9"], "is not an integer"),
    (["sweep", "--dut", "max_frame=20000"], "out of range 64..16383"),
    (["sweep", "--dut", "speed=9"], "bad --dut 'speed=9'"),
    (["sweep", "--dut", "latency_ns"], "bad --dut 'latency_ns'"),
    (["sweep", "--out", "/dev/null/x"], "cannot write /dev/null/x"),
    (["run", "--src-ip", "2001:db8::1"], "--src-ip: 2001:db8::1 is not an IPv4 address (--proto ipv4)"),
    (["run", "--proto", "ipv6", "--size", "128", "--dst-ip", "10.0.0.1"], "is not an IPv6 address"),
    (["run", "--proto", "eth", "--src-ip", "10.0.0.1"], "--src-ip: eth frames carry no IP header"),
    (["run", "--src-ip", "300.1.1.1"], "--src-ip: '300.1.1.1' is not an IPv4 or IPv6 address"),
    (["sweep", "--src-mac", "02:00:00:00:00"], "is not a MAC address"),
    (["sweep", "--dst-mac", "02:00:00:00:00:zz"], "is not a MAC address"),
    (["sweep", "--vlan", "4096"], "--vlan: 4096 out of range 0..4095"),
    (["sweep", "--vlan", "5", "--vlan-pcp", "8"], "--vlan-pcp: 8 out of range 0..7"),
    (["run", "--size", "20000"], "--size: 20000 out of range 64..16383"),
    (["run", "--size", "63"], "--size: 63 out of range"),
    (["run", "--proto", "ipv6", "--size", "64"], "frame size 64 out of range 84..16383 bytes for ipv6"),
    (["run", "--ifg", "-12"], "--ifg: -12 out of range"),
    (["run", "--interval", "nan"], "'nan' is not a finite number"),
    (["info", "--dut", "per_byte_ns=1e300"], "out of range"),
    (["dut", "--dut", "cable_in_ns=-3"], "out of range"),
    (["calibrate", "--cables", "1"], "at least two different cable lengths"),
    (["calibrate", "--cables", "1,1,1"], "at least two different cable lengths"),
    (["calibrate", "--cables", "inf,1"], "--cables (m): 'inf' is not a finite number"),
    (["calibrate", "--cables", "nan,1"], "is not a finite number"),
    (["calibrate", "--cables=-1,1"], "--cables (m): -1 out of range [0, 1000]"),
    (["calibrate", "--cables", "1,a"], "--cables (m): 'a' is not a number"),
    (["calibrate", "--cables", "1,2", "--port-cables", "inf"], "--port-cables (m): 'inf' is not a finite"),
    (["calibrate", "--cables", "1,2", "--frames", "0"], "--frames: 0 out of range 1..4294967295"),
    (["calibrate", "--cables", "1,2", "--frames", "-5"], "--frames: -5 out of range"),
    (["calibrate", "--cables", "1,2", "--out", "/dev/null/c.json"], "cannot write /dev/null/c.json"),
    (["calibrate", "--cables", "1,2", "--out", "{tmp}"], "exists and is not a file"),
    (["calibrate"], "the following arguments are required: --cables"),
    (["report", "{tmp}/none"], "cannot read results"),
    (["rfc2544", "all", "--resolution", "0"], "--resolution: 0 out of range (0, 50]"),
    (["rfc2544", "loss", "--loss-step", "20"], "--loss-step: 20 out of range (0, 10]"),
    (["rfc2544", "all", "--trial", "inf"], "--trial: 'inf' is not a finite number"),
    (["rfc2544", "all", "--burst", "0"], "--burst: 0 out of range"),
    (["rfc2544", "latency", "--latency-trials", "0"], "--latency-trials: 0 out of range 1..100000"),
    (["rfc2544", "back-to-back", "--burst-trials", "-1"], "--burst-trials: -1 out of range"),
    (["rfc2544", "throughput", "--accept-loss", "100"], "--accept-loss: 100 out of range [0, 99]"),
    (["rfc2544", "all", "--sizes", "63"], "frame size 63 out of range"),
    (["rfc2544", "all", "--proto", "ipv6", "--sizes", "64"], "frame size 64 out of range 84..16383 bytes for ipv6"),
    (["rfc2544", "all", "--out", "/dev/null/x"], "cannot write /dev/null/x"),
    (["rfc2544", "speed"], "invalid choice: 'speed'"),
    (["sweep", "--out", "/proc/fpgatest"], "cannot write /proc/fpgatest: /proc takes no files"),
    (["calibrate", "--cables", "1,2", "--out", "/proc/c.json"], "cannot write /proc/c.json: /proc takes no files"),
    (["info", "--url", "udp://127.0.0.1:9"], "cannot open udp://127.0.0.1:9: "),   # nothing there: no Etherbone
    (["rfc2544"], "the following arguments are required: test"),
    (["frobnicate"], "invalid choice: 'frobnicate'"),
    ([], "the following arguments are required: command"),
    (["info", "--url", "socket://127.0.0.1:99999"], "bad URL 'socket://127.0.0.1:99999'"),
    (["info", "--url", "socket://127.0.0.1"], "bad URL"),
    (["info", "--url", "udp://"], "bad URL"),
    (["info", "--url", "udp://127.0.0.1:0"], "bad URL"),
    (["info", "--url", "litex://:1234"], "bad URL"),
    (["info", "--url", "twin:freebsd"], "--url twin:freebsd: the twin is twin, twin:full, twin:linux, twin:linux-bridge, twin:drift"),
    (["info", "--url", "litex://127.0.0.1:70000"], "bad URL 'litex://127.0.0.1:70000'"),
    (["info", "--url", "foo://x"], "bad URL 'foo://x': foo:// is not a transport"),
    (["info", "--url", "Loop:x://"], "bad URL 'Loop:x://': loop:x:// is not a transport"),
]


@pytest.mark.parametrize("argv,message", BAD_INPUT, ids=[" ".join(a) or "(none)" for a, _ in BAD_INPUT])
def test_bad_input_one_line_nothing_written(argv, message, tmp_path, capsys):
    work = tmp_path / "work"
    work.mkdir()
    argv = [a.replace("{tmp}", str(work)) for a in argv]
    message = message.replace("{tmp}", str(work))
    full = list(argv)
    if argv and argv[0] in ("sweep", "run", "info", "dut", "calibrate", "rfc2544", "owd", "pairs", "availbw", "echo"):
        # a valid map, so that what is refused is the case itself (a fresh clone has no board map)
        csr = tmp_path / "csr.json"
        csr.write_text(json.dumps(GOOD_MAP))
        full += ["--csr", str(csr), "--calibration", "none"] + ([] if "--url" in argv else ["--url", NOWHERE])
    if argv and argv[0] in ("sweep", "rfc2544", "owd", "pairs", "availbw", "echo") and "--out" not in argv:
        full += ["--out", str(work / "results")]
    refused(full, message, capsys)
    assert files_under(work) == [], "nothing written for refused input"


def test_board_url_without_a_board_map(tmp_path, monkeypatch, capsys):
    """A board's URL in a checkout with no board build: the map that is missing is named with how to get it,
    and the URL is checked first (a URL of no transport is not reported as a missing map)."""
    from fpgatest import cli

    monkeypatch.setattr(cli, "BOARD_CSR", tmp_path / "colorlight_5a_75b" / "csr.json")
    refused(["info", "--url", "/dev/ttyUSB9"], f"no register map for /dev/ttyUSB9: the board build's "
            f"{tmp_path / 'colorlight_5a_75b' / 'csr.json'} is not there (make bitstream builds it)", capsys)
    refused(["info", "--url", "foo://x"], "bad URL 'foo://x'", capsys)
    assert files_under(tmp_path) == []


def test_udp_answer_that_is_not_etherbone(tmp_path, capsys):
    """udp:// to a port where what answers is not an Etherbone server (here the probe itself, looped back:
    LiteX's client sends from the port it sends to): one line that says so, not LiteX's bare assert."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    csr = tmp_path / "csr.json"
    csr.write_text(json.dumps(GOOD_MAP))
    refused(["info", "--url", f"udp://127.0.0.1:{port}", "--csr", str(csr), "--calibration", "none"],
            f"cannot open udp://127.0.0.1:{port}: what answered is not an Etherbone server", capsys)


# ---- register maps of the wrong shape ----------------------------------------------------------

GOOD_MAP = {"csr_registers": {"tester_build_id": {"addr": 0, "size": 1, "type": "ro"}},
            "constants": {"fpgatest_build_id": 1}, "memories": {}}


@pytest.mark.parametrize("change", [
    {"csr_registers": []},
    {"constants": None},
    {"csr_registers": {"tester_build_id": {"addr": "0", "size": 1, "type": "ro"}}},
    {"csr_registers": {"tester_build_id": {"addr": 2, "size": 1, "type": "ro"}}},
    {"csr_registers": {"tester_build_id": {"addr": 0, "size": True, "type": "ro"}}},
    {"csr_registers": {"tester_build_id": {"addr": 0, "size": 1}}},
    {"constants": {"fpgatest_build_id": "1"}},
    {"constants": {}},
    {"memories": {"port0_counters": {"base": None}}},
    {"constants": {"fpgatest_build_id": 1, "fpgatest_tick_ns": 4}},
    {"constants": {"fpgatest_build_id": 1, "fpgatest_lat_units_per_tick": 32}},
], ids=lambda c: json.dumps(c))
def test_register_map_shape(change, tmp_path):
    path = tmp_path / "csr.json"
    path.write_text(json.dumps({**GOOD_MAP, **change}))
    with pytest.raises(MapError, match="register map|not an fpgatest register map|not an integer|a tick of 4 ns"
                                       "|latencies in 1/32 tick"):
        CsrMap(path)


@pytest.mark.parametrize("content, mode", [
    ('{"mode": "router", "router": [{"ipv4": "192.168.0.254", "ipv6": "2001:db8:0:0::fe"}]}', "router"),
    ('{"mode": "bridge", "router": null}', "bridge"),
    ('{"mode": "router", "router": [{"ipv4": 7}]}', None), ('{"mode": "hub"}', None), ("[1, 2]", None),
    ('{"mode": "router", "rou', None), ("\udcff", None), (None, None)])
def test_a_twins_kernel_file_that_is_not_the_launchers_is_not_used(content, mode, tmp_path):
    """The kernel.json in a twin's run directory (twin:linux) is read only when it is what the launcher
    writes; anything else, or none, is no kernel (the echo hint then says what a router and a bridge do),
    never an exception."""
    from fpgatest.cli import twin_kernel

    if content is not None:
        (tmp_path / "run-4327").mkdir()
        (tmp_path / "run-4327" / "kernel.json").write_text(content, errors="surrogateescape")
    kernel = twin_kernel(tmp_path / "csr.json", "socket://127.0.0.1:4327")
    assert (kernel and kernel["mode"]) == mode


def test_register_map_not_json(tmp_path, capsys):
    path = tmp_path / "csr.json"
    path.write_text("[1, 2")
    refused(["info", "--url", NOWHERE, "--csr", str(path)], "cannot read register map", capsys)


# ---- a fake device ----------------------------------------------------------------------------

class FakeUartBone:
    """UARTBone on a local TCP port, answering as told: 'ok' (a register file whose build id
    matches the map), 'wrong_id', 'garbage' (right id, random words after), 'short' (half
    replies), 'silent' (no replies), 'hangup' (closes after the identity read)."""

    def __init__(self, csr_path, mode):
        self.map = CsrMap(csr_path)
        self.mode = mode
        self.regs = {}
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(4)
        self.url = f"socket://127.0.0.1:{self.server.getsockname()[1]}"
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        rng = random.Random(1)
        id_addr = self.map["tester_build_id"].addr // 4
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            with conn:
                served = 0
                while True:
                    head = _recv(conn, 6)
                    if head is None:
                        break
                    cmd, n, addr = head[0], head[1], struct.unpack(">I", head[2:])[0]
                    if cmd in (1, 3):
                        data = _recv(conn, 4 * n)
                        if data is None:
                            break
                        for i in range(n):
                            self.regs[addr + (i if cmd == 1 else 0)] = struct.unpack(">I", data[4 * i:4 * i + 4])[0]
                        continue
                    served += 1
                    if self.mode == "hangup" and served > 1:
                        break
                    if self.mode == "silent":
                        continue
                    words = []
                    for i in range(n):
                        a = addr + i
                        if a == id_addr:
                            words.append(self.map.build_id ^ (1 if self.mode == "wrong_id" else 0))
                        elif self.mode == "garbage":
                            words.append(rng.getrandbits(32))
                        else:
                            words.append(self.regs.get(a, 0))
                    reply = b"".join(struct.pack(">I", w) for w in words)
                    conn.sendall(reply[:len(reply) // 2] if self.mode == "short" else reply)

    def close(self):
        self.server.close()


def _recv(conn, n):
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            return None
        data += chunk
    return data


@pytest.mark.parametrize("mode,message", [
    ("wrong_id", "use the csr.json of the running build"),
    ("garbage", "does not behave as one"),
    ("short", "no answer from"),
    ("silent", "no answer from"),
    ("hangup", "no answer from"),
])
def test_faulty_device_one_line(mode, message, twin_link, tmp_path, capsys):
    _, csr = twin_link
    fake = FakeUartBone(csr, mode)
    try:
        refused(["info", "--url", fake.url, "--csr", str(csr), "--calibration", "none"], message, capsys)
    finally:
        fake.close()


@pytest.mark.parametrize("content,message", [
    ({"internal_ns": 1.0, "cables_ns": "12"}, "cables_ns a list of numbers"),
    ({"internal_ns": 1.0, "cables_ns": [float("inf")]}, "finite"),
    ({"internal_ns": float("nan"), "cables_ns": [0]}, "finite"),
    ({"internal_ns": 1.0}, "lacks internal_ns / cables_ns"),
    ({"internal_ns": "1", "cables_ns": [0]}, "must be a number"),
    ([1, 2], "lacks internal_ns / cables_ns"),
])
def test_bad_calibration_file(content, message, twin_link, tmp_path, capsys):
    """Checked before anything is written to the device: the fake's register file stays empty."""
    _, csr = twin_link
    path = tmp_path / "cal.json"
    path.write_text(json.dumps(content))
    fake = FakeUartBone(csr, "ok")
    try:
        refused(["info", "--url", fake.url, "--csr", str(csr), "--calibration", str(path)], message, capsys)
    finally:
        fake.close()
    assert fake.regs == {}, "nothing written to the device"


@pytest.mark.parametrize("damage", ["truncated_row", "no_keys", "not_records"])
def test_report_on_damaged_results(damage, tmp_path, capsys):
    """report re-reads a results directory: a damaged one gives one line and is left as it was."""
    out = tmp_path / "r"
    out.mkdir()
    header = ("size_bytes,interval,t_start_s,duration_s,tx_frames,rx_frames,rx_fps,theoretical_fps,lat_count,"
              "latency_min_ns,latency_mean_ns,latency_max_ns,latency_stdev_ns,lat_sum_ns,lat_sumsq_ns2\n")
    (out / "run.json").write_text("[]" if damage == "not_records" else "{}")
    (out / "samples.csv").write_text(header + ("64,0,0.0,0.002\n" if damage == "truncated_row" else ""))
    (out / "sizes.jsonl").write_text('{"size_bytes": 64}\n')
    before = {p: p.read_bytes() for p in out.iterdir()}
    refused(["report", str(out)], "cannot read results", capsys)
    assert {p: p.read_bytes() for p in out.iterdir()} == before


@pytest.mark.parametrize("run,results,message", [
    ({"command": "pairs"}, {"capacity": {}}, "a record lacks or garbles 'utilisation'"),
    ({"command": "owd"}, "not json", "cannot read results"),
    ({"command": "owd"}, [1], "is not a record"),
    ({"command": "frobnicate"}, {}, "run.json names no command that writes results.json ('frobnicate'"),
    ({}, {"rounds": []}, "run.json names no command that writes results.json (None"),
])
def test_report_on_damaged_method_results(run, results, message, tmp_path, capsys):
    """report on a results.json (rfc2544, owd, pairs, availbw, echo) that is damaged or of no known command:
    one line, the directory left as it was (report.md not half written, no plot)."""
    out = tmp_path / "r"
    out.mkdir()
    (out / "run.json").write_text(json.dumps(run))
    (out / "results.json").write_text(results if isinstance(results, str) else json.dumps(results))
    (out / "report.md").write_text("the report of before\n")
    before = {p: p.read_bytes() for p in out.iterdir()}
    refused(["report", str(out)], message, capsys)
    assert {p: p.read_bytes() for p in out.iterdir()} == before


def test_host_and_gateware_share_one_contract():
    """The limits csr.json carries come from the cores' parameters; the host refuses a map that
    disagrees with it (a build older or newer than the tool) and takes the refusal bits from it."""
    from fpgatest.tester import GEN_ERRORS, check_contract
    from litex_soc.tester import contract_constants

    constants = {k.lower(): v for k, v in contract_constants().items()}
    bits = check_contract(constants)
    assert sorted(bits) == [1, 2, 4, 8, 16, 32, 64] and set(bits.values()) == set(GEN_ERRORS.values())
    with pytest.raises(MapError, match=r"fpgatest_max_frame = 9000 \(host: 16383\)"):
        check_contract({**constants, "fpgatest_max_frame": 9000})
    with pytest.raises(MapError, match="no err_frac"):
        check_contract({k: v for k, v in constants.items() if k != "fpgatest_gen_err_frac"})
    with pytest.raises(MapError, match="no fpgatest_reflect_nd"):
        check_contract({k: v for k, v in constants.items() if k != "fpgatest_reflect_nd"})


def test_default_addresses_are_the_ports_power_up_addresses(twin_link):
    """The addresses every stream states unless told otherwise are those the gateware starts with, as
    its csr.json states them."""
    from fpgatest.tester import port_addresses
    from litex_soc.tester import port_defaults

    constants = json.loads(twin_link[1].read_text())["constants"]
    for port, peer in ((0, 1), (1, 0)):
        power_up = port_defaults(port, peer)
        assert port_addresses(port, peer, "ipv4", constants) == {k: power_up[k] for k in
                                                                ("cfg_src_mac", "cfg_dst_mac", "cfg_src_ip", "cfg_dst_ip")}


def test_an_existing_output_file_is_replaced_not_refused(tmp_path):
    """calibrate writes build/calibration.json again on every run: an existing file is no refusal."""
    from fpgatest.cli import UserError, check_writable

    existing = tmp_path / "calibration.json"
    existing.write_text("{}")
    check_writable(existing, "file")
    check_writable(tmp_path / "new" / "deeper" / "c.json", "file")
    with pytest.raises(UserError, match="exists and is not a directory"):
        check_writable(existing, "directory")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["calibration.json"], "probing leaves nothing"


def test_a_slow_device_is_waited_for_a_stopped_one_is_not(monkeypatch):
    """The waits on the device count the tester's time: a device whose clock crawls (a twin on a loaded
    machine) is waited for as long as its time moves, past STALL_S of wall time; one whose time stands
    still for STALL_S is given up on, and so is a run still busy after the bound in the tester's time.
    A short wait reads no time (reading it latches the counters a caller may read next)."""
    import itertools
    import time

    from fpgatest import tester as tester_module
    from fpgatest.tester import Tester

    monkeypatch.setattr(tester_module, "STALL_S", 0.3)
    monkeypatch.setattr(tester_module, "STALL_CHECK_S", 0.05)
    t = Tester.__new__(Tester)              # no device: the waits read only the time and busy()
    crawl = itertools.count(0, 1)           # a tick of tester time at each look
    t.now_ticks = lambda: next(crawl)
    busy_until = time.monotonic() + 1.0     # three times STALL_S of wall time
    t.wait_while(lambda: time.monotonic() < busy_until, 1.0, 0.01, "port 0 still sending")
    assert time.monotonic() >= busy_until
    assert t.wait_ticks(5) >= 5
    t.now_ticks = lambda: 7
    with pytest.raises(TimeoutError, match="port 0 still sending: the tester's time stood still for 0.3 s"):
        t.wait_while(lambda: True, 1.0, 0.01, "port 0 still sending")
    with pytest.raises(TimeoutError, match="advanced 0 of 5 ticks, then stood still for 0.3 s"):
        t.wait_ticks(5)
    fast = itertools.count(0, 10 ** 8)      # 0.8 s of tester time at each look
    t.now_ticks = lambda: next(fast)
    with pytest.raises(TimeoutError, match="port 0 still sending after 1 s of tester time"):
        t.wait_while(lambda: True, 1.0, 0.01, "port 0 still sending")
    looks = []
    t.now_ticks = lambda: looks.append(1) or 0
    ends = time.monotonic() + 0.02
    t.wait_while(lambda: time.monotonic() < ends, 1.0, 0.005, "a short wait")
    assert not looks, "a wait shorter than STALL_CHECK_S latches nothing"
