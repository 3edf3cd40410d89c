// SPDX-License-Identifier: BSD-2-Clause
// fpgatest_const (ECP5): a constant held in flip-flops, one per bit, that synthesis cannot see through.

`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * q = VALUE, always. Each bit is a TRELLIS_FF that feeds its own output back and starts from its
 * REGSET (set at configuration), so the value lives in the flip-flops' settings and not in logic:
 * the netlist is the same for every VALUE. The gateware's identity (a hash of its sources) is such a
 * constant: as logic it would change what Yosys builds and where nextpnr puts it with every edit to
 * any source, features the board does not carry included, and the board's timing with it. Held
 * here, a change that leaves the board's logic alone leaves its placement, routing and timing alone.
 * rtl/generic/fpgatest_const.v is the same behaviour in plain Verilog (Verilator, other targets).
 */
module fpgatest_const #(
    parameter WIDTH = 32,
    parameter [WIDTH-1:0] VALUE = 0
) (
    input  wire             clk,
    output wire [WIDTH-1:0] q
);

genvar g;
generate
    for (g = 0; g < WIDTH; g = g + 1) begin : bits
        TRELLIS_FF #(
            .GSR("ENABLED"), .CEMUX("1"), .CLKMUX("CLK"), .LSRMUX("LSR"),
            .REGSET(VALUE[g] ? "SET" : "RESET")
        ) ff (
            .CLK(clk), .LSR(1'b0), .CE(1'b1), .DI(q[g]), .Q(q[g])
        );
    end
endgenerate

endmodule

`resetall
