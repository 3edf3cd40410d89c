// SPDX-License-Identifier: BSD-2-Clause
// fpgatest_port: one full-duplex tester port: generator on TX; RX time stamping, checker, latency statistics and sequence tracker on RX.

`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * Board-independent. The time base is shared by all ports of a tester (fpgatest_timebase) and
 * comes in as time_tick. litex_soc/ turns every cfg_* into a CSRStorage, every stat_* into a
 * CSRStatus and the ctl_* pulses into one control register, with the comments below as their
 * descriptions, so this port list is the register contract.
 */
module fpgatest_port (
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
    input  wire           ctl_clear,              // clear the counters (pulse)
    input  wire           ctl_snapshot,           // latch every counter (pulse)
    input  wire           ctl_sample_pop,         // move the oldest sample to stat_sample_* (pulse)
    input  wire           ctl_flush,              // retire the whole window: pending gaps become lost (pulse)
    input  wire           ctl_event_pop,          // move the oldest loss event to stat_event_* (pulse)

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
    input  wire [63:0]    cfg_count,              // frames to send (0 = until stopped)

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
    output wire [63:0]    stat_tx_frames,         // frames sent (snapshot)
    output wire [63:0]    stat_tx_bytes,          // bytes sent, frame bytes incl. FCS, excl. preamble (snapshot)
    output wire [47:0]    stat_tx_seq_next,       // sequence number of the next frame

    // checker status
    output wire [63:0]    stat_rx_frames,         // every frame seen
    output wire [63:0]    stat_rx_bytes,          // bytes of every frame seen (incl. FCS)
    output wire [63:0]    stat_test_frames,       // good frames of the test stream
    output wire [63:0]    stat_fcs_errors,        // FCS wrong or rx_er
    output wire [63:0]    stat_runts,             // shorter than 64 bytes
    output wire [63:0]    stat_giants,            // longer than cfg_max_size
    output wire [63:0]    stat_foreign,           // good frames without a valid signature
    output wire [63:0]    stat_other_stream,      // good signed frames of another stream id
    output wire [63:0]    stat_lat_clamped,       // test frames whose latency was clamped (<0 or too big)
    output wire [63:0]    stat_lat_count,         // test frames measured
    output wire [31:0]    stat_lat_min,           // smallest latency, 1/16 tick (0xFFFFFFFF when none)
    output wire [31:0]    stat_lat_max,           // largest latency, 1/16 tick
    output wire [31:0]    stat_lat_last,          // latency of the latest test frame, 1/16 tick
    output wire [79:0]    stat_lat_sum,           // sum of latencies, 1/16 tick
    output wire [127:0]   stat_lat_sumsq,         // sum of squared latencies, (1/16 tick)^2
    output wire [63:0]    stat_hist_below,        // latencies below the histogram base
    output wire [63:0]    stat_hist_above,        // latencies beyond bin 63
    output wire [47:0]    stat_hist_count,        // snapshot count of bin cfg_hist_addr
    output wire           stat_hist_busy,         // histogram snapshot/clear still being copied
    output wire           stat_sample_valid,      // the last pop returned a sample
    output wire [47:0]    stat_sample_seq,        // sample: sequence number
    output wire [63:0]    stat_sample_rx_tick,    // sample: RX tick
    output wire [31:0]    stat_sample_latency,    // sample: latency, 1/16 tick
    output wire [15:0]    stat_sample_level,      // samples waiting
    output wire [31:0]    stat_sample_dropped,    // samples lost to a full FIFO
    output wire [31:0]    stat_rx_fifo_overflow,  // frames damaged by a full FIFO

    // sequence tracker status
    output wire [63:0]    stat_seq_received,      // distinct sequence numbers received
    output wire [63:0]    stat_seq_lost,          // retired without being received
    output wire [63:0]    stat_seq_late,          // received after a higher one (reordered)
    output wire [63:0]    stat_seq_duplicate,     // received again inside the window
    output wire [63:0]    stat_seq_stale,         // older than the window
    output wire [47:0]    stat_seq_first_seq,     // first sequence number seen
    output wire [47:0]    stat_seq_highest_seq,   // highest sequence number seen + 1
    output wire [47:0]    stat_seq_oldest_seq,    // lowest sequence number still in the window
    output wire           stat_seq_started,       // a sequence number has been seen
    output wire           stat_seq_busy,          // work queued (flush or input not yet done)
    output wire [31:0]    stat_seq_input_dropped, // sequence numbers lost to a full input queue
    output wire           stat_seq_event_valid,   // the last pop returned an event
    output wire [47:0]    stat_seq_event_first,   // loss event: first lost sequence number
    output wire [31:0]    stat_seq_event_length,  // loss event: consecutive numbers lost
    output wire [15:0]    stat_seq_event_level,   // loss events waiting
    output wire [31:0]    stat_seq_event_dropped  // events lost to a full event FIFO
);

wire        rx_valid, rx_first, rx_last, rx_err;
wire [7:0]  rx_data;
wire [23:0] rx_stamp;
wire        res_valid;
wire [47:0] res_seq;
wire [31:0] res_latency;
wire [63:0] res_rx_tick;

fpgatest_gen gen_inst (
    .clk                 (clk),
    .rst                 (rst),
    .time_tick           (time_tick),
    .ctl_start           (ctl_start),
    .ctl_stop            (ctl_stop),
    .ctl_clear           (ctl_clear),
    .ctl_snapshot        (ctl_snapshot),
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
    .stat_tx_frames      (stat_tx_frames),
    .stat_tx_bytes       (stat_tx_bytes),
    .stat_seq_next       (stat_tx_seq_next)
);

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
    .stat_overflow       (stat_rx_fifo_overflow)
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
    .ctl_snapshot        (ctl_snapshot),
    .ctl_clear           (ctl_clear),
    .cfg_stream_id       (cfg_rx_stream_id),
    .cfg_max_size        (cfg_max_size),
    .cfg_cal_internal    (cfg_cal_internal),
    .cfg_cal_tx_cable    (cfg_cal_tx_cable),
    .cfg_cal_rx_cable    (cfg_cal_rx_cable),
    .res_valid           (res_valid),
    .res_seq             (res_seq),
    .res_latency         (res_latency),
    .res_rx_tick         (res_rx_tick),
    .stat_rx_frames      (stat_rx_frames),
    .stat_rx_bytes       (stat_rx_bytes),
    .stat_test_frames    (stat_test_frames),
    .stat_fcs_errors     (stat_fcs_errors),
    .stat_runts          (stat_runts),
    .stat_giants         (stat_giants),
    .stat_foreign        (stat_foreign),
    .stat_other_stream   (stat_other_stream),
    .stat_lat_clamped    (stat_lat_clamped)
);

fpgatest_latency_stats stats_inst (
    .clk                 (clk),
    .rst                 (rst),
    .res_valid           (res_valid),
    .res_seq             (res_seq),
    .res_latency         (res_latency),
    .res_rx_tick         (res_rx_tick),
    .ctl_snapshot        (ctl_snapshot),
    .ctl_clear           (ctl_clear),
    .ctl_sample_pop      (ctl_sample_pop),
    .cfg_hist_base       (cfg_hist_base),
    .cfg_hist_shift      (cfg_hist_shift),
    .cfg_hist_addr       (cfg_hist_addr),
    .cfg_sample_every    (cfg_sample_every),
    .stat_lat_count      (stat_lat_count),
    .stat_lat_min        (stat_lat_min),
    .stat_lat_max        (stat_lat_max),
    .stat_lat_last       (stat_lat_last),
    .stat_lat_sum        (stat_lat_sum),
    .stat_lat_sumsq      (stat_lat_sumsq),
    .stat_hist_below     (stat_hist_below),
    .stat_hist_above     (stat_hist_above),
    .stat_hist_count     (stat_hist_count),
    .stat_hist_busy      (stat_hist_busy),
    .stat_sample_valid   (stat_sample_valid),
    .stat_sample_seq     (stat_sample_seq),
    .stat_sample_rx_tick (stat_sample_rx_tick),
    .stat_sample_latency (stat_sample_latency),
    .stat_sample_level   (stat_sample_level),
    .stat_sample_dropped (stat_sample_dropped)
);

fpgatest_seq_tracker tracker_inst (
    .clk                 (clk),
    .rst                 (rst),
    .in_valid            (res_valid),
    .in_seq              (res_seq),
    .ctl_snapshot        (ctl_snapshot),
    .ctl_clear           (ctl_clear),
    .ctl_flush           (ctl_flush),
    .ctl_event_pop       (ctl_event_pop),
    .stat_received       (stat_seq_received),
    .stat_lost           (stat_seq_lost),
    .stat_late           (stat_seq_late),
    .stat_duplicate      (stat_seq_duplicate),
    .stat_stale          (stat_seq_stale),
    .stat_first_seq      (stat_seq_first_seq),
    .stat_highest_seq    (stat_seq_highest_seq),
    .stat_oldest_seq     (stat_seq_oldest_seq),
    .stat_started        (stat_seq_started),
    .stat_busy           (stat_seq_busy),
    .stat_input_dropped  (stat_seq_input_dropped),
    .stat_event_valid    (stat_seq_event_valid),
    .stat_event_first    (stat_seq_event_first),
    .stat_event_length   (stat_seq_event_length),
    .stat_event_level    (stat_seq_event_level),
    .stat_event_dropped  (stat_seq_event_dropped)
);

endmodule

`resetall
