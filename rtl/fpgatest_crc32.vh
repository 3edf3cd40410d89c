// SPDX-License-Identifier: BSD-2-Clause
// CRC-32 (IEEE 802.3, reflected, poly 0xEDB88320) one-byte update, shared by FCS and signature check.

function [31:0] crc32_byte;
    input [31:0] crc;
    input [7:0]  data;
    integer      bit_index;
    reg   [31:0] c;
    begin
        c = crc ^ {24'd0, data};
        for (bit_index = 0; bit_index < 8; bit_index = bit_index + 1)
            c = c[0] ? ((c >> 1) ^ 32'hEDB88320) : (c >> 1);
        crc32_byte = c;
    end
endfunction
