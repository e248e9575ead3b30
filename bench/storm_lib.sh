# bench/storm_lib.sh: the shared part of the storm benchmarks (bench/tls_storm,
# bench/login_storm): the W3 latency workload measured on a broker of its
# own twice, quiet and while a storm runs beside it, then both tables side by
# side. Sourced; the caller sets BROKER_ARGS (tickwired flags), PERF_ARGS
# (tickwire flags before `perf`), LABEL, and defines storm_start PORT K, which
# starts storm process K in the background and prints its pid.
# Settings: RATES, RUNS, SECONDS_PER_TRIAL, STORMS, OUT (see the callers).
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
BUILD=${TW_BUILD_DIR:-$ROOT/build}
RATES=${RATES:-10000,100000}
RUNS=${RUNS:-3}
SECONDS_PER_TRIAL=${SECONDS_PER_TRIAL:-2}
STORMS=${STORMS:-1}
[[ -x $BUILD/apps/tickwire && -x $BUILD/apps/tickwired ]] || scripts/build.sh release tickwire tickwired

BROKER=
STORM_PIDS=()
storm_cleanup() {
  for pid in "${STORM_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  [[ -n $BROKER ]] && kill "$BROKER" 2>/dev/null
  wait 2>/dev/null || true
}
trap storm_cleanup EXIT

# One phase on a broker of its own, so that its shutdown line ("stopped: N
# connections served, ... max loop turn T us") counts that phase's connections.
run_phase() {  # phase storms
  local phase=$1 storms=$2 port
  rm -f "$OUT/$phase.port"
  "$BUILD/apps/tickwired" "${BROKER_ARGS[@]}" --listen 127.0.0.1:0 --print-port-file "$OUT/$phase.port" \
    --log-level info 2>"$OUT/$phase-broker.log" &
  BROKER=$!
  for _ in $(seq 100); do [[ -s $OUT/$phase.port ]] && break; sleep 0.05; done
  port=$(cat "$OUT/$phase.port")
  echo "== $phase ($storms storm processes)" >&2
  for k in $(seq "$storms"); do STORM_PIDS+=("$(storm_start "$port" "$k")"); done
  ((storms > 0)) && sleep 1
  local start=$SECONDS
  "$BUILD/apps/tickwire" "${PERF_ARGS[@]}" perf run --server "127.0.0.1:$port" --mode sweep --rates "$RATES" \
    --probe-rate 2000 --load-batch-us 200 --publishers 1 --subscribers 5 --connections-per-sub 5 --topics 1000 \
    --fanout 5 --runs "$RUNS" --seconds "$SECONDS_PER_TRIAL" --label "$LABEL-$phase" --out "$OUT/$phase" \
    >"$OUT/$phase.log" 2>&1
  echo "$((SECONDS - start + (storms > 0 ? 1 : 0)))" >"$OUT/$phase.seconds"
  for pid in "${STORM_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  STORM_PIDS=()
  kill "$BROKER"
  wait "$BROKER" || true
  BROKER=
}

# Both phases, then the side-by-side table; `what` names what the storm does per connection.
run_storm_benchmark() {  # what
  run_phase quiet 0
  run_phase storm "$STORMS"
  python3 - "$OUT" "$1" <<'PY'
import json, re, sys
out, what = sys.argv[1], sys.argv[2]
def points(phase):
    r = json.load(open(f"{out}/{phase}/result.json"))
    return {p["rate"]: p for p in r["summary"]["points"]}
def stopped(phase):
    line = [l for l in open(f"{out}/{phase}-broker.log") if "stopped:" in l][-1]
    served, turn = re.search(r"(\d+) connections served.*max loop turn (\d+) us", line).groups()
    return int(served), int(turn), float(open(f"{out}/{phase}.seconds").read())
quiet, storm = points("quiet"), points("storm")
(q_served, q_turn, _), (s_served, s_turn, s_seconds) = stopped("quiet"), stopped("storm")
print(f"results: {out}")
print(f"storm: {s_served - q_served:,} {what} in {s_seconds:.0f} s = {(s_served - q_served) / s_seconds:,.0f}/s "
      f"served by the broker; longest loop turn {q_turn} us quiet, {s_turn} us in the storm")
print("| background msg/s | quiet p50 / p99 µs | storm p50 / p99 µs | p99 rise µs | clean (quiet, storm) |")
print("|---:|---:|---:|---:|---|")
for rate in sorted(quiet):
    q, s = quiet[rate]["probe_latency_us"], storm[rate]["probe_latency_us"]
    print(f"| {rate:,.0f} | {q['p50']:.1f} / {q['p99']:.1f} | {s['p50']:.1f} / {s['p99']:.1f} | "
          f"{s['p99'] - q['p99']:+.1f} | {quiet[rate]['clean']}, {storm[rate]['clean']} |")
PY
}
