#!/usr/bin/env bash
# The Swift suite with every core busy, as on a laptop with a browser open, a shared CI
# runner or a container at its CPU limit: one busy loop per core (LOAD, default nproc)
# beside `swift test` in Swift Testing's default parallel mode (harsher than make test's
# serial run), RUNS times in a row (default 1). Ends with the slowest tests of the last run.
set -euo pipefail
cd "$(dirname "$0")/../.."
SWIFT=${SWIFT:-$(command -v swift || echo /opt/swift/usr/bin/swift)}
RUNS=${RUNS:-1}
LOAD=${LOAD:-$(nproc)}
"$SWIFT" build --build-tests
mkdir -p .build
busy=()
stop_load() { for pid in "${busy[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap stop_load EXIT
for _ in $(seq "$LOAD"); do
  (while :; do :; done) &
  busy+=($!)
done
for run in $(seq "$RUNS"); do
  log=.build/test-under-load-$run.log
  start=$(date +%s)
  if ! "$SWIFT" test --skip-build >"$log" 2>&1; then
    grep -E "^✘ Test .* recorded an issue|error:" "$log" | head -40 || true
    echo "test-under-load: run $run of $RUNS failed with $LOAD busy loops (log: $log)"
    exit 1
  fi
  echo "test-under-load: run $run of $RUNS passed in $(($(date +%s) - start)) s with $LOAD busy loops: $(grep -oE "Test run with [0-9]+ tests" "$log" | tail -1)"
done
echo "slowest tests of the last run (parallel, under load):"
grep -E "^✔ Test .* passed after [0-9.]+ seconds" "$log" | grep -v "^✔ Test run with" | sed -E 's/^✔ Test (.*) passed after ([0-9.]+) seconds.*/\2 \1/' | sort -rn | sed -n 1,12p  # sed reads to the end: head would leave sort a SIGPIPE
