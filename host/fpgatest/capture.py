# SPDX-License-Identifier: BSD-2-Clause
"""Captures of the twin's wires as pcapng: every frame on port 0 and port 1, both directions, with the
tester's clock as the timestamp (ns resolution; time since the twin's reset).

The twin's gmii_capture taps (sim/models/gmii_capture.v) write one line per frame while the
`capture_enable` register is set: "<tick at the SFD> <frame bytes in hex>". A capture enables them,
notes where each file ends, and at the end reads what was added and writes pcapng: one interface per
port ("port0", "port1"), each packet flagged inbound (RX) or outbound (TX). A capture taken while the
taps are already on (the twin's own, `python -m boards.twin --run --capture FILE`) leaves them on and
keeps the frames of its own time span.
"""

import struct
from decimal import Decimal
from pathlib import Path

from scapy.utils import RawPcapNgWriter

from fpgatest.driver import TICK_NS

LINKTYPE_ETHERNET = 1
DIRECTION = {"tx": 2, "rx": 1}      # pcapng's EPB flags: outbound, inbound ...
FCS_LEN = 4 << 5                    # ... and every frame ends in its 4-byte FCS (bits 5-8: its length in bytes)
SETTLE_TICKS = 20_000     # longer than the longest frame: every frame begun while enabled has ended


class NsPcapNgWriter(RawPcapNgWriter):
    """scapy's pcapng writer with nanosecond timestamps (if_tsresol = 9 in every interface block)."""

    def __init__(self, filename: str):
        super().__init__(filename)
        self.tsresol = 10 ** 9

    def _write_block_idb(self, linktype, ifname=None):
        opts = b""
        if ifname is not None:
            opts += struct.pack(self.endian + "HH", 2, len(ifname)) + self._add_padding(ifname)
        opts += struct.pack(self.endian + "HHB", 9, 1, 9) + b"\x00" * 3       # if_tsresol: 10^-9 s
        opts += struct.pack(self.endian + "HH", 0, 0)
        block = struct.pack(self.endian + "HHI", linktype, 0, 262144)
        self.f.write(self.build_block(struct.pack(self.endian + "I", 1), block, options=opts))


class CaptureError(RuntimeError):
    """A capture that cannot be taken (not a twin, no run directory)."""


class TwinCapture:
    """Capture the twin's wires from start() to stop(target)."""

    def __init__(self, tester, run_dir: Path):
        if "capture_enable" not in tester.dev.map:
            raise CaptureError("--capture: this target has no capture taps (the twin has them; a board does not)")
        self.t = tester
        self.run_dir = Path(run_dir)
        # file -> (interface, direction), from the twin's csr.json (CAPTURE_PORTn_TX/RX)
        constants = tester.dev.map.constants
        self.taps = {str(constants[f"capture_port{p}_{side}"]): (f"port{p}", DIRECTION[side])
                     for p in range(tester.n_ports) for side in DIRECTION if f"capture_port{p}_{side}" in constants}
        if not self.taps or not all((self.run_dir / name).exists() for name in self.taps):
            raise CaptureError(f"--capture: no capture files in {self.run_dir} (a twin from another checkout "
                               "or an older build?)")
        self.offsets: dict[str, int] = {}
        self.was_on = False
        self.since: int | None = None

    def start(self) -> None:
        self.was_on = bool(self.t.dev.read("capture_enable"))
        self.offsets = {name: (self.run_dir / name).stat().st_size for name in self.taps}
        if self.was_on:     # another capture's taps: this one keeps the frames from here on
            self.since = self.t.now_ticks()
        else:
            self.t.dev.write("capture_enable", 1)

    def stop(self, target: Path) -> int:
        """Stop (the taps left on if they were on before start()), wait until the frames in flight have
        ended, write target; returns the frames written."""
        until = None
        if self.was_on:     # the taps go on: the frames up to now are this capture's
            until = self.t.now_ticks()
        else:
            self.t.dev.write("capture_enable", 0)
        self.t.wait_ticks(SETTLE_TICKS)
        return self.collect(target, until)

    def collect(self, target: Path, until: int | None = None) -> int:
        """target written from what the taps added since start() (SFDs from start() to `until`, a tick);
        only whole lines: a frame the twin had not ended when it stopped is left out. Returns the frames."""
        frames = []
        for name, (ifname, direction) in self.taps.items():
            with open(self.run_dir / name, "rb") as f:
                f.seek(self.offsets[name])
                for line in f.read().decode(errors="replace").split("\n")[:-1]:
                    tick, _, data = line.partition(" ")
                    if not (tick.isdigit() and data):
                        continue
                    tick = int(tick)
                    if (self.since is None or tick >= self.since) and (until is None or tick < until):
                        frames.append((tick, name, ifname, direction, bytes.fromhex(data)))
        frames.sort(key=lambda x: (x[0], x[1]))
        write_pcapng(target, frames)
        return len(frames)


def write_pcapng(target: Path, frames: list[tuple]) -> None:
    """(tick, tap, interface, direction, bytes) in time order -> pcapng, via a temporary file."""
    tmp = Path(str(target) + ".part")
    w = NsPcapNgWriter(str(tmp))
    try:
        w.header_present = True
        w._write_block_shb()
        ids = {}
        for name in ("port0", "port1"):          # both interfaces, in this order: ids 0 and 1
            ids[name] = len(ids)
            w._write_block_idb(LINKTYPE_ETHERNET, name.encode())
        for tick, _, ifname, direction, data in frames:
            w._write_block_epb(data, ifid=ids[ifname], timestamp=Decimal(tick * TICK_NS) / Decimal(10 ** 9),
                               flags=direction | FCS_LEN)
    finally:
        w.close()
    tmp.replace(target)
