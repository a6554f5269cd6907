#!/usr/bin/env bash
# Instructions per cache-hit request, counted by callgrind (repeatable on a noisy machine,
# unlike seconds): the release binary serves /photos from its cache under valgrind, once
# with the access log off and once on, for two request counts; the difference between the
# counts divided by the difference in requests is the cost of one hit, start-up excluded.
# Usage: scripts/hit-instructions.sh [requests-low] [requests-high]   (loopback only)
set -euo pipefail
cd "$(dirname "$0")/.."
LOW=${1:-500}
HIGH=${2:-2500}
SWIFT=${SWIFT:-$(command -v swift || echo /opt/swift/usr/bin/swift)}
command -v valgrind >/dev/null 2>&1 || { [ "$(id -u)" = 0 ] && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind >/dev/null; }
"$SWIFT" build -c release --product feedproxy >/dev/null
BIN=$("$SWIFT" build -c release --show-bin-path)/feedproxy
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

count() {  # log-level requests -> instructions
  local level=$1 n=$2 port
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  LOG_LEVEL=$level CPU_AFFINITY=false valgrind --tool=callgrind --callgrind-out-file="$OUT/cg.$level.$n" \
    "$BIN" --fixtures Fixtures --port "$port" --threads 1 >"$OUT/log.$level.$n" 2>"$OUT/vg.$level.$n" &
  local pid=$!
  python3 - "$port" "$n" <<'PY'
import socket, sys, time
port, n = int(sys.argv[1]), int(sys.argv[2])
for _ in range(600):
    try:
        s = socket.create_connection(("127.0.0.1", port)); break
    except OSError:
        time.sleep(0.1)
req = b"GET /photos HTTP/1.1\r\nHost: localhost\r\n\r\n"
def one():
    s.sendall(req)
    buf = b""
    while b"\r\n\r\n" not in buf: buf += s.recv(65536)
    head, _, body = buf.partition(b"\r\n\r\n")
    length = int([l.split(b":")[1] for l in head.split(b"\r\n") if l.lower().startswith(b"content-length")][0])
    while len(body) < length: body += s.recv(65536)
one(); one()  # fill the cache, then a hit: the counted ones are all hits
for _ in range(n): one()
PY
  kill -TERM "$pid"
  wait "$pid" 2>/dev/null || true
  awk '/^summary:/ {print $2} /^totals:/ {print $2}' "$OUT/cg.$level.$n" | tail -1
}
for level in warn info; do
  lo=$(count "$level" "$LOW")
  hi=$(count "$level" "$HIGH")
  per=$(( (hi - lo) / (HIGH - LOW) ))
  label=$([ "$level" = info ] && echo "access log on " || echo "access log off")
  echo "$label: $per instructions per cache-hit request (callgrind, $LOW vs $HIGH keep-alive hits of /photos)"
done
