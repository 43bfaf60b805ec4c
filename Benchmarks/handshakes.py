#!/usr/bin/env python3
"""Full TLS handshakes, one request each: opens COUNT connections to HOST:PORT one
after the other, each with a new TLS session (no resumption), sends GET /1k with
Connection: close and reads the whole answer. NAMES is 'warm' (every connection
names localhost, so a proxy's leaf certificate cache hits) or 'cold' (connection i
names h<i>-<salt>.localhost, so a proxy mints a new leaf each time). Prints
'done COUNT SECONDS'; exits 1 on the first bad answer."""
import os, socket, ssl, sys, time

host, port, count, cafile, names = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
ctx = ssl.create_default_context(cafile=cafile)
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE  # cold names are not in any certificate the peers hold
ctx.set_alpn_protocols(["http/1.1"])
salt = os.urandom(4).hex()
start = time.monotonic()
for i in range(count):
    name = "localhost" if names == "warm" else "h%d-%s.localhost" % (i, salt)
    with socket.create_connection((host, port)) as raw, ctx.wrap_socket(raw, server_hostname=name) as s:
        s.sendall(b"GET /1k HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        data = b""
        while True:
            try:
                chunk = s.recv(65536)
            except ssl.SSLEOFError:  # a FIN without close_notify ends the answer too
                break
            if not chunk:
                break
            data += chunk
        if not data.startswith(b"HTTP/1.1 200"):
            print("bad answer on connection %d: %r" % (i, data[:80]), flush=True)
            sys.exit(1)
print("done", count, "%.3f" % (time.monotonic() - start), flush=True)
