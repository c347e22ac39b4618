#!/usr/bin/env python3
"""A registry that hangs, for the idle-timeout tests. It accepts connections and then says nothing;
with a trickle interval it answers every request with a 404 whose 4-byte body comes one byte per
interval, a transfer that is slow but never idle that long.
Usage: stall-server.py <port> [trickle-seconds]"""
import socket, sys, threading, time

trickle = float(sys.argv[2]) if len(sys.argv) > 2 else None


def answer(c):
    try:
        c.recv(65536)  # the request; curl sends it in one piece
        c.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: 4\r\n"
                  b"Connection: close\r\n\r\n")
        for b in b"{  }":
            time.sleep(trickle)
            c.sendall(bytes([b]))
    except OSError:
        pass
    finally:
        c.close()


s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(16)
held = []
while True:
    c, _ = s.accept()
    if trickle is None:
        held.append(c)
    else:
        threading.Thread(target=answer, args=(c,), daemon=True).start()
