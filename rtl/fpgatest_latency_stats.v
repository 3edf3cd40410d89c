// SPDX-License-Identifier: BSD-2-Clause
// fpgatest_latency_stats: latency count/min/max/sum/sum of squares/last, jitter, 64-bin histogram (linear or logarithmic) and a sample FIFO, latched by one snapshot.

`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * Latencies are in 1/16 tick (0.5 ns). Widths hold a year at line rate: 1.49e6 frames/s * 3.2e7 s
 * = 2^45.4 frames, so sum < 2^78 (80 bits) and sum of squares < 2^110 (128 bits). The count and
 * the histogram's below/above counts are event outputs kept by fpgatest_counters, which latches
 * at the same edge.
 * Jitter (RFC 4689 3.2.5, the IPDV of RFC 3393 in arrival order): |latency - latency of the test
 * frame before it| for every frame that has one since the last clear; its sum and maximum. The
 * pairs in an interval are lat_count - 1 (the first frame after a clear has none).
 * ctl_snapshot latches everything at one clock edge, histogram included: the histogram engine sees
 * the snapshot as a marker in its queue right after the last update before the edge, and copies the
 * live bins to the readable bank (67 clocks). stat_hist_busy is the queue's: high while it holds an
 * entry or the engine works on one, so through the copy and also for the five clocks each result
 * takes to bin (low, the readable bank is settled). ctl_clear with ctl_snapshot gives an interval
 * measurement with no frame missed or counted twice. The histogram has a clear of its own
 * (ctl_clear_hist), so that it can go on over many intervals.
 *
 * Histogram bins, for u = (latency - cfg_hist_base) >> cfg_hist_shift (the latency above the base in
 * units of 2^shift / 16 tick); a latency below the base counts in cnt_hist_below, one beyond the
 * last bin in cnt_hist_above:
 *   cfg_hist_log = 0, linear: bin u, for u = 0..63 (every bin one unit wide);
 *   cfg_hist_log = 1, logarithmic: bin u for u = 0..3; then four bins an octave: for
 *     2^k <= u < 2^(k+1), k = 2..16, bin 4(k-1) + m, m the two bits below u's leading one, which
 *     covers [(4+m) 2^(k-2), (5+m) 2^(k-2)) units. Bins 4..63 are each at most a quarter of their
 *     lower edge wide, and the 64 bins reach 2^17 units: a tail 2048 times beyond the linear reach
 *     at the same resolution next to the base.
 */
module fpgatest_latency_stats #(
    parameter SAMPLE_DEPTH_LOG2 = 9
) (
    input  wire         clk,
    input  wire         rst,

    // per test frame
    input  wire         res_valid,
    output wire         res_ready,           // a result is taken only while this is high
    input  wire [47:0]  res_seq,
    input  wire [31:0]  res_latency,
    input  wire [63:0]  res_rx_tick,

    // control
    input  wire         ctl_snapshot,        // latch all statistics (pulse)
    input  wire         ctl_clear,           // clear the scalar statistics and the samples (pulse)
    input  wire         ctl_clear_hist,      // clear the histogram (pulse)
    input  wire         ctl_sample_pop,      // move the oldest sample to stat_sample_* (pulse)

    // configuration
    input  wire [31:0]  cfg_hist_base,       // lower edge of bin 0, 1/16 tick
    input  wire [4:0]   cfg_hist_shift,      // bin unit = 2^shift (1/16 tick)
    input  wire         cfg_hist_log,        // 0: linear bins, 1: logarithmic (four an octave; see above)
    input  wire [5:0]   cfg_hist_addr,       // bin shown in stat_hist_count
    input  wire [31:0]  cfg_sample_every,    // capture every Nth test frame (0 = off)

    // status (snapshot)
    output reg  [31:0]  stat_lat_min,        // smallest latency, 1/16 tick (0xFFFFFFFF when none)
    output reg  [31:0]  stat_lat_max,        // largest latency, 1/16 tick
    output reg  [31:0]  stat_lat_last,       // latency of the latest test frame, 1/16 tick
    output wire [79:0]  stat_lat_sum,        // sum of latencies, 1/16 tick
    output wire [127:0] stat_lat_sumsq,      // sum of squared latencies, (1/16 tick)^2
    output wire [79:0]  stat_jit_sum,        // sum of absolute latency changes between consecutive test frames, 1/16 tick
    output reg  [31:0]  stat_jit_max,        // largest absolute latency change between consecutive test frames, 1/16 tick
    output reg  [47:0]  stat_hist_count,     // snapshot count of bin cfg_hist_addr
    output wire         stat_hist_busy,      // histogram queue not empty or engine at work (a copy, or a result binning)

    // samples
    output reg          stat_sample_valid,   // the last pop returned a sample
    output reg  [47:0]  stat_sample_seq,     // sample: sequence number
    output reg  [63:0]  stat_sample_rx_tick, // sample: RX tick
    output reg  [31:0]  stat_sample_latency, // sample: latency, 1/16 tick
    output reg  [15:0]  stat_sample_level,   // samples waiting

    // events for fpgatest_counters (aligned with the statistics above)
    output wire         cnt_lat,             // a latency was added
    output wire         cnt_hist_below,      // ... below the histogram base
    output wire         cnt_hist_above,      // ... beyond bin 63
    output reg          cnt_sample_dropped   // a sample did not fit in the FIFO
);

// ---------------------------------------------------------------------------------------------
// per result, in four steps: the square (a multiplier block) and the bin's distance to the base,
// the bin, the comparisons with min and max, then every statistic updates at once (v2) so they
// stay consistent. res_ready is low while a result is in work (five clocks) and while the
// histogram's queue has fewer than two free entries (a snapshot or clear copies the bins for 67
// clocks, while results may come every five): the port offers the next result or marker only when
// it is high, so none is skipped and the queue never overflows, however close results come.
// ---------------------------------------------------------------------------------------------
localparam STEPS = 4;
reg                busy_reg, v2_reg;
reg  [STEPS-1:0]   step_oh;           // one-hot step of the result in work (no step comparator)
reg  [31:0]        lat1_reg, lat2_reg;
reg  [47:0]        seq1_reg, seq2_reg;
reg  [63:0]        rx1_reg, rx2_reg;
reg  [63:0]        sq_reg, sq2_reg;
reg  [32:0]        rel_reg;
reg                below, above;
reg  [31:0]        binw_reg;
reg  [5:0]         bin;
wire               q_room;            // the histogram's queue has room (below)
// (the port offers a result a clock after it saw res_ready: the result is taken whatever q_room
// says now; the two free entries q_room keeps are for it and for one pushed meanwhile)
wire               take = res_valid && !busy_reg;

// the logarithmic bin of u = binw_reg: k, the position of its leading one (0 for u < 4), and the two
// bits below that one
reg  [4:0]         lead;
integer            k;
always @* begin
    lead = 5'd0;
    for (k = 2; k <= 16; k = k + 1)
        if (binw_reg[k])
            lead = k[4:0];
end
wire [1:0]         below_lead = binw_reg[lead - 5'd1 -: 2];
wire [5:0]         log_bin = lead == 5'd0 ? {4'd0, binw_reg[1:0]} : {lead[3:0] - 4'd1, below_lead};
wire               log_above = binw_reg[31:17] != 0;

assign res_ready = !busy_reg && q_room;

always @(posedge clk) begin
    v2_reg <= step_oh[STEPS-1];
    step_oh <= {step_oh[STEPS-2:0], take};
    busy_reg <= take || (busy_reg && !step_oh[STEPS-1]);
    if (take) begin
        lat1_reg <= res_latency;
        seq1_reg <= res_seq;
        rx1_reg <= res_rx_tick;
    end
    if (step_oh[0]) begin
        sq_reg <= lat1_reg * lat1_reg;
        rel_reg <= {1'b0, lat1_reg} - {1'b0, cfg_hist_base};
    end
    if (step_oh[1])
        binw_reg <= rel_reg[31:0] >> cfg_hist_shift;
    if (step_oh[2]) begin
        below <= rel_reg[32];
        above <= !rel_reg[32] && (cfg_hist_log ? log_above : binw_reg[31:6] != 0);
        bin <= cfg_hist_log ? log_bin : binw_reg[5:0];
    end
    if (step_oh[STEPS-1]) begin
        lat2_reg <= lat1_reg;
        seq2_reg <= seq1_reg;
        rx2_reg <= rx1_reg;
        sq2_reg <= sq_reg;
    end

    if (rst) begin
        busy_reg <= 1'b0;
        step_oh <= {STEPS{1'b0}};
        v2_reg <= 1'b0;
    end
end

// the counter events leave registered, at the same edge as v2 (below/above are set at step 2)
reg cnt_hist_below_reg, cnt_hist_above_reg;
always @(posedge clk) begin
    cnt_hist_below_reg <= step_oh[STEPS-1] && below;
    cnt_hist_above_reg <= step_oh[STEPS-1] && above;
    if (rst) begin
        cnt_hist_below_reg <= 1'b0;
        cnt_hist_above_reg <= 1'b0;
    end
end
assign cnt_lat = v2_reg;
assign cnt_hist_below = cnt_hist_below_reg;
assign cnt_hist_above = cnt_hist_above_reg;

// ---------------------------------------------------------------------------------------------
// scalar statistics
// ---------------------------------------------------------------------------------------------
reg [31:0]  min_reg, max_reg, last_reg;
reg [31:0]  min_next, max_next, last_next;
reg         lt_min_reg, gt_max_reg;    // the result in work beats min / max (compared while squaring)

always @* begin
    min_next = min_reg;
    max_next = max_reg;
    last_next = last_reg;
    if (v2_reg) begin
        if (lt_min_reg) min_next = lat2_reg;
        if (gt_max_reg) max_next = lat2_reg;
        last_next = lat2_reg;
    end
end

always @(posedge clk) begin
    // min and max change only at v2, one result at a time: compare a clock before it; a clear in
    // between restarts them at (all ones, zero)
    if (step_oh[STEPS-2]) begin
        lt_min_reg <= lat1_reg < min_reg;
        gt_max_reg <= lat1_reg > max_reg;
    end
    if (ctl_clear) begin
        lt_min_reg <= lat1_reg != 32'hFFFFFFFF;
        gt_max_reg <= lat1_reg != 32'd0;
    end
    min_reg <= min_next;
    max_reg <= max_next;
    last_reg <= last_next;

    if (ctl_snapshot) begin
        stat_lat_min <= min_next;
        stat_lat_max <= max_next;
        stat_lat_last <= last_next;
    end

    if (ctl_clear || rst) begin
        min_reg <= 32'hFFFFFFFF;
        max_reg <= 32'd0;
        last_reg <= 32'd0;
    end
    if (rst) begin
        stat_lat_min <= 32'hFFFFFFFF;
        stat_lat_max <= 32'd0;
        stat_lat_last <= 32'd0;
    end
end

// the sums: no clock carries more than 64 bits (their snapshot is complete two clocks later)
fpgatest_acc #(.W(80), .L(40)) sum_inst (
    .clk(clk), .rst(rst), .add(v2_reg), .amount({8'd0, lat2_reg}),
    .ctl_snapshot(ctl_snapshot), .ctl_clear(ctl_clear), .stat(stat_lat_sum));
fpgatest_acc #(.W(128), .L(64)) sumsq_inst (
    .clk(clk), .rst(rst), .add(v2_reg), .amount(sq2_reg),
    .ctl_snapshot(ctl_snapshot), .ctl_clear(ctl_clear), .stat(stat_lat_sumsq));

// ---------------------------------------------------------------------------------------------
// jitter: the change from the previous result (last_reg holds it from step 0 on), its magnitude
// at step 1, compared with the maximum at step 2, added at v2 when there was a previous result
// ---------------------------------------------------------------------------------------------
reg  [32:0] jd_reg;
reg  [31:0] jabs_reg, jmax_reg, jmax_next;
reg         gt_jmax_reg, have_prev_reg;
wire        jit_add = v2_reg && have_prev_reg;

always @* begin
    jmax_next = jmax_reg;
    if (jit_add && gt_jmax_reg)
        jmax_next = jabs_reg;
end

always @(posedge clk) begin
    if (step_oh[0])
        jd_reg <= {1'b0, lat1_reg} - {1'b0, last_reg};
    if (step_oh[1])
        jabs_reg <= jd_reg[32] ? 32'd0 - jd_reg[31:0] : jd_reg[31:0];
    if (step_oh[2])
        gt_jmax_reg <= jabs_reg > jmax_reg;
    jmax_reg <= jmax_next;
    if (v2_reg)
        have_prev_reg <= 1'b1;
    if (ctl_snapshot)
        stat_jit_max <= jmax_next;
    // a clear restarts the pairs: the next result has no previous one; the maximum restarts at zero,
    // which a result in work beats
    if (ctl_clear || rst) begin
        jmax_reg <= 32'd0;
        have_prev_reg <= 1'b0;
        gt_jmax_reg <= 1'b1;
    end
    if (rst)
        stat_jit_max <= 32'd0;
end

fpgatest_acc #(.W(80), .L(40)) jit_sum_inst (
    .clk(clk), .rst(rst), .add(jit_add), .amount({8'd0, jabs_reg}),
    .ctl_snapshot(ctl_snapshot), .ctl_clear(ctl_clear), .stat(stat_jit_sum));

// ---------------------------------------------------------------------------------------------
// histogram: queue of {update, bin, snapshot, clear}, one engine, live and readable banks
// ---------------------------------------------------------------------------------------------
localparam QW = 1 + 6 + 1 + 1;
(* ram_style = "logic" *)
reg  [QW-1:0] queue_mem [0:7];
reg  [3:0]    q_wr_reg, q_rd_reg;
wire          q_empty = q_wr_reg == q_rd_reg;
// room for the entry of a result or marker taken now and for one pushed this clock (a result
// leaving its last step as the next is offered)
wire [3:0]    q_used = q_wr_reg - q_rd_reg;
assign        q_room = q_used <= 4'd6;
wire          q_push = (v2_reg && !below && !above) || ctl_snapshot || ctl_clear_hist;

// both banks in block RAM
(* ram_style = "block" *)
reg  [47:0]   shadow_mem [0:63];

localparam [2:0] H_IDLE = 3'd0, H_READ = 3'd1, H_HOLD = 3'd2, H_ADD = 3'd3, H_WRITE = 3'd4, H_COPY = 3'd5;
reg  [2:0]    h_state_reg;
reg  [47:0]   h_inc_reg;           // the bin's count + 1
reg  [QW-1:0] h_entry_reg;
reg  [6:0]    h_addr_reg;          // copy: read address, two ahead of the shadow write
reg  [5:0]    h_wr_addr_reg, h_wr_addr2_reg;
reg           h_wr_pending_reg, h_wr_pending2_reg;

wire          e_update = h_entry_reg[8];
wire [5:0]    e_bin    = h_entry_reg[7:2];
wire          e_snap   = h_entry_reg[1];
wire          e_clear  = h_entry_reg[0];

// the live bank has one read and one write port, both synchronous, so it maps to block RAM
wire [5:0]    live_rd_addr = h_state_reg == H_COPY ? h_addr_reg[5:0] : e_bin;
wire [47:0]   live_rd_q;           // live bin read two clocks ago
reg           live_we;
reg  [5:0]    live_wr_addr;
reg  [47:0]   live_wr_data;

assign stat_hist_busy = !q_empty || h_state_reg != H_IDLE;

fpgatest_bram #(.WIDTH(48), .DEPTH_LOG2(6)) live_mem (
    .clk(clk), .we(live_we), .waddr(live_wr_addr), .wdata(live_wr_data),
    .raddr(live_rd_addr), .rdata(live_rd_q));

always @* begin
    live_we = 1'b0;
    live_wr_addr = e_bin;
    live_wr_data = h_inc_reg;
    if (h_state_reg == H_WRITE && e_update)
        live_we = 1'b1;
    if (h_state_reg == H_COPY && h_wr_pending_reg && e_clear) begin
        live_we = 1'b1;
        live_wr_addr = h_wr_addr_reg;
        live_wr_data = 48'd0;
    end
end

always @(posedge clk) begin
    if (q_push) begin
        queue_mem[q_wr_reg[2:0]] <= {v2_reg && !below && !above, bin, ctl_snapshot, ctl_clear_hist};
        q_wr_reg <= q_wr_reg + 4'd1;
    end

    case (h_state_reg)
        H_IDLE: begin
            if (!q_empty) begin
                h_entry_reg <= queue_mem[q_rd_reg[2:0]];
                q_rd_reg <= q_rd_reg + 4'd1;
                h_state_reg <= H_READ;
            end
        end
        H_READ: begin
            // the bin's count is in live_rd_q two clocks later
            h_state_reg <= H_HOLD;
        end
        H_HOLD: begin
            h_state_reg <= H_ADD;
        end
        H_ADD: begin
            h_inc_reg <= live_rd_q + 48'd1;
            h_state_reg <= H_WRITE;
        end
        H_WRITE: begin
            h_addr_reg <= 7'd0;
            h_wr_pending_reg <= 1'b0;
            h_wr_pending2_reg <= 1'b0;
            h_state_reg <= (e_snap || e_clear) ? H_COPY : H_IDLE;
        end
        H_COPY: begin
            // read bin h_addr; clear it one clock later, copy it to the shadow bank two clocks later
            if (h_addr_reg < 7'd64) begin
                h_wr_addr_reg <= h_addr_reg[5:0];
                h_addr_reg <= h_addr_reg + 7'd1;
            end
            h_wr_pending_reg <= h_addr_reg < 7'd64;
            h_wr_addr2_reg <= h_wr_addr_reg;
            h_wr_pending2_reg <= h_wr_pending_reg;
            if (h_wr_pending2_reg && e_snap)
                shadow_mem[h_wr_addr2_reg] <= live_rd_q;
            if (h_addr_reg == 7'd64 && !h_wr_pending_reg && !h_wr_pending2_reg)
                h_state_reg <= H_IDLE;
        end
        default: h_state_reg <= H_IDLE;
    endcase

    stat_hist_count <= shadow_mem[cfg_hist_addr];

    if (rst) begin
        q_wr_reg <= 4'd0;
        q_rd_reg <= 4'd0;
        h_state_reg <= H_IDLE;
    end
end

// banks start at zero (FPGA RAM initial contents; reset clears through a clear marker)
integer i;
initial begin
    for (i = 0; i < 64; i = i + 1) begin
        shadow_mem[i] = 48'd0;
    end
end

// ---------------------------------------------------------------------------------------------
// sample FIFO: every Nth test frame, (seq, RX tick, latency)
// ---------------------------------------------------------------------------------------------
localparam SA = SAMPLE_DEPTH_LOG2;
reg  [143:0] sample_mem [0:(1<<SA)-1];
reg  [SA:0]  s_wr_reg, s_rd_reg;
reg  [31:0]  s_div_reg;
wire [SA:0]  s_level = s_wr_reg - s_rd_reg;
reg          s_full_reg;           // the FIFO was full at the last edge ...
reg          s_popped_reg;         // ... unless a sample left it at that edge
wire         s_full = s_full_reg && !s_popped_reg;   // exact: samples come >= 5 clocks apart
reg          s_nonempty_reg;       // the FIFO held a sample at the last edge ...
wire         s_can_pop = s_nonempty_reg && !s_popped_reg; // ... and none left at it (a pop in the
                                   // clock after a push or a pop reports no sample: pop again)
reg          s_due_reg;            // the next latency is a sample (worked out between results:
reg  [31:0]  s_div_p1_reg;         // s_div + 1 one clock, the comparison the next; v2 comes
reg          s_on_reg;             // >= 5 clocks apart)
wire         s_take = v2_reg && s_due_reg;

always @(posedge clk) begin
    s_on_reg <= cfg_sample_every != 0;
    s_div_p1_reg <= s_div_reg + 32'd1;
    s_due_reg <= s_on_reg && s_div_p1_reg >= cfg_sample_every;
    if (v2_reg && s_on_reg)
        s_div_reg <= s_take ? 32'd0 : s_div_p1_reg;

    cnt_sample_dropped <= s_take && s_full;
    if (s_take) begin
        if (!s_full) begin
            sample_mem[s_wr_reg[SA-1:0]] <= {seq2_reg, rx2_reg, lat2_reg};
            s_wr_reg <= s_wr_reg + 1'b1;
        end
    end

    s_full_reg <= s_level[SA];
    s_nonempty_reg <= s_level != 0;
    s_popped_reg <= ctl_sample_pop && s_can_pop;
    if (ctl_sample_pop) begin
        stat_sample_valid <= s_can_pop;
        if (s_can_pop) begin
            {stat_sample_seq, stat_sample_rx_tick, stat_sample_latency} <= sample_mem[s_rd_reg[SA-1:0]];
            s_rd_reg <= s_rd_reg + 1'b1;
        end
    end
    stat_sample_level <= s_level;

    if (ctl_clear || rst) begin
        s_wr_reg <= 0;
        s_rd_reg <= 0;
        s_div_reg <= 32'd0;
        s_div_p1_reg <= 32'd1;
        s_due_reg <= cfg_sample_every == 32'd1;   // what the two clocks above give for s_div = 0
        s_full_reg <= 1'b0;
        s_popped_reg <= 1'b0;
        s_nonempty_reg <= 1'b0;
        cnt_sample_dropped <= 1'b0;
        stat_sample_valid <= 1'b0;
    end
end

endmodule

`resetall
