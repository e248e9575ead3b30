# shellcheck shell=bash
# The broker and load processes of bench/idle/run and bench/idle/ws (sourced; needs BUILD and OUT).
# cleanup (for `trap cleanup EXIT`) stops whatever is still running.
BROKER='' LOADS=()
cleanup() {
  for pid in "${LOADS[@]}"; do kill "$pid" 2>/dev/null || true; done
  [[ -n $BROKER ]] && kill "$BROKER" 2>/dev/null
  wait 2>/dev/null || true
}

# tickwired on a free native port (PORT once it is up), logs to OUT/NAME-broker.log; more flags after NAME.
start_broker() {  # name [tickwired flags...]
  local name=$1
  shift
  rm -f "$OUT/$name.port"
  # shellcheck disable=SC2086  # BROKER_ARGS is a list of flags
  "$BUILD/apps/tickwired" --listen 127.0.0.1:0 --print-port-file "$OUT/$name.port" \
    --log-level info ${BROKER_ARGS:-} "$@" 2>"$OUT/$name-broker.log" &
  BROKER=$!
  for _ in $(seq 100); do [[ -s $OUT/$name.port ]] && break; sleep 0.05; done
  PORT=$(head -1 "$OUT/$name.port")  # the first listener's (the file has one line per listener); read by the caller
  export PORT
}
stop_broker() { kill "$BROKER"; wait "$BROKER" || true; BROKER=; }
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$BROKER/status"; }
cpu_ns() { awk '{print $1}' "/proc/$BROKER/schedstat"; }
# user + system CPU of the whole broker process (every thread), in ms
process_cpu_ms() { awk -v hz="$(getconf CLK_TCK)" '{print int(($14 + $15) * 1000 / hz)}' "/proc/$BROKER/stat"; }
drop_loads() { for pid in "${LOADS[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done; LOADS=(); }
