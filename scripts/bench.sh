#!/usr/bin/env bash
# Cache-hit throughput: FeedProxy vs nginx serving the same bytes, side by side, one run.
# Usage: scripts/bench.sh [duration-seconds] [connections]
# Loopback only; everything it starts it stops (by PID) before exiting.
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${1:-10}
CONNS=${2:-64}
SWIFT=${SWIFT:-$(command -v swift || echo /opt/swift/usr/bin/swift)}
OUT=bench/out
mkdir -p "$OUT"

need() { command -v "$1" >/dev/null 2>&1 || { [ "$(id -u)" = 0 ] && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null; }; }
need wrk wrk
need nginx nginx-light

"$SWIFT" build -c release --product feedproxy >/dev/null
"$SWIFT" build -c release --product feedproxy-bench >/dev/null
BIN=$("$SWIFT" build -c release --show-bin-path)

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT

FP_PORT=18180
NGINX_PORT=18181
LOG_LEVEL=warn "$BIN/feedproxy" --fixtures Fixtures --port "$FP_PORT" --threads 2 >"$OUT/feedproxy.log" 2>&1 &
pids+=($!)
FP_PID=$!
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$FP_PORT/healthz" >/dev/null && break; sleep 0.1; done

# The exact bytes FeedProxy serves on a hit become nginx's static file.
curl -sf "http://127.0.0.1:$FP_PORT/photos" -o /dev/null            # fill the cache
mkdir -p "$OUT/www"
curl -sf "http://127.0.0.1:$FP_PORT/photos" -o "$OUT/www/photos"
BYTES=$(wc -c <"$OUT/www/photos")

cat >"$OUT/nginx.conf" <<CONF
worker_processes 2;
pid $PWD/$OUT/nginx.pid;
error_log $PWD/$OUT/nginx-error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 1000000;
  types { application/json photos; }
  default_type application/json;
  server {
    listen 127.0.0.1:$NGINX_PORT reuseport;
    location / { root $PWD/$OUT/www; }
  }
}
CONF
nginx -c "$PWD/$OUT/nginx.conf" -g 'daemon off;' &
pids+=($!)
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$NGINX_PORT/photos" >/dev/null && break; sleep 0.1; done
cmp <(curl -s "http://127.0.0.1:$NGINX_PORT/photos") "$OUT/www/photos"

run() {  # name url
  wrk -t2 -c"$CONNS" -d"${DURATION}s" --latency "$2" >"$OUT/$1.wrk"
  local rps p99
  rps=$(awk '/Requests\/sec/ {print $2}' "$OUT/$1.wrk")
  p99=$(awk '$1=="99%" {print $2}' "$OUT/$1.wrk")
  echo "$rps $p99"
}
echo "cache hit, ${BYTES}-byte JSON body, wrk -t2 -c$CONNS -d${DURATION}s, keep-alive, 2 cores shared with wrk"
read -r fp_rps fp_p99 < <(run feedproxy "http://127.0.0.1:$FP_PORT/photos")
read -r ng_rps ng_p99 < <(run nginx "http://127.0.0.1:$NGINX_PORT/photos")
# Second round in the other order, to cancel out warm-up and drift.
read -r ng_rps2 ng_p992 < <(run nginx2 "http://127.0.0.1:$NGINX_PORT/photos")
read -r fp_rps2 fp_p992 < <(run feedproxy2 "http://127.0.0.1:$FP_PORT/photos")
RSS_KB=$(awk '/VmRSS/ {print $2}' "/proc/$FP_PID/status")
python3 - "$fp_rps" "$fp_rps2" "$ng_rps" "$ng_rps2" "$fp_p99" "$fp_p992" "$ng_p99" "$ng_p992" "$RSS_KB" <<'PY'
import sys
fp = (float(sys.argv[1]) + float(sys.argv[2])) / 2
ng = (float(sys.argv[3]) + float(sys.argv[4])) / 2
print(f"feedproxy  {fp:>10.0f} req/s   p99 {sys.argv[5]} / {sys.argv[6]}")
print(f"nginx      {ng:>10.0f} req/s   p99 {sys.argv[7]} / {sys.argv[8]}")
print(f"ratio feedproxy/nginx = {fp / ng:.2f}")
print(f"feedproxy RSS after benchmark: {int(sys.argv[9]) / 1024:.1f} MiB")
PY

# 10,000 idle keep-alive connections: memory held, and a request still answered promptly.
python3 - "$FP_PORT" "$FP_PID" <<'PY2'
import resource, socket, sys, time, urllib.request
port, pid = int(sys.argv[1]), sys.argv[2]
def rss_kib():
    return int(next(l.split()[1] for l in open(f"/proc/{pid}/status") if l.startswith("VmRSS")))
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 12000), hard))
before = rss_kib()
conns = []
for i in range(10000):
    s = socket.create_connection(("127.0.0.1", port))
    if i % 100 == 0:  # some have served a request, so they are real keep-alive connections
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"); s.recv(4096)
    conns.append(s)
time.sleep(0.5)
start = time.perf_counter()
body = urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5).read()
latency = (time.perf_counter() - start) * 1000
after = rss_kib()
print(f"10,000 idle connections: RSS +{(after - before) / 1024:.1f} MiB ({(after - before) * 1024 / 10000:.0f} bytes each); /healthz answered in {latency:.1f} ms")
for s in conns: s.close()
PY2

echo
"$BIN/feedproxy-bench" Fixtures
