#!/usr/bin/env python3
"""Lines up perf sub's probe log with a scheduler trace (bench/tail_trace).

For every probe slower than the threshold on any connection it sums what each
CPU ran while the probe was in flight (from its send time to its last
arrival), by kind: idle, the broker (tickwired's threads are named tw-*), the
benchmark's own processes (perf pub and perf sub are `tickwire`), the tracer
(`perf record`), or another task. Then it names a cause per slow probe, counts the causes, and looks for
a period in the slow probes' send times.

  tail_trace.py --probes probes-sub0.tsv --sched sched.txt [--threshold-us 200]

--sched is `perf script -F comm,tid,cpu,time,event,trace` of a recording with
-k CLOCK_MONOTONIC (the probes' clock) and sched:sched_switch.
"""
import argparse
import bisect
import re
import sys
from collections import Counter, defaultdict

WARMUP_NS = 100_000_000  # connections and caches warming up: not the steady state
PERIODS_MS = (10, 50, 100, 1000)
SWITCH = re.compile(r"\[(\d+)\]\s+([\d.]+):\s+sched:sched_switch:.*?next_comm=(.+?) next_pid=(\d+)")


def read_probes(path):
    """{send_ns: [latency_ns per arrival]}"""
    arrivals = defaultdict(list)
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            _, send, receive = line.split()
            arrivals[int(send)].append(int(receive) - int(send))
    return arrivals


def read_switches(path):
    """{cpu: ([start_s], [task])}: who ran on each CPU from each switch on."""
    per_cpu = defaultdict(lambda: ([], []))
    with open(path) as f:
        for line in f:
            m = SWITCH.search(line)
            if m:
                times, tasks = per_cpu[int(m.group(1))]
                times.append(float(m.group(2)))
                tasks.append(m.group(3))
    return per_cpu


def kind_of(task):
    if task.startswith("swapper"):
        return "idle"
    if task.startswith("tw-"):
        return "broker"
    if task == "tickwire":
        return "benchmark"  # perf pub and perf sub
    if task == "perf":
        return "tracer"  # perf record itself, writing out its buffers
    return task


def occupancy(timeline, start, end):
    """{kind: seconds} on one CPU over [start, end)."""
    times, tasks = timeline
    busy = Counter()
    i = bisect.bisect_right(times, start) - 1
    t = start
    while t < end:
        task = tasks[i] if i >= 0 else "unknown"
        until = times[i + 1] if i + 1 < len(times) else end
        until = min(until, end)
        busy[kind_of(task)] += until - t
        t = until
        i += 1
    return busy


OWN = ("idle", "broker", "benchmark", "tracer", "unknown")


def cause(cpus, window):
    """The likeliest reason one probe was slow, from its CPUs' occupancy."""
    for busy in cpus:
        if busy["tracer"] >= 0.25 * window:
            return "the tracer (perf record) on a CPU"
        others = {k: v for k, v in busy.items() if k not in OWN}
        if others and sum(others.values()) >= 0.25 * window:
            return "another task on a CPU: " + max(others, key=others.get)
    idle = [busy["idle"] >= 0.5 * window for busy in cpus]
    if all(idle):
        return ("every CPU mostly idle in the trace: a wake-up not run "
                "(a vCPU the host did not run, or switches the tracer lost)")
    if any(idle):
        return "broker and benchmark queued on one CPU, another mostly idle"
    return "every CPU busy with broker and benchmark"


def episodes(sends, gap_ns=3_000_000):
    """Slow probes closer than gap_ns to the previous one are one episode
    (one stall delays the probes queued behind it); returns each episode's
    first send time."""
    starts = []
    for s in sorted(sends):
        if not starts or s - last > gap_ns:
            starts.append(s)
        last = s
    return starts


def periodicity(sends, first):
    """The period (of PERIODS_MS) whose busiest 1 ms phase holds the most
    slow probes relative to an even spread: (count, phase_ms, period_ms)."""
    best, best_score = (0, 0, 0), 0.0
    for period in PERIODS_MS:
        bins = Counter(int(((s - first) / 1e6) % period) for s in sends)
        phase, count = bins.most_common(1)[0]
        score = count * period / len(sends)  # 1.0: as many as an even spread puts in one bin
        if count >= 3 and score > best_score:
            best, best_score = (count, phase, period), score
    return best


def percentile(sorted_values, p):
    return sorted_values[min(len(sorted_values) - 1, int(len(sorted_values) * p / 100))]


def describe(busy, window):
    parts = sorted(busy.items(), key=lambda kv: -kv[1])
    return " ".join(f"{k} {v * 1e6:.0f}" for k, v in parts if v * 1e6 >= 1) or "(no switch)"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--probes", required=True)
    parser.add_argument("--sched", required=True)
    parser.add_argument("--threshold-us", type=float, default=200)
    parser.add_argument("--show", type=int, default=15, help="slowest probes listed one per line")
    args = parser.parse_args()

    arrivals = read_probes(args.probes)
    if not arrivals:
        sys.exit("no probes in " + args.probes)
    first = min(arrivals)
    steady = {s: lat for s, lat in arrivals.items() if s - first >= WARMUP_NS}
    latencies = sorted(x for lat in steady.values() for x in lat)
    timelines = read_switches(args.sched)
    cpus = sorted(timelines)
    threshold_ns = args.threshold_us * 1000
    slow = sorted((s for s, lat in steady.items() if max(lat) > threshold_ns), key=lambda s: -max(steady[s]))

    print(f"probes after the first {WARMUP_NS // 1_000_000} ms: {len(steady)}, {len(latencies)} arrivals; "
          f"p50 {percentile(latencies, 50) / 1e3:.1f} us, p99 {percentile(latencies, 99) / 1e3:.1f} us, "
          f"max {latencies[-1] / 1e3:.1f} us")
    print(f"slow (an arrival over {args.threshold_us:g} us): {len(slow)} probes "
          f"({100 * len(slow) / max(len(steady), 1):.2f} %); CPUs traced: {len(cpus)}")
    if not slow:
        return
    causes = Counter()
    rows = []
    for s in slow:
        start, end = s / 1e9, (s + max(steady[s])) / 1e9
        busy = [occupancy(timelines[c], start, end) for c in cpus]
        why = cause(busy, end - start)
        causes[why] += 1
        rows.append((s, why, busy, end - start))
    print("causes:")
    for why, n in causes.most_common():
        print(f"  {n:5d}  {why}")
    starts = episodes(slow)
    count, phase, period = periodicity(starts, first)
    print(f"episodes (slow probes less than 3 ms apart are one): {len(starts)}")
    if count:
        print(f"period: {count} of {len(starts)} episodes began in the same 1 ms of a {period} ms period "
              f"(phase {phase} ms); an even spread puts {len(starts) / period:.2f} there")
    print(f"slowest {min(args.show, len(rows))} (us of the flight window per CPU):")
    for s, why, busy, window in rows[: args.show]:
        per_cpu = " | ".join(f"cpu{c}: {describe(b, window)}" for c, b in zip(cpus, busy))
        print(f"  +{(s - first) / 1e6:9.3f} ms  {max(steady[s]) / 1e3:7.1f} us  {per_cpu}")


if __name__ == "__main__":
    main()
