#!/usr/bin/env bash
# bench/fix/run.sh: the FIX gateway shaped as the seed's QuickFIX/J + Camel
# test (docs/benchmarks.md, "FIX gateway"): tickwire-fix-load clients send
# NewOrderSingles at a fixed rate through tickwire-fix to
# tickwire-fix-exchange simulators, which answer each with one fill
# (symbol FAST); every order and fill is also a drop copy on tickwired.
#
#   bench/fix/run.sh [--seconds S] [--rates "5000 6000 ..."] [--pairs-rate R] [--stores "off log file"] [--out DIR]
#
# Trials: one client/exchange pair at each rate, then 3 clients x 3
# exchanges at --pairs-rate each (0: no 3 x 3 trial); each with the stores
# off, on as our LogStore ("log", or "on") and on as QuickFIX's FileStore
# ("file"): the gateway's, the simulators' and the load clients'. Per trial:
# CPU of the gateway, and of the broker (drop copies), from /proc/PID/stat
# (user + system) over the sending window; order-to-exchange latency p50/p99
# (the simulators subtract the load client's send time, tag 5979, same
# steady clock); lost = reports expected - received (0 = sustained).
# The seed's 60-minute run: bench/fix/run.sh --seconds 3600 (not run in CI).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
SECONDS_PER_TRIAL=60
RATES="5000 6000 7000 8000 8500"
PAIRS_RATE=4000
STORES="off log"
OUT=${OUT:-/tmp/tickwire-bench-fix}
while (($#)); do
  case $1 in
    --seconds) SECONDS_PER_TRIAL=$2; shift 2 ;;
    --rates) RATES=$2; shift 2 ;;
    --pairs-rate) PAIRS_RATE=$2; shift 2 ;;
    --stores) STORES=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    *) echo "usage: $0 [--seconds S] [--rates LIST] [--pairs-rate R] [--stores 'off log file'] [--out DIR]" >&2; exit 2 ;;
  esac
done
mkdir -p "$OUT"
APPS=$BUILD/apps
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; PIDS=(); }
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
cpu_ms() { awk -v hz="$(getconf CLK_TCK)" '{print int(($14 + $15) * 1000 / hz)}' "/proc/$1/stat"; }

# trial NAME PAIRS RATE STORE
trial() {
  local name=$1 pairs=$2 rate=$3 store=$4 dir=$OUT/$1
  rm -rf "$dir" && mkdir -p "$dir"
  "$APPS/tickwired" --listen 127.0.0.1:0 --print-port-file "$dir/broker.port" --mqtt-listen '' --http-listen '' \
    --log-level warn 2>"$dir/broker.log" &
  local broker=$!
  PIDS+=("$broker")
  for _ in $(seq 100); do [[ -s $dir/broker.port ]] && break; sleep 0.05; done
  local bport client_port
  bport=$(head -1 "$dir/broker.port")
  client_port=$(free_port)
  local cfg=$dir/gateway.toml
  printf '[gateway]\nbroker = "127.0.0.1:%s"\nmetrics = "127.0.0.1:0"\nstore_dir = "%s/store"\n' "$bport" "$dir" >"$cfg"
  local storeflag=false kind=log sims=() i
  [[ $store == file ]] && kind=file
  [[ $store != off ]] && storeflag="\"$kind\""
  for ((i = 1; i <= pairs; i++)); do
    local xport
    xport=$(free_port)
    local simargs=(--port "$xport" --session "FIX.4.4:X$i:GW" --stats-file "$dir/sim$i.stats")
    [[ $store != off ]] && simargs+=(--store-dir "$dir/sim$i-store" --store-kind "$kind")
    "$APPS/tickwire-fix-exchange" "${simargs[@]}" >"$dir/sim$i.out" 2>"$dir/sim$i.log" &
    sims+=($!)
    PIDS+=($!)
    printf '[[session]]\nname = "c%s"\nrole = "client"\nbegin_string = "FIX.4.4"\nsender_comp_id = "GW"\ntarget_comp_id = "C%s"\nport = %s\nstore = %s\n' \
      "$i" "$i" "$client_port" "$storeflag" >>"$cfg"
    printf '[[session]]\nname = "x%s"\nrole = "exchange"\nbegin_string = "FIX.4.4"\nsender_comp_id = "GW"\ntarget_comp_id = "X%s"\nport = %s\nstore = %s\n' \
      "$i" "$i" "$xport" "$storeflag" >>"$cfg"
    printf '[[route]]\nclient = "c%s"\nexchange = "x%s"\n' "$i" "$i" >>"$cfg"
  done
  sleep 0.3
  "$APPS/tickwire-fix" --config "$cfg" --port-file "$dir/gateway.port" 2>"$dir/gateway.log" &
  local gw=$!
  PIDS+=("$gw")
  for _ in $(seq 200); do
    [[ -s $dir/gateway.port ]] && [[ $(curl -s "127.0.0.1:$(cat "$dir/gateway.port")/metrics" | grep -c 'role="exchange"} 1') == "$pairs" ]] && break
    sleep 0.05
  done
  local g0 b0 t0 loads=()
  g0=$(cpu_ms "$gw")
  b0=$(cpu_ms "$broker")
  t0=$(date +%s%N)
  for ((i = 1; i <= pairs; i++)); do
    local lstore=()
    [[ $store != off ]] && lstore=(--store-dir "$dir/load$i-store" --store-kind "$kind")
    "$APPS/tickwire-fix-load" --connect "127.0.0.1:$client_port" --session "FIX.4.4:C$i:GW" --rate "$rate" \
      --seconds "$SECONDS_PER_TRIAL" --symbol FAST --drain-s 20 "${lstore[@]}" >"$dir/load$i.out" 2>&1 &
    loads+=($!)
  done
  local lost=0
  for l in "${loads[@]}"; do wait "$l" || true; done
  local g1 b1 t1
  g1=$(cpu_ms "$gw")
  b1=$(cpu_ms "$broker")
  t1=$(date +%s%N)
  for ((i = 1; i <= pairs; i++)); do lost=$((lost + $(sed -n 's/.*lost=\(-\?[0-9]*\).*/\1/p' "$dir/load$i.out"))); done
  local metrics
  metrics=$(curl -s "127.0.0.1:$(cat "$dir/gateway.port")/metrics")
  cleanup
  local orders=$((pairs * rate * SECONDS_PER_TRIAL)) p50 p99 load
  load=$(cut -d' ' -f1 /proc/loadavg)  # the machine's load: on a shared machine, CPU times grow with it
  p50=$(cat "$dir"/sim*.stats | sed -n 's/.*p50_us=\([0-9.]*\).*/\1/p' | sort -n | tail -1)
  p99=$(cat "$dir"/sim*.stats | sed -n 's/.*p99_us=\([0-9.]*\).*/\1/p' | sort -n | tail -1)
  local dropped published
  published=$(echo "$metrics" | sed -n 's/^tickwire_fix_drop_copies_published_total //p')
  dropped=$(echo "$metrics" | sed -n 's/^tickwire_fix_drop_copies_dropped_total //p')
  # Routed messages: each order and each fill (2 per order).
  python3 - "$name" "$pairs" "$rate" "$store" "$orders" "$((g1 - g0))" "$((b1 - b0))" "$(((t1 - t0) / 1000000))" \
    "$p50" "$p99" "$lost" "$published" "$dropped" "$load" <<'PY' | tee -a "$OUT/results.txt"
import sys
name, pairs, rate, store, orders, g, b, wall, p50, p99, lost, pub, drop, load = sys.argv[1:]
orders, g, b, wall = int(orders), int(g), int(b), int(wall)
msgs = 2 * orders
print(f"{name:14s} pairs={pairs} rate={rate}/s/pair store={store:4s} orders={orders} "
      f"gw_cpu={100.0 * g / wall:.1f}% gw_us/msg={1000.0 * g / msgs:.1f} "
      f"gw+broker_us/msg={1000.0 * (g + b) / msgs:.1f} p50_us={p50} p99_us={p99} lost={lost} "
      f"drop_copies={pub} dropped={drop} loadavg={load}")
PY
}

echo "bench/fix: $(nproc) cpus, $SECONDS_PER_TRIAL s per trial, $(date -u +%FT%TZ)" | tee "$OUT/results.txt"
for store in $STORES; do
  for rate in $RATES; do trial "pair-$rate-$store" 1 "$rate" "$store"; done
  if ((PAIRS_RATE > 0)); then trial "3x3-$PAIRS_RATE-$store" 3 "$PAIRS_RATE" "$store"; fi
done
