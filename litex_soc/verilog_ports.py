# SPDX-License-Identifier: BSD-2-Clause
"""Read the port list of a hand-written Verilog module: the register contract of fpgatest_port."""

import re
from dataclasses import dataclass
from pathlib import Path

PORT_RE = re.compile(
    r"^\s*(input|output)\s+(?:wire|reg)\s*(\[(\d+):0\])?\s*(\w+)\s*,?\s*(?://\s*(.*))?$"
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
            width = int(m.group(3)) + 1 if m.group(2) else 1
            ports.append(Port(m.group(1), width, m.group(4), (m.group(5) or "").strip()))
    return ports
