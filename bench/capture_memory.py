#!/usr/bin/env python3
"""Memory of captures and the tap under many unfinished frames (issue 33; docs/cli.md, Memory).

N Pulsar connections (default 40), each: handshake, CONNECT (CONNECTED back), then 5 MB - 1 KiB
of a 5 MB command frame, which the decoder keeps whole while it comes, never finished.

  bench/capture_memory.py pcap /tmp/mem40.pcap 40
  /usr/bin/time -v build/cli/permitcheck validate --no-progress --max-memory 64M /tmp/mem40.pcap
  bench/capture_memory.py tap build/cli/permitcheck 40 --max-memory 64M

`pcap` writes the capture (classic pcap, Ethernet, the N connections' segments round robin).
`tap` runs `permitcheck tap` (under /usr/bin/time -v) in front of a sink broker, sends the same
bytes from N clients, stops the tap with SIGTERM after 3 s and prints its verdict line, the
count of memory-limit reports and its peak resident set size.
"""
import os
import re
import socket
import struct
import subprocess
import sys
import threading
import time

FRAME = 5 * 1024 * 1024


def frame(cmd):  # [total size][command size][command]
    return struct.pack('>II', len(cmd) + 4, len(cmd)) + cmd


CMD = bytes([0x0a, 0x01, ord('x'), 0x20, 0x15])  # client/server_version "x", protocol 21
CONNECT = frame(bytes([0x08, 0x02, 0x12, len(CMD)]) + CMD)
CONNECTED = frame(bytes([0x08, 0x03, 0x1a, len(CMD)]) + CMD)
BIG = struct.pack('>II', FRAME - 4, FRAME - 8) + b'z' * (FRAME - 1024 - 8)


def write_pcap(path, n, mss=1448):
    out = open(path, 'wb')
    out.write(struct.pack('<IHHiIII', 0xA1B2C3D4, 2, 4, 0, 0, 262144, 1))
    t = [1764600000.0]

    def pkt(src, dst, sport, dport, seq, ack, flags, payload=b''):
        tcp = struct.pack('>HHIIBBHHH', sport, dport, seq & 0xffffffff, ack & 0xffffffff,
                          5 << 4, flags, 65535, 0, 0) + payload
        ip = struct.pack('>BBHHHBBH4s4s', 0x45, 0, 20 + len(tcp), 1, 0x4000, 64, 6, 0,
                         bytes(src), bytes(dst))
        fr = b'\x02\0\0\0\0\x02\x02\0\0\0\0\x01\x08\x00' + ip + tcp
        secs = int(t[0])
        us = int(round((t[0] - secs) * 1e6))
        out.write(struct.pack('<IIII', secs, min(us, 999999), len(fr), len(fr)) + fr)
        t[0] += 0.00001

    c, s = [10, 0, 0, 1], [10, 0, 0, 2]
    conns = []
    for k in range(n):
        port = 40000 + k
        cs, ss = 1000, 5000
        pkt(c, s, port, 6650, cs, 0, 0x02)
        pkt(s, c, 6650, port, ss, cs + 1, 0x12)
        cs, ss = cs + 1, ss + 1
        pkt(c, s, port, 6650, cs, ss, 0x10)
        pkt(c, s, port, 6650, cs, ss, 0x18, CONNECT)
        cs += len(CONNECT)
        pkt(s, c, 6650, port, ss, cs, 0x18, CONNECTED)
        ss += len(CONNECTED)
        conns.append([port, cs, ss, 0])
    while any(x[3] < len(BIG) for x in conns):
        for x in conns:
            port, cs, ss, at = x
            if at >= len(BIG):
                continue
            seg = BIG[at:at + mss]
            pkt(c, s, port, 6650, cs + at, ss, 0x18, seg)
            pkt(s, c, 6650, port, ss, cs + at + len(seg), 0x10)
            x[3] = at + len(seg)
    out.close()


def run_tap(exe, n, extra):
    broker = socket.socket()
    broker.bind(('127.0.0.1', 0))
    broker.listen(128)

    def sink(conn):
        while conn.recv(1 << 20):
            pass

    def accept():
        while True:
            try:
                conn, _ = broker.accept()
            except OSError:
                return
            threading.Thread(target=sink, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    tap = subprocess.Popen(['/usr/bin/time', '-v', exe, 'tap', '--listen', '127.0.0.1:0',
                            '--upstream', '127.0.0.1:%d' % broker.getsockname()[1]] + extra,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    port = int(re.search(r'listening on 127\.0\.0\.1:(\d+)', tap.stderr.readline()).group(1))
    clients = []
    try:
        for _ in range(n):
            cl = socket.create_connection(('127.0.0.1', port))
            cl.sendall(CONNECT + BIG)
            clients.append(cl)
        time.sleep(3)
    finally:
        # The tap is the child of /usr/bin/time: SIGTERM ends it with its summary.
        pid = int(subprocess.check_output(['pgrep', '-P', str(tap.pid)]).split()[0])
        os.kill(pid, 15)
        out, err = tap.communicate(timeout=60)
        for cl in clients:
            cl.close()
        broker.close()
    print(out.strip().splitlines()[-1])
    print('memory-limit reports:', out.count('memory limit'))
    print([l.strip() for l in err.splitlines() if 'Maximum resident' in l][0])


if __name__ == '__main__':
    if len(sys.argv) >= 3 and sys.argv[1] == 'pcap':
        write_pcap(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 40)
    elif len(sys.argv) >= 3 and sys.argv[1] == 'tap':
        run_tap(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 40, sys.argv[4:])
    else:
        sys.exit(__doc__)
