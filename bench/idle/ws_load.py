#!/usr/bin/env python3
"""Load for bench/idle/ws: N MQTT-over-WebSocket connections (docs/mqtt.md, "MQTT over WebSocket"),
each a WebSocket upgrade on /mqtt, an MQTT 3.1.1 CONNECT (keep alive 0: no timeout) and one
SUBSCRIBE (QoS 0) to the same topic, then held silent. Python stdlib only.

  ws_load.py PORT N GO_FILE [--sources K] [--batch B]

Prints one JSON line once every connection is subscribed (or failed), then waits (at most 600 s) for
GO_FILE to exist: the caller measures the broker in between. Then one more connection publishes one
message to the topic, every subscriber's arrival is counted (at most 30 s), a second JSON line says how
many of the N got it, and the process exits (every connection closes).

Connections open B at a time (default 500, under limits.max_http_connections of 1,024: an upgrade
counts as an HTTP connection until its 101), from 127.0.0.1..K.
"""
import base64, json, os, select, struct, sys, time

from load import open_conn, raise_fd_limit

CONNECT, CONNACK, PUBLISH, SUBSCRIBE, SUBACK = 0x10, 0x20, 0x30, 0x82, 0x90
STEP_TIMEOUT_S = 30


def mqtt_string(text):
    data = text.encode()
    return struct.pack(">H", len(data)) + data


def remaining_length(n):
    out = bytearray()
    while True:
        byte, n = n % 128, n // 128
        out.append(byte | 0x80 if n else byte)
        if not n:
            return bytes(out)


def mqtt_packet(first, body):
    return bytes([first]) + remaining_length(len(body)) + body


def connect_packet(client_id):
    # protocol name, level 4 (3.1.1), flags: clean session, keep alive 0
    return mqtt_packet(CONNECT, mqtt_string("MQTT") + bytes([4, 0x02, 0, 0]) + mqtt_string(client_id))


def ws_frame(payload):
    """One masked binary frame, FIN set (RFC 6455 5.2: a client masks every frame)."""
    mask = os.urandom(4)
    n = len(payload)
    head = bytes([0x82]) + (bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + struct.pack(">H", n))
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


class Conn:
    """One MQTT-over-WebSocket client: upgrade, then WebSocket frames carrying an MQTT byte stream."""

    def __init__(self, sock, name, port):
        self.sock, self.name, self.raw, self.mqtt = sock, name, bytearray(), bytearray()
        self.upgraded, self.closed, self.stage = False, False, "upgrade"
        key = base64.b64encode(os.urandom(16)).decode()
        sock.sendall((f"GET /mqtt HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                      f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: mqtt\r\n\r\n")
                     .encode())
        sock.setblocking(False)

    def send(self, packet):
        self.sock.sendall(ws_frame(packet))

    def read(self):
        """The MQTT packets (type byte, body) that arrived; sets closed when the peer closed."""
        try:
            data = self.sock.recv(1 << 16)
        except BlockingIOError:
            return []
        except OSError:
            data = b""
        if not data:
            self.closed = True
            return []
        self.raw += data
        if not self.upgraded:
            end = self.raw.find(b"\r\n\r\n")
            if end < 0:
                return []
            if b" 101 " not in self.raw[:self.raw.find(b"\r\n")]:
                self.closed = True
                return []
            self.upgraded = True
            del self.raw[:end + 4]
        self.unframe()
        return self.packets()

    def unframe(self):
        while len(self.raw) >= 2:
            opcode, n, at = self.raw[0] & 0x0F, self.raw[1] & 0x7F, 2
            if n == 126:
                if len(self.raw) < 4:
                    return
                n, at = struct.unpack_from(">H", self.raw, 2)[0], 4
            elif n == 127:
                if len(self.raw) < 10:
                    return
                n, at = struct.unpack_from(">Q", self.raw, 2)[0], 10
            if len(self.raw) < at + n:
                return
            if opcode in (0x0, 0x2):
                self.mqtt += self.raw[at:at + n]
            elif opcode == 0x8:
                self.closed = True
            del self.raw[:at + n]

    def packets(self):
        out = []
        while len(self.mqtt) >= 2:
            n, mult, at = 0, 1, 1
            while at < len(self.mqtt) and at <= 4:
                n += (self.mqtt[at] & 0x7F) * mult
                mult *= 128
                at += 1
                if not self.mqtt[at - 1] & 0x80:
                    break
            else:
                return out
            if len(self.mqtt) < at + n:
                return out
            out.append((self.mqtt[0] & 0xF0, bytes(self.mqtt[at:at + n])))
            del self.mqtt[:at + n]
        return out

    def advance(self, topic):
        """Moves through CONNECT and SUBSCRIBE as their answers arrive."""
        for kind, body in self.read():
            if kind == CONNACK and self.stage in ("upgrade", "connack"):
                self.stage = "suback" if len(body) >= 2 and body[1] == 0 else "failed"
                if self.stage == "suback":
                    self.send(mqtt_packet(SUBSCRIBE, b"\x00\x01" + mqtt_string(topic) + b"\x00"))
            elif kind == SUBACK and self.stage == "suback":
                self.stage = "ready" if len(body) >= 3 and body[2] < 0x80 else "failed"
        if self.upgraded and self.stage == "upgrade":
            self.stage = "connack"
            self.send(connect_packet(self.name))
        if self.closed and self.stage != "ready":
            self.stage = "failed"


def open_batch(ep, port, names, sources, topic):
    """Opens these connections and drives them to ready or failed (at most STEP_TIMEOUT_S)."""
    conns = {}
    for i, name in names:
        try:
            c = Conn(open_conn(port, f"127.0.0.{1 + i % sources}"), name, port)
        except OSError:
            continue
        conns[c.sock.fileno()] = c
        ep.register(c.sock.fileno(), select.EPOLLIN)
    pending, deadline = dict(conns), time.monotonic() + STEP_TIMEOUT_S
    while pending and time.monotonic() < deadline:
        for fd, _ in ep.poll(1.0):
            c = pending.get(fd)
            if c is None:
                continue
            c.advance(topic)
            if c.stage in ("ready", "failed"):
                del pending[fd]
            if c.closed:  # else its end of file wakes every later poll
                ep.unregister(fd)
    return list(conns.values())


def count_arrivals(ep, subs, payload):
    """How many subscribers received the PUBLISH carrying payload (at most STEP_TIMEOUT_S)."""
    by_fd = {c.sock.fileno(): c for c in subs}
    got, deadline = set(), time.monotonic() + STEP_TIMEOUT_S
    while not got.issuperset(by_fd) and time.monotonic() < deadline:
        for fd, _ in ep.poll(1.0):
            c = by_fd.get(fd)
            if c is None:
                continue
            if any(kind == PUBLISH and body.endswith(payload) for kind, body in c.read()):
                got.add(fd)
            if c.closed:
                ep.unregister(fd)
                del by_fd[fd]
    return len(got)


def main():
    args = sys.argv[1:]
    port, n, go_file = int(args[0]), int(args[1]), args[2]
    sources = int(args[args.index("--sources") + 1]) if "--sources" in args else 4
    batch = int(args[args.index("--batch") + 1]) if "--batch" in args else 500
    raise_fd_limit(n + 1024)
    topic, ep, t0 = f"BENCH/ws-{os.getpid()}", select.epoll(), time.monotonic()
    conns = []
    for first in range(0, n, batch):
        names = [(i, f"ws-{os.getpid()}-{i}") for i in range(first, min(n, first + batch))]
        conns += open_batch(ep, port, names, sources, topic)
    ready = [c for c in conns if c.stage == "ready"]
    print(json.dumps({"wanted": n, "opened": len(conns), "subscribed": len(ready),
                      "failed": len(conns) - len(ready), "seconds": round(time.monotonic() - t0, 1)}), flush=True)
    deadline = time.monotonic() + 600
    while not os.path.exists(go_file) and time.monotonic() < deadline:
        time.sleep(0.1)
    pub = open_batch(ep, port, [(n, f"ws-{os.getpid()}-pub")], sources, f"{topic}/pub")
    payload = f"live-check-{os.getpid()}".encode()
    if pub and pub[0].stage == "ready":
        pub[0].send(mqtt_packet(PUBLISH, mqtt_string(topic) + payload))
    received = count_arrivals(ep, ready, payload)
    still_open = sum(1 for c in ready if not c.closed)
    print(json.dumps({"published": bool(pub and pub[0].stage == "ready"), "received": received,
                      "subscribed": len(ready), "still_open": still_open}), flush=True)


if __name__ == "__main__":
    main()
