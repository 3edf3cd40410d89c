// SPDX-License-Identifier: BSD-2-Clause
// dut_switch_path: one direction of a simulated switch (device under test) on GMII, for the digital twin.

`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * Frames arriving on in_* are stored in a byte buffer and leave on out_* with their SFD at
 *   T = max(ceil(t_in + cable_in + latency + per_byte * L + cable_out), t_in + L + 11)   (store-and-forward)
 *   T = max(ceil(t_in + cable_in + latency + cable_out), t_in + 10)                     (cut-through)
 * ticks (t_in = tick of the input SFD, L = frame length incl. FCS; the second terms are the floors
 * of this model: a frame is forwarded one clock after its last byte is in, or 10 clocks after its
 * SFD), or later when the egress is busy. Times are ticks * 65536 (Q16).
 * Egress pacing: a frame's preamble starts no earlier than (L + 20) * pace after the previous one's
 * (pace in ticks * 2^32; 2^32 = 1 Gb/s, 2^33 = 500 Mb/s). The pacing keeps its fraction: when it
 * holds a frame back, the next frame is paced from the exact (fractional) time it was due, not
 * from the clock edge it left on, so any rate is exact on average. A pace below 2^32 (a clock
 * faster than the tester's) shortens the gap between frames, as a fast PHY clock would.
 * A store-and-forward frame that does not fit in cfg_buffer_bytes, or is longer than cfg_max_frame,
 * or finds 2^DESC_LOG2 frames queued, is dropped whole (tail drop); a cut-through frame is dropped
 * when a frame of cfg_max_frame bytes would not fit at its SFD, or as many frames are queued.
 * With cfg_dither each frame's input time gets a fraction of a tick (a golden-ratio sequence, evenly
 * spread over [0, 1)), as the arrival phase of a real PHY's clock would: averages then resolve
 * delays finer than a tick. A frame's exit is ceil(t + phase + D) for a delay D, so its latency is
 * D plus up to one tick; the mean excess over many frames is 1 - frac(D) ticks (one tick when D is
 * whole), and more when the egress is what holds frames back.
 * Cross traffic (cfg_cross_mode): frames of cfg_cross_size bytes that join this egress queue from
 * elsewhere (another input of the switch), every cfg_cross_period (constant) or at random with that
 * mean (a Bernoulli trial every tick: Poisson arrivals on the tick grid). They share the buffer
 * (tail drop) and the egress in arrival order with the forwarded frames, and leave on out_* as
 * broadcast frames of EtherType 0x88B5 with a good FCS: foreign to the tester.
 * cfg_enable = 0 makes the path a wire (out = in, no delay, nothing counted).
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
    output wire [7:0]  out_d,
    output wire        out_en,

    input  wire        cfg_enable,           // 1: a switch path, 0: a wire (out = in); change only while idle
    input  wire        cfg_cut_through,      // 1: forward from the header, 0: store and forward
    input  wire        cfg_dither,           // add an arrival phase (0..1 tick) to every frame
    input  wire [31:0] cfg_latency,          // fixed processing latency, ticks * 65536
    input  wire [31:0] cfg_per_byte,         // store-and-forward time per byte, ticks * 65536
    input  wire [47:0] cfg_pace,             // egress byte time, ticks * 2^32 (2^32 = 1 Gb/s; >= 2^32 - 2^23)
    input  wire [31:0] cfg_buffer_bytes,     // buffer size in bytes (tail drop)
    input  wire [15:0] cfg_max_frame,        // largest frame forwarded, bytes incl. FCS
    input  wire [31:0] cfg_cable_in,         // cable delay before the switch, ticks * 65536
    input  wire [31:0] cfg_cable_out,        // cable delay after the switch, ticks * 65536
    input  wire [1:0]  cfg_cross_mode,       // cross traffic into this egress: 0 none, 1 constant, 2 random (Poisson)
    input  wire [47:0] cfg_cross_period,     // mean time between cross-traffic frames, ticks * 65536 (>= 65536)
    input  wire [15:0] cfg_cross_size,       // cross-traffic frame size in bytes incl. FCS (64..16383)

    output reg  [63:0] stat_frames_in,       // frames seen on the input
    output reg  [63:0] stat_frames_out,      // frames sent on the output (cross traffic not included)
    output reg  [63:0] stat_drop_buffer,     // frames dropped: buffer full
    output reg  [63:0] stat_drop_size,       // frames dropped: longer than cfg_max_frame
    output reg  [31:0] stat_buffer_peak,     // highest buffer use in bytes (cross traffic included)
    output reg  [63:0] stat_cross_in,        // cross-traffic frames that arrived
    output reg  [63:0] stat_cross_out,       // cross-traffic frames sent on the output
    output reg  [63:0] stat_cross_drop       // cross-traffic frames dropped: buffer full
);

localparam BUF = 1 << BUF_LOG2;
localparam [47:0] PACE_MIN = 48'h0_FF80_0000;   // 2^32 - 2^23: a clock 1953 ppm fast

// The path's registers run on run_clk (dut_run_clock): clk in reset, while a frame comes in (to a
// switch path; a wire takes none) and until the path is at rest again (no frame in or out, nothing
// queued, no cross traffic, the egress's pacing past); still otherwise, so an idle path, and a second
// hop left a wire, cost the twin nothing. At rest a clock changes nothing but tick_reg, which only
// ever meets times taken from itself, so the path starts again as if it had run on. (in_en rises at
// a rising edge of clk; the gate takes run at the falling edge after it, so the clock runs from the
// next rising edge, the first at which the path sees the frame's first byte.)
wire        at_rest;
wire        run_clk;
dut_run_clock gate (.clk(clk), .run(rst || !at_rest || (cfg_enable && in_en)), .run_clk(run_clk));

reg  [63:0] tick_reg;
reg  [15:0] phase_reg = 16'd0;               // arrival phase, advanced by 2^16/golden ratio per frame
wire [79:0] now_q16 = {tick_reg, 16'd0};
wire [79:0] arrival_q16 = {tick_reg, cfg_dither ? phase_reg : 16'd0};
wire        in_on = in_en && cfg_enable;

reg  [8:0]  buffer [0:BUF-1];              // {last, byte}
reg  [BUF_LOG2:0] wr_ptr_reg, rd_ptr_reg, frame_start_reg;
reg  [31:0] cross_bytes_reg;               // bytes of the cross-traffic frames waiting
wire [31:0] used = {{(31 - BUF_LOG2){1'b0}}, wr_ptr_reg - rd_ptr_reg} + cross_bytes_reg;

// descriptors of forwarded frames: {start, SFD tick}
reg  [BUF_LOG2+64:0] desc_mem [0:(1<<DESC_LOG2)-1];
reg  [DESC_LOG2:0] desc_wr_reg, desc_rd_reg;
wire desc_empty = desc_wr_reg == desc_rd_reg;
wire [DESC_LOG2:0] desc_used = desc_wr_reg - desc_rd_reg;   // (sized: a wider difference would not wrap)
wire desc_full = desc_used[DESC_LOG2];

// cross-traffic frames waiting
reg  [79:0] cross_mem [0:(1<<DESC_LOG2)-1];   // {size, arrival tick}
reg  [DESC_LOG2:0] cross_wr_reg, cross_rd_reg;
wire cross_empty = cross_wr_reg == cross_rd_reg;
wire [DESC_LOG2:0] cross_used = cross_wr_reg - cross_rd_reg;
wire cross_full = cross_used[DESC_LOG2];

// ---------------------------------------------------------------------------------------------
// cross-traffic arrivals
// ---------------------------------------------------------------------------------------------
reg  [1:0]  cross_mode_reg;
reg  [79:0] cross_next_reg;                // constant: next arrival, Q16
reg  [31:0] rnd_reg = 32'h2545F491;        // xorshift32
wire [31:0] rnd1 = rnd_reg ^ (rnd_reg << 13);
wire [31:0] rnd2 = rnd1 ^ (rnd1 >> 17);
wire [31:0] rnd_next = rnd2 ^ (rnd2 << 5);
wire [47:0] cross_period = cfg_cross_period < 48'd65536 ? 48'd65536 : cfg_cross_period;
// random: P(arrival in a tick) = 65536 / period, as a 32-bit threshold
wire [63:0] cross_threshold = 64'h0001_0000_0000_0000 / {16'd0, cross_period};
wire        cross_arrival = cfg_enable && (
    cfg_cross_mode == 2'd1 ? (cross_mode_reg == 2'd1 && now_q16 >= cross_next_reg) :
    cfg_cross_mode == 2'd2 ? ({32'd0, rnd_next} < cross_threshold) : 1'b0);

always @(posedge run_clk) begin
    cross_mode_reg <= cfg_cross_mode;
    if (cfg_cross_mode == 2'd2)
        rnd_reg <= rnd_next;
    if (cfg_cross_mode == 2'd1 && cross_mode_reg != 2'd1)
        cross_next_reg <= now_q16 + 80'd65536;                   // the first one a tick after it is turned on
    else if (cross_arrival && cfg_cross_mode == 2'd1)
        cross_next_reg <= cross_next_reg + {32'd0, cross_period};
    if (rst) begin
        cross_mode_reg <= 2'd0;
        rnd_reg <= 32'h2545F491;
    end
end

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
wire [79:0] sf_ready = base_q16 + cfg_per_byte * (len_reg + (in_on ? 16'd1 : 16'd0));

function [63:0] ceil_tick(input [79:0] q);
    ceil_tick = q[79:16] + (q[15:0] != 0);
endfunction

always @(posedge run_clk) begin
    tick_reg <= tick_reg + 64'd1;
    case (i_state_reg)
        I_IDLE: begin
            held_valid_reg <= 1'b0;
            if (in_on && in_d == 8'hD5) begin
                stat_frames_in <= stat_frames_in + 64'd1;
                phase_reg <= phase_reg + 16'h9E37;  // low-discrepancy: phases spread evenly over a tick
                t_in_reg <= arrival_q16;
                len_reg <= 16'd0;
                frame_start_reg <= wr_ptr_reg;
                drop_reg <= 1'b0;
                i_state_reg <= I_DATA;
                if (cfg_cut_through) begin
                    if (used + {16'd0, cfg_max_frame} > cfg_buffer_bytes || desc_full) begin
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
            end else if (in_on && in_d != 8'h55) begin
                i_state_reg <= I_SKIP;
            end
        end
        I_DATA: begin
            if (in_on) begin
                len_reg <= len_reg + 16'd1;
                held_reg <= in_d;
                held_valid_reg <= 1'b1;
                if (held_valid_reg && !drop_reg) begin
                    if (!cfg_cut_through && used + 32'd1 > cfg_buffer_bytes) begin
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
                end else if (drop_reg || used + 32'd1 > cfg_buffer_bytes || desc_full) begin
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
// cross-traffic queue: arrivals in, the egress takes them out (cross_done, one frame of cross_done_size)
// ---------------------------------------------------------------------------------------------
reg         cross_done_reg;
reg  [15:0] cross_done_size_reg;
wire [15:0] cross_size = cfg_cross_size < 16'd64 ? 16'd64 : cfg_cross_size;
wire        cross_accept = cross_arrival && !cross_full && used + {16'd0, cross_size} <= cfg_buffer_bytes;

always @(posedge run_clk) begin
    if (cross_arrival) begin
        stat_cross_in <= stat_cross_in + 64'd1;
        if (cross_accept) begin
            cross_mem[cross_wr_reg[DESC_LOG2-1:0]] <= {cross_size, tick_reg};
            cross_wr_reg <= cross_wr_reg + 1'b1;
        end else begin
            stat_cross_drop <= stat_cross_drop + 64'd1;
        end
    end
    cross_bytes_reg <= cross_bytes_reg + (cross_accept ? {16'd0, cross_size} : 32'd0)
                                       - (cross_done_reg ? {16'd0, cross_done_size_reg} : 32'd0);
    if (rst) begin
        cross_wr_reg <= 0;
        cross_bytes_reg <= 32'd0;
        stat_cross_in <= 64'd0;
        stat_cross_drop <= 64'd0;
    end
end

// ---------------------------------------------------------------------------------------------
// egress: the forwarded frame whose exit is due or the cross-traffic frame that came first
// ---------------------------------------------------------------------------------------------
localparam [1:0] E_IDLE = 2'd0, E_PRE = 2'd1, E_DATA = 2'd2;
reg  [1:0]  e_state_reg;
reg  [2:0]  pre_cnt_reg;
reg  [95:0] next_start_reg;           // pacing: earliest next preamble start, ticks * 2^32
reg  [95:0] start_reg;                // pacing basis of the frame on the wire, ticks * 2^32
reg  [15:0] out_len_reg;
reg         e_cross_reg;              // the frame on the wire is cross traffic
reg  [15:0] e_cross_size_reg;
reg  [31:0] e_crc_reg;
reg  [7:0]  e_d_reg;
reg         e_en_reg;

wire [95:0] now_q32 = {tick_reg, 32'd0};
wire [BUF_LOG2+64:0] desc = desc_mem[desc_rd_reg[DESC_LOG2-1:0]];
wire [63:0] sfd_tick = desc[63:0];
wire [79:0] cross_head = cross_mem[cross_rd_reg[DESC_LOG2-1:0]];
wire [8:0]  rd_word = buffer[rd_ptr_reg[BUF_LOG2-1:0]];
wire [47:0] pace = cfg_pace < PACE_MIN ? PACE_MIN : cfg_pace;

// the SFD is on out_d 9 clocks after the decision: a forwarded frame is due at sfd_tick - 9
wire        fwd_due = !desc_empty && tick_reg + 64'd9 >= sfd_tick;
wire        pace_ok = now_q32 >= next_start_reg;
wire        take_fwd = pace_ok && fwd_due && (cross_empty || sfd_tick - 64'd9 <= cross_head[63:0]);
wire        take_cross = pace_ok && !cross_empty && !take_fwd;

// cross-traffic frame bytes: broadcast, source 02:c7:05:50:00:01, EtherType 0x88B5, zeros, FCS
wire [15:0] x_fcs_at = e_cross_size_reg - 16'd4;
wire [7:0]  x_byte = out_len_reg < 16'd6 ? 8'hFF :
                     out_len_reg == 16'd6 ? 8'h02 : out_len_reg == 16'd7 ? 8'hC7 :
                     out_len_reg == 16'd8 ? 8'h05 : out_len_reg == 16'd9 ? 8'h50 :
                     out_len_reg == 16'd10 ? 8'h00 : out_len_reg == 16'd11 ? 8'h01 :
                     out_len_reg == 16'd12 ? 8'h88 : out_len_reg == 16'd13 ? 8'hB5 : 8'h00;
wire [31:0] x_crc_next;
fpgatest_crc32 x_crc (.crc_in(e_crc_reg), .data(x_byte), .crc_out(x_crc_next));
wire [31:0] x_fcs = ~e_crc_reg;
wire [1:0]  x_fcs_index = out_len_reg[1:0] - x_fcs_at[1:0];
wire [7:0]  x_fcs_byte = x_fcs[{x_fcs_index, 3'd0} +: 8];
wire        x_last = out_len_reg + 16'd1 == e_cross_size_reg;

assign out_d = cfg_enable ? e_d_reg : in_d;
assign out_en = cfg_enable ? e_en_reg : in_en;

always @(posedge run_clk) begin
    e_en_reg <= 1'b0;
    e_d_reg <= 8'h00;
    cross_done_reg <= 1'b0;
    case (e_state_reg)
        E_IDLE: begin
            if (take_fwd || take_cross) begin
                rd_ptr_reg <= take_fwd ? desc[BUF_LOG2+64:64] : rd_ptr_reg;
                e_cross_reg <= take_cross;
                e_cross_size_reg <= cross_head[79:64];
                e_crc_reg <= 32'hFFFFFFFF;
                // the pacing's own time when it is what held the frame back, else this clock edge
                start_reg <= next_start_reg + {32'd0, 64'h1_0000_0000} > now_q32 ? next_start_reg : now_q32;
                pre_cnt_reg <= 3'd0;
                out_len_reg <= 16'd0;
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
            out_len_reg <= out_len_reg + 16'd1;
            if (e_cross_reg) begin
                e_d_reg <= out_len_reg < x_fcs_at ? x_byte : x_fcs_byte;
                e_crc_reg <= out_len_reg < x_fcs_at ? x_crc_next : e_crc_reg;
            end else begin
                e_d_reg <= rd_word[7:0];
                rd_ptr_reg <= rd_ptr_reg + 1'b1;
            end
            if (e_cross_reg ? x_last : rd_word[8]) begin
                if (e_cross_reg) begin
                    cross_rd_reg <= cross_rd_reg + 1'b1;
                    cross_done_reg <= 1'b1;
                    cross_done_size_reg <= e_cross_size_reg;
                    stat_cross_out <= stat_cross_out + 64'd1;
                end else begin
                    desc_rd_reg <= desc_rd_reg + 1'b1;
                    stat_frames_out <= stat_frames_out + 64'd1;
                end
                // preamble + frame + minimum gap, stretched by the egress byte time
                next_start_reg <= start_reg + ({80'd0, out_len_reg} + 96'd21) * {48'd0, pace};
                e_state_reg <= E_IDLE;
            end
        end
        default: e_state_reg <= E_IDLE;
    endcase
    if (rst) begin
        e_state_reg <= E_IDLE;
        rd_ptr_reg <= 0;
        desc_rd_reg <= 0;
        cross_rd_reg <= 0;
        next_start_reg <= 96'd0;
        stat_frames_out <= 64'd0;
        stat_cross_out <= 64'd0;
        e_en_reg <= 1'b0;
    end
end

assign at_rest = cfg_cross_mode == 2'd0 && cross_mode_reg == 2'd0 && i_state_reg == I_IDLE && !held_valid_reg
               && desc_empty && cross_empty && e_state_reg == E_IDLE && !e_en_reg && !cross_done_reg
               && now_q32 >= next_start_reg + {32'd0, 64'h1_0000_0000};

endmodule

`resetall
