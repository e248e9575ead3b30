#!/usr/bin/env bash
# bench/auth_setup.sh DIR [RULES]: a users file for measuring authentication
# and entitlements (docs/benchmarks.md, "Entitlements"): user `bench`
# (password in DIR/password) may publish and subscribe everything (perf's
# topics change prefix per trial: PERFT0/..., PERFT1/...) and holds RULES
# rule patterns in all (default 10,000): half deny subscribe on */DENYn (a
# '*' level, which every topic's match must walk), half allow subscribe on
# OTHERn/>. Writes DIR/users.toml and DIR/broker.toml. The password hash is
# argon2id at 1 pass and 8 MiB (HASH_ARGS), not the 3 passes and 64 MiB of
# `tickwire passwd`'s default: what is measured is the cost per message and
# per SUBSCRIBE; perf opens dozens of connections per trial, whose logins one
# verifier thread checks in turn (bench/login_storm measures logins).
set -euo pipefail
DIR=$1
RULES=${2:-10000}
TW=${TW:-$(dirname "$0")/../build/apps/tickwire}
mkdir -p "$DIR"
echo "bench-password" >"$DIR/password"
HASH=$("$TW" passwd --password-file "$DIR/password" ${HASH_ARGS:---time-cost 1 --memory-kib 8192})
{
  echo "[users.bench]"
  echo "password = \"$HASH\""
  echo "[[users.bench.rule]]"
  echo "allow = [\"publish\", \"subscribe\"]"
  echo "topics = [\">\"]"
  if ((RULES / 2 > 0)); then
    echo "[[users.bench.rule]]"
    echo "deny = [\"subscribe\"]"
    printf 'topics = ['
    for ((i = 0; i < RULES / 2; i++)); do printf '"*/DENY%d",' "$i"; done
    echo "]"
  fi
  if ((RULES - RULES / 2 - 1 > 0)); then
    echo "[[users.bench.rule]]"
    echo "allow = [\"subscribe\"]"
    printf 'topics = ['
    for ((i = 0; i < RULES - RULES / 2 - 1; i++)); do printf '"OTHER%d/>",' "$i"; done
    echo "]"
  fi
} >"$DIR/users.toml"
echo "auth_file = \"$DIR/users.toml\"" >"$DIR/broker.toml"
