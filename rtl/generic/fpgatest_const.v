// SPDX-License-Identifier: BSD-2-Clause
// fpgatest_const (generic): a constant.

`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * q = VALUE, always: the behaviour of rtl/ecp5/fpgatest_const.v, which holds the value in
 * flip-flop settings so that the board's netlist does not depend on it.
 */
module fpgatest_const #(
    parameter WIDTH = 32,
    parameter [WIDTH-1:0] VALUE = 0
) (
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire             clk,      // unused: the ECP5 version's flip-flops
    /* verilator lint_on UNUSEDSIGNAL */
    output wire [WIDTH-1:0] q
);

assign q = VALUE;

endmodule

`resetall
