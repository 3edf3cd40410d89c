// SPDX-License-Identifier: BSD-2-Clause
// fpgatest_port: one full-duplex tester port: generator on TX; RX time stamping and checker on RX; per-frame engines behind a record FIFO.

`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * Board-independent. The time base is shared by all ports of a tester (fpgatest_timebase) and
 * comes in as time_tick. litex_soc/ turns every cfg_* into a CSRStorage, every stat_* into a
 * CSRStatus and the ctl_* pulses into one control register, with the comments below as their
 * descriptions, so this port list is the register contract. The event counters live in RAM
 * (fpgatest_counters) and are read through cnt_rd_addr/cnt_rd_data. WITH_TX / WITH_RX leave out
 * a direction where a device has no room for both (the register map stays the same).
 *
 * Two clocks. Only what must run per byte is in the tester clock (clk, 125 MHz): the generator,
 * the RX clock crossing and the checker. What they produce once per frame (a frame sent, a frame
 * received and its class, a test frame's sequence number and latency) and the snapshot, clear and
 * flush markers go as one record per tester clock through a dual-clock FIFO (gray pointers, 15 entries) to the
 * per-frame engines in eng_clk (the CSR clock on a board): latency statistics, histogram, samples,
 * sequence tracker and event counters. The engines take a record only when every engine it concerns
 * is ready (valid/ready, no assumed spacing); a record that finds the FIFO full is lost and counted
 * (record_dropped), a marker is delayed until it fits, never lost. Markers travel in order with the
 * records, so a snapshot holds exactly what happened in the tester clock before its edge. Bounds:
 * the wire gives at most four records per 84 tester clocks (the SFD of a frame sent, the end of a
 * frame received, its result, the reflector's drop of it), the engines take one per two engine clocks when nothing is busy, a
 * result in 5 engine clocks (longer while the histogram copies its bins: fpgatest_latency_stats
 * holds its ready low then), and wait at most one counter round (N + 3 clocks) and one result for a
 * marker.
 * Port signals marked "engine clock" belong to eng_clk; all others to clk. Pulses marked "marker"
 * travel to the engines as markers in the record stream.
 *
 * A port with both directions has a reflector (REFLECT_LOG2 > 0: fpgatest_reflector, a ring of
 * 2^REFLECT_LOG2 bytes). cfg_reflect bits:
 *   REFLECT_ON   frames addressed to cfg_src_mac go back out of the port, addresses swapped, echo
 *                requests answered, so the port is the far end of another port's (or another
 *                tester's) single-ended measurement; the generator refuses to start (ERR_REFLECT);
 *   REFLECT_ARP  ARP requests for cfg_src_ip[31:0] are answered;
 *   REFLECT_ND   IPv6 neighbour solicitations for cfg_src_ip are answered;
 * so that a router or host in front of the port finds it as a neighbour of its own. With ARP or ND
 * alone the generator runs; an answer waits for the end of its run, and a start while an answer is
 * held is refused (ERR_REFLECT). Reflected frames and answers count as frames sent. A port without
 * a reflector keeps REFLECT_ON's refusal only.
 *
 * Numbering of the event counters:
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
 *   22  record_dropped     per-frame records lost to a full record FIFO (their events are missing)
 *   23  reflect_dropped    frames the reflector was to send back that found its ring or queue full
 *   24  mgmt_frames        good frames without a signature to MGMT_MAC, or broadcast ARP for MGMT_IP (not foreign)
 *
 * Management. A build with Etherbone on this port (litex_soc/management.py) gives the core's MAC
 * and IPv4 address as MGMT_MAC and MGMT_IP: the checker counts the host's frames to it, and its
 * broadcast ARP requests for the core's address, apart (mgmt_frames), and the core's
 * replies take the transmitter between frames: while tx_hold is set neither the generator nor the
 * reflector starts a frame (the generator's gap stretches, as for a closed window; what it sends
 * is not otherwise changed, and its TX stamps stay those of its own SFDs).
 */
module fpgatest_port #(
    parameter WITH_TX = 1,   // 0: no generator (its outputs read 0)
    parameter WITH_RX = 1,   // 0: no receive side (checker, statistics, tracker read 0)
    parameter REFLECT_LOG2 = 0,  // > 0 (with both directions): a reflector with a ring of 2^REFLECT_LOG2 bytes
    parameter [47:0] MGMT_MAC = 48'd0, // not 0: the MAC of a management core (Etherbone) beside this port
    parameter [31:0] MGMT_IP = 32'd0   // and its IPv4 address (0: ARP frames are not told apart)
) (
    // clocks and time
    input  wire           clk,
    input  wire           rst,
    input  wire [63:0]    time_tick,
    input  wire           rx_clk,
    input  wire           rx_rst,
    input  wire           eng_clk,                // the per-frame engines' clock
    input  wire           eng_rst,

    // GMII
    output wire [7:0]     gmii_txd,
    output wire           gmii_tx_en,
    output wire           gmii_tx_er,
    input  wire           tx_hold,                // no frame starts while set (a management frame takes the wire)
    input  wire [7:0]     gmii_rxd,
    input  wire           gmii_rx_dv,
    input  wire           gmii_rx_er,

    // control (pulses)
    input  wire           ctl_start,              // start a run with the current settings (pulse)
    input  wire           ctl_stop,               // stop after the frame on the wire (pulse)
    input  wire           ctl_clear,              // clear every counter and statistic (pulse, marker)
    input  wire           ctl_snapshot,           // latch every counter (pulse, marker)
    input  wire           ctl_sample_pop,         // move the oldest sample to stat_sample_* (pulse, engine clock)
    input  wire           ctl_flush,              // retire the whole window: pending gaps become lost (pulse, marker)
    input  wire           ctl_event_pop,          // move the oldest loss event to stat_event_* (pulse, engine clock)
    input  wire           ctl_clear_stats,        // clear the scalar latency statistics and the latency samples only (pulse, marker)
    input  wire           ctl_clear_hist,         // clear the latency histogram only (pulse, marker)
    input  wire [1:0]     eng_marker_sent,        // clears, snapshots or flushes set off on their way to clk at this edge, each at an edge of its own (count, engine clock)

    // generator configuration
    input  wire [1:0]     cfg_proto,              // 0 raw Ethernet, 1 IPv4/UDP, 2 IPv6/UDP
    input  wire           cfg_icmp,               // IPv4/IPv6: an ICMP echo request instead of UDP
    input  wire           cfg_vlan_en,            // insert an 802.1Q tag
    input  wire [15:0]    cfg_vlan_tci,           // 802.1Q tag control (PCP, DEI, VID)
    input  wire [47:0]    cfg_dst_mac,            // destination MAC
    input  wire [47:0]    cfg_src_mac,            // source MAC
    input  wire [15:0]    cfg_ethertype,          // EtherType of raw Ethernet frames
    input  wire [7:0]     cfg_ip_ttl,             // IPv4 TTL / IPv6 hop limit
    input  wire [7:0]     cfg_ip_tos,             // IPv4 TOS / IPv6 traffic class
    input  wire [127:0]   cfg_src_ip,             // source address (IPv4 in the low 32 bits)
    input  wire [127:0]   cfg_dst_ip,             // destination address (IPv4 in the low 32 bits)
    input  wire [15:0]    cfg_udp_src,            // UDP source port / ICMP echo identifier
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
    input  wire [1:0]     cfg_win_mode,           // frames without a reply: 0 unlimited, 1 fixed window, 2 Reno-like window
    input  wire [15:0]    cfg_win_size,           // fixed window / Reno's first window, frames
    input  wire [15:0]    cfg_win_max,            // Reno's largest window and first ssthresh, frames
    input  wire [31:0]    cfg_win_timeout,        // ticks without a reply before every frame in flight counts as lost (0 = never)
    input  wire [2:0]     cfg_reflect,            // the reflector's bits: REFLECT_ON (frames to cfg_src_mac sent back; the generator refuses to start), REFLECT_ARP, REFLECT_ND (answered for cfg_src_ip)

    // checker configuration
    input  wire [15:0]    cfg_rx_stream_id,       // stream id counted as the test stream
    input  wire [15:0]    cfg_max_size,           // largest frame that is not a giant (bytes incl. FCS)
    input  wire [31:0]    cfg_cal_internal,       // tester internal delay, 1/16 tick
    input  wire [31:0]    cfg_cal_tx_cable,       // cable delay on the sending port, 1/16 tick
    input  wire [31:0]    cfg_cal_rx_cable,       // cable delay on this (receiving) port, 1/16 tick
    input  wire [31:0]    cfg_hist_base,          // lower edge of bin 0, 1/16 tick (engine clock)
    input  wire [4:0]     cfg_hist_shift,         // bin unit = 2^shift, 1/16 tick (engine clock)
    input  wire           cfg_hist_log,           // 0: linear bins, one unit each; 1: logarithmic, four an octave up to 2^17 units (fpgatest_latency_stats; engine clock)
    input  wire [5:0]     cfg_hist_addr,          // bin shown in stat_hist_count (engine clock)
    input  wire [31:0]    cfg_sample_every,       // capture every Nth test frame, 0 = off (engine clock)

    // snapshot status (engine clock): the first stat_* registers, so that a read in address order
    // that finds them low reads a whole snapshot after them
    output wire           stat_counters_busy,     // counters still being latched (a marker in flight, the tracker's part, then the round)
    output wire           stat_hist_busy,         // histogram: a marker on its way, or its queue or engine at work (a copy, or a result binning)
    output wire           stat_seq_busy,          // tracker work queued (a snapshot's barrier, a flush or input not yet done)

    // generator status
    output wire           stat_tx_busy,           // a run is in progress
    output wire [7:0]     stat_tx_error,          // why the last start was refused (bits, see docs)
    output wire [47:0]    stat_tx_seq_next,       // sequence number of the next frame
    output wire [15:0]    stat_win_cwnd,          // window at the last snapshot, frames
    output wire [47:0]    stat_win_lost,          // frames the window took as lost (skipped by a reply or timed out), at the last snapshot
    output wire [31:0]    stat_win_cuts,          // Reno window cuts for a loss, at the last snapshot
    output wire [31:0]    stat_win_timeouts,      // window timeouts, at the last snapshot

    // latency statistics (snapshot; this and everything below: engine clock)
    output wire [31:0]    stat_lat_min,           // smallest latency, 1/16 tick (0xFFFFFFFF when none)
    output wire [31:0]    stat_lat_max,           // largest latency, 1/16 tick
    output wire [31:0]    stat_lat_last,          // latency of the latest test frame, 1/16 tick
    output wire [79:0]    stat_lat_sum,           // sum of latencies, 1/16 tick
    output wire [127:0]   stat_lat_sumsq,         // sum of squared latencies, (1/16 tick)^2
    output wire [79:0]    stat_jit_sum,           // sum of absolute latency changes between consecutive test frames, 1/16 tick
    output wire [31:0]    stat_jit_max,           // largest absolute latency change between consecutive test frames, 1/16 tick
    output wire [47:0]    stat_hist_count,        // snapshot count of bin cfg_hist_addr

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
    output wire           stat_seq_event_valid,   // the last pop returned an event
    output wire [47:0]    stat_seq_event_first,   // loss event: first lost sequence number
    output wire [31:0]    stat_seq_event_length,  // loss event: consecutive numbers lost
    output wire [15:0]    stat_seq_event_level,   // loss events waiting

    // event counters (fpgatest_counters, latched by ctl_snapshot; numbering below)
    input  wire [7:0]     cnt_rd_addr,            // counter shown on cnt_rd_data
    output wire [63:0]    cnt_rd_data             // its snapshot value, one clock later
);

// the control pulses arrive from another clock's synchronizer: registered once here, so every core
// sees them at the same edge and a snapshot stays one instant
reg ctl_start_q, ctl_stop_q, ctl_snapshot_q, ctl_clear_q, ctl_clear_stats_q, ctl_clear_hist_q, ctl_flush_q;
always @(posedge clk) begin
    {ctl_start_q, ctl_stop_q, ctl_snapshot_q, ctl_clear_q, ctl_clear_stats_q, ctl_clear_hist_q, ctl_flush_q} <=
        {ctl_start, ctl_stop, ctl_snapshot, ctl_clear, ctl_clear_stats, ctl_clear_hist, ctl_flush};
end

// cfg_reflect's bits (the host reads them as FPGATEST_REFLECT_ON/ARP/ND masks from csr.json)
localparam REFLECT_ON_BIT = 0, REFLECT_ARP_BIT = 1, REFLECT_ND_BIT = 2;
// tx_hold: a frame that starts while it is set had been decided before it rose, and its first
// tx_en clock comes fewer than TX_HOLD_CLOCKS clocks after the rise (sim/gen: at most 4); whoever
// holds the wire waits that long, and MIN_GAP idle clocks, before it sends (litex_soc/management.py)
localparam TX_HOLD_CLOCKS = 16;

// =============================================================================================
// tester clock: generator, RX clock crossing, checker
// =============================================================================================
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
wire        chk_cnt_test, chk_cnt_fcs_error, chk_cnt_runt, chk_cnt_giant;
wire        chk_cnt_foreign, chk_cnt_mgmt, chk_cnt_other_stream, chk_cnt_lat_clamped;
wire        win_open, win_error;
wire        refl_busy, refl_cnt_tx_frame, refl_cnt_dropped;
wire [15:0] refl_cnt_tx_len;
wire [7:0]  gen_txd, refl_txd;
wire        gen_tx_en, refl_tx_en;

// the echo window: the generator and the checker of this port (both in clk); a port without both
// directions has none and refuses a window mode
generate
if (WITH_TX && WITH_RX) begin : window

    fpgatest_window window_inst (
        .clk                 (clk),
        .rst                 (rst),
        .cfg_mode            (cfg_win_mode),
        .cfg_size            (cfg_win_size),
        .cfg_max             (cfg_win_max),
        .cfg_timeout         (cfg_win_timeout),
        .cfg_seq_start       (cfg_seq_start),
        .tx_busy             (stat_tx_busy),
        .tx_seq_next         (stat_tx_seq_next),
        .res_valid           (res_valid),
        .res_seq             (res_seq),
        .ctl_snapshot        (ctl_snapshot_q),
        .win_open            (win_open),
        .win_error           (win_error),
        .stat_cwnd           (stat_win_cwnd),
        .stat_lost           (stat_win_lost),
        .stat_cuts           (stat_win_cuts),
        .stat_timeouts       (stat_win_timeouts)
    );
end else begin : no_window
    assign win_open = 1'b1;
    assign win_error = cfg_win_mode != 2'd0;
    assign stat_win_cwnd = 0;
    assign stat_win_lost = 0;
    assign stat_win_cuts = 0;
    assign stat_win_timeouts = 0;
end
endgenerate

generate
if (WITH_TX) begin : tx

    fpgatest_gen gen_inst (
        .clk                 (clk),
        .rst                 (rst),
        .time_tick           (time_tick),
        .ctl_start           (ctl_start_q),
        .ctl_stop            (ctl_stop_q),
        .cfg_proto           (cfg_proto),
        .cfg_icmp            (cfg_icmp),
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
        .win_open            (win_open && !tx_hold),
        .win_error           (win_error),
        .tx_taken            (cfg_reflect[REFLECT_ON_BIT] || refl_busy),
        .gmii_txd            (gen_txd),
        .gmii_tx_en          (gen_tx_en),
        .gmii_tx_er          (gmii_tx_er),
        .stat_busy           (stat_tx_busy),
        .stat_error          (stat_tx_error),
        .stat_seq_next       (stat_tx_seq_next),
        .cnt_tx_frame        (gen_cnt_tx_frame),
        .cnt_tx_len          (gen_cnt_tx_len)
    );
end else begin : no_tx
    assign gen_txd = 0;
    assign gen_tx_en = 0;
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

    fpgatest_checker #(.MGMT_MAC(MGMT_MAC), .MGMT_IP(MGMT_IP)) checker_inst (
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
        .cnt_mgmt            (chk_cnt_mgmt),
        .cnt_other_stream    (chk_cnt_other_stream),
        .cnt_lat_clamped     (chk_cnt_lat_clamped)
    );
end else begin : no_rx
    assign cdc_cnt_overflow = 0;
    assign res_valid = 0;
    assign res_seq = 0;
    assign res_latency = 0;
    assign res_rx_tick = 0;
    assign chk_cnt_rx_frame = 0;
    assign chk_cnt_rx_len = 0;
    assign chk_cnt_test = 0;
    assign chk_cnt_fcs_error = 0;
    assign chk_cnt_runt = 0;
    assign chk_cnt_giant = 0;
    assign chk_cnt_foreign = 0;
    assign chk_cnt_mgmt = 0;
    assign chk_cnt_other_stream = 0;
    assign chk_cnt_lat_clamped = 0;
end
endgenerate

// the reflector: the received bytes beside the checker, its frames on the transmitter while the
// generator is idle (each leaves the wire to the other between frames)
generate
if (WITH_TX && WITH_RX && REFLECT_LOG2 > 0) begin : reflect

    fpgatest_reflector #(.BUF_LOG2(REFLECT_LOG2)) reflector_inst (
        .clk                 (clk),
        .rst                 (rst),
        .cfg_on              (cfg_reflect[REFLECT_ON_BIT]),
        .cfg_arp             (cfg_reflect[REFLECT_ARP_BIT]),
        .cfg_nd              (cfg_reflect[REFLECT_ND_BIT]),
        .cfg_mac             (cfg_src_mac),
        .cfg_ip              (cfg_src_ip),
        .s_valid             (rx_valid),
        .s_data              (rx_data),
        .s_first             (rx_first),
        .s_last              (rx_last),
        .s_err               (rx_err),
        .gen_busy            (stat_tx_busy),
        .gen_tx_en           (gen_tx_en),
        .tx_hold             (tx_hold),
        .gmii_txd            (refl_txd),
        .gmii_tx_en          (refl_tx_en),
        .busy                (refl_busy),
        .cnt_tx_frame        (refl_cnt_tx_frame),
        .cnt_tx_len          (refl_cnt_tx_len),
        .cnt_dropped         (refl_cnt_dropped)
    );
end else begin : no_reflect
    assign refl_txd = 0;
    assign refl_tx_en = 0;
    assign refl_busy = 0;
    assign refl_cnt_tx_frame = 0;
    assign refl_cnt_tx_len = 0;
    assign refl_cnt_dropped = 0;
end
endgenerate

// (each sends 0 while idle)
assign gmii_txd = gen_txd | refl_txd;
assign gmii_tx_en = gen_tx_en || refl_tx_en;
wire        tx_frame = gen_cnt_tx_frame || refl_cnt_tx_frame;
wire [15:0] tx_len = gen_cnt_tx_frame ? gen_cnt_tx_len : refl_cnt_tx_len;

// =============================================================================================
// the record FIFO: what happened in one tester clock, in order, to the engine clock
// =============================================================================================
// a record (most significant field first)
//   marks     2  marker edges it carries (0..3; more than one only when some were delayed: by a full
//                 FIFO, or held back from a record with a result)
//   snapshot, clear, clear_stats, clear_hist, flush     1 each: the markers
//   lost      8  records lost to a full FIFO so far, modulo 256 (the engine side counts the
//                 difference to the last record it took: exact while fewer than 256 records are
//                 lost between two that get through)
//   tx, tx_len          1 + 16  a frame's SFD went out; its size in bytes
//   rx, rx_len          1 + 16  a frame ended; its size in bytes; its class:
//   test, fcs_error, runt, giant, foreign, other_stream, mgmt       1 each
//   overflow            1       a frame was damaged by a full RX crossing FIFO
//   reflect_dropped     1       a frame to be reflected found no room
//   res, lat_clamped    1 + 1   a test frame's result (and its latency was clamped):
//   seq, latency, rx_tick       48 + 32 + 64
localparam RW = 2 + 5 + 8 + 17 + 17 + 7 + 1 + 1 + 2 + 48 + 32 + 64;
// bits of single fields, and the top bit of the lost total
localparam R_RES = 64 + 32 + 48 + 1, R_REFLECT_DROPPED = R_RES + 1, R_OVERFLOW = R_RES + 2;
localparam R_SNAPSHOT = RW - 3, R_CLEAR = RW - 4, R_LOST = RW - 8, R_TX = R_LOST - 8, R_RX = R_TX - 17;

// The record is formed in one clock (a_*) and written in the next, so the FIFO's write enable is
// a flip-flop. A record that finds the FIFO full gives back its markers (sent again with the next
// record: a marker is delayed, never lost) and, if it carried events, counts as lost.
// A record with a test frame's result carries no marker: the engine counts the frame when it takes
// the record but adds its latency to the statistics five clocks later, so a marker there would split
// the two. Its markers wait for the next record, one tester clock later (results are a frame apart).
wire          mark_now = ctl_snapshot_q || ctl_clear_q || ctl_clear_stats_q || ctl_clear_hist_q || ctl_flush_q;
wire          w_events = tx_frame || chk_cnt_rx_frame || cdc_cnt_overflow || refl_cnt_dropped || res_valid;
reg  [1:0]    mark_n_reg;                  // markers given back or held, waiting to be sent ...
reg  [4:0]    mark_bits_reg;               // ... and which ones
reg  [7:0]    lost_reg = 8'd0;             // records with events lost so far (modulo 256; never reset,
                                           // so that it and the engine side's copy stay a pair)
wire          a_en = w_events || mark_now || mark_n_reg != 2'd0;
wire [1:0]    m_n = mark_n_reg == 2'd3 ? 2'd3 : mark_n_reg + mark_now;      // markers due now ...
wire [4:0]    m_bits = mark_bits_reg | {ctl_snapshot_q, ctl_clear_q, ctl_clear_stats_q, ctl_clear_hist_q, ctl_flush_q};

reg           a_valid_reg;
reg  [RW-1:0] a_data_reg;
wire          w_full;
wire [1:0]    a_marks = a_data_reg[RW-1:RW-2];
wire [4:0]    a_mark_bits = a_data_reg[RW-3:RW-7];
wire          a_events = a_data_reg[R_TX] || a_data_reg[R_RX] || a_data_reg[R_RES] || a_data_reg[R_OVERFLOW]
                      || a_data_reg[R_REFLECT_DROPPED];
wire          a_fail = a_valid_reg && w_full;

wire [1:0]    h_n = res_valid ? m_n : 2'd0;                             // ... held back from this record
wire [4:0]    h_bits = res_valid ? m_bits : 5'd0;
wire [2:0]    back_n = {1'b0, h_n} + {1'b0, a_fail ? a_marks : 2'd0};

always @(posedge clk) begin
    a_valid_reg <= a_en;
    a_data_reg <= {res_valid ? 2'd0 : m_n,
                   res_valid ? 5'd0 : m_bits,
                   lost_reg,
                   tx_frame, tx_len,
                   chk_cnt_rx_frame, chk_cnt_rx_len,
                   chk_cnt_test, chk_cnt_fcs_error, chk_cnt_runt, chk_cnt_giant, chk_cnt_foreign,
                   chk_cnt_other_stream, chk_cnt_mgmt, cdc_cnt_overflow, refl_cnt_dropped,
                   res_valid, chk_cnt_lat_clamped, res_seq, res_latency, res_rx_tick};
    // markers a new record takes along start again from zero; those it holds back stay, and a
    // failed record gives its back
    mark_n_reg <= back_n[2] ? 2'd3 : back_n[1:0];
    mark_bits_reg <= h_bits | (a_fail ? a_mark_bits : 5'd0);
    if (a_fail && a_events)
        lost_reg <= lost_reg + 8'd1;
    if (rst) begin
        a_valid_reg <= 1'b0;
        mark_n_reg <= 2'd0;
        mark_bits_reg <= 5'd0;
    end
end

wire          r_avail;
wire [RW-1:0] r_data;
wire          r_take;

// (no reset in the FIFO: the writer sends nothing while the tester clock's reset holds, and the
// engines drain and discard while theirs does, so no record from before a reset is counted after it)
fpgatest_async_fifo #(.WIDTH(RW), .DEPTH_LOG2(4), .FREE_SLOT(1)) record_fifo (
    .wr_clk(clk), .wr_data(a_data_reg), .wr_en(a_valid_reg), .wr_full(w_full),
    .rd_clk(eng_clk), .rd_data(r_data), .rd_valid(r_avail), .rd_en(r_take));

// =============================================================================================
// engine clock: the record at the FIFO's head is taken when every engine it concerns is ready
// =============================================================================================
wire          f_res  = r_data[R_RES];
wire          f_mark = r_data[RW-1:RW-2] != 2'd0;
wire          st_ready, trk_ready, cnt_busy, st_hist_busy, trk_busy;

reg           e_valid_reg;                 // e_* is the record taken at the last edge
reg  [RW-1:0] e_reg;
reg           e_round_reg;                 // ... and it starts a counter round (snapshot or clear)
// one record per two clocks at most: an engine's ready has reacted to the previous record. A marker
// waits for the latency statistics to finish the result before it (five clocks at most), so that a
// snapshot's statistics and its lat_count hold the same results as its test_frames, and for the
// counters' last snapshot to be complete. The sequence tracker takes a snapshot as a barrier in its
// input queue: its counts and registers are latched when it has worked through the numbers before it,
// and its counters freeze then (trk_cnt_snapshot), so they too hold the same frames
assign r_take = r_avail && (eng_rst || (!e_valid_reg
                                         && (!f_res || (st_ready && trk_ready))
                                         && (!f_mark || (!cnt_busy && st_ready))));

always @(posedge eng_clk) begin
    e_valid_reg <= r_take;
    e_reg <= r_data;
    e_round_reg <= r_take && (r_data[R_SNAPSHOT] || r_data[R_CLEAR]);
    if (eng_rst) begin
        e_valid_reg <= 1'b0;
        e_round_reg <= 1'b0;
    end
end

wire [1:0]  e_marks;
wire        e_snapshot, e_clear, e_clear_stats, e_clear_hist, e_flush;
wire [7:0]  e_lost;
wire        e_tx, e_rx, e_test, e_fcs_error, e_runt, e_giant, e_foreign, e_other_stream, e_mgmt, e_overflow;
wire        e_reflect_dropped;
wire        e_res, e_lat_clamped;
wire [15:0] e_tx_len, e_rx_len;
wire [47:0] e_seq;
wire [31:0] e_latency;
wire [63:0] e_rx_tick;
wire [1:0]  e_marks_raw;
wire [4:0]  e_mark_bits;
wire        e_tx_raw, e_rx_raw, e_res_raw;
assign {e_marks_raw, e_mark_bits, e_lost, e_tx_raw, e_tx_len, e_rx_raw, e_rx_len,
        e_test, e_fcs_error, e_runt, e_giant, e_foreign, e_other_stream, e_mgmt, e_overflow, e_reflect_dropped,
        e_res_raw, e_lat_clamped, e_seq, e_latency, e_rx_tick} = e_reg;
assign e_marks = e_valid_reg ? e_marks_raw : 2'd0;
assign {e_snapshot, e_clear, e_clear_stats, e_clear_hist, e_flush} = e_valid_reg ? e_mark_bits : 5'd0;
assign e_tx  = e_valid_reg && e_tx_raw;
assign e_rx  = e_valid_reg && e_rx_raw;
assign e_res = e_valid_reg && e_res_raw;

// records lost in the tester clock: the difference of the lost totals of two records taken. Like
// the total, never reset: a record drained in the engines' reset moves it without counting
reg  [7:0]  lost_seen_reg = 8'd0;
wire [7:0]  e_lost_new = e_lost - lost_seen_reg;
always @(posedge eng_clk) begin
    if (e_valid_reg)
        lost_seen_reg <= e_lost;
    if (eng_rst && r_take)
        lost_seen_reg <= r_data[R_LOST -: 8];
end

// markers sent and not yet back: the busy flags cover them (a snapshot's values are not ready
// until its marker has come through). Markers set off in the engine clock are counted when sent;
// those set off in clk (the interval recorder's) when their pulse has crossed to the engine clock,
// which may be after the marker itself: the count is modulo 16, busy in either order until both
// are seen.
reg  [3:0]  marks_out_reg;
always @(posedge eng_clk) begin
    marks_out_reg <= marks_out_reg + {2'd0, eng_marker_sent} - {2'd0, e_marks};
    if (eng_rst)
        marks_out_reg <= 4'd0;
end
wire        marks_out = marks_out_reg != 4'd0;

wire        st_cnt_lat, st_cnt_hist_below, st_cnt_hist_above, st_cnt_sample_dropped;
wire        trk_cnt_received, trk_cnt_late, trk_cnt_duplicate, trk_cnt_stale;
wire        trk_cnt_input_dropped, trk_cnt_event_dropped, trk_cnt_snapshot;

generate
if (WITH_RX) begin : engines

    fpgatest_latency_stats stats_inst (
        .clk                 (eng_clk),
        .rst                 (eng_rst),
        .res_valid           (e_res),
        .res_ready           (st_ready),
        .res_seq             (e_seq),
        .res_latency         (e_latency),
        .res_rx_tick         (e_rx_tick),
        .ctl_snapshot        (e_snapshot),
        .ctl_clear           (e_clear || e_clear_stats),
        .ctl_clear_hist      (e_clear || e_clear_hist),
        .ctl_sample_pop      (ctl_sample_pop),
        .cfg_hist_base       (cfg_hist_base),
        .cfg_hist_shift      (cfg_hist_shift),
        .cfg_hist_log        (cfg_hist_log),
        .cfg_hist_addr       (cfg_hist_addr),
        .cfg_sample_every    (cfg_sample_every),
        .stat_lat_min        (stat_lat_min),
        .stat_lat_max        (stat_lat_max),
        .stat_lat_last       (stat_lat_last),
        .stat_lat_sum        (stat_lat_sum),
        .stat_lat_sumsq      (stat_lat_sumsq),
        .stat_jit_sum        (stat_jit_sum),
        .stat_jit_max        (stat_jit_max),
        .stat_hist_count     (stat_hist_count),
        .stat_hist_busy      (st_hist_busy),
        .stat_sample_valid   (stat_sample_valid),
        .stat_sample_seq     (stat_sample_seq),
        .stat_sample_rx_tick (stat_sample_rx_tick),
        .stat_sample_latency (stat_sample_latency),
        .stat_sample_level   (stat_sample_level),
        .cnt_lat             (st_cnt_lat),
        .cnt_hist_below      (st_cnt_hist_below),
        .cnt_hist_above      (st_cnt_hist_above),
        .cnt_sample_dropped  (st_cnt_sample_dropped)
    );

    fpgatest_seq_tracker tracker_inst (
        .clk                 (eng_clk),
        .rst                 (eng_rst),
        .in_valid            (e_res),
        .in_ready            (trk_ready),
        .in_seq              (e_seq),
        .ctl_snapshot        (e_snapshot),
        .ctl_clear           (e_clear),
        .ctl_flush           (e_flush),
        .ctl_event_pop       (ctl_event_pop),
        .stat_lost           (stat_seq_lost),
        .stat_first_seq      (stat_seq_first_seq),
        .stat_highest_seq    (stat_seq_highest_seq),
        .stat_oldest_seq     (stat_seq_oldest_seq),
        .stat_started        (stat_seq_started),
        .stat_busy           (trk_busy),
        .stat_event_valid    (stat_seq_event_valid),
        .stat_event_first    (stat_seq_event_first),
        .stat_event_length   (stat_seq_event_length),
        .stat_event_level    (stat_seq_event_level),
        .cnt_received        (trk_cnt_received),
        .cnt_late            (trk_cnt_late),
        .cnt_duplicate       (trk_cnt_duplicate),
        .cnt_stale           (trk_cnt_stale),
        .cnt_input_dropped   (trk_cnt_input_dropped),
        .cnt_event_dropped   (trk_cnt_event_dropped),
        .cnt_snapshot        (trk_cnt_snapshot)
    );
end else begin : no_engines
    assign st_ready = 1'b1;
    assign trk_ready = 1'b1;
    assign st_hist_busy = 1'b0;
    assign trk_busy = 1'b0;
    assign stat_lat_min = 0;
    assign stat_lat_max = 0;
    assign stat_lat_last = 0;
    assign stat_lat_sum = 0;
    assign stat_lat_sumsq = 0;
    assign stat_jit_sum = 0;
    assign stat_jit_max = 0;
    assign stat_hist_count = 0;
    assign stat_sample_valid = 0;
    assign stat_sample_seq = 0;
    assign stat_sample_rx_tick = 0;
    assign stat_sample_latency = 0;
    assign stat_sample_level = 0;
    assign st_cnt_lat = 0;
    assign st_cnt_hist_below = 0;
    assign st_cnt_hist_above = 0;
    assign st_cnt_sample_dropped = 0;
    assign stat_seq_lost = 0;
    assign stat_seq_first_seq = 0;
    assign stat_seq_highest_seq = 0;
    assign stat_seq_oldest_seq = 0;
    assign stat_seq_started = 0;
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
    assign trk_cnt_snapshot = e_snapshot;   // no tracker: its counters freeze with the others
end
endgenerate

assign stat_hist_busy = st_hist_busy || marks_out;
assign stat_seq_busy = trk_busy || marks_out;
assign stat_counters_busy = cnt_busy || marks_out;

// event counters, numbered as in the table above (bit/slice i = counter i). Records come at most
// one per two clocks, so one round (N clocks) adds at most 13 amounts below 2^14: 18-bit pending.
localparam N_COUNTERS = 25;
localparam PW = 18;
localparam [PW-1:0] ONE = 1;

fpgatest_counters #(
    .N         (N_COUNTERS),
    .PENDING_W (PW),
    .WIDE_MASK (25'b0010000000000000000001010), // tx_bytes, rx_bytes, record_dropped
    .LATE_MASK (25'b0000111111000000000000000)  // seq_* (15..20): frozen when the tracker reaches the snapshot
) counters_inst (
    .clk          (eng_clk),
    .rst          (eng_rst),
    .inc_valid    ({e_rx && e_mgmt, e_valid_reg && e_reflect_dropped, e_valid_reg && e_lost_new != 0,
                    e_valid_reg && e_overflow, trk_cnt_event_dropped, trk_cnt_input_dropped, trk_cnt_stale, trk_cnt_duplicate, trk_cnt_late, trk_cnt_received,
                    st_cnt_sample_dropped, st_cnt_hist_above, st_cnt_hist_below, st_cnt_lat,
                    e_res && e_lat_clamped, e_rx && e_other_stream, e_rx && e_foreign, e_rx && e_giant,
                    e_rx && e_runt, e_rx && e_fcs_error, e_rx && e_test, e_rx, e_rx, e_tx, e_tx}),
    .inc_amount   ({ONE, ONE, {{(PW-8){1'b0}}, e_lost_new},
                    {18{ONE}},
                    {{(PW-16){1'b0}}, e_rx_len}, ONE,
                    {{(PW-16){1'b0}}, e_tx_len}, ONE}),
    .ctl_snapshot (e_snapshot),
    .ctl_clear    (e_clear),
    .ctl_round    (e_round_reg),
    .ctl_snapshot_late (trk_cnt_snapshot),
    .rd_addr      (cnt_rd_addr),
    .rd_data      (cnt_rd_data),
    .stat_busy    (cnt_busy)
);

endmodule

`resetall
