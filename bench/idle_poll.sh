# shellcheck shell=bash
# Sourced by bench/compare, bench/threads and bench/profile_latency.
#
# hold_idle_poll OUT: for as long as the calling script runs, ask the kernel
# for a CPU wake-up latency of 0 µs (a PM QoS request on /dev/cpu_dma_latency,
# what tuned's latency-performance profile does), so an idle CPU polls instead
# of halting. On this 2-vCPU VM a halted vCPU takes ~50 µs (median) to run a
# task woken from the other one, against ~15 µs on the same CPU, and that
# wake-up sits twice in every probe's path (publisher -> broker -> subscriber),
# for every broker alike. The request is the machine's setting, not a broker's:
# it is released when the holder exits (the kernel drops it on close), and
# IDLE_POLL=0 leaves the machine as it is. Writes OUT/idle_poll.json saying
# which it was; the renderers print it with the machine.
hold_idle_poll() {
  local out=$1
  if [[ ${IDLE_POLL:-1} == 0 ]]; then
    echo '{"held": false, "why": "IDLE_POLL=0"}' >"$out/idle_poll.json"
    return
  fi
  python3 -c '
import json, os, signal, struct, sys
path = sys.argv[1]
try:
    fd = os.open("/dev/cpu_dma_latency", os.O_WRONLY)
    os.write(fd, struct.pack("i", 0))
except OSError as e:
    json.dump({"held": False, "why": f"/dev/cpu_dma_latency: {e.strerror}"}, open(path, "w"))
    sys.exit(0)
json.dump({"held": True, "latency_us": 0}, open(path, "w"))
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
signal.pause()
' "$out/idle_poll.json" &
  IDLE_POLL_PID=$!
  for _ in $(seq 50); do [[ -s $out/idle_poll.json ]] && break; sleep 0.02; done
}

release_idle_poll() {
  [[ -n ${IDLE_POLL_PID:-} ]] && kill "$IDLE_POLL_PID" 2>/dev/null && wait "$IDLE_POLL_PID" 2>/dev/null
  IDLE_POLL_PID=
  return 0
}
