// SPDX-License-Identifier: BSD-2-Clause
// fpgatest_bram (ECP5): simple dual-port block RAM with a registered output (two clocks from address to data).

`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * rdata = mem[raddr] two clocks after raddr (as of the edge that samples raddr; a write to the same
 * address at that edge is not seen). Each 18-bit slice is a DP16KD (port A writes, port B reads)
 * with its output register on (REGMODE "OUTREG"): the RAM's slow clock-to-out then ends in the
 * block's own register and the data leave it at flip-flop speed. Contents start at zero.
 * rtl/generic/fpgatest_bram.v is the same behaviour in plain Verilog (Verilator, other targets);
 * the build picks one file per target (litex_soc.tester.rtl_sources).
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

localparam SLICES = (WIDTH + 17) / 18;
wire [18*SLICES-1:0] wdata_x = {{(18*SLICES-WIDTH){1'b0}}, wdata};
wire [18*SLICES-1:0] rdata_x;
assign rdata = rdata_x[WIDTH-1:0];
wire [9:0] wa = {{(10-DEPTH_LOG2){1'b0}}, waddr};
wire [9:0] ra = {{(10-DEPTH_LOG2){1'b0}}, raddr};

genvar g;
generate
    for (g = 0; g < SLICES; g = g + 1) begin : slices
        wire [17:0] wd = wdata_x[18*g +: 18];
        wire [17:0] rd;
        assign rdata_x[18*g +: 18] = rd;
        DP16KD #(
            .DATA_WIDTH_A(18), .DATA_WIDTH_B(18),
            .REGMODE_A("NOREG"), .REGMODE_B("OUTREG"),
            .RESETMODE("SYNC"), .ASYNC_RESET_RELEASE("SYNC"),
            .CSDECODE_A("0b000"), .CSDECODE_B("0b000"),
            .WRITEMODE_A("NORMAL"), .WRITEMODE_B("NORMAL"),
            .GSR("DISABLED")
        ) ram (
        .CLKA(clk), .CEA(we), .OCEA(1'b0), .WEA(1'b1), .RSTA(1'b0),
        .CSA0(1'b0), .CSA1(1'b0), .CSA2(1'b0),
        .CLKB(clk), .CEB(1'b1), .OCEB(1'b1), .WEB(1'b0), .RSTB(1'b0),
        .CSB0(1'b0), .CSB1(1'b0), .CSB2(1'b0),
        .ADA0(1'b1), .ADA1(1'b1), .ADA2(1'b0), .ADA3(1'b0), .ADA4(wa[0]), .ADA5(wa[1]),
        .ADA6(wa[2]), .ADA7(wa[3]), .ADA8(wa[4]), .ADA9(wa[5]), .ADA10(wa[6]), .ADA11(wa[7]),
        .ADA12(wa[8]), .ADA13(wa[9]), .ADB0(1'b0), .ADB1(1'b0), .ADB2(1'b0), .ADB3(1'b0),
        .ADB4(ra[0]), .ADB5(ra[1]), .ADB6(ra[2]), .ADB7(ra[3]), .ADB8(ra[4]), .ADB9(ra[5]),
        .ADB10(ra[6]), .ADB11(ra[7]), .ADB12(ra[8]), .ADB13(ra[9]), .DIA0(wd[0]), .DIA1(wd[1]),
        .DIA2(wd[2]), .DIA3(wd[3]), .DIA4(wd[4]), .DIA5(wd[5]), .DIA6(wd[6]), .DIA7(wd[7]),
        .DIA8(wd[8]), .DIA9(wd[9]), .DIA10(wd[10]), .DIA11(wd[11]), .DIA12(wd[12]), .DIA13(wd[13]),
        .DIA14(wd[14]), .DIA15(wd[15]), .DIA16(wd[16]), .DIA17(wd[17]), .DOB0(rd[0]), .DOB1(rd[1]),
        .DOB2(rd[2]), .DOB3(rd[3]), .DOB4(rd[4]), .DOB5(rd[5]), .DOB6(rd[6]), .DOB7(rd[7]),
        .DOB8(rd[8]), .DOB9(rd[9]), .DOB10(rd[10]), .DOB11(rd[11]), .DOB12(rd[12]), .DOB13(rd[13]),
        .DOB14(rd[14]), .DOB15(rd[15]), .DOB16(rd[16]), .DOB17(rd[17])
        );
    end
endgenerate

endmodule

`resetall
