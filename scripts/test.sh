#!/usr/bin/env bash
# The one test command: installs what is missing, then
#   0. the layering check (scripts/check_layering.py): no module includes a
#      module it does not link
#   1. Release build + every unit/integration test (ctest)
#   2. Debug build with AddressSanitizer + UBSan + the same tests
#   3. ThreadSanitizer build of the threaded parts: the tiered integration
#      suites (threads_1_1, threads_2_2), the rings and links, the seqlock,
#      the HA election
#   4. libFuzzer targets, each run for a short time from the seed corpus
# and prints a summary. Exits non-zero if any step failed.
# Environment: TW_FUZZ_SECONDS (default 10 per target), TW_TEST_TIMEOUT
# (default 300 s per test), TW_BUILD_ROOT (see scripts/build.sh).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD_ROOT=${TW_BUILD_ROOT:-$ROOT}
FUZZ_SECONDS=${TW_FUZZ_SECONDS:-10}
TEST_TIMEOUT=${TW_TEST_TIMEOUT:-300}
JOBS=2
LOGS=$(mktemp -d /tmp/tickwire-test.XXXXXX)

SUMMARY=()
PASSED=0
FAILED=0

banner() { printf '\n==== %s ====\n' "$*"; }
record() {  # record STATUS TEXT
  SUMMARY+=("$(printf '%-5s %s' "$1" "$2")")
}

# Runs a build step; a failed build is one failure, but later steps still run
# so the tests of the modules that did build are reported too.
build_step() {
  local mode=$1 start=$SECONDS
  banner "build $mode"
  if bash scripts/build.sh "$mode"; then
    record PASS "build $mode ($((SECONDS - start))s)"
    ((PASSED += 1))
  else
    record FAIL "build $mode ($((SECONDS - start))s)"
    ((FAILED += 1))
  fi
}

# Runs ctest in a build folder (extra arguments go to ctest) and adds its
# counts to the totals.
ctest_step() {
  local label=$1 dir=$2 start=$SECONDS log="$LOGS/ctest-$1.log"
  shift 2
  banner "tests: $label"
  ctest --test-dir "$dir" --output-on-failure -j "${CTEST_JOBS:-$JOBS}" --timeout "$TEST_TIMEOUT" "$@" 2>&1 | tee "$log"
  local line total failed
  line=$(grep -E '[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -1)
  if [[ -z "$line" ]]; then
    record FAIL "tests $label: ctest found or ran no tests"
    ((FAILED += 1))
    return
  fi
  failed=$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\1/' <<<"$line")
  total=$(sed -E 's/.* failed out of ([0-9]+).*/\1/' <<<"$line")
  ((PASSED += total - failed))
  ((FAILED += failed))
  if ((failed == 0)); then
    record PASS "tests $label: $total passed ($((SECONDS - start))s)"
  else
    record FAIL "tests $label: $failed of $total failed ($((SECONDS - start))s)"
    local failures
    mapfile -t failures < <(grep -E '^\s+[0-9]+ - ' "$log" | sed -E 's/^\s+/        /')
    SUMMARY+=("${failures[@]}")
  fi
}

# Runs every built fuzz target from a copy of its seed corpus (the repository
# is never written to). A crash, sanitizer report, leak or timeout fails it;
# its reproducer is kept under build-fuzz/artifacts/.
fuzz_step() {
  local dir=$BUILD_ROOT/build-fuzz/fuzz targets=()
  banner "fuzz (${FUZZ_SECONDS}s per target)"
  for exe in "$dir"/*_fuzz; do [[ -x "$exe" ]] && targets+=("$exe"); done
  if ((${#targets[@]} == 0)); then
    record FAIL "fuzz: no fuzz target was built"
    ((FAILED += 1))
    return
  fi
  local artifacts=$BUILD_ROOT/build-fuzz/artifacts
  mkdir -p "$artifacts"
  for exe in "${targets[@]}"; do
    local name corpus log start=$SECONDS
    name=$(basename "$exe" _fuzz)
    corpus=$(mktemp -d "$LOGS/corpus-$name.XXXX")
    log="$LOGS/fuzz-$name.log"
    [[ -d fuzz/corpus/$name ]] && cp -r "fuzz/corpus/$name/." "$corpus/"
    echo "fuzz: $name from $(find "$corpus" -type f | wc -l) seeds"
    if "$exe" -max_total_time="$FUZZ_SECONDS" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$artifacts/$name-" "$corpus" >"$log" 2>&1; then
      local runs
      runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$')
      record PASS "fuzz $name: ${runs:-?} inputs, no crash ($((SECONDS - start))s)"
      ((PASSED += 1))
    else
      tail -n 60 "$log"
      record FAIL "fuzz $name: crashed, reproducer in $artifacts/ (log: $log)"
      ((FAILED += 1))
    fi
  done
}

# The threaded tests under ThreadSanitizer. Reports go to files (log_path),
# one per process that reports: the brokers the integration tests start are
# separate processes, and a report there must fail the step even when the
# test itself passed (a race at shutdown, say).
tsan_step() {
  local reports=$LOGS/tsan
  mkdir -p "$reports"
  TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:log_path=$reports/report:suppressions=$ROOT/scripts/tsan.supp" \
    ctest_step tsan "$BUILD_ROOT/build-tsan" -R '^threads_(1_1|2_2)\.|^(SpscRing|Pipe|Record|GatewayLink|Seqlock|Election|ElectionWithoutEtcd)\.' \
    -E "$EXTERNAL_TOOL_TESTS|$TSAN_TIME_BOUND"
  local found
  found=$(find "$reports" -type f | sort)
  if [[ -n "$found" ]]; then
    cat $found
    record FAIL "tsan: $(wc -l <<<"$found") processes reported (in $reports)"
    ((FAILED += 1))
  fi
}

# Tests whose subject is an outside tool reading the broker (a real Prometheus
# scraping for 10 s, headless Chromium, the package builds) run in the
# release tree only: under a sanitizer they would cost minutes and check the
# same broker code the other sanitized tests already drive.
# The tiered copies of the integration suite (threads_1_1., threads_2_2.)
# run in the release tree and under TSan, not under ASan: on 2 cores several
# of them are bound by time there (a 2+2 broker under ASan misses a flood
# test's wait; round-robin counts drift by 2), which is still to be fixed.
# Under TSan (5 to 15 times slower, shadow memory in RSS) these measure the
# sanitizer: it14's floods are bounded in time and RSS, it20's login storm
# in time, LoginQueueTest's 16 argon2id checks at 64 MiB each (under TSan
# every one takes seconds: none was answered within the test's 10 s), it31's
# upstream gap (a flood of 8 KiB updates past a stopped edge, whose catch-up
# under TSan outlasts the wait for its last value). They
# run in the release tree; the TSan run still reports races from every other
# tiered test, LoginQueueTest's HTTP case among them. The HA pair's faults
# (it41: a stopped primary, a cut link, a loop of failovers) are timed
# against the 2 s lease between processes; the election's own threads are
# checked under TSan by the Election tests and HaPair's tiered copies.
TSAN_TIME_BOUND='\.SlowConsumerTest\.|\.EntitlementsTest\.AThousandFailedLogins|\.LoginQueueTest\.(AGuessers|PastItsBound)|\.It31Links\.AnUpstreamGap|\.It41Ha'
EXTERNAL_TOOL_TESTS='^(threads_[12]_[12]\.)?(Prometheus|BrowserTest|PahoInterop)\.|^(ClientPackage|DebianPackage)\.'
# The Eclipse Paho suites (tests/paho): four runs, each against its own
# broker, that mostly sleep in the suites' own waits (5.0 about 130 s, 3.1.1
# 45 s): run side by side, they take the time of the longest.
PAHO_TESTS='^(threads_2_2\.)?PahoInterop\.'

START=$SECONDS
banner "deps"
if ! bash scripts/deps.sh; then
  echo "test: installing dependencies failed" >&2
  echo "summary: 0 passed, 1 failed"
  exit 1
fi

banner "layering"
if python3 scripts/check_layering.py; then
  record PASS "layering: every include of src/ is of a module its library links"
  ((PASSED += 1))
else
  record FAIL "layering: includes of modules not linked (scripts/check_layering.py, above)"
  ((FAILED += 1))
fi

build_step release
ctest_step release "$BUILD_ROOT/build" -E "$EXTERNAL_TOOL_TESTS"
# One at a time: a real Prometheus's rate within 10 % and the console's field
# flash within a second are what these check, and on 2 cores a parallel test
# beside them takes the time they measure.
CTEST_JOBS=1 ctest_step release-external-tools "$BUILD_ROOT/build" -R "$EXTERNAL_TOOL_TESTS" -E "$PAHO_TESTS"
CTEST_JOBS=4 ctest_step paho-interop "$BUILD_ROOT/build" -R "$PAHO_TESTS"

build_step asan
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest_step asan "$BUILD_ROOT/build-asan" -E "$EXTERNAL_TOOL_TESTS|^threads_"

build_step tsan
tsan_step

build_step fuzz
fuzz_step

banner "summary ($((SECONDS - START))s, logs in $LOGS)"
printf '%s\n' "${SUMMARY[@]}"
echo "summary: $PASSED passed, $FAILED failed"
((FAILED == 0))
