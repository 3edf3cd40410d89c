# SPDX-License-Identifier: BSD-2-Clause
"""Link checks over MDIO: the host's clause 22 bit-banging against a bit-level PHY model; what the host reads
of a board's build from its register map."""

import pytest

from fpgatest.mdio import DO, MDC, OE, Mdio, MdioError
from fpgatest.tester import SettingError, Tester
from litex_soc.tester import contract_constants


class Clause22Phy:
    """A PHY on an MDIO bus, seen bit by bit: samples MDIO on MDC's rising edge, answers reads."""

    def __init__(self, addr: int, regs: dict[int, int]):
        self.addr, self.regs = addr, regs
        self.bits = []          # bits the station drove since the last frame
        self.out = None         # bits this PHY drives (read data), one per rising edge
        self.drive = 1          # the level this PHY puts on MDIO (pulled up when released)
        self.reads = []         # registers read, in order

    def rising(self, station_oe: bool, station_bit: int) -> None:
        if self.out:
            self.drive = self.out.pop(0)      # the PHY changes MDIO after the rising edge
            return
        self.bits.append(station_bit if station_oe else 1)
        b = self.bits
        # preamble of 32 ones, then start 01, op 10 (read), PHY address, register address
        if len(b) >= 46 and b[-46:-14] == [1] * 32 and b[-14:-10] == [0, 1, 1, 0]:
            phy = int("".join(map(str, b[-10:-5])), 2)
            reg = int("".join(map(str, b[-5:])), 2)
            self.bits = []
            if phy == self.addr:
                self.reads.append(reg)
                value = self.regs.get(reg, 0)
                if isinstance(value, list):             # a register whose reads change (latched bits)
                    value = value.pop(0) if len(value) > 1 else value[0]
                # turnaround: released until the first edge, then 0; 16 bits MSB first; released again
                self.out = [0] + [(value >> i) & 1 for i in reversed(range(16))] + [1]


class FakeMap:
    def __init__(self, constants, csrs=("ethmdio",)):
        self.constants = constants
        self.registers = {f"{csr}_{rw}": None for csr in csrs for rw in "wr"}

    def __contains__(self, name):
        return name in self.registers

    def n_ports(self):
        return 2


class MdioBus:
    """<csr>_w / <csr>_r of LiteEthPHYMDIO, with PHYs attached: one bus (ethmdio, the Colorlight boards),
    or with buses={csr: phys}, one LiteEthPHYMDIO per bus (ethphyN_mdio, a PHY on each port's own bus)."""

    def __init__(self, phys=(), addrs=(0, 1), buses=None):
        self.buses = buses or {"ethmdio": list(phys)}
        self.w = dict.fromkeys(self.buses, 0)
        # the gateware's contract constants (from the cores' parameters), as csr.json carries them
        self.map = FakeMap({**{k.lower(): v for k, v in contract_constants().items()},
                            "fpgatest_port0_phy_addr": addrs[0], "fpgatest_port1_phy_addr": addrs[1]}, self.buses)

    def write(self, name, value):
        csr = name.removesuffix("_w")
        assert name.endswith("_w") and csr in self.buses, name
        if value & MDC and not self.w[csr] & MDC:
            for phy in self.buses[csr]:
                phy.rising(bool(value & OE), 1 if value & DO else 0)
        self.w[csr] = value

    def write_series(self, name, values):
        for value in values:
            self.write(name, value)

    def series_and_read(self, name, series, data_name):
        out = []
        for values in series:
            self.write_series(name, values)
            out.append(self.read(data_name))
        return out

    def read(self, name):
        csr = name.removesuffix("_r")
        assert name.endswith("_r") and csr in self.buses, name
        w = self.w[csr]
        level = 1 if not w & OE else (1 if w & DO else 0)
        for phy in self.buses[csr]:
            level &= phy.drive
        return level


GIGABIT = {0: 0x1140, 1: 0x796D, 2: 0x0362, 3: 0x5E6A, 4: 0x01E1, 5: 0xC5E1, 9: 0x0300, 10: 0x3C00}


def test_reads_registers_bit_exactly():
    phy = Clause22Phy(3, {2: 0x0362, 3: 0x5E6A, 17: 0xA5C3})
    mdio = Mdio(MdioBus([phy]))
    assert mdio.read(3, 2) == 0x0362
    assert mdio.read(3, 17) == 0xA5C3
    assert mdio.read(3, 3) == 0x5E6A
    assert mdio.read(4, 2) == 0xFFFF          # nobody answers: the bus stays pulled up


@pytest.mark.parametrize("regs, expect", [
    (GIGABIT, (True, 1000, True)),
    ({**GIGABIT, 10: 0x0400}, (True, 1000, False)),                     # partner 1000 half only
    ({**GIGABIT, 9: 0x0000, 10: 0x0000}, (True, 100, True)),            # gigabit not advertised: 100 full
    ({**GIGABIT, 5: 0x0021, 9: 0x0000}, (True, 10, False)),             # partner 10 half only
    ({**GIGABIT, 1: 0x7969}, (False, None, None)),                      # link bit clear
    ({**GIGABIT, 0: 0x0100, 9: 0}, (True, 10, True)),                   # forced 10 full
    ({**GIGABIT, 0: 0x2100, 9: 0}, (True, 100, True)),                  # forced 100 full
])
def test_link_speed_and_duplex(regs, expect):
    link = Mdio(MdioBus([Clause22Phy(1, regs)])).link(1)
    assert (link.up, link.speed_mbps, link.full_duplex) == expect
    assert link.phy_id == 0x03625E6A
    assert link.usable == (expect == (True, 1000, True))


def test_link_bit_latched_low_is_read_again():
    """BMSR's link bit latches low: a 1 is a link up now (one read), a 0 only a drop since the last
    read, so it is read again and the second value is the state now."""
    up = Clause22Phy(1, GIGABIT)
    assert Mdio(MdioBus([up])).link(1).up and up.reads.count(1) == 1
    dropped_then_up = Clause22Phy(1, {**GIGABIT, 1: [0x7969, 0x796D]})
    assert Mdio(MdioBus([dropped_then_up])).link(1).usable and dropped_then_up.reads.count(1) == 2
    down = Clause22Phy(1, {**GIGABIT, 1: [0x7969, 0x7969]})
    assert not Mdio(MdioBus([down])).link(1).up and down.reads.count(1) == 2


def test_measurements_refused_unless_both_links_are_gigabit_full():
    good, slow = Clause22Phy(0, GIGABIT), Clause22Phy(1, {**GIGABIT, 9: 0, 10: 0})
    tester = Tester(MdioBus([good, slow]))
    tester.require_links([0])                     # port 0 alone is fine
    with pytest.raises(SettingError, match=r"port 1: PHY 1 .*link up 100 Mb/s full duplex"):
        tester.require_links([0, 1])
    links = tester.links()
    assert [link.usable for link in links] == [True, False]


def test_missing_phy_is_an_error():
    """A PHY missing at its address: one error that also says where PHYs do answer (a scan of all 32
    addresses), or that none does."""
    tester = Tester(MdioBus([Clause22Phy(0, GIGABIT)]))
    with pytest.raises(SettingError, match=r"^port 1: no PHY answers at MDIO address 1; PHYs answer at MDIO "
                                           r"addresses 0 \(this build has the ports' PHYs at 0, 1"):
        tester.links()
    strapped = Clause22Phy(4, GIGABIT), Clause22Phy(5, GIGABIT)
    with pytest.raises(SettingError, match="port 0: no PHY answers at MDIO address 0; PHYs answer at MDIO "
                                           "addresses 4, 5 "):
        Tester(MdioBus(list(strapped))).links()
    assert [phy.reads for phy in strapped] == [[2], [2]]          # PHYSID1 once each
    with pytest.raises(SettingError, match="no PHY answers at any MDIO address"):
        Tester(MdioBus([])).links()
    with pytest.raises(MdioError):
        Mdio(MdioBus([])).link(0)


def test_a_bus_per_port():
    """Each port's PHY alone on a bus of its own (ethphyN_mdio: the ECP5 Versa), both at address 0: each
    port's link is read on its own bus, and a missing PHY is looked for on that port's bus."""
    fast, slow = Clause22Phy(0, GIGABIT), Clause22Phy(0, {**GIGABIT, 9: 0, 10: 0})
    tester = Tester(MdioBus(addrs=(0, 0), buses={"ethphy0_mdio": [fast], "ethphy1_mdio": [slow]}))
    assert [(link.up, link.speed_mbps) for link in tester.links()] == [(True, 1000), (True, 100)]
    assert fast.reads and slow.reads
    with pytest.raises(SettingError, match=r"port 1: PHY 0 .*link up 100 Mb/s"):
        tester.require_links([0, 1])
    moved = Tester(MdioBus(addrs=(0, 0), buses={"ethphy0_mdio": [Clause22Phy(0, GIGABIT)],
                                                "ethphy1_mdio": [Clause22Phy(7, GIGABIT)]}))
    with pytest.raises(SettingError, match=r"^port 1: no PHY answers at MDIO address 0; PHYs answer at MDIO "
                                           r"addresses 7 on port 1's bus"):
        moved.links()
    # neither kind of bus (the twin): no link to read
    assert Tester(MdioBus(buses={"ethphy0_mdio": [fast]})).links() is None


@pytest.mark.parametrize("tx, rx, reflect_bytes, why", [
    (1, 1, 0, "the build leaves it out"),                   # the ECP5 Versa: both directions, no reflector
    (0, 1, 0, "it needs a port with both directions"),      # the 5A-75B's receiving port
])
def test_a_port_without_a_reflector_says_why(tx, rx, reflect_bytes, why):
    bus = MdioBus()
    bus.map.constants.update({"fpgatest_port1_tx": tx, "fpgatest_port1_rx": rx,
                              "fpgatest_port1_reflect_bytes": reflect_bytes})
    with pytest.raises(SettingError, match=rf"^port 1 has no reflector in this build \({why}\)$"):
        Tester(bus).require_reflector(1)
    bus.map.constants["fpgatest_port1_reflect_bytes"] = 4096
    assert Tester(bus).require_reflector(1) == 4096
