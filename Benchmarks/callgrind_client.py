#!/usr/bin/env python3
"""The client of Benchmarks/callgrind.sh: ONE keep-alive TLS connection to 127.0.0.1:PORT
(SNI localhost, verified against CAFILE) speaking PROTOCOL (h1, or h2 by its own small
framing: no package needed), kept open for the whole run. Reads a number N per line on
standard input, sends N GETs of PATH one after the other, each read whole and checked
(status 200, LENGTH body bytes), then prints "done N". Exits at end of input. So the
windows the script measures hold requests only: no handshake, no connection set-up.
With DISTINCT set to 1 in the environment, no two requests are alike: each path carries
a query of its own (`?n=1`, `?n=2`, ...; the origin serves the same file), so nothing a
proxy remembers of the last head can stand in for the next one.

  callgrind_client.py PORT PROTOCOL CAFILE PATH LENGTH
"""
import itertools
import os
import http.client
import socket
import ssl
import struct
import sys

port, protocol, cafile, path, length = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
distinct = os.environ.get("DISTINCT", "0") == "1"
sequence = itertools.count(1)
ctx = ssl.create_default_context(cafile=cafile)


def next_path():
    """PATH, or PATH with a query of its own when DISTINCT=1."""
    return "%s?n=%d" % (path, next(sequence)) if distinct else path
ctx.set_alpn_protocols(["h2" if protocol == "h2" else "http/1.1"])


def fail(why):
    sys.exit("callgrind_client: " + why)


class H1:
    def __init__(self):
        # The socket made here (127.0.0.1 only, SNI localhost), kept by the connection.
        self.conn = http.client.HTTPConnection("localhost", port)
        self.conn.sock = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port)), server_hostname="localhost")

    def get(self):
        self.conn.request("GET", next_path(), headers={"Host": "localhost"})
        response = self.conn.getresponse()
        body = response.read()
        if response.status != 200 or len(body) != length:
            fail("h1: status %d, %d body bytes" % (response.status, len(body)))


class H2:
    """Enough HTTP/2 for sequential GETs: literal HPACK fields (never indexed, no Huffman),
    the answer's :status read as the static table's "200" (0x88), DATA counted, windows
    given back as they are used, SETTINGS and PING acknowledged."""

    def __init__(self):
        raw = socket.create_connection(("127.0.0.1", port))
        self.sock = ctx.wrap_socket(raw, server_hostname="localhost")
        if self.sock.selected_alpn_protocol() != "h2":
            fail("h2: ALPN gave %r" % self.sock.selected_alpn_protocol())
        self.buffer = b""
        self.stream = 1
        self.sock.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + self.frame(4, 0, 0, b""))

    @staticmethod
    def frame(kind, flags, stream, payload):
        return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload

    @staticmethod
    def literal(name, value):
        def string(text):
            data = text.encode()
            assert len(data) < 127
            return bytes([len(data)]) + data
        return b"\x10" + string(name) + string(value)

    def read_frame(self):
        while len(self.buffer) < 9 or len(self.buffer) < 9 + int.from_bytes(self.buffer[:3], "big"):
            data = self.sock.recv(65536)
            if not data:
                fail("h2: the connection closed")
            self.buffer += data
        size = int.from_bytes(self.buffer[:3], "big")
        kind, flags = self.buffer[3], self.buffer[4]
        stream = int.from_bytes(self.buffer[5:9], "big") & 0x7FFFFFFF
        payload = self.buffer[9:9 + size]
        self.buffer = self.buffer[9 + size:]
        return kind, flags, stream, payload

    def get(self):
        stream, self.stream = self.stream, self.stream + 2
        block = b"".join(self.literal(n, v) for n, v in
                         ((":method", "GET"), (":scheme", "https"), (":authority", "localhost"), (":path", next_path())))
        self.sock.sendall(self.frame(1, 0x5, stream, block))  # HEADERS, END_STREAM | END_HEADERS
        status_ok, body = None, 0
        while True:
            kind, flags, on, payload = self.read_frame()
            if kind == 4 and not flags & 1:  # SETTINGS: acknowledge
                self.sock.sendall(self.frame(4, 1, 0, b""))
            elif kind == 6 and not flags & 1:  # PING: answer
                self.sock.sendall(self.frame(6, 1, 0, payload))
            elif kind == 7:
                fail("h2: GOAWAY")
            elif on != stream:
                continue
            elif kind == 3:
                fail("h2: stream reset")
            elif kind == 1:  # HEADERS (the answer's: no padding or priority expected)
                status_ok = payload[:1] == b"\x88"
            elif kind == 0:  # DATA: count it, give the window back
                body += len(payload)
                if payload:
                    update = struct.pack(">I", len(payload))
                    self.sock.sendall(self.frame(8, 0, 0, update) + self.frame(8, 0, stream, update))
            if on == stream and kind in (0, 1) and flags & 1:  # END_STREAM
                break
        if not status_ok or body != length:
            fail("h2: status 200 %s, %d body bytes" % ("seen" if status_ok else "not seen", body))


client = H2() if protocol == "h2" else H1()
for line in sys.stdin:
    count = int(line)
    for _ in range(count):
        client.get()
    print("done %d" % count, flush=True)
