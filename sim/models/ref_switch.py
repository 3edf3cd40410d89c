# SPDX-License-Identifier: BSD-2-Clause
"""Python reference model of dut_switch_path's store-and-forward queue (frame level, byte times), for
checking what the tester measures through it: which frames of a stream the tail drop takes.

Frame i's preamble starts at a_i (byte times, from the generator's gap); its L bytes arrive in
[a_i + 8, a_i + 8 + L). The egress picks a frame when its descriptor exists (the frame is in), its
exit time is due (SFD + latency + per-byte time * L, 9 clocks early) and the pacing allows (the
previous start + (L + 20) * pace byte times, kept with its fraction: a start the pacing held back
counts from when it was due, not from the clock edge it took); it reads the frame 9 clocks later,
one byte per clock. A frame is dropped when, at its last byte, its L bytes and the unread bytes of the frames
ahead of it exceed the buffer. The model runs in real byte times where the gateware counts whole
clocks: near a boundary it can differ by one frame.
"""

import math

Q16 = 1 << 16


def drops(size: int, period: float, frames: int, *, buffer_bytes: int, pace: float = 1.0,
          latency_ticks: float = 125.0, per_byte_ticks: float = 1.0) -> list[int]:
    """Indices of the dropped frames among `frames` frames of `size` bytes, one every `period` byte
    times (preamble to preamble), through a path with an egress `pace` (2.0 = 500 Mb/s)."""
    dropped = []
    queue = []                 # (read start, read end) of the accepted frames still (partly) unread
    next_start = -1e18         # pacing: earliest next egress decision (byte times, with its fraction)
    for i in range(frames):
        a = i * period
        end = a + 8 + size                            # its last byte is in
        queue = [q for q in queue if q[1] > end]
        unread = sum(min(size, r_end - max(r_start, end)) for r_start, r_end in queue)
        if size + unread > buffer_bytes:
            dropped.append(i)
            continue
        due = math.ceil(a + 7 + latency_ticks + per_byte_ticks * size) - 9
        decide = max(due, end + 1, math.ceil(next_start), queue[-1][1] if queue else -math.inf)
        basis = next_start if math.ceil(next_start) == decide else decide
        next_start = basis + (size + 20) * pace
        queue.append((decide + 9, decide + 9 + size))
    return dropped


def period_bytes(size: int, rate_percent: float) -> float:
    """Preamble-to-preamble spacing of a stream at a rate (percent of line rate)."""
    return (size + 20) * 100 / rate_percent
