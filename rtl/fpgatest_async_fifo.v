// SPDX-License-Identifier: BSD-2-Clause
// fpgatest_async_fifo: dual-clock FIFO with gray-coded pointers (first-word-fall-through read side).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fpgatest_async_fifo #(
    parameter WIDTH      = 8,
    parameter DEPTH_LOG2 = 4
) (
    // write side
    input  wire             wr_clk,
    input  wire             wr_rst,
    input  wire [WIDTH-1:0] wr_data,
    input  wire             wr_en,
    output wire             wr_full,
    // read side
    input  wire             rd_clk,
    input  wire             rd_rst,
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

// full: the write pointer is one lap ahead of the synchronized read pointer
assign wr_full = wr_ptr_gray_reg == {~rd_ptr_gray_sync2_reg[A:A-1], rd_ptr_gray_sync2_reg[A-2:0]};
assign rd_valid = rd_ptr_gray_reg != wr_ptr_gray_sync2_reg;
assign rd_data = mem[rd_ptr_bin_reg[A-1:0]];

always @(posedge wr_clk) begin
    if (wr_en && !wr_full) begin
        mem[wr_ptr_bin_reg[A-1:0]] <= wr_data;
        wr_ptr_bin_reg <= wr_ptr_bin_next;
        wr_ptr_gray_reg <= bin2gray(wr_ptr_bin_next);
    end
    rd_ptr_gray_sync1_reg <= rd_ptr_gray_reg;
    rd_ptr_gray_sync2_reg <= rd_ptr_gray_sync1_reg;
    if (wr_rst) begin
        wr_ptr_bin_reg <= 0;
        wr_ptr_gray_reg <= 0;
    end
end

always @(posedge rd_clk) begin
    if (rd_en && rd_valid) begin
        rd_ptr_bin_reg <= rd_ptr_bin_next;
        rd_ptr_gray_reg <= bin2gray(rd_ptr_bin_next);
    end
    wr_ptr_gray_sync1_reg <= wr_ptr_gray_reg;
    wr_ptr_gray_sync2_reg <= wr_ptr_gray_sync1_reg;
    if (rd_rst) begin
        rd_ptr_bin_reg <= 0;
        rd_ptr_gray_reg <= 0;
    end
end

endmodule

`resetall
