#!/usr/bin/env python3
"""Slow clients for the tests of `gpuperf serve` (live_slow_clients_test.sh, live_prometheus_test.sh).

hold_connections.py PORT COUNT READY STOP: keeps COUNT connections to 127.0.0.1:PORT open,
every other one having sent half a request ("GET /metrics HTTP/1.1\\r\\nHost: x\\r\\n", no
blank line) and the rest nothing. One the server closes (its deadline) is opened again at
once, so that COUNT are always waiting. Writes READY when the first COUNT are connected;
stops when the file STOP exists (or after 10 minutes) and prints how many it opened.
"""
import os
import select
import socket
import sys
import time

HALF = b"GET /metrics HTTP/1.1\r\nHost: x\r\n"


def connect(port, half):
    s = socket.create_connection(("127.0.0.1", port))
    if half:
        s.sendall(HALF)
    return s


def main():
    port, count, ready, stop = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    held = [connect(port, i % 2 == 1) for i in range(count)]
    opened = count
    with open(ready, "w") as f:
        f.write(f"{count}\n")
    give_up = time.monotonic() + 600
    while not os.path.exists(stop) and time.monotonic() < give_up:
        readable, _, _ = select.select(held, [], [], 0.1)
        for s in readable:
            # A waiting client gets nothing to read: readable means the server closed it.
            try:
                closed = s.recv(4096) == b""
            except ConnectionError:
                closed = True
            if closed:
                i = held.index(s)
                s.close()
                held[i] = connect(port, i % 2 == 1)
                opened += 1
    print(f"held {count}, opened {opened}")


if __name__ == "__main__":
    main()
