// SPDX-License-Identifier: BSD-2-Clause
// dut_echo: an echo responder at the far end of the twin's path (a host answering ping), on GMII.

`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * Frames from the forward path (in_*) always go on to port 1's receiver (fwd_* = in_*). While
 * cfg_enable is set, every ICMP echo request among them (IPv4 type 8, or ICMPv6 type 128; 802.1Q tag
 * allowed; FCS good) is answered: MAC and IP addresses swapped, type 0 (ICMPv6 129), ICMP checksum
 * updated (RFC 1624), TTL, identifier, sequence number and data kept, a new FCS. The reply's SFD leaves
 * on ret_* at
 *   T = t_in + L + max(cfg_delay, 16)   ticks
 * (t_in = tick of the request's SFD, L = its length incl. FCS), or later while the output is busy
 * (12 idle clocks after the frame before). ret_* feeds the return path (dut_ba). While cfg_enable is
 * set it carries the replies and port 1's own frames (other_*: background load from the far end),
 * each of these stored whole and sent once in, in order of readiness; while it is clear, ret_* is
 * port 1's transmitter as it is. Change cfg_enable only while no frame is on either input.
 * A host's queues are finite: a frame that finds the request buffer (2^BUF_LOG2 bytes) or the reply
 * queue (2^DESC_LOG2 replies) full is not answered and is counted in stat_no_room; one of port 1's
 * frames that finds its own buffer or queue full is not sent and is counted in stat_other_no_room.
 * (Frames from the forward path still reach port 1 either way.)
 * Simulation model: not meant for synthesis.
 */
module dut_echo #(
    parameter BUF_LOG2  = 17,
    parameter DESC_LOG2 = 10
) (
    input  wire        clk,
    input  wire        rst,

    input  wire [7:0]  in_d,                 // from the forward path
    input  wire        in_en,
    input  wire [7:0]  other_d,              // port 1's transmitter
    input  wire        other_en,
    output wire [7:0]  fwd_d,                // to port 1's receiver
    output wire        fwd_en,
    output wire [7:0]  ret_d,                // into the return path
    output wire        ret_en,

    input  wire        cfg_enable,           // 1: answer echo requests (the return path carries the replies)
    input  wire [31:0] cfg_delay,            // processing time from the request's last byte to the reply's SFD, ticks (>= 16)

    output reg  [63:0] stat_requests,        // echo requests answered
    output reg  [63:0] stat_replies,         // replies sent
    output reg  [63:0] stat_passed,          // other frames (passed on to port 1 only)
    output reg  [63:0] stat_merged,          // port 1's frames sent on ret_* beside the replies
    output reg  [63:0] stat_no_room,         // frames not taken in: the request buffer or the reply queue was full
    output reg  [63:0] stat_other_no_room    // port 1's frames not sent: their buffer or queue was full
);

localparam BUF = 1 << BUF_LOG2;
localparam [31:0] MIN_DELAY = 32'd16;

// The responder's registers run on run_clk (dut_run_clock): clk while it is on, in reset, or still
// has work (a frame coming in, a reply or one of port 1's frames queued or going out), and still
// otherwise, so a responder that is off costs the twin nothing (it was 4 % of the default twin's time).
wire        busy;
wire        run_clk;
dut_run_clock gate (.clk(clk), .run(cfg_enable || rst || busy), .run_clk(run_clk));

assign fwd_d = in_d;
assign fwd_en = in_en;

function [31:0] crc_byte(input [31:0] crc, input [7:0] d);
    integer i;
    reg [31:0] c;
    begin
        c = crc ^ {24'd0, d};
        for (i = 0; i < 8; i = i + 1)
            c = c[0] ? (c >> 1) ^ 32'hEDB88320 : c >> 1;
        crc_byte = c;
    end
endfunction

// one's-complement sum of two 16-bit words
function [15:0] oc_add(input [15:0] a, input [15:0] b);
    reg [16:0] s;
    begin
        s = {1'b0, a} + {1'b0, b};
        oc_add = s[15:0] + {15'd0, s[16]};
    end
endfunction

reg  [7:0]  mem [0:BUF-1];
reg  [BUF_LOG2-1:0] wr_ptr_reg, start_reg, rd_ptr_reg;
reg  [BUF_LOG2+79:0] desc_mem [0:(1<<DESC_LOG2)-1];   // {start, length, due tick}
reg  [DESC_LOG2:0] desc_wr_reg, desc_rd_reg;
reg  [63:0] tick_reg;

// port 1's frames while enabled: stored whole, then sent between the replies
reg  [7:0]  omem [0:BUF-1];
reg  [BUF_LOG2-1:0] o_wr_reg, o_start_reg, o_rd_reg;
reg  [BUF_LOG2+15:0] odesc_mem [0:(1<<DESC_LOG2)-1];   // {start, length}
reg  [DESC_LOG2:0] odesc_wr_reg, odesc_rd_reg;
reg  [15:0] o_len_reg;
reg         o_lost_reg;                   // a byte of this frame found the buffer full
wire        o_sfd, o_byte, o_end;
dut_gmii_frames other_frames (.clk(run_clk), .rst(rst), .d(other_d), .en(other_en && cfg_enable),
                              .sfd(o_sfd), .byte_valid(o_byte), .frame_end(o_end));

// room: the byte at the write pointer may not reach the first byte of the oldest frame not yet sent
// (its descriptor stays until its last byte is out); a queue of 2^DESC_LOG2 descriptors is full
wire [BUF_LOG2+15:0]  odesc_head = odesc_mem[odesc_rd_reg[DESC_LOG2-1:0]];
wire [BUF_LOG2-1:0]   o_wr_next = o_wr_reg + 1'b1;
wire [DESC_LOG2:0]    odesc_used = odesc_wr_reg - odesc_rd_reg;
wire                  o_buf_full = odesc_used != 0 && o_wr_next == odesc_head[BUF_LOG2+15:16];

always @(posedge run_clk) begin
    if (o_sfd) begin
        o_len_reg <= 16'd0;
        o_start_reg <= o_wr_reg;
        o_lost_reg <= 1'b0;
    end
    if (o_byte) begin
        if (o_buf_full || o_lost_reg) begin
            o_lost_reg <= 1'b1;
        end else begin
            omem[o_wr_reg] <= other_d;
            o_wr_reg <= o_wr_next;
        end
        o_len_reg <= o_len_reg + 16'd1;
    end
    if (o_end) begin
        if (o_lost_reg || odesc_used[DESC_LOG2]) begin
            o_wr_reg <= o_start_reg;             // not kept
            stat_other_no_room <= stat_other_no_room + 64'd1;
        end else begin
            odesc_mem[odesc_wr_reg[DESC_LOG2-1:0]] <= {o_start_reg, o_len_reg};
            odesc_wr_reg <= odesc_wr_reg + 1'b1;
        end
    end
    if (rst) begin
        o_wr_reg <= 0;
        odesc_wr_reg <= 0;
        o_lost_reg <= 1'b0;
        stat_other_no_room <= 64'd0;
    end
end

// ---------------------------------------------------------------------------------------------
// ingress: store a frame, decide at its end
// ---------------------------------------------------------------------------------------------
reg  [15:0] len_reg;
wire        i_sfd, i_byte, i_end;
dut_gmii_frames in_frames (.clk(run_clk), .rst(rst), .d(in_d), .en(in_en && cfg_enable),
                           .sfd(i_sfd), .byte_valid(i_byte), .frame_end(i_end));
reg  [63:0] t_sfd_reg;
reg  [31:0] crc_reg;
reg         lost_reg;                     // a byte of this frame found the buffer full

// room, as for port 1's frames: up to the oldest reply not yet sent, 2^DESC_LOG2 replies queued
wire [BUF_LOG2+79:0]  desc_head = desc_mem[desc_rd_reg[DESC_LOG2-1:0]];
wire [BUF_LOG2-1:0]   wr_next = wr_ptr_reg + 1'b1;
wire [DESC_LOG2:0]    desc_used = desc_wr_reg - desc_rd_reg;
wire                  buf_full = desc_used != 0 && wr_next == desc_head[BUF_LOG2+79:80];

function [7:0] at(input [BUF_LOG2-1:0] i);
    at = mem[start_reg + i];
endfunction

integer k;
reg  [15:0] l3, l4;
reg         tag, v4, v6, is_req;
reg  [15:0] csum_old, csum_new;
reg  [7:0]  version;

always @(posedge run_clk) begin
    tick_reg <= tick_reg + 64'd1;
    if (i_sfd) begin
        t_sfd_reg <= tick_reg;
        len_reg <= 16'd0;
        crc_reg <= 32'hFFFFFFFF;
        start_reg <= wr_ptr_reg;
        lost_reg <= 1'b0;
    end
    if (i_byte) begin
        if (buf_full || lost_reg) begin
            lost_reg <= 1'b1;
        end else begin
            mem[wr_ptr_reg] <= in_d;
            wr_ptr_reg <= wr_next;
        end
        len_reg <= len_reg + 16'd1;
        crc_reg <= crc_byte(crc_reg, in_d);
    end
    begin
        if (i_end && (lost_reg || desc_used[DESC_LOG2])) begin
            stat_no_room <= stat_no_room + 64'd1;
            wr_ptr_reg <= start_reg;                 // not kept
        end else if (i_end) begin
            // the frame is in mem[start .. start + len - 1]
            tag = {at(12), at(13)} == 16'h8100;
            l3 = tag ? 16'd18 : 16'd14;
            v4 = {at(l3 - 2), at(l3 - 1)} == 16'h0800 && at(l3) == 8'h45 && at(l3 + 9) == 8'd1;
            version = at(l3);
            v6 = {at(l3 - 2), at(l3 - 1)} == 16'h86DD && version[7:4] == 4'h6 && at(l3 + 6) == 8'd58;
            l4 = l3 + (v6 ? 16'd40 : 16'd20);
            is_req = crc_reg == 32'hDEBB20E3 && len_reg >= l4 + 16'd12
                  && ((v4 && at(l4) == 8'd8) || (v6 && at(l4) == 8'd128)) && at(l4 + 1) == 8'd0;
            if (is_req) begin
                stat_requests <= stat_requests + 64'd1;
                for (k = 0; k < 6; k = k + 1) begin
                    mem[start_reg + k] <= at(6 + k);
                    mem[start_reg + 6 + k] <= at(k);
                end
                if (v4) begin
                    for (k = 0; k < 4; k = k + 1) begin
                        mem[start_reg + l3 + 12 + k] <= at(l3 + 16 + k);
                        mem[start_reg + l3 + 16 + k] <= at(l3 + 12 + k);
                    end
                end else begin
                    for (k = 0; k < 16; k = k + 1) begin
                        mem[start_reg + l3 + 8 + k] <= at(l3 + 24 + k);
                        mem[start_reg + l3 + 24 + k] <= at(l3 + 8 + k);
                    end
                end
                // RFC 1624: HC' = ~(~HC + ~m + m'), m the type/code word before and m' after
                csum_old = {at(l4 + 2), at(l4 + 3)};
                csum_new = v4 ? ~oc_add(oc_add(~csum_old, ~16'h0800), 16'h0000)
                              : ~oc_add(oc_add(~csum_old, ~16'h8000), 16'h8100);
                mem[start_reg + l4] <= v4 ? 8'd0 : 8'd129;
                mem[start_reg + l4 + 2] <= csum_new[15:8];
                mem[start_reg + l4 + 3] <= csum_new[7:0];
                desc_mem[desc_wr_reg[DESC_LOG2-1:0]] <= {start_reg, len_reg,
                    t_sfd_reg + {48'd0, len_reg} + {32'd0, cfg_delay < MIN_DELAY ? MIN_DELAY : cfg_delay}};
                desc_wr_reg <= desc_wr_reg + 1'b1;
            end else begin
                stat_passed <= stat_passed + 64'd1;
                wr_ptr_reg <= start_reg;             // not kept
            end
        end
    end
    if (rst) begin
        tick_reg <= 64'd0;
        wr_ptr_reg <= 0;
        desc_wr_reg <= 0;
        lost_reg <= 1'b0;
        stat_requests <= 64'd0;
        stat_passed <= 64'd0;
        stat_no_room <= 64'd0;
    end
end

// ---------------------------------------------------------------------------------------------
// egress: replies in order, each when due, 12 idle clocks apart at least
// ---------------------------------------------------------------------------------------------
localparam [1:0] E_IDLE = 2'd0, E_PRE = 2'd1, E_DATA = 2'd2;
reg  [1:0]  e_state_reg;
reg  [2:0]  pre_cnt_reg;
reg  [15:0] e_len_reg, e_pos_reg;
reg  [31:0] e_crc_reg;
reg  [7:0]  e_d_reg;
reg         e_en_reg;
reg  [63:0] free_at_reg;                  // earliest decision for the next frame (gap kept)
reg         e_other_reg;                  // the frame on the wire is one of port 1's (sent as stored)

// the SFD is on ret_d 9 clocks after the decision
wire        due = desc_used != 0 && tick_reg + 64'd9 >= desc_head[63:0] && tick_reg >= free_at_reg;
wire        other_ready = odesc_used != 0 && tick_reg >= free_at_reg;
wire [7:0]  e_byte = e_other_reg ? omem[o_rd_reg] : mem[rd_ptr_reg];
wire [31:0] e_fcs = ~e_crc_reg;

assign busy = o_byte || o_end || i_byte || i_end || desc_used != 0 || odesc_used != 0 || e_state_reg != E_IDLE;

assign ret_d = cfg_enable ? e_d_reg : other_d;
assign ret_en = cfg_enable ? e_en_reg : other_en;

always @(posedge run_clk) begin
    e_en_reg <= 1'b0;
    e_d_reg <= 8'h00;
    case (e_state_reg)
        E_IDLE: begin
            e_other_reg <= !due && other_ready;
            if (!due && other_ready) begin
                o_rd_reg <= odesc_head[BUF_LOG2+15:16];
                e_len_reg <= odesc_head[15:0];
                e_pos_reg <= 16'd0;
                pre_cnt_reg <= 3'd0;
                e_state_reg <= E_PRE;
            end
            if (due) begin
                rd_ptr_reg <= desc_head[BUF_LOG2+79:80];
                e_len_reg <= desc_head[79:64];
                e_pos_reg <= 16'd0;
                e_crc_reg <= 32'hFFFFFFFF;
                pre_cnt_reg <= 3'd0;
                e_state_reg <= E_PRE;
            end
        end
        E_PRE: begin
            e_en_reg <= 1'b1;
            e_d_reg <= pre_cnt_reg == 3'd7 ? 8'hD5 : 8'h55;
            pre_cnt_reg <= pre_cnt_reg + 3'd1;
            if (pre_cnt_reg == 3'd7)
                e_state_reg <= E_DATA;
        end
        E_DATA: begin
            e_en_reg <= 1'b1;
            e_pos_reg <= e_pos_reg + 16'd1;
            if (e_other_reg)
                o_rd_reg <= o_rd_reg + 1'b1;
            else
                rd_ptr_reg <= rd_ptr_reg + 1'b1;
            if (e_pos_reg + 16'd4 < e_len_reg || e_other_reg) begin
                e_d_reg <= e_byte;                   // port 1's frames keep their own FCS
                e_crc_reg <= crc_byte(e_crc_reg, e_byte);
            end else begin
                e_d_reg <= e_fcs[8 * (e_pos_reg + 16'd4 - e_len_reg) +: 8];
            end
            if (e_pos_reg + 16'd1 == e_len_reg) begin
                if (e_other_reg) begin
                    odesc_rd_reg <= odesc_rd_reg + 1'b1;
                    stat_merged <= stat_merged + 64'd1;
                end else begin
                    desc_rd_reg <= desc_rd_reg + 1'b1;
                    stat_replies <= stat_replies + 64'd1;
                end
                free_at_reg <= tick_reg + 64'd12;
                e_state_reg <= E_IDLE;
            end
        end
        default: e_state_reg <= E_IDLE;
    endcase
    if (rst) begin
        e_state_reg <= E_IDLE;
        desc_rd_reg <= 0;
        free_at_reg <= 64'd0;
        stat_replies <= 64'd0;
        stat_merged <= 64'd0;
        odesc_rd_reg <= 0;
        e_other_reg <= 1'b0;
        e_en_reg <= 1'b0;
    end
end

endmodule

// frame delineation on a GMII input: sfd in the clock of the SFD byte, byte_valid for every byte
// after it, frame_end in the clock after the last (en low again)
module dut_gmii_frames (
    input  wire       clk,
    input  wire       rst,
    input  wire [7:0] d,
    input  wire       en,
    output wire       sfd,
    output wire       byte_valid,
    output wire       frame_end
);

reg pre_reg, frame_reg;
assign sfd = en && pre_reg && d == 8'hD5;
assign byte_valid = en && frame_reg;
assign frame_end = !en && frame_reg;

always @(posedge clk) begin
    pre_reg <= en && !frame_reg && !sfd;
    frame_reg <= en && (frame_reg || sfd);
    if (rst) begin
        pre_reg <= 1'b0;
        frame_reg <= 1'b0;
    end
end

endmodule

`resetall
