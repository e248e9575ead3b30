#!/usr/bin/env bash
# Installs the npm packages of one test folder (tests/js/<name>) exactly as
# its package-lock.json pins them, when node_modules is missing or older than
# the lockfile. Needs Node.js and npm (scripts/deps.sh) and npm's registry.
set -euo pipefail
dir=${1:?usage: js_deps.sh tests/js/NAME}
cd "$(dirname "$0")/.."
cd "$dir"
if [[ -d node_modules && node_modules/.package-lock.json -nt package-lock.json ]]; then
  exit 0
fi
npm ci --no-audit --no-fund --loglevel=error
