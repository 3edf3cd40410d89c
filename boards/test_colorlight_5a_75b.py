# SPDX-License-Identifier: BSD-2-Clause
"""The Colorlight 5A-75B bitstream builds with the open tools from PyPI and meets timing on every clock."""

import hashlib
import json
import subprocess
import sys

import pytest

from boards.colorlight import timing_report
from boards.colorlight_5a_75b import BUILD_DIR, BaseSoC
from litex_soc.tester import ROOT

# the .bit of the default build (BaseSoC.SEED) as built from these sources: a clone anywhere must give
# the same bytes. One line: "<sha256> <build id>"; `make bench` prints both for that seed after a change.
RECORDED = ROOT / "boards" / "colorlight_5a_75b.bit.sha256"


@pytest.mark.bitstream
def test_bitstream_builds_and_meets_timing():
    """Yosys + nextpnr-ecp5 + ecppack (about ten minutes); the log is kept for make bench."""
    BUILD_DIR.mkdir(parents=True, exist_ok=True)
    log = BUILD_DIR / "build.log"
    with open(log, "w") as out:
        done = subprocess.run([sys.executable, "-m", "boards.colorlight_5a_75b", "--build"], cwd=ROOT,
                              stdout=out, stderr=subprocess.STDOUT)
    report = timing_report(log)
    assert report and report["clocks"], f"no timing report in {log}"
    failing = {name: c for name, c in report["clocks"].items() if c["result"] != "PASS"}
    assert not failing, f"timing not met: {failing}"
    # the tester clock is the 125 MHz datapath, the CSR clock 50 MHz, and each RGMII receive clock
    targets = sorted(c["target_mhz"] for c in report["clocks"].values())
    assert targets.count(125.0) == 3 and targets.count(50.0) == 1, report["clocks"]
    assert done.returncode == 0, f"build failed, see {log}"
    bitstream = BUILD_DIR / "gateware" / "colorlight_5a_75b.bit"
    assert bitstream.stat().st_size > 100_000
    # the board's register map carries the identity of this very gateware
    csr = json.loads((BUILD_DIR / "csr.json").read_text())
    assert csr["constants"]["fpgatest_build_id"] == BaseSoC.build_id()
    # reproducible: the same bytes as the build recorded for these sources (another clone, another path)
    digest, build_id = RECORDED.read_text().split()
    assert int(build_id, 16) == BaseSoC.build_id(), f"{RECORDED.name} records other sources: run make bench"
    assert hashlib.sha256(bitstream.read_bytes()).hexdigest() == digest, "the bitstream is not reproducible"
