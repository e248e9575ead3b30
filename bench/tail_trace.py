#!/usr/bin/env python3
"""Lines up perf sub's probe log with a scheduler trace (bench/tail_trace).

For every probe slower than the threshold on any connection it sums what each
CPU ran while the probe was in flight (from its send time to its last
arrival), by kind: idle, the broker (tickwired's threads are named tw-*), the
benchmark's own processes (perf pub and perf sub are `tickwire`), the tracer
(`perf record`), or another task. Then it names a cause per slow probe, counts the causes, and looks for
a period in the slow probes' send times.

  tail_trace.py --probes probes-sub0.tsv [--sched sched.txt] [--threshold-us 200]

Without --sched it reports each trial of the probe log on its own: the slow
probes, their episodes and any period in them (bench/compare keeps a probe
log of every W3 run).

--sched is `perf script -F comm,tid,cpu,time,event,trace` of a recording with
-k CLOCK_MONOTONIC (the probes' clock) and sched:sched_switch.
"""
import argparse
import bisect
import cmath
import math
import re
import sys
from collections import Counter, defaultdict

WARMUP_NS = 100_000_000  # connections and caches warming up: not the steady state
PERIODS_MS = (10, 50, 100, 1000)
MIN_RAYLEIGH_Z = 10  # phases this aligned come by chance with p < 1e-4
SWITCH = re.compile(r"\[(\d+)\]\s+([\d.]+):\s+sched:sched_switch:.*?next_comm=(.+?) next_pid=(\d+)")


def read_probes(path):
    """One {send_ns: [latency_ns per arrival]} per trial: perf sub appends a
    comment line and then its probes at the end of every trial."""
    trials = [defaultdict(list)]
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                trials.append(defaultdict(list))
            elif line.strip():
                _, send, receive = line.split()
                trials[-1][int(send)].append(int(receive) - int(send))
    return [t for t in trials if t]


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


def periodicity(starts, first):
    """The longest period of PERIODS_MS on which the episodes line up, by the
    Rayleigh test of their phases (Z = n R^2 >= MIN_RAYLEIGH_Z; a period's
    divisors line up too, so the longest one is the period). Returns
    (period_ms, phase_ms, episodes within 1 ms of that phase) or None."""
    found = None
    for period in PERIODS_MS:
        phases = [((s - first) / 1e6) % period for s in starts]
        mean = sum(cmath.exp(2j * math.pi * p / period) for p in phases) / len(phases)
        if len(phases) * abs(mean) ** 2 >= MIN_RAYLEIGH_Z:
            phase = (cmath.phase(mean) % (2 * math.pi)) / (2 * math.pi) * period
            near = sum(min(abs(p - phase), period - abs(p - phase)) <= 1 for p in phases)
            found = (period, phase, near)
    return found


def percentile(sorted_values, p):
    return sorted_values[min(len(sorted_values) - 1, int(len(sorted_values) * p / 100))]


def describe(busy):
    parts = sorted(busy.items(), key=lambda kv: -kv[1])
    return " ".join(f"{k} {v * 1e6:.0f}" for k, v in parts if v * 1e6 >= 1) or "(no switch)"


def report_trial(arrivals, timelines, threshold_us, show):
    first = min(arrivals)
    steady = {s: lat for s, lat in arrivals.items() if s - first >= WARMUP_NS}
    latencies = sorted(x for lat in steady.values() for x in lat)
    if not latencies:
        print("no probes after the warm-up")
        return
    threshold_ns = threshold_us * 1000
    slow = sorted((s for s, lat in steady.items() if max(lat) > threshold_ns), key=lambda s: -max(steady[s]))
    print(f"probes after the first {WARMUP_NS // 1_000_000} ms: {len(steady)}, {len(latencies)} arrivals; "
          f"p50 {percentile(latencies, 50) / 1e3:.1f} us, p99 {percentile(latencies, 99) / 1e3:.1f} us, "
          f"max {latencies[-1] / 1e3:.1f} us")
    print(f"slow (an arrival over {threshold_us:g} us): {len(slow)} probes ({100 * len(slow) / len(steady):.2f} %)")
    if not slow:
        return
    starts = episodes(slow)
    print(f"episodes (slow probes less than 3 ms apart are one): {len(starts)}")
    found = periodicity(starts, first)
    if found:
        period, phase, near = found
        print(f"period: the episodes line up on a {period} ms period; {near} of {len(starts)} began within "
              f"1 ms of {phase:.1f} ms into it")
    else:
        print(f"period: none (tested {', '.join(map(str, PERIODS_MS))} ms)")
    if timelines is None:
        return
    cpus = sorted(timelines)
    causes = Counter()
    rows = []
    for s in slow:
        start, end = s / 1e9, (s + max(steady[s])) / 1e9
        busy = [occupancy(timelines[c], start, end) for c in cpus]
        why = cause(busy, end - start)
        causes[why] += 1
        rows.append((s, busy))
    print(f"causes (from the switches of {len(cpus)} CPUs):")
    for why, n in causes.most_common():
        print(f"  {n:5d}  {why}")
    print(f"slowest {min(show, len(rows))} (us of the flight window per CPU):")
    for s, busy in rows[:show]:
        per_cpu = " | ".join(f"cpu{c}: {describe(b)}" for c, b in zip(cpus, busy))
        print(f"  +{(s - first) / 1e6:9.3f} ms  {max(steady[s]) / 1e3:7.1f} us  {per_cpu}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--probes", required=True)
    parser.add_argument("--sched", help="the trace of the last trial; without it, each trial's slow probes and period")
    parser.add_argument("--threshold-us", type=float, default=200)
    parser.add_argument("--show", type=int, default=15, help="slowest probes listed one per line")
    args = parser.parse_args()

    trials = read_probes(args.probes)
    if not trials:
        sys.exit("no probes in " + args.probes)
    if args.sched:
        report_trial(trials[-1], read_switches(args.sched), args.threshold_us, args.show)
        return
    for i, arrivals in enumerate(trials):
        print(f"== trial {i + 1} of {len(trials)}")
        report_trial(arrivals, None, args.threshold_us, args.show)


if __name__ == "__main__":
    main()
