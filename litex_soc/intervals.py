# SPDX-License-Identifier: BSD-2-Clause
"""The interval recorder: hardware-timed snapshots every N ticks, copied into a ring the host drains.

The thesis method reads the tester at fixed intervals (1 s for 100 s). Timed by host polling, the
intervals come out 0.6-4 ms for 2 ms asked, and a UART at 115200 b/s cannot read a snapshot of a
few hundred bytes between two of them. Here the tester clock sets the edges and the gateware keeps
what they latched:

- edges: exactly `interval_period` tester clocks apart, counted from the write of the period
  (edge 0, two clocks after that write reaches the tester clock), `interval_count` more of them,
  then the recorder stops by itself (0: until stopped). Each edge is a snapshot of every port with
  a clear of the scalar latency statistics (count/min/max/sums/jitter), so every record describes
  the interval before it, and event counters as at the edge. Edges up to `interval_hist_until`
  clear the histogram too; later ones leave it to add up, so that the host can set its range
  from the first interval and read it once at the end (the histogram bank holds it as the last
  edge latched it).
- records: after an edge has reached the engine clock and every port's snapshot has settled, a
  copier writes one record (FPGATEST_INTERVAL_* constants: word of each field, most significant
  word first) into the next slot of a block-RAM ring, readable as the bus region `intervals`.
  A slot is written again only after the host has taken it (`interval_taken`, the count of
  records it has read); a record with no free slot, or whose edge was followed by another before
  it was copied, is counted in `interval_lost`, never half written. Each record carries its edge
  index, so a gap is seen by the host.

Edges are the tester clock's own (no synchronizer on their way to the ports). A marker the host
sets off at the same tester clock as an edge is moved one clock later (`apart_from`), so the two
stay two markers, as the ports' busy bookkeeping counts them.
"""

from migen import Case, If, Memory, Mux, Signal
from migen.genlib.cdc import MultiReg

from litex.gen import LiteXModule
from litex.soc.interconnect import wishbone
from litex.soc.interconnect.csr import CSRStatus, CSRStorage

from litex_soc.crossing import any_of, cross_strobe

PERIOD_MIN = 4096           # ticks (32.8 us): a record is copied in well under half of it (IntervalCopier)
RING_WORDS = 2048           # 32-bit words of the ring (4 block RAMs on an ECP5)

# what a record holds, per port and direction (counters by name from fpgatest_port.v's table;
# statistics are the port's stat_* registers as the edge latched them)
TX_COUNTERS = ("tx_frames", "tx_bytes")
RX_COUNTERS = ("rx_frames", "rx_bytes", "test_frames", "fcs_errors", "foreign", "other_stream", "lat_count",
               "hist_below", "hist_above", "seq_received", "seq_late", "seq_duplicate", "record_dropped")
RX_STATS = ("lat_min", "lat_max", "lat_sum", "lat_sumsq", "jit_sum", "jit_max")


class IntervalTimer(LiteXModule):
    """The edges, in the tester clock, and the interval CSRs the host writes."""

    def __init__(self, time_tick):
        self.period = CSRStorage(32, name="period", description=
            f"Tester ticks between interval records. Writing starts the recorder (record 0 at once); a value below "
            f"FPGATEST_INTERVAL_PERIOD_MIN ({PERIOD_MIN}) stops it.")
        self.count = CSRStorage(32, name="count", description=
            "Intervals to record after record 0; then the recorder stops by itself (0 = until stopped). Write before interval_period.")
        self.hist_until = CSRStorage(32, name="hist_until", reset=0xFFFFFFFF, description=
            "Edges with an index up to this clear the latency histogram; later ones let it add up. Takes effect at the next edge.")
        self.taken = CSRStorage(32, name="taken", description=
            "Records the host has read (it writes the count); their slots may be written again. Write 0 before starting.")
        self.written = CSRStatus(32, name="written", description="Records written since the recorder was started.")
        self.lost = CSRStatus(32, name="lost", description=
            "Records lost since the start: no free slot, or the next edge came before the record was copied.")
        self.running = CSRStatus(1, name="running", description="The recorder has edges still to come.")

        self.edge = Signal()          # tester clock: an edge (snapshot, clear of statistics) at this clock
        self.edge_clear_hist = Signal()
        self.edge_index = Signal(32)  # tester clock, static between edges: the last edge's index ...
        self.edge_time = Signal(64)   # ... the tick it latched ...
        self.edge_flags = Signal(32)  # ... and its flags: bit 0, it cleared the histogram

        # # #

        arm = cross_strobe(self, self.period.re)
        until_w = cross_strobe(self, self.hist_until.re)
        on = Signal()
        limited = Signal()
        reload = Signal(32)           # period - 1: the count-down starts again from it at each edge
        left = Signal(32)             # clocks to the next edge
        last = Signal(32)
        index = Signal(32)
        until = Signal(32, reset=0xFFFFFFFF)
        clear_next = Signal()         # the next edge clears the histogram ...
        stop_next = Signal()          # ... and is the last: worked out a clock ahead (index changes at
                                      # edges only, >= PERIOD_MIN clocks apart), no 32-bit compare
                                      # in front of the edge
        due = Signal()                # the count-down is at 0 at this clock (from a register: the
                                      # 32-bit zero test is not in front of the edge's fan-out)
        edge_q = Signal()
        # the storages hold still while their crossed write strobes act (the next write is >= 3 sys
        # clocks later, the strobe arrives within 3 tester clocks): read only then
        self.sync.tester += [
            self.edge.eq(0),
            clear_next.eq(index <= until),
            stop_next.eq(limited & (index == last)),
            due.eq(on & ~arm & (left == 1)),   # a reload is >= PERIOD_MIN - 1: 1 only on the way to 0
            If(until_w, until.eq(self.hist_until.storage)),
            If(arm,
                on.eq(self.period.storage >= PERIOD_MIN),
                reload.eq(self.period.storage - 1),
                last.eq(self.count.storage),
                limited.eq(self.count.storage != 0),
                left.eq(1),           # edge 0 two clocks from now, once clear_next and stop_next know index 0
                index.eq(0),
            ).Elif(on,
                If(due,
                    self.edge.eq(1),
                    self.edge_clear_hist.eq(clear_next),
                    self.edge_index.eq(index),
                    index.eq(index + 1),
                    If(stop_next, on.eq(0)),
                    left.eq(reload),
                ).Else(left.eq(left - 1)),
            ),
            # the ports register their control pulses once: the edge's time is that clock's tick
            edge_q.eq(self.edge),
            If(edge_q, self.edge_time.eq(time_tick), self.edge_flags.eq(self.edge_clear_hist)),
        ]
        self.specials += MultiReg(on, self.running.status, "sys")


class IntervalCopier(LiteXModule):
    """Engine (sys) clock: after each edge, one record from the ports into the ring.

    A copy takes four clocks per word once the ports have settled (a counter round, 27 clocks):
    under 400 clocks for the twin's 90 words, 8 us at the board's 50 MHz, a quarter of PERIOD_MIN
    (32.8 us between two edges)."""

    def __init__(self, timer: IntervalTimer, fields: list, ports: list, busy: list):
        """fields: (name, width, source) in record order, source a Signal (static between edges) or
        (port index, counter index); ports: each port's CounterWindow; busy: the ports' busy flags."""
        self.bus = wishbone.Interface(data_width=32, address_width=32, addressing="word")
        self.arrived = Signal()       # sys: an edge has crossed (the ports count it as a marker)

        self.words = []               # (source, high bit, low bit) per 32-bit word
        self.layout = {}              # field name -> (first word, words)
        for name, width, source in fields:
            n = (width + 31) // 32
            self.layout[name] = (len(self.words), n)
            for w in range(n):
                lo = 32 * (n - 1 - w)
                self.words.append((source, min(width, lo + 32), lo))
        n_words = len(self.words)
        self.slot = 1 << (n_words - 1).bit_length()
        assert self.slot <= RING_WORDS // 2, "a record needs a ring of at least two slots"
        self.depth = RING_WORDS // self.slot

        # # #

        self.comb += self.arrived.eq(cross_strobe(self, timer.edge, "tester", "sys"))

        mem = Memory(32, RING_WORDS)
        wr = mem.get_port(write_capable=True)
        rd = mem.get_port()
        self.specials += mem, wr, rd

        written, lost, taken = timer.written.status, timer.lost.status, timer.taken.storage
        state = Signal(2)             # 0 idle, 1 settle, 2 wait for the ports, 3 copy
        settle = Signal(2)
        torn = Signal()               # another edge came before the copy was done
        word = Signal(max=max(2, n_words))
        phase = Signal(2)             # per word: counter address, bank reads, value, write
        slot = Signal(max=self.depth)
        value = Signal(32)            # registered: the word's source, selected a clock before the write
        counter_addr = Signal(8)      # the counter of the word, for every port's bank
        # a counter word comes from its port's bank output (one 64-bit bus per port, whatever the
        # counter), any other from a small multiplexer over the static sources: few wires meet here
        is_counter = Signal()
        high = Signal()
        port_sel = Signal(max=max(2, len(ports)))
        static = Signal(32)
        rom, statics = {}, {}
        for i, (source, hi, lo) in enumerate(self.words):
            if isinstance(source, tuple):
                port, counter = source
                rom[i] = [is_counter.eq(1), high.eq(int(lo == 32)), port_sel.eq(port), counter_addr.eq(counter)]
            else:
                statics[i] = static.eq(source[lo:hi])
        from_bank = Signal(32)
        self.comb += [
            Case(word, {**rom, "default": is_counter.eq(0)}),
            Case(port_sel, {p: from_bank.eq(Mux(high, w.rd_data[32:64], w.rd_data[0:32])) for p, w in enumerate(ports)}),
            Case(word, statics),
        ]
        self.sync += value.eq(Mux(is_counter, from_bank, static))
        for window in ports:
            self.comb += [window.own_addr.eq(counter_addr), window.grant.eq(state == 3)]
        self.comb += [
            wr.adr.eq(slot * self.slot + word),
            wr.dat_w.eq(value),
            wr.we.eq((state == 3) & (phase == 3)),
        ]
        ports_busy = any_of(busy)
        started = Signal()
        self.sync += started.eq(timer.period.re)
        used = Signal(32)             # slots written and not yet taken (modulo 2^32)
        done = Signal()               # the last word is written at this clock
        lose = Signal(2)              # records lost at this clock
        self.sync += used.eq(written - taken)   # a clock late: the copy waits at least 3 clocks before it
        self.comb += [
            done.eq((state == 3) & (phase == 3) & (word == n_words - 1)),
            lose.eq((self.arrived & (state != 0))                       # an edge while busy: its own
                    + ((state == 2) & ~ports_busy & (used >= self.depth))  # no free slot
                    + (done & (torn | (self.arrived & (state != 0))))),    # a record torn by the next edge
        ]
        self.sync += [
            lost.eq(lost + lose),
            If(self.arrived & (state != 0), torn.eq(1)),
            If(state == 0,
                If(self.arrived, state.eq(1), settle.eq(3), torn.eq(0)),
            ).Elif(state == 1,
                # the ports' busy flags see the edge one clock after it arrived
                settle.eq(settle - 1),
                If(settle == 1, state.eq(2)),
            ).Elif(state == 2,
                If(~ports_busy,
                    If(used >= self.depth, state.eq(0)).Else(state.eq(3), word.eq(0), phase.eq(0)),
                ),
            ).Else(
                phase.eq(phase + 1),
                If(phase == 3,
                    word.eq(word + 1),
                    If(done,
                        state.eq(0),
                        If(~torn & ~self.arrived,
                            written.eq(written + 1),
                            slot.eq(Mux(slot == self.depth - 1, 0, slot + 1)),
                        ),
                    ),
                ),
            ),
            # a start (the storage holds the new value one clock after re) begins a new count; a stop keeps it
            If(started & (timer.period.storage >= PERIOD_MIN), state.eq(0), written.eq(0), lost.eq(0), slot.eq(0)),
        ]

        # the ring as a read-only bus region, two clocks per word like the counter windows
        wait = Signal(2)
        self.comb += rd.adr.eq(self.bus.adr)
        self.sync += [
            self.bus.ack.eq(0),
            If(self.bus.cyc & self.bus.stb & ~self.bus.ack,
                wait.eq(wait + 1),
                If(wait == 1, wait.eq(0), self.bus.ack.eq(1), self.bus.dat_r.eq(rd.dat_r)),
            ),
        ]


def record_fields(timer: IntervalTimer, ports: list, counters: list[str], directions: list) -> list:
    """The record layout: header, then per port its TX counters, RX counters and RX statistics."""
    fields = [("index", 32, timer.edge_index), ("flags", 32, timer.edge_flags), ("time", 64, timer.edge_time)]
    for index, (port, (with_tx, with_rx)) in enumerate(zip(ports, directions)):
        names = (TX_COUNTERS if with_tx else ()) + (RX_COUNTERS if with_rx else ())
        for name in names:
            fields.append((f"port{index}_{name}", 64, (index, counters.index(name))))
        for name in RX_STATS if with_rx else ():
            status = getattr(port, f"stat_{name}").status
            fields.append((f"port{index}_{name}", len(status), status))
    return fields
