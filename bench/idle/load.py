#!/usr/bin/env python3
"""Load for bench/idle/run: idle connections, a paced publisher/subscriber
pair that measures latency, and connection storms. Native protocol framing
(docs/protocol.md): u32 length (whole frame, little-endian), u8 type, u8
flags, u16 reserved, then the body.

  load.py idle  PORT N [--sources K] [--hold S]   open N idle connections (HELLO, heartbeat 600 s), hold
  load.py pair  PORT RATE SECONDS OUT.json        publisher + subscriber: latency, messages, gaps
  load.py storm PORT N SECONDS                    open N connections (HELLO), close them, again, for SECONDS

Idle connections come from 127.0.0.1..K so that 100,000 of them fit in the
ephemeral port range (28K ports per source address and destination).
"""
import json, os, resource, select, socket, struct, sys, time

HELLO, SUBSCRIBE, REGISTER, PUBLISH = 0x01, 0x02, 0x05, 0x06
UPDATE, IMAGE, WELCOME, ACK = 0x85, 0x84, 0x81, 0x82


def frame(msg_type, body, flags=0):
    return struct.pack("<IBBH", 8 + len(body), msg_type, flags, 0) + body


def str16(text):
    data = text.encode()
    return struct.pack("<H", len(data)) + data


def hello(name, heartbeat_ms=600_000):
    return frame(HELLO, struct.pack("<HHI", 1, 1, heartbeat_ms) + str16(name))


def raise_fd_limit(wanted):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard < wanted:  # root may raise the hard limit up to fs.nr_open
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, wanted))
            return
        except (ValueError, OSError):
            pass
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(max(soft, wanted), hard), hard))


def open_conn(port, source):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_IP, 24, 1)  # IP_BIND_ADDRESS_NO_PORT: the port is chosen per destination at connect
    s.bind((source, 0))
    s.connect(("127.0.0.1", port))
    return s


def idle(port, n, sources=4, hold=None):
    raise_fd_limit(n + 1024)
    conns = []
    t0 = time.monotonic()
    for i in range(n):
        s = open_conn(port, f"127.0.0.{1 + i % sources}")
        s.sendall(hello(f"idle-{i}"))
        conns.append(s)
    # Every WELCOME, then nothing: the connections stay open and silent.
    ep = select.epoll()
    for s in conns:
        s.setblocking(False)
        ep.register(s.fileno(), select.EPOLLIN)
    welcomed, closed, deadline = 0, 0, time.monotonic() + 60
    pending = {s.fileno(): s for s in conns}
    while pending and time.monotonic() < deadline:
        for fd, _ in ep.poll(1.0):
            data = pending[fd].recv(4096) if fd in pending else b""
            if fd not in pending:
                continue
            if not data:
                closed += 1
            elif len(data) >= 5 and data[4] == WELCOME:
                welcomed += 1
            ep.unregister(fd)
            del pending[fd]
    print(json.dumps({"opened": n, "welcomed": welcomed, "closed": closed,
                      "seconds": round(time.monotonic() - t0, 1)}), flush=True)
    if hold is None:
        while True:
            time.sleep(3600)
    time.sleep(hold)


def read_frames(sock, buf):
    data = sock.recv(1 << 16)
    if not data:
        raise ConnectionError("broker closed the connection")
    buf += data
    frames, pos = [], 0
    while len(buf) - pos >= 8:
        (length,) = struct.unpack_from("<I", buf, pos)
        if len(buf) - pos < length:
            break
        frames.append((buf[pos + 4], bytes(buf[pos + 8:pos + length])))
        pos += length
    del buf[:pos]
    return frames


def pair(port, rate, seconds, out):
    sub = socket.create_connection(("127.0.0.1", port))
    pub = socket.create_connection(("127.0.0.1", port))
    for s in (sub, pub):
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    topic = f"BENCH/latency-{os.getpid()}"  # a channel of its own: no cached image from an earlier run
    sub.sendall(hello("bench-sub", 5000) + frame(SUBSCRIBE, struct.pack("<I", 1) + str16(topic)))
    pub.sendall(hello("bench-pub", 5000) + frame(REGISTER, struct.pack("<IB", 1, 1) + str16(topic)))
    time.sleep(0.3)
    sub.setblocking(False)
    buf = bytearray()
    latencies, received, gaps, last_seq = [], 0, 0, None
    interval = 1.0 / rate
    start = time.monotonic()
    next_send, sent, end = start, 0, start + seconds
    while True:
        now = time.monotonic()
        if now >= end and received >= sent:
            break
        if now >= end + 2:
            break
        if now >= next_send and now < end:
            pub.sendall(frame(PUBLISH, struct.pack("<IQQ", 1, time.monotonic_ns(), sent)))
            sent += 1
            next_send += interval
        wait = max(0.0, min(next_send - time.monotonic(), 0.001))
        ready, _, _ = select.select([sub], [], [], wait)
        if not ready:
            continue
        try:
            frames = read_frames(sub, buf)
        except BlockingIOError:
            continue
        now_ns = time.monotonic_ns()
        for msg_type, body in frames:
            if msg_type == UPDATE and len(body) >= 12 + 16:
                stamp, seq = struct.unpack_from("<QQ", body, 12)
            elif msg_type == IMAGE and len(body) >= 16 + 16:
                stamp, seq = struct.unpack_from("<QQ", body, 16)
            else:
                continue
            if last_seq is not None and seq != last_seq + 1:
                gaps += 1
            last_seq = seq
            received += 1
            latencies.append((now_ns - stamp) / 1000.0)
    latencies.sort()
    pick = lambda q: round(latencies[min(len(latencies) - 1, int(q * len(latencies)))], 1) if latencies else None
    result = {"rate": rate, "seconds": seconds, "sent": sent, "received": received, "gaps": gaps,
              "p50_us": pick(0.50), "p99_us": pick(0.99), "max_us": round(latencies[-1], 1) if latencies else None}
    json.dump(result, open(out, "w"))
    print(json.dumps(result), flush=True)


def storm(port, n, seconds):
    raise_fd_limit(n + 1024)
    end, rounds, opened = time.monotonic() + seconds, 0, 0
    while time.monotonic() < end:
        conns = []
        for i in range(n):
            try:
                s = open_conn(port, f"127.0.0.{1 + i % 4}")
                s.sendall(hello(f"storm-{i}"))
                conns.append(s)
            except OSError:
                break
            if time.monotonic() >= end:
                break
        opened += len(conns)
        for s in conns:
            s.close()
        rounds += 1
    print(json.dumps({"storm_connections": opened, "rounds": rounds}), flush=True)


if __name__ == "__main__":
    mode, port = sys.argv[1], int(sys.argv[2])
    if mode == "idle":
        args = sys.argv[3:]
        n = int(args[0])
        sources = int(args[args.index("--sources") + 1]) if "--sources" in args else 4
        hold = float(args[args.index("--hold") + 1]) if "--hold" in args else None
        idle(port, n, sources, hold)
    elif mode == "pair":
        pair(port, int(sys.argv[3]), float(sys.argv[4]), sys.argv[5])
    elif mode == "storm":
        storm(port, int(sys.argv[3]), float(sys.argv[4]))
    else:
        sys.exit(__doc__)
