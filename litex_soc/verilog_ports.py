# SPDX-License-Identifier: BSD-2-Clause
"""Read the port list of a hand-written Verilog module: the register contract of fpgatest_port."""

import re
from dataclasses import dataclass
from pathlib import Path

PORT_RE = re.compile(
    r"^\s*(input|output)\s+(?:wire|reg)\s*(\[([^\]:]+):0\])?\s*(\w+)\s*,?\s*(?://\s*(.*))?$"
)


@dataclass(frozen=True)
class Port:
    direction: str
    width: int
    name: str
    description: str


def module_ports(path: Path) -> list[Port]:
    """Ports of the first module in a Verilog file, as declared (ANSI style, one per line)."""
    ports = []
    for line in path.read_text().splitlines():
        m = PORT_RE.match(line)
        if m:
            msb = m.group(3)
            width = (int(msb) + 1 if msb.isdigit() else None) if m.group(2) else 1  # None: parametric
            ports.append(Port(m.group(1), width, m.group(4), (m.group(5) or "").strip()))
    return ports


COUNTER_RE = re.compile(r"^\s*\*\s+(\d+)\s+(\w+)\s+(.*)$")


def counter_names(path: Path) -> list[tuple[str, str]]:
    """(name, meaning) of the event counters, in index order, from the table in fpgatest_port.v."""
    rows = []
    in_table = False
    for line in path.read_text().splitlines():
        if "counter  name" in line:
            in_table = True
            continue
        if in_table:
            m = COUNTER_RE.match(line)
            if not m:
                break
            assert int(m.group(1)) == len(rows), f"counter table out of order at {line!r}"
            rows.append((m.group(2), m.group(3).strip()))
    return rows
