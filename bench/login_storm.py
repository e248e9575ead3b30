#!/usr/bin/env python3
"""bench/login_storm.py PORT SECONDS [RATE]: failed logins from one client.

Opens RATE connections a second (default 1,000) to a Tickwire broker for
SECONDS, each sending a HELLO version 2 (docs/protocol.md) for user `bench`
with a wrong password, and reads each until the broker closes it. Prints one
line: attempts, how many got ERROR AUTH_FAILED (code 27), how many were
closed without it, and how many were still open at the end.
"""
import selectors
import signal
import socket
import struct
import sys
import time

AUTH_FAILED = 27


def hello(password: bytes) -> bytes:
    def str16(b: bytes) -> bytes:
        return struct.pack("<H", len(b)) + b
    body = struct.pack("<HHI", 1, 2, 0) + str16(b"storm") + str16(b"bench") + str16(password)
    return struct.pack("<IBBH", 8 + len(body), 0x01, 0x01, 0) + body


def error_code(data: bytes):
    # ERROR: header, then u16 code first in the body.
    if len(data) >= 10 and data[4] == 0x87:
        return struct.unpack_from("<H", data, 8)[0]
    return None


def main() -> None:
    port, seconds = int(sys.argv[1]), float(sys.argv[2])
    rate = float(sys.argv[3]) if len(sys.argv) > 3 else 1000.0
    sel = selectors.DefaultSelector()
    received = {}
    attempts = refused = closed_other = 0
    start = time.monotonic()
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    while not stop:
        now = time.monotonic()
        due = min(int((now - start) * rate), int(seconds * rate))
        while attempts < due:
            s = socket.socket()
            s.setblocking(False)
            s.connect_ex(("127.0.0.1", port))
            sel.register(s, selectors.EVENT_WRITE)
            received[s] = b""
            attempts += 1
        if now - start > seconds + 5 or (attempts >= seconds * rate and not received):
            break
        for key, events in sel.select(timeout=0.001):
            s = key.fileobj
            if events & selectors.EVENT_WRITE:
                try:
                    s.send(hello(b"wrong-%d" % attempts))
                    sel.modify(s, selectors.EVENT_READ)
                except OSError:
                    closed_other += 1
                    sel.unregister(s); s.close(); del received[s]
                continue
            try:
                chunk = s.recv(4096)
            except OSError:
                chunk = b""
            if chunk:
                received[s] += chunk
                continue
            if error_code(received[s]) == AUTH_FAILED:
                refused += 1
            else:
                closed_other += 1
            sel.unregister(s); s.close(); del received[s]
    print(f"login storm: {attempts} attempts in {time.monotonic() - start:.1f} s, {refused} AUTH_FAILED, "
          f"{closed_other} closed otherwise, {len(received)} still open")


if __name__ == "__main__":
    main()
