# SPDX-License-Identifier: BSD-2-Clause
"""Captures of the twin's wires as pcapng: every frame on port 0 and port 1, both directions, with the
tester's clock as the timestamp (ns resolution; time since the twin's reset).

The twin's gmii_capture taps (sim/models/gmii_capture.v) write one line per frame while the
`capture_enable` register is set: "<tick at the SFD> <frame bytes in hex>". A capture enables them,
notes where each file ends, and at the end reads what was added and writes pcapng: one interface per
port ("port0", "port1"), each packet flagged inbound (RX) or outbound (TX). A capture taken while the
taps are already on (the twin's own, `python -m boards.twin --run --capture FILE`) leaves them on and
keeps the frames of its own time span.

A capture to a named pipe (FIFO) is live: the header as soon as a reader opens the pipe (Wireshark
`-k -i PIPE`, tshark `-i PIPE`), then the frames as the taps write them, each poll's frames in time
order (pcapng takes frames of different interfaces out of order; a frame is written when it has
ended, so a long frame on one tap can follow a short one begun after it on another).
"""

import os
import stat
import struct
import threading
import time
from decimal import Decimal
from pathlib import Path

from scapy.utils import RawPcapNgWriter

from fpgatest.driver import TICK_NS

LINKTYPE_ETHERNET = 1
DIRECTION = {"tx": 2, "rx": 1}      # pcapng's EPB flags: outbound, inbound ...
FCS_LEN = 4 << 5                    # ... and every frame ends in its 4-byte FCS (bits 5-8: its length in bytes)
SETTLE_TICKS = 20_000     # longer than the longest frame: every frame begun while enabled has ended
POLL_S = 0.05             # a live capture looks at the taps' files this often


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


def is_pipe(target: Path) -> bool:
    """target is a named pipe: a live capture."""
    try:
        return stat.S_ISFIFO(Path(target).stat().st_mode)
    except OSError:
        return False


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
        self.live: LiveWriter | None = None

    def start(self, target: Path | None = None) -> None:
        """The taps on (if they were not); a target that is a named pipe gets the frames from here on."""
        self.was_on = bool(self.t.dev.read("capture_enable"))
        self.offsets = {name: (self.run_dir / name).stat().st_size for name in self.taps}
        if self.was_on:     # another capture's taps: this one keeps the frames from here on
            self.since = self.t.now_ticks()
        else:
            self.t.dev.write("capture_enable", 1)
        if target is not None and is_pipe(target):     # written as the frames come, by a thread of its own
            self.live = LiveWriter(self, Path(target))
            self.live.start()

    def outcome(self, frames: int, target: Path) -> str:
        """What a capture wrote, for the user: a sentence."""
        if self.live and self.live.broken:
            return f"live capture to {target} ended early ({self.live.broken}): {frames} frames written"
        return f"{frames} frames captured to {target}" + (" (live)" if self.live else "")

    def stop(self, target: Path) -> int:
        """Stop (the taps left on if they were on before start()), wait until the frames in flight have
        ended, write target (or end the live capture); returns the frames written."""
        until = None
        if self.was_on:     # the taps go on: the frames up to now are this capture's
            until = self.t.now_ticks()
            if self.live:   # at once: a frame written from here on began after `until`
                self.live.until = until
        else:
            self.t.dev.write("capture_enable", 0)
        self.t.wait_ticks(SETTLE_TICKS)
        return self.collect(target, until)

    def collect(self, target: Path, until: int | None = None) -> int:
        """target written from what the taps added since start() (SFDs from start() to `until`, a tick);
        only whole lines: a frame the twin had not ended when it stopped is left out. A live capture
        ends instead: what is left written, the pipe closed. Returns the frames."""
        if self.live:       # its end, if any, set by stop()
            return self.live.finish()
        frames = self.take(until)
        write_pcapng(target, frames)
        return len(frames)

    def take(self, until: int | None = None) -> list[tuple]:
        """The frames the taps' files gained since the last take (or start()), whole lines only (a line
        being written is taken next time), in time order: (tick, tap, interface, direction, bytes)."""
        frames = []
        for name, (ifname, direction) in self.taps.items():
            with open(self.run_dir / name, "rb") as f:
                f.seek(self.offsets[name])
                text = f.read()
            whole = text.rfind(b"\n") + 1
            self.offsets[name] += whole
            for line in text[:whole].decode(errors="replace").split("\n")[:-1]:
                tick, _, data = line.partition(" ")
                if not (tick.isdigit() and data):
                    continue
                tick = int(tick)
                if (self.since is None or tick >= self.since) and (until is None or tick < until):
                    frames.append((tick, name, ifname, direction, bytes.fromhex(data)))
        frames.sort(key=lambda x: (x[0], x[1]))
        return frames


class PcapNgStream:
    """A pcapng file or pipe being written: the section header and both ports' interfaces on open,
    then frames (tick, tap, interface, direction, bytes) as they are given."""

    def __init__(self, target: Path):
        self.w = NsPcapNgWriter(str(target))
        self.w.header_present = True
        self.w._write_block_shb()
        self.ids = {}
        for name in ("port0", "port1"):          # both interfaces, in this order: ids 0 and 1
            self.ids[name] = len(self.ids)
            self.w._write_block_idb(LINKTYPE_ETHERNET, name.encode())
        self.written = 0

    def write(self, frames: list[tuple]) -> None:
        for tick, _, ifname, direction, data in frames:
            self.w._write_block_epb(data, ifid=self.ids[ifname], timestamp=Decimal(tick * TICK_NS) / Decimal(10 ** 9),
                                    flags=direction | FCS_LEN)
        self.written += len(frames)

    def flush(self) -> None:
        self.w.f.flush()

    def close(self) -> None:
        self.w.close()


class LiveWriter(threading.Thread):
    """A live capture: opens the pipe (waiting for its reader), then every POLL_S writes what the taps
    added, until finish(). A reader that goes away ends it (broken), not the command or the twin."""

    def __init__(self, capture: TwinCapture, target: Path):
        super().__init__(daemon=True, name="fpgatest-capture")
        self.capture, self.target = capture, target
        self.done = threading.Event()
        self.stream: PcapNgStream | None = None
        self.opened = threading.Event()     # a reader opened the pipe
        self.broken: str | None = None
        self.until: int | None = None

    def run(self) -> None:
        try:
            self.stream = PcapNgStream(self.target)        # waits for a reader
            self.opened.set()
            self.stream.flush()
            while True:
                stopping = self.done.wait(POLL_S)
                frames = self.capture.take()
                until = self.until      # read after take(): a frame it took from beyond `until` is left out
                self.stream.write([f for f in frames if until is None or f[0] < until])
                self.stream.flush()
                if stopping:
                    break
        except OSError as err:          # the reader went away (EPIPE), or the pipe is gone
            self.broken = err.strerror or str(err)
        finally:
            if self.stream:
                try:
                    self.stream.close()
                except OSError:
                    pass

    def finish(self, timeout_s: float = 10.0) -> int:
        """End the capture: what the taps added (up to `until`, where set) written, the pipe closed.
        Returns the frames written; when no reader ever opened the pipe, 0 and `broken` says so."""
        self.done.set()
        if not self.opened.wait(0.5) and self.is_alive():
            # no reader: open the pipe's reading end here, so that the writer's open returns, and
            # throw away what it then writes (no one was looking)
            self.broken = "no reader opened the pipe"
            try:
                fd = os.open(self.target, os.O_RDONLY | os.O_NONBLOCK)
            except OSError:
                return 0
            deadline = time.monotonic() + timeout_s
            try:
                while self.is_alive() and time.monotonic() < deadline:
                    try:
                        os.read(fd, 1 << 16)
                    except BlockingIOError:
                        pass
                    self.join(0.01)
            finally:
                os.close(fd)
            return 0
        self.join(timeout_s)
        return self.stream.written if self.stream else 0


def write_pcapng(target: Path, frames: list[tuple]) -> None:
    """(tick, tap, interface, direction, bytes) in time order -> pcapng, via a temporary file."""
    tmp = Path(str(target) + ".part")
    stream = PcapNgStream(tmp)
    try:
        stream.write(frames)
    finally:
        stream.close()
    tmp.replace(target)
