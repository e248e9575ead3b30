#!/usr/bin/env bash
# README's "A tour of the CLI", followed word by word on a fresh broker, with
# a pause between the steps (issue 29, acceptance 3). The commands are read
# from README.md's tour block itself, so the test follows the README as it is.
#
#   tests/tour/readme_tour.sh [--pause S] [--linger-ms MS] [--build DIR]
#
# The broker runs with its defaults (127.0.0.1:9400, :9401, :1883) in a
# network namespace of its own (unshare -rn: a private loopback), so the tour's
# default addresses are this broker's and no other's. The pause is what a
# person reading the README takes between the steps: CI runs it with pauses of
# 1.5 s over a channel_linger_ms of 1000 (every pause still crosses the linger,
# which is what a slow reader's minute crossed with the default 30 s linger);
# `--pause 60 --linger-ms 30000` (the default linger) is the full run (docs/operations.md,
# "The README tour"), a quarter of an hour, not run in CI.
# The benchmark lines (bench/compare) need nats-server and mosquitto and take
# minutes; they are shown as skipped. Exit 0: every step did what the README says.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
PAUSE=1.5
LINGER_MS=1000
BUILD=build
while (($#)); do
  case "$1" in
    --pause) PAUSE=$2; shift 2 ;;
    --linger-ms) LINGER_MS=$2; shift 2 ;;
    --build) BUILD=$2; shift 2 ;;
    *) echo "usage: $0 [--pause S] [--linger-ms MS] [--build DIR]" >&2; exit 2 ;;
  esac
done

# Into a private network namespace first (once).
if [[ -z "${TW_TOUR_INSIDE:-}" ]]; then
  if ! unshare -rn true 2>/dev/null; then
    echo "readme_tour: SKIPPED: no network namespace (unshare -rn) on this machine" >&2
    exit 77
  fi
  TW_TOUR_INSIDE=1 exec unshare -rn "$0" --pause "$PAUSE" --linger-ms "$LINGER_MS" --build "$BUILD"
fi
ip link set lo up

WORK=$(mktemp -d)
# The tour runs in a folder of its own (perf run writes its report there),
# where build/ is the build: the README's relative paths hold.
mkdir "$WORK/run" && ln -s "$(realpath "$BUILD")" "$WORK/run/build"
cp README.md "$WORK/run/"
cd "$WORK/run"
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$WORK"' EXIT
# The tour's lines: the sh block under "## A tour of the CLI".
awk '/^## A tour of the CLI/{t=1} t&&/^```sh/{b=1;next} b&&/^```/{exit} b' README.md > "$WORK/tour.sh"
[[ -s "$WORK/tour.sh" ]] || { echo "readme_tour: no tour block in README.md" >&2; exit 1; }

build/apps/tickwired --channel-linger-ms "$LINGER_MS" > "$WORK/broker.log" 2>&1 &
for _ in $(seq 100); do curl -sf 127.0.0.1:9401/healthz > /dev/null && break; sleep 0.1; done

failures=0
step() {  # step WHAT OK: one line per step
  if [[ $2 == 0 ]]; then echo "ok: $1 [${SECONDS}s]"; else echo "FAILED: $1 [${SECONDS}s]"; failures=$((failures + 1)); fi
}
has() { grep -q -- "$2" "$1"; }

n=0
while IFS= read -r line; do
  command=${line%%#*}                       # the README's comment is not the command
  command=${command%"${command##*[![:space:]]}"}
  [[ -z "$command" ]] && continue
  n=$((n + 1))
  out="$WORK/step$n.out"
  case "$command" in
    T=*)  # the variable the other lines use
      eval "$command"; continue ;;
    bench/*|BROKERS=*)
      echo "skipped: $command (a benchmark: needs nats-server and mosquitto, minutes)"; continue ;;
  esac
  sleep "$PAUSE"
  case "$command" in
    *" &")  # started in the background, as the README does; it must still run at the next step
      eval "$command" > "$out" 2>&1
      sleep 1
      kill -0 $! 2>/dev/null; step "$command (running)" $? ;;
    *" sub 'NYSE/>' --json"|*" top")  # run until Ctrl-C: here, a few seconds
      eval "timeout -s INT 2 $command" > "$out" 2>&1 < /dev/null
      rc=$?; [[ $rc == 0 || $rc == 124 || $rc == 130 ]]; step "$command (ran until interrupted)" $? ;;
    *)
      eval "$command" > "$out" 2>&1; step "$command (exit $?)" $? ;;
  esac
  # What each step must show.
  case "$command" in
    *" pub NYSE/EQ/IBM"*) has "$out" "published 1 message to NYSE/EQ/IBM"; step "  it says it published" $? ;;
    *" snapshot NYSE/EQ/IBM"*) has "$out" "BID=189.25 ASK=189.27"; step "  the cached image, $PAUSE s after its publisher left" $? ;;
    *" fields"*) has "$out" "   22  BID  " && has "$out" "decimal"; step "  the dictionary" $? ;;
    *" sub 'NYSE/>' --json"*) has "$out" '"type":"image","topic":"NYSE/EQ/IBM"'; step "  the image first" $? ;;
    *" sub SVC/SYM0042 --count 5"*) [[ $(grep -c "SVC/SYM0042" "$out") -ge 5 ]]; step "  five messages from the provider" $? ;;
    *" channels SVC"*) has "$out" "SVC"; step "  the service's channels and provider" $? ;;
    *" top"*) has "$out" "tickwired"; step "  the live view" $? ;;
    *"/metrics"*) has "$out" "tickwire_connections"; step "  Prometheus metrics" $? ;;
    *" perf run"*) has "$out" "p99"; step "  a latency table" $? ;;
  esac
  [[ -s "$out" ]] && sed 's/^/    | /' "$out" | head -8
done < "$WORK/tour.sh"

if ((failures > 0)); then
  echo "readme_tour: $failures failed; the broker's log:"; sed 's/^/    | /' "$WORK/broker.log" | tail -20
  exit 1
fi
echo "readme_tour: every step as the README says (pauses of $PAUSE s, channel_linger_ms $LINGER_MS)"
