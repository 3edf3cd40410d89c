// SPDX-License-Identifier: BSD-2-Clause
// fpgatest_async_fifo: dual-clock FIFO with gray-coded pointers (first-word-fall-through read side).

`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * No reset: the pointers start at zero with the configuration and are never reset. A reset on one
 * side only (a PHY reset on the write side, a SoC reset on the read side) would make its pointer jump
 * while the other side still holds the old one; the reader would then take stale entries, or ones
 * being written, as new (and the jump is more than one gray bit, so the synchronized copy may pass
 * through values neither side ever held). A side in reset instead stops writing, or drains and
 * discards (the users gate wr_en and take rd_data accordingly), so the pointers stay a pair.
 *
 * FREE_SLOT = 1 keeps one slot free (it holds 2^DEPTH_LOG2 - 1 entries): the memory is then written
 * at the write pointer on every clock, with no write enable, and an entry becomes visible only when
 * the pointer moves past it. The slot under the write pointer is never one the reader can reach,
 * so the writes that are not kept do no harm, and a wide memory has no enable fanned out across it.
 * Its full flag is a flip-flop (from the pointers of the clock before; it may say full one clock
 * longer than needed, never too short).
 */
module fpgatest_async_fifo #(
    parameter WIDTH      = 8,
    parameter DEPTH_LOG2 = 4,
    parameter FREE_SLOT  = 0
) (
    // write side
    input  wire             wr_clk,
    input  wire [WIDTH-1:0] wr_data,
    input  wire             wr_en,
    output wire             wr_full,
    // read side
    input  wire             rd_clk,
    output wire [WIDTH-1:0] rd_data,
    output wire             rd_valid,
    input  wire             rd_en
);

initial if (DEPTH_LOG2 < 2) $error("fpgatest_async_fifo: DEPTH_LOG2 must be >= 2");

localparam A = DEPTH_LOG2;

reg [WIDTH-1:0] mem [0:(1<<A)-1];

reg [A:0] wr_ptr_bin_reg = 0, wr_ptr_gray_reg = 0;
reg [A:0] rd_ptr_bin_reg = 0, rd_ptr_gray_reg = 0;
(* ASYNC_REG = "TRUE" *) reg [A:0] rd_ptr_gray_sync1_reg = 0, rd_ptr_gray_sync2_reg = 0;
(* ASYNC_REG = "TRUE" *) reg [A:0] wr_ptr_gray_sync1_reg = 0, wr_ptr_gray_sync2_reg = 0;

function [A:0] bin2gray(input [A:0] b);
    bin2gray = b ^ (b >> 1);
endfunction

wire [A:0] wr_ptr_bin_next = wr_ptr_bin_reg + 1'b1;
wire [A:0] rd_ptr_bin_next = rd_ptr_bin_reg + 1'b1;

wire       wr_take = wr_en && !wr_full;
generate
if (FREE_SLOT) begin : free_slot
    // full when 2^A - 1 entries are in after this edge (as far as the write side knows): the
    // pointer after this edge, plus one, is a lap ahead of the read pointer. The gray codes of the
    // write pointer + 1 and + 2 are kept in registers, so the flag is one compare.
    reg        full_reg = 1'b0;
    reg  [A:0] wr_p1_gray_reg = 1, wr_p2_gray_reg = 3;        // bin2gray(1), bin2gray(2)
    wire [A:0] lap = {~rd_ptr_gray_sync2_reg[A:A-1], rd_ptr_gray_sync2_reg[A-2:0]};
    always @(posedge wr_clk) begin
        full_reg <= (wr_take ? wr_p2_gray_reg : wr_p1_gray_reg) == lap;
        if (wr_take) begin
            wr_p1_gray_reg <= wr_p2_gray_reg;
            wr_p2_gray_reg <= bin2gray(wr_ptr_bin_reg + 3);
        end
        mem[wr_ptr_bin_reg[A-1:0]] <= wr_data;
    end
    assign wr_full = full_reg;
end else begin : exact
    // full: the write pointer is one lap ahead of the synchronized read pointer
    assign wr_full = wr_ptr_gray_reg == {~rd_ptr_gray_sync2_reg[A:A-1], rd_ptr_gray_sync2_reg[A-2:0]};
    always @(posedge wr_clk)
        if (wr_take)
            mem[wr_ptr_bin_reg[A-1:0]] <= wr_data;
end
endgenerate

assign rd_valid = rd_ptr_gray_reg != wr_ptr_gray_sync2_reg;
assign rd_data = mem[rd_ptr_bin_reg[A-1:0]];

always @(posedge wr_clk) begin
    if (wr_take) begin
        wr_ptr_bin_reg <= wr_ptr_bin_next;
        wr_ptr_gray_reg <= bin2gray(wr_ptr_bin_next);
    end
    rd_ptr_gray_sync1_reg <= rd_ptr_gray_reg;
    rd_ptr_gray_sync2_reg <= rd_ptr_gray_sync1_reg;
end

always @(posedge rd_clk) begin
    if (rd_en && rd_valid) begin
        rd_ptr_bin_reg <= rd_ptr_bin_next;
        rd_ptr_gray_reg <= bin2gray(rd_ptr_bin_next);
    end
    wr_ptr_gray_sync1_reg <= wr_ptr_gray_reg;
    wr_ptr_gray_sync2_reg <= wr_ptr_gray_sync1_reg;
end

endmodule

`resetall
