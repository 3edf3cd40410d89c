# SPDX-License-Identifier: BSD-2-Clause
"""LiteX integration of the tester cores: time base, N ports with their CSRs, global control and identity."""

import hashlib
from pathlib import Path

from migen import ClockSignal, Constant, If, Instance, Mux, ResetSignal, Signal

from litex.gen import LiteXModule
from litex.soc.integration.soc import SoCRegion
from litex.soc.interconnect import wishbone
from litex.soc.interconnect.csr import CSRField, CSRStatus, CSRStorage

from litex_soc.crossing import any_of, apart_from, cross_strobe
from litex_soc.intervals import PERIOD_MIN, IntervalCopier, IntervalTimer, record_fields
from litex_soc.management import BURST, UDP_PORT, Management, convert_ip
from litex_soc.verilog_ports import counter_names, module_ports, module_values

ROOT = Path(__file__).resolve().parents[1]
COUNTERS_BASE = 0x0010_0000  # bus address of port 0's counter window, past the CSR space
INTERVALS_BASE = 0x0011_0000  # bus address of the interval recorder's ring
RTL = ROOT / "rtl"

# reset values of the configuration registers: an IPv4/UDP stream of 64-byte frames at line rate
CFG_DEFAULTS = {
    "cfg_proto":        1,
    "cfg_vlan_tci":     0x0064,
    "cfg_ethertype":    0x88B5,
    "cfg_ip_ttl":       64,
    "cfg_udp_src":      0x1234,
    "cfg_udp_dst":      0x4D54,
    "cfg_tx_stream_id": 1,
    "cfg_size":         64,
    "cfg_ifg":          12,
    "cfg_burst_gap":    12,
    "cfg_rx_stream_id": 1,
    "cfg_max_size":     16383,
    "cfg_hist_shift":   4,
}

# per-port addresses: port n is 02:00:00:00:00:0(n+1), 192.168.n.1, and sends to its peer (csr.json:
# FPGATEST_PORTn_MAC, FPGATEST_PORTn_IPV4, which the host sends by default)
def port_defaults(index: int, peer: int) -> dict:
    return {
        "cfg_src_mac": 0x020000000001 + index,
        "cfg_dst_mac": 0x020000000001 + peer,
        "cfg_src_ip":  0xC0A80001 + (index << 8),
        "cfg_dst_ip":  0xC0A80001 + (peer << 8),
        "cfg_tx_stream_id": index + 1,
        "cfg_rx_stream_id": peer + 1,
    }


# calibration inputs are wired from tester-level registers, not per-port CSRs
_CAL_PORTS = ("cfg_cal_internal", "cfg_cal_tx_cable", "cfg_cal_rx_cable")


# vendor primitives live behind small wrappers, one directory per target; every other core is common
TARGETS = ("ecp5", "generic")


def rtl_sources(target: str) -> list[Path]:
    """The tester cores for one target: rtl/*.v plus that target's wrappers (rtl/<target>/*.v)."""
    assert target in TARGETS, f"unknown target {target!r}"
    return sorted(RTL.glob("*.v")) + sorted((RTL / target).glob("*.v"))


def rtl_include_dir(target: str) -> Path:
    """Where the cores find that target's included texts (rtl/<target>/*.vh)."""
    assert target in TARGETS, f"unknown target {target!r}"
    return RTL / target


def rtl_files() -> list[Path]:
    """Every gateware source of every target: modules (*.v) and included texts (*.vh)."""
    return sorted([*RTL.rglob("*.v"), *RTL.rglob("*.vh")])


# sources that shape only the twin (its simulated device under test): part of the twin's identity,
# not the board's, so a change to the model leaves the board's bitstream as it is
TWIN_ONLY = ("litex_soc/dut_model.py",)


def gateware_id(extra: str = "", model_sources: tuple = ()) -> int:
    """32-bit identity of the gateware and its register map: a hash of every source that shapes them
    (the cores, the LiteX integration and, for the twin, the device model's sources)."""
    h = hashlib.sha256(extra.encode())
    shared = [p for p in (ROOT / "litex_soc").glob("*.py") if str(p.relative_to(ROOT)) not in TWIN_ONLY]
    for path in sorted(rtl_files() + shared + [Path(p) for p in model_sources]):
        h.update(str(path.relative_to(ROOT)).encode())
        h.update(path.read_bytes())
    return int.from_bytes(h.digest()[:4], "big")


def add_sources(platform, target: str) -> None:
    for path in rtl_sources(target):
        platform.add_source(str(path))
    platform.add_verilog_include_path(str(rtl_include_dir(target)))


class CounterWindow(LiteXModule):
    """The port's event-counter snapshot bank as a read-only bus region: counter i at words 2i (high) and
    2i+1 (low), so the host reads every counter in one burst. The interval recorder reads the bank
    too: while it holds `grant`, its `own_addr` goes to the bank and a bus read waits."""

    def __init__(self):
        self.bus = wishbone.Interface(data_width=32, address_width=32, addressing="word")
        self.rd_addr = Signal(8)
        self.rd_data = Signal(64)
        self.grant = Signal()
        self.own_addr = Signal(8)

        # # #

        wait = Signal(2)
        self.comb += self.rd_addr.eq(Mux(self.grant, self.own_addr, self.bus.adr[1:9]))
        self.sync += [
            self.bus.ack.eq(0),
            If(self.grant, wait.eq(0)).Elif(self.bus.cyc & self.bus.stb & ~self.bus.ack,
                wait.eq(wait + 1),
                # the bank answers one clock after the address: give it two
                If(wait == 2,
                    wait.eq(0),
                    self.bus.ack.eq(1),
                    self.bus.dat_r.eq(Mux(self.bus.adr[0], self.rd_data[0:32], self.rd_data[32:64])),
                ),
            ),
        ]


class TesterPort(LiteXModule):
    """One fpgatest_port: every cfg_* a CSRStorage, every stat_* a CSRStatus, ctl_* one pulse register."""

    def __init__(self, time_tick, gmii_tx, gmii_rx, rx_clk, rx_rst, cal_internal, defaults, global_pulses,
                 with_tx=True, with_rx=True, reflect_log2=0, tx_hold=0, mgmt_mac=0, mgmt_ip=0):
        ports = module_ports(RTL / "fpgatest_port.v")
        self.cal_cable = CSRStorage(32, description="Delay of this port's cable, 1/16 tick (0.5 ns).")
        self.cal_tx_cable = Signal(32)  # the sending (peer) port's cable delay
        ctl = [p for p in ports if p.name.startswith("ctl_")]
        self.control = CSRStorage(fields=[
            CSRField(p.name[4:], size=1, pulse=True, description=p.description) for p in ctl])

        # # #

        # the port runs in the 125 MHz "tester" domain; CSRs live in "sys" (slower on a board, the
        # same clock in the twin). Configuration and snapshot values are static while the other side
        # uses them (written before start, read after the snapshot settles); pulses are synchronized.
        params = dict(
            i_clk=ClockSignal("tester"), i_rst=ResetSignal("tester"), i_time_tick=time_tick,
            i_rx_clk=rx_clk, i_rx_rst=rx_rst,
            o_gmii_txd=gmii_tx["data"], o_gmii_tx_en=gmii_tx["en"], o_gmii_tx_er=gmii_tx["er"], i_tx_hold=tx_hold,
            i_gmii_rxd=gmii_rx["data"], i_gmii_rx_dv=gmii_rx["dv"], i_gmii_rx_er=gmii_rx["er"],
            i_cfg_cal_internal=cal_internal, i_cfg_cal_tx_cable=self.cal_tx_cable,
            i_cfg_cal_rx_cable=self.cal_cable.storage,
        )
        self.counters = CounterWindow()
        params["i_cnt_rd_addr"] = self.counters.rd_addr
        params["o_cnt_rd_data"] = self.counters.rd_data
        # control: one synchronizer for the whole register (its write strobe), the field values read in
        # the tester domain from the storage, which holds still until the next write (>= 3 sys
        # clocks later; the strobe arrives within 3 tester clocks): the fields of one write act at one
        # tester edge. Fields marked "engine clock" act in sys directly, where their engines run.
        # (moved a clock later where it falls on an interval edge, so that the two stay two markers)
        fire = apart_from(self, cross_strobe(self, self.control.re), global_pulses["edge"])
        self.snapshot_pulse = Signal()  # in the tester domain
        self.marker_sent = Signal()     # sys: a marker field was written (the port's busy flags cover it)
        markers = 0
        offsets = {f.name: f.offset for f in self.control.fields.fields}
        for p in ctl:
            if "engine clock" in p.description:
                params["i_" + p.name] = getattr(self.control.fields, p.name[4:])
                continue
            bit = self.control.storage[offsets[p.name[4:]]]
            # the tester-wide pulse crossed once (Tester) and reaches every port at the same edge
            pulse = (fire & bit) | global_pulses.get(p.name[4:], 0)
            if "marker" in p.description:
                markers = markers | bit
            if p.name == "ctl_snapshot":
                self.comb += self.snapshot_pulse.eq(pulse)
            params["i_" + p.name] = pulse
        self.comb += self.marker_sent.eq(self.control.re & markers)
        params["i_eng_clk"] = ClockSignal("sys")
        params["i_eng_rst"] = ResetSignal("sys")
        # markers set off at this sys clock, each at a tester edge of its own: this port's, the
        # tester's and an interval edge that has crossed
        marker_count = Signal(2)
        self.comb += marker_count.eq(self.marker_sent + global_pulses["marker_sent"] + global_pulses["edge_arrived"])
        params["i_eng_marker_sent"] = marker_count
        # configuration: write-only words behind cfg_addr/cfg_data, so that no read multiplexer is spent
        # on values the host wrote itself (the ECP5-25F is full); the word numbering is exported
        cfg = [p for p in ports if p.name.startswith("cfg_") and p.name not in _CAL_PORTS]
        self.cfg_addr = CSRStorage(8, name="cfg_addr", description="Configuration word written by cfg_data.")
        self.cfg_data = CSRStorage(32, name="cfg_data",
            description="Writing it stores the value in configuration word cfg_addr (see FPGATEST_CFG_* constants).")
        write = Signal()
        self.sync += write.eq(self.cfg_data.re)  # storage holds the new value one clock after re
        self.cfg_words = []
        word = 0
        for p in cfg:
            n_words = (p.width + 31) // 32
            storage = Signal(p.width, name=p.name, reset=defaults.get(p.name, CFG_DEFAULTS.get(p.name, 0)))
            for w in range(n_words):
                lo = 32 * (n_words - 1 - w)  # most significant word first, as LiteX CSRs
                hi = min(p.width, lo + 32)
                self.sync += If(write & (self.cfg_addr.storage == word),
                                storage[lo:hi].eq(self.cfg_data.storage[:hi - lo]))
                word += 1
            self.cfg_words.append((p.name, word - n_words, n_words))
            params["i_" + p.name] = storage
        for p in ports:
            if p.name.startswith("stat_"):
                csr = CSRStatus(p.width, name=p.name, description=p.description or p.name)
                setattr(self, p.name, csr)
                params["o_" + p.name] = csr.status
        params["p_WITH_TX"] = int(with_tx)
        params["p_WITH_RX"] = int(with_rx)
        params["p_REFLECT_LOG2"] = reflect_log2 if with_tx and with_rx else 0
        params["p_MGMT_MAC"] = Constant(mgmt_mac, 48)
        params["p_MGMT_IP"] = Constant(mgmt_ip, 32)
        self.specials += Instance("fpgatest_port", **params)


class Tester(LiteXModule):
    """Time base, identity, global snapshot/clear and calibration shared by all ports."""

    def __init__(self, build_id: int, n_ports: int, intervals: bool = True):
        self.build_id = CSRStatus(32, reset=build_id,
            description="Gateware/register-map identity; the host refuses a csr.json whose FPGATEST_BUILD_ID differs.")
        self.n_ports = CSRStatus(8, reset=n_ports, description="Number of tester ports.")
        self.control = CSRStorage(fields=[
            CSRField("snapshot",    size=1, pulse=True, description="Latch the counters of every port at once."),
            CSRField("clear",       size=1, pulse=True, description="Clear the counters of every port at once."),
            CSRField("clear_stats", size=1, pulse=True,
                     description="Clear the scalar latency statistics of every port at once (with snapshot: an interval)."),
            CSRField("clear_hist",  size=1, pulse=True, description="Clear the latency histogram of every port at once."),
        ])
        self.cal_internal = CSRStorage(32,
            description="Tester internal delay (PHY TX + RX pipeline), 1/16 tick (0.5 ns); removed from every latency.")
        self.time = CSRStatus(64, description="Tick counter (8 ns) latched by the last snapshot of any kind.")

        # # #

        # the identity from flip-flop settings, not logic: on the board the netlist, and with it the
        # placement and timing, is then the same whatever the identity (rtl/ecp5/fpgatest_const.v)
        self.specials += Instance("fpgatest_const", p_WIDTH=32, p_VALUE=build_id,
            i_clk=ClockSignal("sys"), o_q=self.build_id.status)

        # one synchronizer for the register, fanned out in the tester domain: every port sees each
        # field at the same tester edge; "marker_sent" (sys) tells the ports that markers are coming
        self.time_tick = Signal(64)
        self.specials += Instance("fpgatest_timebase",
            i_clk=ClockSignal("tester"), i_rst=ResetSignal("tester"), o_time_tick=self.time_tick)
        self.pulses = {"marker_sent": Signal(), "edge_arrived": Signal()}  # edge_arrived: set by the copier
        self.interval = IntervalTimer(self.time_tick) if intervals else None
        edge = self.pulses["edge"] = self.interval.edge if intervals else None
        fire = apart_from(self, cross_strobe(self, self.control.re), edge)
        self.pulses.update({f.name: fire & self.control.storage[f.offset] for f in self.control.fields.fields})
        if intervals:
            # an interval edge: a snapshot with a clear of the statistics (and of the histogram, early on)
            self.pulses["snapshot"] = self.pulses["snapshot"] | edge
            self.pulses["clear_stats"] = self.pulses["clear_stats"] | edge
            self.pulses["clear_hist"] = self.pulses["clear_hist"] | (edge & self.interval.edge_clear_hist)
        self.comb += self.pulses["marker_sent"].eq(self.control.re & (self.control.storage != 0))
        self.any_snapshot = Signal()  # in the tester domain
        # the ports register their control pulses once before use: latch the time at that same edge
        any_snapshot_q = Signal()
        self.sync.tester += [
            any_snapshot_q.eq(self.any_snapshot),
            If(any_snapshot_q, self.time.status.eq(self.time_tick)),
        ]


def contract_constants() -> dict[str, int]:
    """The limits the host shares with the gateware, read from the cores' own parameters: the
    generator's frame size and gap limits and its refusal bits, the tracker's window and event
    FIFO, the sample FIFO (the host checks it agrees with them: fpgatest.tester.check_contract)."""
    gen = module_values(RTL / "fpgatest_gen.v")
    tracker = module_values(RTL / "fpgatest_seq_tracker.v")
    stats = module_values(RTL / "fpgatest_latency_stats.v")
    checker = module_values(RTL / "fpgatest_checker.v")
    out = {"FPGATEST_LAT_UNITS_PER_TICK": 1 << checker["LAT_FRAC_BITS"],   # latency and calibration registers
           "FPGATEST_MAX_FRAME": gen["MAX_SIZE"], "FPGATEST_MIN_IFG": gen["MIN_GAP"],
           "FPGATEST_SEQ_WINDOW": 1 << tracker["WINDOW_LOG2"], "FPGATEST_EVENT_DEPTH": 1 << tracker["EVENT_DEPTH_LOG2"],
           "FPGATEST_SAMPLE_DEPTH": 1 << stats["SAMPLE_DEPTH_LOG2"]}
    out.update({f"FPGATEST_GEN_{name}": value for name, value in gen.items() if name.startswith("ERR_")})
    port = module_values(RTL / "fpgatest_port.v")
    out.update({f"FPGATEST_{name[:-4]}": 1 << value for name, value in port.items()
                if name.startswith("REFLECT_") and name.endswith("_BIT")})
    return out


def add_tester(soc, phys_gmii: list, target: str, build_extra: str = "", directions: list | None = None,
               model_sources: tuple = (), intervals: bool = True, reflect_log2: int = 12,
               etherbone: dict | None = None) -> Tester:
    """Add the tester with one port per entry of phys_gmii: dicts with tx/rx GMII signals and RX clock.

    target: which primitive wrappers to build with ("ecp5" on the board, "generic" in the twin).

    model_sources: the sources of a simulated device joined to the ports (twin), for the build id.

    directions: per port (with_tx, with_rx); default both. A device too small for two full-duplex
    ports can build port 0 as a generator and port 1 as a receiver; the register map is the same.

    intervals: build the interval recorder (litex_soc/intervals.py); without it the host times the
    intervals itself.

    reflect_log2: every port with both directions gets a reflector with a ring of 2^reflect_log2 bytes
    (it reflects frames up to that size, up to half of it at line rate; csr.json:
    FPGATEST_PORTn_REFLECT_BYTES, 0 where a port has none); 0: no reflector on any port.

    etherbone: {"port": n, "ip": "a.b.c.d", "mac": int}: LiteEth UDP/IP + Etherbone on port n's PHY
    (litex_soc/management.py), the host's bus at udp://ip (csr.json: FPGATEST_ETHERBONE_*).
    """
    directions = directions or [(True, True)] * len(phys_gmii)
    n = len(phys_gmii)
    build_id = gateware_id(build_extra + build_variant(directions, intervals, reflect_log2, etherbone), model_sources)
    tester = Tester(build_id, n, intervals)
    soc.add_module("tester", tester)
    soc.add_constant("FPGATEST_BUILD_ID", build_id)
    soc.add_constant("FPGATEST_TICK_NS", 8)
    for name, value in contract_constants().items():
        soc.add_constant(name, value)
    add_sources(soc.platform, target)
    ports = []
    min_gap = module_values(RTL / "fpgatest_gen.v")["MIN_GAP"]
    for index, phy in enumerate(phys_gmii):
        peer = (index + 1) % n if n > 1 else index
        defaults = port_defaults(index, peer)
        port_tx, mgmt = phy["tx"], None
        if etherbone and etherbone["port"] == index:
            # the port's frames reach the PHY through the management core's arbiter
            port_tx = {"data": Signal(8), "en": Signal(), "er": Signal()}
            mgmt = Management(soc, phy, port_tx, etherbone["mac"], etherbone["ip"], min_gap)
            soc.add_module("etherbone_mgmt", mgmt)
            soc.add_constant("FPGATEST_ETHERBONE_PORT", index)
            soc.add_constant("FPGATEST_ETHERBONE_MAC", etherbone["mac"])
            soc.add_constant("FPGATEST_ETHERBONE_IPV4", convert_ip(etherbone["ip"]))
            soc.add_constant("FPGATEST_ETHERBONE_UDP_PORT", UDP_PORT)
            soc.add_constant("FPGATEST_ETHERBONE_BURST", BURST)
        port = TesterPort(
            time_tick       = tester.time_tick,
            gmii_tx         = port_tx,
            gmii_rx         = phy["rx"],
            rx_clk          = phy["rx_clk"],
            rx_rst          = phy["rx_rst"],
            cal_internal    = tester.cal_internal.storage,
            defaults        = defaults,
            global_pulses   = tester.pulses,
            with_tx         = directions[index][0],
            with_rx         = directions[index][1],
            reflect_log2    = reflect_log2,
            tx_hold         = mgmt.tx_hold if mgmt else 0,
            mgmt_mac        = mgmt.mac if mgmt else 0,
            mgmt_ip         = convert_ip(mgmt.ip) if mgmt else 0,
        )
        soc.add_constant(f"FPGATEST_PORT{index}_TX", int(directions[index][0]))
        soc.add_constant(f"FPGATEST_PORT{index}_MAC", defaults["cfg_src_mac"])
        soc.add_constant(f"FPGATEST_PORT{index}_IPV4", defaults["cfg_src_ip"])
        soc.add_constant(f"FPGATEST_PORT{index}_RX", int(directions[index][1]))
        soc.add_constant(f"FPGATEST_PORT{index}_REFLECT_BYTES",
                         1 << reflect_log2 if all(directions[index]) and reflect_log2 else 0)
        soc.add_module(f"port{index}", port)
        soc.bus.add_slave(f"port{index}_counters", port.counters.bus,
                          SoCRegion(origin=COUNTERS_BASE + index * 0x1000, size=0x1000, cached=False, mode="r"))
        ports.append(port)
    for index, (name, _) in enumerate(counter_names(RTL / "fpgatest_port.v")):
        soc.add_constant(f"FPGATEST_COUNTER_{name.upper()}", index)
    for name, first, words in ports[0].cfg_words:
        soc.add_constant(f"FPGATEST_{name.upper()}_WORD", first)
        soc.add_constant(f"FPGATEST_{name.upper()}_WORDS", words)
    # bit positions of the control fields, so the host needs no copy of them
    for reg, module in (("PORT", ports[0]), ("TESTER", tester)):
        for field in module.control.fields.fields:
            soc.add_constant(f"FPGATEST_{reg}_CONTROL_{field.name.upper()}", field.offset)
    # a frame received on port n was sent by its peer through the peer's cable
    for index, port in enumerate(ports):
        peer = ports[(index + 1) % n if n > 1 else index]
        soc.comb += port.cal_tx_cable.eq(peer.cal_cable.storage)
    tester.comb += tester.any_snapshot.eq(any_of(p.snapshot_pulse for p in ports))
    if intervals:
        add_interval_recorder(soc, tester, ports, directions)
    return tester


def build_variant(directions: list, intervals: bool, reflect_log2: int = 12, etherbone: dict | None = None) -> str:
    """What of the build's shape the build id covers beside the sources."""
    return (repr(directions) + ("" if intervals else " without intervals") + f" reflector 2^{reflect_log2}"
            + (f" etherbone {sorted(etherbone.items())}" if etherbone else ""))


def add_interval_recorder(soc, tester: Tester, ports: list, directions: list) -> None:
    """The copier of the interval records, its ring as a bus region, and the record layout as
    FPGATEST_INTERVAL_* constants (see litex_soc/intervals.py)."""
    counters = [name for name, _ in counter_names(RTL / "fpgatest_port.v")]
    fields = record_fields(tester.interval, ports, counters, directions)
    busy = [s for p in ports for s in (p.stat_counters_busy.status, p.stat_hist_busy.status)]
    copier = IntervalCopier(tester.interval, fields, [p.counters for p in ports], busy)
    tester.submodules.interval_copier = copier
    tester.comb += tester.pulses["edge_arrived"].eq(copier.arrived)
    soc.bus.add_slave("intervals", copier.bus,
                      SoCRegion(origin=INTERVALS_BASE, size=4 * copier.depth * copier.slot, cached=False, mode="r"))
    soc.add_constant("FPGATEST_INTERVAL_PERIOD_MIN", PERIOD_MIN)
    soc.add_constant("FPGATEST_INTERVAL_WORDS", len(copier.words))
    soc.add_constant("FPGATEST_INTERVAL_SLOT", copier.slot)
    soc.add_constant("FPGATEST_INTERVAL_DEPTH", copier.depth)
    for name, (first, words) in copier.layout.items():
        soc.add_constant(f"FPGATEST_INTERVAL_{name.upper()}_WORD", first)
        soc.add_constant(f"FPGATEST_INTERVAL_{name.upper()}_WORDS", words)
