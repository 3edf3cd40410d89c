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
 * With cfg_icmp the IP payload is an ICMP echo request (IPv4 type 8, ICMPv6 type 128) instead of UDP:
 * identifier cfg_udp_src, echo sequence number the low 16 bits of the frame's, signature and padding
 * as the echo data, the ICMP checksum right for every frame. A frame starts only while win_open is
 * set (fpgatest_window: at most a window of frames without a reply); a closed window stretches the gap.
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
                 ERR_PROTO = 8'h10, ERR_WINDOW = 8'h20;

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

// derived per-run lengths (registered, one subtraction per clock; settle during ST_PREP)
reg [15:0]  l2_len_reg, udp_off_reg, sig_off_reg, data_len_reg, l3_len_reg, udp_len_reg;
reg [15:0]  ethertype_eff_reg;
reg [7:0]   l4_proto_reg;          // IP protocol / next header: UDP 17, ICMP 1, ICMPv6 58
reg [15:0]  l4_len_sum_reg;        // the length words in the L4 checksum: UDP length twice (pseudo-header
                                   // and header), ICMPv6 once (pseudo-header), ICMPv4 none

wire is_ipv4 = proto_reg == PROTO_IPV4;
wire is_ipv6 = proto_reg == PROTO_IPV6;

always @(posedge clk) begin
    l2_len_reg   <= vlan_en_reg ? 16'd18 : 16'd14;
    udp_off_reg  <= l2_len_reg + (is_ipv6 ? 16'd40 : 16'd20);
    sig_off_reg  <= l2_len_reg + (is_ipv4 ? 16'd28 : is_ipv6 ? 16'd48 : 16'd0);
    data_len_reg <= size_reg - 16'd4;
    l3_len_reg   <= data_len_reg - l2_len_reg;
    udp_len_reg  <= l3_len_reg - (is_ipv6 ? 16'd40 : 16'd20);
    ethertype_eff_reg <= is_ipv4 ? 16'h0800 : is_ipv6 ? 16'h86DD : ethertype_reg;
    l4_proto_reg <= !icmp_reg ? 8'd17 : is_ipv6 ? 8'd58 : 8'd1;
    l4_len_sum_reg <= !icmp_reg ? {udp_len_reg[14:0], 1'b0} : is_ipv6 ? udp_len_reg : 16'd0;
end

// the checksum words that do not change per frame, summed one per clock during ST_PREP:
// IPv4 header without length and id; UDP pseudo-header addresses + protocol, ports, stream id (ICMP:
// type, identifier, stream id; ICMPv6 also the pseudo-header addresses and next header). One layout
// for every protocol, the words a protocol does not have masked to zero by flags set at the start:
// src and dst address (8 words each; IPv4 only the low two), pseudo-header protocol, source port or
// identifier, destination port or ICMP type, stream id
reg  [4:0]  prep_cnt_reg;
reg         sum_lo_reg;            // the low 32 address bits are summed (a pseudo-header: not ICMPv4)
reg         sum_hi_reg;            // the high 96 address bits are summed (IPv6)
reg  [15:0] sum_proto_reg;         // pseudo-header protocol word: UDP 17, ICMPv6 58, ICMPv4 none
reg  [15:0] sum_w4_reg;            // UDP destination port, or the ICMP type/code word
reg  [19:0] ip_const_reg;
reg  [22:0] udp_const_reg;
// the words sit in shift registers loaded at the first ST_PREP clock (their order does not matter
// to a sum); each following clock adds the top word and shifts
reg  [111:0] ip_words_reg;         // 7 words
reg  [319:0] udp_words_reg;        // 20 words (IPv4: 8 of them, the rest zero)
reg          ip_add_reg, udp_add_reg;
reg          prep_first_reg;       // the first ST_PREP clock (the clock after load_reg)
always @(posedge clk) begin
    prep_first_reg <= load_reg;
    if (prep_first_reg) begin
        // (straight from the copied settings: the derived registers are still settling)
        ip_words_reg <= {8'h45, tos_reg, 16'h4000, ttl_reg, icmp_reg ? 8'd1 : 8'd17, src_ip_reg[31:0],
                         dst_ip_reg[31:0]};
        udp_words_reg <= {src_ip_reg[127:32] & {96{sum_hi_reg}}, src_ip_reg[31:0] & {32{sum_lo_reg}},
                          dst_ip_reg[127:32] & {96{sum_hi_reg}}, dst_ip_reg[31:0] & {32{sum_lo_reg}},
                          sum_proto_reg, udp_src_reg, sum_w4_reg, stream_reg};
    end else begin
        ip_words_reg <= {ip_words_reg[95:0], 16'd0};
        udp_words_reg <= {udp_words_reg[303:0], 16'd0};
    end
    // after the load, 7 (IP) and 20 (UDP) clocks of adding: all done by prep_cnt 21 (ST_PREP ends at 23)
    ip_add_reg <= state_reg == ST_PREP && prep_cnt_reg < 5'd7;
    udp_add_reg <= state_reg == ST_PREP && prep_cnt_reg < 5'd20;
    if (ip_add_reg)
        ip_const_reg <= ip_const_reg + ip_words_reg[111:96];
    if (udp_add_reg)
        udp_const_reg <= udp_const_reg + udp_words_reg[319:304];
    if (state_reg == ST_IDLE) begin
        ip_const_reg <= 20'd0;
        udp_const_reg <= 23'd0;
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
reg         count_on_reg, count_lo_eq_reg, count_hi_eq_reg;   // cfg_count != 0, run_frames == count
always @(posedge clk) begin
    last_m2_reg <= size_reg + 16'd5;
    at_m2_reg <= state_reg == ST_FRAME && pos_reg == last_m2_reg;
    burst_last_reg <= burst_len_reg - 32'd1;
    burst_on_reg <= burst_len_reg != 32'd0;
    frac_on_reg <= frac_den_reg != 32'd0;
    at_last_reg <= state_reg == ST_FRAME && !at_last_reg && at_m2_reg;
    // the run's frame count moves at pos 0 and is compared in two halves a clock later; the gap ends
    // >= 64 clocks after that: exact; a stop counts one clock late
    count_on_reg <= count_reg != 48'd0;
    count_lo_eq_reg <= run_frames_reg[23:0] == count_reg[23:0];
    count_hi_eq_reg <= run_frames_reg[47:24] == count_reg[47:24];
    run_done_reg <= (count_on_reg && count_lo_eq_reg && count_hi_eq_reg) || stop_req_reg;
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
            // derived registers settle and the constant checksum words are summed
            prep_cnt_reg <= prep_cnt_reg + 5'd1;
            if (prep_cnt_reg == 5'd23) begin
                state_reg <= ST_FRAME;
                pos_reg <= 16'd0;
                at_pos_reg[0] <= 1'b1;
            end
            if (ctl_stop)
                state_reg <= ST_IDLE;
        end
        ST_FRAME: begin
            pos_reg <= pos_reg + 16'd1;
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
    if (load_reg) begin
        proto_reg     <= cfg_proto;
        icmp_reg      <= cfg_icmp;
        sum_lo_reg    <= !(cfg_icmp && cfg_proto == PROTO_IPV4);
        sum_hi_reg    <= cfg_proto == PROTO_IPV6;
        sum_proto_reg <= !cfg_icmp ? 16'd17 : cfg_proto == PROTO_IPV6 ? 16'd58 : 16'd0;
        sum_w4_reg    <= !cfg_icmp ? cfg_udp_dst : cfg_proto == PROTO_IPV6 ? 16'h8000 : 16'h0800;
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
        prep_cnt_reg  <= 5'd0;
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

always @(posedge clk) begin
    if (state_reg == ST_FRAME) begin
        if (at_pos_reg[0]) begin
            frame_seq_reg <= seq_cur_reg;
            frame_ts_reg  <= sfd_tick;
            check_crc_reg <= SIG_MAGIC;
            sig_shift_reg <= {stream_reg, seq_cur_reg, sfd_tick};
            ip_sum_reg    <= ip_const_reg + l3_len_reg + seq_cur_reg[15:0];
            udp_sum_reg   <= udp_const_reg + l4_len_sum_reg;
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
    end
end

// ---------------------------------------------------------------------------------------------
// stage A0: the byte at pos_reg, one candidate per header region, all registered
// ---------------------------------------------------------------------------------------------
// indices into the frame, the IP header, the UDP header and the signature, kept as counters that
// step with pos_reg (no subtractor in the byte path); preset (negative) while not in a frame.
// Every "index in [0, K)" test is a flag kept beside its counter: set when the counter steps from -1
// to 0, cleared when it steps from K-1 to K, so no comparator sits in the byte path either.
reg [15:0] d, r3, r4, rs;
reg [15:0] data_end_reg;                    // data_len - 1
reg d_lt14, d_lt18, d_lt_data, d_ge0;
reg r3_lt20, r3_lt40, r4_lt8, rs_lt18;

function in_range(input flag, input [15:0] x, input [15:0] k);
    in_range = x == 16'hFFFF ? 1'b1 : x == k - 16'd1 ? 1'b0 : flag;
endfunction

always @(posedge clk) begin
    data_end_reg <= data_len_reg - 16'd1;
    if (state_reg == ST_FRAME && !frame_last_pos) begin
        d  <= d + 16'd1;
        r3 <= r3 + 16'd1;
        r4 <= r4 + 16'd1;
        rs <= rs + 16'd1;
        d_ge0   <= d == 16'hFFFF ? 1'b1 : d_ge0;
        d_lt14  <= in_range(d_lt14, d, 16'd14);
        d_lt18  <= in_range(d_lt18, d, 16'd18);
        d_lt_data <= d == 16'hFFFF ? 1'b1 : d == data_end_reg ? 1'b0 : d_lt_data;
        r3_lt20 <= in_range(r3_lt20, r3, 16'd20);
        r3_lt40 <= in_range(r3_lt40, r3, 16'd40);
        r4_lt8  <= in_range(r4_lt8, r4, 16'd8);
        rs_lt18 <= in_range(rs_lt18, rs, 16'd18);
    end else begin
        d  <= -16'd8;
        r3 <= -16'd8 - l2_len_reg;
        r4 <= -16'd8 - udp_off_reg;
        rs <= -16'd8 - sig_off_reg;
        {d_ge0, d_lt14, d_lt18, d_lt_data} <= 4'd0;
        {r3_lt20, r3_lt40, r4_lt8, rs_lt18} <= 4'd0;
    end
end

// the header regions, first byte in the top bits: Ethernet header (18 bytes with a tag), IP header
// (40 bytes, IPv4's 20 first), UDP or ICMP header (8), signature (18: stream, sequence, TX stamp, check). Each
// loads at a fixed position of the frame: at_pos_reg[k] is set only at the k-th clock of a frame
// (k < 22, inside every frame), so the load is one flip-flop
reg [143:0] l2_shift_reg;
reg [319:0] l3_shift_reg;
reg [63:0]  udp_shift_reg;
reg [143:0] sig_out_reg;
always @(posedge clk) begin
    if (at_pos_reg[1])
        l2_shift_reg <= vlan_en_reg ? {dst_mac_reg, src_mac_reg, 16'h8100, vlan_tci_reg, ethertype_eff_reg}
                                    : {dst_mac_reg, src_mac_reg, ethertype_eff_reg, 32'd0};
    else if (d_lt18)
        l2_shift_reg <= {l2_shift_reg[135:0], 8'd0};
    if (at_pos_reg[21])
        udp_shift_reg <= icmp_reg ? {is_ipv6 ? 8'd128 : 8'd8, 8'd0, udp_csum_reg, udp_src_reg, frame_seq_reg[15:0]}
                                  : {udp_src_reg, udp_dst_reg, udp_len_reg, udp_csum_reg};
    else if (r4_lt8)
        udp_shift_reg <= {udp_shift_reg[55:0], 8'd0};
    if (at_pos_reg[15])
        sig_out_reg <= {stream_reg, frame_seq_reg, frame_ts_reg, check_crc_reg};
    else if (rs_lt18)
        sig_out_reg <= {sig_out_reg[135:0], 8'd0};
    if (at_pos_reg[5])
        l3_shift_reg <= is_ipv4
            ? {8'h45, tos_reg, l3_len_reg, frame_seq_reg[15:0], 8'h40, 8'h00,   // don't fragment
               ttl_reg, l4_proto_reg, ip_csum_reg, src_ip_reg[31:0], dst_ip_reg[31:0], 160'd0}
            : {4'h6, tos_reg, 4'h0, 16'h0000,                                // flow label 0
               udp_len_reg, l4_proto_reg, ttl_reg, src_ip_reg, dst_ip_reg};
    else if (r3_lt40)
        l3_shift_reg <= {l3_shift_reg[311:0], 8'd0};
end


reg [7:0] c_l2, c_l3, c_udp, c_sig;
reg       f_l2, f_l3, f_udp, f_sig;
reg       p_pre, p_sfd, p_data, p_fcs, p_en;
reg [1:0] p_fcs_idx;

always @(posedge clk) begin
    // every header region is a shift register, loaded while the preamble goes out once its
    // contents are known, sending its top byte and shifting one byte per clock of the region
    f_l2 <= vlan_en_reg ? d_lt18 : d_lt14;
    c_l2 <= l2_shift_reg[143:136];
    f_l3 <= (is_ipv4 && r3_lt20) || (is_ipv6 && r3_lt40);
    c_l3 <= l3_shift_reg[319:312];
    f_udp <= (is_ipv4 || is_ipv6) && r4_lt8;
    c_udp <= udp_shift_reg[63:56];
    f_sig <= rs_lt18;
    c_sig <= sig_out_reg[143:136];

    // what the position is: preamble (d = -8..-2), SFD (d = -1), data or FCS
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
// stage A1: pick the region's byte
// ---------------------------------------------------------------------------------------------
reg        a_en_reg, a_data_reg, a_fcs_reg, a_sfd_reg;
reg [7:0]  a_byte_reg;
reg [1:0]  a_fcs_idx_reg;

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
    else if (f_l2)
        a_byte_reg <= c_l2;
    else if (f_l3)
        a_byte_reg <= c_l3;
    else if (f_udp)
        a_byte_reg <= c_udp;
    else if (f_sig)
        a_byte_reg <= c_sig;
    else
        a_byte_reg <= 8'h00;                // padding
    if (rst)
        a_en_reg <= 1'b0;
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
