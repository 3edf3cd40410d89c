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
 */
module fpgatest_seq_tracker #(
    parameter WINDOW_LOG2 = 10,
    parameter EVENT_DEPTH_LOG2 = 8
) (
    input  wire         clk,
    input  wire         rst,

    // sequence numbers of test frames
    input  wire         in_valid,
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
    output wire         stat_busy,           // work queued (flush or input not yet done)

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
    output reg          cnt_event_dropped    // the event FIFO was full
);

initial if (WINDOW_LOG2 < 6 || WINDOW_LOG2 > 16) $error("fpgatest_seq_tracker: WINDOW_LOG2 out of range");

localparam        WORDS  = 1 << (WINDOW_LOG2 - 5);
localparam [47:0] WINDOW = 48'd1 << WINDOW_LOG2;

// ---------------------------------------------------------------------------------------------
// input queue
// ---------------------------------------------------------------------------------------------
(* ram_style = "distributed" *)
reg  [47:0] in_mem [0:63];                   // LUT RAM: its read feeds a 48-bit subtractor in the same clock
reg  [6:0]  in_wr_reg, in_rd_reg;
wire        in_empty = in_wr_reg == in_rd_reg;
wire        in_full = (in_wr_reg - in_rd_reg) == 7'd64;
wire [47:0] head = in_mem[in_rd_reg[5:0]];
reg         in_pop;

// ---------------------------------------------------------------------------------------------
// window state
// ---------------------------------------------------------------------------------------------
reg  [31:0] bitmap [0:WORDS-1];
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


// Each step takes three clocks so that no clock holds more than one 48-bit carry chain:
//   P_GATHER registers the head, its distances to the window and the two bitmap words,
//   P_DECIDE registers the decisions, P_ACT changes the state (the only phase that does).
localparam [1:0] P_GATHER = 2'd0, P_DECIDE = 2'd1, P_ACT = 2'd2;
reg  [1:0]  phase_reg;


reg  [47:0] h_reg, d_old_reg, d_old_m_reg, d_high_reg, to_highest_reg;
reg  [47:0] oldest_w_reg;          // oldest_reg + WINDOW - 1, kept in step with it
reg  [31:0] head_word_val_reg, old_word_val_reg;
reg         have_head_reg;

wire [WINDOW_LOG2-6:0] head_word = h_reg[WINDOW_LOG2-1:5];
wire [4:0]  head_bit = h_reg[4:0];
wire [WINDOW_LOG2-6:0] old_word = oldest_reg[WINDOW_LOG2-1:5];
wire [4:0]  old_bit = oldest_reg[4:0];

// decisions (P_DECIDE, from registered distances)
reg         head_stale_reg, head_new_reg, head_seen_reg, need_slide_reg, flushing_reg, whole_word_reg;
reg         window_empty_reg, flush_close_reg;
reg  [47:0] to_target_reg;

wire        head_stale = d_old_reg[47];
wire        head_inside = !d_old_reg[47] && d_old_reg[47:WINDOW_LOG2] == 0;
// a far-ahead head needs oldest = head - WINDOW + 1; an idle flush needs oldest = highest
wire        need_slide = started_reg && have_head_reg && !head_stale && !head_inside;
wire        flushing = started_reg && !have_head_reg && flush_req_reg && to_highest_reg != 48'd0;
wire [47:0] to_target = need_slide ? d_old_m_reg : to_highest_reg;

// event FIFO
localparam EA = EVENT_DEPTH_LOG2;
reg  [79:0] ev_mem [0:(1<<EA)-1];
reg  [EA:0] ev_wr_reg, ev_rd_reg;
wire [EA:0] ev_level = ev_wr_reg - ev_rd_reg;
reg         ev_push;
reg  [79:0] ev_data;
reg         ev_push_q;            // the event is written one clock after the step that closed it
reg  [79:0] ev_data_q;
reg         old_seen_reg;         // the oldest number's bit, picked out while deciding
reg         old_zero_reg, old_ones_reg;
reg  [31:0] old_cleared_reg, head_marked_reg;   // the bitmap words to write, prepared while deciding

reg         lose_en;               // this clock retires lose_n never-seen numbers from oldest
reg  [47:0] lose_n;
reg         lose_en_q;
reg  [47:0] lose_n_q, lose_at_q;
wire [47:0] run_sum = {16'd0, run_len_reg} + lose_n_q;

assign stat_busy = !in_empty || flush_req_reg || t_state_reg != T_RUN || phase_reg != P_GATHER || lose_en_q || ev_push_q;

always @(posedge clk) begin
    in_pop = 1'b0;
    ev_push = 1'b0;
    cnt_received <= 1'b0;
    cnt_late <= 1'b0;
    cnt_duplicate <= 1'b0;
    cnt_stale <= 1'b0;
    cnt_input_dropped <= 1'b0;
    cnt_event_dropped <= 1'b0;
    lose_en = 1'b0;
    lose_n = 48'd0;
    ev_data = {run_first_reg, run_len_reg};

    if (in_valid) begin
        if (in_full) begin
            cnt_input_dropped <= 1'b1;
        end else begin
            in_mem[in_wr_reg[5:0]] <= in_seq;
            in_wr_reg <= in_wr_reg + 7'd1;
        end
    end
    if (ctl_flush)
        flush_req_reg <= 1'b1;

    case (t_state_reg)
        T_RUN: begin
            case (phase_reg)
                P_GATHER: begin
                    have_head_reg <= !in_empty;
                    h_reg <= head;
                    d_old_reg <= head - oldest_reg;
                    d_old_m_reg <= head - oldest_w_reg;   // distance past the window's end
                    d_high_reg <= head - highest_reg;
                    to_highest_reg <= highest_reg - oldest_reg;
                    head_word_val_reg <= bitmap[head[WINDOW_LOG2-1:5]];
                    old_word_val_reg <= bitmap[old_word];
                    phase_reg <= P_DECIDE;
                end
                P_DECIDE: begin
                    head_stale_reg <= head_stale;
                    head_new_reg <= !d_high_reg[47];
                    head_seen_reg <= head_word_val_reg[head_bit];
                    need_slide_reg <= need_slide;
                    flushing_reg <= flushing;
                    to_target_reg <= to_target;
                    window_empty_reg <= to_highest_reg == 48'd0;
                    old_seen_reg <= old_word_val_reg[old_bit];
                    old_zero_reg <= old_word_val_reg == 32'd0;
                    old_ones_reg <= old_word_val_reg == 32'hFFFFFFFF;
                    old_cleared_reg <= old_word_val_reg & ~(32'd1 << old_bit);
                    head_marked_reg <= head_word_val_reg | (32'd1 << head_bit);
                    flush_close_reg <= !have_head_reg && flush_req_reg && !flushing;
                    whole_word_reg <= old_bit == 5'd0 && to_target[47:5] != 0 && to_highest_reg[47:5] != 0;
                    phase_reg <= P_ACT;
                end
                default: begin
                    phase_reg <= P_GATHER;
                    if (need_slide_reg || flushing_reg) begin
                        if (window_empty_reg) begin
                            // nothing pending in the window: everything up to the target was never seen
                            lose_en = 1'b1;
                            lose_n = to_target_reg;
                            oldest_reg <= oldest_reg + to_target_reg;
                            oldest_w_reg <= oldest_w_reg + to_target_reg;
                            highest_reg <= oldest_reg + to_target_reg;
                        end else if (whole_word_reg && old_zero_reg) begin
                            lose_en = 1'b1;
                            lose_n = 48'd32;
                            oldest_reg <= oldest_reg + 48'd32;
                            oldest_w_reg <= oldest_w_reg + 48'd32;
                        end else if (whole_word_reg && old_ones_reg) begin
                            ev_push = run_open_reg;
                            run_open_reg <= 1'b0;
                            bitmap[old_word] <= 32'd0;
                            oldest_reg <= oldest_reg + 48'd32;
                            oldest_w_reg <= oldest_w_reg + 48'd32;
                        end else begin
                            if (old_seen_reg) begin
                                ev_push = run_open_reg;
                                run_open_reg <= 1'b0;
                            end else begin
                                lose_en = 1'b1;
                                lose_n = 48'd1;
                            end
                            bitmap[old_word] <= old_cleared_reg;
                            oldest_reg <= oldest_reg + 48'd1;
                            oldest_w_reg <= oldest_w_reg + 48'd1;
                        end
                    end else if (have_head_reg) begin
                        in_pop = 1'b1;
                        if (!started_reg) begin
                            started_reg <= 1'b1;
                            first_reg <= h_reg;
                            oldest_reg <= h_reg;
                            oldest_w_reg <= h_reg + (WINDOW - 48'd1);
                            highest_reg <= h_reg + 48'd1;
                            cnt_received <= 1'b1;
                            bitmap[head_word] <= head_marked_reg;
                        end else if (head_stale_reg) begin
                            cnt_stale <= 1'b1;
                        end else if (head_new_reg) begin
                            highest_reg <= h_reg + 48'd1;
                            cnt_received <= 1'b1;
                            bitmap[head_word] <= head_marked_reg;
                        end else if (head_seen_reg) begin
                            cnt_duplicate <= 1'b1;
                        end else begin
                            cnt_late <= 1'b1;
                            cnt_received <= 1'b1;
                            bitmap[head_word] <= head_marked_reg;
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
            bitmap[clear_idx_reg[WINDOW_LOG2-6:0]] <= 32'd0;
            clear_idx_reg <= clear_idx_reg + 1'b1;
            if (clear_idx_reg == WORDS - 1)
                t_state_reg <= T_RUN;
        end
        default: t_state_reg <= T_RUN;
    endcase

    if (in_pop)
        in_rd_reg <= in_rd_reg + 7'd1;

    // loss run bookkeeping one clock after the step that retired the numbers (run length saturates
    // at 2^32-1); the next step comes three clocks later and sees it done
    lose_en_q <= lose_en;
    lose_n_q <= lose_n;
    lose_at_q <= oldest_reg;
    if (lose_en_q) begin
        lost_reg <= lost_reg + {16'd0, lose_n_q};
        if (run_open_reg) begin
            run_len_reg <= run_sum[47:32] != 16'd0 ? 32'hFFFFFFFF : run_sum[31:0];
        end else begin
            run_open_reg <= 1'b1;
            run_first_reg <= lose_at_q;
            run_len_reg <= lose_n_q[47:32] != 16'd0 ? 32'hFFFFFFFF : lose_n_q[31:0];
        end
    end

    ev_push_q <= ev_push;
    ev_data_q <= ev_data;
    if (ev_push_q) begin
        if (ev_level[EA]) begin
            cnt_event_dropped <= 1'b1;
        end else begin
            ev_mem[ev_wr_reg[EA-1:0]] <= ev_data_q;
            ev_wr_reg <= ev_wr_reg + 1'b1;
        end
    end
    if (ctl_event_pop) begin
        stat_event_valid <= ev_level != 0;
        if (ev_level != 0) begin
            {stat_event_first, stat_event_length} <= ev_mem[ev_rd_reg[EA-1:0]];
            ev_rd_reg <= ev_rd_reg + 1'b1;
        end
    end
    stat_event_level <= ev_level;

    if (ctl_snapshot) begin
        stat_lost <= lost_reg;
        stat_first_seq <= first_reg;
        stat_highest_seq <= highest_reg;
        stat_oldest_seq <= oldest_reg;
        stat_started <= started_reg;
    end

    if (ctl_clear || rst) begin
        in_wr_reg <= 7'd0;
        in_rd_reg <= 7'd0;
        started_reg <= 1'b0;
        first_reg <= 48'd0;
        oldest_reg <= 48'd0;
        oldest_w_reg <= WINDOW - 48'd1;
        highest_reg <= 48'd0;
        lost_reg <= 64'd0;
        flush_req_reg <= 1'b0;
        run_open_reg <= 1'b0;
        lose_en_q <= 1'b0;
        ev_push_q <= 1'b0;
        ev_wr_reg <= 0;
        ev_rd_reg <= 0;
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
