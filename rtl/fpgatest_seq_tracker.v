// SPDX-License-Identifier: BSD-2-Clause
// fpgatest_seq_tracker: exact per-stream accounting of received, lost, late (reordered), duplicate and stale sequence numbers, with a loss-event FIFO.

`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * A window of WINDOW sequence numbers [oldest, oldest + WINDOW) is kept as a bitmap (1 = seen).
 * `highest` is the largest sequence number seen + 1. For an arriving s (48-bit, modular):
 *   s >= highest, inside the window    -> received (new), highest = s + 1
 *   oldest <= s < highest, bit clear   -> received, late (reordered)
 *   oldest <= s < highest, bit set     -> duplicate
 *   s < oldest                         -> stale (too late to tell lost from duplicate)
 *   s beyond the window                -> the window slides first: every retired sequence number
 *                                         whose bit is clear is lost; runs of them are pushed to the
 *                                         event FIFO as (first lost seq, run length).
 * Retirement is lazy (only when the slot is needed) and ctl_flush retires everything below
 * `highest`, e.g. after the stream ends. Whole 32-bit words retire in one clock when all-0 or all-1.
 *
 * ctl_snapshot is a barrier in the input queue: the numbers queued before it are worked through
 * (and a flush asked for before it), then the stat_* snapshot is taken and cnt_snapshot pulses, so
 * that fpgatest_counters freezes the cnt_* counts at the same point (its ctl_snapshot_late); the
 * numbers after it wait meanwhile. A number offered at the snapshot's clock comes after it. One
 * snapshot at a time: a second one before cnt_snapshot is ignored (fpgatest_port sends none: a
 * marker waits for the counters' stat_busy, which covers the wait). With ctl_clear the snapshot is
 * taken at once (the queue is dropped) and cnt_snapshot stays low.
 */
module fpgatest_seq_tracker #(
    parameter WINDOW_LOG2 = 10,
    parameter EVENT_DEPTH_LOG2 = 8
) (
    input  wire         clk,
    input  wire         rst,

    // sequence numbers of test frames
    input  wire         in_valid,
    output wire         in_ready,            // the input queue has room (a number offered while low is dropped)
    input  wire [47:0]  in_seq,

    // control
    input  wire         ctl_snapshot,        // latch counters (pulse)
    input  wire         ctl_clear,           // forget everything (pulse)
    input  wire         ctl_flush,           // retire the whole window: pending gaps become lost (pulse)
    input  wire         ctl_event_pop,       // move the oldest loss event to stat_event_* (pulse)

    // status (snapshot)
    output reg  [63:0]  stat_lost,           // retired without being received
    output reg  [47:0]  stat_first_seq,      // first sequence number seen
    output reg  [47:0]  stat_highest_seq,    // highest sequence number seen + 1
    output reg  [47:0]  stat_oldest_seq,     // lowest sequence number still in the window
    output reg          stat_started,        // a sequence number has been seen
    output wire         stat_busy,           // work queued (flush, input or a snapshot not yet done)

    // loss events
    output reg          stat_event_valid,    // the last pop returned an event
    output reg  [47:0]  stat_event_first,    // loss event: first lost sequence number
    output reg  [31:0]  stat_event_length,   // loss event: consecutive numbers lost
    output reg  [15:0]  stat_event_level,    // loss events waiting

    // events for fpgatest_counters
    output reg          cnt_received,        // a distinct sequence number was received
    output reg          cnt_late,            // ... after a higher one (reordered)
    output reg          cnt_duplicate,       // a number was received again inside the window
    output reg          cnt_stale,           // a number older than the window arrived
    output reg          cnt_input_dropped,   // the input queue was full
    output reg          cnt_event_dropped,   // the event FIFO was full
    output reg          cnt_snapshot         // the snapshot is taken: every cnt_* before it has been given
);

initial if (WINDOW_LOG2 < 6 || WINDOW_LOG2 > 15) $error("fpgatest_seq_tracker: WINDOW_LOG2 out of range");

localparam        WORDS  = 1 << (WINDOW_LOG2 - 5);
localparam [47:0] WINDOW = 48'd1 << WINDOW_LOG2;

// ---------------------------------------------------------------------------------------------
// input queue (block RAM; its output is registered twice, so the head is known two clocks after
// the read pointer or the write settle)
// ---------------------------------------------------------------------------------------------
reg  [6:0]  in_wr_reg, in_rd_reg;
reg  [6:0]  in_wr_d1_reg, in_wr_d2_reg;  // the write pointer as the head register sees it
reg  [1:0]  in_rd_age_reg;               // clocks since the read pointer moved (saturates at 2)
wire [47:0] head_reg;                    // in_mem[in_rd] as of two clocks ago
wire        in_empty = in_wr_reg == in_rd_reg;
// full, exactly, with no pop logic in front of the queue's write enable: in_fill_reg says the queue
// held 64 after the last edge's push, in_popped_reg that the same edge popped (a pop of a full queue
// leaves 63)
reg         in_fill_reg, in_popped_reg;
wire        in_full = in_fill_reg && !in_popped_reg;
assign      in_ready = !in_full;
wire [6:0]  in_level = in_wr_reg - in_rd_reg;
// the snapshot's barrier: the queue's write pointer when it came (the first number after it)
reg         mark_reg;
reg  [6:0]  mark_at_reg;
wire        at_mark = mark_reg && in_rd_reg == mark_at_reg;
wire        head_ready = in_rd_age_reg == 2'd2;                  // head_reg shows slot in_rd
wire        head_valid = head_ready && in_wr_d2_reg != in_rd_reg  // ... and that slot was written
                      && !at_mark;                              // ... before any barrier
reg         in_pop;

fpgatest_bram #(.WIDTH(48), .DEPTH_LOG2(6)) in_mem (
    .clk(clk), .we(in_valid && !in_full), .waddr(in_wr_reg[5:0]), .wdata(in_seq),
    .raddr(in_rd_reg[5:0]), .rdata(head_reg));

// ---------------------------------------------------------------------------------------------
// window state
// ---------------------------------------------------------------------------------------------
// the bitmap in block RAM, one copy per read port (head word, oldest word); the words read with
// the addresses of P_GATHER are there in P_DECIDE
// the write is registered: worked out in P_PLAN, done in P_ACT; the clear's one clock behind its count
reg         bm_we;
reg  [WINDOW_LOG2-6:0] bm_waddr;
reg  [31:0] bm_wdata;
wire [31:0] head_word_val, old_word_val;
reg  [47:0] oldest_reg, highest_reg, first_reg;
reg         started_reg;
reg  [63:0] lost_reg;
reg         flush_req_reg;
reg         run_open_reg;
reg  [47:0] run_first_reg;
reg  [31:0] run_len_reg;

localparam [1:0] T_RUN = 2'd0, T_CLEAR = 2'd1;
reg  [1:0]  t_state_reg;
reg  [WINDOW_LOG2-5:0] clear_idx_reg;


// Each step takes five clocks so that no clock holds more than one 48-bit carry chain and every
// block RAM output is registered before logic:
//   P_GATHER registers the head, its distances to the window (the bitmap words are being read),
//   P_HOLD registers the decisions on distances (the words leave the block RAMs),
//   P_DECIDE registers the decisions on the words, P_PLAN how far the window moves,
//   P_ACT changes the state (the only phase that does).
localparam [2:0] P_GATHER = 3'd0, P_HOLD = 3'd1, P_DECIDE = 3'd2, P_PLAN = 3'd3, P_ACT = 3'd4;
reg  [2:0]  phase_reg;


reg  [47:0] h_reg, d_old_reg, d_old_m_reg, d_high_reg, to_highest_reg;
reg  [47:0] oldest_w_reg;          // oldest_reg + WINDOW - 1, kept in step with it
reg         have_head_reg;

wire [WINDOW_LOG2-6:0] head_word = h_reg[WINDOW_LOG2-1:5];
wire [4:0]  head_bit = h_reg[4:0];
wire [WINDOW_LOG2-6:0] old_word = oldest_reg[WINDOW_LOG2-1:5];
wire [4:0]  old_bit = oldest_reg[4:0];

// decisions on distances (P_HOLD)
reg         head_stale_reg, head_new_reg, need_slide_reg, flushing_reg, window_empty_reg, flush_close_reg;
reg  [47:0] to_target_reg;
reg         to_target_ge32_reg, to_highest_ge32_reg;
reg  [47:0] h_p1_reg, h_w_reg;     // h + 1, h + WINDOW - 1

wire        head_stale = d_old_reg[47];
wire        head_inside = !d_old_reg[47] && d_old_reg[47:WINDOW_LOG2] == 0;
// a far-ahead head needs oldest = head - WINDOW + 1; an idle flush needs oldest = highest
wire        need_slide = started_reg && have_head_reg && !head_stale && !head_inside;
wire        flushing = started_reg && !have_head_reg && flush_req_reg && to_highest_reg != 48'd0;

// decisions on the words (P_DECIDE)
reg         head_seen_reg, old_seen_reg, whole_word_reg, old_zero_reg, old_ones_reg;
reg         lose_whole_reg, keep_whole_reg;   // (P_PLAN)
reg  [31:0] old_cleared_reg, head_marked_reg;   // the bitmap words to write
reg  [47:0] adv_reg;               // how far oldest moves when the window slides
wire        old_zero = old_word_val == 32'd0;
wire        old_ones = old_word_val == 32'hFFFFFFFF;
wire        whole_word = old_bit == 5'd0 && to_target_ge32_reg && to_highest_ge32_reg;

// event FIFO
localparam EA = EVENT_DEPTH_LOG2;
reg  [79:0] ev_mem [0:(1<<EA)-1];
reg  [EA:0] ev_wr_reg, ev_rd_reg;
wire [EA:0] ev_level = ev_wr_reg - ev_rd_reg;
reg         ev_push;
reg  [79:0] ev_data;
reg         ev_push_q;            // the event is written one clock after the step that closed it
reg         ev_full_reg, ev_nonempty_reg, ev_popped_reg;
wire        ev_can_pop = ev_nonempty_reg && !ev_popped_reg;
reg  [79:0] ev_data_q;

reg         lose_en;               // this clock retires lose_n never-seen numbers from oldest
reg  [47:0] lose_n;
reg         lose_en_q;
reg  [47:0] lose_n_q, lose_at_q;
reg         lose_en_q2;
reg  [47:0] run_sum_reg;           // the open run's length plus the numbers just retired
wire [47:0] oldest_adv = oldest_reg + adv_reg;
wire [47:0] oldest_w_adv = oldest_w_reg + adv_reg;

fpgatest_bram #(.WIDTH(32), .DEPTH_LOG2(WINDOW_LOG2-5)) bitmap_head (
    .clk(clk), .we(bm_we), .waddr(bm_waddr), .wdata(bm_wdata),
    .raddr(head_reg[WINDOW_LOG2-1:5]), .rdata(head_word_val));
fpgatest_bram #(.WIDTH(32), .DEPTH_LOG2(WINDOW_LOG2-5)) bitmap_old (
    .clk(clk), .we(bm_we), .waddr(bm_waddr), .wdata(bm_wdata),
    .raddr(old_word), .rdata(old_word_val));

// the work before the barrier is done: the step that took the last number before it has acted, its
// retired numbers are counted and its loss event written; a flush asked for before it has finished
wire        mark_done = at_mark && !flush_req_reg && t_state_reg == T_RUN && phase_reg == P_GATHER
                     && !lose_en_q && !lose_en_q2 && !ev_push_q;

assign stat_busy = !in_empty || mark_reg || flush_req_reg || t_state_reg != T_RUN || phase_reg != P_GATHER
                 || lose_en_q || lose_en_q2 || ev_push_q;

always @(posedge clk) begin
    in_pop = 1'b0;
    ev_push = 1'b0;
    bm_we <= 1'b0;
    cnt_received <= 1'b0;
    cnt_late <= 1'b0;
    cnt_duplicate <= 1'b0;
    cnt_stale <= 1'b0;
    cnt_input_dropped <= 1'b0;
    cnt_event_dropped <= 1'b0;
    cnt_snapshot <= 1'b0;
    lose_en = 1'b0;
    lose_n = adv_reg;
    ev_data = {run_first_reg, run_len_reg};

    if (in_valid) begin
        if (in_full) begin
            cnt_input_dropped <= 1'b1;
        end else begin
            in_wr_reg <= in_wr_reg + 7'd1;
        end
    end
    in_wr_d1_reg <= in_wr_reg;
    in_wr_d2_reg <= in_wr_d1_reg;
    if (in_rd_age_reg != 2'd2)
        in_rd_age_reg <= in_rd_age_reg + 2'd1;
    if (ctl_flush)
        flush_req_reg <= 1'b1;

    case (t_state_reg)
        T_RUN: begin
            case (phase_reg)
                P_GATHER: begin
                    // wait for the head register after a pop; without a head only a flush has work
                    // (idle, the phases stand still, so stat_busy means work)
                    if (head_ready && (head_valid || flush_req_reg)) begin
                        have_head_reg <= head_valid;
                        h_reg <= head_reg;
                        d_old_reg <= head_reg - oldest_reg;
                        d_old_m_reg <= head_reg - oldest_w_reg;   // distance past the window's end
                        d_high_reg <= head_reg - highest_reg;
                        to_highest_reg <= highest_reg - oldest_reg;
                        phase_reg <= P_HOLD;
                    end
                end
                P_HOLD: begin
                    head_stale_reg <= head_stale;
                    head_new_reg <= !d_high_reg[47];
                    need_slide_reg <= need_slide;
                    flushing_reg <= flushing;
                    to_target_reg <= need_slide ? d_old_m_reg : to_highest_reg;
                    to_target_ge32_reg <= need_slide ? d_old_m_reg[47:5] != 0 : to_highest_reg[47:5] != 0;
                    to_highest_ge32_reg <= to_highest_reg[47:5] != 0;
                    window_empty_reg <= to_highest_reg == 48'd0;
                    flush_close_reg <= !have_head_reg && flush_req_reg && !flushing;
                    h_p1_reg <= h_reg + 48'd1;
                    h_w_reg <= h_reg + (WINDOW - 48'd1);
                    phase_reg <= P_DECIDE;
                end
                P_DECIDE: begin
                    head_seen_reg <= head_word_val[head_bit];
                    old_seen_reg <= old_word_val[old_bit];
                    whole_word_reg <= whole_word;
                    old_zero_reg <= old_zero;
                    old_ones_reg <= old_ones;
                    old_cleared_reg <= old_word_val & ~(32'd1 << old_bit);
                    head_marked_reg <= head_word_val | (32'd1 << head_bit);
                    phase_reg <= P_PLAN;
                end
                P_PLAN: begin
                    // the act's bitmap write: retire the oldest number, or mark the head's
                    if (need_slide_reg || flushing_reg) begin
                        bm_we <= !window_empty_reg && !(whole_word_reg && old_zero_reg);
                        bm_waddr <= old_word;
                        bm_wdata <= whole_word_reg && old_ones_reg ? 32'd0 : old_cleared_reg;
                    end else begin
                        bm_we <= have_head_reg && (!started_reg || (!head_stale_reg && (head_new_reg || !head_seen_reg)));
                        bm_waddr <= head_word;
                        bm_wdata <= head_marked_reg;
                    end
                    lose_whole_reg <= whole_word_reg && old_zero_reg;
                    keep_whole_reg <= whole_word_reg && old_ones_reg;
                    adv_reg <= window_empty_reg ? to_target_reg
                             : whole_word_reg && (old_zero_reg || old_ones_reg) ? 48'd32 : 48'd1;
                    phase_reg <= P_ACT;
                end
                default: begin
                    phase_reg <= P_GATHER;
                    if (need_slide_reg || flushing_reg) begin
                        // retire adv numbers from oldest
                        oldest_reg <= oldest_adv;
                        oldest_w_reg <= oldest_w_adv;
                        if (window_empty_reg) begin
                            // nothing pending in the window: everything up to the target was never seen
                            lose_en = 1'b1;
                            highest_reg <= oldest_adv;
                        end else if (lose_whole_reg) begin
                            lose_en = 1'b1;
                        end else if (keep_whole_reg) begin
                            ev_push = run_open_reg;
                            run_open_reg <= 1'b0;
                        end else begin
                            if (old_seen_reg) begin
                                ev_push = run_open_reg;
                                run_open_reg <= 1'b0;
                            end else begin
                                lose_en = 1'b1;
                            end
                        end
                    end else if (have_head_reg) begin
                        in_pop = 1'b1;
                        if (!started_reg) begin
                            started_reg <= 1'b1;
                            first_reg <= h_reg;
                            oldest_reg <= h_reg;
                            oldest_w_reg <= h_w_reg;
                            highest_reg <= h_p1_reg;
                            cnt_received <= 1'b1;
                        end else if (head_stale_reg) begin
                            cnt_stale <= 1'b1;
                        end else if (head_new_reg) begin
                            highest_reg <= h_p1_reg;
                            cnt_received <= 1'b1;
                        end else if (head_seen_reg) begin
                            cnt_duplicate <= 1'b1;
                        end else begin
                            cnt_late <= 1'b1;
                            cnt_received <= 1'b1;
                        end
                    end else if (flush_close_reg) begin
                        // window retired up to `highest`: close the open run
                        flush_req_reg <= 1'b0;
                        ev_push = run_open_reg;
                        run_open_reg <= 1'b0;
                    end
                end
            endcase
        end
        T_CLEAR: begin
            bm_we <= 1'b1;
            bm_waddr <= clear_idx_reg[WINDOW_LOG2-6:0];
            bm_wdata <= 32'd0;
            clear_idx_reg <= clear_idx_reg + 1'b1;
            if (clear_idx_reg == WORDS - 1)
                t_state_reg <= T_RUN;
        end
        default: t_state_reg <= T_RUN;
    endcase

    in_fill_reg <= in_valid && !in_full ? in_level == 7'd63 : in_level == 7'd64;
    in_popped_reg <= in_pop;
    if (in_pop) begin
        in_rd_reg <= in_rd_reg + 7'd1;
        in_rd_age_reg <= 2'd0;
    end

    // loss run bookkeeping in the two clocks after the step that retired the numbers (sum, then
    // the run length saturated at 2^32-1); the next step's act comes five clocks later and sees it
    lose_en_q <= lose_en;
    lose_n_q <= lose_n;
    lose_at_q <= oldest_reg;
    lose_en_q2 <= lose_en_q;
    if (lose_en_q) begin
        lost_reg <= lost_reg + {16'd0, lose_n_q};
        run_sum_reg <= (run_open_reg ? {16'd0, run_len_reg} : 48'd0) + lose_n_q;
        if (!run_open_reg) begin
            run_open_reg <= 1'b1;
            run_first_reg <= lose_at_q;
        end
    end
    if (lose_en_q2)
        run_len_reg <= run_sum_reg[47:32] != 16'd0 ? 32'hFFFFFFFF : run_sum_reg[31:0];

    ev_push_q <= ev_push;
    ev_data_q <= ev_data;
    // full / non-empty as of the last edge, corrected by a pop at it: pushes come a step (five
    // clocks) apart, so full is exact; a pop in the clock after a push or a pop reports no event
    ev_full_reg <= ev_level[EA];
    ev_nonempty_reg <= ev_level != 0;
    ev_popped_reg <= ctl_event_pop && ev_can_pop;
    if (ev_push_q) begin
        if (ev_full_reg && !ev_popped_reg) begin
            cnt_event_dropped <= 1'b1;
        end else begin
            ev_mem[ev_wr_reg[EA-1:0]] <= ev_data_q;
            ev_wr_reg <= ev_wr_reg + 1'b1;
        end
    end
    if (ctl_event_pop) begin
        stat_event_valid <= ev_can_pop;
        if (ev_can_pop) begin
            {stat_event_first, stat_event_length} <= ev_mem[ev_rd_reg[EA-1:0]];
            ev_rd_reg <= ev_rd_reg + 1'b1;
        end
    end
    stat_event_level <= ev_level;

    if (ctl_snapshot && !mark_reg && !ctl_clear) begin
        mark_reg <= 1'b1;
        mark_at_reg <= in_wr_reg;
    end
    if (mark_done || (ctl_snapshot && ctl_clear)) begin
        stat_lost <= lost_reg;
        stat_first_seq <= first_reg;
        stat_highest_seq <= highest_reg;
        stat_oldest_seq <= oldest_reg;
        stat_started <= started_reg;
    end
    if (mark_done) begin
        mark_reg <= 1'b0;
        cnt_snapshot <= 1'b1;
    end

    if (ctl_clear || rst) begin
        in_wr_reg <= 7'd0;
        in_rd_reg <= 7'd0;
        in_fill_reg <= 1'b0;
        in_popped_reg <= 1'b0;
        in_wr_d1_reg <= 7'd0;
        in_wr_d2_reg <= 7'd0;
        in_rd_age_reg <= 2'd0;
        mark_reg <= 1'b0;
        started_reg <= 1'b0;
        first_reg <= 48'd0;
        oldest_reg <= 48'd0;
        oldest_w_reg <= WINDOW - 48'd1;
        highest_reg <= 48'd0;
        lost_reg <= 64'd0;
        flush_req_reg <= 1'b0;
        run_open_reg <= 1'b0;
        lose_en_q <= 1'b0;
        lose_en_q2 <= 1'b0;
        ev_push_q <= 1'b0;
        ev_wr_reg <= 0;
        ev_rd_reg <= 0;
        ev_full_reg <= 1'b0;
        ev_nonempty_reg <= 1'b0;
        ev_popped_reg <= 1'b0;
        stat_event_valid <= 1'b0;
        clear_idx_reg <= 0;
        phase_reg <= P_GATHER;
        t_state_reg <= T_CLEAR;
    end
    if (rst) begin
        stat_lost <= 64'd0;
        stat_first_seq <= 48'd0;
        stat_highest_seq <= 48'd0;
        stat_oldest_seq <= 48'd0;
        stat_started <= 1'b0;
    end
end

endmodule

`resetall
