#!/usr/bin/env bash
# Refreshes the browser libraries the web console embeds (web/vendor/uplot)
# from the versions web/vendor/package-lock.json pins. The build never runs
# this: the vendored files are committed, so building needs no network.
# To move to a newer uPlot: edit the version in web/vendor/package.json, run
# `npm install --ignore-scripts` in web/vendor (updates the lockfile), then
# this script, and commit the three together (docs/operations.md).
set -euo pipefail
cd "$(dirname "$0")/../web/vendor"
npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
mkdir -p uplot
cp node_modules/uplot/dist/uPlot.iife.min.js node_modules/uplot/dist/uPlot.min.css node_modules/uplot/LICENSE uplot/
version=$(node -p "require('./node_modules/uplot/package.json').version")
echo "uPlot $version (npm uplot, web/vendor/package-lock.json)" > uplot/VERSION
echo "vendor_web: web/vendor/uplot holds uPlot $version"
