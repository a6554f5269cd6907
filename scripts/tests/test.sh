#!/usr/bin/env bash
# Builds and runs every test (Swift suites, then the browser test), then prints one plain
# closing line for CI.
# Suites run in parallel (Swift Testing's default): every suite's bodies run off the
# cooperative pool (`@Suite(.offPool)`), so a blocking test holds only its own thread and the
# servers beside it keep their loops (make test-under-load runs the same with the cores busy).
set -euo pipefail
cd "$(dirname "$0")/../.."
SWIFT=${SWIFT:-$(command -v swift || echo /opt/swift/usr/bin/swift)}
"$SWIFT" build --build-tests
mkdir -p .build
"$SWIFT" test --skip-build 2>&1 | tee .build/test-output.log
# A real browser as web apps use the service (scripts/tests/browser-test.py): Debian's Chromium
# driven by Playwright from PyPI (it cannot download its own browsers here), axe-core from
# axe-playwright-python.
if [ ! -x /usr/bin/chromium ] || ! python3 -c "import playwright, axe_playwright_python" 2>/dev/null; then
  if [ "$(id -u)" = 0 ]; then
    [ -x /usr/bin/chromium ] || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }
    python3 -c "import playwright, axe_playwright_python" 2>/dev/null || pip install -q playwright axe-playwright-python 2>&1 | grep -v "Running pip as the 'root' user" || true
  else
    echo "missing chromium or playwright (run as root, or: sudo apt-get install chromium; pip install playwright axe-playwright-python)"; exit 1
  fi
fi
FEEDPROXY_BIN=$("$SWIFT" build --show-bin-path)/feedproxy python3 scripts/tests/browser-test.py
# The built-in demo page in the same browser (scripts/tests/demo-test.py): views, CSP, axe-core.
FEEDPROXY_BIN=$("$SWIFT" build --show-bin-path)/feedproxy python3 scripts/tests/demo-test.py
passed=$(grep -oE "Test run with [0-9]+ tests? in [0-9]+ suites? passed" .build/test-output.log | tail -1 | grep -oE "[0-9]+" | head -1)
echo "tests: ${passed:-0} passed, 0 failed" | tee .build/test-summary.txt
