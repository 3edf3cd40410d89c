# SPDX-License-Identifier: BSD-2-Clause
"""Python reference of fpgatest_window's Reno-like window: what cwnd, losses and cuts must be after a
sequence of echo replies (docs in rtl/fpgatest_window.v)."""

from dataclasses import dataclass


@dataclass
class RenoWindow:
    cwnd: int
    max: int
    ssthresh: int = 0
    ack_next: int = 0
    recover: int = 0
    acc: int = 0
    lost: int = 0
    cuts: int = 0

    def __post_init__(self):
        self.ssthresh = self.ssthresh or self.max
        self.recover = self.ack_next

    def reply(self, seq: int, seq_next: int) -> None:
        """A reply for `seq` while the generator's next number is `seq_next` (the recovery point of a cut)."""
        dist = seq - self.ack_next
        if not 0 <= dist < seq_next - self.ack_next:
            return  # not in flight: ignored
        self.ack_next = seq + 1
        if dist:
            self.lost += dist
            if seq >= self.recover:
                self.ssthresh = self.cwnd = max(self.cwnd // 2, 2)
                self.acc = 0
                self.recover = seq_next
                self.cuts += 1
        elif self.cwnd < self.max:
            if self.cwnd < self.ssthresh:
                self.cwnd += 1
            elif self.acc + 1 >= self.cwnd:
                self.cwnd += 1
                self.acc = 0
            else:
                self.acc += 1
