// SPDX-License-Identifier: BSD-2-Clause
// dut_run_clock: a model's clock that runs while the model has work and stands still otherwise.

`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * run_clk is clk while run was high at clk's last falling edge, and low otherwise. Verilator evaluates
 * a clock's logic only on that clock's edges, so a model clocked by run_clk costs the twin nothing
 * while it stands still. run is taken on the falling edge, as a clock gate's latch takes its enable:
 * run_reg changes only while clk is low, so run_clk has no glitch and its rising edges are clk's.
 *
 * The model says when it must run (on, in reset, or still with work) and shows that at rest a clock
 * would change nothing that anyone reads but its own tick count, which only meets times taken from
 * itself: it then starts again as if it had run on. Twin only (sim/models): the board's gateware
 * has no gated clocks.
 */
module dut_run_clock (
    input  wire clk,
    input  wire run,
    output wire run_clk
);

reg run_reg;
always @(negedge clk)
    run_reg <= run;
assign run_clk = clk & run_reg;

endmodule

`resetall
