"""Cells of one bench/compare result.json (a `tickwire perf run`), shared by render_benchmarks.py and
render_mqtt.py."""
from report_common import num, worst_steal


def throughput_cells(r):
    """(rate, deliveries/s, cpu us/delivery, loss, drain, p99, note) of a throughput result.

    drain and p99 are None in a result.json from before the drain bound (docs/perf.md, "Drain bound")."""
    if r is None:
        return None
    s = r["summary"]
    lost = sum(t.get("lost", 0) for t in r["trials"] if t["phase"] == "confirm")
    note = [] if s.get("found") else ["no clean rate"]
    # The rate reported is what the publishers achieved (median of the confirmation
    # runs), which can sit a little under the rate they were asked for.
    confirmed = sorted(s.get("confirmed_rates") or [])
    achieved = confirmed[len(confirmed) // 2] if confirmed else None
    fanout = r["options"]["fanout"]
    return {
        "rate": achieved if s.get("found") else None,
        "deliveries": achieved * fanout if s.get("found") and achieved else None,
        "cpu": s.get("broker_cpu_us_per_delivery"),
        "drain": (s.get("drain_ms"), s.get("drain_bound_ms")) if s.get("found") else (None, s.get("drain_bound_ms")),
        "p99": s.get("latency_p99_us") if s.get("found") else None,
        "spread": (s.get("spread_min"), s.get("spread_max")),
        "lost": lost,
        "note": ", ".join(note + [limited_by(r)]),
        "steal": worst_steal([t for t in r["trials"] if t["phase"] == "confirm"]),
    }


def cores_used(trial):
    """(broker, publishers, subscribers) in cores over one trial."""
    window = trial.get("window_s") or 0
    broker_window = trial.get("broker_cpu_window_s") or window
    broker = trial["broker_cpu_s"] / broker_window if broker_window and trial.get("broker_cpu_s", -1) >= 0 else None
    pub = trial.get("pub_cpu_s", 0) / window if window else None
    sub = trial.get("sub_cpu_s", 0) / window if window else None
    return broker, pub, sub


def limited_by(r):
    """Which side ran out where the rate search stopped: the lowest failing trial above the rate found (or the
    best passing one when none failed), judged from the CPU each side used in it (docs/perf.md)."""
    trials = r["trials"]
    found = r["summary"].get("rate") or 0
    failed = [t for t in trials if t.get("verdict") != "ok" and t["offered_rate"] > found]
    passed = [t for t in trials if t.get("verdict") == "ok"]
    trial = min(failed, key=lambda t: t["offered_rate"]) if failed else (
        max(passed, key=lambda t: t["offered_rate"]) if passed else None)
    if trial is None:
        return "unknown"
    broker, pub, sub = cores_used(trial)
    if broker is None:
        return "unknown (broker CPU not measured)"
    cpus = (r.get("machine") or {}).get("cpus") or 0
    load = (pub or 0) + (sub or 0)
    where = f"broker {broker:.2f} cores, publishers {pub or 0:.2f}, subscribers {sub or 0:.2f}"
    if trial.get("verdict") != "ok":
        where = f"{trial.get('verdict')} at {num(trial['offered_rate'])} msg/s: {where}"
    if trial.get("saturated"):
        return f"load generator: publishers fell behind ({where})"
    if broker >= 0.85:
        return f"broker ({where})"
    if cpus and broker + load >= 0.9 * cpus:
        return f"machine: all {cpus} cores busy, load generator took {load / (broker + load):.0%} ({where})"
    return f"not the broker: below one core ({where})"


def latency_points(r):
    if r is None:
        return {}
    return {int(p["rate"]): p for p in r["summary"].get("points", [])}


def verdict(ok):
    return "**MET**" if ok else "**NOT MET**"
