#!/usr/bin/env bash
# The one run command: installs what is missing, builds (Release), then starts
# the broker tickwired (embedded default config, 127.0.0.1:9400) and the demo
# feed that publishes DEMO/... topics. Ctrl-C stops both.
# Extra arguments go to tickwired, e.g. `bash scripts/run.sh --config my.toml`.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD_DIR=${TW_BUILD_ROOT:-$ROOT}/build
HOST=127.0.0.1
PORT=9400

bash scripts/deps.sh
bash scripts/build.sh release tickwired tickwire

BROKER=$BUILD_DIR/apps/tickwired
CLI=$BUILD_DIR/apps/tickwire
for exe in "$BROKER" "$CLI"; do
  [[ -x "$exe" ]] || { echo "run: $exe was not built" >&2; exit 1; }
done

pids=()
stop_all() {
  trap - INT TERM EXIT
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  echo "run: stopped"
}
trap 'stop_all; exit 130' INT
trap 'stop_all; exit 143' TERM
trap stop_all EXIT

"$BROKER" "$@" &
pids+=($!)

# The feed needs the broker listening first.
for _ in $(seq 100); do
  if (exec 3<>"/dev/tcp/$HOST/$PORT") 2>/dev/null; then break; fi
  kill -0 "${pids[0]}" 2>/dev/null || { echo "run: tickwired exited" >&2; exit 1; }
  sleep 0.1
done

"$CLI" demo-feed &
pids+=($!)

cat <<MSG

  Tickwire broker on $HOST:$PORT, demo feed publishing DEMO/...
  Subscribe from another terminal:
      $CLI sub 'DEMO/>'
  In a browser (the HTTP listener, default 127.0.0.1:9401):
      http://127.0.0.1:9401/examples/web/   the demo feed's prices, live
      http://127.0.0.1:9401/console/        the web console
  Ctrl-C stops the broker and the feed.

MSG

# Until Ctrl-C, or until either process exits by itself.
wait -n "${pids[@]}" || true
