#!/usr/bin/env python3
"""A Prometheus-like scraper for bench/admin_overhead: GET /metrics once per
interval over one keep-alive HTTP connection, until killed.

bench/scraper.py PORT [--interval S] [--log FILE]
One long-lived process and one connection, as a Prometheus server scrapes:
a shell loop starting curl each second would add a fork and exec per scrape
to the machine the broker runs on, and measure that instead of the broker.
Writes one line per scrape (status, bytes, milliseconds) to --log, so the
run shows the scrapes happened."""
import argparse
import http.client
import signal
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("port", type=int)
    ap.add_argument("--interval", type=float, default=1.0)
    ap.add_argument("--log", default=None)
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    log = open(args.log, "a", buffering=1) if args.log else None
    conn = None
    next_due = time.monotonic() + args.interval
    while True:
        time.sleep(max(0.0, next_due - time.monotonic()))
        next_due += args.interval
        start = time.monotonic()
        try:
            if conn is None:
                conn = http.client.HTTPConnection("127.0.0.1", args.port, timeout=5)
            conn.request("GET", "/metrics")
            response = conn.getresponse()
            body = response.read()
            line = f"{response.status} {len(body)} {1000 * (time.monotonic() - start):.2f}"
        except (OSError, http.client.HTTPException) as error:
            line = f"error {error}"
            if conn is not None:
                conn.close()
            conn = None
        if log:
            log.write(line + "\n")


if __name__ == "__main__":
    main()
