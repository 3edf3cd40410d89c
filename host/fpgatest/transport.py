# SPDX-License-Identifier: BSD-2-Clause
"""Transports to the SoC's CSR bus: UARTBone over pyserial (serial port or socket:// for the twin), Etherbone over
UDP, and a running litex_server (litex://: whatever bridge it holds, shared with LiteX's own tools)."""

import importlib.util
import socket
import time
from urllib.parse import urlparse

import serial

from fpgatest import stop

CMD_WRITE_BURST_INCR = 0x01
CMD_READ_BURST_INCR = 0x02
CMD_WRITE_BURST_FIXED = 0x03
MAX_BURST = 255


class LinkError(Exception):
    """The board or twin did not answer."""


class UartBone:
    """LiteX UARTBone (Stream2Wishbone): [cmd, n, word address BE32, n data words BE32]."""

    def __init__(self, url: str, baudrate: int = 115200, timeout_s: float = 2.0, retries: int = 3):
        self.url = url
        self.timeout_s = timeout_s
        self.retries = retries
        try:
            self.port = serial.serial_for_url(url, baudrate=baudrate, timeout=timeout_s, write_timeout=timeout_s)
        except (serial.SerialException, OSError, ValueError) as err:
            raise LinkError(f"cannot open {url}: {err}") from None
        # pyserial's socket:// leaves Nagle's algorithm on: a request sent while an earlier one (a write,
        # which has no reply) is not yet acknowledged waited for the twin's delayed ACK, 40 ms
        sock = getattr(self.port, "_socket", None)
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def close(self):
        self.port.close()

    def _exchange(self, request: bytes, reply_len: int, retry: bool = True) -> bytes:
        """Send a request, return its reply. Tried again on a short reply, unless retry is False: a
        request with side effects (FIFO pops) sent twice would lose what the first took."""
        stop.check()
        last = None
        tries = self.retries if retry else 1
        for _ in range(tries):
            try:
                self.port.reset_input_buffer()
                self.port.write(request)
                reply = self.port.read(reply_len) if reply_len else b""
                if len(reply) == reply_len:
                    return reply
                last = f"{len(reply)} of {reply_len} bytes"
            except (serial.SerialException, OSError) as err:
                last = str(err)
            # a partial command is dropped by the bridge after its own timeout; let it expire
            time.sleep(0.05)
        raise LinkError(f"no answer from {self.url} after {tries} {'tries' if tries > 1 else 'try'} ({last})")

    def read(self, addr: int, count: int = 1) -> list[int]:
        words = []
        while count:
            n = min(count, MAX_BURST)
            req = bytes([CMD_READ_BURST_INCR, n]) + (addr // 4).to_bytes(4, "big")
            reply = self._exchange(req, 4 * n)
            words += [int.from_bytes(reply[4 * i:4 * i + 4], "big") for i in range(n)]
            addr += 4 * n
            count -= n
        return words

    def write(self, addr: int, values: list[int]) -> None:
        for start in range(0, len(values), MAX_BURST):
            chunk = values[start:start + MAX_BURST]
            req = bytes([CMD_WRITE_BURST_INCR, len(chunk)]) + ((addr // 4) + start).to_bytes(4, "big")
            req += b"".join((v & 0xFFFFFFFF).to_bytes(4, "big") for v in chunk)
            self._exchange(req, 0)

    def transact(self, ops: list[tuple], retry: bool = True) -> list[list[int]]:
        """Several commands in one request and their replies in one read: one round trip. ops are
        ("read", addr, count), ("write", addr, words) and ("write_fixed", addr, words) (the words one
        after another into the one register at addr), each of at most MAX_BURST words; returns each
        read's words, in order. Only for a bridge that keeps what arrives while it replies, within what
        it keeps: see Device.reply_window. retry=False when a command has side effects (see _exchange)."""
        request, lengths = b"", []
        for kind, addr, arg in ops:
            if kind == "read":
                request += bytes([CMD_READ_BURST_INCR, arg]) + (addr // 4).to_bytes(4, "big")
                lengths.append(arg)
            else:
                cmd = CMD_WRITE_BURST_FIXED if kind == "write_fixed" else CMD_WRITE_BURST_INCR
                request += (bytes([cmd, len(arg)]) + (addr // 4).to_bytes(4, "big")
                            + b"".join((v & 0xFFFFFFFF).to_bytes(4, "big") for v in arg))
        reply = self._exchange(request, 4 * sum(lengths), retry)
        out, pos = [], 0
        for n in lengths:
            out.append([int.from_bytes(reply[pos + 4 * i:pos + 4 * i + 4], "big") for i in range(n)])
            pos += 4 * n
        return out

    def read_indexed(self, index_addr: int, index_writes: list[list[int]], data_addr: int, words: int,
                     per_request: int = 16, fixed: bool = False, retry: bool = True) -> list[list[int]]:
        """For each entry of index_writes: write its words from index_addr on (selecting, e.g., one
        histogram bin), or into index_addr one after another if fixed (bit-banging), then read `words`
        words at data_addr. The pairs go in one request per `per_request`, in order: one round trip
        where a loop would take one per write and one per read (see transact)."""
        write = "write_fixed" if fixed else "write"
        out = []
        for start in range(0, len(index_writes), per_request):
            chunk = index_writes[start:start + per_request]
            out += self.transact([op for w in chunk for op in ((write, index_addr, w), ("read", data_addr, words))],
                                 retry)
        return out

    def write_fixed(self, addr: int, values: list[int]) -> None:
        """The values one after another into the one register at addr (one command per 255)."""
        for start in range(0, len(values), MAX_BURST):
            chunk = values[start:start + MAX_BURST]
            req = bytes([CMD_WRITE_BURST_FIXED, len(chunk)]) + (addr // 4).to_bytes(4, "big")
            req += b"".join((v & 0xFFFFFFFF).to_bytes(4, "big") for v in chunk)
            self._exchange(req, 0)


class Etherbone:
    """Etherbone over UDP through LiteX's own client (litex.tools.remote.comm_udp), e.g. udp://192.168.1.50."""

    def __init__(self, host: str, port: int = 1234):
        from litex.tools.remote.comm_udp import CommUDP

        self.url = f"udp://{host}:{port}"
        try:
            self.comm = CommUDP(host, port)
            self.comm.open()
        except AssertionError:    # CommUDP asserts that the answer to its probe is a probe reply
            raise LinkError(f"cannot open {self.url}: what answered is not an Etherbone server (the answer to "
                            "the probe is not a probe reply)") from None
        except Exception as err:  # CommUDP reports an absent server with bare exceptions
            raise LinkError(f"cannot open {self.url}: {str(err) or type(err).__name__}") from None

    def close(self):
        self.comm.close()

    def read(self, addr: int, count: int = 1) -> list[int]:
        """count words from addr, one Etherbone record per MAX_BURST (a gateware record holds at most
        FPGATEST_ETHERBONE_BURST = 256 reads: LiteEth fails on a longer one)."""
        stop.check()
        try:
            out = []
            for start in range(0, count, MAX_BURST):
                out += self.comm.read(addr + 4 * start, min(MAX_BURST, count - start))
            return out
        except Exception as err:  # CommUDP signals a dead link with bare exceptions
            raise LinkError(f"no answer from {self.url} ({err})") from None

    def write(self, addr: int, values: list[int]) -> None:
        """values to addr on, one Etherbone record per MAX_BURST (a record's count is 8 bits)."""
        stop.check()
        values = list(values)
        try:
            for start in range(0, len(values), MAX_BURST):
                self.comm.write(addr + 4 * start, values[start:start + MAX_BURST])
        except Exception as err:
            raise LinkError(f"no answer from {self.url} ({err})") from None


def _remote_client(host: str, port: int):
    """LiteX's RemoteClient, made to raise on a missing reply (it returns zeros) and to name registers by
    nothing (it would read a csr.csv from the working directory; fpgatest names them from csr.json)."""
    from litex.tools.litex_client import RemoteClient

    class Client(RemoteClient):
        def __init__(self):     # RemoteClient.__init__ without the csr.csv lookup (LiteX 2024.12)
            self.csr_data_width = self.csr_bus_address_width = 32
            self.host, self.port, self.debug, self.binded, self.base_address = host, port, False, False, 0

        def receive_packet(self, sock, addr_size):
            response = super().receive_packet(sock, addr_size)
            if response == 0:
                raise LinkError("no reply")
            return response

    return Client()


class LiteXServer:
    """A running litex_server (LiteX's RemoteClient, Etherbone over TCP), e.g. litex://localhost:1234: the
    server holds the bridge (UART, Etherbone, JTAG-UART, PCIe...) and can serve litex_cli or LiteScope
    at the same time."""

    def __init__(self, host: str, port: int = 1234, timeout_s: float = 2.0):
        self.url = f"litex://{host}:{port}"
        self.client = _remote_client(host, port)
        try:
            self.client.open()
            self.client.socket.settimeout(timeout_s)
        except OSError as err:
            raise LinkError(f"cannot open {self.url}: {err.strerror or err} (is litex_server running?)") from None

    def close(self):
        self.client.close()

    def read(self, addr: int, count: int = 1) -> list[int]:
        stop.check()
        words = []
        try:
            while count:    # one Etherbone record carries up to 255 reads
                n = min(count, MAX_BURST)
                words += self.client.read(addr, n)
                addr += 4 * n
                count -= n
        except (OSError, LinkError) as err:
            raise LinkError(f"no answer from {self.url} ({err})") from None
        return words

    def write(self, addr: int, values: list[int]) -> None:
        stop.check()
        try:
            for start in range(0, len(values), MAX_BURST):
                self.client.write(addr + 4 * start, [v & 0xFFFFFFFF for v in values[start:start + MAX_BURST]])
        except OSError as err:
            raise LinkError(f"no answer from {self.url} ({err})") from None


def check_url(url: str) -> str | None:
    """A URL open_url can open, by its form alone (nothing is opened): udp://, litex:// or socket://
    HOST[:PORT], another pyserial URL (rfc2217://, loop://...) or a serial port's path. Returns its
    scheme in lower case (None for a path)."""
    scheme, sep, _ = url.lower().partition("://")     # pyserial reads the scheme in lower case too
    if not sep:
        return None
    if scheme in ("udp", "socket", "litex"):
        parsed = urlparse(url)
        try:
            port = parsed.port
        except ValueError:
            port = -1
        if not parsed.hostname or port == -1 or port == 0 or (scheme == "socket" and port is None):
            raise LinkError(f"bad URL {url!r}: expected udp://HOST[:PORT], litex://HOST[:PORT] or "
                            "socket://HOST:PORT, port 1..65535")
    elif not scheme.isidentifier() or importlib.util.find_spec(f"serial.urlhandler.protocol_{scheme}") is None:
        raise LinkError(f"bad URL {url!r}: {scheme}:// is not a transport (udp://, litex://, socket://, "
                        "another pyserial URL, or a serial port such as /dev/ttyUSB0)")
    return scheme


def open_url(url: str, timeout_s: float = 2.0):
    """/dev/ttyUSB0 or socket://127.0.0.1:PORT -> UARTBone; udp://HOST[:PORT] -> Etherbone; litex://HOST[:PORT]
    -> a running litex_server. timeout_s: how long UARTBone waits for an answer (a simulated board answers
    slower than a real one)."""
    scheme, parsed = check_url(url), urlparse(url)
    if scheme == "udp":
        return Etherbone(parsed.hostname, parsed.port or 1234)
    if scheme == "litex":
        return LiteXServer(parsed.hostname, parsed.port or 1234, timeout_s)
    return UartBone(url, timeout_s=timeout_s)
