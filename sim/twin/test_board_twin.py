# SPDX-License-Identifier: BSD-2-Clause
"""The default twin is the 5A-75B's default build (with the interval recorder): the same port
directions, engines and register contract, so a command does on the twin what it does on that board,
and what the board cannot do is refused in one line there too."""

import contextlib
import csv
import importlib
import io
import json
import math

import pytest

from litex.soc.integration.builder import Builder

from common.switch_state import KNOWN_PATH, store_and_forward_ns
from fpgatest.cli import main
from fpgatest.driver import Device
from fpgatest.tester import TICK_NS, Stream, Tester

BOARD = "colorlight_5a_75b"
# what only one of the two has: the board's PHYs and their management bus; the twin's switch model,
# echo responder, capture taps and TAP status, and the board's UART FIFO (the twin's serial line waits)
BOARD_ONLY = ("ethphy", "ethmdio", "fpgatest_port0_phy_addr", "fpgatest_port1_phy_addr", "uartbone_rx_fifo_depth")
TWIN_ONLY = ("dut_", "capture_", "tap_on")
RECORDER = ("tester_interval_", "fpgatest_interval_")       # the interval recorder's registers and constants


def _board_map(tmp_path, intervals: bool | None = None) -> dict:
    """The csr.json of the board's default build (intervals None) or of one with or without the interval
    recorder, generated without the tools (a few seconds)."""
    target = importlib.import_module(f"boards.{BOARD}")
    tmp_path = tmp_path / {None: "default", True: "intervals", False: "no-intervals"}[intervals]
    with contextlib.redirect_stdout(io.StringIO()):
        soc = target.BaseSoC(revision=target.BaseSoC.REVISION, build_dir=tmp_path, intervals=intervals)
        Builder(soc, output_dir=str(tmp_path), compile_software=False, compile_gateware=False,
                csr_json=str(tmp_path / "csr.json")).build(build_name=BOARD, run=False)
    return json.loads((tmp_path / "csr.json").read_text())


def test_the_default_twin_has_the_boards_register_contract(board_twin_link, tmp_path):
    """Every register of the board's default build (with the recorder) is in the default twin with its size
    and access, and every tester constant (port directions, reflectors, interval recorder, limits,
    counters) has the board's value; what only one has is the PHYs on the board and the switch model in
    the twin. The board's build with --no-intervals is the same but for the recorder's registers and
    constants."""
    _, csr = board_twin_link
    board, twin = _board_map(tmp_path), json.loads(csr.read_text())
    assert board == _board_map(tmp_path, intervals=True)          # the default is the build with the recorder

    def registers(m, other_side):
        return {name: (r["size"], r["type"]) for name, r in m["csr_registers"].items()
                if not name.startswith(other_side)}

    assert registers(board, BOARD_ONLY) == registers(twin, TWIN_ONLY)
    assert all(name.startswith(BOARD_ONLY) for name in set(board["csr_registers"]) - set(twin["csr_registers"]))

    def tester_constants(m, other_side):
        return {name: value for name, value in m["constants"].items()
                if name.startswith("fpgatest_") and name != "fpgatest_build_id" and not name.startswith(other_side)}

    assert tester_constants(board, BOARD_ONLY) == tester_constants(twin, TWIN_ONLY)
    # the board's shape as the host reads it: port 0 generating, port 1 receiving, no reflector, the recorder
    c = twin["constants"]
    assert [(c[f"fpgatest_port{p}_tx"], c[f"fpgatest_port{p}_rx"], c[f"fpgatest_port{p}_reflect_bytes"])
            for p in (0, 1)] == [(1, 0, 0), (0, 1, 0)]
    assert "fpgatest_interval_depth" in c and "tester_interval_period" in twin["csr_registers"]
    # the board's build with --no-intervals: the same, less the recorder
    without = _board_map(tmp_path, intervals=False)
    assert set(without["csr_registers"]) < set(board["csr_registers"])
    assert all(name.startswith(RECORDER) for name in set(board["csr_registers"]) - set(without["csr_registers"]))
    with_recorder = tester_constants(board, BOARD_ONLY)
    assert tester_constants(without, BOARD_ONLY) == {name: value for name, value in with_recorder.items()
                                                     if not name.startswith(RECORDER)}


def test_line_rate_through_the_default_twin(board_twin_link):
    """Port 0 to port 1 at minimum IFG through the switch model (1000 Mb/s, store-and-forward): every
    frame arrives, in order, and the latency never moves from processing + 8 ns/B, exact to the tick
    (a sender or a receiving side slower than the wire would queue and grow it)."""
    url, csr = board_twin_link
    with Device(url, csr) as dev:
        t = Tester(dev)
        t.dut_set("ab", **KNOWN_PATH)
        t.set_calibration(0, [0, 0])
        for size in (64, 1518):
            t.clear()
            t.configure(0, Stream(proto="ipv4", size=size, count=3000))
            t.start(0)
            t.wait_idle(0)
            t.wait_ticks(4000)     # the switch drains
            t.flush(1)
            s = t.snapshot()
            tx, rx = s["ports"][0], s["ports"][1]
            lat = Tester.latency_summary(rx)
            assert tx["tx_frames"] == rx["test_frames"] == rx["seq_received"] == 3000, (size, tx, rx)
            assert rx["seq_lost"] == rx["seq_late"] == rx["foreign"] == rx["fcs_errors"] == 0, (size, rx)
            assert lat["min"] == lat["max"] == math.ceil(store_and_forward_ns(size) / TICK_NS) * TICK_NS, (size, lat)


def test_sweep_on_the_default_twin(board_twin_link, tmp_path):
    """`make sweep`'s command on the board's directions: every sample exactly as long as asked (the
    recorder's), every frame counted, latency exact, and the record says who timed the samples."""
    url, csr = board_twin_link
    out = tmp_path / "sweep"
    assert main(["sweep", "--url", url, "--csr", str(csr), "--calibration", "none", "--proto", "ipv4",
                 "--sizes", "64,1518", "--duration", "0.004", "--interval", "0.002", "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["settings"]["interval_timer"] == "gateware"
    samples = (out / "samples.csv").read_text().splitlines()[1:]
    assert len(samples) == 2 * 2 and {row.split(",")[3] for row in samples} == {"0.002"}, samples
    for record in summary["sizes"]:
        size = record["size_bytes"]
        assert record["frames"]["tx"] == record["frames"]["rx"] > 0 and record["frames"]["lost"] == 0
        assert record["latency_ns"]["min"] == record["latency_ns"]["max"] == store_and_forward_ns(size)


@pytest.mark.parametrize("argv,message", [
    (["run", "--tx-port", "1", "--rx-port", "0"], "--tx-port 1: the port has no generator in this build"),
    (["sweep", "--rx-port", "0"], "--rx-port 0: the port has no receiver in this build"),
    (["echo"], "port 0 has no receiver in this build: the replies cannot be counted"),
    (["pairs"], "no RTT: give --rtt-ms (this build cannot send back from the receiving port)"),
    (["rfc2544", "throughput", "--directions", "bidirectional"],
     "--directions bidirectional: this build cannot send on port 1 and receive on port 0"),
])
def test_what_the_board_cannot_do_is_refused_in_one_line(board_twin_link, tmp_path, capsys, argv, message):
    """A direction the 5A-75B's build does not have is refused before anything is sent or written."""
    url, csr = board_twin_link
    with Device(url, csr) as dev:
        before = Tester(dev).snapshot()
    assert main([argv[0], "--url", url, "--csr", str(csr), "--calibration", "none", *argv[1:],
                 *(["--out", str(tmp_path / "out")] if argv[0] != "run" else [])]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and err[0] == f"fpgatest: error: {message}", err
    assert captured.out == "" and not (tmp_path / "out").exists()
    with Device(url, csr) as dev:
        after = Tester(dev).snapshot()
    assert [p["tx_frames"] for p in after["ports"]] == [p["tx_frames"] for p in before["ports"]]


def test_the_twin_url_is_the_boards_build(board_twin_link, capsys):
    """`--url twin` (started for the command) is the board's build and says which port does what; the
    same refusal there names twin:full; a running twin on socket:// is read with its own build's map."""
    url, csr = board_twin_link
    assert main(["info", "--url", "twin"]) == 0
    out = capsys.readouterr().out
    assert "ports       2: port 0 sends, port 1 receives" in out
    assert f"register map {csr} " in out and "port 0: idle, tx 0 frames\n" in out
    assert main(["run", "--url", "twin", "--tx-port", "1", "--rx-port", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].endswith("--url twin:full has both directions on both ports)"), err
    assert main(["info", "--url", url]) == 0       # no --csr: the map whose build id the twin answers with
    assert f"register map {csr} " in capsys.readouterr().out


def test_rfc2544_says_it_tested_one_direction(board_twin_link, tmp_path, capsys):
    """`rfc2544` with its default `--directions both` on the board's build: 0→1 only, every trial on that
    path, and the report says the other way was not tested and why (it once left it out in silence).
    Through the default switch (line rate, no loss) the throughput at 64 B is 100 %."""
    url, csr = board_twin_link
    out = tmp_path / "rfc"
    assert main(["rfc2544", "throughput", "--url", url, "--csr", str(csr), "--calibration", "none",
                 "--sizes", "64", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "One direction only: 1→0 not tested: this build cannot send on port 1 and receive on port 0." in printed
    assert "One direction only" in (out / "report.md").read_text()
    trials = list(csv.DictReader(open(out / "trials.csv")))
    assert trials and all((row["tx_port"], row["rx_port"]) == ("0", "1") for row in trials)
    (result,) = json.loads((out / "results.json").read_text())["throughput"]
    assert result["throughput_percent"] == 100 and result["size_bytes"] == 64
