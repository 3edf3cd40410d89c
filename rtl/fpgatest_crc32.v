// SPDX-License-Identifier: BSD-2-Clause
// fpgatest_crc32: CRC-32 (IEEE 802.3, reflected, poly 0xEDB88320) one-byte update, shared by FCS and signature check.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fpgatest_crc32 (
    input  wire [31:0] crc_in,
    input  wire [7:0]  data,
    output reg  [31:0] crc_out
);

integer bit_index;

always @* begin
    crc_out = crc_in ^ {24'd0, data};
    for (bit_index = 0; bit_index < 8; bit_index = bit_index + 1)
        crc_out = crc_out[0] ? ((crc_out >> 1) ^ 32'hEDB88320) : (crc_out >> 1);
end

endmodule

`resetall
