// SPDX-License-Identifier: BSD-2-Clause
// fpgatest_reflector: far-end loopback: frames addressed to the port go back out of it with their addresses swapped, echo requests answered; ARP and neighbour solicitation for the port's address answered.

`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * In the tester clock, beside the checker, on the received frame bytes (fpgatest_rx_cdc). A frame is
 * answered when its FCS is good, it had no receive error, it is 64 to 2^BUF_LOG2 bytes long and it
 * is one of these (behind at most one 802.1Q or 802.1ad tag, which the answer keeps):
 *
 * cfg_arp: an ARP request (RFC 826: Ethernet, IPv4, hlen 6, plen 4, opcode 1) for
 * cfg_ip[31:0], to the broadcast MAC or to cfg_mac. The answer is the ARP reply: to the requester's
 * MAC from cfg_mac, opcode 2, sender cfg_mac and cfg_ip[31:0], target the requester's MAC and
 * address; as long as the request (its padding kept).
 *
 * cfg_nd: an IPv6 neighbour solicitation (RFC 4861 7.1.1: ICMPv6 135, code 0, hop
 * limit 255) for cfg_ip, from an address that is not the unspecified one (duplicate address
 * detection is left alone), to cfg_mac or to the solicited-node multicast MAC 33:33:ff:cfg_ip[23:0],
 * with no option or the source link-layer address option alone (payload length 24 or 32). The
 * answer is the neighbour advertisement of RFC 4861 7.2.4: to the soliciting MAC and address from
 * cfg_mac and cfg_ip, hop limit 255, flags solicited and override, the target link-layer address
 * option with cfg_mac; 86 bytes without FCS (90 tagged), the first 40 IPv6 header bits as received.
 * Its ICMPv6 checksum is summed while the solicitation arrives (the source address once, the
 * target twice: it is the advertisement's source address and its target) and finished with the
 * constant words at the decision. (The solicitation's own checksum is not checked; its FCS is.)
 *
 * cfg_on: any other frame whose destination MAC is cfg_mac, reflected: the received
 * frame with
 *   - the destination and source MACs swapped (an 802.1Q or 802.1ad tag kept as it is);
 *   - IPv4 without options, IPv6: the source and destination addresses swapped (the IPv4 header
 *     checksum and the pseudo-header sums of UDP and ICMPv6 do not change with the order);
 *   - UDP: the source and destination ports swapped (the checksum does not change either);
 *   - an ICMP echo request (IPv4 type 8 or ICMPv6 type 128, code 0): an echo reply (type 0 or
 *     129), its checksum updated as RFC 1624 eq. 3 prescribes; other ICMP messages keep their type;
 *   - every other byte as received (TTL, identifier, sequence, fpgatest's signature and TX stamp)
 *     and a new FCS.
 * So a frame fpgatest sent comes back to its sender as its own stream, carrying its own TX stamp:
 * the sender's checker measures the round trip, its window core sees the replies.
 *
 * Store and forward. Frames are kept whole, in arrival order, in a ring of 2^BUF_LOG2 bytes; each
 * frame that starts while fewer than 2^DESC_LOG2 are held takes a descriptor slot at its first byte
 * (every frame does: a frame that is not to be reflected is skipped by the transmitter, which then
 * frees its bytes). A frame to be reflected that found the ring or the slots full is not reflected
 * and is counted (cnt_dropped, at the clock the decision is made). A frame's decision is made one
 * clock after its last byte and its descriptor is queued the clock after; the transmitter takes it
 * when the wire is free: the generator idle (gen_busy low) and MIN_GAP idle clocks on the port's
 * transmitter before the first preamble byte. On the pins, a reflection's SFD leaves L + 18 ticks
 * after the frame's SFD arrived (L its length with FCS; RX clock = tester clock, sim/reflector; an
 * unrelated RX clock's crossing adds up to a tick), or later while the wire is busy. Reflected
 * frames go out back to back at minimum gap:
 * at line rate the ring holds about two frames, so frames up to 2^(BUF_LOG2-1) bytes are reflected
 * at line rate when the receiving clock is not faster than the tester clock (a faster one fills
 * the ring by its ppm until a frame is dropped and counted).
 * busy is set while a frame is held or on the wire; the generator does not start then, nor while
 * cfg_on is set (see fpgatest_port). With cfg_arp or cfg_nd alone the generator runs, and an answer
 * waits for the end of its run.
 */
module fpgatest_reflector #(
    parameter BUF_LOG2  = 12,
    parameter DESC_LOG2 = 3
) (
    input  wire        clk,
    input  wire        rst,

    input  wire        cfg_on,            // reflect frames addressed to cfg_mac
    input  wire        cfg_arp,           // answer ARP requests for cfg_ip[31:0]
    input  wire        cfg_nd,            // answer neighbour solicitations for cfg_ip
    input  wire [47:0] cfg_mac,           // this port's MAC
    input  wire [127:0] cfg_ip,           // this port's address: IPv4 in the low 32 bits, IPv6 all of it

    // received frame bytes (fpgatest_rx_cdc)
    input  wire        s_valid,
    input  wire [7:0]  s_data,
    input  wire        s_first,
    input  wire        s_last,
    input  wire        s_err,

    // the port's transmitter
    input  wire        gen_busy,          // the generator has a run in progress
    input  wire        gen_tx_en,         // the generator's frame on the wire
    input  wire        tx_hold,           // no frame starts (a management frame takes the wire)
    output reg  [7:0]  gmii_txd,
    output reg         gmii_tx_en,
    output wire        busy,              // a frame held or on the wire

    // events
    output wire        cnt_tx_frame,      // a reflected frame's SFD is out; cnt_tx_len bytes follow
    output wire [15:0] cnt_tx_len,
    output wire        cnt_dropped        // a frame to be reflected found no room
);

initial if (BUF_LOG2 < 7 || BUF_LOG2 > 15 || DESC_LOG2 < 1) $error("fpgatest_reflector: BUF_LOG2 or DESC_LOG2 out of range");

localparam [31:0] FCS_RESIDUE = 32'hDEBB20E3;
localparam [15:0] MIN_SIZE = 16'd64;
localparam [4:0]  MIN_GAP = 5'd12;
localparam        AW = BUF_LOG2;                   // ring address bits (pointers carry one more)
localparam        DEPTH = 1 << DESC_LOG2;

// =============================================================================================
// receive: write the frame into the ring, read its header on the way
// =============================================================================================
reg  [7:0]  mem [0:(1 << AW)-1];
reg  [AW:0] wr_ptr_reg, free_ptr_reg;              // next byte to write; first byte still held
reg  [DESC_LOG2:0] slots_reg;                      // descriptor slots taken (frames held)
reg  [AW:0] f_start_reg;
reg  [15:0] f_idx_reg;                             // bytes of the frame so far (saturating)
reg         f_on_reg;                              // the frame has a slot
reg         f_lost_reg;                            // a byte of it found the ring full
reg  [31:0] f_crc_reg;

wire [15:0] idx = s_first ? 16'd0 : f_idx_reg;     // this byte's position in the frame
wire        on = s_first ? (cfg_on || cfg_arp || cfg_nd) && slots_reg != DEPTH : f_on_reg;
wire [AW:0] used = wr_ptr_reg - free_ptr_reg;
wire        room = !used[AW];
wire        lost = (s_first ? 1'b0 : f_lost_reg) || !room;
wire        write = s_valid && on && !lost;
wire [31:0] crc_in = s_first ? 32'hFFFFFFFF : f_crc_reg;
wire [31:0] crc_next;
fpgatest_crc32 rx_crc (.crc_in(crc_in), .data(s_data), .crc_out(crc_next));

// header: the positions this frame's layout puts its fields at
reg         mac_ok_reg, tag_reg, v4_reg, v6_reg, udp_reg, icmp_reg, req_reg;
reg  [7:0]  et_hi_reg;
reg  [15:0] csum_reg;
wire [15:0] l3 = tag_reg ? 16'd18 : 16'd14;        // first byte of the IP header (or ARP message)
wire [15:0] l4 = l3 + (v6_reg ? 16'd40 : 16'd20);  // first byte of the UDP or ICMP header
reg  [47:0] mac_sh_reg;                            // cfg_mac, shifted a byte per byte received
wire [47:0] mac_sh = s_first ? cfg_mac : mac_sh_reg;
wire [15:0] ethertype = {et_hi_reg, s_data};

// ARP and neighbour solicitation: what must hold (each flag cleared by the first byte that breaks it)
localparam [63:0] ARP_REQUEST = 64'h0001_0800_0604_0001;   // htype, ptype, hlen, plen, opcode
reg         bcast_reg, snm_reg;                    // to the broadcast / the solicited-node multicast MAC
reg         arp_reg, ns_reg, ns_opt_reg;           // an ARP request / an NS so far; NS with an option
reg         addr_ok_reg, src_zero_reg;             // the address asked for is cfg_ip; the NS's source is ::
reg  [7:0]  w_hi_reg;                              // the first byte of a 16-bit word being summed
reg  [20:0] nd_sum_reg;                            // the advertisement's checksum so far (plain sum)
wire [15:0] rel3 = idx - l3;                       // the byte's place in the IP header or ARP message
wire [15:0] rel4 = idx - l4;                       // ... in the ICMPv6 message
wire [47:0] snm_mac = {24'h3333FF, cfg_ip[23:0]};
wire [7:0]  snm_byte = snm_mac[8 * (3'd5 - idx[2:0]) +: 8];
wire [7:0]  arp_byte = ARP_REQUEST[8 * (3'd7 - rel3[2:0]) +: 8];
wire [7:0]  tpa_byte = cfg_ip[8 * (2'd3 - rel3[1:0]) +: 8];        // ARP: rel3 = 24..27
wire [15:0] tk = rel4 - 16'd8;                    // NS: the target's byte, rel4 = 8..23
wire [7:0]  target_byte = cfg_ip[8 * (4'd15 - tk[3:0]) +: 8];
wire        in_src = v6_reg && rel3 >= 16'd8 && rel3 < 16'd24;
wire        in_target = v6_reg && rel4 >= 16'd8 && rel4 < 16'd24;
wire [15:0] word = {w_hi_reg, s_data};

always @(posedge clk) begin
    if (s_valid) begin
        if (s_first) begin
            f_start_reg <= wr_ptr_reg;
            f_on_reg <= on;
            mac_ok_reg <= 1'b1;
            bcast_reg <= 1'b1;
            snm_reg <= 1'b1;
            arp_reg <= 1'b0;
            ns_reg <= 1'b1;
            ns_opt_reg <= 1'b0;
            addr_ok_reg <= 1'b1;
            src_zero_reg <= 1'b1;
            nd_sum_reg <= 21'd0;
            tag_reg <= 1'b0;
            v4_reg <= 1'b0;
            v6_reg <= 1'b0;
            udp_reg <= 1'b0;
            icmp_reg <= 1'b0;
            req_reg <= 1'b0;
        end
        f_idx_reg <= idx == 16'hFFFF ? idx : idx + 16'd1;
        f_lost_reg <= on && lost;
        f_crc_reg <= crc_next;
        if (write) begin
            mem[wr_ptr_reg[AW-1:0]] <= s_data;
            wr_ptr_reg <= wr_ptr_reg + 1'b1;
        end

        mac_sh_reg <= {mac_sh[39:0], 8'd0};
        if (idx < 16'd6 && s_data != mac_sh[47:40])
            mac_ok_reg <= 1'b0;
        if (idx == l3 - 16'd2)
            et_hi_reg <= s_data;
        if (idx == l3 - 16'd1) begin
            if (!tag_reg && (ethertype == 16'h8100 || ethertype == 16'h88A8))
                tag_reg <= 1'b1;
            v4_reg <= ethertype == 16'h0800;
            v6_reg <= ethertype == 16'h86DD;
            arp_reg <= ethertype == 16'h0806;
        end
        if (idx == l3 && !(v4_reg ? s_data == 8'h45 : s_data[7:4] == 4'h6)) begin
            v4_reg <= 1'b0;                          // IPv4 with options, or not IP after all
            v6_reg <= 1'b0;
        end
        if ((v4_reg && idx == l3 + 16'd9) || (v6_reg && idx == l3 + 16'd6)) begin
            udp_reg <= s_data == 8'd17;
            icmp_reg <= s_data == (v4_reg ? 8'd1 : 8'd58);
        end
        if (icmp_reg && idx == l4)
            req_reg <= s_data == (v4_reg ? 8'd8 : 8'd128);
        if (icmp_reg && idx == l4 + 16'd1 && s_data != 8'd0)
            req_reg <= 1'b0;
        if (idx == l4 + 16'd2)
            csum_reg[15:8] <= s_data;
        if (idx == l4 + 16'd3)
            csum_reg[7:0] <= s_data;

        if (idx < 16'd6 && s_data != 8'hFF)
            bcast_reg <= 1'b0;
        if (idx < 16'd6 && s_data != snm_byte)
            snm_reg <= 1'b0;
        // ARP: the request's fixed fields, then the target protocol address
        if (arp_reg && rel3 < 16'd8 && s_data != arp_byte)
            arp_reg <= 1'b0;
        if (arp_reg && rel3 >= 16'd24 && rel3 < 16'd28 && s_data != tpa_byte)
            addr_ok_reg <= 1'b0;
        // NS: payload length 24 or 32, hop limit 255, type 135 code 0, the target, the option alone
        if (v6_reg && ((rel3 == 16'd4 && s_data != 8'd0) || (rel3 == 16'd5 && s_data != 8'd24 && s_data != 8'd32)
                       || (rel3 == 16'd7 && s_data != 8'd255) || (rel4 == 16'd0 && s_data != 8'd135)
                       || (rel4 == 16'd1 && s_data != 8'd0)
                       || (ns_opt_reg && (rel4 == 16'd24 || rel4 == 16'd25) && s_data != 8'd1)))
            ns_reg <= 1'b0;
        if (v6_reg && rel3 == 16'd5)
            ns_opt_reg <= s_data == 8'd32;
        if (in_src && s_data != 8'd0)
            src_zero_reg <= 1'b0;
        if (in_target && s_data != target_byte)
            addr_ok_reg <= 1'b0;
        // the advertisement's checksum: the solicitation's source address (its destination) once,
        // the target (its source and its target) twice; l3 is even, so words start at even bytes
        w_hi_reg <= s_data;
        if ((in_src || in_target) && idx[0])
            nd_sum_reg <= nd_sum_reg + (in_target ? {4'd0, word, 1'b0} : {5'd0, word});
    end
    if (rst) begin
        wr_ptr_reg <= 0;
        f_on_reg <= 1'b0;
        f_lost_reg <= 1'b0;
    end
end

// ---------------------------------------------------------------------------------------------
// decision, a clock after the last byte: a descriptor for every frame that took a slot
// ---------------------------------------------------------------------------------------------
reg         p_valid_reg, p_on_reg, p_lost_reg, p_err_reg;
reg  [31:0] p_crc_reg;
reg  [AW:0] p_start_reg, p_end_reg;
reg  [15:0] p_len_reg;
reg         p_mac_ok_reg, p_bcast_reg, p_snm_reg;
reg         p_tag_reg, p_v4_reg, p_v6_reg, p_udp_reg, p_req_reg;
reg         p_arp_reg, p_ns_reg, p_ns_opt_reg, p_addr_ok_reg, p_src_zero_reg, p_icmp_reg;
reg  [15:0] p_csum_reg;
reg  [20:0] p_nd_sum_reg;

always @(posedge clk) begin
    p_valid_reg <= s_valid && s_last;
    if (s_valid && s_last) begin
        p_on_reg <= on;
        p_lost_reg <= lost;
        p_err_reg <= s_err;
        p_crc_reg <= crc_next;
        p_start_reg <= s_first ? wr_ptr_reg : f_start_reg;
        p_end_reg <= wr_ptr_reg + write;
        p_len_reg <= idx + 16'd1;
        p_mac_ok_reg <= mac_ok_reg;
        p_bcast_reg <= bcast_reg;
        p_snm_reg <= snm_reg;
        p_arp_reg <= arp_reg;
        p_ns_reg <= ns_reg;
        p_ns_opt_reg <= ns_opt_reg;
        p_addr_ok_reg <= addr_ok_reg;
        p_src_zero_reg <= src_zero_reg;
        p_icmp_reg <= icmp_reg;
        p_nd_sum_reg <= nd_sum_reg;
        p_tag_reg <= tag_reg;
        p_v4_reg <= v4_reg;
        p_v6_reg <= v6_reg;
        p_udp_reg <= udp_reg;
        p_req_reg <= req_reg;
        p_csum_reg <= csum_reg;
    end
    if (rst)
        p_valid_reg <= 1'b0;
end

// (a frame of 64 bytes or more has had its MAC, header and checksum bytes all registered before its
// last byte; a solicitation's last field, its option, ends 28 bytes after the IPv6 header + FCS)
wire [15:0] p_l3 = p_tag_reg ? 16'd18 : 16'd14;
wire        p_intact = p_crc_reg == FCS_RESIDUE && !p_err_reg && p_len_reg >= MIN_SIZE;
wire        p_arp = cfg_arp && p_arp_reg && p_addr_ok_reg && (p_bcast_reg || p_mac_ok_reg);
wire        p_nd = cfg_nd && p_v6_reg && p_icmp_reg && p_ns_reg && p_addr_ok_reg
                   && !p_src_zero_reg && (p_snm_reg || p_mac_ok_reg)
                   && p_len_reg >= p_l3 + (p_ns_opt_reg ? 16'd72 : 16'd64) + 16'd4;
wire        p_reflect = cfg_on && p_mac_ok_reg;
wire        p_good = p_intact && (p_arp || p_nd || p_reflect);
wire        p_send = p_good && !p_lost_reg;
// (a frame that found every slot taken has none: it is parsed all the same, and counted)
assign      cnt_dropped = p_valid_reg && p_good && (!p_on_reg || p_lost_reg);

// RFC 1624 eq. 3: HC' = ~(~HC + ~m + m'), m the type/code word before (0x0800, 0x8000) and m' after
// (0x0000, 0x8100)
function [15:0] oc_add(input [15:0] a, input [15:0] b);
    reg [16:0] s;
    begin
        s = {1'b0, a} + {1'b0, b};
        oc_add = s[15:0] + {15'd0, s[16]};
    end
endfunction
wire [15:0] p_csum_echo = p_v4_reg ? ~oc_add(~p_csum_reg, ~16'h0800)
                                   : ~oc_add(oc_add(~p_csum_reg, ~16'h8000), 16'h8100);
// the advertisement's checksum: what arrived, plus the pseudo-header's length (32) and next header
// (58), type 136 code 0, flags 0x6000 (solicited, override), option type 2 length 1, cfg_mac
localparam [20:0] NA_CONST = 21'h20 + 21'h3A + 21'h8800 + 21'h6000 + 21'h0201;
wire [20:0] nd_total = p_nd_sum_reg + NA_CONST + cfg_mac[47:32] + cfg_mac[31:16] + cfg_mac[15:0];
wire [16:0] nd_fold = {1'b0, nd_total[15:0]} + {12'd0, nd_total[20:16]};
wire [15:0] p_csum_nd = ~(nd_fold[15:0] + {15'd0, nd_fold[16]});
wire [15:0] p_csum_new = p_nd ? p_csum_nd : p_csum_echo;
// what the descriptor's frame is answered as (ARP before ND before reflection)
wire        p_as_arp = p_arp;
wire        p_as_nd = !p_arp && p_nd;

// descriptor: {send, ARP reply, advertisement, tag, v4, v6, udp, echo request, new checksum, start, end}
localparam DW = 8 + 16 + 2 * (AW + 1);
reg  [DW-1:0]      desc_mem [0:DEPTH-1];
reg  [DESC_LOG2:0] desc_wr_reg, desc_rd_reg;
wire [DW-1:0]      head = desc_mem[desc_rd_reg[DESC_LOG2-1:0]];
wire               head_valid = desc_wr_reg != desc_rd_reg;

always @(posedge clk) begin
    if (p_valid_reg && p_on_reg) begin
        desc_mem[desc_wr_reg[DESC_LOG2-1:0]] <= {p_send, p_as_arp, p_as_nd, p_tag_reg, p_v4_reg, p_v6_reg,
                                                  p_udp_reg, p_req_reg && p_reflect, p_csum_new,
                                                  p_start_reg, p_end_reg};
        desc_wr_reg <= desc_wr_reg + 1'b1;
    end
    if (rst)
        desc_wr_reg <= 0;
end

// =============================================================================================
// transmit: preamble, the frame with its fields swapped, a new FCS
// =============================================================================================
localparam [1:0] T_IDLE = 2'd0, T_PRE = 2'd1, T_DATA = 2'd2, T_FCS = 2'd3;
reg  [1:0]  t_state_reg;
reg  [15:0] t_cnt_reg;                             // preamble byte, frame byte or FCS byte
reg  [15:0] t_n_reg;                               // frame bytes without the FCS
reg  [AW:0] t_start_reg, t_end_reg;
reg         t_arp_reg, t_nd_reg, t_tag_reg, t_v4_reg, t_v6_reg, t_udp_reg, t_req_reg;
reg  [15:0] t_csum_reg;
reg  [31:0] t_crc_reg;
reg  [4:0]  idle_reg;                              // idle clocks on the wire so far (saturating)
reg         t_sfd_reg;
reg  [7:0]  t_q_reg;                               // the ring's byte for t_cnt_reg

wire        h_send = head[DW-1];
wire [AW:0] h_start = head[2*(AW+1)-1:AW+1];
wire [AW:0] h_end = head[AW:0];
wire [AW:0] h_len = h_end - h_start;               // (at most 2^AW bytes)
// the first preamble byte goes out two clocks after the decision: MIN_GAP idle clocks before it
wire        wire_free = !gen_busy && !gen_tx_en && !gmii_tx_en && idle_reg >= MIN_GAP - 5'd2 && !tx_hold;

// where byte j of the answer comes from in the received frame (the swapped fields; the bytes an
// answer makes itself are put in by t_byte below)
wire [15:0] t_l3 = t_tag_reg ? 16'd18 : 16'd14;
wire [15:0] t_l4 = t_l3 + (t_v6_reg ? 16'd40 : 16'd20);
function [15:0] source(input [15:0] j);
    begin
        source = j;
        if (j < 16'd6)
            source = j + 16'd6;
        else if (t_arp_reg && j >= t_l3 + 16'd14 && j < t_l3 + 16'd18)   // sender address <- target's
            source = j + 16'd10;
        else if (t_arp_reg && j >= t_l3 + 16'd18 && j < t_l3 + 16'd28)   // target <- sender
            source = j - 16'd10;
        else if (t_nd_reg && j >= t_l3 + 16'd8 && j < t_l3 + 16'd24)     // source <- the NS's target
            source = j + 16'd40;
        else if (t_nd_reg && j >= t_l3 + 16'd24 && j < t_l3 + 16'd40)    // destination <- the NS's source
            source = j - 16'd16;
        else if (t_arp_reg || t_nd_reg)
            source = j;
        else if (j < 16'd12)
            source = j - 16'd6;
        else if (t_v4_reg && j >= t_l3 + 16'd12 && j < t_l3 + 16'd16)
            source = j + 16'd4;
        else if (t_v4_reg && j >= t_l3 + 16'd16 && j < t_l3 + 16'd20)
            source = j - 16'd4;
        else if (t_v6_reg && j >= t_l3 + 16'd8 && j < t_l3 + 16'd24)
            source = j + 16'd16;
        else if (t_v6_reg && j >= t_l3 + 16'd24 && j < t_l3 + 16'd40)
            source = j - 16'd16;
        else if (t_udp_reg && (t_v4_reg || t_v6_reg) && j >= t_l4 && j < t_l4 + 16'd2)
            source = j + 16'd2;
        else if (t_udp_reg && (t_v4_reg || t_v6_reg) && j >= t_l4 + 16'd2 && j < t_l4 + 16'd4)
            source = j - 16'd2;
    end
endfunction

// the ring is read a clock ahead: byte 0 during the SFD, byte j + 1 while byte j goes out
wire [15:0] rd_j = t_state_reg == T_DATA ? t_cnt_reg + 16'd1 : 16'd0;
wire [15:0] rd_src = source(rd_j);
wire [AW:0] rd_addr = t_start_reg + rd_src[AW:0];
always @(posedge clk)
    t_q_reg <= mem[rd_addr[AW-1:0]];

// the bytes an answer makes itself: the port's MAC as source (and ARP sender, NA option), ARP's
// opcode, the advertisement's payload length and ICMPv6 fields; an echo reply's type and checksum
wire [15:0] t_rel3 = t_cnt_reg - t_l3;
wire [15:0] t_rel4 = t_cnt_reg - t_l4;
function [7:0] mac_byte(input [15:0] k);           // byte k (0..5) of cfg_mac
    mac_byte = cfg_mac[8 * (3'd5 - k[2:0]) +: 8];
endfunction
reg  [7:0]  t_byte;
always @(*) begin
    t_byte = t_q_reg;
    if (t_arp_reg) begin
        if (t_cnt_reg >= 16'd6 && t_cnt_reg < 16'd12)
            t_byte = mac_byte(t_cnt_reg - 16'd6);
        else if (t_rel3 == 16'd7)
            t_byte = 8'd2;                                                 // opcode: reply
        else if (t_rel3 >= 16'd8 && t_rel3 < 16'd14)
            t_byte = mac_byte(t_rel3 - 16'd8);                             // sender hardware address
    end else if (t_nd_reg) begin
        if (t_cnt_reg >= 16'd6 && t_cnt_reg < 16'd12)
            t_byte = mac_byte(t_cnt_reg - 16'd6);
        else if (t_rel3 == 16'd4)
            t_byte = 8'd0;                                                 // payload length 32
        else if (t_rel3 == 16'd5)
            t_byte = 8'd32;
        else if (t_rel4 == 16'd0)
            t_byte = 8'd136;                                               // neighbour advertisement
        else if (t_rel4 == 16'd1)
            t_byte = 8'd0;
        else if (t_rel4 == 16'd2)
            t_byte = t_csum_reg[15:8];
        else if (t_rel4 == 16'd3)
            t_byte = t_csum_reg[7:0];
        else if (t_rel4 == 16'd4)
            t_byte = 8'h60;                                                // solicited, override
        else if (t_rel4 >= 16'd5 && t_rel4 < 16'd8)
            t_byte = 8'd0;
        else if (t_rel4 == 16'd24)
            t_byte = 8'd2;                                                 // target link-layer address
        else if (t_rel4 == 16'd25)
            t_byte = 8'd1;
        else if (t_rel4 >= 16'd26 && t_rel4 < 16'd32)
            t_byte = mac_byte(t_rel4 - 16'd26);
    end else if (t_req_reg) begin
        if (t_cnt_reg == t_l4)
            t_byte = t_v4_reg ? 8'd0 : 8'd129;
        else if (t_cnt_reg == t_l4 + 16'd2)
            t_byte = t_csum_reg[15:8];
        else if (t_cnt_reg == t_l4 + 16'd3)
            t_byte = t_csum_reg[7:0];
    end
end
wire [31:0] t_crc_next;
fpgatest_crc32 tx_crc (.crc_in(t_crc_reg), .data(t_byte), .crc_out(t_crc_next));
wire [31:0] fcs = ~t_crc_reg;

// a frame leaves the ring: skipped, or its last FCS byte out
wire        retire = (t_state_reg == T_IDLE && head_valid && !h_send)
                   || (t_state_reg == T_FCS && t_cnt_reg == 16'd3);

always @(posedge clk) begin
    gmii_tx_en <= 1'b0;
    gmii_txd <= 8'h00;
    t_sfd_reg <= 1'b0;
    idle_reg <= (gen_tx_en || gmii_tx_en) ? 5'd0 : idle_reg == 5'd31 ? idle_reg : idle_reg + 5'd1;
    case (t_state_reg)
        T_IDLE: if (head_valid && h_send && wire_free) begin
            t_state_reg <= T_PRE;
            t_cnt_reg <= 16'd0;
            t_start_reg <= h_start;
            t_end_reg <= h_end;
            // an advertisement has a length of its own: the IPv6 header and 32 bytes of ICMPv6
            t_n_reg <= head[DW-3] ? (head[DW-4] ? 16'd90 : 16'd86) : h_len - 16'd4;
            {t_arp_reg, t_nd_reg, t_tag_reg, t_v4_reg, t_v6_reg, t_udp_reg, t_req_reg} <= head[DW-2:DW-8];
            t_csum_reg <= head[DW-9:DW-24];
        end
        T_PRE: begin
            gmii_tx_en <= 1'b1;
            gmii_txd <= t_cnt_reg == 16'd7 ? 8'hD5 : 8'h55;
            t_cnt_reg <= t_cnt_reg + 16'd1;
            t_crc_reg <= 32'hFFFFFFFF;
            if (t_cnt_reg == 16'd7) begin
                t_sfd_reg <= 1'b1;
                t_state_reg <= T_DATA;
                t_cnt_reg <= 16'd0;
            end
        end
        T_DATA: begin
            gmii_tx_en <= 1'b1;
            gmii_txd <= t_byte;
            t_crc_reg <= t_crc_next;
            t_cnt_reg <= t_cnt_reg + 16'd1;
            if (t_cnt_reg == t_n_reg - 16'd1) begin
                t_state_reg <= T_FCS;
                t_cnt_reg <= 16'd0;
            end
        end
        T_FCS: begin
            gmii_tx_en <= 1'b1;
            gmii_txd <= fcs[8 * t_cnt_reg[1:0] +: 8];
            t_cnt_reg <= t_cnt_reg + 16'd1;
            if (t_cnt_reg == 16'd3)
                t_state_reg <= T_IDLE;
        end
    endcase
    if (retire) begin
        free_ptr_reg <= t_state_reg == T_IDLE ? h_end : t_end_reg;
        desc_rd_reg <= desc_rd_reg + 1'b1;
    end
    // a slot is taken at a frame's first byte and given back when the frame is released
    slots_reg <= slots_reg + (s_valid && s_first && on) - retire;
    if (rst) begin
        t_state_reg <= T_IDLE;
        gmii_tx_en <= 1'b0;
        idle_reg <= 5'd0;
        free_ptr_reg <= 0;
        desc_rd_reg <= 0;
        slots_reg <= 0;
    end
end

assign busy = slots_reg != 0 || p_valid_reg || t_state_reg != T_IDLE;
assign cnt_tx_frame = t_sfd_reg;
assign cnt_tx_len = t_n_reg + 16'd4;

endmodule

`resetall
