// SPDX-License-Identifier: BSD-2-Clause
// fpgatest_counters: a port's 64-bit event counters kept in RAM with one adder, latched atomically by snapshot.

`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * Each counter has a small pending register that collects its increments; one engine visits the
 * counters round-robin (one per clock) and adds the pending amount to the 64-bit value in RAM.
 * The caller sizes PENDING_W so that the wide counters' amounts of one round of N clocks fit (in
 * fpgatest_port: at most one record per two clocks, each amount below 2^14, so 18 bits). Counters
 * that only count events (not in WIDE_MASK) keep a 5-bit pending register: at most one event per
 * clock, N <= 31.
 *
 * ctl_snapshot freezes every pending amount at that clock edge (increments of that edge included);
 * the next round writes value + frozen into the readable bank, so the bank holds every counter as
 * of the same edge. With ctl_clear too, the live values restart from zero at that edge.
 * The counters in LATE_MASK are counted by an engine that works through a queue (the sequence
 * tracker): a snapshot reaches the end of that queue later than the other engines, and the engine
 * says so with ctl_snapshot_late. Those counters freeze at that edge instead (at ctl_snapshot's own
 * edge or any later one), so every counter still holds the same events: what came before the
 * snapshot's marker. A snapshot with ctl_clear freezes them all at once (the queue is dropped).
 * stat_busy is high from the snapshot until every counter is in the bank: the wait for
 * ctl_snapshot_late, then the round (N + 3 clocks; a late freeze may add N).
 */
module fpgatest_counters #(
    parameter N         = 22,
    parameter PENDING_W = 16,
    parameter [N-1:0] WIDE_MASK = 0,       // counters with PENDING_W-bit amounts; the others count by 1
    parameter [N-1:0] LATE_MASK = 0        // counters frozen at ctl_snapshot_late
) (
    input  wire                   clk,
    input  wire                   rst,

    input  wire [N-1:0]           inc_valid,
    input  wire [N*PENDING_W-1:0] inc_amount,

    input  wire                   ctl_snapshot,
    input  wire                   ctl_clear,
    input  wire                   ctl_round,         // ctl_snapshot || ctl_clear, from a flip-flop of its own
    input  wire                   ctl_snapshot_late, // the snapshot has reached the LATE_MASK counters' engine (pulse)

    // read port of the snapshot bank (one clock latency)
    input  wire [7:0]             rd_addr,
    output reg  [63:0]            rd_data,
    output wire                   stat_busy
);

initial if (N < 4 || N > 31) $error("fpgatest_counters: N out of range");

// pending amount width per counter: wide counters take any amount, event counters at most N per round
function [PENDING_W-1:0] limit(input integer index, input [PENDING_W-1:0] value);
    limit = WIDE_MASK[index] ? value : (value & {{(PENDING_W-5){1'b0}}, 5'h1F});
endfunction

localparam AW = $clog2(N);

// both banks in block RAM; a block RAM's output goes straight into a register before any logic
(* ram_style = "block" *)
reg  [63:0]          snap_mem [0:N-1];
reg  [PENDING_W-1:0] pending_reg [0:N-1];
reg  [PENDING_W-1:0] frozen_reg [0:N-1];
reg  [N-1:0]         round_todo_reg;     // counters not yet visited in the current round
reg                  latch_round_reg;    // the round writes the readable bank
reg                  clear_round_reg;    // the round restarts the live values
reg                  zero_round_reg;     // reset: both banks to zero
reg                  late_wait_reg;      // a snapshot waits for ctl_snapshot_late
reg  [AW-1:0]        idx_reg;            // the counter visited this clock ...
reg  [N-1:0]         visit_reg;          // ... and the same as one-hot


wire [PENDING_W-1:0] inc_of [0:N-1];
genvar g;
generate
    for (g = 0; g < N; g = g + 1) begin : inc_slices
        assign inc_of[g] = inc_valid[g] ? inc_amount[g*PENDING_W +: PENDING_W] : {PENDING_W{1'b0}};
    end
endgenerate

// a round starts at a snapshot or a clear; the caller registers their OR once (ctl_round), so that
// one flip-flop, not the OR, drives the reset of every pending register
wire                 new_round = ctl_round;
// the counters whose pending amounts freeze at this edge (none but at a round's start or a late freeze)
wire [N-1:0]         freeze = (new_round ? (ctl_clear ? {N{1'b1}} : ~LATE_MASK) : {N{1'b0}})
                            | (ctl_snapshot_late ? LATE_MASK : {N{1'b0}});
// the counter visited at this edge freezes: its visit is skipped (its pending amount is moving)
wire                 visit_frozen = |(visit_reg & freeze);
wire [AW-1:0]        idx_next = idx_reg == N - 1 ? {AW{1'b0}} : idx_reg + 1'b1;

// the visited counter's amount: frozen during its round, else pending (an AND-OR over one-hot visit)
reg  [PENDING_W-1:0] visit_amount;
integer k;
always @* begin
    visit_amount = {PENDING_W{1'b0}};
    for (k = 0; k < N; k = k + 1)
        if (visit_reg[k])
            visit_amount = visit_amount | (round_todo_reg[k] ? frozen_reg[k] : pending_reg[k]);
end
wire                 in_round = |(visit_reg & round_todo_reg);

// the engine in four clocks: take (amount, read the value), hold (the value leaves block RAM),
// add, write
reg  [AW-1:0]        idx1_reg, idx2_reg;
reg                  t1_valid_reg, t1_round_reg, t1_latch_reg, t1_clear_reg, t1_zero_reg;
reg                  t2_valid_reg, t2_round_reg, t2_latch_reg, t2_clear_reg, t2_zero_reg;
reg  [PENDING_W-1:0] t1_amount_reg, t2_amount_reg;
wire [63:0]          value;              // live value of counter idx2 (read at idx two clocks ago)
reg  [AW-1:0]        idx3_reg;
reg                  t3_valid_reg, t3_round_reg, t3_latch_reg, t3_clear_reg, t3_zero_reg;
reg  [63:0]          total_reg;
wire                 live_we = t3_valid_reg;
wire [63:0]          live_wdata = t3_round_reg && t3_clear_reg ? 64'd0 : total_reg;

fpgatest_bram #(.WIDTH(64), .DEPTH_LOG2(AW)) live_mem (
    .clk(clk), .we(live_we), .waddr(idx3_reg), .wdata(live_wdata), .raddr(idx_reg), .rdata(value));

assign stat_busy = late_wait_reg || round_todo_reg != 0 || (t1_valid_reg && t1_round_reg)
                 || (t2_valid_reg && t2_round_reg) || (t3_valid_reg && t3_round_reg);

integer i;
always @(posedge clk) begin
    // collect increments; a frozen counter's pending amount as of this edge
    for (i = 0; i < N; i = i + 1) begin
        if (freeze[i]) begin
            frozen_reg[i] <= limit(i, pending_reg[i] + inc_of[i]);
            pending_reg[i] <= {PENDING_W{1'b0}};
        end else if (visit_reg[i] && !round_todo_reg[i]) begin
            pending_reg[i] <= limit(i, inc_of[i]);
        end else begin
            pending_reg[i] <= limit(i, pending_reg[i] + inc_of[i]);
        end
    end

    // take (nothing when the visited counter freezes at this edge)
    t1_valid_reg <= !visit_frozen;
    idx1_reg <= idx_reg;
    t1_amount_reg <= visit_amount;
    t1_round_reg <= in_round;
    t1_latch_reg <= latch_round_reg;
    t1_clear_reg <= clear_round_reg || zero_round_reg;
    t1_zero_reg <= zero_round_reg;
    if (!visit_frozen)
        round_todo_reg <= round_todo_reg & ~visit_reg;

    // hold (the value leaves block RAM)
    {t2_valid_reg, t2_round_reg, t2_latch_reg, t2_clear_reg, t2_zero_reg} <=
        {t1_valid_reg, t1_round_reg, t1_latch_reg, t1_clear_reg, t1_zero_reg};
    idx2_reg <= idx1_reg;
    t2_amount_reg <= t1_amount_reg;

    // add, then write (a counter comes round again N >= 4 clocks later, after its write)
    total_reg <= value + {{(64-PENDING_W){1'b0}}, t2_amount_reg};
    {t3_valid_reg, t3_round_reg, t3_latch_reg, t3_clear_reg, t3_zero_reg} <=
        {t2_valid_reg, t2_round_reg, t2_latch_reg, t2_clear_reg, t2_zero_reg};
    idx3_reg <= idx2_reg;

    // write
    if (t3_valid_reg && t3_round_reg && t3_latch_reg)
        snap_mem[idx3_reg] <= t3_zero_reg ? 64'd0 : total_reg;

    // a late freeze joins the round of its snapshot (the next snapshot or clear waits for stat_busy)
    if (ctl_snapshot_late) begin
        round_todo_reg <= (visit_frozen ? round_todo_reg : round_todo_reg & ~visit_reg) | LATE_MASK;
        late_wait_reg <= 1'b0;
    end
    if (new_round) begin
        round_todo_reg <= freeze;
        latch_round_reg <= ctl_snapshot;
        clear_round_reg <= ctl_clear;
        zero_round_reg <= 1'b0;
        late_wait_reg <= ctl_snapshot && !ctl_clear && !ctl_snapshot_late && LATE_MASK != 0;
    end

    idx_reg <= idx_next;
    for (i = 0; i < N; i = i + 1)
        visit_reg[i] <= idx_next == i;
    rd_data <= snap_mem[rd_addr[AW-1:0]];

    if (rst) begin
        round_todo_reg <= {N{1'b1}};
        latch_round_reg <= 1'b1;
        clear_round_reg <= 1'b1;
        zero_round_reg <= 1'b1;
        late_wait_reg <= 1'b0;
        idx_reg <= {AW{1'b0}};
        visit_reg <= {{(N-1){1'b0}}, 1'b1};     // (decoded from idx_reg: right even without a reset)
        t1_valid_reg <= 1'b0;
        t2_valid_reg <= 1'b0;
        t3_valid_reg <= 1'b0;
        for (i = 0; i < N; i = i + 1)
            pending_reg[i] <= {PENDING_W{1'b0}};
    end
end

// clear without snapshot: zero the live bank the same way (a round with nothing latched)
initial begin
    for (i = 0; i < N; i = i + 1) begin
        snap_mem[i] = 64'd0;
        pending_reg[i] = {PENDING_W{1'b0}};
        frozen_reg[i] = {PENDING_W{1'b0}};
    end
end

endmodule

`resetall
