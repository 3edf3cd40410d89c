# SPDX-License-Identifier: BSD-2-Clause
"""UARTBone requests on the wire: pipelined write-then-read pairs, and which requests are tried again."""

import pytest

from fpgatest.transport import CMD_READ_BURST_INCR, CMD_WRITE_BURST_FIXED, LinkError, UartBone


class ShortPort:
    """A serial port whose answers come back short (a byte lost on the line): records every request."""

    def __init__(self):
        self.requests = []

    def reset_input_buffer(self):
        pass

    def write(self, data):
        self.requests.append(bytes(data))

    def read(self, n):
        return b"\x00" * (n - 1)

    def close(self):
        pass


def bone_on(port) -> UartBone:
    bone = UartBone("loop://", retries=3)
    bone.port.close()
    bone.port = port
    return bone


def test_pairs_on_the_wire():
    """Fixed-address bursts (bit-banging) then a read, per pair, all in one request."""
    port = ShortPort()
    with pytest.raises(LinkError, match="after 3 tries"):
        bone_on(port).read_indexed(0x10, [[1, 2], [3]], 0x20, 1, fixed=True)
    assert port.requests[0] == (bytes([CMD_WRITE_BURST_FIXED, 2]) + (4).to_bytes(4, "big") + (1).to_bytes(4, "big")
                                + (2).to_bytes(4, "big") + bytes([CMD_READ_BURST_INCR, 1]) + (8).to_bytes(4, "big")
                                + bytes([CMD_WRITE_BURST_FIXED, 1]) + (4).to_bytes(4, "big") + (3).to_bytes(4, "big")
                                + bytes([CMD_READ_BURST_INCR, 1]) + (8).to_bytes(4, "big"))


def test_requests_with_side_effects_are_not_sent_twice():
    """A short answer to a request of reads is tried again; to one of FIFO pops it is an error at
    once: sent twice, the pops of the first would be lost."""
    port = ShortPort()
    with pytest.raises(LinkError, match="after 3 tries"):
        bone_on(port).read_indexed(0x10, [[1]] * 4, 0x20, 2)
    assert len(port.requests) == 3 and len(set(port.requests)) == 1
    port = ShortPort()
    with pytest.raises(LinkError, match="after 1 try"):
        bone_on(port).read_indexed(0x10, [[1]] * 4, 0x20, 2, retry=False)
    assert len(port.requests) == 1
