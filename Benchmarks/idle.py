#!/usr/bin/env python3
"""Opens N keep-alive TLS connections to HOST:PORT, makes one GET on each, keeps
them all open, prints 'ready N' and waits until standard input closes (or it is killed)."""
import socket, ssl, sys

host, port, count, cafile = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
ctx = ssl.create_default_context(cafile=cafile)
ctx.check_hostname = False
ctx.set_alpn_protocols(["http/1.1"])
conns = []
for _ in range(count):
    raw = socket.create_connection((host, port))
    s = ctx.wrap_socket(raw, server_hostname="localhost")
    s.sendall(b"GET /1k HTTP/1.1\r\nHost: localhost\r\n\r\n")
    data = b""
    while b"\r\n\r\n" not in data:
        data += s.recv(65536)
    head, body = data.split(b"\r\n\r\n", 1)
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    while len(body) < length:
        body += s.recv(65536)
    conns.append(s)
print("ready", len(conns), flush=True)
sys.stdin.read()
