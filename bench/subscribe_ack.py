#!/usr/bin/env python3
"""SUBSCRIBE-to-ACK latency against a running tickwired (docs/benchmarks.md, "Entitlements").

bench/subscribe_ack.py PORT [--user NAME --password-file FILE] [--count N]
Sends N SUBSCRIBEs one at a time on one connection (half exact topics
PERF/SUBn, half wildcards PERF/SUBn/>), each after the previous ACK, and
prints the p50, p99 and max round trip in microseconds (Python's own
overhead included: compare runs, not absolute values)."""
import argparse
import socket
import struct
import time


def frame(msg_type, body, flags=0):
    return struct.pack("<IBBH", 8 + len(body), msg_type, flags, 0) + body


def str16(s):
    b = s.encode()
    return struct.pack("<H", len(b)) + b


def read_frame(sock, buf):
    while True:
        if len(buf) >= 8:
            (length,) = struct.unpack_from("<I", buf)
            if len(buf) >= length:
                f = bytes(buf[:length])
                del buf[:length]
                return f
        chunk = sock.recv(65536)
        if not chunk:
            raise SystemExit("broker closed the connection")
        buf += chunk


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("port", type=int)
    ap.add_argument("--user", default="")
    ap.add_argument("--password-file", default="")
    ap.add_argument("--count", type=int, default=2000)
    a = ap.parse_args()
    sock = socket.create_connection(("127.0.0.1", a.port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    body = struct.pack("<HHI", 1, 2, 0) + str16("subscribe-ack")
    flags = 0
    if a.user:
        password = open(a.password_file).readline().rstrip("\n")
        body += str16(a.user) + str16(password)
        flags = 1
    sock.sendall(frame(0x01, body, flags))
    buf = bytearray()
    welcome = read_frame(sock, buf)
    if welcome[4] != 0x81:
        raise SystemExit("no WELCOME: type 0x%02x" % welcome[4])
    times = []
    for i in range(1, a.count + 1):
        pattern = "PERF/SUB%d" % i if i % 2 else "PERF/SUB%d/>" % i
        start = time.perf_counter_ns()
        sock.sendall(frame(0x02, struct.pack("<I", i) + str16(pattern)))
        while True:
            f = read_frame(sock, buf)
            if f[4] == 0x82:
                (rid, code) = struct.unpack_from("<IH", f, 8)
                if rid == i:
                    break
        times.append((time.perf_counter_ns() - start) / 1000)
        if code != 0:
            raise SystemExit("SUBSCRIBE %s refused with code %d" % (pattern, code))
    times.sort()
    print("subscribes=%d p50_us=%.1f p99_us=%.1f max_us=%.1f" % (
        len(times), times[len(times) // 2], times[int(len(times) * 0.99)], times[-1]))


if __name__ == "__main__":
    main()
