// SPDX-License-Identifier: BSD-2-Clause
// fpgatest_counters: a port's 64-bit event counters kept in RAM with one adder, latched atomically by snapshot.

`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * Each counter has a small pending register that collects its increments; one engine visits the
 * counters round-robin (one per clock) and adds the pending amount to the 64-bit value in RAM.
 * An increment of any counter comes at most once per frame (>= 64 clocks apart) or, for the
 * sequence tracker, in bursts of at most its 64-entry queue, so PENDING_W = 16 bits never overflow
 * in one round of N clocks (the largest amount is a 16383-byte frame). Counters that only count
 * events (not in WIDE_MASK) keep a 5-bit pending register: at most one event per clock, N <= 31.
 *
 * ctl_snapshot freezes every pending amount at that clock edge (increments of that edge included);
 * the next round writes value + frozen into the readable bank, so the bank holds every counter as
 * of the same edge. With ctl_clear too, the live values restart from zero at that edge.
 * stat_busy is high while the round runs (N clocks).
 */
module fpgatest_counters #(
    parameter N         = 22,
    parameter PENDING_W = 16,
    parameter [N-1:0] WIDE_MASK = 0        // counters with PENDING_W-bit amounts; the others count by 1
) (
    input  wire                   clk,
    input  wire                   rst,

    input  wire [N-1:0]           inc_valid,
    input  wire [N*PENDING_W-1:0] inc_amount,

    input  wire                   ctl_snapshot,
    input  wire                   ctl_clear,

    // read port of the snapshot bank (one clock latency)
    input  wire [7:0]             rd_addr,
    output reg  [63:0]            rd_data,
    output wire                   stat_busy
);

initial if (N < 2 || N > 31) $error("fpgatest_counters: N out of range");

// pending amount width per counter: wide counters take any amount, event counters at most N per round
function [PENDING_W-1:0] limit(input integer index, input [PENDING_W-1:0] value);
    limit = WIDE_MASK[index] ? value : (value & {{(PENDING_W-5){1'b0}}, 5'h1F});
endfunction

localparam AW = $clog2(N);

reg  [63:0]          live_mem [0:N-1];
reg  [63:0]          snap_mem [0:N-1];
reg  [PENDING_W-1:0] pending_reg [0:N-1];
reg  [PENDING_W-1:0] frozen_reg [0:N-1];
reg  [N-1:0]         round_todo_reg;     // counters not yet visited in the current round
reg                  latch_round_reg;    // the round writes the readable bank
reg                  clear_round_reg;    // the round restarts the live values
reg                  zero_round_reg;     // reset: both banks to zero
reg  [AW-1:0]        idx_reg;


wire [PENDING_W-1:0] inc_of [0:N-1];
genvar g;
generate
    for (g = 0; g < N; g = g + 1) begin : inc_slices
        assign inc_of[g] = inc_valid[g] ? inc_amount[g*PENDING_W +: PENDING_W] : {PENDING_W{1'b0}};
    end
endgenerate

wire                 new_round = ctl_snapshot || ctl_clear;
wire                 in_round = round_todo_reg[idx_reg];

// the engine in two clocks: take (read value and amount) at idx, then add and write at idx1
reg  [AW-1:0]        idx1_reg;
reg                  take_valid_reg, take_round_reg, take_latch_reg, take_clear_reg, take_zero_reg;
reg  [63:0]          take_value_reg;
reg  [PENDING_W-1:0] take_amount_reg;
wire [63:0]          total = take_value_reg + {{(64-PENDING_W){1'b0}}, take_amount_reg};

assign stat_busy = round_todo_reg != 0 || (take_valid_reg && take_round_reg);

integer i;
always @(posedge clk) begin
    // collect increments; at a new round every pending amount is frozen as of this edge
    for (i = 0; i < N; i = i + 1) begin
        if (new_round) begin
            frozen_reg[i] <= limit(i, pending_reg[i] + inc_of[i]);
            pending_reg[i] <= {PENDING_W{1'b0}};
        end else if (i == idx_reg && !in_round) begin
            pending_reg[i] <= limit(i, inc_of[i]);
        end else begin
            pending_reg[i] <= limit(i, pending_reg[i] + inc_of[i]);
        end
    end

    // take (nothing at the edge that starts a round)
    take_valid_reg <= !new_round;
    idx1_reg <= idx_reg;
    take_value_reg <= live_mem[idx_reg];
    take_amount_reg <= in_round ? frozen_reg[idx_reg] : pending_reg[idx_reg];
    take_round_reg <= in_round;
    take_latch_reg <= latch_round_reg;
    take_clear_reg <= clear_round_reg || zero_round_reg;
    take_zero_reg <= zero_round_reg;
    if (!new_round && in_round)
        round_todo_reg[idx_reg] <= 1'b0;

    // add and write
    if (take_valid_reg) begin
        if (take_round_reg) begin
            if (take_latch_reg)
                snap_mem[idx1_reg] <= take_zero_reg ? 64'd0 : total;
            live_mem[idx1_reg] <= take_clear_reg ? 64'd0 : total;
        end else begin
            live_mem[idx1_reg] <= total;
        end
    end

    if (new_round) begin
        round_todo_reg <= {N{1'b1}};
        latch_round_reg <= ctl_snapshot;
        clear_round_reg <= ctl_clear;
        zero_round_reg <= 1'b0;
    end

    idx_reg <= idx_reg == N - 1 ? {AW{1'b0}} : idx_reg + 1'b1;
    rd_data <= snap_mem[rd_addr[AW-1:0]];

    if (rst) begin
        round_todo_reg <= {N{1'b1}};
        latch_round_reg <= 1'b1;
        clear_round_reg <= 1'b1;
        zero_round_reg <= 1'b1;
        idx_reg <= {AW{1'b0}};
        take_valid_reg <= 1'b0;
        for (i = 0; i < N; i = i + 1)
            pending_reg[i] <= {PENDING_W{1'b0}};
    end
end

// clear without snapshot: zero the live bank the same way (a round with nothing latched)
initial begin
    for (i = 0; i < N; i = i + 1) begin
        live_mem[i] = 64'd0;
        snap_mem[i] = 64'd0;
        pending_reg[i] = {PENDING_W{1'b0}};
        frozen_reg[i] = {PENDING_W{1'b0}};
    end
end

endmodule

`resetall
