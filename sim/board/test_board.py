# SPDX-License-Identifier: BSD-2-Clause
"""The board itself simulated: the generated Colorlight 5A-75B top, ECP5 primitive models, RGMII PHYs
whose receive clocks are off the crystal, the PHYs' MDIO, and the host driver over UARTBone.

The Verilog is the board build's own (boards.colorlight_5a_75b, the Verilog the bitstream is made
from) with one constant changed: the UART runs at 12.5 Mb/s instead of 115200 b/s, since at 115200
b/s one register access takes a millisecond of simulated time. The primitives (DELAYG, IDDRX1F,
ODDRX1F, FD1S3BX, TRELLIS_FF, DCCA, TRELLIS_IO, EHXPLLL, DP16KD) are sim/board/ecp5_cells.v. The crystal is exact and
the PLL's outputs follow from its parameters; each PHY's RX clock (recovered from the link partner)
is 125 ppm off: port 0's fast, port 1's slow. Frames the tester sends on port 0 go through a
store-and-forward model of a DUT to port 1's RX pins.

The same scenario on the TX clocking of before (the RGMII TX on the PHY's RX clock) is run as a
control: it must see corrupt frames, or this test could not catch that fault.
"""

import faulthandler
import os
import re
import signal
import socket
from collections import deque
from pathlib import Path

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import Timer
from cocotb.utils import get_sim_time
from cocotbext.eth import GmiiFrame, RgmiiSource
from cocotbext.uart import UartSink, UartSource

from common.frames import SIG_LEN, ip4_str, mac_str, parse_signature
from common.runner import SIM_BUILD, run_sources, worker_suffix
from phy import MdioPhys, RgmiiIdTx, phy_registers

SIM_BAUD = 12_500_000                    # 4 clocks of the 50 MHz sys clock per bit
CRYSTAL_PS = 40_000                      # 25 MHz
PHY_RX_PS = (7_999, 8_001)               # +125 ppm, -125 ppm against 8 ns (1 ps resolution)
TICK_PS = 8_000
HOST_STEP_LIMIT_NS = 200_000_000         # 200 ms of simulated time per host step (the link reads take 7 ms)
SIG_OFFSET_IPV4 = 14 + 20 + 8            # Ethernet + IPv4 + UDP headers before the signature
ROOT = Path(__file__).resolve().parents[2]


def pll_periods(verilog: str, clkin_ps: int) -> dict[str, int]:
    """Output periods (ps) of the EHXPLLL in the generated Verilog, from its dividers.

    The VCO runs at CLKI / CLKI_DIV * CLKFB_DIV * (divider of the feedback output); each output
    divides the VCO by its own divider."""
    block = re.search(r"EHXPLLL #\((.*?)\) EHXPLLL", verilog, re.S).group(1)
    params = {k: v for k, v in re.findall(r"\.(\w+)\s*\(([^)]*)\)", block)}

    def num(name):
        return int(params[name].split("'d")[-1])

    feedback = params["FEEDBK_PATH"].strip('"')
    fb_div = {"INT_OP": "CLKOP_DIV", "INT_OS": "CLKOS_DIV", "INT_OS2": "CLKOS2_DIV", "INT_OS3": "CLKOS3_DIV"}
    vco_ps_x = clkin_ps * num("CLKI_DIV")          # VCO period * CLKFB_DIV * feedback divider
    vco_div = num("CLKFB_DIV") * num(fb_div[feedback])
    out = {}
    for name in ("CLKOP", "CLKOS"):
        if params.get(f"{name}_ENABLE", '"DISABLED"').strip('"') == "ENABLED":
            period = vco_ps_x * num(f"{name}_DIV")
            assert period % vco_div == 0, f"{name}: period not a whole number of ps"
            out[name] = period // vco_div
    return out


class Board:
    """Clocks, PHY and UART models around the board top, and the host driver in a thread."""

    def __init__(self, dut, gateware: Path):
        self.dut = dut
        self.gateware = gateware
        verilog = (gateware / "colorlight_5a_75b.v").read_text()
        self.periods = pll_periods(verilog, CRYSTAL_PS)
        dut.eth0_rx_ctl.value = 0
        dut.eth0_rx_data.value = 0
        dut.eth1_rx_ctl.value = 0
        dut.eth1_rx_data.value = 0
        Clock(dut.clk25, CRYSTAL_PS, "ps", impl="gpi").start()
        Clock(dut.EHXPLLL.clkop_tb, self.periods["CLKOP"], "ps", impl="gpi").start()
        Clock(dut.EHXPLLL.clkos_tb, self.periods["CLKOS"], "ps", impl="gpi").start()
        self.tx0 = RgmiiIdTx(dut.eth0_tx_data, dut.eth0_tx_ctl, dut.eth_clocks0_tx)
        self.rx1 = RgmiiSource(dut.eth1_rx_data, dut.eth1_rx_ctl, dut.eth_clocks1_rx)
        self.rx1.log.setLevel("WARNING")
        self.uart_in = UartSource(dut.serial_rx, baud=SIM_BAUD)
        self.uart_out = UartSink(dut.serial_tx, baud=SIM_BAUD)
        self.uart_in.log.setLevel("WARNING")
        self.uart_out.log.setLevel("WARNING")
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(1)
        self.server.setblocking(False)
        self.url = f"socket://127.0.0.1:{self.server.getsockname()[1]}"
        self.conn = None
        self.sent = []                   # frames seen on port 0's TX pins
        self.wire = deque(maxlen=12)     # the serial line's last (time ns, "in"/"out", bytes), for hang_report
        self.forwarded = []              # (tx frame, rx frame) pairs put on port 1's RX pins

    async def start(self):
        # the PHYs' RX clocks start at their own phases
        await Timer(3_000, "ps")
        Clock(self.dut.eth_clocks0_rx, PHY_RX_PS[0], "ps", impl="gpi", period_high=PHY_RX_PS[0] // 2).start()
        await Timer(2_500, "ps")
        Clock(self.dut.eth_clocks1_rx, PHY_RX_PS[1], "ps", impl="gpi", period_high=PHY_RX_PS[1] // 2).start()
        cocotb.start_soon(self._pump())
        cocotb.start_soon(self._forward())
        await Timer(2, "us")             # PLL lock and reset release

    async def _pump(self):
        """The serial line between the host's socket and the UART pins, polled once per byte time.
        Each host step connects anew (a process of its own, see host); its connection replaces the last."""
        byte_time_ns = 10 * 1e9 / SIM_BAUD
        while True:
            await Timer(int(byte_time_ns), "ns")
            try:
                conn, _ = self.server.accept()
                conn.setblocking(False)
                if self.conn is not None:
                    self.conn.close()
                self.conn = conn
            except BlockingIOError:
                pass
            if self.conn is None:
                continue
            try:
                data = self.conn.recv(4096)
            except BlockingIOError:
                data = b""
            if data:
                self.wire.append((get_sim_time("ns"), "in", data))
                self.uart_in.write_nowait(data)
            if not self.uart_out.empty():
                data = bytes(self.uart_out.read_nowait())
                self.wire.append((get_sim_time("ns"), "out", data))
                self.conn.setblocking(True)
                self.conn.sendall(data)
                self.conn.setblocking(False)

    async def _forward(self):
        """A store-and-forward DUT: every frame from port 0's TX pins, unchanged, to port 1's RX pins."""
        while True:
            while not self.tx0.frames:
                await Timer(1, "us")
            frame = self.tx0.frames.popleft()
            self.sent.append(frame)
            # the source sends a copy: its times come back through tx_complete
            await self.rx1.send(GmiiFrame.from_raw_payload(
                frame.get_payload(strip_fcs=False),
                tx_complete=lambda sent, tx=frame: self.forwarded.append((tx, sent))))

    async def host(self, action):
        """Run action(Tester) in a process of its own, forked (the action may be a closure), with the
        host driver connected over the serial line: a host on its own computer.

        Not in a thread of the simulator's process: cocotb's thread gives the GIL up at the end of
        every callback (here several per clock edge) and takes it straight back, and CPython asks a
        holder to let go only when it has held the GIL a whole switch interval, so a host thread
        waiting for it lost that race for seconds of wall time, i.e. milliseconds of simulated time
        (one step overran its 200 ms limit). A process shares nothing with the simulator but the
        socket, and runs on the other core."""
        import multiprocessing

        url, csr = self.url, self.gateware.parent / "csr.json"
        ctx = multiprocessing.get_context("fork")
        receive, send = ctx.Pipe(duplex=False)

        def work():
            faulthandler.register(signal.SIGUSR1)        # hang_report asks for the host's stack
            from fpgatest.driver import Device
            from fpgatest.tester import Tester

            try:
                with Device(url, csr, timeout_s=600.0) as device:
                    outcome = ("value", action(Tester(device)))
            except BaseException as err:  # handed to the test below
                outcome = ("error", err)
            try:
                send.send(outcome)
            except Exception:  # an answer that does not pickle
                send.send(("error", RuntimeError(f"{outcome[0]}: {outcome[1]!r}")))

        process = ctx.Process(target=work, daemon=True)
        process.start()
        send.close()
        start_ns = get_sim_time("ns")
        while not receive.poll():
            if not process.is_alive() and not receive.poll():
                raise AssertionError(f"the host process ended without an answer (exit code {process.exitcode})")
            await Timer(5, "us")
            # a host step here takes at most tens of milliseconds of simulated time: a hang fails
            if get_sim_time("ns") - start_ns >= HOST_STEP_LIMIT_NS:
                raise AssertionError(f"the host got no answer:\n{self.hang_report(process)}")
        kind, value = receive.recv()
        process.join()
        if kind == "error":
            raise value
        return value

    def hang_report(self, process) -> str:
        """The host's stack (on the simulator's stderr), the serial line's last exchanges and the
        bridge's state; the host process is stopped."""
        os.kill(process.pid, signal.SIGUSR1)
        process.join(1.0)
        process.kill()
        wire = "\n".join(f"{t:.0f} ns {d}: {b.hex()}" for t, d, b in self.wire)
        return (f"the host's stack is on stderr; serial line (last exchanges):\n{wire}\n"
                f"UARTBone bridge state {int(self.dut.uartbone_state.value)}")

    async def send_stream(self, size: int, count: int, sample_every: int = 0) -> list[str]:
        """The host clears the tester and sends `count` IPv4 frames of `size` bytes at minimum IFG
        from port 0 (port 1 sampling every Nth test frame); returns what is wrong with the frames
        on port 0's pins once they are through port 1."""
        from fpgatest.tester import Stream

        def send(t):
            t.dev.write("port1_cfg_sample_every", sample_every)
            t.clear()
            t.configure(0, Stream(proto="ipv4", size=size, count=count))
            t.start(0)
            t.wait_idle(0)

        await self.host(send)
        # twice the stream's time on the wire, and 100 us: a stream that stalls ends the wait
        await self.settle(count, 2 * count * (size + 20) * TICK_PS // 1000 + 100_000)
        return frame_problems(self.sent, size, count)

    async def settle(self, frames: int, limit_ns: int):
        """Wait until `frames` frames left port 0 and the last of them is through port 1's RX pins
        (at most limit_ns of simulated time)."""
        deadline = get_sim_time("ns") + limit_ns
        while len(self.forwarded) < frames and get_sim_time("ns") < deadline:
            await Timer(1, "us")
        await Timer(2, "us")

    def close(self):
        if self.conn is not None:
            self.conn.close()
        self.server.close()


def frame_problems(frames, size: int, count: int) -> list[str]:
    """What is wrong with the frames seen on port 0's TX pins (empty when they are what was sent)."""
    problems = []
    if len(frames) != count:
        problems.append(f"{len(frames)} frames on the pins, {count} sent")
    for i, frame in enumerate(frames):
        if bytes(frame.data[:8]) != b"\x55" * 7 + b"\xd5":
            problems.append(f"frame {i}: preamble {bytes(frame.data[:8]).hex()}")
        payload = frame.get_payload(strip_fcs=False)
        if len(payload) != size:
            problems.append(f"frame {i}: {len(payload)} bytes")
        if not frame.check_fcs():
            problems.append(f"frame {i}: FCS wrong")
        elif parse_signature(bytes(payload[SIG_OFFSET_IPV4:SIG_OFFSET_IPV4 + SIG_LEN])) is None:
            problems.append(f"frame {i}: no valid signature")
    return problems


def seq_of(frame) -> int:
    payload = bytes(frame.get_payload())
    return parse_signature(payload[SIG_OFFSET_IPV4:SIG_OFFSET_IPV4 + SIG_LEN])[1]


async def check_links(board: Board, mdio: MdioPhys):
    """The host finds the build, then each PHY's link over MDIO (the bit-banged frames pipelined
    through the UART's FIFO); port 1 came up at half duplex. 10.3 ms of simulated time (57 % of the
    scenario), so run on the default build only: the recorder is no part of it."""
    from fpgatest.tester import SettingError

    links = await board.host(lambda t: t.links())
    assert [(x.phy_addr, x.up, x.speed_mbps, x.full_duplex) for x in links] == [(0, True, 1000, True),
                                                                                  (1, True, 1000, False)]
    assert links[0].phy_id == links[1].phy_id == 0x03625E6A
    # every frame reached the PHY it was for: ids, BMSR once (link up), BMCR, 1000BASE-T control/status
    assert mdio.reads == [(phy, reg) for phy in (0, 1) for reg in (2, 3, 1, 0, 9, 10)], mdio.reads
    await board.host(lambda t: t.require_links([0], links))
    with pytest.raises(SettingError, match="port 1"):
        await board.host(lambda t: t.require_links([0, 1], links))
    # a build whose PHY address is wrong (not yet checked on a board): the error says where PHYs answer,
    # from a scan (PHYSID1 at each address; only 0 and 1 reach a PHY, 7 reads as the pulled-up bus). The
    # scan of all 32 addresses is test_mdio's, bit by bit against a PHY model; through the pins here only
    # 0, 1 and 7 (the other 29 were 17.2 ms of this simulation's 35.1, 45 % of its wall time)
    mdio.reads.clear()

    def wrong_address(t):                   # (in the host's own process: its map and its scan only)
        import fpgatest.mdio

        t.dev.map.constants["fpgatest_port0_phy_addr"] = 7
        scanned, fpgatest.mdio.PHY_ADDRESSES = fpgatest.mdio.PHY_ADDRESSES, (0, 1, 7)
        try:
            return t.links()
        finally:
            fpgatest.mdio.PHY_ADDRESSES = scanned

    with pytest.raises(SettingError, match=r"^port 0: no PHY answers at MDIO address 7; PHYs answer at MDIO "
                                           r"addresses 0, 1 \(this build has the ports' PHYs at 7, 1"):
        await board.host(wrong_address)
    assert mdio.reads == [(0, 2), (1, 2)], mdio.reads
    board.dut._log.info("MDIO: %s; %s", links[0].describe(), links[1].describe())


@cocotb.test()
async def run_test_board(dut):
    """Link over MDIO (BOARD_MDIO=1), min-IFG frames intact on port 0's pins, exact counts and latencies
    on port 1, a sweep step."""
    board = Board(dut, Path(os.environ["BOARD_GATEWARE"]))
    phys = {0: phy_registers(1000), 1: phy_registers(1000, full_duplex=False)}
    mdio = MdioPhys(dut.eth_mdio_mdc, dut.eth_mdio_mdio, dut.TRELLIS_IO.I, dut.TRELLIS_IO.T, phys)
    await board.start()
    if os.environ.get("BOARD_MDIO") == "1":
        await check_links(board, mdio)

    # 64-byte IPv4 frames at minimum IFG from port 0, every 8th sampled on port 1
    count, size, every = 120, 64, 8
    problems = await board.send_stream(size, count, sample_every=every)
    assert not problems, problems[:5]
    # minimum IFG, exactly: SFD to SFD = (size + 8 preamble + 12 IFG) bytes of 8 ns
    starts = [f.sim_time_start for f in board.sent]
    spacing = {b - a for a, b in zip(starts, starts[1:])}
    assert spacing == {(size + 20) * TICK_PS}, spacing

    def results(t):
        from bench.twin_speed import round_trips

        snap, trips = round_trips(t.dev, t.snapshot)
        return snap, trips, t.samples(1, limit=count // every + 1)

    snap, round_trips, samples = await board.host(results)
    # the snapshot's pulse, then every read in one request through the UART's FIFO: over a serial line
    # the latch is done before the first read arrives (here 10 bytes at 12.5 Mb/s, 400 clocks)
    assert round_trips == 1, round_trips
    tx, rx = snap["ports"][0], snap["ports"][1]
    assert tx["tx_frames"] == count and tx["tx_bytes"] == count * size, tx
    assert rx["rx_frames"] == count and rx["test_frames"] == count, rx
    for name in ("fcs_errors", "runts", "giants", "foreign", "other_stream", "rx_fifo_overflow", "record_dropped",
                 "seq_lost", "seq_late", "seq_duplicate"):
        assert rx[name] == 0, (name, rx[name])
    assert rx["seq_received"] == count

    # each frame's latency against the time between its SFDs on the two ports' pins: the same offset
    # (the tester's own pipeline, which calibration removes) for every frame, within one 8 ns tick
    seqs = [s[0] for s in samples]
    assert seqs == list(range(every - 1, count, every)), seqs
    true_ps = {seq_of(tx): rx.sim_time_sfd - tx.sim_time_sfd for tx, rx in board.forwarded}
    offsets = [round(lat * 1000) - true_ps[seq] for seq, _, lat in samples]
    spread = max(offsets) - min(offsets)
    dut._log.info("latency - SFD-to-SFD time on the pins: %.3f to %.3f ns over %d frames (mean %.3f ns)",
                  min(offsets) / 1000, max(offsets) / 1000, len(offsets), sum(offsets) / len(offsets) / 1000)
    assert spread < TICK_PS, spread

    # a sweep step as fpgatest runs it on this build (intervals timed by the interval recorder where the
    # build has it, the default, else by the host): every interval's frames and latencies from one
    # edge, nothing lost, and a recorder's intervals exactly as long as asked
    def sweep_step(t):
        from fpgatest.measure import SweepPlan, measure_size
        from fpgatest.tester import Stream

        plan = SweepPlan("ipv4", [size], 12, None, 0.002, 0.0005, drain_s=0.00005)
        return t.has_intervals(), measure_size(t, plan, Stream(proto="ipv4", size=size), None)

    recorder, (record, rows) = await board.host(sweep_step)
    assert recorder == (os.environ.get("BOARD_RECORDER") == "1"), recorder
    assert record["frames"]["lost"] == 0 and record["frames"]["tx"] == record["frames"]["rx"] > 0, record["frames"]
    assert all(r["rx_frames"] == r["lat_count"] > 0 for r in rows), rows
    if recorder:
        assert len(rows) == 4 and all(abs(r["duration_s"] - 0.0005) < 1e-12 for r in rows), rows  # 62,500 ticks each
    else:
        assert len(rows) >= 2, rows     # the host's polling stretches each (a snapshot's transfer: ~0.7 ms)
    dut._log.info("sweep step (%s intervals): %d frames, intervals %s us", "gateware-timed" if recorder else "host-timed",
                  record["frames"]["tx"], [round(r["duration_s"] * 1e6, 3) for r in rows])
    board.close()


@cocotb.test()
async def run_test_intervals(dut):
    """The interval recorder across the board's unrelated clocks (the default build): edges in
    the tester clock, records copied in sys (50 MHz), read over the UART."""
    board = Board(dut, Path(os.environ["BOARD_GATEWARE"]))
    await board.start()
    size = 64
    # every interval exactly the period, every record whole
    period, intervals = 4096 + 7, 4

    def record(t):
        from bench.twin_speed import round_trips
        from fpgatest.tester import Stream

        ring = t.intervals()
        t.clear()
        t.configure(0, Stream(proto="ipv4", size=size))
        t.start(0)
        ring.start(period, intervals)
        while ring.status()["written"] < intervals + 1:
            pass
        t.stop(0)
        return round_trips(t.dev, ring.drain)

    (records, status), trips = await board.host(record)
    assert status == {"written": intervals + 1, "lost": 0, "running": False}, status
    # the status, then every record in one request through the UART's FIFO
    assert trips == 2, trips
    assert [r["index"] for r in records] == list(range(intervals + 1))
    per_interval = period / (size + 20)
    for a, b in zip(records, records[1:]):
        assert b["time"] - a["time"] == period
        sent = b["port0_tx_frames"] - a["port0_tx_frames"]
        got = b["port1_test_frames"] - a["port1_test_frames"]
        assert sent in (int(per_interval), int(per_interval) + 1), sent
        assert got in (int(per_interval), int(per_interval) + 1), got
        assert b["port1_lat_count"] - a["port1_lat_count"] == got
        assert b["port1_lat_min"] <= b["port1_lat_max"] and b["flags"] == 1
    dut._log.info("interval recorder: %d intervals of exactly %d ticks, tx/rx per interval %s", intervals, period,
                  [(b["port0_tx_frames"] - a["port0_tx_frames"], b["port1_test_frames"] - a["port1_test_frames"])
                   for a, b in zip(records, records[1:])])
    board.close()


HOST_MAC, HOST_IP = "02:00:00:00:00:99", "192.168.1.99"


def etherbone_read(addr: int, tag: int) -> bytes:
    """An Etherbone packet with one record of one read (LiteX's own encoder, as CommUDP sends it)."""
    from litex.tools.remote.etherbone import EtherbonePacket, EtherboneReads, EtherboneRecord

    record = EtherboneRecord(addr_size=4)
    record.reads = EtherboneReads(addr_size=4, addrs=[addr])
    record.rcount = 1
    record.reads.base_ret_addr = tag
    packet = EtherbonePacket(addr_width=32)
    packet.records = [record]
    packet.encode()
    return bytes(packet.bytes)


@cocotb.test()
async def run_test_etherbone(dut):
    """A build with --etherbone: the host's Etherbone read of the build id goes in on port 1's RGMII
    pins (its RX clock 125 ppm slow) between the frames of a line-rate stream from port 0, LiteEth
    resolves the host by ARP and answers; every frame on port 1's TX pins is intact. The stream is
    counted exactly, the broadcast ARP request for the core's address and the two frames to its MAC
    as management, nothing as foreign."""
    import json

    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import ARP, Ether
    from litex.tools.remote.etherbone import EtherbonePacket

    from fpgatest.tester import Stream

    gateware = Path(os.environ["BOARD_GATEWARE"])
    csr = json.loads((gateware.parent / "csr.json").read_text())
    c = csr["constants"]
    ip, mac = ip4_str(c["fpgatest_etherbone_ipv4"]), mac_str(c["fpgatest_etherbone_mac"])
    board = Board(dut, gateware)
    tx1 = RgmiiIdTx(dut.eth1_tx_data, dut.eth1_tx_ctl, dut.eth_clocks1_tx)
    await board.start()
    count, size = 300, 64

    def start(t):
        t.clear()
        t.configure(0, Stream(proto="ipv4", size=size, count=count))
        t.start(0)

    await board.host(start)
    await Timer(5, "us")                 # the stream is arriving on port 1
    await board.rx1.send(GmiiFrame.from_payload(bytes(
        Ether(src=HOST_MAC, dst="ff:ff:ff:ff:ff:ff") / ARP(op=1, hwsrc=HOST_MAC, psrc=HOST_IP, pdst=ip))))
    request = Ether(src=HOST_MAC, dst=mac) / IP(src=HOST_IP, dst=ip) / UDP(sport=1234, dport=c["fpgatest_etherbone_udp_port"])
    await board.rx1.send(GmiiFrame.from_payload(bytes(request / etherbone_read(csr["csr_registers"]["tester_build_id"]["addr"], 0x77))))
    replies, seen, value = [], 0, None
    deadline = get_sim_time("ns") + 400_000
    while value is None and get_sim_time("ns") < deadline:
        await Timer(1, "us")
        while tx1.frames:
            frame = tx1.frames.popleft()
            assert frame.check_fcs(), "a damaged frame on port 1's pins"
            seen += 1
            eth = Ether(frame.get_payload())
            if ARP in eth and eth[ARP].op == 1 and eth[ARP].pdst == HOST_IP:      # LiteEth asks for the host
                await board.rx1.send(GmiiFrame.from_payload(bytes(
                    Ether(src=HOST_MAC, dst=mac) / ARP(op=2, hwsrc=HOST_MAC, psrc=HOST_IP, hwdst=mac, pdst=ip))))
            elif ARP in eth and eth[ARP].op == 2:
                replies.append(("arp", eth[ARP].psrc, eth[ARP].hwsrc))
            elif UDP in eth and eth[IP].src == ip:
                packet = EtherbonePacket(32, bytes(eth[UDP].payload))
                packet.decode()
                record = packet.records.pop()
                assert record.writes.base_addr == 0x77
                value = record.writes.get_datas()[0]
    assert replies == [("arp", ip, mac)], replies
    assert value == c["fpgatest_build_id"], value
    await board.settle(count, 2 * count * (size + 20) * TICK_PS // 1000 + 100_000)
    snap = await board.host(lambda t: t.snapshot())
    rx = snap["ports"][1]
    assert rx["test_frames"] == rx["seq_received"] == count and rx["seq_lost"] == 0, rx
    assert (rx["mgmt_frames"], rx["foreign"], rx["fcs_errors"], rx["rx_fifo_overflow"]) == (3, 0, 0, 0), rx
    assert rx["rx_frames"] == count + 3 and snap["ports"][1]["tx_frames"] == 0
    dut._log.info("Etherbone on port 1: build id %08x read between %d line-rate frames; %d frames on port 1's "
                  "TX pins, all intact", value, count, seen)
    board.close()


@cocotb.test()
async def run_test_tx_frames(dut):
    """Only the frames on port 0's pins (the control build): corrupt exactly when expected."""
    board = Board(dut, Path(os.environ["BOARD_GATEWARE"]))
    await board.start()
    problems = await board.send_stream(1518, 12)
    dut._log.info("port 0 TX pins: %s", problems or "every frame intact")
    board.close()
    expect_corrupt = os.environ.get("BOARD_EXPECT_CORRUPT") == "1"
    assert bool(problems) == expect_corrupt, problems[:5]


# ---------------------------------------------------------------------------------------------
# pytest
# ---------------------------------------------------------------------------------------------

def _gateware(monkeypatch, name: str, tx_on_rx_clock: bool = False, intervals: bool | None = None,
              etherbone: str | None = None) -> Path:
    """Generate the board's Verilog (no synthesis) with the simulation's UART rate (intervals: None, the
    target's default build: with the interval recorder)."""
    from litex.soc.cores.uart import RS232PHY
    from litex.soc.integration.builder import Builder
    from liteeth.phy.ecp5rgmii import LiteEthPHYRGMII

    import boards.colorlight as soc
    import boards.colorlight_5a_75b as target

    monkeypatch.setattr(soc, "RS232PHY", lambda pads, clk_freq, baudrate: RS232PHY(pads, clk_freq, SIM_BAUD))
    if tx_on_rx_clock:
        # the fault of before: tx_clk not a Signal, so LiteEth clocks TX from the PHY's RX clock
        monkeypatch.setattr(soc, "LiteEthPHYRGMII", lambda **kw: LiteEthPHYRGMII(**{**kw, "tx_clk": None}))
    build_dir = SIM_BUILD / (name + worker_suffix())
    soc = target.BaseSoC(build_dir=build_dir, intervals=intervals, etherbone=etherbone)
    Builder(soc, output_dir=str(build_dir), compile_software=False, compile_gateware=False,
            csr_json=str(build_dir / "csr.json")).build(build_name="colorlight_5a_75b", run=False)
    gateware = build_dir / "gateware"
    verilog = (gateware / "colorlight_5a_75b.v").read_text()
    assert ("assign eth0_tx_clk = eth0_rx_clk;" in verilog) == tx_on_rx_clock
    return gateware


def _run(gateware: Path, testcase: str, extra_env: dict | None = None) -> None:
    script = (gateware / "colorlight_5a_75b.ys").read_text()
    reads = re.findall(r"^read_verilog((?: -I\S+)*) (\S+)$", script, re.M)
    rtl = [(gateware / p).resolve() for _, p in reads]
    includes = sorted({(gateware / i).resolve() for options, _ in reads for i in re.findall(r"-I(\S+)", options)})
    sources = [*rtl, Path(__file__).with_name("ecp5_cells.v")]
    run_sources("test_board", "colorlight_5a_75b", gateware.parent / "sim", sources, testcase=testcase,
                includes=includes,
                test_dir=gateware, build_args=["-Wno-MULTIDRIVEN", "-Wno-UNOPTFLAT"],
                extra_env={"BOARD_GATEWARE": str(gateware), **(extra_env or {}),
                           "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent),
                                                         os.environ.get("PYTHONPATH", "")])})


def test_board(monkeypatch):
    """The default board build: MDIO link state, intact frames on port 0, exact counts on port 1, a sweep
    step in the interval recorder's intervals."""
    _run(_gateware(monkeypatch, "board"), "run_test_board", {"BOARD_RECORDER": "1", "BOARD_MDIO": "1"})


def test_board_interval_recorder(monkeypatch):
    """The default board build's interval recorder across unrelated clocks."""
    _run(_gateware(monkeypatch, "board_intervals"), "run_test_intervals")


def test_board_without_recorder(monkeypatch):
    """A board build with --no-intervals (the host times the intervals): the same frames and counts, and
    a sweep step whose intervals the host timed, each still one snapshot-and-clear at one edge. (The
    MDIO part is test_board's: the same logic, 57 % of the simulated time.)"""
    _run(_gateware(monkeypatch, "board_no_intervals", intervals=False), "run_test_board", {"BOARD_RECORDER": "0"})


def test_board_etherbone(monkeypatch):
    """A board build with --etherbone: Etherbone through port 1's pins, beside a line-rate stream."""
    _run(_gateware(monkeypatch, "board_etherbone", etherbone="192.168.1.50"), "run_test_etherbone")


def test_board_control_tx_on_rx_clock(monkeypatch):
    """The same frames through the TX clocking of before arrive corrupt: the board test can see it."""
    _run(_gateware(monkeypatch, "board_tx_on_rx_clock", tx_on_rx_clock=True), "run_test_tx_frames",
         {"BOARD_EXPECT_CORRUPT": "1"})
