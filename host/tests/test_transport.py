# SPDX-License-Identifier: BSD-2-Clause
"""UARTBone requests on the wire: pipelined write-then-read pairs and batches of commands, which requests are
tried again, and when a batch goes as one request."""

import socket

import pytest

from fpgatest.driver import Device
from fpgatest.transport import CMD_READ_BURST_INCR, CMD_WRITE_BURST_FIXED, CMD_WRITE_BURST_INCR, LinkError, UartBone


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
    """LiteX's CommUDP as the Etherbone transport uses it: every record's address, and its count (a
    read) or its words (a write)."""

    def __init__(self):
        self.records = []

    def read(self, addr, length):
        self.records.append(("read", addr, length))
        return [addr + 4 * i for i in range(length)]

    def write(self, addr, datas):
        self.records.append(("write", addr, list(datas)))


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
                               ("write", 0x2000, list(range(255))), ("write", 0x2000 + 4 * 255, list(range(255, 300)))]


class AnsweringPort(ShortPort):
    """A serial port that answers every request with the bytes it is given."""

    def __init__(self, reply: bytes):
        super().__init__()
        self.reply = reply

    def read(self, n):
        return self.reply[:n]


def test_commands_in_one_request_and_their_replies_in_one_read():
    """transact: a write, a fixed-address write and two reads as one request, the reply cut at the reads."""
    reply = b"".join(v.to_bytes(4, "big") for v in (7, 8, 9))
    port = AnsweringPort(reply)
    got = bone_on(port).transact([("write", 0x10, [1]), ("read", 0x20, 2), ("write_fixed", 0x30, [2, 3]),
                                  ("read", 0x40, 1)])
    assert got == [[7, 8], [9]]
    assert port.requests == [bytes([CMD_WRITE_BURST_INCR, 1]) + (4).to_bytes(4, "big") + (1).to_bytes(4, "big")
                             + bytes([CMD_READ_BURST_INCR, 2]) + (8).to_bytes(4, "big")
                             + bytes([CMD_WRITE_BURST_FIXED, 2]) + (12).to_bytes(4, "big") + (2).to_bytes(4, "big")
                             + (3).to_bytes(4, "big") + bytes([CMD_READ_BURST_INCR, 1]) + (16).to_bytes(4, "big")]


def test_a_socket_sends_each_request_at_once():
    """socket:// (the twin) turns Nagle's algorithm off: with it on, a request sent while a write (which
    has no reply) was not yet acknowledged waited for the far end's delayed ACK, 40 ms a time."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        bone = UartBone(f"socket://127.0.0.1:{server.getsockname()[1]}")
        try:
            assert bone.port._socket.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
        finally:
            bone.close()


class RecordingBus(RecordingComm):
    """A bus as Device sees one (read, write, transact), recording each call in records."""

    def transact(self, ops, retry=True):
        self.records.append(("transact", list(ops), retry))
        return [[addr + 4 * i for i in range(n)] for kind, addr, n in ops if kind == "read"]


def device_on(bus, reply_window: int) -> Device:
    dev = Device.__new__(Device)
    dev.bus, dev.reply_window, dev.url = bus, reply_window, "test"
    return dev


def test_a_batch_is_one_request_where_the_bridge_keeps_it():
    """Device.batch: one request when the smaller of request and reply fits what the bridge keeps while
    it replies; reads longer than a burst go as bursts of 255 and come back joined; one by one, in
    order, where the bridge keeps nothing or too little."""
    ops = [("write", 0x100, [5]), ("read", 0x1000, 300), ("read", 0x2000, 1)]
    expect = [[0x1000 + 4 * i for i in range(300)], [0x2000]]
    bus = RecordingBus()
    assert device_on(bus, 1 << 20).batch(ops, retry=False) == expect
    assert bus.records == [("transact", [("write", 0x100, [5]), ("read", 0x1000, 255), ("read", 0x1000 + 4 * 255, 45),
                                         ("read", 0x2000, 1)], False)]
    request = 10 + 3 * 6
    for window in (request, request - 1, 0):
        bus = RecordingBus()
        assert device_on(bus, window).batch(ops) == expect
        if window == request:     # the reply (1,204 bytes) is larger: the request is what may wait
            assert [c[0] for c in bus.records] == ["transact"]
        else:
            assert bus.records == [("write", 0x100, [5]), ("read", 0x1000, 255), ("read", 0x1000 + 4 * 255, 45),
                                   ("read", 0x2000, 1)]
