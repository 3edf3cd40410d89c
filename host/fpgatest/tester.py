# SPDX-License-Identifier: BSD-2-Clause
"""Tester operations in user units (ns, bytes, percent) over the register driver: streams, stats, DUT model."""

import ipaddress
import math
import time
from dataclasses import dataclass, field

from fpgatest.driver import LAT_UNITS_PER_TICK, TICK_NS, Device, IntervalRing, MapError
from fpgatest.mdio import LinkStatus, Mdio, MdioError

PROTOS = {"eth": 0, "ipv4": 1, "ipv6": 2}
MAX_SIZE = 16383
MIN_IFG = 12
MAX_GAP = (1 << 32) - 1  # cfg_ifg and cfg_burst_gap are 32-bit
SIG_LEN = 18
HIST_BINS = 64
HIST_LOG_OCTAVES = 17      # logarithmic bins reach 2^17 units (fpgatest_latency_stats)
Q16 = 1 << 16
Q32 = 1 << 32
PPM_LIMIT = 1000   # the switch model's clock offset, both signs (its pace register reaches 1953 ppm fast)

GEN_ERRORS = {"err_size": "frame size out of range for this protocol", "err_ifg": "IFG below 12 bytes",
              "err_burst_gap": "burst gap below 12 bytes", "err_frac": "fractional gap numerator >= denominator",
              "err_proto": "unknown protocol (or ICMP without IP)",
              "err_window": "window settings (mode, a window of 0, Reno's largest below its first) or no receiver on the port",
              "err_reflect": "the port is reflecting (its reflector has the transmitter)"}
SEQ_WINDOW = 1024          # the tracker's window (sequence numbers)
REFLECT_BITS = ("fpgatest_reflect_on", "fpgatest_reflect_arp", "fpgatest_reflect_nd")   # cfg_reflect's bits

# what the host assumes of the gateware, by csr.json constant (read from the cores' parameters)
CONTRACT = {"fpgatest_max_frame": MAX_SIZE, "fpgatest_min_ifg": MIN_IFG, "fpgatest_seq_window": SEQ_WINDOW,
            "fpgatest_sample_depth": 512, "fpgatest_event_depth": 256}


def histogram_edges(base: int, shift: int, log: bool) -> list[int]:
    """The edges of the 64 bins in latency units (1/16 tick), as fpgatest_latency_stats bins: bin i
    holds [edges[i], edges[i+1]). A unit is 2^shift. Linear: every bin one unit. Logarithmic: bins 0-3
    one unit each, then four bins an octave (bin 4(k-1) + m holds [(4+m) 2^(k-2), (5+m) 2^(k-2)) units
    for k = 2..16), each at most a quarter of its lower edge wide, up to 2^17 units."""
    if log:
        units = [0, 1, 2, 3] + [(4 + m) << (k - 2) for k in range(2, HIST_LOG_OCTAVES) for m in range(4)]
        units.append(1 << HIST_LOG_OCTAVES)
    else:
        units = list(range(HIST_BINS + 1))
    return [base + (u << shift) for u in units]


def check_contract(constants: dict) -> dict[int, str]:
    """Refuse a register map whose limits differ from the host's (MapError), and return the
    generator's refusal bits from it: bit -> reason."""
    wrong = [f"{k} = {constants.get(k)} (host: {v})" for k, v in CONTRACT.items() if constants.get(k) != v]
    missing = [k for k in GEN_ERRORS if f"fpgatest_gen_{k}" not in constants] \
        + [k for k in REFLECT_BITS if k not in constants]
    if wrong or missing:
        raise MapError("the register map and this host disagree: " + "; ".join(wrong + [f"no {m}" for m in missing])
                       + " (a build older or newer than the host tool)")
    return {int(constants[f"fpgatest_gen_{k}"]): text for k, text in GEN_ERRORS.items()}


class SettingError(ValueError):
    """A setting the tester cannot run; nothing was sent."""


def min_size(proto: str, vlan: bool = False) -> int:
    need = (18 if vlan else 14) + {"eth": 0, "ipv4": 28, "ipv6": 48}[proto] + SIG_LEN + 4
    return max(64, need)


def rate_gap(size: int, rate_percent: float, den: int = 1_000_000) -> tuple[int, int, int]:
    """(ifg, num, den) bytes such that the average rate is rate_percent of line rate, exactly to 1/den byte."""
    if not 0 < rate_percent <= 100:
        raise SettingError(f"rate {rate_percent}% out of range (0, 100]")
    period = (size + 20) * 100 / rate_percent  # byte times per frame
    gap_total = round((period - size - 8) * den)
    ifg, num = divmod(gap_total, den)
    if ifg < MIN_IFG:
        raise SettingError(f"rate {rate_percent}% needs a gap below {MIN_IFG} bytes")
    return ifg, num, den if num else 0


@dataclass
class Stream:
    proto: str = "ipv4"
    size: int = 64
    ifg: int = MIN_IFG
    rate_percent: float | None = None
    count: int = 0
    vlan: int | None = None
    burst: int = 0
    burst_gap: int = MIN_IFG
    seq_start: int = 0
    icmp: bool = False          # IPv4/IPv6: ICMP echo requests instead of UDP datagrams
    win_mode: int = 0           # fpgatest_window: 0 none, 1 fixed, 2 Reno-like
    win_size: int = 0           # frames: the fixed window, Reno's first
    win_max: int = 0            # frames: Reno's largest
    win_timeout: int = 0        # ticks without a reply before the frames in flight count as lost (0 = never)
    extra: dict = field(default_factory=dict)

    def check(self) -> None:
        if self.proto not in PROTOS:
            raise SettingError(f"unknown protocol {self.proto!r} (choose from {', '.join(PROTOS)})")
        if self.icmp and self.proto == "eth":
            raise SettingError("ICMP echo needs an IP protocol (ipv4 or ipv6)")
        if self.win_mode:
            if self.win_mode not in (1, 2) or not 1 <= self.win_size < 1 << 16:
                raise SettingError(f"window of {self.win_size} frames out of range 1..{(1 << 16) - 1}")
            if self.win_mode == 2 and not self.win_size <= self.win_max < 1 << 16:
                raise SettingError(f"largest window {self.win_max} frames out of range {self.win_size}..{(1 << 16) - 1}")
            if not 0 <= self.win_timeout < 1 << 32:
                raise SettingError(f"window timeout of {self.win_timeout} ticks out of range 0..{(1 << 32) - 1}")
        low = min_size(self.proto, self.vlan is not None)
        if not low <= self.size <= MAX_SIZE:
            raise SettingError(f"frame size {self.size} out of range {low}..{MAX_SIZE} bytes for {self.proto}"
                               + (" with VLAN tag" if self.vlan is not None else ""))
        if self.rate_percent is not None:
            rate_gap(self.size, self.rate_percent)  # raises for rates the gap cannot make
        elif self.ifg < MIN_IFG:
            raise SettingError(f"IFG {self.ifg} bytes below the minimum of {MIN_IFG}")
        elif self.ifg > MAX_GAP:
            raise SettingError(f"IFG {self.ifg} bytes above the maximum of {MAX_GAP}")
        if self.burst_gap > MAX_GAP or not 0 <= self.burst < 1 << 32:
            raise SettingError(f"burst of {self.burst} frames / gap {self.burst_gap} bytes out of range")
        if not 0 <= self.seq_start < 1 << 48 or self.count >= 1 << 48:
            raise SettingError("sequence start and frame count are 48-bit numbers")
        if self.burst and self.burst_gap < MIN_IFG:
            raise SettingError(f"burst gap {self.burst_gap} bytes below the minimum of {MIN_IFG}")
        if self.count < 0:
            raise SettingError("frame count must be >= 0")

    def registers(self) -> dict[str, int]:
        self.check()
        if self.rate_percent is not None:
            ifg, num, den = rate_gap(self.size, self.rate_percent)
        else:
            ifg, num, den = self.ifg, 0, 0
        regs = {
            "cfg_proto": PROTOS[self.proto], "cfg_size": self.size, "cfg_ifg": ifg,
            "cfg_ifg_frac_num": num, "cfg_ifg_frac_den": den, "cfg_count": self.count,
            "cfg_vlan_en": int(self.vlan is not None), "cfg_vlan_tci": self.vlan or 0,
            "cfg_burst_len": self.burst, "cfg_burst_gap": self.burst_gap, "cfg_seq_start": self.seq_start,
            # every stream states these, so none inherits an echo run's settings
            "cfg_icmp": int(self.icmp), "cfg_win_mode": self.win_mode, "cfg_win_size": self.win_size,
            "cfg_win_max": self.win_max, "cfg_win_timeout": self.win_timeout,
        }
        regs.update(self.extra)
        return regs

    def frame_period_bytes(self) -> float:
        regs = self.registers()
        frac = regs["cfg_ifg_frac_num"] / regs["cfg_ifg_frac_den"] if regs["cfg_ifg_frac_den"] else 0.0
        return self.size + 8 + regs["cfg_ifg"] + frac


def port_addresses(port: int, peer: int, proto: str, constants: dict) -> dict[str, int]:
    """The addresses a stream from `port` to `peer` carries unless told otherwise: the ports' power-up
    MACs and IPv4 addresses (csr.json: FPGATEST_PORTn_MAC, FPGATEST_PORTn_IPV4), and for IPv6 the
    documentation prefix (ipv6_address)."""
    regs = {"cfg_src_mac": int(constants[f"fpgatest_port{port}_mac"]),
            "cfg_dst_mac": int(constants[f"fpgatest_port{peer}_mac"])}
    if proto == "ipv4":
        regs.update(cfg_src_ip=int(constants[f"fpgatest_port{port}_ipv4"]),
                    cfg_dst_ip=int(constants[f"fpgatest_port{peer}_ipv4"]))
    elif proto == "ipv6":
        regs.update(cfg_src_ip=ipv6_address(port), cfg_dst_ip=ipv6_address(peer))
    return regs


def ipv6_address(port: int) -> int:
    """A port's IPv6 address unless told otherwise: the documentation prefix (RFC 3849), one /64 per
    port, 2001:db8:0:PORT::1."""
    import ipaddress

    return int(ipaddress.IPv6Address(f"2001:db8:0:{port}::1"))


def lat_ns(units: int) -> float:
    return units * TICK_NS / LAT_UNITS_PER_TICK


def ns_to_lat_units(ns: float) -> int:
    return round(ns * LAT_UNITS_PER_TICK / TICK_NS)


# A wait on the device gives up when the tester's time stands still this long (wall seconds): the
# device is not running. Its bounds are in the tester's time, which on the twin is simulated: a slow
# machine makes a wait longer, not wrong.
STALL_S = 30.0
# how often a long wait looks at the tester's time (wall seconds)
STALL_CHECK_S = 1.0


class Tester:
    __test__ = False  # not a pytest class

    def __init__(self, device: Device, kernel: dict | None = None):
        self.dev = device
        # twin:linux: how the kernel between the ports is set up (cli.twin_kernel), or None
        self.kernel = kernel
        self.n_ports = device.map.n_ports()
        self._configured: dict[int, dict[str, int]] = {}   # per port: the generator words written so far
        self._tap_on: int | None = None                     # twin: ports joined to Linux TAPs (read once)
        self._intervals: IntervalRing | None = None
        self.gen_errors = check_contract(device.map.constants)

    # ---- streams ------------------------------------------------------------------------------

    def has(self, port: int, direction: str) -> bool:
        """Whether the build has a generator ('tx') or receiver ('rx') on a port."""
        return bool(int(self.dev.map.constants.get(f"fpgatest_port{port}_{direction}", 1)))

    def configure(self, port: int, stream: Stream) -> None:
        if not 0 <= port < self.n_ports:
            raise SettingError(f"no port {port} (this tester has {self.n_ports})")
        if not self.has(port, "tx"):
            raise SettingError(f"port {port} has no generator in this build")
        # every stream states its addresses: none inherits those of the command before it (an IPv6 run
        # leaves 128-bit addresses whose low 32 bits an IPv4 stream would send)
        peer = (port + 1) % self.n_ports
        self._write_words(port, {**port_addresses(port, peer, stream.proto, self.dev.map.constants),
                                 **stream.registers()})

    def _write_words(self, port: int, regs: dict[str, int]) -> None:
        """Write the port's configuration words that differ from what this tester last wrote there
        (they are write-only: this copy is what they hold)."""
        written = self._configured.setdefault(port, {})
        for name, value in regs.items():
            if written.get(name) != value:
                self.dev.write(f"port{port}_{name}", value)
                written[name] = value

    def reflector_bytes(self, port: int) -> int:
        """The ring of the port's reflector in bytes (0: the port has none in this build)."""
        return int(self.dev.map.constants.get(f"fpgatest_port{port}_reflect_bytes", 0))

    def require_reflector(self, port: int) -> int:
        """The ring of the port's reflector in bytes; SettingError when the build gives the port none."""
        ring = self.reflector_bytes(port)
        if not ring:
            why = ("the build leaves it out" if self.has(port, "tx") and self.has(port, "rx")
                   else "it needs a port with both directions")
            raise SettingError(f"port {port} has no reflector in this build ({why})")
        return ring

    def reflect(self, port: int, on: bool, ip4=None, ip6=None, frames: bool = True) -> None:
        """Turn the port's reflector on or off (fpgatest_reflector). On, with the port's own MAC (its
        default, FPGATEST_PORTn_MAC) as its address:
          frames: frames addressed to that MAC go back out of the port with addresses swapped and echo
            requests answered; its generator refuses to start meanwhile;
          ip4 / ip6 (ipaddress objects): the port's IP addresses: ARP requests for ip4 and IPv6
            neighbour solicitations for ip6 are answered, so that a router or host finds the port by
            itself. The gateware holds one 128-bit address (cfg_src_ip, also the generator's source),
            so with both, ip6 must end in ip4 (2001:db8::c0a8:102 and 192.168.1.2, say).
        Without frames the generator stays free; an answer waits for the end of its run."""
        if not 0 <= port < self.n_ports:
            raise SettingError(f"no port {port} (this tester has {self.n_ports})")
        self.require_reflector(port)
        if not on:
            if ip4 is not None or ip6 is not None:
                raise SettingError("turning the reflector off takes no addresses")
            self._write_words(port, {"cfg_reflect": 0})
            return
        if ip4 is not None and ip4.version != 4 or ip6 is not None and ip6.version != 6:
            raise SettingError("reflect: one IPv4 and one IPv6 address at most")
        if ip4 is not None and ip6 is not None and int(ip6) & 0xFFFF_FFFF != int(ip4):
            raise SettingError(f"{ip6} does not end in {ip4}: the port holds one address for both "
                               f"(try {ipaddress.IPv6Address(int(ip6) & ~0xFFFF_FFFF | int(ip4))})")
        if not frames and ip4 is None and ip6 is None:
            raise SettingError("nothing to answer: give the port's address (ARP, ND) or reflect frames")
        if self.busy(port):
            raise SettingError(f"port {port} is sending: stop its run before it reflects")
        c = self.dev.map.constants
        bits = (c["fpgatest_reflect_on"] if frames else 0) | (c["fpgatest_reflect_arp"] if ip4 is not None else 0) \
            | (c["fpgatest_reflect_nd"] if ip6 is not None else 0)
        regs = {"cfg_src_mac": int(c[f"fpgatest_port{port}_mac"])}
        if ip4 is not None or ip6 is not None:
            regs["cfg_src_ip"] = int(ip6 if ip6 is not None else ip4)
        self._write_words(port, {**regs, "cfg_reflect": bits})

    def start(self, *ports: int) -> None:
        """Start the generators of `ports`, one write after the other with nothing read in between
        (so that they start as close together as the link allows), then check that none refused its
        stream; if one did, the others are stopped again. A port still in a run is refused first: its
        generator would ignore the start without a word (stop() waits for a run's end)."""
        for port in ports:
            if self.has(port, "tx") and self.busy(port):
                raise SettingError(f"port {port} is already sending: stop its run first")
        for port in ports:
            self.dev.pulse(f"port{port}_control", "start")
        err_reflect = int(self.dev.map.constants["fpgatest_gen_err_reflect"])
        for port in ports:
            error = self.dev.read(f"port{port}_stat_tx_error")
            for _ in range(3):
                # refused for the reflector alone: with ARP/ND answering on (and reflecting off), an
                # answer that held the transmitter at that edge (it leaves within a few microseconds,
                # well inside one register round trip); reflecting on refuses every time
                if error != err_reflect:
                    break
                self.dev.pulse(f"port{port}_control", "start")
                error = self.dev.read(f"port{port}_stat_tx_error")
            if error:
                for other in ports:
                    self.stop(other)
                reasons = [text for bit, text in self.gen_errors.items() if error & bit]
                raise SettingError(f"port {port} refused the stream: {'; '.join(reasons)}")

    def stop(self, port: int, timeout_s: float = 600.0) -> None:
        """Stop the port's generator and wait for the run's end: it sends the frame on the wire and
        counts the gap after it (long at a low rate) first, and takes no start until then (timeout_s:
        the tester's time, wait_while)."""
        self.dev.pulse(f"port{port}_control", "stop")
        if self.has(port, "tx"):
            self.wait_idle(port, timeout_s)

    def busy(self, port: int) -> bool:
        return bool(self.dev.read(f"port{port}_stat_tx_busy"))

    def wait_idle(self, port: int, timeout_s: float = 600.0) -> None:
        """Wait for the port's run to end; timeout_s is the tester's time (wait_while)."""
        self.wait_while(lambda: self.busy(port), timeout_s, 0.02, f"port {port} still sending")

    def clear(self) -> None:
        self.dev.pulse("tester_control", "clear")

    def flush(self, port: int, timeout_s: float = 10.0) -> None:
        self.dev.pulse(f"port{port}_control", "flush")
        self.wait_while(lambda: self.dev.read(f"port{port}_stat_seq_busy"), timeout_s, 0.01,
                        f"port {port}: sequence tracker still busy")

    def now_ticks(self) -> int:
        self.dev.pulse("tester_control", "snapshot")
        return self.dev.read("tester_time")

    def _elapsed(self, start: int, now: int) -> int:
        if now < start:
            raise RuntimeError(f"the tester's time went back ({start} -> {now} ticks): not an fpgatest answering")
        return now - start

    def wait_while(self, busy, timeout_s: float, poll_s: float, what: str) -> None:
        """Poll busy() every poll_s until it is false. TimeoutError "<what> after <timeout_s> s of tester
        time" when that much of the tester's time passes first (on the twin simulated time, as the
        device's own run is: a slow machine takes longer, not more), or "<what>: the tester's time
        stood still for STALL_S s" when the device's clock stops (the device is not running).
        Reading the time latches every port's counters (now_ticks), so only a wait still busy after
        STALL_CHECK_S of wall time reads it, then every STALL_CHECK_S, counting from that first
        reading: a short wait leaves what the last snapshot latched as it was."""
        start = seen = None
        checked_at = time.monotonic()
        limit = round(timeout_s / (TICK_NS * 1e-9))
        while busy():
            time.sleep(poll_s)
            if time.monotonic() - checked_at < STALL_CHECK_S:
                continue
            now, checked_at = self.now_ticks(), time.monotonic()
            if start is None:
                start, seen, seen_at = now, now, checked_at
            if self._elapsed(start, now) > limit:
                raise TimeoutError(f"{what} after {timeout_s:g} s of tester time")
            if now != seen:
                seen, seen_at = now, checked_at
            elif checked_at - seen_at > STALL_S:
                raise TimeoutError(f"{what}: the tester's time stood still for {STALL_S:g} s")

    def wait_ticks(self, ticks: int) -> int:
        """Wait until `ticks` of tester time have passed (simulated time on the twin); returns the end time.
        TimeoutError when the tester's time stands still for STALL_S (the device is not running)."""
        start = seen = self.now_ticks()
        seen_at = time.monotonic()
        while True:
            now = self.now_ticks()
            if self._elapsed(start, now) >= ticks:
                return now
            if now != seen:
                seen, seen_at = now, time.monotonic()
            elif time.monotonic() - seen_at > STALL_S:
                raise TimeoutError(f"tester time advanced {now - start} of {ticks} ticks, then stood still for "
                                   f"{STALL_S:g} s")
            left_s = (ticks - (now - start)) * TICK_NS * 1e-9
            time.sleep(min(0.2, max(0.005, left_s / 4)))

    # ---- links --------------------------------------------------------------------------------

    def links(self) -> list[LinkStatus] | None:
        """Each port's PHY link over MDIO; None when the build has no PHY management (the twin)."""
        # one bus for both PHYs (ethmdio), or each port's PHY on a bus of its own (ethphyN_mdio)
        shared = "ethmdio_w" in self.dev.map
        if shared:
            buses = [Mdio(self.dev)] * self.n_ports
        elif all(f"ethphy{port}_mdio_w" in self.dev.map for port in range(self.n_ports)):
            buses = [Mdio(self.dev, f"ethphy{port}_mdio") for port in range(self.n_ports)]
        else:
            return None
        addrs = [int(self.dev.map.constants[f"fpgatest_port{port}_phy_addr"]) for port in range(self.n_ports)]
        out = []
        for port, (mdio, addr) in enumerate(zip(buses, addrs)):
            try:
                out.append(mdio.link(addr))
            except MdioError as err:
                # the board's PHY addresses are not yet checked on hardware: say where PHYs do answer
                found = mdio.scan()
                bus = "" if shared else f" on port {port}'s bus"
                where = (f"PHYs answer at MDIO addresses {', '.join(map(str, found))}{bus}" if found else
                         f"no PHY answers at any MDIO address (0..31){bus}: check the PHYs' power and the MDIO pins")
                raise SettingError(f"port {port}: {err}; {where} (this build has the ports' PHYs at "
                                   f"{', '.join(map(str, addrs))}: the board target's PHY_ADDR)") from None
        return out

    def require_links(self, ports, links: list[LinkStatus] | None = None) -> None:
        """Refuse to measure over a port whose link is down or not 1000 Mb/s full duplex (links: as
        links() just returned them, to save reading them again)."""
        links = self.links() if links is None else links
        if links is None:
            return
        bad = [f"port {p}: {links[p].describe()}" for p in sorted(set(ports))
               if 0 <= p < len(links) and not links[p].usable]
        if bad:
            raise SettingError("link not at 1000 Mb/s full duplex: " + "; ".join(bad)
                               + " (--ignore-link measures anyway)")

    # ---- results ------------------------------------------------------------------------------

    def etherbone(self) -> dict | None:
        """The build's Etherbone (litex_soc/management.py): {"port", "url"}, or None without one."""
        c = self.dev.map.constants
        if "fpgatest_etherbone_port" not in c:
            return None
        addr = ipaddress.IPv4Address(int(c["fpgatest_etherbone_ipv4"]))
        return {"port": int(c["fpgatest_etherbone_port"]), "url": f"udp://{addr}:{int(c['fpgatest_etherbone_udp_port'])}"}

    def has_intervals(self) -> bool:
        """Whether the build has the interval recorder (the twin does; the default 5A-75B build not)."""
        return "intervals" in self.dev.map.memories

    def intervals(self) -> IntervalRing:
        """The interval recorder (hardware-timed snapshots). While it runs, take no snapshot of your own:
        a snapshot re-latches the banks a record is being copied from."""
        if self._intervals is None:
            self._intervals = IntervalRing(self.dev)
        return self._intervals

    def snapshot(self, clear: bool = False, clear_stats: bool = False) -> dict:
        """Every port latched at one clock edge; returns {'time_ticks', 'ports': [per-port dict]}."""
        raw = self.dev.snapshot(clear=clear, clear_stats=clear_stats)
        ports = []
        for p in range(self.n_ports):
            head = f"port{p}_stat_"
            ports.append({k[len(head):]: v for k, v in raw.items() if k.startswith(head)})
        return {"time_ticks": raw["tester_time"], "ports": ports}

    @staticmethod
    def latency_summary(s: dict) -> dict:
        """Latency statistics of one port snapshot in ns (FIFO: first bit in, first bit out), and the
        jitter: mean and largest |latency change| between consecutive frames (RFC 4689), over the
        count - 1 pairs since the last clear."""
        n = s["lat_count"]
        if n == 0:
            return {"count": 0, "min": None, "mean": None, "max": None, "stdev": None, "jitter_mean": None,
                    "jitter_max": None}
        mean_u = s["lat_sum"] / n
        var_u = max(0.0, s["lat_sumsq"] / n - mean_u * mean_u)
        return {"count": n, "min": lat_ns(s["lat_min"]), "mean": lat_ns(mean_u), "max": lat_ns(s["lat_max"]),
                "stdev": lat_ns(math.sqrt(var_u)), "last": lat_ns(s["lat_last"]) if "lat_last" in s else None,
                "jitter_mean": lat_ns(s["jit_sum"] / (n - 1)) if n > 1 else None,
                "jitter_max": lat_ns(s["jit_max"]) if n > 1 else None}

    def histogram(self, port: int) -> list[int]:
        """The 64 bins of the port's latency histogram as the last snapshot latched them."""
        return self.dev.read_indexed(f"port{port}_cfg_hist_addr", list(range(HIST_BINS)), f"port{port}_stat_hist_count")

    @staticmethod
    def histogram_bins(low_ns: float, high_ns: float, log: bool = False) -> tuple[int, int]:
        """(base, shift) of the bins that cover [low_ns, high_ns]: base at or below low_ns (latency
        units), the smallest unit 2^shift (1/16 tick, 0.5 ns) whose bins (histogram_edges) reach high_ns."""
        base = max(0, math.floor(ns_to_lat_units(low_ns)))
        span = max(1, ns_to_lat_units(high_ns) - base + 1)
        units = 1 << HIST_LOG_OCTAVES if log else HIST_BINS
        shift = 0
        while units << shift < span:
            shift += 1
        if shift > 31 or base >= 1 << 32:
            raise SettingError(f"latency range {low_ns}..{high_ns} ns beyond the histogram's reach")
        return base, shift

    def set_histogram(self, port: int, low_ns: float, high_ns: float, log: bool = False) -> dict:
        """Cover [low_ns, high_ns] with the 64 bins (histogram_bins), linear or logarithmic. Returns what
        was set: base and unit (the narrowest bin) in ns, and every bin's edges. Takes effect for the
        frames after it; set it while the port receives nothing."""
        base, shift = self.histogram_bins(low_ns, high_ns, log)
        self._write_words(port, {"cfg_hist_base": base, "cfg_hist_shift": shift, "cfg_hist_log": int(log)})
        return self.histogram_record(base, shift, log)

    @staticmethod
    def histogram_record(base: int, shift: int, log: bool) -> dict:
        """The bins as set_histogram reports them: base and unit (the narrowest bin) in ns, the scale,
        and every bin's edges in ns."""
        return {"base_ns": lat_ns(base), "bin_ns": lat_ns(1 << shift), "bins": HIST_BINS,
                "scale": "log" if log else "linear", "edges_ns": [lat_ns(e) for e in histogram_edges(base, shift, log)]}

    def samples(self, port: int, limit: int = 100_000) -> list[tuple[int, int, float]]:
        """(seq, RX tick, latency ns) captured by the sample FIFO, oldest first."""
        names = [f"port{port}_stat_sample_{k}" for k in ("valid", "seq", "rx_tick", "latency")]
        return [(r[names[1]], r[names[2]], lat_ns(r[names[3]])) for r in self._drain_fifo(port, "sample_pop", names, limit)]

    def loss_events(self, port: int, limit: int = 100_000) -> list[tuple[int, int]]:
        """(first sequence number, length) of each loss run the tracker recorded, oldest first."""
        names = [f"port{port}_stat_seq_event_{k}" for k in ("valid", "first", "length")]
        return [(r[names[1]], r[names[2]]) for r in self._drain_fifo(port, "event_pop", names, limit)]

    def _drain_fifo(self, port: int, pop: str, names: list[str], limit: int) -> list[dict]:
        """Pop entries, up to 16 per round trip, until a batch ends with an empty pop (names[0] is the
        valid flag). Every valid entry of a batch is kept: a popped entry is gone from the device."""
        out = []
        while len(out) < limit:
            batch = self.dev.pulse_and_read(f"port{port}_control", pop, names, min(16, limit - len(out)))
            out += [entry for entry in batch if entry[names[0]]]
            if not batch[-1][names[0]]:
                break
        return out

    # ---- calibration --------------------------------------------------------------------------

    def set_calibration(self, internal_ns: float, cables_ns: list[float]) -> None:
        self.dev.write("tester_cal_internal", ns_to_lat_units(internal_ns))
        for port, cable in enumerate(cables_ns):
            self.dev.write(f"port{port}_cal_cable", ns_to_lat_units(cable))

    def calibration(self) -> dict:
        return {"internal_ns": lat_ns(self.dev.read("tester_cal_internal")),
                "cables_ns": [lat_ns(self.dev.read(f"port{p}_cal_cable")) for p in range(self.n_ports)]}

    # ---- simulated device under test (twin only) ----------------------------------------------

    def tap_ports(self) -> list[int]:
        """The twin's ports joined to Linux TAP interfaces (twin:linux), read once."""
        if self._tap_on is None:
            self._tap_on = self.dev.read("tap_on") if "tap_on" in self.dev.map else 0
        return [p for p in range(self.n_ports) if self._tap_on >> p & 1]

    def dut_model_missing(self) -> str | None:
        """Why the switch model is not the device under test here, or None when it is."""
        if "dut_ab_cfg_latency" not in self.dev.map:
            return "this register map has no DUT model: dut settings exist on the twin only"
        if self.tap_ports():
            return "the ports go through the Linux kernel (twin:linux): there is no switch model to set"
        return None

    @property
    def has_dut_model(self) -> bool:
        return self.dut_model_missing() is None

    def dut_paths(self) -> list[str]:
        """The switch model's paths: 'ab' (port 0 -> 1), 'ab2' (its second hop, where built), 'ba' (back)."""
        if missing := self.dut_model_missing():
            raise MapError(missing)
        return [p for p in ("ab", "ab2", "ba") if f"dut_{p}_cfg_latency" in self.dev.map]

    def dut_set(self, path: str, *, enable=None, latency_ns=None, per_byte_ns=None, rate_mbps=None, ppm=None,
                buffer_bytes=None, max_frame=None, cable_in_ns=None, cable_out_ns=None, cut_through=None,
                dither=None, cross_mbps=None, cross_size=None, cross_random=None):
        """Set one path of the switch model ('ab' = port 0 -> port 1, 'ab2' its second hop, 'ba' = back).

        Cross traffic: cross_mbps of frames of cross_size bytes (line rate: preamble and gap
        included) join the path's egress queue, evenly spaced or (cross_random) Poisson; 0 = none.
        """
        if path not in self.dut_paths():
            raise SettingError(f"unknown DUT path {path!r} ({', '.join(self.dut_paths())})")
        head = f"dut_{path}_cfg_"

        def q16(ns, what):
            value = round(ns / TICK_NS * Q16)
            if not 0 <= value < 1 << 32:
                raise SettingError(f"{what} {ns} ns out of range 0..{(1 << 32) / Q16 * TICK_NS:.0f} ns")
            return value

        regs = {}
        if enable is not None:
            regs["enable"] = int(bool(enable))
        if latency_ns is not None:
            regs["latency"] = q16(latency_ns, "latency")
        if per_byte_ns is not None:
            regs["per_byte"] = q16(per_byte_ns, "per-byte time")
        if rate_mbps is not None or ppm is not None:
            rate = 1000.0 if rate_mbps is None else rate_mbps
            if not 0 < rate <= 1000:
                raise SettingError(f"egress rate {rate} Mb/s out of range (0, 1000]")
            if not -PPM_LIMIT <= (ppm or 0) <= PPM_LIMIT:
                raise SettingError(f"clock offset {ppm} ppm out of range -{PPM_LIMIT}..{PPM_LIMIT}")
            # the DUT's byte time in ticks * 2^32: line rate scaled by its rate limit and clock offset
            regs["pace"] = round(Q32 * 1000.0 / rate / (1 + (ppm or 0) * 1e-6))
            if regs["pace"] >= 1 << 48:
                raise SettingError(f"egress rate {rate} Mb/s too low (the model's pace register: > 0.016 Mb/s)")
        if buffer_bytes is not None:
            if not 0 < buffer_bytes <= 1 << 18:
                raise SettingError(f"buffer {buffer_bytes} bytes out of range 1..{1 << 18}")
            regs["buffer_bytes"] = buffer_bytes
        if max_frame is not None:
            if not 64 <= max_frame <= 16383:
                raise SettingError(f"largest frame {max_frame} out of range 64..16383")
            regs["max_frame"] = max_frame
        if cable_in_ns is not None:
            regs["cable_in"] = q16(cable_in_ns, "cable delay")
        if cable_out_ns is not None:
            regs["cable_out"] = q16(cable_out_ns, "cable delay")
        if cut_through is not None:
            regs["cut_through"] = int(bool(cut_through))
        if dither is not None:
            regs["dither"] = int(bool(dither))
        if cross_size is not None:
            if not 64 <= cross_size <= 16383:
                raise SettingError(f"cross-traffic frame size {cross_size} out of range 64..16383")
            regs["cross_size"] = cross_size
        if cross_mbps is not None or cross_random is not None:
            # what is not given stays as the model has it (read once)
            now = self.dut_get(path) if None in (cross_size, cross_mbps, cross_random) else {}
            size = cross_size if cross_size is not None else now["cross_size"]
            mbps = cross_mbps if cross_mbps is not None else now["cross_mbps"]
            random = cross_random if cross_random is not None else now["cross_random"]
            if not 0 <= mbps <= 1000:
                raise SettingError(f"cross traffic {mbps} Mb/s out of range 0..1000")
            if mbps:
                # mean time between cross frames: (size + 20) byte times at the cross rate
                regs["cross_period"] = round((size + 20) * 1000.0 / mbps * Q16)
            regs["cross_mode"] = 0 if not mbps else (2 if random else 1)
        for name, value in regs.items():
            self.dev.write(head + name, value)

    @property
    def has_echo_model(self) -> bool:
        return "dut_echo_cfg_enable" in self.dev.map and self.has_dut_model

    def echo_set(self, enable: bool | None = None, delay_ns: float | None = None) -> None:
        """The twin's echo responder at the far end of path ab (answers ping; replies return through ba)."""
        if not self.has_echo_model:
            raise MapError("this register map has no echo responder: it exists on the twin only")
        if delay_ns is not None:
            ticks = round(delay_ns / TICK_NS)
            if not 16 <= ticks < 1 << 32:
                raise SettingError(f"echo delay {delay_ns} ns out of range {16 * TICK_NS:.0f}..{((1 << 32) - 1) * TICK_NS:.0f} ns")
            self.dev.write("dut_echo_cfg_delay", ticks)
        if enable is not None:
            self.dev.write("dut_echo_cfg_enable", int(bool(enable)))

    def echo_get(self) -> dict:
        raw = self.dev.read_many([n for n in self.dev.map.registers if n.startswith("dut_echo_")])
        return {"enable": bool(raw["dut_echo_cfg_enable"]), "delay_ns": raw["dut_echo_cfg_delay"] * TICK_NS,
                "requests": raw["dut_echo_stat_requests"], "replies": raw["dut_echo_stat_replies"],
                "passed": raw["dut_echo_stat_passed"], "merged": raw["dut_echo_stat_merged"],
                "no_room": raw["dut_echo_stat_no_room"], "other_no_room": raw["dut_echo_stat_other_no_room"]}

    def dut_registers(self, path: str) -> dict[str, int]:
        """The raw settings of one direction of the switch model, to put back with dut_restore."""
        head = f"dut_{path}_cfg_"
        return self.dev.read_many([n for n in self.dev.map.registers if n.startswith(head)])

    def dut_restore(self, saved: dict[str, int]) -> None:
        for name, value in saved.items():
            self.dev.write(name, value)

    def dut_get(self, path: str) -> dict:
        head = f"dut_{path}_"
        names = [n for n in self.dev.map.registers if n.startswith(head)]
        raw = self.dev.read_many(names)
        cfg = {k[len(head):]: v for k, v in raw.items()}
        mode = cfg["cfg_cross_mode"]
        return {
            "enable": bool(cfg["cfg_enable"]),
            "cut_through": bool(cfg["cfg_cut_through"]),
            "dither": bool(cfg["cfg_dither"]),
            "latency_ns": cfg["cfg_latency"] / Q16 * TICK_NS,
            "per_byte_ns": cfg["cfg_per_byte"] / Q16 * TICK_NS,
            "rate_mbps": 1000.0 * Q32 / cfg["cfg_pace"],
            "buffer_bytes": cfg["cfg_buffer_bytes"],
            "max_frame": cfg["cfg_max_frame"],
            "cable_in_ns": cfg["cfg_cable_in"] / Q16 * TICK_NS,
            "cable_out_ns": cfg["cfg_cable_out"] / Q16 * TICK_NS,
            "cross_mbps": (cfg["cfg_cross_size"] + 20) * 1000.0 * Q16 / cfg["cfg_cross_period"] if mode else 0.0,
            "cross_size": cfg["cfg_cross_size"],
            "cross_random": mode == 2,
            "frames_in": cfg["stat_frames_in"], "frames_out": cfg["stat_frames_out"],
            "drop_buffer": cfg["stat_drop_buffer"], "drop_size": cfg["stat_drop_size"],
            "buffer_peak": cfg["stat_buffer_peak"],
            "cross_in": cfg["stat_cross_in"], "cross_out": cfg["stat_cross_out"],
            "cross_drop": cfg["stat_cross_drop"],
        }
