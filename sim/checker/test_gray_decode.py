# SPDX-License-Identifier: BSD-2-Clause
"""fpgatest_rx_cdc's two-clock gray decode, in both of its targets' texts (rtl/ecp5: bit by bit, for the
board; rtl/generic: word-wide, for simulators), proven equal to the textbook decode for every input
(Yosys SAT)."""

import os
import subprocess
from pathlib import Path

import pytest

from litex_soc.tester import TARGETS, rtl_include_dir

ROOT = Path(__file__).resolve().parents[2]
RX_CDC = ROOT / "rtl" / "fpgatest_rx_cdc.v"


def decode_text() -> str:
    """The RX crossing's decode as the core has it: its GROUPS and its include of the target's
    group_parity and gray2bin."""
    text = RX_CDC.read_text()
    groups = text[text.index("localparam GROUPS"):text.index("\n", text.index("localparam GROUPS"))]
    include = '`include "fpgatest_gray_decode.vh"'
    assert include in text
    return f"{groups}\n{include}"


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("stamp_w", [16, 17, 24, 31, 32])
def test_two_clock_decode_is_gray_to_binary(stamp_w, target):
    # the core's decode (the group parities, then each bit) against bit i = XOR of the gray bits from i up,
    # with the target's text as its include path gives it; the yowasp wrapper sees only paths under the
    # checkout, relative ones: the proof runs in a directory there
    work = ROOT / "build" / "proofs" / f"gray_decode_{stamp_w}_{target}"
    work.mkdir(parents=True, exist_ok=True)
    (work / "decode.v").write_text(f"""
module core_decode #(parameter STAMP_W = 24) (input [STAMP_W-1:0] g, output [STAMP_W-1:0] b);
{decode_text()}
assign b = gray2bin(g, group_parity(g));
endmodule

module textbook_decode #(parameter STAMP_W = 24) (input [STAMP_W-1:0] g, output [STAMP_W-1:0] b);
genvar i;
for (i = 0; i < STAMP_W; i = i + 1) begin : bits
    assign b[i] = ^g[STAMP_W-1:i];
end
endmodule
""")
    read = f"read_verilog -I{os.path.relpath(rtl_include_dir(target), work)}"
    script = (f"{read} decode.v; chparam -set STAMP_W {stamp_w} core_decode textbook_decode; prep; "
              "miter -equiv -flatten -make_outputs core_decode textbook_decode miter; hierarchy -top miter; "
              "sat -verify -prove trigger 0 miter")
    result = subprocess.run(["yosys", "-q", "-p", script], cwd=work, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
