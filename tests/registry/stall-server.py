#!/usr/bin/env python3
"""Accepts connections and then says nothing: a registry that hangs, for the idle-timeout test.
Usage: stall-server.py <port>"""
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(16)
held = []
while True:
    c, _ = s.accept()
    held.append(c)
