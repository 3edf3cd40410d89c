// SPDX-License-Identifier: BSD-2-Clause
// fpgatest_port: one full-duplex tester port: generator on TX; RX time stamping, checker, latency statistics and sequence tracker on RX.

`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * Board-independent. The time base is shared by all ports of a tester (fpgatest_timebase) and
 * comes in as time_tick. litex_soc/ turns every cfg_* into a CSRStorage, every stat_* into a
 * CSRStatus and the ctl_* pulses into one control register, with the comments below as their
 * descriptions, so this port list is the register contract. The event counters live in RAM
 * (fpgatest_counters) and are read through cnt_rd_addr/cnt_rd_data. WITH_TX / WITH_RX leave out
 * a direction where a device has no room for both (the register map stays the same). Numbering:
 *
 * counter  name               meaning
 *    0  tx_frames          frames sent
 *    1  tx_bytes           bytes sent, frame bytes incl. FCS, excl. preamble
 *    2  rx_frames          every frame seen
 *    3  rx_bytes           bytes of every frame seen (incl. FCS)
 *    4  test_frames        good frames of the test stream
 *    5  fcs_errors         FCS wrong or rx_er
 *    6  runts              shorter than 64 bytes
 *    7  giants             longer than cfg_max_size
 *    8  foreign            good frames without a valid signature
 *    9  other_stream       good signed frames of another stream id
 *   10  lat_clamped        test frames whose latency was clamped (<0 or too big)
 *   11  lat_count          latencies in the statistics
 *   12  hist_below         latencies below the histogram base
 *   13  hist_above         latencies beyond bin 63
 *   14  sample_dropped     samples lost to a full sample FIFO
 *   15  seq_received       distinct sequence numbers received
 *   16  seq_late           received after a higher one (reordered)
 *   17  seq_duplicate      received again inside the window
 *   18  seq_stale          older than the window
 *   19  seq_input_dropped  sequence numbers lost to a full tracker queue
 *   20  seq_event_dropped  loss events lost to a full event FIFO
 *   21  rx_fifo_overflow   frames damaged by a full RX clock-crossing FIFO
 *   22  lat_overrun        latencies skipped: a result came while the statistics were busy
 */
module fpgatest_port #(
    parameter WITH_TX = 1,   // 0: no generator (its outputs read 0)
    parameter WITH_RX = 1    // 0: no receive side (checker, statistics, tracker read 0)
) (
    // clocks and time
    input  wire           clk,
    input  wire           rst,
    input  wire [63:0]    time_tick,
    input  wire           rx_clk,
    input  wire           rx_rst,

    // GMII
    output wire [7:0]     gmii_txd,
    output wire           gmii_tx_en,
    output wire           gmii_tx_er,
    input  wire [7:0]     gmii_rxd,
    input  wire           gmii_rx_dv,
    input  wire           gmii_rx_er,

    // control (pulses)
    input  wire           ctl_start,              // start a run with the current settings (pulse)
    input  wire           ctl_stop,               // stop after the frame on the wire (pulse)
    input  wire           ctl_clear,              // clear every counter and statistic (pulse)
    input  wire           ctl_snapshot,           // latch every counter (pulse)
    input  wire           ctl_sample_pop,         // move the oldest sample to stat_sample_* (pulse)
    input  wire           ctl_flush,              // retire the whole window: pending gaps become lost (pulse)
    input  wire           ctl_event_pop,          // move the oldest loss event to stat_event_* (pulse)
    input  wire           ctl_clear_stats,        // clear latency statistics and histogram only (pulse)

    // generator configuration
    input  wire [1:0]     cfg_proto,              // 0 raw Ethernet, 1 IPv4/UDP, 2 IPv6/UDP
    input  wire           cfg_vlan_en,            // insert an 802.1Q tag
    input  wire [15:0]    cfg_vlan_tci,           // 802.1Q tag control (PCP, DEI, VID)
    input  wire [47:0]    cfg_dst_mac,            // destination MAC
    input  wire [47:0]    cfg_src_mac,            // source MAC
    input  wire [15:0]    cfg_ethertype,          // EtherType of raw Ethernet frames
    input  wire [7:0]     cfg_ip_ttl,             // IPv4 TTL / IPv6 hop limit
    input  wire [7:0]     cfg_ip_tos,             // IPv4 TOS / IPv6 traffic class
    input  wire [127:0]   cfg_src_ip,             // source address (IPv4 in the low 32 bits)
    input  wire [127:0]   cfg_dst_ip,             // destination address (IPv4 in the low 32 bits)
    input  wire [15:0]    cfg_udp_src,            // UDP source port
    input  wire [15:0]    cfg_udp_dst,            // UDP destination port
    input  wire [15:0]    cfg_tx_stream_id,       // stream id written into the signature
    input  wire [47:0]    cfg_seq_start,          // sequence number of the first frame
    input  wire [15:0]    cfg_size,               // frame size in bytes incl. FCS, excl. preamble (64..16383)
    input  wire [31:0]    cfg_ifg,                // idle gap after each frame in bytes (>= 12)
    input  wire [31:0]    cfg_ifg_frac_num,       // extra fractional gap numerator in bytes (< den)
    input  wire [31:0]    cfg_ifg_frac_den,       // extra fractional gap denominator (0 = none)
    input  wire [31:0]    cfg_burst_len,          // frames per burst (0 = no bursts)
    input  wire [31:0]    cfg_burst_gap,          // idle gap after each burst in bytes (>= 12)
    input  wire [47:0]    cfg_count,              // frames to send (0 = until stopped)

    // checker configuration
    input  wire [15:0]    cfg_rx_stream_id,       // stream id counted as the test stream
    input  wire [15:0]    cfg_max_size,           // largest frame that is not a giant (bytes incl. FCS)
    input  wire [31:0]    cfg_cal_internal,       // tester internal delay, 1/16 tick
    input  wire [31:0]    cfg_cal_tx_cable,       // cable delay on the sending port, 1/16 tick
    input  wire [31:0]    cfg_cal_rx_cable,       // cable delay on this (receiving) port, 1/16 tick
    input  wire [31:0]    cfg_hist_base,          // lower edge of bin 0, 1/16 tick
    input  wire [4:0]     cfg_hist_shift,         // bin width = 2^shift (1/16 tick)
    input  wire [5:0]     cfg_hist_addr,          // bin shown in stat_hist_count
    input  wire [31:0]    cfg_sample_every,       // capture every Nth test frame (0 = off)

    // generator status
    output wire           stat_tx_busy,           // a run is in progress
    output wire [7:0]     stat_tx_error,          // why the last start was refused (bits, see docs)
    output wire [47:0]    stat_tx_seq_next,       // sequence number of the next frame

    // latency statistics (snapshot)
    output wire [31:0]    stat_lat_min,           // smallest latency, 1/16 tick (0xFFFFFFFF when none)
    output wire [31:0]    stat_lat_max,           // largest latency, 1/16 tick
    output wire [31:0]    stat_lat_last,          // latency of the latest test frame, 1/16 tick
    output wire [79:0]    stat_lat_sum,           // sum of latencies, 1/16 tick
    output wire [127:0]   stat_lat_sumsq,         // sum of squared latencies, (1/16 tick)^2
    output wire [47:0]    stat_hist_count,        // snapshot count of bin cfg_hist_addr
    output wire           stat_hist_busy,         // histogram snapshot/clear still being copied

    // samples
    output wire           stat_sample_valid,      // the last pop returned a sample
    output wire [47:0]    stat_sample_seq,        // sample: sequence number
    output wire [63:0]    stat_sample_rx_tick,    // sample: RX tick
    output wire [31:0]    stat_sample_latency,    // sample: latency, 1/16 tick
    output wire [15:0]    stat_sample_level,      // samples waiting

    // sequence tracker
    output wire [63:0]    stat_seq_lost,          // retired without being received
    output wire [47:0]    stat_seq_first_seq,     // first sequence number seen
    output wire [47:0]    stat_seq_highest_seq,   // highest sequence number seen + 1
    output wire [47:0]    stat_seq_oldest_seq,    // lowest sequence number still in the window
    output wire           stat_seq_started,       // a sequence number has been seen
    output wire           stat_seq_busy,          // work queued (flush or input not yet done)
    output wire           stat_seq_event_valid,   // the last pop returned an event
    output wire [47:0]    stat_seq_event_first,   // loss event: first lost sequence number
    output wire [31:0]    stat_seq_event_length,  // loss event: consecutive numbers lost
    output wire [15:0]    stat_seq_event_level,   // loss events waiting

    // event counters (fpgatest_counters, latched by ctl_snapshot; numbering below)
    input  wire [7:0]     cnt_rd_addr,            // counter shown on cnt_rd_data
    output wire [63:0]    cnt_rd_data,            // its snapshot value, one clock later
    output wire           stat_counters_busy      // snapshot still being written (22 clocks)
);

// the control pulses arrive from another clock's synchronizers: registered once here (every core
// sees them at the same edge, so a snapshot stays one instant) before they fan out
reg ctl_start_q, ctl_stop_q, ctl_clear_q, ctl_snapshot_q, ctl_sample_pop_q, ctl_flush_q, ctl_event_pop_q;
reg ctl_stats_clear_q, ctl_round_q;
always @(posedge clk) begin
    {ctl_start_q, ctl_stop_q, ctl_clear_q, ctl_snapshot_q, ctl_sample_pop_q, ctl_flush_q, ctl_event_pop_q} <=
        {ctl_start, ctl_stop, ctl_clear, ctl_snapshot, ctl_sample_pop, ctl_flush, ctl_event_pop};
    ctl_stats_clear_q <= ctl_clear | ctl_clear_stats;
    ctl_round_q <= ctl_snapshot | ctl_clear;      // the counters' new round (ctl_snapshot_q | ctl_clear_q)
end


wire        rx_valid, rx_first, rx_last, rx_err;
wire [7:0]  rx_data;
wire [23:0] rx_stamp;
wire        res_valid;
wire [47:0] res_seq;
wire [31:0] res_latency;
wire [63:0] res_rx_tick;
wire        gen_cnt_tx_frame;
wire [15:0] gen_cnt_tx_len;
wire        cdc_cnt_overflow;
wire        chk_cnt_rx_frame;
wire [15:0] chk_cnt_rx_len;
wire        chk_cnt_test;
wire        chk_cnt_fcs_error;
wire        chk_cnt_runt;
wire        chk_cnt_giant;
wire        chk_cnt_foreign;
wire        chk_cnt_other_stream;
wire        chk_cnt_lat_clamped;
wire        st_cnt_lat;
wire        st_cnt_hist_below;
wire        st_cnt_hist_above;
wire        st_cnt_sample_dropped, st_cnt_stats_overrun;
wire        trk_cnt_received;
wire        trk_cnt_late;
wire        trk_cnt_duplicate;
wire        trk_cnt_stale;
wire        trk_cnt_input_dropped;
wire        trk_cnt_event_dropped;

generate
if (WITH_TX) begin : tx

    fpgatest_gen gen_inst (
        .clk                 (clk),
        .rst                 (rst),
        .time_tick           (time_tick),
        .ctl_start           (ctl_start_q),
        .ctl_stop            (ctl_stop_q),
        .cfg_proto           (cfg_proto),
        .cfg_vlan_en         (cfg_vlan_en),
        .cfg_vlan_tci        (cfg_vlan_tci),
        .cfg_dst_mac         (cfg_dst_mac),
        .cfg_src_mac         (cfg_src_mac),
        .cfg_ethertype       (cfg_ethertype),
        .cfg_ip_ttl          (cfg_ip_ttl),
        .cfg_ip_tos          (cfg_ip_tos),
        .cfg_src_ip          (cfg_src_ip),
        .cfg_dst_ip          (cfg_dst_ip),
        .cfg_udp_src         (cfg_udp_src),
        .cfg_udp_dst         (cfg_udp_dst),
        .cfg_stream_id       (cfg_tx_stream_id),
        .cfg_seq_start       (cfg_seq_start),
        .cfg_size            (cfg_size),
        .cfg_ifg             (cfg_ifg),
        .cfg_ifg_frac_num    (cfg_ifg_frac_num),
        .cfg_ifg_frac_den    (cfg_ifg_frac_den),
        .cfg_burst_len       (cfg_burst_len),
        .cfg_burst_gap       (cfg_burst_gap),
        .cfg_count           (cfg_count),
        .gmii_txd            (gmii_txd),
        .gmii_tx_en          (gmii_tx_en),
        .gmii_tx_er          (gmii_tx_er),
        .stat_busy           (stat_tx_busy),
        .stat_error          (stat_tx_error),
        .stat_seq_next       (stat_tx_seq_next),
        .cnt_tx_frame        (gen_cnt_tx_frame),
        .cnt_tx_len          (gen_cnt_tx_len)
    );
end else begin : no_tx
    assign gmii_txd = 0;
    assign gmii_tx_en = 0;
    assign gmii_tx_er = 0;
    assign stat_tx_busy = 0;
    assign stat_tx_error = 0;
    assign stat_tx_seq_next = 0;
    assign gen_cnt_tx_frame = 0;
    assign gen_cnt_tx_len = 0;
end
endgenerate

generate
if (WITH_RX) begin : rx

    fpgatest_rx_cdc rx_cdc_inst (
        .clk                 (clk),
        .rst                 (rst),
        .time_tick           (time_tick),
        .rx_clk              (rx_clk),
        .rx_rst              (rx_rst),
        .gmii_rxd            (gmii_rxd),
        .gmii_rx_dv          (gmii_rx_dv),
        .gmii_rx_er          (gmii_rx_er),
        .m_valid             (rx_valid),
        .m_data              (rx_data),
        .m_first             (rx_first),
        .m_last              (rx_last),
        .m_err               (rx_err),
        .m_stamp             (rx_stamp),
        .cnt_overflow        (cdc_cnt_overflow)
    );

    fpgatest_checker checker_inst (
        .clk                 (clk),
        .rst                 (rst),
        .time_tick           (time_tick),
        .s_valid             (rx_valid),
        .s_data              (rx_data),
        .s_first             (rx_first),
        .s_last              (rx_last),
        .s_err               (rx_err),
        .s_stamp             (rx_stamp),
        .cfg_stream_id       (cfg_rx_stream_id),
        .cfg_max_size        (cfg_max_size),
        .cfg_cal_internal    (cfg_cal_internal),
        .cfg_cal_tx_cable    (cfg_cal_tx_cable),
        .cfg_cal_rx_cable    (cfg_cal_rx_cable),
        .res_valid           (res_valid),
        .res_seq             (res_seq),
        .res_latency         (res_latency),
        .res_rx_tick         (res_rx_tick),
        .cnt_rx_frame        (chk_cnt_rx_frame),
        .cnt_rx_len          (chk_cnt_rx_len),
        .cnt_test            (chk_cnt_test),
        .cnt_fcs_error       (chk_cnt_fcs_error),
        .cnt_runt            (chk_cnt_runt),
        .cnt_giant           (chk_cnt_giant),
        .cnt_foreign         (chk_cnt_foreign),
        .cnt_other_stream    (chk_cnt_other_stream),
        .cnt_lat_clamped     (chk_cnt_lat_clamped)
    );

    fpgatest_latency_stats stats_inst (
        .clk                 (clk),
        .rst                 (rst),
        .res_valid           (res_valid),
        .res_seq             (res_seq),
        .res_latency         (res_latency),
        .res_rx_tick         (res_rx_tick),
        .ctl_snapshot        (ctl_snapshot_q),
        .ctl_clear           (ctl_stats_clear_q),
        .ctl_sample_pop      (ctl_sample_pop_q),
        .cfg_hist_base       (cfg_hist_base),
        .cfg_hist_shift      (cfg_hist_shift),
        .cfg_hist_addr       (cfg_hist_addr),
        .cfg_sample_every    (cfg_sample_every),
        .stat_lat_min        (stat_lat_min),
        .stat_lat_max        (stat_lat_max),
        .stat_lat_last       (stat_lat_last),
        .stat_lat_sum        (stat_lat_sum),
        .stat_lat_sumsq      (stat_lat_sumsq),
        .stat_hist_count     (stat_hist_count),
        .stat_hist_busy      (stat_hist_busy),
        .stat_sample_valid   (stat_sample_valid),
        .stat_sample_seq     (stat_sample_seq),
        .stat_sample_rx_tick (stat_sample_rx_tick),
        .stat_sample_latency (stat_sample_latency),
        .stat_sample_level   (stat_sample_level),
        .cnt_lat             (st_cnt_lat),
        .cnt_hist_below      (st_cnt_hist_below),
        .cnt_hist_above      (st_cnt_hist_above),
        .cnt_sample_dropped  (st_cnt_sample_dropped),
        .cnt_stats_overrun   (st_cnt_stats_overrun)
    );

    fpgatest_seq_tracker tracker_inst (
        .clk                 (clk),
        .rst                 (rst),
        .in_valid            (res_valid),
        .in_seq              (res_seq),
        .ctl_snapshot        (ctl_snapshot_q),
        .ctl_clear           (ctl_clear_q),
        .ctl_flush           (ctl_flush_q),
        .ctl_event_pop       (ctl_event_pop_q),
        .stat_lost           (stat_seq_lost),
        .stat_first_seq      (stat_seq_first_seq),
        .stat_highest_seq    (stat_seq_highest_seq),
        .stat_oldest_seq     (stat_seq_oldest_seq),
        .stat_started        (stat_seq_started),
        .stat_busy           (stat_seq_busy),
        .stat_event_valid    (stat_seq_event_valid),
        .stat_event_first    (stat_seq_event_first),
        .stat_event_length   (stat_seq_event_length),
        .stat_event_level    (stat_seq_event_level),
        .cnt_received        (trk_cnt_received),
        .cnt_late            (trk_cnt_late),
        .cnt_duplicate       (trk_cnt_duplicate),
        .cnt_stale           (trk_cnt_stale),
        .cnt_input_dropped   (trk_cnt_input_dropped),
        .cnt_event_dropped   (trk_cnt_event_dropped)
    );
end else begin : no_rx
    assign cdc_cnt_overflow = 0;
    assign chk_cnt_rx_frame = 0;
    assign chk_cnt_rx_len = 0;
    assign chk_cnt_test = 0;
    assign chk_cnt_fcs_error = 0;
    assign chk_cnt_runt = 0;
    assign chk_cnt_giant = 0;
    assign chk_cnt_foreign = 0;
    assign chk_cnt_other_stream = 0;
    assign chk_cnt_lat_clamped = 0;
    assign stat_lat_min = 0;
    assign stat_lat_max = 0;
    assign stat_lat_last = 0;
    assign stat_lat_sum = 0;
    assign stat_lat_sumsq = 0;
    assign stat_hist_count = 0;
    assign stat_hist_busy = 0;
    assign stat_sample_valid = 0;
    assign stat_sample_seq = 0;
    assign stat_sample_rx_tick = 0;
    assign stat_sample_latency = 0;
    assign stat_sample_level = 0;
    assign st_cnt_lat = 0;
    assign st_cnt_hist_below = 0;
    assign st_cnt_hist_above = 0;
    assign st_cnt_sample_dropped = 0;
    assign st_cnt_stats_overrun = 0;
    assign stat_seq_lost = 0;
    assign stat_seq_first_seq = 0;
    assign stat_seq_highest_seq = 0;
    assign stat_seq_oldest_seq = 0;
    assign stat_seq_started = 0;
    assign stat_seq_busy = 0;
    assign stat_seq_event_valid = 0;
    assign stat_seq_event_first = 0;
    assign stat_seq_event_length = 0;
    assign stat_seq_event_level = 0;
    assign trk_cnt_received = 0;
    assign trk_cnt_late = 0;
    assign trk_cnt_duplicate = 0;
    assign trk_cnt_stale = 0;
    assign trk_cnt_input_dropped = 0;
    assign trk_cnt_event_dropped = 0;
end
endgenerate

// event counters, numbered as in the table above (bit/slice i = counter i)
localparam N_COUNTERS = 23;

fpgatest_counters #(
    .N         (N_COUNTERS),
    .PENDING_W (16),
    .WIDE_MASK (23'b00000000000000000001010)  // tx_bytes, rx_bytes
) counters_inst (
    .clk          (clk),
    .rst          (rst),
    .inc_valid    ({st_cnt_stats_overrun, cdc_cnt_overflow, trk_cnt_event_dropped, trk_cnt_input_dropped, trk_cnt_stale, trk_cnt_duplicate, trk_cnt_late, trk_cnt_received, st_cnt_sample_dropped, st_cnt_hist_above, st_cnt_hist_below, st_cnt_lat, chk_cnt_lat_clamped, chk_cnt_other_stream, chk_cnt_foreign, chk_cnt_giant, chk_cnt_runt, chk_cnt_fcs_error, chk_cnt_test, chk_cnt_rx_frame, chk_cnt_rx_frame, gen_cnt_tx_frame, gen_cnt_tx_frame}),
    .inc_amount   ({16'd1,
                      16'd1,
                      16'd1,
                      16'd1,
                      16'd1,
                      16'd1,
                      16'd1,
                      16'd1,
                      16'd1,
                      16'd1,
                      16'd1,
                      16'd1,
                      16'd1,
                      16'd1,
                      16'd1,
                      16'd1,
                      16'd1,
                      16'd1,
                      16'd1,
                      chk_cnt_rx_len,
                      16'd1,
                      gen_cnt_tx_len,
                      16'd1}),
    .ctl_snapshot (ctl_snapshot_q),
    .ctl_clear    (ctl_clear_q),
    .ctl_round    (ctl_round_q),
    .rd_addr      (cnt_rd_addr),
    .rd_data      (cnt_rd_data),
    .stat_busy    (stat_counters_busy)
);

endmodule

`resetall
