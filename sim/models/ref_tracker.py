# SPDX-License-Identifier: BSD-2-Clause
"""Python reference model of fpgatest_seq_tracker (same window semantics), for checking the gateware."""

MOD = 1 << 48
HALF = 1 << 47


class RefTracker:
    def __init__(self, window: int = 1024):
        self.window = window
        self.started = False
        self.first = self.oldest = self.highest = 0
        self.seen: set[int] = set()
        self.received = self.lost = self.late = self.duplicate = self.stale = 0
        self.events: list[tuple[int, int]] = []
        self._run: list[int] | None = None  # [first, length]

    def _lose(self, at: int, n: int):
        self.lost += n
        if self._run is None:
            self._run = [at, n]
        else:
            self._run[1] += n

    def _close(self):
        if self._run is not None:
            self.events.append((self._run[0], min(self._run[1], 2**32 - 1)))
            self._run = None

    def _slide(self, target: int):
        while self.oldest != target:
            if self.oldest == self.highest:
                self._lose(self.oldest, (target - self.oldest) % MOD)
                self.oldest = self.highest = target
                return
            if self.oldest in self.seen:
                self.seen.discard(self.oldest)
                self._close()
            else:
                self._lose(self.oldest, 1)
            self.oldest = (self.oldest + 1) % MOD

    def push(self, seq: int):
        seq %= MOD
        if not self.started:
            self.started = True
            self.first = self.oldest = seq
            self.highest = (seq + 1) % MOD
            self.seen = {seq}
            self.received += 1
            return
        d_old = (seq - self.oldest) % MOD
        if d_old >= HALF:
            self.stale += 1
            return
        if d_old >= self.window:
            self._slide((seq - self.window + 1) % MOD)
        if (seq - self.highest) % MOD < HALF:
            self.highest = (seq + 1) % MOD
            self.seen.add(seq)
            self.received += 1
        elif seq in self.seen:
            self.duplicate += 1
        else:
            self.late += 1
            self.received += 1
            self.seen.add(seq)

    def flush(self):
        if self.started:
            self._slide(self.highest)
        self._close()
