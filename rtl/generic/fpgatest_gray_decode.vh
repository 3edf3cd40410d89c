// SPDX-License-Identifier: BSD-2-Clause
// fpgatest_gray_decode.vh (generic): group_parity and gray2bin for fpgatest_rx_cdc's two-clock gray decode, included inside the module.

/*
 * Word-wide, as a simulator computes it in a few operations instead of a few hundred (the
 * bit-by-bit loops of rtl/ecp5/fpgatest_gray_decode.vh took 8-10 % of the twin's time in a profile).
 */
function [GROUPS-1:0] group_parity(input [STAMP_W-1:0] g);
    integer k;
    for (k = 0; k < GROUPS; k = k + 1)
        group_parity[k] = ^((g >> (4 * k)) & 4'hF);
endfunction

function [STAMP_W-1:0] gray2bin(input [STAMP_W-1:0] g, input [GROUPS-1:0] parity);
    reg [4*GROUPS-1:0] x;
    reg [GROUPS-1:0]   above;
    integer k;
    begin
        // in every group at once, the XOR of the bits from i to the group's top (two shift-XOR
        // steps); then each group's bits XORed with the parity of all the groups above it
        x = {{(4*GROUPS-STAMP_W){1'b0}}, g};
        x = x ^ ((x >> 1) & {GROUPS{4'b0111}});
        x = x ^ ((x >> 2) & {GROUPS{4'b0011}});
        above = parity >> 1;
        for (k = GROUPS - 2; k >= 0; k = k - 1)
            above[k] = above[k] ^ above[k + 1];
        for (k = 0; k < GROUPS; k = k + 1)
            x[4*k +: 4] = x[4*k +: 4] ^ {4{above[k]}};
        gray2bin = x[STAMP_W-1:0];
    end
endfunction
