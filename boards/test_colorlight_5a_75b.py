# SPDX-License-Identifier: BSD-2-Clause
"""The Colorlight 5A-75B bitstream builds with the open tools from PyPI and meets timing on every clock."""

import hashlib
import json
import re
import subprocess
import sys

import pytest

from litex.soc.integration.builder import Builder

from boards.colorlight_5a_75b import BUILD_DIR, BaseSoC, board_build_id, timing_report
from litex_soc.tester import ROOT

# the .bit of the default build (seed 1) as built from these sources: a clone anywhere must give the
# same bytes. One line: "<sha256> <build id>"; `make bench` prints both for seed 1 after a change.
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
    assert csr["constants"]["fpgatest_build_id"] == board_build_id()
    # reproducible: the same bytes as the build recorded for these sources (another clone, another path)
    digest, build_id = RECORDED.read_text().split()
    assert int(build_id, 16) == board_build_id(), f"{RECORDED.name} records other sources: run make bench"
    assert hashlib.sha256(bitstream.read_bytes()).hexdigest() == digest, "the bitstream is not reproducible"


def _generate(revision: str, tmp_path):
    """The board's Verilog and LPF without running the tools (a few seconds)."""
    build_dir = tmp_path / revision
    soc = BaseSoC(revision=revision, build_dir=build_dir)
    Builder(soc, output_dir=str(build_dir), compile_software=False, compile_gateware=False,
            csr_json=str(build_dir / "csr.json")).build(build_name="colorlight_5a_75b", run=False)
    gateware = build_dir / "gateware"
    return gateware, (gateware / "colorlight_5a_75b.v").read_text(), (gateware / "colorlight_5a_75b.lpf").read_text()


@pytest.mark.parametrize("revision", ["6.1", "7.0", "8.0"])
def test_generated_board_clocks_and_pins(revision, tmp_path):
    """What the twin cannot see, checked on the Verilog and pins the tools will get."""
    gateware, verilog, lpf = _generate(revision, tmp_path)
    # RGMII TX leaves on the tester clock (the generator's clock), never on a PHY's RX clock
    for port in (0, 1):
        assert re.search(rf"^assign eth{port}_tx_clk = tester_clk;$", verilog, re.M), f"eth{port} TX clock"
        assert not re.search(rf"^assign eth{port}_tx_clk = eth{port}_rx_clk;$", verilog, re.M)
    # every pin used once
    sites = re.findall(r'^LOCATE COMP "([^"]+)" SITE "([^"]+)";$', lpf, re.M)
    by_site = {}
    for comp, site in sites:
        by_site.setdefault(site, []).append(comp)
    assert {s: c for s, c in by_site.items() if len(c) > 1} == {}
    # one shared MDIO bus, both pins placed
    comps = {comp for comp, _ in sites}
    assert {"eth_mdio_mdio", "eth_mdio_mdc"} <= comps
    if revision == "6.1":
        # the shared PHY reset is requested once, pulled up and never driven (it also resets the PHY
        # that clocks the FPGA); port 1's receive pins as on the Colorlight i5
        assert re.search(r"^\s*input\s+wire\s+eth_rst_n,$", verilog, re.M)
        assert 'IOBUF PORT "eth_rst_n" PULLMODE=UP;' in lpf
        assert dict(sites)["eth1_rx_ctl"] == "M20"
        assert [dict(sites)[f"eth1_rx_data[{i}]"] for i in range(4)] == ["P20", "N19", "N20", "M19"]
    # no build date in what is synthesised: the identifier ROM is the same for every build
    ident = bytes(int(b, 16) for b in (gateware / "colorlight_5a_75b_mem.init").read_text().split())
    assert ident.rstrip(b"\0") == b"fpgatest colorlight_5a_75b"
