// SPDX-License-Identifier: BSD-2-Clause
// fpgatest_gray_decode.vh (ECP5): group_parity and gray2bin for fpgatest_rx_cdc's two-clock gray decode, included inside the module.

/*
 * Bit by bit, as Yosys synthesises it for the board: the netlist the board's timing was closed
 * with. Any other text of the same logic gives Yosys and nextpnr another placement: two word-wide
 * texts each lost a seed's 10 % margin, and the same text behind a module boundary another netlist
 * (docs/board.md). rtl/generic/fpgatest_gray_decode.vh computes the same functions word-wide.
 */
function [GROUPS-1:0] group_parity(input [STAMP_W-1:0] g);
    integer i;
    begin
        group_parity = {GROUPS{1'b0}};
        for (i = 0; i < STAMP_W; i = i + 1)
            group_parity[i / 4] = group_parity[i / 4] ^ g[i];
    end
endfunction

function [STAMP_W-1:0] gray2bin(input [STAMP_W-1:0] g, input [GROUPS-1:0] parity);
    integer i, j;
    begin
        for (i = 0; i < STAMP_W; i = i + 1) begin
            gray2bin[i] = 1'b0;
            for (j = i; j < STAMP_W && j / 4 == i / 4; j = j + 1)
                gray2bin[i] = gray2bin[i] ^ g[j];
            for (j = i / 4 + 1; j < GROUPS; j = j + 1)
                gray2bin[i] = gray2bin[i] ^ parity[j];
        end
    end
endfunction
