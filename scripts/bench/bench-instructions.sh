#!/usr/bin/env bash
# Instructions per cache-hit request, counted by callgrind: repeatable on this noisy
# machine where req/s are not. User space only (the kernel's share is not counted).
# Usage: scripts/bench/bench-instructions.sh [feedproxy-binary] [requests]
# Three modes, as make bench: access log off, on, and gzip with the log on. When make bench
# has left nginx's copy of the body in bench/out/www, nginx is counted the same way (one
# worker in the foreground, the bench's settings). Loopback only; what it starts it stops (by PID).
set -euo pipefail
cd "$(dirname "$0")/../.."
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
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# Instructions the process under callgrind ($VP) spends on N requests to $port, per request.
measure() {  # port encoding
  local port=$1 encoding=$2 total
  python3 "$WORK/client.py" "$port" 200 "$encoding"   # fill the cache, warm every path
  callgrind_control -z "$VP" >/dev/null 2>&1
  python3 "$WORK/client.py" "$port" "$N" "$encoding"
  sleep 1   # a buffered access log's periodic flush is part of the cost
  callgrind_control -d "$VP" >/dev/null 2>&1
  total=$(callgrind_annotate "$(ls -t "$WORK"/cg.*.* | head -1)" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
  echo $((total / N))
}
stop() { kill -9 "$VP"; wait "$VP" 2>/dev/null || true; VP=; rm -f "$WORK"/cg.*; }
wait_for() { for _ in $(seq 150); do curl -sf -o /dev/null "$1" && return; sleep 0.2; done; }
count() {  # log-level encoding -> FeedProxy's instructions per request
  local level=$1 encoding=$2 port result
  port=$(free_port)
  LOG_LEVEL=$level valgrind --tool=callgrind --callgrind-out-file="$WORK/cg.%p" \
    "$WORK/feedproxy" --fixtures Fixtures --host 127.0.0.1 --port "$port" --threads 2 >"$WORK/server.log" 2>&1 &
  VP=$!
  wait_for "http://127.0.0.1:$port/healthz"
  result=$(measure "$port" "$encoding")
  stop
  echo "$result"
}
off=$(count warn identity)
on=$(count info identity)
gz=$(count info gzip)
echo "instructions per cache-hit request (callgrind, user space, $N keep-alive GETs of /photos):"
echo "  feedproxy  access log off $off   access log on $on   gzip + access log on $gz"

WWW=$PWD/bench/out/www
if [ -f "$WWW/photos" ] && [ -f "$WWW/photos.gz" ] && command -v nginx >/dev/null 2>&1; then
  P_OFF=$(free_port) P_ON=$(free_port) P_GZ=$(free_port)
  cat >"$WORK/nginx.conf" <<CONF
worker_processes 1;
pid $WORK/nginx.pid;
error_log $WORK/nginx-error.log warn;
events { worker_connections 1024; }
http {
  sendfile on; tcp_nopush on; tcp_nodelay on;
  open_file_cache max=1000 inactive=60s; open_file_cache_valid 60s; open_file_cache_min_uses 1; open_file_cache_errors on;
  keepalive_requests 1000000; keepalive_timeout 65; server_tokens off;
  types { application/json photos; }
  default_type application/json;
  server { listen 127.0.0.1:$P_OFF; access_log off; location / { root $WWW; } }
  server { listen 127.0.0.1:$P_ON; access_log $WORK/access.log combined buffer=64k flush=1s; location / { root $WWW; } }
  server { listen 127.0.0.1:$P_GZ; access_log $WORK/access-gz.log combined buffer=64k flush=1s; gzip_static on; gzip_vary on; location / { root $WWW; } }
}
CONF
  valgrind --tool=callgrind --callgrind-out-file="$WORK/cg.%p" nginx -c "$WORK/nginx.conf" -g 'daemon off; master_process off;' >"$WORK/nginx.log" 2>&1 &
  VP=$!
  wait_for "http://127.0.0.1:$P_OFF/photos"
  ng_off=$(measure "$P_OFF" identity)
  ng_on=$(measure "$P_ON" identity)
  ng_gz=$(measure "$P_GZ" gzip)
  stop
  echo "  nginx      access log off $ng_off   access log on $ng_on   gzip + access log on $ng_gz   (one worker, same settings)"
fi
