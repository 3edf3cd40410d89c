// SPDX-License-Identifier: BSD-2-Clause
// gmii_elastic: a GMII stream from one clock into another (the device under test's ingress MAC FIFO),
// for the digital twin when the simulated device runs on a clock of its own.

`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * A real switch receives a frame in the clock its PHY recovered from the sender and forwards it in
 * its own: the MAC's FIFO between the two is this model. Bytes enter one per in_clk while in_en is
 * high (preamble and SFD included) and leave one per out_clk, unchanged, each frame contiguous:
 *
 *   - in the FIFO each byte carries `last` (written a clock late, when the next clock shows whether
 *     the frame goes on), so the reader knows where a frame ends without a length;
 *   - the reader starts a frame START clocks after its first byte is visible (gray pointers, two
 *     flip-flops: 2-3 out_clk after it was written), and then reads a byte every clock. The writer
 *     keeps writing one a clock meanwhile, so the FIFO holds >= START bytes when the reading starts;
 *     a reader |ppm| faster drains that by (L + 8) * |ppm| 1e-6 over an L-byte frame, so it never runs
 *     dry while START > (L + 8) * ppm 1e-6: 3.3 bytes for 16383-byte frames at 200 ppm, 4.1 at 250
 *     (a byte more than the FIFO holds, or one short, is an error of the model: $error, never a silent
 *     change of a frame);
 *   - between two frames the reader idles START + 2 clocks (a gap clock, one to see the next frame,
 *     START waiting) where the wire has 12, so at line rate a reader |ppm| slower keeps up while
 *     (L + 8 + START + 2)(1 + ppm 1e-6) <= L + 20: with START = 6 up to 244 ppm for 16383-byte
 *     frames back to back, more for shorter ones (the twin allows +-200 ppm).
 *
 * The delay from in to out is therefore START + 6 to START + 7 out_clk (from the in_clk edge a byte is
 * first on in_d: 2 in_clk to the memory, 2-3 out_clk through the synchronizer, one to notice, START
 * waiting, one to the output register), plus, with a slower out_clk, what the reader still had of the
 * frames before: up to (L + 8) * |ppm| 1e-6 bytes after an L-byte frame, worked off at 12 - START - 2
 * clocks a frame when the frames that follow are shorter (sim/models/test_gmii_elastic.py).
 * bypass = 1 (static): out = in, no delay, when the device runs on the sender's clock itself (the
 * twin's default); the FIFO is then unused.
 * Simulation model: not meant for synthesis.
 */
module gmii_elastic #(
    parameter START      = 6,
    parameter DEPTH_LOG2 = 5
) (
    input  wire       bypass,

    input  wire       in_clk,
    input  wire [7:0] in_d,
    input  wire       in_en,

    input  wire       out_clk,
    output wire [7:0] out_d,
    output wire       out_en
);

// ---- write side (in_clk): a byte a clock late, with whether it was the frame's last ----------------
// bypassed, the FIFO's clocks stand still: Verilator evaluates a clock's logic only on its edges, so
// an unused FIFO costs the twin nothing (bypass is static: the gated clocks have no glitch)
wire       in_clk_run = in_clk & !bypass;
wire       out_clk_run = out_clk & !bypass;

reg  [7:0] held_d_reg = 8'd0;
reg        held_reg = 1'b0;
wire       wr_full;

always @(posedge in_clk_run) begin
    held_d_reg <= in_d;
    held_reg <= in_en && !bypass;
    if (held_reg && wr_full)
        $error("gmii_elastic: FIFO full, a byte lost");
end

wire [8:0] rd_data;
wire       rd_valid;
reg        rd_en;

fpgatest_async_fifo #(
    .WIDTH(9),
    .DEPTH_LOG2(DEPTH_LOG2)
) fifo (
    .wr_clk(in_clk_run),
    .wr_data({!in_en, held_d_reg}),
    .wr_en(held_reg),
    .wr_full(wr_full),
    .rd_clk(out_clk_run),
    .rd_data(rd_data),
    .rd_valid(rd_valid),
    .rd_en(rd_en)
);

// ---- read side (out_clk) --------------------------------------------------------------------------
localparam [1:0] R_IDLE = 2'd0, R_WAIT = 2'd1, R_FRAME = 2'd2, R_GAP = 2'd3;

reg [1:0] r_state_reg = R_IDLE;
reg [7:0] wait_reg = 8'd0;
reg [7:0] out_d_reg = 8'd0;
reg       out_en_reg = 1'b0;

always @* rd_en = r_state_reg == R_FRAME && rd_valid;

always @(posedge out_clk_run) begin
    out_en_reg <= 1'b0;
    case (r_state_reg)
        R_IDLE:
            if (rd_valid) begin
                r_state_reg <= R_WAIT;
                wait_reg <= START - 1;
            end
        R_WAIT:
            if (wait_reg == 0)
                r_state_reg <= R_FRAME;
            else
                wait_reg <= wait_reg - 1'b1;
        R_FRAME:
            if (!rd_valid) begin
                $error("gmii_elastic: FIFO empty inside a frame");
                r_state_reg <= R_GAP;
            end else begin
                out_d_reg <= rd_data[7:0];
                out_en_reg <= 1'b1;
                if (rd_data[8])
                    r_state_reg <= R_GAP;
            end
        default:
            r_state_reg <= R_IDLE;
    endcase
end

assign out_d  = bypass ? in_d  : out_d_reg;
assign out_en = bypass ? in_en : out_en_reg;

endmodule

`resetall
