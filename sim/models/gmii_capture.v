// SPDX-License-Identifier: BSD-2-Clause
// gmii_capture: writes every frame seen on a GMII tap to a text file, for the twin's pcapng captures.

`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * One line per frame while cfg_enable is high: "<tick> <bytes in hex>\n", the tick being the
 * tester's time_tick at the SFD (the clock edge the SFD is on en/d, as the tester's stamps count)
 * and the bytes those after the SFD up to the end of en: destination MAC to FCS. A frame whose SFD
 * came before cfg_enable rose is left out whole; a line is flushed when its frame ends, so a reader
 * sees whole lines. The file (FILE) opens in the simulator's working directory at start.
 * Simulation model: not meant for synthesis.
 */
module gmii_capture #(
    parameter FILE = "capture.txt"
) (
    input  wire        clk,
    input  wire [63:0] time_tick,
    input  wire [7:0]  d,
    input  wire        en,
    input  wire        cfg_enable        // capture frames whose SFD comes while this is high
);

integer fd;
initial fd = $fopen(FILE, "w");

reg in_frame_reg = 1'b0;

always @(posedge clk) begin
    if (in_frame_reg) begin
        if (en) begin
            $fwrite(fd, "%02x", d);
        end else begin
            $fwrite(fd, "\n");
            $fflush(fd);
            in_frame_reg <= 1'b0;
        end
    end else if (en && d == 8'hD5 && cfg_enable) begin
        $fwrite(fd, "%0d ", time_tick);
        in_frame_reg <= 1'b1;
    end
end

endmodule

`resetall
