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


VALUE_RE = re.compile(r"\b([A-Z][A-Z0-9_]*)\s*=\s*(?:\d+'([hdb]))?([0-9a-fA-F_]+)\s*(?=[,;)]|$)")
DECL_RE = re.compile(r"^\s*(?:localparam|parameter)\b(.*)$")


def module_values(path: Path) -> dict[str, int]:
    """NAME -> value of every parameter and localparam of a Verilog file set to a plain literal
    (decimal or sized hex/decimal/binary, several per declaration), e.g. MAX_SIZE, ERR_IFG,
    WINDOW_LOG2; expressions are left out."""
    values = {}
    for line in path.read_text().splitlines():
        decl = DECL_RE.match(line.split("//")[0])
        text = decl.group(1) if decl else (line.split("//")[0] if values.get("_continued") else "")
        values.pop("_continued", None)
        for name, base, digits in VALUE_RE.findall(text):
            values[name] = int(digits.replace("_", ""), {"h": 16, "d": 10, "b": 2, "": 10}[base])
        if decl and text.rstrip().endswith(","):
            values["_continued"] = 1
    values.pop("_continued", None)
    return values
