# SPDX-License-Identifier: BSD-2-Clause
"""What the tools get for each Colorlight board target (5A-75B, i9), checked on the generated Verilog,
pins and register map: what the twin cannot see."""

import importlib
import json
import re

import pytest

from litex.soc.integration.builder import Builder


def _generate(board: str, revision: str, tmp_path, **options):
    """The board's Verilog and LPF without running the tools (a few seconds)."""
    build_dir = tmp_path / revision
    soc = importlib.import_module(f"boards.{board}").BaseSoC(revision=revision, build_dir=build_dir, **options)
    Builder(soc, output_dir=str(build_dir), compile_software=False, compile_gateware=False,
            csr_json=str(build_dir / "csr.json")).build(build_name=board, run=False)
    gateware = build_dir / "gateware"
    return gateware, (gateware / f"{board}.v").read_text(), (gateware / f"{board}.lpf").read_text()


@pytest.mark.parametrize("board,revision", [("colorlight_5a_75b", "6.1"), ("colorlight_5a_75b", "7.0"),
                                            ("colorlight_5a_75b", "8.0"), ("colorlight_i9", "7.2")])
def test_generated_board_clocks_and_pins(board, revision, tmp_path):
    """What the twin cannot see, checked on the Verilog and pins the tools will get."""
    gateware, verilog, lpf = _generate(board, revision, tmp_path)
    # RGMII TX leaves on the tester clock (the generator's clock), never on a PHY's RX clock
    for port in (0, 1):
        assert re.search(rf"^assign eth{port}_tx_clk = tester_clk;$", verilog, re.M), f"eth{port} TX clock"
        assert not re.search(rf"^assign eth{port}_tx_clk = eth{port}_rx_clk;$", verilog, re.M)
    # the pads' delays are those of litex-boards' targets for these boards, which carry Ethernet on
    # hardware (docs/board.md, "RGMII pad delays"): TX clock, control and data leave their ODDRX1F together
    # (the PHY delays TXC), RX control and data wait 80 DELAYG taps (2 ns nominal) and the RX clock none
    delays = _pad_delays(verilog)
    for port in (0, 1):
        tx = [f"eth_clocks{port}_tx", f"eth{port}_tx_ctl"] + [f"eth{port}_tx_data[{i}]" for i in range(4)]
        rx = [f"eth{port}_rx_ctl"] + [f"eth{port}_rx_data[{i}]" for i in range(4)]
        assert {pad: delays.pop(pad, None) for pad in tx + rx} == {**dict.fromkeys(tx, 0), **dict.fromkeys(rx, 80)}
    assert delays == {}, f"other delayed pads: {delays}"
    # the tester domain's reset (about 350 flip-flops across the die) comes from its synchroniser over
    # a global network (a DCCA), not on general routing, and nothing else drives it
    dcca = re.search(r"^DCCA \w+\((.*?)\);$", verilog, re.M | re.S)
    assert dcca and re.search(r"\.CLKI \(tester_por_rst\)", dcca.group(1)) and \
        re.search(r"\.CLKO \(tester_rst\)", dcca.group(1)), "tester reset not on a global"
    assert not re.search(r"^\s*(assign\s+)?tester_rst\s*<?=", verilog, re.M)
    # every pin used once
    sites = re.findall(r'^LOCATE COMP "([^"]+)" SITE "([^"]+)";$', lpf, re.M)
    by_site = {}
    for comp, site in sites:
        by_site.setdefault(site, []).append(comp)
    assert {s: c for s, c in by_site.items() if len(c) > 1} == {}
    # one shared MDIO bus, both pins placed
    comps = {comp for comp, _ in sites}
    assert {"eth_mdio_mdio", "eth_mdio_mdc"} <= comps
    if revision in ("6.1", "7.2"):
        # the shared PHY reset is requested once, pulled up and never driven (it may also reset the PHY
        # that clocks the FPGA); port 1's receive pins as on the Colorlight i5
        assert re.search(r"^\s*input\s+wire\s+eth_rst_n,$", verilog, re.M)
        assert 'IOBUF PORT "eth_rst_n" PULLMODE=UP;' in lpf
        assert dict(sites)["eth1_rx_ctl"] == "M20"
        assert [dict(sites)[f"eth1_rx_data[{i}]"] for i in range(4)] == ["P20", "N19", "N20", "M19"]
    # no build date in what is synthesised: the identifier ROM is the same for every build
    ident = bytes(int(b, 16) for b in (gateware / f"{board}_mem.init").read_text().split())
    assert ident.rstrip(b"\0") == f"fpgatest {board}".encode()
    # what the build holds, as the host reads it from the register map: the 5A-75B one direction per
    # port (the LFE5U-25F) and the interval recorder, the i9 both directions on both ports without it
    target = importlib.import_module(f"boards.{board}")
    constants = json.loads((gateware.parent / "csr.json").read_text())["constants"]
    both = board == "colorlight_i9"
    assert target.BaseSoC.FULL_DUPLEX == both
    assert [(constants[f"fpgatest_port{p}_tx"], constants[f"fpgatest_port{p}_rx"]) for p in (0, 1)] == \
        ([(1, 1), (1, 1)] if both else [(1, 0), (0, 1)])
    assert ("fpgatest_interval_depth" in constants) == target.BaseSoC.INTERVALS == (not both)
    assert constants["fpgatest_build_id"] == target.BaseSoC.build_id(revision)
    # the build id reaches the netlist as fpgatest_const's parameter alone (flip-flop settings, not
    # logic), so a source change that leaves the board's logic alone leaves its placement and timing
    const = re.search(r"^fpgatest_const #\((.*?)\) fpgatest_const \(", verilog, re.M | re.S)
    build_id = constants["fpgatest_build_id"]
    assert const and re.search(rf"\.VALUE \(\d+'d{build_id}\)", const.group(1)), "build id not in fpgatest_const"
    assert verilog.count(f"'d{build_id}") == 1, "the build id is used as logic too"
    assert [constants[f"fpgatest_port{p}_phy_addr"] for p in (0, 1)] == list(target.PHY_ADDR)


def _pad_delays(verilog: str) -> dict:
    """Every DELAYG of the board top: the pad on its pad side (its output for TX, its input for RX) ->
    its fixed delay in taps."""
    delays = {}
    for params, conns in re.findall(r"^DELAYG #\((.*?)\) \w+ \((.*?)\);$", verilog, re.M | re.S):
        assert re.search(r'\.DEL_MODE\s+\("SCLK_ALIGNED"\)', params), params
        taps = int(re.search(r"\.DEL_VALUE\s+\(\d+'d(\d+)\)", params).group(1))
        a, z = (re.search(rf"\.{pin}\s+\(([^)]*)\)", conns).group(1) for pin in "AZ")
        pad = a if re.fullmatch(r"eth\d_rx_\w+(\[\d\])?", a) else z
        assert pad not in delays, pad
        delays[pad] = taps
    return delays


def _port_instance(verilog: str, index: int) -> str:
    ports = re.findall(r"^fpgatest_port #\((.*?)\) fpgatest_port(\w*) \((.*?)\);$", verilog, re.M | re.S)
    return ports[index][0] + ports[index][2]


@pytest.mark.parametrize("board", ["colorlight_5a_75b", "colorlight_i9"])
def test_etherbone_build(board, tmp_path):
    """--etherbone: LiteEth UDP/IP + Etherbone on port 1 (litex_soc/management.py). The core runs in
    the bus clock; in port 1's PHY receive clock and the tester clock only its byte-wide ends (word
    packing, the crossings' FIFO sides, the gap). Port 1's checker knows its MAC (management frames
    counted apart) and port 1's transmitter waits on its hold; the register map tells the host where
    it is. The default build has none of it."""
    target = importlib.import_module(f"boards.{board}")
    revision = target.BaseSoC.REVISION
    _, verilog, _ = _generate(board, revision, tmp_path, etherbone="192.168.1.60")
    constants = json.loads((tmp_path / revision / "csr.json").read_text())["constants"]
    assert (constants["fpgatest_etherbone_port"], constants["fpgatest_etherbone_ipv4"],
            constants["fpgatest_etherbone_udp_port"]) == (1, 0xC0A8013C, 1234)
    assert constants["fpgatest_build_id"] == target.BaseSoC.build_id(etherbone="192.168.1.60") != target.BaseSoC.build_id()
    mac = constants["fpgatest_etherbone_mac"]
    assert re.search(rf"\.MGMT_MAC\s*\(48'd{mac}\)", _port_instance(verilog, 1))
    assert re.search(r"\.MGMT_MAC\s*\(48'd0\)", _port_instance(verilog, 0))
    assert not re.search(r"\.tx_hold\s*\(1'd0\)", _port_instance(verilog, 1)), "port 1's hold not wired"
    assert re.search(r"^assign mgmt_rx_clk = eth1_rx_clk;$", verilog, re.M), "LiteEth's receive clock"
    registers = {}
    for clock, body in re.findall(r"^always @\(posedge (\w+)\) begin\n(.*?)^end$", verilog, re.M | re.S):
        registers.setdefault(clock, set()).update(re.findall(r"^\s*(\w+) <=", body, re.M))
    byte_wide = re.compile(r"core_mac_core_(rx|tx)_(cdc|converter|gap|last_be)|liteethmac_txdatapath_liteethmac(gap|txlastbe)_state")
    for clock in ("mgmt_rx_clk", "tester_clk"):
        core = {r for r in registers[clock] if "_core_" in r or "liteeth" in r}
        assert core and all(byte_wide.search(r) for r in core), (clock, sorted(r for r in core if not byte_wide.search(r)))
    for part in ("_core_arp_", "_core_ip_", "_core_icmp_", "crc32checker", "_core_mac_core_tx_crc_", "_etherbone_"):
        assert any(part in r for r in registers["sys_clk"]), f"{part} not in the bus clock"
    assert re.search(r"^assign eth1_tx_clk = tester_clk;$", verilog, re.M)
    # the Etherbone master's request reaches the bus arbiter from the register stage's flip-flops, and
    # the bus's reply reaches the master from flip-flops
    stage = {r for r in registers["sys_clk"] if r.startswith("etherbone_stage_")}
    assert ({f"etherbone_stage_bus_{f}" for f in ("adr", "dat_w", "sel", "we", "cyc", "stb")}
            | {f"etherbone_stage_reply_{f}" for f in ("ack", "err", "dat_r")}) <= stage, sorted(stage)
    arbiter_adr = re.search(r"^assign shared_adr = (\w+);$", verilog, re.M).group(1)
    mux = re.search(rf"^always @\(\*\) begin\n\s*{arbiter_adr} <= .*?^end$", verilog, re.M | re.S).group(0)
    choices = re.findall(rf"{arbiter_adr} <= (\w+);", mux)
    assert "etherbone_stage_bus_adr" in choices, choices
    assert not any("etherbone_stage_request" in c or "liteethetherbonewishbonemaster" in c for c in choices), choices
    # the management frames' count in port 1's transmit FIFO adds and takes registered pulses: the FIFO's
    # level compare reaches a flip-flop, not the count's adder (the tester clock's path on the Versa)
    count = re.search(r"^\s*(\w+portphy_frames) <= \(\(\1 \+ (\w+)\) - (\w+)\);$", verilog, re.M)
    assert count and {count.group(2), count.group(3)} <= registers["tester_clk"], count
    assert all("syncfifo" not in count.group(i) for i in (2, 3)), count.group(0)
    default = _generate(board, revision, tmp_path / "default")[1]
    assert "fpgatest_etherbone" not in json.dumps(json.loads((tmp_path / "default" / revision / "csr.json").read_text()))
    assert all(re.search(r"\.MGMT_MAC\s*\(48'd0\)", _port_instance(default, p)) for p in (0, 1))
