#!/usr/bin/env python3
"""it29: `tickwire top` on a pseudo-terminal of 80x24 (issue 29, item 7).

usage: it29_top_pty.py TICKWIRE ARGS...

Runs TICKWIRE ARGS... as the session leader of a new pty sized 24 rows x 80
columns (TIOCSWINSZ), waits for its first frame, checks that the terminal
is in non-canonical no-echo mode while it runs, sends 'q', and checks that
it exits 0 within a deadline far below its refresh interval (the test gives
--interval 600000: without q it would wait ten minutes), that the terminal
settings are restored, and that every frame fits 80x24 with the header on
its first line. Prints "ok top" or the failures, exit 0 or 1.
"""
import fcntl
import os
import pty
import re
import select
import struct
import sys
import termios
import time

ROWS, COLS = 24, 80
DEADLINE_S = 10  # a safety net: q is answered within the 100 ms key poll


def read_until(fd, done, deadline):
    out = b""
    while time.monotonic() < deadline and not done(out):
        ready, _, _ = select.select([fd], [], [], 0.05)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    return out


def frames_of(text):
    """The screens drawn: each starts at home (ESC [ H); control sequences stripped."""
    frames = []
    for part in text.split("\x1b[H")[1:]:
        plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", part)
        lines = plain.replace("\r\n", "\n").split("\n")
        frames.append(lines)
    return frames


def main():
    argv = sys.argv[1:]
    pid, master = pty.fork()
    if pid == 0:
        fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
        os.execv(argv[0], argv)
    failures = []
    text = read_until(master, lambda out: b"CHANNEL" in out, time.monotonic() + DEADLINE_S)
    if b"CHANNEL" not in text:
        failures.append("no frame within %d s: %r" % (DEADLINE_S, text[-400:]))
    lflag = termios.tcgetattr(master)[3]
    if lflag & (termios.ICANON | termios.ECHO):
        failures.append("while running, the terminal is still canonical or echoing")
    os.write(master, b"q")
    sent = time.monotonic()
    status = None
    while time.monotonic() - sent < DEADLINE_S:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        text += read_until(master, lambda out: False, time.monotonic() + 0.05)
        status = None
    if status is None:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        failures.append("'q' did not end it within %d s" % DEADLINE_S)
    elif not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
        failures.append("exit status %r" % status)
    text += read_until(master, lambda out: False, time.monotonic() + 0.2)
    after = termios.tcgetattr(master)
    if after[3] & (termios.ICANON | termios.ECHO) != termios.ICANON | termios.ECHO:  # a new pty's defaults
        failures.append("the terminal's ICANON/ECHO were not restored")

    frames = frames_of(text.decode("utf-8", "replace"))
    if not frames:
        failures.append("no frame drawn from the top-left corner")
    for n, lines in enumerate(frames):
        if n == len(frames) - 1 and lines and lines[-1] == "":
            lines = lines[:-1]  # the newline printed on exit, for the shell's prompt
        if len(lines) > ROWS:
            failures.append("frame %d has %d lines (window: %d)" % (n, len(lines), ROWS))
        for line in lines:
            if len(line) > COLS:
                failures.append("frame %d: a line of %d columns: %r" % (n, len(line), line))
        if not lines or not lines[0].startswith("tickwired"):
            failures.append("frame %d does not start with the header: %r" % (n, lines[:1]))
    if failures:
        print("\n".join(failures[:20]))
        print("output:\n" + text.decode("utf-8", "replace")[-3000:])
        return 1
    print("ok top: %d frame(s)" % len(frames))
    return 0


if __name__ == "__main__":
    sys.exit(main())
