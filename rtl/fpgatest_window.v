// SPDX-License-Identifier: BSD-2-Clause
// fpgatest_window: at most a window of frames without a reply (fixed, or Reno-like), for echo runs.

`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * The generator sends sequence numbers seq_next, seq_next + 1, ...; the port's checker reports the
 * sequence number of every test frame that comes back (an echo reply, res_*). Replies acknowledge
 * cumulatively, as TCP's acks do: ack_next is one past the highest sequence number answered, and
 *   in flight = seq_next - ack_next,   win_open = in flight < cwnd   (mode 0: always open).
 * A reply that skips sequence numbers takes the skipped ones as lost (a reordered reply looks the
 * same: Treno's reading too). A reply for a number not in flight (older, or of another run) is
 * ignored. When no reply moves ack_next for cfg_timeout ticks while frames are in flight, every
 * frame in flight is taken as lost (0 = never; modes 1 and 2 only); a reply already in the reply
 * pipeline then is for one of those frames, so it is dropped there (it is no longer in flight).
 *   mode 1 fixed: cwnd = cfg_size.
 *   mode 2 Reno:  cwnd starts at cfg_size, ssthresh at cfg_max. A reply in order adds one frame while
 *                 cwnd < ssthresh (slow start), else one frame per cwnd replies (additive increase,
 *                 one per round trip); cwnd never exceeds cfg_max. A loss halves it
 *                 (ssthresh = cwnd = max(cwnd / 2, 2)) once per window: losses of frames sent
 *                 before the last cut do not cut again (NewReno's recovery point). A timeout sets
 *                 ssthresh = max(cwnd / 2, 2) and cwnd = 1.
 * Everything here runs in the tester clock with the generator and the checker. Replies come at
 * least 84 clocks apart (one frame on the wire), so a reply's update is the only one in its
 * three-stage pipeline's time but for a timeout or a run's start, which empty the pipeline: the
 * state a reply's stage 2 reads is the state its stage 3 updates, and stage 2 decides the update.
 * Every decision that updates the window's state comes from a flip-flop: the reply's (stage 2), the
 * timeout's (decided a clock ahead: the timer reaches cfg_timeout in the next clock unless it
 * restarts in this one) and the run's start (the generator's busy, registered: the window is reset
 * two clocks after the generator starts, long before its first frame, 125 clocks later).
 */
module fpgatest_window (
    input  wire         clk,
    input  wire         rst,

    input  wire [1:0]   cfg_mode,            // 0 off, 1 fixed window, 2 Reno-like window
    input  wire [15:0]  cfg_size,            // fixed window / Reno's first window, frames
    input  wire [15:0]  cfg_max,             // Reno's largest window and first ssthresh, frames
    input  wire [31:0]  cfg_timeout,         // ticks without progress before every frame in flight is lost (0 = never)
    input  wire [47:0]  cfg_seq_start,       // the generator's first sequence number (taken at start)

    input  wire         tx_busy,             // the generator's run: state is reset when it starts
    input  wire [47:0]  tx_seq_next,         // the generator's next sequence number
    input  wire         res_valid,           // a test frame came back ...
    input  wire [47:0]  res_seq,             // ... with this sequence number
    input  wire         ctl_snapshot,        // latch the stat_* values

    output wire         win_open,            // the generator may start the next frame
    output wire         win_error,           // the settings cannot run: mode 3, a window of 0, or Reno with max < size
    output reg  [15:0]  stat_cwnd,           // window at the snapshot, frames
    output reg  [47:0]  stat_lost,           // frames taken as lost (skipped by a reply or timed out) at the snapshot
    output reg  [31:0]  stat_cuts,           // window cuts for a loss at the snapshot
    output reg  [31:0]  stat_timeouts        // timeouts at the snapshot
);

localparam [1:0] MODE_OFF = 2'd0, MODE_FIXED = 2'd1, MODE_RENO = 2'd2;

assign win_error = cfg_mode == 2'd3 || (cfg_mode != MODE_OFF && cfg_size == 16'd0)
                || (cfg_mode == MODE_RENO && cfg_max < cfg_size);

reg         busy_in, busy_q;
wire        run_start = busy_in && !busy_q;

reg  [47:0] ack_next_reg;            // one past the highest sequence number answered
reg  [47:0] in_flight_reg;
reg         idle_reg;                // in_flight_reg == 0
reg         open_reg;
reg  [15:0] cwnd_reg, ssthresh_reg, acc_reg;
reg  [47:0] recover_reg;             // losses of frames below this number were already answered with a cut
reg  [1:0]  mode_reg;
reg  [15:0] max_reg;
reg  [31:0] timer_reg;               // ticks since the last progress (0 while nothing is in flight)
reg  [31:0] timeout_m1_reg;          // cfg_timeout - 1
reg         timeout_on_reg;          // cfg_timeout != 0
reg         timed_out;               // timer_reg >= cfg_timeout in modes 1 and 2 (decided a clock ahead)
reg  [47:0] lost_reg;
reg  [31:0] cuts_reg, timeouts_reg;

assign win_open = open_reg;

// reply pipeline: 1 distance to ack_next and to the recovery point; 2 in flight? skipped? and
// Reno's decision on the state as it is (a cut, slow start, a step of additive increase); 3 update
reg         r1_valid, r2_valid, r2_new, r2_skip, r2_cut, r2_grow, r2_slow, r2_acc_full;
reg  [47:0] r1_dist, r1_recover_dist, r2_dist;
reg  [15:0] r2_half;

wire [15:0] half = cwnd_reg[15:1] < 16'd2 ? 16'd2 : {1'b0, cwnd_reg[15:1]};
wire        progress = r2_valid && r2_new;
wire        timer_restart = idle_reg || progress || timed_out || run_start;

always @(posedge clk) begin
    busy_in <= tx_busy;
    busy_q <= busy_in;
    in_flight_reg <= tx_seq_next - ack_next_reg;
    idle_reg <= tx_seq_next == ack_next_reg;
    open_reg <= mode_reg == MODE_OFF || (in_flight_reg[47:16] == 32'd0 && in_flight_reg[15:0] < cwnd_reg);

    r1_valid <= res_valid;
    r1_dist <= res_seq - ack_next_reg;
    r1_recover_dist <= res_seq - recover_reg;
    r2_valid <= r1_valid;
    r2_new <= r1_dist < in_flight_reg;
    r2_skip <= r1_dist != 48'd0;
    r2_cut <= mode_reg == MODE_RENO && !r1_recover_dist[47];    // a loss of a frame sent after the last cut
    r2_grow <= mode_reg == MODE_RENO && cwnd_reg < max_reg;
    r2_slow <= cwnd_reg < ssthresh_reg;
    r2_acc_full <= acc_reg + 16'd1 >= cwnd_reg;
    r2_half <= half;
    r2_dist <= r1_dist;

    // the timer restarts on progress, on a timeout, at the run's start and while nothing is in
    // flight; it times out in the next clock when it will reach cfg_timeout there
    timeout_m1_reg <= cfg_timeout - 32'd1;
    timeout_on_reg <= cfg_timeout != 32'd0;
    timer_reg <= timer_restart ? 32'd0 : timer_reg + 32'd1;
    timed_out <= !timer_restart && mode_reg != MODE_OFF && timeout_on_reg && timer_reg >= timeout_m1_reg;

    if (progress) begin
        // the reply answers frame ack_next + dist: that one arrived, the dist before it are lost
        ack_next_reg <= ack_next_reg + r2_dist + 48'd1;
        if (r2_skip) begin
            lost_reg <= lost_reg + r2_dist;
            if (r2_cut) begin
                ssthresh_reg <= r2_half;
                cwnd_reg <= r2_half;
                acc_reg <= 16'd0;
                recover_reg <= tx_seq_next;
                cuts_reg <= cuts_reg + 32'd1;
            end
        end else if (r2_grow) begin
            if (r2_slow) begin
                cwnd_reg <= cwnd_reg + 16'd1;
            end else if (r2_acc_full) begin
                cwnd_reg <= cwnd_reg + 16'd1;
                acc_reg <= 16'd0;
            end else begin
                acc_reg <= acc_reg + 16'd1;
            end
        end
    end else if (timed_out) begin
        ack_next_reg <= ack_next_reg + in_flight_reg;
        lost_reg <= lost_reg + in_flight_reg;
        timeouts_reg <= timeouts_reg + 32'd1;
        r1_valid <= 1'b0;
        r2_valid <= 1'b0;
        if (mode_reg == MODE_RENO) begin
            ssthresh_reg <= half;
            cwnd_reg <= 16'd1;
            acc_reg <= 16'd0;
            recover_reg <= tx_seq_next;
        end
    end

    if (run_start) begin
        mode_reg <= cfg_mode;
        max_reg <= cfg_max;
        ack_next_reg <= cfg_seq_start;
        recover_reg <= cfg_seq_start;
        cwnd_reg <= cfg_size;
        ssthresh_reg <= cfg_mode == MODE_RENO ? cfg_max : cfg_size;
        acc_reg <= 16'd0;
        lost_reg <= 48'd0;
        cuts_reg <= 32'd0;
        timeouts_reg <= 32'd0;
        r1_valid <= 1'b0;
        r2_valid <= 1'b0;
        open_reg <= 1'b0;
    end

    if (ctl_snapshot) begin
        stat_cwnd <= cwnd_reg;
        stat_lost <= lost_reg;
        stat_cuts <= cuts_reg;
        stat_timeouts <= timeouts_reg;
    end

    if (rst) begin
        busy_in <= 1'b0;
        busy_q <= 1'b0;
        mode_reg <= MODE_OFF;
        open_reg <= 1'b1;
        ack_next_reg <= 48'd0;
        cwnd_reg <= 16'd0;
        timer_reg <= 32'd0;
        timed_out <= 1'b0;
        lost_reg <= 48'd0;
        cuts_reg <= 32'd0;
        timeouts_reg <= 32'd0;
        r1_valid <= 1'b0;
        r2_valid <= 1'b0;
        stat_cwnd <= 16'd0;
        stat_lost <= 48'd0;
        stat_cuts <= 32'd0;
        stat_timeouts <= 32'd0;
    end
end

endmodule

`resetall
