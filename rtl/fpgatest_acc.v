// SPDX-License-Identifier: BSD-2-Clause
// fpgatest_acc: a wide accumulator split in two carry chains, with snapshot and clear at one edge.

`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * The inputs are registered first (amount, snapshot and clear alike, so they stay in step). The low
 * L bits add the amount; their carry reaches the high bits one clock later, so no clock holds a carry
 * chain longer than max(L, W - L) bits. ctl_snapshot latches the total including the amount added at
 * that edge (stat is complete two clocks after the snapshot edge); ctl_clear at the same edge starts
 * the next interval from zero.
 */
module fpgatest_acc #(
    parameter W = 128,
    parameter L = 64
) (
    input  wire         clk,
    input  wire         rst,
    input  wire         add,
    input  wire [L-1:0] amount,
    input  wire         ctl_snapshot,
    input  wire         ctl_clear,
    output reg  [W-1:0] stat
);

reg  [L-1:0]   lo_reg;
reg  [W-L-1:0] hi_reg;
reg            carry_reg, snap_d_reg, clear_d_reg;
reg  [L-1:0]   amount_reg;
reg            snap_reg, clear_reg;
wire [L:0]     lo_sum = {1'b0, lo_reg} + {1'b0, amount_reg};
wire [W-L-1:0] hi_sum = hi_reg + {{(W-L-1){1'b0}}, carry_reg};

always @(posedge clk) begin
    amount_reg <= add ? amount : {L{1'b0}};
    snap_reg <= ctl_snapshot;
    clear_reg <= ctl_clear;
    carry_reg <= lo_sum[L];
    lo_reg <= clear_reg ? {L{1'b0}} : lo_sum[L-1:0];
    snap_d_reg <= snap_reg;
    clear_d_reg <= clear_reg;
    hi_reg <= clear_d_reg ? {(W-L){1'b0}} : hi_sum;
    if (snap_reg)
        stat[L-1:0] <= lo_sum[L-1:0];
    if (snap_d_reg)
        stat[W-1:L] <= hi_sum;
    if (rst) begin
        lo_reg <= {L{1'b0}};
        hi_reg <= {(W-L){1'b0}};
        carry_reg <= 1'b0;
        amount_reg <= {L{1'b0}};
        snap_reg <= 1'b0;
        clear_reg <= 1'b0;
        snap_d_reg <= 1'b0;
        clear_d_reg <= 1'b0;
        stat <= {W{1'b0}};
    end
end

endmodule

`resetall
