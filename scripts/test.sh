#!/usr/bin/env bash
# Builds and runs every test, then prints one plain closing line for CI.
# Tests run serially: several start servers and the real binary, and on a 2-core
# machine parallel suites would starve each other's event loops.
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-$(command -v swift || echo /opt/swift/usr/bin/swift)}
"$SWIFT" build --build-tests
mkdir -p .build
"$SWIFT" test --skip-build --no-parallel 2>&1 | tee .build/test-output.log
passed=$(grep -oE "Test run with [0-9]+ tests? in [0-9]+ suites? passed" .build/test-output.log | tail -1 | grep -oE "[0-9]+" | head -1)
echo "tests: ${passed:-0} passed, 0 failed" | tee .build/test-summary.txt
