# SPDX-License-Identifier: BSD-2-Clause
"""Stop signals (SIGINT, SIGTERM, SIGHUP) as an exception that cannot be lost.

The handler raises Stopped where the program happens to be, so every `finally` runs (the stream
stops, settings are put back, a twin the command started is stopped). Python runs a signal handler
wherever it next checks: inside a finalizer (`__del__`, a weakref callback) the exception is
"ignored" and the command would run on. So the signal is also kept, and every register access
(the transport's check()) raises it again unless a stop is already propagating.
"""

import signal
import sys


class Stopped(KeyboardInterrupt):
    """A stop signal as an exception.

    A subclass, not KeyboardInterrupt itself: CPython under `python -m` exits by SIGINT, whatever
    status main returns, once a bare KeyboardInterrupt has passed through any string exec (a
    dataclass or namedtuple being built in a lazy import), even when it was caught."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


_pending: list[int | None] = [None]


def handler(signum, frame) -> None:
    _pending[0] = signum
    raise Stopped(signum)


def check() -> None:
    """Raise the stop a signal asked for if it was lost on the way (not while one propagates)."""
    signum = _pending[0]
    if signum is not None and not isinstance(sys.exc_info()[1], KeyboardInterrupt):
        raise Stopped(signum)


def reset() -> None:
    _pending[0] = None
