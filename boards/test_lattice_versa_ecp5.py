# SPDX-License-Identifier: BSD-2-Clause
"""What the tools get for the ECP5 Versa target (both directions on both ports, a PHY per MDIO bus),
checked on the generated Verilog, pins and register map: what the twin cannot see. Its Fmax is in
`make bench` (build/bench/board_versa.json), not here: a build takes longer than the suite's budget."""

import json
import re
import runpy
import sys

import pytest
from litex.soc.integration.builder import Builder

from boards import lattice_versa_ecp5 as target
from boards.test_colorlight import _generate, _pad_delays


@pytest.mark.parametrize("device", ["LFE5UM5G", "LFE5UM"])
def test_generated_board_clocks_and_pins(device, tmp_path):
    gateware, verilog, lpf = _generate("lattice_versa_ecp5", device, tmp_path)
    # the part: speed grade 8 (what closes the full-duplex build), the device the board carries
    script = (gateware / "build_lattice_versa_ecp5.sh").read_text()
    assert re.search(rf"--{'um5g' if device == 'LFE5UM5G' else 'um'}-45k --package CABGA381 --speed 8 ", script)
    # RGMII TX leaves on the tester clock on both ports
    for port in (0, 1):
        assert re.search(rf"^assign eth{port}_tx_clk = tester_clk;$", verilog, re.M), f"eth{port} TX clock"
    # litex-boards' delays for this board (LiteEth's defaults): TXC 2 ns after its data (80 DELAYG
    # taps), RX control and data 2 ns, the RX clock none
    delays = _pad_delays(verilog)
    for port in (0, 1):
        tx = [f"eth{port}_tx_ctl"] + [f"eth{port}_tx_data[{i}]" for i in range(4)]
        rx = [f"eth{port}_rx_ctl"] + [f"eth{port}_rx_data[{i}]" for i in range(4)]
        assert {pad: delays.pop(pad, None) for pad in [f"eth_clocks{port}_tx"] + tx + rx} == \
            {f"eth_clocks{port}_tx": 80, **dict.fromkeys(tx, 0), **dict.fromkeys(rx, 80)}
    assert delays == {}, f"other delayed pads: {delays}"
    # the tester's reset on a global, as on the Colorlight boards
    dcca = re.search(r"^DCCA \w+\((.*?)\);$", verilog, re.M | re.S)
    assert dcca and re.search(r"\.CLKI \(tester_por_rst\)", dcca.group(1)) and \
        re.search(r"\.CLKO \(tester_rst\)", dcca.group(1))
    # every pin once; each PHY's own MDIO bus and reset pin (LiteEth's power-up pulse: no PHY clocks
    # the FPGA here)
    sites = dict(re.findall(r'^LOCATE COMP "([^"]+)" SITE "([^"]+)";$', lpf, re.M))
    assert len(set(sites.values())) == len(sites)
    assert {k: sites[k] for k in sites if re.fullmatch(r"eth\d_(mdio|mdc|rst_n)", k)} == \
        {"eth0_mdio": "U18", "eth0_mdc": "T18", "eth0_rst_n": "U17",
         "eth1_mdio": "H20", "eth1_mdc": "G19", "eth1_rst_n": "F20"}
    for port in (0, 1):
        assert re.search(rf"^assign eth{port}_rst_n = \(~\w+\);$", verilog, re.M)
    # the register map as the host reads it: a bus per port, no shared one
    csr = json.loads((gateware.parent / "csr.json").read_text())
    assert {f"ethphy{p}_mdio_{rw}" for p in (0, 1) for rw in "wr"} <= set(csr["csr_registers"])
    assert not any(name.startswith("ethmdio") for name in csr["csr_registers"])
    constants = csr["constants"]
    assert [(constants[f"fpgatest_port{p}_tx"], constants[f"fpgatest_port{p}_rx"]) for p in (0, 1)] == [(1, 1)] * 2
    # no reflector (REFLECT_LOG2 0 in the netlist and 0 bytes in the map) and no interval recorder
    assert [constants[f"fpgatest_port{p}_reflect_bytes"] for p in (0, 1)] == [0, 0]
    assert len(re.findall(r"\.REFLECT_LOG2\s*\(1'd0\)", verilog)) == 2
    assert "fpgatest_interval_depth" not in constants
    assert [constants[f"fpgatest_port{p}_phy_addr"] for p in (0, 1)] == list(target.PHY_ADDR)
    assert constants["fpgatest_build_id"] == target.BaseSoC.build_id(device)
    ident = bytes(int(b, 16) for b in (gateware / "lattice_versa_ecp5_mem.init").read_text().split())
    assert ident.rstrip(b"\0") == b"fpgatest lattice_versa_ecp5"


def test_build_places_with_the_static_placer(tmp_path, monkeypatch):
    """`--build` hands nextpnr its analytic placer (HeAP, its default, does not route this build on two
    seeds of three: docs/board.md); the tools themselves are not run here."""
    build = Builder.build
    monkeypatch.setattr(Builder, "build", lambda self, *args, **kwargs: build(self, *args, **{**kwargs, "run": False}))
    monkeypatch.setattr(sys, "argv", ["lattice_versa_ecp5", "--build", "--build-dir", str(tmp_path), "--seed", "2"])
    with pytest.raises(SystemExit) as done:
        runpy.run_path(target.__file__, run_name="__main__")
    assert done.value.code == 0
    script = (tmp_path / "gateware" / "build_lattice_versa_ecp5.sh").read_text()
    assert re.search(r"^nextpnr-ecp5 .*--placer static .*--seed 2 $", script, re.M), script
