# SPDX-License-Identifier: BSD-2-Clause
"""One driver for board and twin: registers by name from the build's csr.json, identity check, snapshots."""

import json
from dataclasses import dataclass
from pathlib import Path

from fpgatest.transport import MAX_BURST, LinkError, open_url

TICK_NS = 8.0  # the tester's tick (csr.json: FPGATEST_TICK_NS; Device refuses a map that differs)
SNAPSHOT_POLLS = 100  # reads of the latch flags before a snapshot is given up
LATCH_PAD_WORDS = 16  # on the twin: words read ahead of a snapshot's latch flags (Device.__init__)
LAT_UNITS_PER_TICK = 16  # latency and calibration registers count 1/16 tick (csr.json: FPGATEST_LAT_UNITS_PER_TICK)


class MapError(Exception):
    """csr.json unreadable, or not the map of the gateware that answers."""


@dataclass(frozen=True)
class Register:
    name: str
    addr: int
    words: int
    writable: bool


def join_words(words) -> int:
    """A multi-word register's value: most significant word first."""
    value = 0
    for word in words:
        value = (value << 32) | word
    return value


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _mapping(data: dict, key: str, default=None) -> dict:
    value = data.get(key, default)
    if not isinstance(value, dict):
        raise ValueError(f"{key!r} is not an object")
    return value


class CsrMap:
    def __init__(self, path: Path):
        try:
            data = json.loads(Path(path).read_text())
            if not isinstance(data, dict):
                raise ValueError("not a JSON object")
            self.registers = {}
            for name, r in _mapping(data, "csr_registers").items():
                addr, size = r["addr"], r["size"]
                if not (_is_int(addr) and _is_int(size) and 0 <= addr < 1 << 32 and 0 < size <= 8
                        and addr % 4 == 0 and r["type"] in ("rw", "ro")):
                    raise ValueError(f"register {name}: bad addr/size/type {addr!r}/{size!r}/{r['type']!r}")
                self.registers[name] = Register(name, addr, size, r["type"] == "rw")
            self.constants = _mapping(data, "constants", default={})
            self.memories = {}
            for name, m in _mapping(data, "memories", default={}).items():
                if not (_is_int(m["base"]) and 0 <= m["base"] < 1 << 32):
                    raise ValueError(f"memory {name}: bad base {m['base']!r}")
                self.memories[name] = m["base"]
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as err:
            raise MapError(f"cannot read register map {path}: {err}") from None
        self.path = Path(path)
        if "fpgatest_build_id" not in self.constants or "tester_build_id" not in self.registers:
            raise MapError(f"{path} is not an fpgatest register map (no FPGATEST_BUILD_ID)")
        if not all(_is_int(v) for k, v in self.constants.items() if k.startswith("fpgatest_")):
            raise MapError(f"{path}: an FPGATEST_* constant is not an integer")
        if self.constants.get("fpgatest_tick_ns", TICK_NS) != TICK_NS:
            raise MapError(f"{path}: a tick of {self.constants['fpgatest_tick_ns']} ns (this host: {TICK_NS:g} ns)")
        if self.constants.get("fpgatest_lat_units_per_tick", LAT_UNITS_PER_TICK) != LAT_UNITS_PER_TICK:
            raise MapError(f"{path}: latencies in 1/{self.constants['fpgatest_lat_units_per_tick']} tick "
                           f"(this host: 1/{LAT_UNITS_PER_TICK})")

    @property
    def build_id(self) -> int:
        return int(self.constants["fpgatest_build_id"])

    def __getitem__(self, name: str) -> Register:
        try:
            return self.registers[name]
        except KeyError:
            raise MapError(f"register {name!r} not in {self.path}") from None

    def __contains__(self, name: str) -> bool:
        return name in self.registers

    def n_ports(self) -> int:
        return sum(1 for n in self.registers if n.endswith("_control") and n.startswith("port"))

    def counters(self) -> list[str]:
        """Event counter names in index order (constants FPGATEST_COUNTER_<NAME> = index)."""
        head = "fpgatest_counter_"
        named = sorted((int(v), k[len(head):]) for k, v in self.constants.items() if k.startswith(head))
        return [name for _, name in named]


class Device:
    """The tester at a URL, described by a csr.json. Multi-word registers: most significant word first."""

    def __init__(self, url: str, csr_path: Path, check_identity: bool = True, timeout_s: float = 2.0):
        self.map = CsrMap(csr_path)
        self.bus = open_url(url, timeout_s)
        self.url = url
        # several commands in one request only where the bridge keeps what arrives while it replies:
        # the twin's simulated serial line waits; a board's UART keeps UARTBONE_RX_FIFO_DEPTH bytes,
        # and while a reply goes out at the line's rate as many bytes come in, so a request may wait
        # behind replies of half the FIFO (the rest: margin for the two ends' baud rates); a build
        # without the FIFO loses those bytes (the board simulation showed it)
        fifo = int(self.map.constants.get("uartbone_rx_fifo_depth", 0))
        twin = self.map.constants.get("config_platform_name") == "sim"
        self.reply_window = 0 if not hasattr(self.bus, "read_indexed") else 1 << 20 if twin else fifo // 2
        # the twin's serial line brings a request's bytes one per clock, so a snapshot's first reads came
        # within the latch's few dozen clocks and a port found latching took a second round trip (1.55
        # and 1.8 on average on the default and full twins); a burst of LATCH_PAD_WORDS words read first
        # (the bridge sends a word's 4 bytes a clock each) lets the latch finish: 1 word was enough on the
        # default twin, 6 on the full one, idle and at line rate (100 snapshots each). Over a board's
        # UART the pulse's own 10 bytes take longer than the latch (400 clocks at 12.5 Mb/s)
        self.latch_pad_words = LATCH_PAD_WORDS if twin and self.reply_window else 0
        if check_identity:
            found = self.read("tester_build_id")
            if found != self.map.build_id:
                self.bus.close()
                raise MapError(f"gateware at {url} has build id {found:#010x}, {csr_path} describes "
                               f"{self.map.build_id:#010x}: use the csr.json of the running build")

    def close(self):
        self.bus.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def read(self, name: str) -> int:
        reg = self.map[name]
        return join_words(self.bus.read(reg.addr, reg.words))

    def read_many(self, names: list[str]) -> dict[str, int]:
        """Read several registers, merging neighbours into bursts, every burst in one request where the
        bridge allows it (batch): one round trip."""
        runs = self._runs(names)
        out = {}
        for (_, _, regs), words in zip(runs, self.batch([("read", addr, total) for addr, total, _ in runs])):
            out.update(self._split(regs, words))
        return out

    def _runs(self, names: list[str]) -> list[tuple]:
        """The registers as runs of neighbouring addresses: (address, words, registers) each."""
        regs = sorted((self.map[n] for n in names), key=lambda r: r.addr)
        runs = []
        for r in regs:
            if runs and r.addr == runs[-1][0] + 4 * runs[-1][1]:
                runs[-1] = (runs[-1][0], runs[-1][1] + r.words, runs[-1][2] + [r])
            else:
                runs.append((r.addr, r.words, [r]))
        return runs

    @staticmethod
    def _split(regs: list, words: list[int]) -> dict[str, int]:
        """A run's words as its registers' values."""
        out, pos = {}, 0
        for r in regs:
            out[r.name] = join_words(words[pos:pos + r.words])
            pos += r.words
        return out

    def batch(self, ops: list[tuple], retry: bool = True) -> list[list[int]]:
        """("read", addr, count) and ("write", addr, words), in order; returns each read's words. One
        round trip where the bridge allows it: what waits in the bridge while it replies is at most the
        smaller of the request and the reply, and that must be within reply_window. One by one
        otherwise. retry=False when a write has side effects (see UartBone._exchange)."""
        if not ops:
            return []
        parts = []      # (op, the index of the read it belongs to) with every op at most MAX_BURST words
        for i, (kind, addr, arg) in enumerate(ops):
            size = arg if kind == "read" else len(arg)
            for start in range(0, size, MAX_BURST):
                part = min(MAX_BURST, size - start) if kind == "read" else arg[start:start + MAX_BURST]
                parts.append(((kind, addr + 4 * start, part), i))
        request = sum(6 + (0 if op[0] == "read" else 4 * len(op[2])) for op, _ in parts)
        reply = 4 * sum(op[2] for op, _ in parts if op[0] == "read")
        if hasattr(self.bus, "transact") and min(request, reply) <= self.reply_window:
            words = self.bus.transact([op for op, _ in parts], retry)
        else:
            words = []
            for kind, addr, arg in (op for op, _ in parts):
                if kind == "read":
                    words.append(self.bus.read(addr, arg))
                else:
                    self.bus.write(addr, arg)
        out = {i: [] for i, (kind, _, _) in enumerate(ops) if kind == "read"}
        for (op, i), got in zip((p for p in parts if p[0][0] == "read"), words):
            out[i] += got
        return list(out.values())

    def write(self, name: str, value: int) -> None:
        port, _, field = name.partition("_")
        if name not in self.map and field.startswith("cfg_") and f"fpgatest_{field}_word" in self.map.constants:
            self._write_cfg(port, field, value)
            return
        reg = self.map[name]
        if not reg.writable:
            raise MapError(f"register {name} is read-only")
        if value < 0 or value >= 1 << (32 * reg.words):
            raise ValueError(f"{name}: {value} does not fit in {32 * reg.words} bits")
        words = [(value >> (32 * (reg.words - 1 - i))) & 0xFFFFFFFF for i in range(reg.words)]
        self.bus.write(reg.addr, words)

    def read_indexed(self, index_name: str, indices: list[int], data_name: str) -> list[int]:
        """data_name's value after each index is written to index_name (a register window, e.g. the
        histogram bin shown in stat_hist_count); index_name may be a port configuration word."""
        data = self.map[data_name]
        port, _, field = index_name.partition("_")
        if index_name not in self.map and f"fpgatest_{field}_word" in self.map.constants:
            addr_reg, data_reg = self.map[f"{port}_cfg_addr"], self.map[f"{port}_cfg_data"]
            word = int(self.map.constants[f"fpgatest_{field}_word"])
            start, writes = addr_reg.addr, [[word, i] for i in indices]
            burst = data_reg.addr == addr_reg.addr + 4
        else:
            reg = self.map[index_name]
            if not reg.writable or reg.words != 1:
                raise MapError(f"register {index_name} is not a writable one-word register")
            start, writes, burst = reg.addr, [[i] for i in indices], True
        if burst and self._per_request(data.words):
            replies = self.bus.read_indexed(start, writes, data.addr, data.words, self._per_request(data.words))
        else:
            replies = []
            for i in indices:
                self.write(index_name, i)
                replies.append(self.bus.read(data.addr, data.words))
        return [join_words(words) for words in replies]

    def pulse_and_read(self, register: str, field: str, names: list[str], count: int) -> list[dict[str, int]]:
        """`count` times: pulse one field of a control register (e.g. pop a FIFO), then read `names`.
        Pipelined, with the names side by side, the pairs go up to 16 to a request."""
        regs = sorted((self.map[n] for n in names), key=lambda r: r.addr)
        ctl, bit = self.map[register], self.control_bits(register)[field]
        side_by_side = all(b.addr == a.addr + 4 * a.words for a, b in zip(regs, regs[1:]))
        total = sum(r.words for r in regs)
        if not (side_by_side and self._per_request(total)):
            out = []
            for _ in range(count):
                self.pulse(register, field)
                out.append(self.read_many(names))
            return out
        out = []
        # a pop sent twice loses an entry: a request of pops is not tried again (LinkError instead)
        for words in self.bus.read_indexed(ctl.addr, [[bit]] * count, regs[0].addr, total, self._per_request(total),
                                           retry=False):
            out.append(self._split(regs, words))
        return out

    def _per_request(self, words: int) -> int:
        """How many write-then-read pairs reading `words` words go in one request (0: one at a time)."""
        return min(16, self.reply_window // (4 * words))

    def series_and_read(self, name: str, series: list[list[int]], data_name: str) -> list[int]:
        """For each entry of series: its values one after another into the one-word register `name`
        (bit-banging), then data_name's value. Pipelined where the bridge allows (see reply_window)."""
        reg, data = self.map[name], self.map[data_name]
        if not reg.writable or reg.words != 1:
            raise MapError(f"register {name} is not a writable one-word register")
        if any(not 0 <= v < 1 << 32 for values in series for v in values):
            raise ValueError(f"{name}: a value does not fit in 32 bits")
        per_request = self._per_request(data.words)
        if per_request and all(0 < len(values) <= 255 for values in series):
            replies = self.bus.read_indexed(reg.addr, series, data.addr, data.words, per_request, fixed=True)
            return [join_words(words) for words in replies]
        out = []
        for values in series:
            self.write_series(name, values)
            out.append(self.read(data_name))
        return out

    def write_series(self, name: str, values: list[int]) -> None:
        """Several values, in order, into one single-word register (bit-banging): one burst over
        UARTBone, one write each over a bus without fixed-address bursts."""
        reg = self.map[name]
        if not reg.writable or reg.words != 1:
            raise MapError(f"register {name} is not a writable one-word register")
        if any(not 0 <= v < 1 << 32 for v in values):
            raise ValueError(f"{name}: a value does not fit in 32 bits")
        if hasattr(self.bus, "write_fixed"):
            self.bus.write_fixed(reg.addr, list(values))
        else:
            for value in values:
                self.bus.write(reg.addr, [value])

    def _write_cfg(self, port: str, field: str, value: int) -> None:
        """Port configuration words are write-only: cfg_addr selects the word, cfg_data stores it."""
        first = int(self.map.constants[f"fpgatest_{field}_word"])
        words = int(self.map.constants[f"fpgatest_{field}_words"])
        if value < 0 or value >= 1 << (32 * words):
            raise ValueError(f"{port}_{field}: {value} does not fit in {32 * words} bits")
        addr_reg, data_reg = self.map[f"{port}_cfg_addr"], self.map[f"{port}_cfg_data"]
        for i in range(words):
            word = (value >> (32 * (words - 1 - i))) & 0xFFFFFFFF
            if data_reg.addr == addr_reg.addr + 4:
                self.bus.write(addr_reg.addr, [first + i, word])  # one burst: address, then data
            else:
                self.bus.write(addr_reg.addr, [first + i])
                self.bus.write(data_reg.addr, [word])

    # ---- tester helpers ----------------------------------------------------------------------

    def control_bits(self, register: str) -> dict[str, int]:
        """Field masks of a control register, from the FPGATEST_<PORT|TESTER>_CONTROL_* constants."""
        kind = "tester" if register == "tester_control" else "port"
        head = f"fpgatest_{kind}_control_"
        return {k[len(head):]: 1 << int(v) for k, v in self.map.constants.items() if k.startswith(head)}

    def pulse(self, register: str, *fields: str) -> None:
        bits = self.control_bits(register)
        self.write(register, sum(bits[f] for f in fields))

    def port_names(self, port: int, prefix: str) -> list[str]:
        head = f"port{port}_{prefix}"
        return [n for n in self.map.registers if n.startswith(head)]

    def _counter_values(self, port: int, words: list[int]) -> dict[str, int]:
        """The counter window's words (two per counter, most significant first) by counter name."""
        return {f"port{port}_stat_{name}": (words[2 * i] << 32) | words[2 * i + 1]
                for i, name in enumerate(self.map.counters())}

    def counters_now(self, ports: list[int]) -> dict[str, int]:
        """Latch every port now and read the event counters of `ports` only, all from that one edge (a
        cheap look, e.g. at the frames still arriving): the pulse, then each port's busy flag and its
        counter window in one request, as snapshot reads them (see _read_latched)."""
        self.pulse("tester_control", "snapshot")
        ports = list(dict.fromkeys(ports))      # each once (two flows may end at one port)
        values = self._read_latched(ports, "stat_counters_busy", ("stat_counters_busy",))
        for port in ports:
            del values[f"port{port}_stat_counters_busy"]
        return values

    def snapshot(self, clear: bool = False, clear_stats: bool = False) -> dict:
        """Latch every port at the same clock edge, then read it all: the pulse (a write, no reply to
        wait for), then every read in one round trip where the bridge allows it (see batch).

        clear: restart every counter at that edge; clear_stats: restart only the latency statistics
        (min/max/sum and the histogram), so that they describe the interval to the next snapshot.
        """
        self.pulse("tester_control", "snapshot", *(["clear"] if clear else []),
                   *(["clear_stats", "clear_hist"] if clear_stats else []))
        return self._read_latched(list(range(self.map.n_ports())), "stat_", ("stat_counters_busy", "stat_hist_busy"),
                                  once=("tester_time",))

    def _read_latched(self, ports: list[int], prefix: str, flags: tuple[str, ...], once: tuple[str, ...] = ()) -> dict:
        """The reads after a snapshot pulse, every one in one request where the bridge allows it (see
        batch): the registers `once`, then of each port its registers port<N>_<prefix>... and its
        counter window. The counter bank and the histogram take a few dozen clocks to latch (the
        tracker's part up to a few thousand after a jump past its window); the busy flags (port<N>_<flag>
        for flags) are a port's first registers of the prefix, so a burst that finds them low read the
        port's snapshot after them, and the port's counters, read after that burst, are latched too. A
        port found busy is read again, whole, in one more request; nothing of its first read is kept.
        Returns every register and counter read, by name."""
        values, pending, once_runs = {}, list(ports), self._runs(list(once))
        for poll in range(SNAPSHOT_POLLS):
            runs = {port: self._runs(self.port_names(port, prefix)) for port in pending}
            # the first request's pad (a read of words no one needs, see __init__) gives the latch time
            pad = [("read", self.map.memories["port0_counters"], self.latch_pad_words)] \
                if poll == 0 and self.latch_pad_words else []
            ops = pad + [("read", addr, total) for addr, total, _ in once_runs]
            ops += [("read", addr, total) for port in pending for addr, total, _ in runs[port]]
            ops += [("read", self.map.memories[f"port{port}_counters"], 2 * len(self.map.counters()))
                    for port in pending]
            replies = iter(self.batch(ops)[len(pad):])
            for _, _, regs in once_runs:
                values.update(self._split(regs, next(replies)))
            read = {port: {} for port in pending}
            for port in pending:
                for _, _, regs in runs[port]:
                    read[port].update(self._split(regs, next(replies)))
            for port in list(pending):
                counters = self._counter_values(port, next(replies))
                if not any(read[port][f"port{port}_{flag}"] for flag in flags):
                    values.update(read[port], **counters)
                    pending.remove(port)
            if not pending:
                return values
            once_runs = []
        raise LinkError(f"{self.url}: port {pending[0]} still latching its snapshot after {SNAPSHOT_POLLS} reads (a "
                        "few thousand clocks at most on an fpgatest): the device does not behave as one")


class IntervalRing:
    """The interval recorder's ring (litex_soc/intervals.py): records as the gateware's edges latched
    them, each a dict of field -> value by the FPGATEST_INTERVAL_* layout."""

    REGS = ("tester_interval_written", "tester_interval_lost", "tester_interval_running")

    def __init__(self, dev: Device):
        c = dev.map.constants
        if "intervals" not in dev.map.memories or "fpgatest_interval_words" not in c:
            raise MapError(f"{dev.map.path}: this build has no interval recorder")
        self.dev = dev
        self.period_min = int(c["fpgatest_interval_period_min"])
        self.words = int(c["fpgatest_interval_words"])
        self.slot = int(c["fpgatest_interval_slot"])
        self.depth = int(c["fpgatest_interval_depth"])
        head = "fpgatest_interval_"
        self.layout = {k[len(head):-len("_word")]: (int(v), int(c[k + "s"]))
                       for k, v in c.items() if k.startswith(head) and k.endswith("_word")}
        self.taken = 0

    def check_period(self, period_ticks: int) -> None:
        if not self.period_min <= period_ticks < 1 << 32:
            raise ValueError(f"an interval of {period_ticks * TICK_NS * 1e-9:g} s: the interval recorder takes "
                             f"{self.period_min * TICK_NS * 1e-3:g} us to {((1 << 32) - 1) * TICK_NS * 1e-9:.1f} s "
                             f"({self.period_min} to 2^32 - 1 ticks)")

    def start(self, period_ticks: int, count: int) -> None:
        """Edge 0 now, then one every period_ticks, `count` more (0: until stop)."""
        self.check_period(period_ticks)
        self.taken = 0
        self.dev.write("tester_interval_taken", 0)
        self.dev.write("tester_interval_hist_until", 0xFFFFFFFF)
        self.dev.write("tester_interval_count", count)
        self.dev.write("tester_interval_period", period_ticks)

    def stop(self) -> None:
        self.dev.write("tester_interval_period", 0)

    def keep_histogram_after(self, index: int) -> None:
        """Edges after `index` leave the histogram to add up."""
        self.dev.write("tester_interval_hist_until", index)

    def status(self) -> dict:
        raw = self.dev.read_many(list(self.REGS))
        return {"written": raw["tester_interval_written"], "lost": raw["tester_interval_lost"],
                "running": bool(raw["tester_interval_running"])}

    def drain(self) -> tuple[list[dict], dict]:
        """The records written since the last drain (their slots given back), and the status: two round
        trips however many records wait (the status, then every record in one request, where the bridge
        allows it: Device.batch), one when none does."""
        status = self.status()
        base = self.dev.map.memories["intervals"]
        reads = [("read", base + 4 * self.slot * (k % self.depth), self.words)
                 for k in range(self.taken, status["written"])]
        records = [{name: join_words(words[first:first + n]) for name, (first, n) in self.layout.items()}
                   for words in self.dev.batch(reads)]
        if records:
            self.taken = status["written"]
            self.dev.write("tester_interval_taken", self.taken)
        return records, status
