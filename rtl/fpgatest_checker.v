// SPDX-License-Identifier: BSD-2-Clause
// fpgatest_checker: checks FCS, finds the signature in every supported protocol, classifies each frame and computes its latency.

`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * Input: frame bytes after the SFD (from fpgatest_rx_cdc) with the low STAMP_W bits of the RX tick.
 * Each frame ends in exactly one class: runt, giant, FCS error (incl. rx_er), management (a good
 * frame without a signature for the management core beside this port, when it has one: to MGMT_MAC,
 * or a broadcast ARP frame whose target address is MGMT_IP, the host asking for the core's MAC),
 * foreign (any other good frame without a valid signature), other stream, or test frame. For test
 * frames:
 *   latency = (RX tick - TX tick) * 2^LAT_FRAC_BITS - cal_internal - cal_tx_cable - cal_rx_cable
 * in 1/16 tick units (0.5 ns), saturated to 0 .. 2^32-1.
 */
module fpgatest_checker #(
    parameter STAMP_W = 24,
    parameter [47:0] MGMT_MAC = 48'd0,    // 0: no management frames on this port
    parameter [31:0] MGMT_IP = 32'd0      // the management core's IPv4 address (ARP), 0: none
) (
    input  wire               clk,
    input  wire               rst,
    input  wire [63:0]        time_tick,

    // frame bytes
    input  wire               s_valid,
    input  wire [7:0]         s_data,
    input  wire               s_first,
    input  wire               s_last,
    input  wire               s_err,
    input  wire [STAMP_W-1:0] s_stamp,

    // configuration
    input  wire [15:0]        cfg_stream_id,       // stream id counted as the test stream
    input  wire [15:0]        cfg_max_size,        // largest frame that is not a giant (bytes incl. FCS)
    input  wire [31:0]        cfg_cal_internal,    // tester internal delay, 1/16 tick
    input  wire [31:0]        cfg_cal_tx_cable,    // cable delay on the sending port, 1/16 tick
    input  wire [31:0]        cfg_cal_rx_cable,    // cable delay on this (receiving) port, 1/16 tick

    // per test frame result
    output reg                res_valid,
    output reg  [47:0]        res_seq,
    output reg  [31:0]        res_latency,         // 1/16 tick
    output reg  [63:0]        res_rx_tick,

    // events for fpgatest_counters (one clock each)
    output reg                cnt_rx_frame,        // a frame ended; cnt_rx_len bytes
    output reg  [15:0]        cnt_rx_len,
    output reg                cnt_test,
    output reg                cnt_fcs_error,
    output reg                cnt_runt,
    output reg                cnt_giant,
    output reg                cnt_foreign,
    output reg                cnt_mgmt,
    output reg                cnt_other_stream,
    output reg                cnt_lat_clamped
);

localparam LAT_FRAC_BITS = 4;              // latency and calibration count 1/2^LAT_FRAC_BITS tick (csr.json)
localparam [31:0] SIG_MAGIC   = 32'h46504754;
localparam [31:0] FCS_RESIDUE = 32'hDEBB20E3;

// ---------------------------------------------------------------------------------------------
// input stage: each byte registered once with the classes the parser compares it against, so no
// comparison of the incoming byte sits on the parse path
// ---------------------------------------------------------------------------------------------
reg                b_valid, b_first, b_last, b_err;
reg                b_end;              // b_valid && b_last: the frame ends with this byte
reg                b_abort;            // b_valid && b_first while a frame is open: its end was lost
reg                in_frame_reg;       // a frame is open (parse, below)
reg  [7:0]         b_data;
reg  [STAMP_W-1:0] b_stamp;
integer            m;
reg                b_is_00, b_is_dd, b_is_a8, b_is_08, b_is_86, b_is_81, b_is_88, b_is_45, b_is_6x;
reg                b_is_l4_v4, b_is_l4_v6;   // UDP or ICMP (IPv4), UDP or ICMPv6 (IPv6)
reg  [5:0]         b_is_mgmt;                // byte k of MGMT_MAC (bit k)

always @(posedge clk) begin
    b_valid <= s_valid;
    b_first <= s_first;
    b_last <= s_last;
    b_end <= s_valid && s_last;
    // in_frame_reg as it will be after this edge (see parse, below)
    b_abort <= s_valid && s_first && (b_valid ? !b_last : in_frame_reg);
    b_err <= s_err;
    b_data <= s_data;
    b_stamp <= s_stamp;
    b_is_00 <= s_data == 8'h00;
    b_is_dd <= s_data == 8'hDD;
    b_is_a8 <= s_data == 8'hA8;
    b_is_08 <= s_data == 8'h08;
    b_is_86 <= s_data == 8'h86;
    b_is_81 <= s_data == 8'h81;
    b_is_88 <= s_data == 8'h88;
    b_is_45 <= s_data == 8'h45;
    b_is_l4_v4 <= s_data == 8'd17 || s_data == 8'd1;
    b_is_l4_v6 <= s_data == 8'd17 || s_data == 8'd58;
    b_is_6x <= s_data[7:4] == 4'h6;
    for (m = 0; m < 6; m = m + 1)
        b_is_mgmt[m] <= s_data == MGMT_MAC[8 * (5 - m) +: 8];
    if (rst) begin
        b_valid <= 1'b0;
        b_end <= 1'b0;
        b_abort <= 1'b0;
    end
end

// ---------------------------------------------------------------------------------------------
// parse
// ---------------------------------------------------------------------------------------------
reg  [15:0] idx_reg;                   // index of the next byte = bytes taken so far (saturates)
reg         idx_sat_reg;               // idx_reg has reached 0xFFFF and stays
reg         vlan_reg;
reg         l3_ok_reg;
reg  [4:0]  sig_cnt_reg;
reg  [143:0] sig_reg;
reg  [31:0] sig_crc_reg;
reg  [31:0] fcs_crc_reg;
reg  [63:0] rx_tick_reg;
reg  [STAMP_W-1:0] stamp_age_reg;
reg  [63:0] stamp_now_reg;

// the FCS, split the same way (a CRC is linear: crc(c, d) = crc(c, 0) ^ crc(0, d)): the first byte's
// start value enters as a constant after the CRC bits' XOR, not as a select in front of it
wire [31:0] fcs_init_term, fcs_crc_term, fcs_byte_term;
fpgatest_crc32 fcs_init_inst (.crc_in(32'hFFFFFFFF), .data(8'd0), .crc_out(fcs_init_term));
fpgatest_crc32 fcs_crc_inst (.crc_in(fcs_crc_reg), .data(8'd0), .crc_out(fcs_crc_term));
fpgatest_crc32 fcs_byte_inst (.crc_in(32'd0), .data(b_data), .crc_out(fcs_byte_term));
wire [31:0] fcs_crc_next = (b_first ? fcs_init_term : fcs_crc_term) ^ fcs_byte_term;
// the signature's CRC is needed only at the frame's end, so it runs a byte behind: a CRC is linear,
// crc(c, d) = crc(c, 0) ^ crc(0, d), and the byte's part is registered before the loop takes it,
// which leaves the loop an XOR of CRC bits and one register (the tester clock's shortest loop)
wire [31:0] sig_byte_term, sig_crc_term;
reg  [31:0] sig_byte_term_reg;
reg         sig_upd_reg;                // the byte before was one of the first 14 signature bytes
fpgatest_crc32 sig_byte_inst (.crc_in(32'd0), .data(b_data), .crc_out(sig_byte_term));
fpgatest_crc32 sig_crc_inst (.crc_in(sig_crc_reg), .data(8'd0), .crc_out(sig_crc_term));
// positions as one-hot shift registers instead of comparators: nxt_oh[k] = the next byte (unless it
// starts a frame) is frame byte k, r3_oh[k] = it is IP header byte k; sig_wait counts the bytes left
// before the signature, armed at the EtherType
reg  [17:0] nxt_oh;
reg  [9:0]  r3_oh;
reg         eh_08_reg, eh_86_reg, eh_81_reg, eh_88_reg;   // the EtherType's (or TPID's) first byte
wire        at12 = !b_first && nxt_oh[12];
wire        at13 = !b_first && nxt_oh[13];
wire        at16 = !b_first && nxt_oh[16];
wire        at17 = !b_first && nxt_oh[17];
wire        et_ipv4 = eh_08_reg && b_is_00;
wire        et_ipv6 = eh_86_reg && b_is_dd;
wire        et_tag  = (eh_81_reg && b_is_00) || (eh_88_reg && b_is_a8);
reg  [5:0]  sig_wait_reg;
reg         sig_armed_reg, is_v4_reg, is_v6_reg;
reg         mgmt_reg;             // every destination byte so far is MGMT_MAC's
wire        arp_mgmt;             // an ARP frame for MGMT_IP so far (below)
reg         in_sig;               // this byte belongs to the signature (decided one byte ahead)

// frame end: the byte flagged last, or a new frame starting while one is open (lost end marker)
reg         end_valid_reg;
reg         end_err_reg;
reg  [31:0] end_crc_reg, end_sig_check_reg, end_sig_crc_reg;
reg  [15:0] end_len_reg;
reg         end_sig_full_reg;
reg         end_mgmt_reg;          // to MGMT_MAC, or an ARP frame for MGMT_IP
reg  [15:0] end_stream_reg;
reg  [47:0] end_seq_reg, end_tx_reg;
reg  [63:0] end_rx_tick_reg;


always @(posedge clk) begin
    end_valid_reg <= 1'b0;
    rx_tick_reg <= stamp_now_reg - {{(64-STAMP_W){1'b0}}, stamp_age_reg};
    // (a byte behind: done 4 check bytes and the FCS before the frame ends; a new frame's start,
    // below, wins over a truncated frame's last update)
    sig_upd_reg <= b_valid && !b_first && in_sig && sig_cnt_reg < 5'd14;
    sig_byte_term_reg <= sig_byte_term;
    if (sig_upd_reg)
        sig_crc_reg <= sig_crc_term ^ sig_byte_term_reg;

    if (b_abort) begin
        end_valid_reg <= 1'b1;
        end_err_reg <= 1'b1;                 // (bad whatever its FCS register holds)
        end_len_reg <= idx_reg;
        end_sig_full_reg <= 1'b0;
    end

    if (b_valid) begin
        in_frame_reg <= !b_last;
        idx_reg <= b_first ? 16'd1 : idx_sat_reg ? idx_reg : idx_reg + 16'd1;
        idx_sat_reg <= !b_first && (idx_sat_reg || idx_reg == 16'hFFFE);
        fcs_crc_reg <= fcs_crc_next;

        nxt_oh <= b_first ? 18'd2 : {nxt_oh[16:0], 1'b0};
        r3_oh <= {r3_oh[8:0], 1'b0};
        if (sig_armed_reg && sig_wait_reg != 6'd0)
            sig_wait_reg <= sig_wait_reg - 6'd1;
        // the next byte is a signature byte: the countdown ends now, or the signature goes on
        in_sig <= in_sig ? sig_cnt_reg < 5'd17 : (sig_armed_reg && sig_wait_reg == 6'd1);
        // the destination address: bytes 1-5 (byte 0 below)
        for (m = 1; m < 6; m = m + 1)
            if (!b_first && nxt_oh[m] && !b_is_mgmt[m])
                mgmt_reg <= 1'b0;
        if (b_first) begin
            mgmt_reg <= MGMT_MAC != 48'd0 && b_is_mgmt[0];
            vlan_reg <= 1'b0;
            r3_oh <= 10'd0;
            sig_armed_reg <= 1'b0;
            in_sig <= 1'b0;
            is_v4_reg <= 1'b0;
            is_v6_reg <= 1'b0;
            l3_ok_reg <= 1'b1;
            sig_cnt_reg <= 5'd0;
            sig_crc_reg <= SIG_MAGIC;
            // widen the RX stamp (taken a few ticks ago, less than 2^STAMP_W): age now, subtract next clock
            stamp_age_reg <= time_tick[STAMP_W-1:0] - b_stamp;
            stamp_now_reg <= time_tick;
        end

        // Ethernet header, optional 802.1Q/802.1ad tag
        if (at12 || (vlan_reg && at16)) begin
            eh_08_reg <= b_is_08;
            eh_86_reg <= b_is_86;
            eh_81_reg <= b_is_81;
            eh_88_reg <= b_is_88;
        end
        if (at13 || (vlan_reg && at17)) begin
            if (at13 && et_tag) begin
                vlan_reg <= 1'b1;
            end else begin
                r3_oh <= 10'd1;                                  // the next byte starts the IP header
                sig_armed_reg <= 1'b1;
                is_v4_reg <= et_ipv4;
                is_v6_reg <= et_ipv6;
                sig_wait_reg <= et_ipv4 ? 6'd28                  // IPv4 (20) + UDP or ICMP (8)
                              : et_ipv6 ? 6'd48                  // IPv6 (40) + UDP or ICMPv6 (8)
                              : 6'd0;                            // raw Ethernet
                in_sig <= !et_ipv4 && !et_ipv6;
            end
        end

        // IP header: must be IPv4 without options carrying UDP or ICMP, or IPv6 with UDP or ICMPv6 next
        // (both have an 8-byte header before the signature: an echo request or reply, or a datagram)
        if (!b_first && is_v4_reg && r3_oh[0] && !b_is_45)
            l3_ok_reg <= 1'b0;
        if (!b_first && is_v4_reg && r3_oh[9] && !b_is_l4_v4)
            l3_ok_reg <= 1'b0;
        if (!b_first && is_v6_reg && r3_oh[0] && !b_is_6x)
            l3_ok_reg <= 1'b0;
        if (!b_first && is_v6_reg && r3_oh[6] && !b_is_l4_v6)
            l3_ok_reg <= 1'b0;

        // signature
        if (!b_first && in_sig) begin
            sig_reg <= {sig_reg[135:0], b_data};
            sig_cnt_reg <= sig_cnt_reg + 5'd1;
        end

    end

    if (b_end) begin
        end_valid_reg <= 1'b1;
        end_crc_reg <= fcs_crc_next;
        end_err_reg <= b_err;
        end_len_reg <= b_first ? 16'd1 : idx_reg + 16'd1;
        // the signature is complete once 18 bytes were taken; the check covers the first 14
        end_sig_full_reg <= l3_ok_reg && sig_cnt_reg == 5'd18;
        end_mgmt_reg <= mgmt_reg || arp_mgmt;       // (a frame of fewer than 42 bytes is a runt)
        end_sig_check_reg <= sig_reg[31:0];
        end_sig_crc_reg <= sig_crc_reg;
        end_stream_reg <= sig_reg[143:128];
        end_seq_reg <= sig_reg[127:80];
        end_tx_reg <= sig_reg[79:32];
        end_rx_tick_reg <= rx_tick_reg;
    end

    if (rst) begin
        in_frame_reg <= 1'b0;
        sig_upd_reg <= 1'b0;
        idx_reg <= 16'd0;
        idx_sat_reg <= 1'b0;
        nxt_oh <= 18'd0;
        r3_oh <= 10'd0;
        end_valid_reg <= 1'b0;
        vlan_reg <= 1'b0;
        sig_cnt_reg <= 5'd0;
    end
end

// ---------------------------------------------------------------------------------------------
// ARP for the management core (built only with MGMT_IP): the host asking for the core's MAC is a
// broadcast frame, EtherType 0x0806 untagged, whose target protocol address (bytes 38-41: 14 header
// bytes + 24 into the ARP packet) is MGMT_IP. arp_reg: every byte of the frame so far fits that.
// ---------------------------------------------------------------------------------------------
generate
if (MGMT_IP != 32'd0) begin : g_arp_mgmt
    integer     k;
    reg         b_is_06, b_is_ff;   // the input stage's byte is 0x06, 0xFF
    reg  [3:0]  b_is_ip;            // ... is byte k of MGMT_IP (bit k)
    reg  [3:0]  tpa_oh;             // the next byte is byte k of the target address (bit k)
    reg         arp_reg;
    always @(posedge clk) begin
        b_is_06 <= s_data == 8'h06;
        b_is_ff <= s_data == 8'hFF;
        for (k = 0; k < 4; k = k + 1)
            b_is_ip[k] <= s_data == MGMT_IP[8 * (3 - k) +: 8];
        if (b_valid) begin
            for (k = 1; k < 6; k = k + 1)
                if (!b_first && nxt_oh[k] && !b_is_ff)
                    arp_reg <= 1'b0;
            if (at13 && !(eh_08_reg && b_is_06))
                arp_reg <= 1'b0;
            tpa_oh <= {tpa_oh[2:0], !b_first && idx_reg == 16'd37};
            for (k = 0; k < 4; k = k + 1)
                if (!b_first && tpa_oh[k] && !b_is_ip[k])
                    arp_reg <= 1'b0;
            if (b_first) begin
                arp_reg <= b_is_ff;
                tpa_oh <= 4'd0;
            end
        end
    end
    assign arp_mgmt = arp_reg;
end else begin : g_no_arp_mgmt
    assign arp_mgmt = 1'b0;
end
endgenerate

// ---------------------------------------------------------------------------------------------
// frame end, second clock: the comparisons (FCS residue, signature check, length limits, stream id)
// ---------------------------------------------------------------------------------------------
reg         fin_valid_reg, fin_fcs_ok_reg, fin_err_reg, fin_sig_ok_reg, fin_mgmt_reg;
reg         fin_short_reg, fin_long_reg, fin_stream_ok_reg;   // < 64 B, > cfg_max_size, our stream id
reg  [15:0] fin_len_reg;
reg  [47:0] fin_seq_reg, fin_tx_reg;
reg  [63:0] fin_rx_tick_reg;

always @(posedge clk) begin
    fin_valid_reg <= end_valid_reg;
    fin_fcs_ok_reg <= end_crc_reg == FCS_RESIDUE;
    fin_err_reg <= end_err_reg;
    fin_sig_ok_reg <= end_sig_full_reg && end_sig_check_reg == end_sig_crc_reg;
    fin_mgmt_reg <= end_mgmt_reg;
    fin_len_reg <= end_len_reg;
    fin_short_reg <= end_len_reg < 16'd64;
    fin_long_reg <= end_len_reg > cfg_max_size;
    fin_stream_ok_reg <= end_stream_reg == cfg_stream_id;
    fin_seq_reg <= end_seq_reg;
    fin_tx_reg <= end_tx_reg;
    fin_rx_tick_reg <= end_rx_tick_reg;
    if (rst)
        fin_valid_reg <= 1'b0;
end

// ---------------------------------------------------------------------------------------------
// classify
// ---------------------------------------------------------------------------------------------
wire is_runt  = fin_short_reg;
wire is_giant = !is_runt && fin_long_reg;
wire is_bad   = !is_runt && !is_giant && (!fin_fcs_ok_reg || fin_err_reg);
wire is_good  = !is_runt && !is_giant && !is_bad;
wire is_test  = is_good && fin_sig_ok_reg && fin_stream_ok_reg;
wire is_other = is_good && fin_sig_ok_reg && !fin_stream_ok_reg;
wire is_mgmt = is_good && !fin_sig_ok_reg && fin_mgmt_reg;
wire is_foreign = is_good && !fin_sig_ok_reg && !fin_mgmt_reg;

// latency pipeline
reg        lat_valid1_reg, lat_valid2_reg;
reg [47:0] lat_ticks_reg, lat_seq1_reg;
reg [63:0] lat_rx1_reg;
reg [33:0] cal_total_reg;
reg [49+LAT_FRAC_BITS:0] lat_raw_reg;
reg [7:0]  cls1_reg, cls2_reg;         // frame ended, runt, giant, bad, test, other stream, foreign, management
reg [15:0] len1_reg, len2_reg;

always @(posedge clk) begin
    cal_total_reg <= cfg_cal_internal + cfg_cal_tx_cable + cfg_cal_rx_cable;

    // stage 1: tick difference (48-bit wrap of the TX stamp is handled by the modular subtraction)
    lat_valid1_reg <= fin_valid_reg && is_test;
    lat_ticks_reg <= fin_rx_tick_reg[47:0] - fin_tx_reg;
    lat_seq1_reg <= fin_seq_reg;
    lat_rx1_reg <= fin_rx_tick_reg;

    // stage 2: to 1/16 tick and calibrate
    lat_valid2_reg <= lat_valid1_reg;
    res_seq <= lat_seq1_reg;
    res_rx_tick <= lat_rx1_reg;
    lat_raw_reg <= {2'b00, lat_ticks_reg, {LAT_FRAC_BITS{1'b0}}} - {{(16+LAT_FRAC_BITS){1'b0}}, cal_total_reg};

    // stage 3: saturate (a TX stamp "in the future" shows as a huge difference)
    res_valid <= lat_valid2_reg;
    if (lat_raw_reg[49+LAT_FRAC_BITS]) begin
        res_latency <= 32'd0;
    end else if (lat_raw_reg[48+LAT_FRAC_BITS:32] != 0) begin
        res_latency <= 32'hFFFFFFFF;
    end else begin
        res_latency <= lat_raw_reg[31:0];
    end
    cnt_lat_clamped <= lat_valid2_reg && (lat_raw_reg[49+LAT_FRAC_BITS] || lat_raw_reg[48+LAT_FRAC_BITS:32] != 0);

    // the frame's class leaves at stage 3 with its result: a snapshot between the two cannot split
    // a test frame from its latency
    cls1_reg <= {fin_valid_reg, fin_valid_reg && is_runt, fin_valid_reg && is_giant, fin_valid_reg && is_bad,
                 fin_valid_reg && is_test, fin_valid_reg && is_other, fin_valid_reg && is_foreign,
                 fin_valid_reg && is_mgmt};
    len1_reg <= fin_len_reg;
    cls2_reg <= cls1_reg;
    len2_reg <= len1_reg;
    {cnt_rx_frame, cnt_runt, cnt_giant, cnt_fcs_error, cnt_test, cnt_other_stream, cnt_foreign, cnt_mgmt} <= cls2_reg;
    cnt_rx_len <= len2_reg;

    if (rst) begin
        lat_valid1_reg <= 1'b0;
        lat_valid2_reg <= 1'b0;
        res_valid <= 1'b0;
        cls1_reg <= 8'd0;
        cls2_reg <= 8'd0;
        cnt_rx_frame <= 1'b0;
        cnt_test <= 1'b0;
        cnt_fcs_error <= 1'b0;
        cnt_runt <= 1'b0;
        cnt_giant <= 1'b0;
        cnt_foreign <= 1'b0;
        cnt_mgmt <= 1'b0;
        cnt_other_stream <= 1'b0;
        cnt_lat_clamped <= 1'b0;
    end
end

endmodule

`resetall
