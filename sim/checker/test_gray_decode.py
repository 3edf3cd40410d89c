# SPDX-License-Identifier: BSD-2-Clause
"""fpgatest_rx_cdc's two-clock gray decode, both of its texts (synthesis's and a simulator's), proven equal to
the textbook decode for every input (Yosys SAT)."""

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RX_CDC = ROOT / "rtl" / "fpgatest_rx_cdc.v"


def decode_functions() -> str:
    """The RX crossing's decode as written in the core: GROUPS, then group_parity and gray2bin, once for
    synthesis and once for simulators (`ifdef SYNTHESIS)."""
    text = RX_CDC.read_text()
    start = text.index("localparam GROUPS")
    end = text.index("`endif", text.index("function [STAMP_W-1:0] gray2bin")) + len("`endif")
    assert text.count("function [STAMP_W-1:0] gray2bin", start, end) == 2
    return text[start:end]


@pytest.mark.parametrize("text", ["synthesis", "simulation"])
@pytest.mark.parametrize("stamp_w", [16, 17, 24, 31, 32])
def test_two_clock_decode_is_gray_to_binary(stamp_w, text):
    # the core's decode (the group parities, then each bit) against bit i = XOR of the gray bits from i up,
    # read as Yosys synthesises it (SYNTHESIS defined) and as a simulator reads it (not defined); the
    # yowasp wrapper sees only paths under the checkout: the proof runs in a directory there
    work = ROOT / "build" / "proofs" / f"gray_decode_{stamp_w}_{text}"
    work.mkdir(parents=True, exist_ok=True)
    (work / "decode.v").write_text(f"""
module core_decode #(parameter STAMP_W = 24) (input [STAMP_W-1:0] g, output [STAMP_W-1:0] b);
{decode_functions()}
assign b = gray2bin(g, group_parity(g));
endmodule

module textbook_decode #(parameter STAMP_W = 24) (input [STAMP_W-1:0] g, output [STAMP_W-1:0] b);
genvar i;
for (i = 0; i < STAMP_W; i = i + 1) begin : bits
    assign b[i] = ^g[STAMP_W-1:i];
end
endmodule
""")
    read = "read_verilog" if text == "synthesis" else "read_verilog -nosynthesis"
    script = (f"{read} decode.v; chparam -set STAMP_W {stamp_w} core_decode textbook_decode; prep; "
              "miter -equiv -flatten -make_outputs core_decode textbook_decode miter; hierarchy -top miter; "
              "sat -verify -prove trigger 0 miter")
    result = subprocess.run(["yosys", "-q", "-p", script], cwd=work, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
