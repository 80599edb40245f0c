#!/usr/bin/env python3
"""A hostile Pulsar client for conform's robustness tests (tests/conformance/hostile_test.cc).

    hostile_client.py MODE URL PIDFILE

writes its pid to PIDFILE, connects to URL (pulsar://127.0.0.1:PORT), subscribes consumer 0
and grants 10 permits, then by MODE:
  flood        writes FLOW(0) frames without end, reconnecting when the broker closes it
  connections  opens 200 more connections (each sends CONNECT) and holds them all
  pings        writes PING frames without end and never reads the PONGs
It never reads what the broker sends, and never acknowledges. The frames are encoded here by
hand (BaseCommand fields: type 1, connect 2, subscribe 4, flow 11, ping 18).
"""
import os
import socket
import struct
import sys
import time


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field_varint(num, value):
    return varint(num << 3) + varint(value)


def field_bytes(num, data):
    return varint((num << 3) | 2) + varint(len(data)) + data


def frame(command_type, field, body):
    cmd = field_varint(1, command_type) + field_bytes(field, body)
    return struct.pack(">II", len(cmd) + 4, len(cmd)) + cmd


CONNECT = frame(2, 2, field_bytes(1, b"hostile") + field_varint(4, 21))
SUBSCRIBE = frame(4, 4, field_bytes(1, b"persistent://public/default/permitcheck") +
                  field_bytes(2, b"permitcheck-sub") + field_varint(3, 0) +
                  field_varint(4, 0) + field_varint(5, 1))


def flow(permits):
    return frame(11, 11, field_varint(1, 0) + field_varint(2, permits))


def connect(host, port):
    s = socket.create_connection((host, port))
    s.sendall(CONNECT)
    return s


def main():
    mode, url, pidfile = sys.argv[1], sys.argv[2], sys.argv[3]
    with open(pidfile, "w") as f:
        f.write(str(os.getpid()))
    host, port = url.split("//", 1)[1].rsplit(":", 1)
    port = int(port)
    s = connect(host, port)
    s.sendall(SUBSCRIBE + flow(10))
    if mode == "pings":
        burst = frame(18, 18, b"") * 1000
        while True:
            try:
                s.sendall(burst)
            except OSError:
                time.sleep(1)
    if mode == "flood":
        burst = flow(0) * 1000
        while True:
            try:
                s.sendall(burst)
            except OSError:
                time.sleep(0.01)
                try:
                    s = connect(host, port)
                except OSError:
                    pass
    held = [s]
    for _ in range(200):
        try:
            held.append(connect(host, port))
        except OSError:
            pass
    while True:
        time.sleep(1)


if __name__ == "__main__":
    main()
