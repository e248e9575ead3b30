#!/usr/bin/env bash
# Installs the Debian 12 packages needed to build, test and benchmark
# Tickwire. Only missing packages are installed, so a second run takes a
# moment and touches no network.
set -euo pipefail

PACKAGES=(
  # build
  build-essential cmake ninja-build ccache
  # clang + its runtime for libFuzzer and the sanitizers
  clang libclang-rt-14-dev
  # libraries
  libgtest-dev libgmock-dev libbenchmark-dev libtomlplusplus-dev libcli11-dev nlohmann-json3-dev
  # TLS listeners and clients (OpenSSL 3), and the openssl tool the TLS tests drive as an external client
  libssl-dev openssl
  # systemd readiness and watchdog of the packaged service; pkg-config finds it (and tests the installed client)
  libsystemd-dev pkg-config
  # the Debian package's check (tests/package)
  lintian dpkg-dev fakeroot
  # password hashes (argon2id) for users files (src/auth)
  libargon2-dev
  # the FIX gateway (tickwire-fix, src/fix): QuickFIX 1.15, built by Debian as C++14 (std::auto_ptr)
  libquickfix-dev
  # optional: NUMA node of each cpu, for thread placement (src/base/affinity.cc)
  libnuma-dev
  # peers for the perf comparison tooling, and python for its scripts
  libmosquitto-dev mosquitto libnats-dev nats-server python3
  # MQTT clients nobody here wrote, for the MQTT interoperability tests (tests/mqtt_interop)
  mosquitto-clients python3-paho-mqtt
  # HTTP request parsing for the admin/WebSocket listener: llhttp (Node.js's
  # parser), whose C sources Debian ships in node-llhttp (src/http)
  node-llhttp
  # operations tests: a real Prometheus scrapes /metrics, promtool checks the format
  prometheus
  # browser tests (console, examples/web): Debian's chromium, headless
  chromium
  # the HA pair's arbiter (src/ha): etcd 3.4, which the tests start, its
  # etcdctl for operators, and libcurl to reach its JSON gateway
  etcd-server etcd-client libcurl4-openssl-dev
)

# Node.js runs the npm-installed clients of the tests (MQTT.js, puppeteer-core;
# tests/js/package-lock.json). Debian's nodejs and npm, unless a Node.js with
# npm is already there (NodeSource's nodejs package bundles npm and conflicts
# with Debian's npm package).
if ! command -v npm >/dev/null 2>&1; then PACKAGES+=(nodejs npm); fi

installed() {
  [[ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" == "installed" ]]
}

missing=()
for pkg in "${PACKAGES[@]}"; do
  installed "$pkg" || missing+=("$pkg")
done

if ((${#missing[@]} == 0)); then
  echo "deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=()
if [[ "$(id -u)" != 0 ]]; then SUDO=(sudo); fi

echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -qq
"${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
