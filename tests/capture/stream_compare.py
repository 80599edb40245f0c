#!/usr/bin/env python3
"""Byte-for-byte check of a tap from an independent loopback capture (tcpdump -w, Ethernet or
Linux cooked link types, IPv4):

    stream_compare.py CAPTURE TAP_PORT

Every TCP connection (accepted: a SYN-ACK answered its SYN) is reassembled per direction from its sequence numbers. The connections
to TAP_PORT are the clients' legs; the others the tap's legs to the broker, paired in the
order their SYNs were sent (the tap connects upstream as it accepts). For each pair, the bytes
the client sent the tap must be the bytes the tap sent the broker, and the broker's bytes the
client's. Prints one line per pair and exits 0 when all are equal and there is at least one, 1
otherwise, 2 when the capture cannot be read."""
import struct
import sys


def packets(path):
    with open(path, 'rb') as f:
        data = f.read()
    if len(data) < 24:
        raise ValueError('not a pcap file (too short)')
    magic = data[:4]
    if magic in (b'\xd4\xc3\xb2\xa1', b'\x4d\x3c\xb2\xa1'):
        end = '<'
    elif magic in (b'\xa1\xb2\xc3\xd4', b'\xa1\xb2\x3c\x4d'):
        end = '>'
    else:
        raise ValueError('not a pcap file (magic %s)' % magic.hex())
    nano = magic in (b'\x4d\x3c\xb2\xa1', b'\xa1\xb2\x3c\x4d')
    link = struct.unpack(end + 'I', data[20:24])[0]
    at = 24
    while at + 16 <= len(data):
        sec, frac, caplen, _ = struct.unpack(end + 'IIII', data[at:at + 16])
        at += 16
        yield sec + frac / (1e9 if nano else 1e6), link, data[at:at + caplen]
        at += caplen


def tcp_segment(link, frame):
    if link == 1:        # Ethernet
        off, ethertype = 14, struct.unpack('>H', frame[12:14])[0]
    elif link == 113:    # Linux cooked (SLL)
        off, ethertype = 16, struct.unpack('>H', frame[14:16])[0]
    elif link == 276:    # Linux cooked v2 (SLL2)
        off, ethertype = 20, struct.unpack('>H', frame[0:2])[0]
    else:
        raise ValueError('link type %d is not decoded here' % link)
    if ethertype != 0x0800:
        return None
    ip = frame[off:]
    if len(ip) < 20 or ip[9] != 6:
        return None
    ihl = (ip[0] & 15) * 4
    total = struct.unpack('>H', ip[2:4])[0]
    src, dst = ip[12:16], ip[16:20]
    tcp = ip[ihl:total]
    sport, dport, seq = struct.unpack('>HHI', tcp[:8])
    doff = (tcp[12] >> 4) * 4
    flags = tcp[13]
    return (src, sport), (dst, dport), seq, flags, tcp[doff:]


class Stream:
    def __init__(self):
        self.isn = None
        self.chunks = {}   # offset -> bytes

    def add(self, seq, flags, payload):
        if flags & 0x02:   # SYN
            self.isn = seq
            return
        if not payload or self.isn is None:
            return
        off = (seq - self.isn - 1) % (1 << 32)
        if len(payload) > len(self.chunks.get(off, b'')):
            self.chunks[off] = payload

    def bytes(self):
        out = bytearray()
        for off in sorted(self.chunks):
            piece = self.chunks[off]
            if off > len(out):
                raise ValueError('a gap of %d bytes at offset %d' % (off - len(out), len(out)))
            out += piece[len(out) - off:]
        return bytes(out)


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    port = int(sys.argv[2])
    conns = {}  # (client endpoint, server endpoint) -> [syn time, stream to server, to client]
    try:
        for t, link, frame in packets(sys.argv[1]):
            seg = tcp_segment(link, frame)
            if seg is None:
                continue
            a, b, seq, flags, payload = seg
            if flags & 0x02 and not flags & 0x10:      # SYN: a opens to b
                conns.setdefault((a, b), [t, Stream(), Stream(), False])
            if flags & 0x12 == 0x12 and (b, a) in conns:  # SYN-ACK: accepted
                conns[(b, a)][3] = True
            if (a, b) in conns:
                conns[(a, b)][1].add(seq, flags, payload)
            elif (b, a) in conns:
                conns[(b, a)][2].add(seq, flags, payload)
    except (ValueError, struct.error) as e:
        print('stream_compare: %s: %s' % (sys.argv[1], e), file=sys.stderr)
        return 2
    # Only connections the other side accepted (a SYN to a port nobody listens on yet is not
    # a leg).
    legs = sorted(((k, v) for k, v in conns.items() if v[3]), key=lambda kv: kv[1][0])
    clients = [v for k, v in legs if k[1][1] == port]
    upstream = [v for k, v in legs if k[1][1] != port and k[0][1] != port]
    ok = len(clients) > 0 and len(clients) == len(upstream)
    print('%d client connection(s) to port %d, %d from the tap upstream' %
          (len(clients), port, len(upstream)))
    for i, (c, u) in enumerate(zip(clients, upstream)):
        try:
            c_up, c_down, u_up, u_down = c[1].bytes(), c[2].bytes(), u[1].bytes(), u[2].bytes()
        except ValueError as e:
            print('pair %d: cannot reassemble: %s' % (i + 1, e))
            ok = False
            continue
        same = c_up == u_up and c_down == u_down
        ok = ok and same and len(c_up) > 0
        print('pair %d: client->tap %d bytes, tap->broker %d: %s; broker->tap %d, tap->client %d: %s'
              % (i + 1, len(c_up), len(u_up), 'equal' if c_up == u_up else 'DIFFERENT',
                 len(u_down), len(c_down), 'equal' if c_down == u_down else 'DIFFERENT'))
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
