# SPDX-License-Identifier: BSD-2-Clause
"""Etherbone on a tester port: the host's bus over UDP on the wire the port tests.

LiteEth's UDP/IP core (MAC with preamble and FCS, ARP, ICMP echo, IPv4, UDP) and its Etherbone
master sit beside one tester port and share its PHY:

- receive: every frame the PHY delivers goes to the port, as always, and to LiteEth, which keeps
  what is its own (ARP for its address, ICMP echo, Etherbone records to its UDP port) and drops the
  rest. The port's checker is built with the core's MAC and address (fpgatest_port MGMT_MAC,
  MGMT_IP): frames to the MAC, and broadcast ARP requests for the address (the host asking for the
  MAC), are counted as mgmt_frames, not foreign, and never touch the test's figures.
- transmit: the core's frames (preamble to FCS, as LiteEth's MAC makes them, in the tester clock)
  are stored whole in a FIFO, then sent between the port's frames: the arbiter raises the port's
  tx_hold, waits until the hold has lasted TX_HOLD_CLOCKS (no frame of the port can start after
  that) and the wire has been idle MIN_GAP clocks, sends the frame without a break, and keeps the
  hold MIN_GAP clocks more. A test stream's frames are never cut or bent; its gaps stretch by one
  reply frame plus a gap each time the host reads (the port's TX stamps stay those of its own SFDs).

The core runs in the bus clock (sys, 50 MHz) on 32-bit words (LiteEth's system-clock datapath): only
the byte-wide ends stay in the PHY's clocks, the received bytes packed into words in the port's
receive clock and crossing to sys in LiteEth's gray-coded FIFO (32 bits at 50 MHz take 200 MB/s: more
than the 125 MB/s of a line-rate stream, which the core must read and drop), the transmitted words
crossing to the tester clock in another and unpacked there. The Etherbone master is on the bus clock
with the core, and reaches the bus through a register stage (its address comes from its record
FIFO's memory through LiteEth's record logic; straight into the CSR decode that was the bus clock's
longest path). In the PHY clocks (125 MHz) the core's preamble, CRC and IP/UDP/ARP/ICMP logic, a
byte per clock, did not meet timing on any board (docs/board.md).
"""

from pathlib import Path

from migen import FSM, ClockDomain, ClockDomainsRenamer, If, Mux, NextState, NextValue, Signal

from litex.gen import LiteXModule
from litex.soc.interconnect import stream, wishbone

from liteeth.common import convert_ip, eth_phy_description
from liteeth.core import LiteEthUDPIPCore
from liteeth.frontend.etherbone import LiteEthEtherbone

from litex_soc.verilog_ports import module_values

DEFAULT_IP = "192.168.1.50"   # LiteX's usual Etherbone address, on port 1's default subnet
DEFAULT_MAC = 0x020000000032  # locally administered, ...:32 for .50
UDP_PORT = 1234               # Etherbone's port (LiteX's default, as litex_server and CommUDP use)
FIFO_BYTES = 2048             # larger than any frame the core sends (MTU 1500 + headers)
BURST = 256                   # reads (writes) per Etherbone record: LiteEth keeps a record's replies in
                              # a packet FIFO of this many words and fails on a longer one


def _port_value(name: str) -> int:
    return module_values(Path(__file__).resolve().parents[1] / "rtl" / "fpgatest_port.v")[name]


class PortPHY(LiteXModule):
    """The PHY side LiteEth's MAC sees: the port's received bytes (domain mgmt_rx, the PHY's receive
    clock) as its source, and a sink whose frames go out between the port's own (tester domain)."""

    dw = 8

    def __init__(self, gmii_rx: dict, port_tx: dict, wire_tx: dict, min_gap: int):
        """gmii_rx: the PHY's received bytes (data, dv, er); port_tx: what the port sends
        (data, en, er); wire_tx: the PHY's transmit signals; the port's tx_hold is self.tx_hold."""
        self.sink = stream.Endpoint(eth_phy_description(8))      # tester clock
        self.source = stream.Endpoint(eth_phy_description(8))    # mgmt_rx
        self.tx_hold = Signal()

        # # #

        # receive: each byte a clock late, so that the last one is known (the PHY gives no end marker)
        dv, data = Signal(), Signal(8)
        self.sync.mgmt_rx += [dv.eq(gmii_rx["dv"]), data.eq(gmii_rx["data"])]
        self.comb += [
            self.source.valid.eq(dv),
            self.source.data.eq(data),
            self.source.last.eq(dv & ~gmii_rx["dv"]),
            self.source.error.eq(0),
        ]

        # transmit: whole frames only leave the FIFO (LiteEth's crossing may pause inside a frame).
        # LiteEth's chain in the tester clock (its crossing's read side, converter, gap inserter) and the
        # FIFO with its frame count meet through a register slice, registered both ways: the FIFO's
        # ready (its level against its depth) and LiteEth's valid and byte each cross a flip-flop.
        slice_ = ClockDomainsRenamer("tester")(
            stream.Buffer(eth_phy_description(8), pipe_valid=True, pipe_ready=True))
        fifo = ClockDomainsRenamer("tester")(stream.SyncFIFO(eth_phy_description(8), FIFO_BYTES, buffered=True))
        self.slice, self.fifo = slice_, fifo
        self.comb += [self.sink.connect(slice_.sink), slice_.source.connect(fifo.sink)]
        # The count of whole frames in the FIFO follows a frame's last byte going in (stored) or out
        # (taken) a clock late, from flip-flops: the FIFO's ready (its level against its depth) reaches
        # a flip-flop, not the count's adder. A clock late is safe both ways: a frame stored is sent a
        # clock later than it could be; a frame taken has left the count long before the count is read
        # again (the hold stays up MIN_GAP clocks after the frame, and the count is read only while
        # the hold is down).
        assert min_gap >= 2, "the frame count is a clock late: the hold must outlast it"
        stored = Signal()                        # a frame's last byte went in, a clock ago
        taken = Signal()                         # a frame's last byte went out, a clock ago
        frames = Signal(max=FIFO_BYTES)
        self.sync.tester += [
            stored.eq(fifo.sink.valid & fifo.sink.ready & fifo.sink.last),
            taken.eq(fifo.source.valid & fifo.source.ready & fifo.source.last),
            frames.eq(frames + stored - taken),
        ]

        hold_clocks = _port_value("TX_HOLD_CLOCKS")
        held = Signal(max=hold_clocks + 1)       # clocks the hold has lasted (saturates)
        idle = Signal(max=min_gap + 1)           # clocks the port's transmitter has been idle (saturates)
        tail = Signal(max=min_gap + 1)           # idle clocks still owed after our frame
        sending = Signal()
        out_en, out_data = Signal(), Signal(8)
        self.comb += fifo.source.ready.eq(sending)
        self.sync.tester += [
            idle.eq(Mux(port_tx["en"], 0, Mux(idle == min_gap, min_gap, idle + 1))),
            out_en.eq(sending & fifo.source.valid),
            out_data.eq(Mux(sending & fifo.source.valid, fifo.source.data, 0)),
            If(~self.tx_hold,
                held.eq(0),
                If(frames != 0, self.tx_hold.eq(1)),
            ).Elif(~sending & (tail == 0),
                If(held != hold_clocks, held.eq(held + 1)),
                If((held == hold_clocks) & (idle == min_gap), sending.eq(1)),
            ).Elif(sending,
                If(fifo.source.valid & fifo.source.last, sending.eq(0), tail.eq(min_gap)),
            ).Else(
                tail.eq(tail - 1),
                If(tail == 1, self.tx_hold.eq(0)),
            ),
        ]
        self.comb += [
            wire_tx["data"].eq(port_tx["data"] | out_data),
            wire_tx["en"].eq(port_tx["en"] | out_en),
            wire_tx["er"].eq(port_tx["er"]),
        ]


class WishboneRegisterStage(LiteXModule):
    """One Wishbone access at a time, registered both ways: what the master drives (self.slave) reaches
    the interconnect (self.master) from flip-flops a clock later, the reply (ack or err, read data)
    comes back from flip-flops a clock after the bus gave it. Each access costs two clocks more."""

    def __init__(self, like: wishbone.Interface, name: str):
        """name: the prefix of the stage's signals in the Verilog (name_request_adr, ..., name_bus_adr,
        ..., name_reply_ack, name_reply_err, name_reply_dat_r)."""
        self.slave = wishbone.Interface.like(like)      # driven by the master
        self.master = wishbone.Interface.like(like)     # into the interconnect

        # # #

        request, bus = self.slave, self.master
        for side, interface in (("request", request), ("bus", bus)):
            for field, *_ in interface.layout:
                getattr(interface, field).name_override = f"{name}_{side}_{field}"
        ack = Signal(name_override=f"{name}_reply_ack")
        err = Signal(name_override=f"{name}_reply_err")
        dat_r = Signal(len(bus.dat_r), name_override=f"{name}_reply_dat_r")
        self.comb += [request.ack.eq(ack), request.err.eq(err), request.dat_r.eq(dat_r)]
        self.fsm = fsm = FSM(reset_state="IDLE")
        fsm.act("IDLE",
            If(request.cyc & request.stb,
                NextValue(bus.adr, request.adr),
                NextValue(bus.dat_w, request.dat_w),
                NextValue(bus.sel, request.sel),
                NextValue(bus.we, request.we),
                NextValue(bus.cyc, 1),
                NextValue(bus.stb, 1),
                NextState("ACCESS"),
            ),
        )
        fsm.act("ACCESS",
            If(bus.ack | bus.err,
                NextValue(bus.cyc, 0),
                NextValue(bus.stb, 0),
                NextValue(ack, bus.ack),
                NextValue(err, bus.err),
                NextValue(dat_r, bus.dat_r),
                NextState("REPLY"),
            ),
        )
        # the master sees the reply for one clock and still shows the same request in it
        fsm.act("REPLY",
            NextValue(ack, 0),
            NextValue(err, 0),
            NextState("IDLE"),
        )


class Management(LiteXModule):
    """LiteEth UDP/IP + Etherbone on one tester port (see the module's docstring)."""

    def __init__(self, soc, gmii: dict, port_tx: dict, mac: int, ip: str, min_gap: int):
        """gmii: the port's PHY signals (rx data/dv/er, rx_clk, rx_rst, tx data/en/er); port_tx: the
        signals the port itself drives (they reach gmii["tx"] through the arbiter)."""
        self.mac, self.ip = mac, ip
        self.cd_mgmt_rx = ClockDomain()
        self.comb += [self.cd_mgmt_rx.clk.eq(gmii["rx_clk"]), self.cd_mgmt_rx.rst.eq(gmii["rx_rst"])]
        self.phy = PortPHY(gmii["rx"], port_tx, gmii["tx"], min_gap)
        self.tx_hold = self.phy.tx_hold
        # with_ip_broadcast=False: LiteEth's "broadcast" takes IPv4 to any address, so it would answer
        # the test stream's echo requests to the port (its ARP request for their source was a foreign
        # frame in test_probes); it takes its own address only
        core = LiteEthUDPIPCore(phy=self.phy, mac_address=mac, ip_address=ip, clk_freq=soc.sys_clk_freq,
                                dw=32, with_sys_datapath=True, with_ip_broadcast=False)
        self.core = ClockDomainsRenamer({"eth_tx": "tester", "eth_rx": "mgmt_rx"})(core)
        # the MAC's error counters: not on the CSR bus (the port's checker counts what it receives)
        self.autocsr_exclude = {"core"}
        self.etherbone = LiteEthEtherbone(core.udp, UDP_PORT, buffer_depth=BURST, cd="sys")
        self.bus_stage = WishboneRegisterStage(self.etherbone.wishbone.bus, name="etherbone_stage")
        self.comb += self.etherbone.wishbone.bus.connect(self.bus_stage.slave)
        soc.bus.add_master(name="etherbone", master=self.bus_stage.master)
