// SPDX-License-Identifier: BSD-2-Clause
// fpgatest_gen: test-frame generator (raw Ethernet / IPv4 or IPv6 with UDP or ICMP echo, optional 802.1Q) on 8-bit GMII.

`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * One byte per clock. Every frame is preamble + SFD + header + 18-byte signature + zero padding + FCS,
 * followed by an idle gap. The signature (docs/frame-format.md) carries stream id, 48-bit sequence
 * number, the low 48 bits of the TX tick and a CRC-32 check keyed with the magic "FPGT".
 * All settings are copied when the run starts, so changing registers mid-run never bends a frame.
 * The header comes from a template of the run's constant bytes, written once in the ~125 clocks
 * before the first frame, overlaid per frame with the few bytes that change (IPv4 identification
 * and checksum, the L4 checksum, the ICMP echo sequence number, the signature).
 * With cfg_icmp the IP payload is an ICMP echo request (IPv4 type 8, ICMPv6 type 128) instead of UDP:
 * identifier cfg_udp_src, echo sequence number the low 16 bits of the frame's, signature and padding
 * as the echo data, the ICMP checksum right for every frame. A frame starts only while win_open is
 * set (fpgatest_window: at most a window of frames without a reply; fpgatest_port also closes it
 * while a management frame takes the wire); a closed window stretches the gap.
 */
module fpgatest_gen (
    input  wire         clk,
    input  wire         rst,
    input  wire [63:0]  time_tick,

    // control
    input  wire         ctl_start,            // start a run with the current settings (pulse)
    input  wire         ctl_stop,             // stop after the frame on the wire (pulse)

    // configuration
    input  wire [1:0]   cfg_proto,            // 0 raw Ethernet, 1 IPv4/UDP, 2 IPv6/UDP
    input  wire         cfg_icmp,             // IPv4/IPv6: an ICMP echo request instead of UDP
    input  wire         cfg_vlan_en,          // insert an 802.1Q tag
    input  wire [15:0]  cfg_vlan_tci,         // 802.1Q tag control (PCP, DEI, VID)
    input  wire [47:0]  cfg_dst_mac,          // destination MAC
    input  wire [47:0]  cfg_src_mac,          // source MAC
    input  wire [15:0]  cfg_ethertype,        // EtherType of raw Ethernet frames
    input  wire [7:0]   cfg_ip_ttl,           // IPv4 TTL / IPv6 hop limit
    input  wire [7:0]   cfg_ip_tos,           // IPv4 TOS / IPv6 traffic class
    input  wire [127:0] cfg_src_ip,           // source address (IPv4 in the low 32 bits)
    input  wire [127:0] cfg_dst_ip,           // destination address (IPv4 in the low 32 bits)
    input  wire [15:0]  cfg_udp_src,          // UDP source port / ICMP echo identifier
    input  wire [15:0]  cfg_udp_dst,          // UDP destination port
    input  wire [15:0]  cfg_stream_id,        // stream id written into the signature
    input  wire [47:0]  cfg_seq_start,        // sequence number of the first frame
    input  wire [15:0]  cfg_size,             // frame size in bytes incl. FCS, excl. preamble (64..16383)
    input  wire [31:0]  cfg_ifg,              // idle gap after each frame in bytes (>= 12)
    input  wire [31:0]  cfg_ifg_frac_num,     // extra fractional gap numerator in bytes (< den)
    input  wire [31:0]  cfg_ifg_frac_den,     // extra fractional gap denominator (0 = none)
    input  wire [31:0]  cfg_burst_len,        // frames per burst (0 = no bursts)
    input  wire [31:0]  cfg_burst_gap,        // idle gap after each burst in bytes (>= 12)
    input  wire [47:0]  cfg_count,            // frames to send (0 = until stopped)

    // flow control (fpgatest_window)
    input  wire         win_open,             // the next frame may start
    input  wire         win_error,            // the window settings cannot run (refuse the start)
    input  wire         tx_taken,             // the port's reflector has the transmitter (refuse the start)

    // GMII transmit
    output reg  [7:0]   gmii_txd,
    output reg          gmii_tx_en,
    output wire         gmii_tx_er,

    // status
    output wire         stat_busy,            // a run is in progress
    output reg  [7:0]   stat_error,           // why the last start was refused (bits, see docs)
    output wire [47:0]  stat_seq_next,        // sequence number of the next frame

    // events for fpgatest_counters
    output wire         cnt_tx_frame,         // a frame's SFD is out; cnt_tx_len bytes follow
    output wire [15:0]  cnt_tx_len
);

localparam [31:0] SIG_MAGIC = 32'h46504754;   // "FPGT", initial value of the signature check CRC
localparam        MAX_SIZE  = 16383;
localparam        MIN_GAP   = 12;

localparam PROTO_RAW = 2'd0, PROTO_IPV4 = 2'd1, PROTO_IPV6 = 2'd2;

localparam [7:0] ERR_SIZE = 8'h01, ERR_IFG = 8'h02, ERR_BURST_GAP = 8'h04, ERR_FRAC = 8'h08,
                 ERR_PROTO = 8'h10, ERR_WINDOW = 8'h20, ERR_REFLECT = 8'h40;

localparam [1:0] ST_IDLE = 2'd0, ST_PREP = 2'd1, ST_FRAME = 2'd2, ST_GAP = 2'd3;

// ---------------------------------------------------------------------------------------------
// settings check, from the live registers, at start
// ---------------------------------------------------------------------------------------------
wire [15:0] l2_len_cfg   = cfg_vlan_en ? 16'd18 : 16'd14;
wire [15:0] l34_len_cfg  = cfg_proto == PROTO_IPV4 ? 16'd28 : cfg_proto == PROTO_IPV6 ? 16'd48 : 16'd0;
wire [15:0] need_len_cfg = l2_len_cfg + l34_len_cfg + 16'd18 + 16'd4;
wire [15:0] min_size_cfg = need_len_cfg > 16'd64 ? need_len_cfg : 16'd64;

wire [7:0] cfg_errors =
    ((cfg_proto == 2'd3 || (cfg_icmp && cfg_proto == PROTO_RAW)) ? ERR_PROTO : 8'h00) |
    (win_error ? ERR_WINDOW : 8'h00) |
    (tx_taken ? ERR_REFLECT : 8'h00) |
    ((cfg_size < min_size_cfg || cfg_size > MAX_SIZE) ? ERR_SIZE : 8'h00) |
    (cfg_ifg < MIN_GAP ? ERR_IFG : 8'h00) |
    ((cfg_burst_len != 0 && cfg_burst_gap < MIN_GAP) ? ERR_BURST_GAP : 8'h00) |
    ((cfg_ifg_frac_den != 0 && cfg_ifg_frac_num >= cfg_ifg_frac_den) ? ERR_FRAC : 8'h00);

// ---------------------------------------------------------------------------------------------
// settings of the running stream (copied at start)
// ---------------------------------------------------------------------------------------------
reg         load_reg;              // a start was taken: the copy of the settings is enabled by it
reg [1:0]   proto_reg;
reg         icmp_reg;
reg         vlan_en_reg;
reg [15:0]  vlan_tci_reg;
reg [47:0]  dst_mac_reg, src_mac_reg;
reg [15:0]  ethertype_reg;
reg [7:0]   ttl_reg, tos_reg;
reg [127:0] src_ip_reg, dst_ip_reg;
reg [15:0]  udp_src_reg, udp_dst_reg, stream_reg;
reg [15:0]  size_reg;
reg [31:0]  ifg_reg, frac_num_reg, frac_den_reg, burst_len_reg, burst_gap_reg;
reg [47:0]  count_reg;

reg [1:0]  state_reg;

// derived per-run lengths (registered, one subtraction per clock; settled by FILL_L2)
reg [15:0]  l2_len_reg, udp_off_reg, sig_off_reg, data_len_reg, l3_len_reg, udp_len_reg;
reg [15:0]  ethertype_eff_reg;
reg [7:0]   l4_proto_reg;          // IP protocol / next header: UDP 17, ICMP 1, ICMPv6 58
reg [15:0]  pseudo_reg;            // the L4 checksum's pseudo-header words that are not in the frame:
                                   // UDP protocol + length, ICMPv6 next header + length, ICMPv4 none
reg [6:0]   hdr_last_reg;          // index of the header's last byte (the signature's)
reg         wr_etype_reg, wr_ipv4_reg, wr_ipv6_reg, wr_udp_reg, wr_icmp_reg;   // the fill writes segment
                                   // ETYPE / IPV4 / ... (L2 and SIG always): registered beside the fill,
                                   // so its write enable does not reach back to the settings

wire is_ipv4 = proto_reg == PROTO_IPV4;
wire is_ipv6 = proto_reg == PROTO_IPV6;

always @(posedge clk) begin
    l2_len_reg   <= vlan_en_reg ? 16'd18 : 16'd14;
    udp_off_reg  <= l2_len_reg + (is_ipv6 ? 16'd40 : 16'd20);
    sig_off_reg  <= l2_len_reg + (is_ipv4 ? 16'd28 : is_ipv6 ? 16'd48 : 16'd0);
    hdr_last_reg <= sig_off_reg[6:0] + 7'd17;
    data_len_reg <= size_reg - 16'd4;
    l3_len_reg   <= data_len_reg - l2_len_reg;
    udp_len_reg  <= l3_len_reg - (is_ipv6 ? 16'd40 : 16'd20);
    ethertype_eff_reg <= is_ipv4 ? 16'h0800 : is_ipv6 ? 16'h86DD : ethertype_reg;
    l4_proto_reg <= !icmp_reg ? 8'd17 : is_ipv6 ? 8'd58 : 8'd1;
    pseudo_reg   <= !icmp_reg ? 16'd17 + udp_len_reg : is_ipv6 ? 16'd58 + udp_len_reg : 16'd0;
    wr_etype_reg <= !vlan_en_reg;
    wr_ipv4_reg  <= is_ipv4;
    wr_ipv6_reg  <= is_ipv6;
    wr_udp_reg   <= (is_ipv4 || is_ipv6) && !icmp_reg;
    wr_icmp_reg  <= (is_ipv4 || is_ipv6) && icmp_reg;
end

// ---------------------------------------------------------------------------------------------
// header template: the run's header in frame order, written during ST_PREP, read once per frame
// ---------------------------------------------------------------------------------------------
// Each entry is a byte and a tag saying where the frame's byte comes from: the template byte, or the
// next byte of one of three per-frame overlays, each a shift register consumed in frame order:
//   TAG_IP   IPv4 identification (the sequence number's low 16 bits) and header checksum
//   TAG_L4   UDP or ICMP checksum, then the ICMP echo sequence number
//   TAG_SIG  the signature's sequence number, TX stamp and check (its stream id is in the template)
// The fill walks a fixed list of segments, one byte per clock, each written at its offset in the
// frame when the stream has it; a later segment overwrites what an earlier one left past the end
// of its layer (an untagged frame's TCI, the unused part of the L2 segment):
//   segment  bytes  written at  when       prep_cnt
//   L2       18     0           always     FILL_L2 ..     dst, src, 8100, TCI, EtherType
//   ETYPE     2     12          no tag     FILL_ETYPE ..  EtherType
//   IPV4     20     l2_len      IPv4       FILL_IPV4 ..
//   IPV6     40     l2_len      IPv6       FILL_IPV6 ..
//   UDP       8     udp_off     UDP        FILL_UDP ..
//   ICMP      8     udp_off     ICMP       FILL_ICMP ..
//   SIG      18     sig_off     always     FILL_SIG .. FILL_END - 1
// The checksums' per-run part is summed from the same bytes as they are written (words are
// big-endian and every layer starts at an even offset, so a byte at an even offset is a high byte):
// the IPv4 header for the IP checksum; the pseudo-header addresses, the L4 header and the stream id
// for the L4 checksum, which starts from pseudo_reg.
localparam [1:0] TAG_TPL = 2'd0, TAG_IP = 2'd1, TAG_L4 = 2'd2, TAG_SIG = 2'd3;
localparam [6:0] FILL_L2 = 7'd8, FILL_ETYPE = 7'd26, FILL_IPV4 = 7'd28, FILL_IPV6 = 7'd48, FILL_UDP = 7'd88,
                 FILL_ICMP = 7'd96, FILL_SIG = 7'd104, FILL_END = 7'd122;
localparam [6:0] PREP_LAST = 7'd124;   // the last fill byte is written and summed at FILL_END + 1

reg  [6:0]  prep_cnt_reg;
reg         prep_last_reg;         // prep_cnt is PREP_LAST (flagged a clock ahead; held there while
                                   // the first frame waits for win_open)
always @(posedge clk)
    prep_last_reg <= prep_cnt_reg == PREP_LAST - 7'd1 || (prep_last_reg && state_reg == ST_PREP && !win_open);

// the bytes of every segment in fill order, first byte in the top bits; byte k is taken at prep_cnt
// k (the first FILL_L2 entries are never taken: the derived lengths settle meanwhile; the last six
// are padding to the token's 128 bits)
wire [8*128-1:0] tpl_src = {
    64'd0,
    dst_mac_reg, src_mac_reg, 16'h8100, vlan_tci_reg, ethertype_eff_reg,                         // L2
    ethertype_eff_reg,                                                                           // ETYPE
    8'h45, tos_reg, l3_len_reg, 16'h0000, 8'h40, 8'h00, ttl_reg, l4_proto_reg, 16'h0000,         // IPV4 (DF)
    src_ip_reg[31:0], dst_ip_reg[31:0],
    4'h6, tos_reg, 20'h00000, udp_len_reg, l4_proto_reg, ttl_reg, src_ip_reg, dst_ip_reg,        // IPV6 (flow 0)
    udp_src_reg, udp_dst_reg, udp_len_reg, 16'h0000,                                             // UDP
    is_ipv6 ? 8'd128 : 8'd8, 8'd0, 16'h0000, udp_src_reg, 16'h0000,                              // ICMP echo
    stream_reg, 128'd0,                                                                          // SIG
    48'd0};

// stage F0: a one-hot token, bit k set at prep_cnt k, picks byte k: of every group of eight source
// bytes, the token's byte or zero (AND-OR: no decoder; Verilator skips it without a token: all zero)
reg  [127:0] fill_token_reg;
reg  [127:0] fill_lane_reg;        // 16 bytes, the group of byte 8g in bits [8g +: 8]
reg  [127:0] fill_lane_next;
reg  [6:0]   fill_k;               // the fill's byte index: prep_cnt a clock later (0 outside ST_PREP)
reg          fill_seg_first_reg;   // byte fill_k is the first of its segment,
reg  [6:0]   fill_seg_base_reg;    // written at this offset
integer g, j;
always @(*) begin
    fill_lane_next = 128'd0;
    `ifdef VERILATOR if (fill_token_reg != 128'd0) `endif for (g = 0; g < 16; g = g + 1)
        for (j = 0; j < 8; j = j + 1)
            fill_lane_next[8*g +: 8] = fill_lane_next[8*g +: 8]
                                     | ({8{fill_token_reg[8*g + j]}} & tpl_src[8 * (127 - 8*g - j) +: 8]);
end
always @(posedge clk) begin
    fill_token_reg <= load_reg ? 128'd1 : {fill_token_reg[126:0], 1'b0};
    fill_lane_reg <= fill_lane_next;
    fill_k <= state_reg == ST_PREP ? prep_cnt_reg : 7'd0;
    fill_seg_first_reg <= 1'b1;
    case (prep_cnt_reg)
        FILL_L2:              fill_seg_base_reg <= 7'd0;
        FILL_ETYPE:           fill_seg_base_reg <= 7'd12;
        FILL_IPV4, FILL_IPV6: fill_seg_base_reg <= l2_len_reg[6:0];
        FILL_UDP, FILL_ICMP:  fill_seg_base_reg <= udp_off_reg[6:0];
        FILL_SIG:             fill_seg_base_reg <= sig_off_reg[6:0];
        default:              fill_seg_first_reg <= 1'b0;
    endcase
end

// stage F1: byte fill_k, where it goes, its tag and which checksums it is part of
reg        fill_we_reg, fill_ip_sum_reg, fill_l4_sum_reg;
reg  [6:0] fill_addr_reg;
reg  [1:0] fill_tag_reg;
reg  [7:0] fill_byte_reg;
always @(posedge clk) begin
    fill_byte_reg <= fill_lane_reg[7:0] | fill_lane_reg[15:8] | fill_lane_reg[23:16] | fill_lane_reg[31:24]
                   | fill_lane_reg[39:32] | fill_lane_reg[47:40] | fill_lane_reg[55:48] | fill_lane_reg[63:56]
                   | fill_lane_reg[71:64] | fill_lane_reg[79:72] | fill_lane_reg[87:80] | fill_lane_reg[95:88]
                   | fill_lane_reg[103:96] | fill_lane_reg[111:104] | fill_lane_reg[119:112]
                   | fill_lane_reg[127:120];          // (one lane at most is not zero)
    fill_tag_reg <= TAG_TPL;
    fill_ip_sum_reg <= 1'b0;
    fill_l4_sum_reg <= 1'b1;
    fill_addr_reg <= fill_seg_first_reg ? fill_seg_base_reg : fill_addr_reg + 7'd1;
    if (fill_k < FILL_ETYPE) begin
        fill_we_reg <= fill_k >= FILL_L2;
        fill_l4_sum_reg <= 1'b0;
    end else if (fill_k < FILL_IPV4) begin
        fill_we_reg <= wr_etype_reg;
        fill_l4_sum_reg <= 1'b0;
    end else if (fill_k < FILL_IPV6) begin
        fill_we_reg <= wr_ipv4_reg;
        fill_ip_sum_reg <= 1'b1;
        fill_l4_sum_reg <= fill_k >= FILL_IPV4 + 7'd12 && !icmp_reg;    // addresses (pseudo-header)
        if (fill_k == FILL_IPV4 + 7'd4 || fill_k == FILL_IPV4 + 7'd5 ||
            fill_k == FILL_IPV4 + 7'd10 || fill_k == FILL_IPV4 + 7'd11)
            fill_tag_reg <= TAG_IP;                                        // identification, checksum
    end else if (fill_k < FILL_UDP) begin
        fill_we_reg <= wr_ipv6_reg;
        fill_l4_sum_reg <= fill_k >= FILL_IPV6 + 7'd8;                  // addresses (pseudo-header)
    end else if (fill_k < FILL_ICMP) begin
        fill_we_reg <= wr_udp_reg;
        if (fill_k >= FILL_UDP + 7'd6)
            fill_tag_reg <= TAG_L4;                                        // checksum
    end else if (fill_k < FILL_SIG) begin
        fill_we_reg <= wr_icmp_reg;
        if (fill_k == FILL_ICMP + 7'd2 || fill_k == FILL_ICMP + 7'd3 || fill_k >= FILL_ICMP + 7'd6)
            fill_tag_reg <= TAG_L4;                                        // checksum, sequence number
    end else begin
        fill_we_reg <= fill_k < FILL_END;
        if (fill_k >= FILL_SIG + 7'd2) begin
            fill_tag_reg <= TAG_SIG;
            fill_l4_sum_reg <= 1'b0;                                       // summed per frame
        end
    end
    if (state_reg != ST_PREP)
        fill_we_reg <= 1'b0;
end

// stage F2: write and sum
reg  [9:0]  tpl_mem [0:127];
reg  [19:0] ip_const_reg;
reg  [22:0] udp_const_reg;
wire [15:0] fill_word = fill_addr_reg[0] ? {8'd0, fill_byte_reg} : {fill_byte_reg, 8'd0};
always @(posedge clk) begin
    if (fill_we_reg) begin
        tpl_mem[fill_addr_reg] <= {fill_tag_reg, fill_byte_reg};
        if (fill_ip_sum_reg)
            ip_const_reg <= ip_const_reg + fill_word;
        if (fill_l4_sum_reg)
            udp_const_reg <= udp_const_reg + fill_word;
    end
    if (state_reg == ST_PREP && fill_k == FILL_L2) begin
        ip_const_reg <= 20'd0;
        udp_const_reg <= {7'd0, pseudo_reg};
    end
end

// ---------------------------------------------------------------------------------------------
// run control
// ---------------------------------------------------------------------------------------------
reg [15:0] pos_reg;            // byte position in preamble + frame
reg [21:0] at_pos_reg;         // one-hot: pos_reg == i for the frame's first 22 clocks (no comparator)
reg [31:0] gap_cnt_reg;
reg        stop_req_reg;
reg [47:0] run_frames_reg;     // frames started in this run
reg [31:0] burst_cnt_reg;
reg [31:0] frac_acc_reg;
reg [47:0] seq_cur_reg;

assign stat_seq_next = seq_cur_reg;

// per-frame values
reg [47:0] frame_seq_reg;
reg [47:0] frame_ts_reg;
reg [111:0] sig_shift_reg;
reg [31:0] check_crc_reg;
reg [23:0] udp_sum_reg;
reg [15:0] udp_csum_reg;
reg [19:0] ip_sum_reg;
reg [15:0] ip_csum_reg;

assign stat_busy = state_reg != ST_IDLE || load_reg;   // busy from the clock the start is taken

// the frame's last clock (pos = size + 7, the last FCS byte), the gap's last clock and the end of the
// run, each a flag registered one clock ahead so that no comparator drives the state machine
reg  [15:0] last_m2_reg;           // size + 5
reg         at_m2_reg;             // pos was size + 5 at the last edge (pos moves by one per frame clock)
reg  [31:0] burst_last_reg;        // burst_len - 1
reg         burst_on_reg;          // burst_len != 0
reg         frac_on_reg;           // frac_den != 0
reg         at_last_reg, gap_done_reg, run_done_reg, gap_m1_zero_reg;
reg  [1:0]  count_nz_reg;          // each half of count != 0
reg  [3:0]  count_eq_reg;          // each quarter of run_frames == count
always @(posedge clk) begin
    last_m2_reg <= size_reg + 16'd5;
    at_m2_reg <= state_reg == ST_FRAME && pos_reg == last_m2_reg;
    burst_last_reg <= burst_len_reg - 32'd1;
    burst_on_reg <= burst_len_reg != 32'd0;
    frac_on_reg <= frac_den_reg != 32'd0;
    at_last_reg <= state_reg == ST_FRAME && !at_last_reg && at_m2_reg;
    // the run's frame count moves at pos 0 and is compared in quarters a clock later; the gap ends
    // >= 64 clocks after that: exact; a stop counts one clock late
    count_nz_reg <= {count_reg[47:24] != 24'd0, count_reg[23:0] != 24'd0};
    count_eq_reg <= {run_frames_reg[47:36] == count_reg[47:36], run_frames_reg[35:24] == count_reg[35:24],
                     run_frames_reg[23:12] == count_reg[23:12], run_frames_reg[11:0] == count_reg[11:0]};
    run_done_reg <= (count_nz_reg != 2'b00 && count_eq_reg == 4'b1111) || stop_req_reg;
    if (rst)
        at_last_reg <= 1'b0;
end
wire frame_last_pos = at_last_reg;
wire run_done = run_done_reg;

// gap after the frame now ending: burst gap at the end of a burst, else IFG plus fractional byte
// worked out early in the frame, one carry chain per clock (a frame is at least 64 clocks long)
reg         burst_end_reg;
reg  [32:0] frac_sum_reg;
reg         frac_carry_reg;
reg  [31:0] frac_next_reg, gap_m1_reg;
always @(posedge clk) begin
    case (1'b1)
        at_pos_reg[1]: begin
            burst_end_reg <= burst_on_reg && burst_cnt_reg == burst_last_reg;
            frac_sum_reg <= {1'b0, frac_acc_reg} + {1'b0, frac_num_reg};
        end
        at_pos_reg[2]: frac_carry_reg <= frac_on_reg && frac_sum_reg >= {1'b0, frac_den_reg};
        at_pos_reg[3]: begin
            frac_next_reg <= frac_carry_reg ? frac_sum_reg[31:0] - frac_den_reg : frac_sum_reg[31:0];
            gap_m1_reg <= burst_end_reg ? burst_gap_reg - 32'd1 : ifg_reg - {31'd0, !frac_carry_reg};
        end
        at_pos_reg[4]: gap_m1_zero_reg <= gap_m1_reg == 32'd0;
        default: ;
    endcase
end

// stamp: tick counter value while the SFD byte is on gmii_txd (pos 0 -> stages A0, A1, B = 10 clocks)
localparam [15:0] TS_LEAD = 16'd10;
wire [47:0] sfd_tick = time_tick[47:0] + {32'd0, TS_LEAD};   // the frame starting now

// start: registered with the check of the settings, so that the copy below is enabled straight from
// one flip-flop (load_reg) and not through the check
always @(posedge clk) begin
    load_reg <= ctl_start && state_reg == ST_IDLE && cfg_errors == 8'h00;
    if (rst)
        load_reg <= 1'b0;
end

always @(posedge clk) begin
    at_pos_reg <= {at_pos_reg[20:0], 1'b0};
    if (ctl_start && state_reg == ST_IDLE)
        stat_error <= cfg_errors;
    case (state_reg)
        ST_IDLE: begin
            // a run starts with load_reg, below
        end
        ST_PREP: begin
            // derived registers settle, the header template is written and its checksum words summed;
            // the first frame, like every other, starts only while win_open is set
            if (!prep_last_reg)
                prep_cnt_reg <= prep_cnt_reg + 7'd1;
            if (ctl_stop) begin
                state_reg <= ST_IDLE;
            end else if (prep_last_reg && win_open) begin
                state_reg <= ST_FRAME;
                pos_reg <= 16'd0;
                at_pos_reg[0] <= 1'b1;
            end
        end
        ST_FRAME: begin
            pos_reg <= pos_reg + 16'd1;
            // the frame's first and last clocks: below
        end
        ST_GAP: begin
            // the gap's end holds while the window is closed (gap_done stays set)
            if (!gap_done_reg) begin
                gap_cnt_reg <= gap_cnt_reg - 32'd1;
                gap_done_reg <= gap_cnt_reg == 32'd1;
            end
            if (gap_done_reg) begin
                if (run_done) begin
                    state_reg <= ST_IDLE;
                end else if (win_open) begin
                    state_reg <= ST_FRAME;
                    pos_reg <= 16'd0;
                    at_pos_reg[0] <= 1'b1;
                end
            end
        end
    endcase
    // at_pos_reg[0] and frame_last_pos are set only inside ST_FRAME, so what they start needs no
    // decode of the state
    if (at_pos_reg[0]) begin
        run_frames_reg <= run_frames_reg + 48'd1;
        seq_cur_reg <= seq_cur_reg + 48'd1;
    end
    if (frame_last_pos) begin
        if (burst_end_reg)
            burst_cnt_reg <= 32'd0;
        else
            burst_cnt_reg <= burst_cnt_reg + 32'd1;
        if (!burst_end_reg && frac_on_reg)
            frac_acc_reg <= frac_next_reg;
        gap_cnt_reg <= gap_m1_reg;
        gap_done_reg <= gap_m1_zero_reg;
        state_reg <= ST_GAP;
    end
    if (load_reg) begin
        proto_reg     <= cfg_proto;
        icmp_reg      <= cfg_icmp;
        vlan_en_reg   <= cfg_vlan_en;
        vlan_tci_reg  <= cfg_vlan_tci;
        dst_mac_reg   <= cfg_dst_mac;
        src_mac_reg   <= cfg_src_mac;
        ethertype_reg <= cfg_ethertype;
        ttl_reg       <= cfg_ip_ttl;
        tos_reg       <= cfg_ip_tos;
        src_ip_reg    <= cfg_src_ip;
        dst_ip_reg    <= cfg_dst_ip;
        udp_src_reg   <= cfg_udp_src;
        udp_dst_reg   <= cfg_udp_dst;
        stream_reg    <= cfg_stream_id;
        size_reg      <= cfg_size;
        ifg_reg       <= cfg_ifg;
        frac_num_reg  <= cfg_ifg_frac_num;
        frac_den_reg  <= cfg_ifg_frac_den;
        burst_len_reg <= cfg_burst_len;
        burst_gap_reg <= cfg_burst_gap;
        count_reg     <= cfg_count;
        seq_cur_reg   <= cfg_seq_start;
        run_frames_reg <= 48'd0;
        burst_cnt_reg <= 32'd0;
        frac_acc_reg  <= 32'd0;
        stop_req_reg  <= 1'b0;
        prep_cnt_reg  <= 7'd0;
        state_reg     <= ST_PREP;
    end

    if (ctl_stop && state_reg != ST_IDLE)
        stop_req_reg <= 1'b1;

    if (rst) begin
        state_reg <= ST_IDLE;
        stat_error <= 8'h00;
        seq_cur_reg <= 48'd0;
        stop_req_reg <= 1'b0;
        pos_reg <= 16'd0;
        at_pos_reg <= 22'd0;
        // settings start as a valid minimal stream so that derived registers are defined
        proto_reg <= PROTO_RAW;
        icmp_reg <= 1'b0;
        vlan_en_reg <= 1'b0;
        size_reg <= 16'd64;
    end
end

// ---------------------------------------------------------------------------------------------
// per-frame preparation during the preamble: stamp, signature check, checksums
// ---------------------------------------------------------------------------------------------
wire [31:0] check_crc_next;
fpgatest_crc32 check_crc_inst (.crc_in(check_crc_reg), .data(sig_shift_reg[111:104]), .crc_out(check_crc_next));

// the UDP (ICMP) checksum's per-frame words, picked at positions 1-6 and 15-16 and added one clock
// later. ICMP carries the low sequence word twice (echo sequence number and signature): added once
// doubled, which in one's complement is a rotation by one bit
reg         sig_crc_run_reg;       // positions 1-14
reg  [15:0] udp_frame_word_reg;
reg         udp_frame_add_reg;
wire [15:0] udp_word_of_pos = ({16{at_pos_reg[1]}} & frame_seq_reg[47:32])
                            | ({16{at_pos_reg[2]}} & frame_seq_reg[31:16])
                            | ({16{at_pos_reg[3]}} & (icmp_reg ? {frame_seq_reg[14:0], frame_seq_reg[15]}
                                                               : frame_seq_reg[15:0]))
                            | ({16{at_pos_reg[4]}} & frame_ts_reg[47:32])
                            | ({16{at_pos_reg[5]}} & frame_ts_reg[31:16])
                            | ({16{at_pos_reg[6]}} & frame_ts_reg[15:0])
                            | ({16{at_pos_reg[15]}} & check_crc_reg[31:16])
                            | ({16{at_pos_reg[16]}} & check_crc_reg[15:0]);

// at_pos_reg is set only inside ST_FRAME, and everything here starts from it: no decode of the state
// (each enable below is one or two flags)
always @(posedge clk) begin
    if (at_pos_reg[0]) begin
        frame_seq_reg <= seq_cur_reg;
        frame_ts_reg  <= sfd_tick;
        check_crc_reg <= SIG_MAGIC;
        sig_shift_reg <= {stream_reg, seq_cur_reg, sfd_tick};
        ip_sum_reg    <= ip_const_reg + seq_cur_reg[15:0];
        udp_sum_reg   <= udp_const_reg;
    end else if (sig_crc_run_reg) begin
        // signature check: CRC-32 over stream id, sequence number and TX stamp (14 bytes)
        check_crc_reg <= check_crc_next;
        sig_shift_reg <= {sig_shift_reg[103:0], 8'd0};
    end
    sig_crc_run_reg <= at_pos_reg[0] || (sig_crc_run_reg && !at_pos_reg[14]);
    udp_frame_word_reg <= udp_word_of_pos;
    udp_frame_add_reg <= |at_pos_reg[6:1] || |at_pos_reg[16:15];
    if (udp_frame_add_reg)
        udp_sum_reg <= udp_sum_reg + udp_frame_word_reg;
    if (at_pos_reg[18] || at_pos_reg[19])
        udp_sum_reg <= udp_sum_reg[15:0] + udp_sum_reg[23:16];
    // an all-zero UDP checksum means "none"; its one's-complement twin 0xFFFF is sent instead
    // (for ICMP both are right: a receiver's sum over the message is 0xFFFF either way)
    if (at_pos_reg[20])
        udp_csum_reg <= (~udp_sum_reg[15:0] == 16'd0) ? 16'hFFFF : ~udp_sum_reg[15:0];
    if (at_pos_reg[1] || at_pos_reg[2])
        ip_sum_reg <= ip_sum_reg[15:0] + ip_sum_reg[19:16];
    if (at_pos_reg[3])
        ip_csum_reg <= ~ip_sum_reg[15:0];
    if (rst)
        sig_crc_run_reg <= 1'b0;
end

// ---------------------------------------------------------------------------------------------
// stage A0: the template entry at the frame index, and what the position is
// ---------------------------------------------------------------------------------------------
// d is the index into the frame, stepping with pos_reg (no subtractor in the byte path) and preset
// to -8 (the preamble's first byte) while not in a frame. Every "d in [0, K)" test is a flag kept
// beside the counter: set when d steps from -1 to 0, cleared when it steps from K-1 to K, so no
// comparator of a variable bound sits in the byte path either.
reg [15:0] d;
reg [15:0] data_end_reg;                    // data_len - 1
reg d_ge0, d_lt_hdr, d_lt_data;

always @(posedge clk) begin
    data_end_reg <= data_len_reg - 16'd1;
    if (state_reg == ST_FRAME && !frame_last_pos) begin
        d <= d + 16'd1;
        d_ge0     <= d == 16'hFFFF ? 1'b1 : d_ge0;
        d_lt_hdr  <= d == 16'hFFFF ? 1'b1 : d[6:0] == hdr_last_reg ? 1'b0 : d_lt_hdr;
        d_lt_data <= d == 16'hFFFF ? 1'b1 : d == data_end_reg ? 1'b0 : d_lt_data;
    end else begin
        d <= -16'd8;
        {d_ge0, d_lt_hdr, d_lt_data} <= 3'd0;
    end
end

// the per-frame overlays, loaded while the preamble goes out once their contents are known
// (at_pos_reg[k] is set only at the k-th clock of a frame, k < 22, inside every frame), each
// shifting out its top byte when a template entry tagged with it is sent
reg [31:0]  ip_ovl_reg;            // IPv4 identification, header checksum
reg [31:0]  l4_ovl_reg;            // L4 checksum, ICMP echo sequence number
reg [127:0] sig_ovl_reg;           // sequence number, TX stamp, check

reg [9:0]  tpl_q;                  // {tag, byte} of the template entry at d
reg        p_hdr, p_pre, p_sfd, p_data, p_fcs, p_en;
reg [1:0]  p_fcs_idx;

always @(posedge clk) begin
    tpl_q <= tpl_mem[d[6:0]];
    p_hdr <= d_lt_hdr;

    // what the position is: preamble (d = -8..-2), SFD (d = -1), header, data or FCS
    p_en <= state_reg == ST_FRAME;
    p_pre <= d[15] && d != 16'hFFFF;
    p_sfd <= d == 16'hFFFF;
    p_data <= d_lt_data;
    p_fcs <= d_ge0 && !d_lt_data;
    p_fcs_idx <= d[1:0] - data_len_reg[1:0];
    if (rst)
        p_en <= 1'b0;
end

// ---------------------------------------------------------------------------------------------
// stage A1: the template byte or its overlay's
// ---------------------------------------------------------------------------------------------
reg        a_en_reg, a_data_reg, a_fcs_reg, a_sfd_reg;
reg [7:0]  a_byte_reg;
reg [1:0]  a_fcs_idx_reg;

wire [1:0] hdr_tag = p_hdr ? tpl_q[9:8] : TAG_TPL;

always @(posedge clk) begin
    a_en_reg <= p_en;
    a_data_reg <= p_en && p_data;
    a_fcs_reg <= p_en && p_fcs;
    a_sfd_reg <= p_en && p_sfd;
    a_fcs_idx_reg <= p_fcs_idx;
    if (!p_en || p_fcs)
        a_byte_reg <= 8'h00;
    else if (p_pre)
        a_byte_reg <= 8'h55;
    else if (p_sfd)
        a_byte_reg <= 8'hD5;
    else if (p_hdr)
        case (hdr_tag)
            TAG_IP:  a_byte_reg <= ip_ovl_reg[31:24];
            TAG_L4:  a_byte_reg <= l4_ovl_reg[31:24];
            TAG_SIG: a_byte_reg <= sig_ovl_reg[127:120];
            default: a_byte_reg <= tpl_q[7:0];
        endcase
    else
        a_byte_reg <= 8'h00;                // padding
    if (rst)
        a_en_reg <= 1'b0;

    if (at_pos_reg[4])
        ip_ovl_reg <= {frame_seq_reg[15:0], ip_csum_reg};
    else if (hdr_tag == TAG_IP)
        ip_ovl_reg <= {ip_ovl_reg[23:0], 8'd0};
    if (at_pos_reg[21])
        l4_ovl_reg <= {udp_csum_reg, frame_seq_reg[15:0]};
    else if (hdr_tag == TAG_L4)
        l4_ovl_reg <= {l4_ovl_reg[23:0], 8'd0};
    if (at_pos_reg[15])
        sig_ovl_reg <= {frame_seq_reg, frame_ts_reg, check_crc_reg};
    else if (hdr_tag == TAG_SIG)
        sig_ovl_reg <= {sig_ovl_reg[119:0], 8'd0};
end

// ---------------------------------------------------------------------------------------------
// stage B: FCS and GMII output
// ---------------------------------------------------------------------------------------------
reg [31:0] fcs_crc_reg;
wire [31:0] fcs_value = ~fcs_crc_reg;
wire [31:0] fcs_crc_next;
fpgatest_crc32 fcs_crc_inst (.crc_in(fcs_crc_reg), .data(a_byte_reg), .crc_out(fcs_crc_next));

assign gmii_tx_er = 1'b0;
assign cnt_tx_frame = a_sfd_reg;
assign cnt_tx_len = size_reg;

always @(posedge clk) begin
    gmii_tx_en <= a_en_reg;
    gmii_txd <= a_byte_reg;
    if (a_sfd_reg)
        fcs_crc_reg <= 32'hFFFFFFFF;
    if (a_data_reg)
        fcs_crc_reg <= fcs_crc_next;
    if (a_fcs_reg)
        gmii_txd <= fcs_value[8*a_fcs_idx_reg +: 8];

    if (rst) begin
        gmii_tx_en <= 1'b0;
        gmii_txd <= 8'h00;
    end
end

endmodule

`resetall
