// SPDX-License-Identifier: BSD-2-Clause
// fpgatest_timebase: the one free-running 64-bit tick counter (1 tick = 1 clock = 8 ns at 125 MHz).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fpgatest_timebase (
    input  wire        clk,
    input  wire        rst,
    output reg  [63:0] time_tick
);

always @(posedge clk) begin
    if (rst)
        time_tick <= 64'd0;
    else
        time_tick <= time_tick + 64'd1;
end

endmodule

`resetall
