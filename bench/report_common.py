"""Pieces shared by the renderers of docs/benchmarks.md (render_benchmarks.py, render_threads.py)."""
import argparse
import json
import os


def load_json(path):
    """The parsed file, or None when it is missing or not JSON."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def load(results, workload, name):
    """result.json of one `tickwire perf run` under RESULTS/WORKLOAD-NAME/."""
    return load_json(os.path.join(results, f"{workload}-{name}", "result.json"))


def worst_steal(trials):
    """The highest host steal % of these trials (perf run's steal_pct), None when not recorded."""
    values = [t["steal_pct"] for t in trials if t.get("steal_pct", -1) >= 0]
    return max(values) if values else None


def num(v, digits=0):
    if v is None or v < 0:
        return "n/a"
    return f"{v:,.{digits}f}"


def ratio(a, b):
    if a is None or b is None or a < 0 or b <= 0:
        return "n/a"
    return f"{a / b:.2f}x"


def shown_path(path):
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def replace_block(text, begin, end, section):
    """text with the block from `begin` to `end` replaced by section; None when the markers are missing."""
    if begin not in text or end not in text:
        return None
    head, rest = text.split(begin, 1)
    return head + section.rstrip("\n") + rest.split(end, 1)[1]


def write_block(doc_path, begin, end, section):
    """Rewrites the block between `begin` and `end` in the document, or appends it when the markers are missing."""
    text = read_text(doc_path, "")
    spliced = replace_block(text, begin, end, section)
    if spliced is None:
        spliced = text.rstrip("\n") + "\n\n" + section
    with open(doc_path, "w") as f:
        f.write(spliced)


def read_text(path, default):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return default


def idle_poll_line(results):
    """How idle CPUs waited during the run (bench/idle_poll.sh), for the header."""
    state = load_json(os.path.join(results, "idle_poll.json"))
    if state is None:
        return "not recorded (before bench/idle_poll.sh)"
    if state.get("held"):
        return ("polled: the run held a PM QoS request of 0 µs on /dev/cpu_dma_latency "
                "(bench/idle_poll.sh), so an idle vCPU polls instead of halting")
    return f"halted: no PM QoS request ({state.get('why', 'unknown')})"


def render_main(description, default_command, render, begin, end):
    """The command line of a renderer: --results DIR [--command C] [--doc FILE]. Writes the block, prints it."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--results", required=True)
    parser.add_argument("--command", default=default_command)
    parser.add_argument("--doc", default="docs/benchmarks.md")
    args = parser.parse_args()
    section = render(args.results, args.command)
    write_block(args.doc, begin, end, section)
    print(section)
    return 0
