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


class RecordingComm:
    """LiteX's CommUDP as the Etherbone transport uses it: every record's address and count."""

    def __init__(self):
        self.records = []

    def read(self, addr, length):
        self.records.append(("read", addr, length))
        return [addr + 4 * i for i in range(length)]

    def write(self, addr, datas):
        self.records.append(("write", addr, len(datas)))


def test_etherbone_records_hold_at_most_255_words():
    """An Etherbone record counts its reads and writes in 8 bits, and LiteEth keeps a record's
    replies in a packet FIFO of 256 words (FPGATEST_ETHERBONE_BURST; a longer record makes it send one
    reply again and again): longer transfers go as records of 255 words, at the right addresses."""
    from fpgatest.transport import Etherbone

    eb = Etherbone.__new__(Etherbone)
    eb.url, eb.comm = "udp://192.168.1.50:1234", RecordingComm()
    assert eb.read(0x1000, 600) == [0x1000 + 4 * i for i in range(600)]
    eb.write(0x2000, list(range(300)))
    assert eb.comm.records == [("read", 0x1000, 255), ("read", 0x1000 + 4 * 255, 255), ("read", 0x1000 + 4 * 510, 90),
                               ("write", 0x2000, 255), ("write", 0x2000 + 4 * 255, 45)]
