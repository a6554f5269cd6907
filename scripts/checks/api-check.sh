#!/usr/bin/env bash
# Property-based API conformance: schemathesis generates requests from /openapi.json and
# checks every response (status codes, content types, JSON schemas) against it.
# The service runs in --fixtures mode on loopback; this script stops it when done.
# 502/504 are documented answers (the fixtures include broken upstream feeds on purpose),
# so "no 5xx at all" is off; an undocumented status such as a 500 still fails
# status_code_conformance.
set -euo pipefail
cd "$(dirname "$0")/../.."
SWIFT=${SWIFT:-$(command -v swift || echo /opt/swift/usr/bin/swift)}
PORT=${API_CHECK_PORT:-18480}
MAX_EXAMPLES=${MAX_EXAMPLES:-40}
command -v schemathesis >/dev/null 2>&1 || python3 -m pip install -q schemathesis
"$SWIFT" build --product feedproxy >/dev/null
BIN=$("$SWIFT" build --show-bin-path)/feedproxy
OUT=.build/api-check
mkdir -p "$OUT"
# Generous upstream rate limits (the fixture upstream is local) and no per-client quota:
# schemathesis is one client sending far more misses than any real one.
# Every upstream's limit, as --help lists them (one per declared upstream).
for limit in $("$BIN" --help | grep -o 'RATE_LIMIT_[A-Z]*_PER_MIN' | sort -u); do export "$limit=100000"; done
# Every route on: the image proxy and WebSub's callbacks need their keys.
CLIENT_MISS_RATE_PER_MIN=0 LOG_LEVEL=warn IMAGE_PROXY_KEY=api-check WEBSUB_KEY=api-check PUBLIC_BASE_URL="http://127.0.0.1:$PORT" \
  "$BIN" --fixtures Fixtures --port "$PORT" >"$OUT/feedproxy.log" 2>&1 &
PID=$!
trap 'kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true' EXIT
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done
cmp <(curl -sf "http://127.0.0.1:$PORT/openapi.json" | python3 -m json.tool --sort-keys) <(python3 -m json.tool --sort-keys docs/openapi.json) \
  || { echo "docs/openapi.json differs from the served document: run python3 scripts/generate/openapi.py after building"; exit 1; }
schemathesis --config-file scripts/checks/schemathesis.toml run "http://127.0.0.1:$PORT/openapi.json" --url "http://127.0.0.1:$PORT" \
  --checks all --exclude-checks not_a_server_error --max-examples "$MAX_EXAMPLES" --seed 1 --request-timeout 10 --no-color "$@"
# A typed client generated from the same document calls every operation (operationId, tags).
python3 scripts/checks/openapi-client-check.py "$BIN"
