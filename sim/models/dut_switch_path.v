// SPDX-License-Identifier: BSD-2-Clause
// dut_switch_path: one direction of a simulated switch (device under test) on GMII, for the digital twin.

`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * Frames arriving on in_* are stored in a byte buffer and leave on out_* with their SFD exactly at
 *   T = ceil(t_in + cable_in + latency + per_byte * L + cable_out)        (store-and-forward)
 *   T = ceil(t_in + cable_in + latency + cable_out)                       (cut-through)
 * ticks (t_in = tick of the input SFD, L = frame length incl. FCS), or later when the egress is busy.
 * Times are ticks * 65536 (Q16). The egress paces frames to one per (L + 20) * pace byte times
 * (pace 65536 = 1 Gb/s, 131072 = 500 Mb/s). A store-and-forward frame that does not fit in
 * cfg_buffer_bytes, or is longer than cfg_max_frame, is dropped whole (tail drop); a cut-through
 * frame is dropped when a frame of cfg_max_frame bytes would not fit at its SFD.
 * With cfg_dither each frame's input time gets a fraction of a tick (a golden-ratio sequence, evenly
 * spread), as the arrival phase of a real PHY's clock would: averages then resolve delays finer
 * than a tick, and the mean latency reads one tick (8 ns) above the delay.
 * Simulation model: not meant for synthesis.
 */
module dut_switch_path #(
    parameter BUF_LOG2  = 18,
    parameter DESC_LOG2 = 10
) (
    input  wire        clk,
    input  wire        rst,

    // from the tester's transmitter
    input  wire [7:0]  in_d,
    input  wire        in_en,
    // to the tester's receiver
    output reg  [7:0]  out_d,
    output reg         out_en,

    input  wire        cfg_cut_through,      // 1: forward from the header, 0: store and forward
    input  wire        cfg_dither,           // add a random arrival phase (0..1 tick) to every frame
    input  wire [31:0] cfg_latency,          // fixed processing latency, ticks * 65536
    input  wire [31:0] cfg_per_byte,         // store-and-forward time per byte, ticks * 65536
    input  wire [31:0] cfg_pace,             // egress byte time, ticks * 65536 (>= 65536)
    input  wire [31:0] cfg_buffer_bytes,     // buffer size in bytes (tail drop)
    input  wire [15:0] cfg_max_frame,        // largest frame forwarded, bytes incl. FCS
    input  wire [31:0] cfg_cable_in,         // cable delay before the switch, ticks * 65536
    input  wire [31:0] cfg_cable_out,        // cable delay after the switch, ticks * 65536

    output reg  [63:0] stat_frames_in,       // frames seen on the input
    output reg  [63:0] stat_frames_out,      // frames sent on the output
    output reg  [63:0] stat_drop_buffer,     // frames dropped: buffer full
    output reg  [63:0] stat_drop_size,       // frames dropped: longer than cfg_max_frame
    output reg  [31:0] stat_buffer_peak      // highest buffer use in bytes
);

localparam BUF = 1 << BUF_LOG2;

reg  [63:0] tick_reg;
reg  [15:0] phase_reg = 16'd0;               // arrival phase, advanced by 2^16/golden ratio per frame
wire [79:0] now_q16 = {tick_reg, 16'd0};
wire [79:0] arrival_q16 = {tick_reg, cfg_dither ? phase_reg : 16'd0};

reg  [8:0]  buffer [0:BUF-1];              // {last, byte}
reg  [BUF_LOG2:0] wr_ptr_reg, rd_ptr_reg, frame_start_reg;
wire [BUF_LOG2:0] used = wr_ptr_reg - rd_ptr_reg;

// descriptors: {start, SFD tick}
reg  [BUF_LOG2+64:0] desc_mem [0:(1<<DESC_LOG2)-1];
reg  [DESC_LOG2:0] desc_wr_reg, desc_rd_reg;
wire desc_empty = desc_wr_reg == desc_rd_reg;
wire desc_full = (desc_wr_reg - desc_rd_reg) == (1 << DESC_LOG2);

// ---------------------------------------------------------------------------------------------
// ingress
// ---------------------------------------------------------------------------------------------
localparam [1:0] I_IDLE = 2'd0, I_DATA = 2'd1, I_SKIP = 2'd2;
reg  [1:0]  i_state_reg;
reg  [79:0] t_in_reg;
reg  [15:0] len_reg;
reg  [7:0]  held_reg;
reg         held_valid_reg, drop_reg;

wire [79:0] base_q16 = t_in_reg + cfg_cable_in + cfg_latency + cfg_cable_out;
wire [79:0] sf_ready = base_q16 + cfg_per_byte * (len_reg + (in_en ? 16'd1 : 16'd0));

function [63:0] ceil_tick(input [79:0] q);
    ceil_tick = q[79:16] + (q[15:0] != 0);
endfunction

always @(posedge clk) begin
    tick_reg <= tick_reg + 64'd1;
    case (i_state_reg)
        I_IDLE: begin
            held_valid_reg <= 1'b0;
            if (in_en && in_d == 8'hD5) begin
                stat_frames_in <= stat_frames_in + 64'd1;
                phase_reg <= phase_reg + 16'h9E37;  // low-discrepancy: phases spread evenly over a tick
                t_in_reg <= arrival_q16;
                len_reg <= 16'd0;
                frame_start_reg <= wr_ptr_reg;
                drop_reg <= 1'b0;
                i_state_reg <= I_DATA;
                if (cfg_cut_through) begin
                    if (used + cfg_max_frame > cfg_buffer_bytes || desc_full) begin
                        drop_reg <= 1'b1;
                    end else begin
                        // forwarding starts before the frame is in: keep 8 ticks ahead of the reader
                        desc_mem[desc_wr_reg[DESC_LOG2-1:0]] <= {wr_ptr_reg,
                            ceil_tick(arrival_q16 + cfg_cable_in + cfg_latency + cfg_cable_out) < tick_reg + 64'd10
                                ? tick_reg + 64'd10
                                : ceil_tick(arrival_q16 + cfg_cable_in + cfg_latency + cfg_cable_out)};
                        desc_wr_reg <= desc_wr_reg + 1'b1;
                    end
                end
            end else if (in_en && in_d != 8'h55) begin
                i_state_reg <= I_SKIP;
            end
        end
        I_DATA: begin
            if (in_en) begin
                len_reg <= len_reg + 16'd1;
                held_reg <= in_d;
                held_valid_reg <= 1'b1;
                if (held_valid_reg && !drop_reg) begin
                    if (!cfg_cut_through && used + 1 > cfg_buffer_bytes) begin
                        drop_reg <= 1'b1;
                    end else begin
                        buffer[wr_ptr_reg[BUF_LOG2-1:0]] <= {1'b0, held_reg};
                        wr_ptr_reg <= wr_ptr_reg + 1'b1;
                    end
                end
            end else begin
                i_state_reg <= I_IDLE;
                if (cfg_cut_through) begin
                    if (drop_reg) begin
                        stat_drop_buffer <= stat_drop_buffer + 64'd1;
                    end else if (held_valid_reg) begin
                        buffer[wr_ptr_reg[BUF_LOG2-1:0]] <= {1'b1, held_reg};
                        wr_ptr_reg <= wr_ptr_reg + 1'b1;
                    end
                end else if (drop_reg || used + 1 > cfg_buffer_bytes || desc_full) begin
                    stat_drop_buffer <= stat_drop_buffer + 64'd1;
                    wr_ptr_reg <= frame_start_reg;
                end else if (len_reg > cfg_max_frame) begin
                    stat_drop_size <= stat_drop_size + 64'd1;
                    wr_ptr_reg <= frame_start_reg;
                end else if (held_valid_reg) begin
                    buffer[wr_ptr_reg[BUF_LOG2-1:0]] <= {1'b1, held_reg};
                    wr_ptr_reg <= wr_ptr_reg + 1'b1;
                    desc_mem[desc_wr_reg[DESC_LOG2-1:0]] <= {frame_start_reg,
                        ceil_tick(base_q16 + cfg_per_byte * len_reg)};
                    desc_wr_reg <= desc_wr_reg + 1'b1;
                end
            end
        end
        default: begin
            if (!in_en)
                i_state_reg <= I_IDLE;
        end
    endcase
    if (used > stat_buffer_peak)
        stat_buffer_peak <= used;

    if (rst) begin
        tick_reg <= 64'd0;
        i_state_reg <= I_IDLE;
        wr_ptr_reg <= 0;
        desc_wr_reg <= 0;
        held_valid_reg <= 1'b0;
        stat_frames_in <= 64'd0;
        stat_drop_buffer <= 64'd0;
        stat_drop_size <= 64'd0;
        stat_buffer_peak <= 32'd0;
    end
end

// ---------------------------------------------------------------------------------------------
// egress
// ---------------------------------------------------------------------------------------------
localparam [1:0] E_IDLE = 2'd0, E_PRE = 2'd1, E_DATA = 2'd2;
reg  [1:0]  e_state_reg;
reg  [2:0]  pre_cnt_reg;
reg  [79:0] next_start_reg;           // pacing: earliest next preamble start, Q16
reg  [79:0] start_q16_reg;
reg  [15:0] out_len_reg;

wire [BUF_LOG2+64:0] desc = desc_mem[desc_rd_reg[DESC_LOG2-1:0]];
wire [63:0] sfd_tick = desc[63:0];
wire [8:0]  rd_word = buffer[rd_ptr_reg[BUF_LOG2-1:0]];
wire [31:0] pace = cfg_pace < 32'd65536 ? 32'd65536 : cfg_pace;

always @(posedge clk) begin
    out_en <= 1'b0;
    out_d <= 8'h00;
    case (e_state_reg)
        E_IDLE: begin
            // the SFD is on out_d 9 clocks after the decision: decide at sfd_tick - 9
            if (!desc_empty && tick_reg + 64'd9 >= sfd_tick && now_q16 >= next_start_reg) begin
                rd_ptr_reg <= desc[BUF_LOG2+64:64];
                start_q16_reg <= now_q16;
                pre_cnt_reg <= 3'd0;
                out_len_reg <= 16'd0;
                e_state_reg <= E_PRE;
            end
        end
        E_PRE: begin
            out_en <= 1'b1;
            out_d <= pre_cnt_reg == 3'd7 ? 8'hD5 : 8'h55;
            pre_cnt_reg <= pre_cnt_reg + 3'd1;
            if (pre_cnt_reg == 3'd7)
                e_state_reg <= E_DATA;
        end
        E_DATA: begin
            out_en <= 1'b1;
            out_d <= rd_word[7:0];
            rd_ptr_reg <= rd_ptr_reg + 1'b1;
            out_len_reg <= out_len_reg + 16'd1;
            if (rd_word[8]) begin
                desc_rd_reg <= desc_rd_reg + 1'b1;
                stat_frames_out <= stat_frames_out + 64'd1;
                // preamble + frame + minimum gap, stretched by the egress byte time
                next_start_reg <= start_q16_reg + ({64'd0, out_len_reg} + 80'd21) * pace;
                e_state_reg <= E_IDLE;
            end
        end
        default: e_state_reg <= E_IDLE;
    endcase
    if (rst) begin
        e_state_reg <= E_IDLE;
        rd_ptr_reg <= 0;
        desc_rd_reg <= 0;
        next_start_reg <= 80'd0;
        stat_frames_out <= 64'd0;
        out_en <= 1'b0;
    end
end

endmodule

`resetall
