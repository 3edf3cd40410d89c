// SPDX-License-Identifier: BSD-2-Clause
// Simulation models of the ECP5 primitives the Colorlight 5A-75B build instantiates (board simulation).

`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * Behaviour as the ECP5 sysIO / sysCLOCK / sysMEM guides (Lattice TN1265, TN1263, TN1264) give it,
 * reduced to what the generated board Verilog uses; each model refuses a configuration it does not
 * describe. Zero-delay: the DELAYG taps are not modelled (they shift the RGMII edges by < 2 ns on the
 * board, where the PHY's own delays centre the data; in simulation data and clock leave together).
 */

// Programmable delay: pass-through (see above).
module DELAYG #(
    parameter DEL_MODE = "USER_DEFINED",
    parameter DEL_VALUE = 0
) (
    input  wire A,
    output wire Z
);
assign Z = A;
endmodule

// Input DDR, 1:2 gearing: D sampled at the rising edge (Q0) and the following falling edge (Q1),
// the pair presented together at the next rising edge.
module IDDRX1F #(
    parameter GSR = "ENABLED"
) (
    input  wire D,
    input  wire SCLK,
    input  wire RST,
    output reg  Q0,
    output reg  Q1
);
reg rise_reg, fall_reg;
always @(posedge SCLK) rise_reg <= D;
always @(negedge SCLK) fall_reg <= D;
always @(posedge SCLK) begin
    Q0 <= rise_reg;
    Q1 <= fall_reg;
    if (RST) begin
        Q0 <= 1'b0;
        Q1 <= 1'b0;
    end
end
endmodule

// Output DDR, 2:1 gearing: D0 and D1 taken at the rising edge; Q is D0 while SCLK is high, D1 while low.
module ODDRX1F #(
    parameter GSR = "ENABLED"
) (
    input  wire D0,
    input  wire D1,
    input  wire SCLK,
    input  wire RST,
    output wire Q
);
reg d0_reg = 1'b0, d1_reg = 1'b0;
always @(posedge SCLK) begin
    d0_reg <= RST ? 1'b0 : D0;
    d1_reg <= RST ? 1'b0 : D1;
end
assign Q = SCLK ? d0_reg : d1_reg;
endmodule

// Flip-flop with asynchronous preset (starts set, as after configuration).
module FD1S3BX (
    input  wire D,
    input  wire CK,
    input  wire PD,
    output reg  Q
);
initial Q = 1'b1;
always @(posedge CK or posedge PD)
    if (PD)
        Q <= 1'b1;
    else
        Q <= D;
endmodule

// Slice flip-flop as rtl/ecp5/fpgatest_const.v configures it (clock enable tied high, LSR unused):
// starts from REGSET, as after configuration, then takes DI at every rising CLK.
module TRELLIS_FF #(
    parameter GSR = "ENABLED",
    parameter CEMUX = "1",
    parameter CLKMUX = "CLK",
    parameter LSRMUX = "LSR",
    parameter REGSET = "RESET"
) (
    input  wire CLK,
    input  wire LSR,
    input  wire CE,
    input  wire DI,
    output reg  Q
);
initial begin
    if (CEMUX != "1" || CLKMUX != "CLK" || LSRMUX != "LSR")
        $error("TRELLIS_FF: only CEMUX \"1\", CLKMUX \"CLK\", LSRMUX \"LSR\" are modelled");
    Q = REGSET == "SET";
end
always @(posedge CLK)
    if (LSR)
        Q <= REGSET == "SET";
    else
        Q <= DI;
endmodule

// Global buffer (sysCLOCK guide): the output follows the input while CE is high, low while it is low.
module DCCA (
    input  wire CLKI,
    input  wire CE,
    output wire CLKO
);
assign CLKO = CLKI & CE;
endmodule

// Bidirectional pad. The generated top declares the pad as an input, so the pad's far side (a PHY
// model) reads I and T here and drives B when T releases it; the fabric reads its own value while
// it drives.
module TRELLIS_IO #(
    parameter DIR = "BIDIR"
) (
    input  wire B,
    input  wire I,
    input  wire T,
    output wire O
);
initial if (DIR != "BIDIR") $error("TRELLIS_IO model: only BIDIR");
assign O = T ? B : I;
endmodule

// PLL. The output clocks are driven by the testbench (cocotb), which derives their periods from these
// parameters and the CLKI clock it drives (sim/board/ecp5.py: pll_periods); LOCK rises after 16 CLKI
// edges out of reset.
module EHXPLLL #(
    parameter CLKI_DIV = 1,
    parameter CLKFB_DIV = 1,
    parameter CLKOP_DIV = 8,
    parameter CLKOS_DIV = 8,
    parameter CLKOS2_DIV = 8,
    parameter CLKOS3_DIV = 8,
    parameter CLKOP_ENABLE = "ENABLED",
    parameter CLKOS_ENABLE = "DISABLED",
    parameter CLKOS2_ENABLE = "DISABLED",
    parameter CLKOS3_ENABLE = "DISABLED",
    parameter CLKOP_CPHASE = 0,
    parameter CLKOS_CPHASE = 0,
    parameter CLKOS2_CPHASE = 0,
    parameter CLKOS3_CPHASE = 0,
    parameter CLKOP_FPHASE = 0,
    parameter CLKOS_FPHASE = 0,
    parameter CLKOS2_FPHASE = 0,
    parameter CLKOS3_FPHASE = 0,
    parameter FEEDBK_PATH = "CLKOP"
) (
    input  wire CLKI,
    input  wire RST,
    input  wire STDBY,
    output wire CLKOP,
    output wire CLKOS,
    output wire CLKOS2,
    output wire CLKOS3,
    output wire LOCK
);
reg clkop_tb /*verilator public_flat_rw*/ = 1'b0;
reg clkos_tb /*verilator public_flat_rw*/ = 1'b0;
reg clkos2_tb /*verilator public_flat_rw*/ = 1'b0;
reg clkos3_tb /*verilator public_flat_rw*/ = 1'b0;
reg [4:0] lock_cnt = 5'd0;
always @(posedge CLKI or posedge RST)
    if (RST)
        lock_cnt <= 5'd0;
    else if (!lock_cnt[4])
        lock_cnt <= lock_cnt + 5'd1;
assign LOCK = lock_cnt[4];
assign CLKOP = clkop_tb;
assign CLKOS = clkos_tb;
assign CLKOS2 = clkos2_tb;
assign CLKOS3 = clkos3_tb;
endmodule

// Block RAM, as fpgatest_bram (rtl/ecp5) configures it: 18-bit ports, port A writes, port B reads
// through its output register (two clocks from address to data); a read at the edge of a write to
// the same address sees the old word.
module DP16KD #(
    parameter DATA_WIDTH_A = 18,
    parameter DATA_WIDTH_B = 18,
    parameter REGMODE_A = "NOREG",
    parameter REGMODE_B = "NOREG",
    parameter RESETMODE = "SYNC",
    parameter ASYNC_RESET_RELEASE = "SYNC",
    parameter CSDECODE_A = "0b000",
    parameter CSDECODE_B = "0b000",
    parameter WRITEMODE_A = "NORMAL",
    parameter WRITEMODE_B = "NORMAL",
    parameter GSR = "ENABLED"
) (
    input  wire DIA0, DIA1, DIA2, DIA3, DIA4, DIA5, DIA6, DIA7, DIA8,
    input  wire DIA9, DIA10, DIA11, DIA12, DIA13, DIA14, DIA15, DIA16, DIA17,
    input  wire ADA0, ADA1, ADA2, ADA3, ADA4, ADA5, ADA6, ADA7, ADA8, ADA9, ADA10, ADA11, ADA12, ADA13,
    input  wire CEA, OCEA, CLKA, WEA, CSA0, CSA1, CSA2, RSTA,
    input  wire DIB0, DIB1, DIB2, DIB3, DIB4, DIB5, DIB6, DIB7, DIB8,
    input  wire DIB9, DIB10, DIB11, DIB12, DIB13, DIB14, DIB15, DIB16, DIB17,
    input  wire ADB0, ADB1, ADB2, ADB3, ADB4, ADB5, ADB6, ADB7, ADB8, ADB9, ADB10, ADB11, ADB12, ADB13,
    input  wire CEB, OCEB, CLKB, WEB, CSB0, CSB1, CSB2, RSTB,
    output wire DOA0, DOA1, DOA2, DOA3, DOA4, DOA5, DOA6, DOA7, DOA8,
    output wire DOA9, DOA10, DOA11, DOA12, DOA13, DOA14, DOA15, DOA16, DOA17,
    output wire DOB0, DOB1, DOB2, DOB3, DOB4, DOB5, DOB6, DOB7, DOB8,
    output wire DOB9, DOB10, DOB11, DOB12, DOB13, DOB14, DOB15, DOB16, DOB17
);
initial if (DATA_WIDTH_A != 18 || DATA_WIDTH_B != 18 || REGMODE_B != "OUTREG" || WRITEMODE_A != "NORMAL")
    $error("DP16KD model: only the fpgatest_bram configuration (18/18, port B OUTREG)");

reg  [17:0] mem [0:1023];
reg  [17:0] rd_reg = 18'd0, out_reg = 18'd0;
wire [17:0] dia = {DIA17, DIA16, DIA15, DIA14, DIA13, DIA12, DIA11, DIA10, DIA9,
                   DIA8, DIA7, DIA6, DIA5, DIA4, DIA3, DIA2, DIA1, DIA0};
wire [9:0]  wa = {ADA13, ADA12, ADA11, ADA10, ADA9, ADA8, ADA7, ADA6, ADA5, ADA4};
wire [9:0]  ra = {ADB13, ADB12, ADB11, ADB10, ADB9, ADB8, ADB7, ADB6, ADB5, ADB4};

integer i;
initial for (i = 0; i < 1024; i = i + 1) mem[i] = 18'd0;

// port A: write, byte enables on ADA0 (bits 8:0) and ADA1 (bits 17:9)
always @(posedge CLKA)
    if (CEA && WEA) begin
        if (ADA0) mem[wa][8:0] <= dia[8:0];
        if (ADA1) mem[wa][17:9] <= dia[17:9];
    end

// port B: read, then the output register
always @(posedge CLKB) begin
    if (CEB)
        rd_reg <= mem[ra];
    if (OCEB)
        out_reg <= rd_reg;
    if (RSTB)
        out_reg <= 18'd0;
end

assign {DOB17, DOB16, DOB15, DOB14, DOB13, DOB12, DOB11, DOB10, DOB9,
        DOB8, DOB7, DOB6, DOB5, DOB4, DOB3, DOB2, DOB1, DOB0} = out_reg;
assign {DOA17, DOA16, DOA15, DOA14, DOA13, DOA12, DOA11, DOA10, DOA9,
        DOA8, DOA7, DOA6, DOA5, DOA4, DOA3, DOA2, DOA1, DOA0} = 18'd0;
endmodule

`resetall
