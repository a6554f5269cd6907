#!/usr/bin/env bash
# Instructions per cache-hit request, counted by callgrind: repeatable on this noisy
# machine where req/s are not. User space only (the kernel's share is not counted).
# Usage: scripts/bench-instructions.sh [feedproxy-binary] [requests]
# Three modes, as make bench: access log off, on, and gzip with the log on. Loopback only;
# the server it starts it stops (by PID).
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-$(command -v swift || echo /opt/swift/usr/bin/swift)}
BIN=${1:-}
N=${2:-2000}
if [ -z "$BIN" ]; then
  "$SWIFT" build -c release --product feedproxy >/dev/null
  BIN=$("$SWIFT" build -c release --show-bin-path)/feedproxy
fi
command -v valgrind >/dev/null 2>&1 || { [ "$(id -u)" = 0 ] && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind >/dev/null; }
WORK=$(mktemp -d)
VP=
trap '[ -n "$VP" ] && kill -9 "$VP" 2>/dev/null; rm -rf "$WORK"' EXIT
# valgrind 3.19 cannot read the DWARF 5 the toolchain writes; symbols are enough here.
cp "$BIN" "$WORK/feedproxy"
strip --strip-debug "$WORK/feedproxy"
# Exactly N keep-alive GETs on one connection, each answer read to its last byte.
cat >"$WORK/client.py" <<'PY'
import socket, sys
port, n, gzip = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "gzip"
req = ("GET /photos HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: bench\r\nAccept: */*\r\n"
       + ("Accept-Encoding: gzip\r\n" if gzip else "") + "\r\n").encode()
s = socket.create_connection(("127.0.0.1", port))
buf = b""
for _ in range(n):
    s.sendall(req)
    while b"\r\n\r\n" not in buf:
        buf += s.recv(65536)
    head, _, rest = buf.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), head[:80]
    length = next(int(l.split(b":")[1]) for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:"))
    while len(rest) < length:
        rest += s.recv(65536)
    buf = rest[length:]
PY
count() {  # log-level encoding -> instructions per request
  local level=$1 encoding=$2 port
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  LOG_LEVEL=$level valgrind --tool=callgrind --callgrind-out-file="$WORK/cg.%p" \
    "$WORK/feedproxy" --fixtures Fixtures --host 127.0.0.1 --port "$port" --threads 2 >"$WORK/server.log" 2>&1 &
  VP=$!
  for _ in $(seq 150); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.2; done
  python3 "$WORK/client.py" "$port" 200 "$encoding"   # fill the cache, warm every path
  callgrind_control -z "$VP" >/dev/null 2>&1
  python3 "$WORK/client.py" "$port" "$N" "$encoding"
  sleep 1   # the log writer's periodic flush is part of the cost
  callgrind_control -d "$VP" >/dev/null 2>&1
  kill -9 "$VP"
  wait "$VP" 2>/dev/null || true
  VP=
  local total
  total=$(callgrind_annotate "$WORK"/cg.*.1 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
  rm -f "$WORK"/cg.*
  echo $((total / N))
}
off=$(count warn identity)
on=$(count info identity)
gz=$(count info gzip)
echo "instructions per cache-hit request (callgrind, user space, $N keep-alive GETs of /photos):"
echo "  access log off $off   access log on $on   gzip + access log on $gz"
