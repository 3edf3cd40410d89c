// SPDX-License-Identifier: BSD-2-Clause
// fpgatest_rx_cdc: stamps each received SFD in the tester time base and moves frame bytes from the PHY's RX clock to the system clock.

`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * The PHY's receive clock may be up to +-100 ppm off the tester clock. The low STAMP_W bits of the
 * tick counter cross into the RX domain as gray code (2-flop synchronizer), so the stamp is taken
 * right at the SFD in the PHY clock and stays in the one time base; the checker widens it back to
 * 64 bits. Only frame bytes (no preamble, no idle) go through the FIFO, so it drains in every gap.
 * Either side may be reset alone (a PHY reset, a SoC reset): the FIFO's pointers are never reset, a
 * frame cut on the RX side stays a frame without its end (closed as damaged by the next), and the
 * tail of one cut on the system side is discarded up to the next frame's first byte.
 */
module fpgatest_rx_cdc #(
    parameter STAMP_W    = 24,
    parameter DEPTH_LOG2 = 5
) (
    // system clock domain
    input  wire               clk,
    input  wire               rst,
    input  wire [63:0]        time_tick,

    // GMII receive (PHY clock domain)
    input  wire               rx_clk,
    input  wire               rx_rst,
    input  wire [7:0]         gmii_rxd,
    input  wire               gmii_rx_dv,
    input  wire               gmii_rx_er,

    // frame bytes in the system clock domain
    output wire               m_valid,
    output wire [7:0]         m_data,
    output wire               m_first,          // first byte after the SFD; m_stamp is valid with it
    output wire               m_last,
    output wire               m_err,            // with m_last: rx_er seen or bytes lost in the FIFO
    output wire [STAMP_W-1:0] m_stamp,

    // event (system clock domain)
    output reg                cnt_overflow      // a frame was damaged by a full FIFO
);

initial if (STAMP_W < 16 || STAMP_W > 32) $error("fpgatest_rx_cdc: STAMP_W out of range");

// ---------------------------------------------------------------------------------------------
// time base into the RX domain
// ---------------------------------------------------------------------------------------------
reg [STAMP_W-1:0] time_gray_reg;
always @(posedge clk)
    time_gray_reg <= time_tick[STAMP_W-1:0] ^ (time_tick[STAMP_W-1:0] >> 1);

(* ASYNC_REG = "TRUE" *) reg [STAMP_W-1:0] time_gray_sync1_reg, time_gray_sync2_reg;
reg [STAMP_W-1:0] rx_time_reg;

// rx_time_reg lags time_tick by five clocks (gray register, two sync flops, two decode registers)
// and the SFD is taken from in_rxd_reg, a clock after it was on gmii_rxd: adding SYNC_LAG = 5 - 1
// makes the stamp the tick during which the SFD was on gmii_rxd (exact when rx_clk == clk, within one
// tick otherwise)
localparam [STAMP_W-1:0] SYNC_LAG = 4;

// gray to binary: bit i is the XOR of the gray bits from i up. Decoded in two clocks so that no
// clock holds a deep XOR tree: first the parity of each 4-bit group, then each bit from the bits of
// its own group and the parities of the groups above it
localparam GROUPS = (STAMP_W + 3) / 4;

// group_parity and gray2bin, one text per target (rtl/<target>/fpgatest_gray_decode.vh, found
// through the target's include path): bit by bit for the board, word-wide for simulators; both
// proven equal to the textbook decode for every input (sim/checker/test_gray_decode.py, Yosys SAT)
`include "fpgatest_gray_decode.vh"

reg [STAMP_W-1:0] time_gray_d_reg;
reg [GROUPS-1:0]  time_parity_reg;

always @(posedge rx_clk) begin
    time_gray_sync1_reg <= time_gray_reg;
    time_gray_sync2_reg <= time_gray_sync1_reg;
    time_gray_d_reg <= time_gray_sync2_reg;
    time_parity_reg <= group_parity(time_gray_sync2_reg);
    rx_time_reg <= gray2bin(time_gray_d_reg, time_parity_reg);
end

// ---------------------------------------------------------------------------------------------
// frame delineation in the RX domain, three registered stages: the PHY's outputs (in_*), the
// delineated byte (held_*), the word for the FIFO (wr_*). No PHY output drives logic, and the FIFO
// is written from flip-flops, so no RX-clock path is longer than a state update or a pointer step
// ---------------------------------------------------------------------------------------------
reg [7:0] in_rxd_reg;
reg       in_dv_reg, in_er_reg;
always @(posedge rx_clk) begin
    in_rxd_reg <= gmii_rxd;
    in_dv_reg <= gmii_rx_dv;
    in_er_reg <= gmii_rx_er;
end

localparam [1:0] RX_IDLE = 2'd0, RX_PRE = 2'd1, RX_DATA = 2'd2, RX_SKIP = 2'd3;

reg [1:0]         rx_state_reg;
reg [7:0]         held_byte_reg;
reg               held_valid_reg, held_first_reg;
reg               frame_err_reg;
reg [STAMP_W-1:0] stamp_reg;

localparam W = 8 + 3 + STAMP_W;         // first, last, err, stamp, byte
reg               wr_en_reg;
reg [W-1:0]       wr_data_reg;
wire              wr_full;

always @(posedge rx_clk) begin
    case (rx_state_reg)
        RX_IDLE: begin
            held_valid_reg <= 1'b0;
            frame_err_reg <= 1'b0;
            if (in_dv_reg) begin
                if (in_rxd_reg == 8'hD5) begin
                    rx_state_reg <= RX_DATA;
                    stamp_reg <= rx_time_reg + SYNC_LAG;
                end else if (in_rxd_reg == 8'h55) begin
                    rx_state_reg <= RX_PRE;
                end else begin
                    rx_state_reg <= RX_SKIP;
                end
            end
        end
        RX_PRE: begin
            if (!in_dv_reg)
                rx_state_reg <= RX_IDLE;
            else if (in_rxd_reg == 8'hD5) begin
                rx_state_reg <= RX_DATA;
                stamp_reg <= rx_time_reg + SYNC_LAG;
            end else if (in_rxd_reg != 8'h55)
                rx_state_reg <= RX_SKIP;
        end
        RX_DATA: begin
            if (in_dv_reg) begin
                held_byte_reg <= in_rxd_reg;
                held_valid_reg <= 1'b1;
                held_first_reg <= !held_valid_reg;
                if (in_er_reg)
                    frame_err_reg <= 1'b1;
            end else begin
                rx_state_reg <= RX_IDLE;
            end
        end
        default: begin
            if (!in_dv_reg)
                rx_state_reg <= RX_IDLE;
        end
    endcase

    // the held byte goes out when the next one arrives, or as the last when data valid drops
    wr_en_reg <= rx_state_reg == RX_DATA && held_valid_reg;
    wr_data_reg <= {held_first_reg, !in_dv_reg, frame_err_reg | (!in_dv_reg && in_er_reg), stamp_reg,
                    held_byte_reg};

    // a reset cuts the frame on the wire: the bytes written so far stay a frame without its end,
    // which the checker closes as damaged when the next frame starts
    if (rx_rst) begin
        rx_state_reg <= RX_IDLE;
        held_valid_reg <= 1'b0;
        wr_en_reg <= 1'b0;
    end
end

// a word that does not fit is dropped; the frame's later words carry the error, and the frame
// counts once as damaged (lost_reg: a word of the frame being written was dropped; a first word
// starts a frame afresh, also after a reset cut the one before)
wire    wr_first = wr_data_reg[W-1];
wire    wr_last = wr_data_reg[W-2];
reg     lost_reg = 1'b0;
wire    lost_before = lost_reg && !wr_first;
reg     overflow_toggle_reg = 1'b0;     // never reset: a reset must not look like an overflow
always @(posedge rx_clk) begin
    if (wr_en_reg) begin
        lost_reg <= !wr_last && (lost_before || wr_full);
        if (wr_full && !lost_before)
            overflow_toggle_reg <= !overflow_toggle_reg;
    end
end

// ---------------------------------------------------------------------------------------------
// FIFO into the system clock domain (never reset: see fpgatest_async_fifo)
// ---------------------------------------------------------------------------------------------
wire [W-1:0] rd_data;
wire         rd_valid;

fpgatest_async_fifo #(
    .WIDTH      (W),
    .DEPTH_LOG2 (DEPTH_LOG2),
    .FREE_SLOT  (1)
) fifo_inst (
    .wr_clk   (rx_clk),
    .wr_data  ({wr_data_reg[W-1:W-2], wr_data_reg[W-3] | lost_before, wr_data_reg[W-4:0]}),
    .wr_en    (wr_en_reg),
    .wr_full  (wr_full),
    .rd_clk   (clk),
    .rd_data  (rd_data),
    .rd_valid (rd_valid),
    .rd_en    (1'b1)
);

// registered output: the FIFO's RAM read ends here, not in the checker's parser. The FIFO drains
// while the system side is in reset and the words are discarded; after a reset, words up to the next
// frame's first are the tail of a frame the reset cut, and are discarded too
reg          m_valid_reg;
reg  [W-1:0] m_word_reg;
reg          m_synced_reg;              // a first word has been seen since the reset
wire         rd_first = rd_data[W-1];
always @(posedge clk) begin
    m_valid_reg <= rd_valid && (m_synced_reg || rd_first);
    m_word_reg <= rd_data;
    if (rd_valid && rd_first)
        m_synced_reg <= 1'b1;
    if (rst) begin
        m_valid_reg <= 1'b0;
        m_synced_reg <= 1'b0;
    end
end
assign m_valid = m_valid_reg;
assign {m_first, m_last, m_err, m_stamp, m_data} = m_word_reg;

// report overflows in the system domain (toggle synchronizer; overflows are rare and far apart)
(* ASYNC_REG = "TRUE" *) reg overflow_sync1_reg, overflow_sync2_reg;
reg overflow_sync3_reg;
always @(posedge clk) begin
    overflow_sync1_reg <= overflow_toggle_reg;
    overflow_sync2_reg <= overflow_sync1_reg;
    overflow_sync3_reg <= overflow_sync2_reg;
    cnt_overflow <= overflow_sync3_reg != overflow_sync2_reg;
end

endmodule

`resetall
