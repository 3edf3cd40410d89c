# SPDX-License-Identifier: BSD-2-Clause
"""Small pieces the tester's clock crossings are built from (sys = the CSR and engine clock, tester =
the 125 MHz clock of the ports)."""

from migen import Signal
from migen.genlib.cdc import PulseSynchronizer


def cross_strobe(module, strobe, src: str = "sys", dst: str = "tester") -> Signal:
    """A one-clock pulse in `src` as a one-clock pulse in `dst` (pulses far apart: a CSR write strobe,
    an interval edge)."""
    sync = PulseSynchronizer(src, dst)
    module.submodules += sync
    module.comb += sync.i.eq(strobe)
    return sync.o


def apart_from(module, pulse, edge):
    """`pulse` (tester clock), moved one clock later where it falls on an interval edge (edges are
    never two clocks apart), so that it and the edge stay separate markers. No edge (a build without
    the interval recorder): `pulse` as it is."""
    if edge is None:
        return pulse
    late = Signal()
    out = Signal()
    module.sync.tester += late.eq(pulse & edge)
    module.comb += out.eq((pulse & ~edge) | late)
    return out


def any_of(signals):
    out = 0
    for s in signals:
        out = out | s
    return out
