// SPDX-License-Identifier: BSD-2-Clause
// fpgatest_bram (generic): simple dual-port RAM with a registered output (two clocks from address to data).

`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * rdata = mem[raddr] two clocks after raddr (as of the edge that samples raddr; a write to the same
 * address at that edge is not seen). Contents start at zero. Plain Verilog for Verilator and any
 * target without a wrapper of its own; rtl/ecp5/fpgatest_bram.v is the same on ECP5 block RAM.
 */
module fpgatest_bram #(
    parameter WIDTH = 36,
    parameter DEPTH_LOG2 = 6              // at most 10
) (
    input  wire                  clk,
    input  wire                  we,
    input  wire [DEPTH_LOG2-1:0] waddr,
    input  wire [WIDTH-1:0]      wdata,
    input  wire [DEPTH_LOG2-1:0] raddr,
    output wire [WIDTH-1:0]      rdata
);

initial if (DEPTH_LOG2 > 10) $error("fpgatest_bram: DEPTH_LOG2 above 10");

reg [WIDTH-1:0] mem [0:(1<<DEPTH_LOG2)-1];
reg [WIDTH-1:0] q1, q2;
assign rdata = q2;
integer i;
initial begin
    for (i = 0; i < (1 << DEPTH_LOG2); i = i + 1)
        mem[i] = {WIDTH{1'b0}};
    q1 = {WIDTH{1'b0}};
    q2 = {WIDTH{1'b0}};
end
always @(posedge clk) begin
    if (we)
        mem[waddr] <= wdata;
    q1 <= mem[raddr];
    q2 <= q1;
end

endmodule

`resetall
