#!/usr/bin/env python3
"""Slow clients against `heapscope view` (issue 19, item 7), for t9013.

Opens N sockets to 127.0.0.1:PORT (loopback only) that send a request
line, then trickle header bytes without ever finishing the headers or
giving the token. Meanwhile it asks for /api/info with the token, as the
user's browser would, and reports how long that took. Then it watches
the trickling sockets: each must have been closed by the server within
the guests' deadline. Everything is bounded: the script stops by itself
after --limit seconds whatever happens.

usage: slow-clients.py PORT COOKIE N LIMIT
Prints: "user <status> <seconds>", then "closed <count> <max seconds>".
"""
import http.client
import select
import socket
import sys
import time


def main():
    port, cookie, n, limit = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    t0 = time.monotonic()
    socks = []
    for _ in range(n):
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=2)
            s.sendall(b"GET /api/info HTTP/1.1\r\nHost: x\r\n")
            s.setblocking(False)
            socks.append([s, None])
        except OSError:
            socks.append([None, 0.0])  # refused at once: closed
    opened = time.monotonic()

    def trickle():
        for entry in socks:
            s, closed = entry
            if closed is not None:
                continue
            try:
                s.send(b"X")
            except OSError:
                entry[1] = time.monotonic() - opened
                continue
            try:
                if select.select([s], [], [], 0)[0] and s.recv(4096) == b"":
                    entry[1] = time.monotonic() - opened
            except OSError:
                entry[1] = time.monotonic() - opened

    # the slow clients hold their places for a moment
    for _ in range(4):
        trickle()
        time.sleep(0.25)
    # then the user asks
    start = time.monotonic()
    status = "none"
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        c.request("GET", "/api/info", headers={"Cookie": cookie})
        status = str(c.getresponse().status)
    except OSError as e:
        status = "error:" + type(e).__name__
    print("user %s %.1f" % (status, time.monotonic() - start), flush=True)
    # the slow clients go on trickling until closed, or the limit
    while time.monotonic() - t0 < limit and any(c is None for _, c in socks):
        trickle()
        time.sleep(0.5)
    closed = [c for _, c in socks if c is not None]
    print("closed %d %.1f" % (len(closed), max(closed) if closed else -1), flush=True)
    for s, _ in socks:
        if s:
            s.close()


main()
