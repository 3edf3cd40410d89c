# SPDX-License-Identifier: BSD-2-Clause
"""--url litex://: fpgatest through a running litex_server (LiteX's own bridge server, here holding the
twin's UARTBone), sharing the bus with LiteX's litex_cli."""

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from boards.twin import free_port
from fpgatest.cli import main

BIN = Path(sys.executable).parent


@pytest.fixture
def litex_server(twin_link):
    url, csr = twin_link
    port = free_port()
    proc = subprocess.Popen([str(BIN / "litex_server"), "--uart", "--uart-port", url, "--bind-port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, "litex_server did not start"
                time.sleep(0.1)
        yield f"litex://127.0.0.1:{port}", csr
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        time.sleep(0.2)     # the twin's bridge frees its session when it sees the server's EOF


def test_measure_through_litex_server_beside_litex_cli(litex_server, capsys):
    """A run through litex_server counts every frame it sent; litex_cli reads the build id over the same
    server, between two fpgatest commands, and finds the map's."""
    url, csr = litex_server
    assert main(["info", "--url", url, "--csr", str(csr)]) == 0
    out = capsys.readouterr().out
    build_id = json.loads(csr.read_text())["constants"]["fpgatest_build_id"]
    assert f"target      {url}" in out and f"build id {build_id:#010x} (matches the gateware)" in out

    cli = subprocess.run([str(BIN / "litex_cli"), "--port", url.rsplit(":", 1)[1], "--csr-csv",
                          str(csr.with_suffix(".csv")), "--read", "tester_build_id"],
                         capture_output=True, text=True, timeout=60)
    assert cli.returncode == 0, cli.stderr
    assert int(cli.stdout.split()[-1], 16) == build_id

    assert main(["run", "--url", url, "--csr", str(csr), "--calibration", "none", "--size", "256",
                 "--duration", "0.002", "--interval", "0.001"]) == 0
    last = capsys.readouterr().out
    rows = [line for line in last.splitlines() if line.startswith("│") and line.split("│")[1].strip().isdigit()]
    tx, rx, lost = (int(rows[-1].split("│")[k]) for k in (1, 2, 3))
    assert tx == rx > 0 and lost == 0


def test_no_server_one_line(twin_link, capsys):
    """Nothing listening at the litex:// address: one line that says what to start, exit status 2."""
    port = free_port()
    assert main(["info", "--url", f"litex://127.0.0.1:{port}", "--csr", str(twin_link[1])]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"fpgatest: error: cannot open litex://127.0.0.1:{port}: ")
    assert "is litex_server running?" in err[0]
