#!/usr/bin/env bash
# Cache-hit throughput: FeedProxy vs nginx serving the same bytes, side by side, one run.
# Usage: scripts/bench/bench.sh [duration-seconds] [connections]
# Loopback only; everything it starts it stops (by PID) before exiting.
set -euo pipefail
cd "$(dirname "$0")/../.."
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

# Two FeedProxy processes and two nginx servers: access log off on both sides, and on on
# both sides (FeedProxy's JSON lines to a file, as LOG_LEVEL=info in production; nginx
# with a buffered access log, its production setting).
FP_PORT=18180        # access log off (LOG_LEVEL=warn)
FP_LOG_PORT=18182    # access log on  (LOG_LEVEL=info, stdout to a file)
NGINX_PORT=18181
NGINX_LOG_PORT=18183
NGINX_GZIP_PORT=18186
LOG_LEVEL=warn "$BIN/feedproxy" --fixtures Fixtures --port "$FP_PORT" --threads 2 >"$OUT/feedproxy.log" 2>&1 &
pids+=($!)
FP_PID=$!
LOG_LEVEL=info "$BIN/feedproxy" --fixtures Fixtures --port "$FP_LOG_PORT" --threads 2 >"$OUT/feedproxy-access.log" 2>&1 &
pids+=($!)
FP_LOG_PID=$!
for port in "$FP_PORT" "$FP_LOG_PORT"; do
  for _ in $(seq 50); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
  curl -sf "http://127.0.0.1:$port/photos" -o /dev/null            # fill the cache
done

# The exact bytes FeedProxy serves on a hit become nginx's static file, and the exact
# pre-compressed bytes it sends to gzip clients become the file gzip_static serves.
mkdir -p "$OUT/www"
curl -sf "http://127.0.0.1:$FP_PORT/photos" -o "$OUT/www/photos"
curl -sf -H 'Accept-Encoding: gzip' "http://127.0.0.1:$FP_PORT/photos" -o "$OUT/www/photos.gz"
BYTES=$(wc -c <"$OUT/www/photos")
GZ_BYTES=$(wc -c <"$OUT/www/photos.gz")

# nginx at its best for this job (each setting named in the README's Benchmarks section):
# one worker per core pinned to it, a reuseport listener per worker, sendfile, the file's
# descriptor and metadata cached, keep-alive without a request limit, a buffered access log.
cat >"$OUT/nginx.conf" <<CONF
worker_processes 2;
worker_cpu_affinity auto;
pid $PWD/$OUT/nginx.pid;
error_log $PWD/$OUT/nginx-error.log warn;
events { worker_connections 4096; }
http {
  sendfile on;
  tcp_nopush on;
  tcp_nodelay on;
  open_file_cache max=1000 inactive=60s;
  open_file_cache_valid 60s;
  open_file_cache_min_uses 1;
  open_file_cache_errors on;
  keepalive_requests 1000000;
  keepalive_timeout 65;
  server_tokens off;
  types { application/json photos; }
  default_type application/json;
  server {
    listen 127.0.0.1:$NGINX_PORT reuseport;
    access_log off;
    location / { root $PWD/$OUT/www; }
  }
  server {
    listen 127.0.0.1:$NGINX_LOG_PORT reuseport;
    access_log $PWD/$OUT/nginx-access.log combined buffer=64k flush=1s;
    location / { root $PWD/$OUT/www; }
  }
  # gzip clients: the same pre-compressed bytes FeedProxy sends, from photos.gz.
  server {
    listen 127.0.0.1:$NGINX_GZIP_PORT reuseport;
    access_log $PWD/$OUT/nginx-access-gzip.log combined buffer=64k flush=1s;
    gzip_static on;
    gzip_vary on;
    location / { root $PWD/$OUT/www; }
  }
}
CONF
nginx -c "$PWD/$OUT/nginx.conf" -g 'daemon off;' &
pids+=($!)
NGINX_PID=$!
for port in "$NGINX_PORT" "$NGINX_LOG_PORT" "$NGINX_GZIP_PORT"; do
  for _ in $(seq 50); do curl -sf "http://127.0.0.1:$port/photos" >/dev/null && break; sleep 0.1; done
  cmp <(curl -s "http://127.0.0.1:$port/photos") "$OUT/www/photos"
done
cmp <(curl -s -H 'Accept-Encoding: gzip' "http://127.0.0.1:$NGINX_GZIP_PORT/photos") "$OUT/www/photos.gz"
cmp <(curl -s -H 'Accept-Encoding: gzip' "http://127.0.0.1:$FP_LOG_PORT/photos") "$OUT/www/photos.gz"

# CPU seconds (user + system) the processes have used so far. wrk takes about half of the
# two cores, which dilutes any req/s ratio; CPU per request is the servers' own cost.
cpu_seconds() {
  local ticks=0 p
  for p in "$@"; do ticks=$((ticks + $(awk '{print $14 + $15}' "/proc/$p/stat"))); done
  echo "$ticks $(getconf CLK_TCK)" | awk '{print $1 / $2}'
}
run() {  # name url pids [wrk args...] -> "req/s p50 p99 cpu-µs-per-request"
  local name=$1 url=$2 who=$3 before after
  shift 3
  before=$(cpu_seconds $who)
  wrk -t2 -c"$CONNS" -d"${DURATION}s" --latency "$@" "$url" >"$OUT/$name.wrk"
  after=$(cpu_seconds $who)
  awk -v cpu="$(echo "$before $after" | awk '{print $2 - $1}')" '/Requests\/sec/ {r=$2} $1=="50%" {p50=$2} $1=="99%" {p99=$2} / requests in / {n=$1}
    END {print r, p50, p99, cpu * 1e6 / n}' "$OUT/$name.wrk"
}
compare() {  # label feedproxy-port feedproxy-pid nginx-port [wrk args...]: rounds interleaved fp, ng, ng, fp
  local a b c d label=$1 fp=$2 fpid=$3 ng=$4 tag workers
  shift 4
  workers=$(pgrep -P "$NGINX_PID" | tr '\n' ' ')
  tag=$(echo "$label" | tr -c 'a-z0-9' '-' | cut -c1-24)
  a=$(run "$tag-fp1" "http://127.0.0.1:$fp/photos" "$fpid" "$@")
  b=$(run "$tag-ng1" "http://127.0.0.1:$ng/photos" "$workers" "$@")
  c=$(run "$tag-ng2" "http://127.0.0.1:$ng/photos" "$workers" "$@")
  d=$(run "$tag-fp2" "http://127.0.0.1:$fp/photos" "$fpid" "$@")
  python3 - "$label" $a $d $b $c <<'PY'
import sys
def ms(v):  # wrk prints 812.00us / 1.23ms / 1.01s
    for unit, f in (("us", 1e-3), ("ms", 1.0), ("s", 1e3)):
        if v.endswith(unit): return float(v[: -len(unit)]) * f
    return float(v)
label, *v = sys.argv[1:]
fp = [(float(v[i]), ms(v[i + 1]), ms(v[i + 2]), float(v[i + 3])) for i in (0, 4)]
ng = [(float(v[i]), ms(v[i + 1]), ms(v[i + 2]), float(v[i + 3])) for i in (8, 12)]
avg = lambda xs, k: sum(x[k] for x in xs) / len(xs)
print(f"{label}")
print(f"  feedproxy {avg(fp,0):>9.0f} req/s  p50 {avg(fp,1):5.2f} ms  p99 {avg(fp,2):5.2f} ms  CPU {avg(fp,3):5.2f} µs/req  (rounds: p99 {fp[0][2]:.2f} / {fp[1][2]:.2f})")
print(f"  nginx     {avg(ng,0):>9.0f} req/s  p50 {avg(ng,1):5.2f} ms  p99 {avg(ng,2):5.2f} ms  CPU {avg(ng,3):5.2f} µs/req  (rounds: p99 {ng[0][2]:.2f} / {ng[1][2]:.2f})")
print(f"  ratio feedproxy/nginx = {avg(fp,0) / avg(ng,0):.2f}   p99 feedproxy/nginx = {avg(fp,2) / avg(ng,2):.2f}   CPU per request feedproxy/nginx = {avg(fp,3) / avg(ng,3):.2f}")
PY
}
echo "cache hit, ${BYTES}-byte JSON body (${GZ_BYTES} gzipped), wrk -t2 -c$CONNS -d${DURATION}s, keep-alive, 2 cores shared with wrk"
compare "access log off on both sides" "$FP_PORT" "$FP_PID" "$NGINX_PORT"
compare "access log on on both sides (feedproxy JSON lines to a file; nginx buffer=64k flush=1s)" "$FP_LOG_PORT" "$FP_LOG_PID" "$NGINX_LOG_PORT"
compare "gzip, access log on on both sides (Accept-Encoding: gzip; nginx gzip_static)" "$FP_LOG_PORT" "$FP_LOG_PID" "$NGINX_GZIP_PORT" -H "Accept-Encoding: gzip"
# An L2 hit: a replica whose own cache is too small to keep the answer (CACHE_MAX_BYTES
# 4096 keeps nothing over 512 bytes) finds it in Redis on every request.
need redis-server redis-server
REDIS_PORT=18184
FP_L2_PORT=18185
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no --loglevel warning >"$OUT/redis.log" 2>&1 &
pids+=($!)
for _ in $(seq 50); do redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
FX=$(grep -o '"fixtures_upstream":"[^"]*"' "$OUT/feedproxy-access.log" | head -1 | cut -d'"' -f4)
LOG_LEVEL=warn REDIS_URL="redis://127.0.0.1:$REDIS_PORT/0" CACHE_MAX_BYTES=4096 FLICKR_FEED_URL="$FX/services/feeds/photos_public.gne" \
  "$BIN/feedproxy" --port "$FP_L2_PORT" --threads 2 >"$OUT/feedproxy-l2.log" 2>&1 &
pids+=($!)
FP_L2_PID=$!
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$FP_L2_PORT/healthz" >/dev/null && break; sleep 0.1; done
curl -sf "http://127.0.0.1:$FP_L2_PORT/photos" -o /dev/null
sleep 0.2
cmp <(curl -s "http://127.0.0.1:$FP_L2_PORT/photos") "$OUT/www/photos"
l1=$(run l1 "http://127.0.0.1:$FP_PORT/photos" "$FP_PID")
l2=$(run l2 "http://127.0.0.1:$FP_L2_PORT/photos" "$FP_L2_PID")
L2_HITS=$(curl -s "http://127.0.0.1:$FP_L2_PORT/metrics" | awk '/feedproxy_l2_events_total\{event="hit"\}/ {print $2}')
python3 - $l1 $l2 "$L2_HITS" <<'PY'
import sys
def ms(v):
    for unit, f in (("us", 1e-3), ("ms", 1.0), ("s", 1e3)):
        if v.endswith(unit): return float(v[: -len(unit)]) * f
    return float(v)
l1, l2 = sys.argv[1:5], sys.argv[5:9]
print("L1 hit vs L2 hit (Redis on loopback), same wrk settings")
print(f"  L1 hit    {float(l1[0]):>9.0f} req/s  p50 {ms(l1[1]):5.2f} ms  p99 {ms(l1[2]):5.2f} ms")
print(f"  L2 hit    {float(l2[0]):>9.0f} req/s  p50 {ms(l2[1]):5.2f} ms  p99 {ms(l2[2]):5.2f} ms  ({sys.argv[9]} L2 hits)")
print(f"  L2 adds {ms(l2[2]) - ms(l1[2]):+.2f} ms at p99")
PY

# Tracing's cost on the hit path: the same hits with spans exported over OTLP to a real
# receiver (scripts/lib/otlp-receiver.py, on these cores too) at ratio 1.0 and 0.01, against off.
python3 -c "import opentelemetry.proto" 2>/dev/null || python3 -m pip install -q opentelemetry-proto 2>&1 | grep -v "as the 'root' user" || true
python3 scripts/lib/otlp-receiver.py --port 0 >"$OUT/otlp.out" 2>&1 &
pids+=($!)
for _ in $(seq 100); do grep -q listening "$OUT/otlp.out" && break; sleep 0.1; done
OTLP="http://127.0.0.1:$(awk '/listening/ {print $2}' "$OUT/otlp.out")"
FP_T1_PORT=18187
FP_T01_PORT=18188
for spec in "$FP_T1_PORT 1" "$FP_T01_PORT 0.01"; do
  read -r port ratio <<<"$spec"
  LOG_LEVEL=warn OTEL_EXPORTER_OTLP_ENDPOINT="$OTLP" OTEL_TRACES_SAMPLER=parentbased_traceidratio OTEL_TRACES_SAMPLER_ARG="$ratio" \
    "$BIN/feedproxy" --fixtures Fixtures --port "$port" --threads 2 >"$OUT/feedproxy-trace-$ratio.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 50); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
  curl -sf "http://127.0.0.1:$port/photos" -o /dev/null
done
FP_T1_PID=$(pgrep -f -- "--port $FP_T1_PORT" | head -1)
FP_T01_PID=$(pgrep -f -- "--port $FP_T01_PORT" | head -1)
t_off1=$(run trace-off1 "http://127.0.0.1:$FP_PORT/photos" "$FP_PID")
t_one1=$(run trace-1-1 "http://127.0.0.1:$FP_T1_PORT/photos" "$FP_T1_PID")
t_pct1=$(run trace-001-1 "http://127.0.0.1:$FP_T01_PORT/photos" "$FP_T01_PID")
t_pct2=$(run trace-001-2 "http://127.0.0.1:$FP_T01_PORT/photos" "$FP_T01_PID")
t_one2=$(run trace-1-2 "http://127.0.0.1:$FP_T1_PORT/photos" "$FP_T1_PID")
t_off2=$(run trace-off2 "http://127.0.0.1:$FP_PORT/photos" "$FP_PID")
spans() { curl -s "http://127.0.0.1:$1/metrics" | awk -v o="$2" '$1 == "feedproxy_trace_spans_total{outcome=\""o"\"}" {print $2}'; }
python3 - $t_off1 $t_off2 $t_one1 $t_one2 $t_pct1 $t_pct2 "$(spans $FP_T1_PORT exported)" "$(spans $FP_T1_PORT dropped_queue_full)" "$(spans $FP_T01_PORT exported)" <<'PY'
import sys
def ms(v):
    for unit, f in (("us", 1e-3), ("ms", 1.0), ("s", 1e3)):
        if v.endswith(unit): return float(v[: -len(unit)]) * f
    return float(v)
v = sys.argv[1:]
runs = [(float(v[i]), ms(v[i + 1]), ms(v[i + 2]), float(v[i + 3])) for i in range(0, 24, 4)]
avg = lambda a, b, k: (a[k] + b[k]) / 2
off, one, pct = (runs[0], runs[1]), (runs[2], runs[3]), (runs[4], runs[5])
print("tracing on the hit path (spans over OTLP/HTTP to a real receiver on the same cores), rounds off, 1.0, 0.01, 0.01, 1.0, off")
for name, r in (("off", off), ("ratio 1.0", one), ("ratio 0.01", pct)):
    print(f"  {name:<10} {avg(*r, 0):>9.0f} req/s  p99 {avg(*r, 2):5.2f} ms  CPU {avg(*r, 3):5.2f} µs/req")
print(f"  cost per request: ratio 1.0 {avg(*one, 3) - avg(*off, 3):+.2f} µs CPU ({avg(*one, 0) / avg(*off, 0):.2f}× req/s), "
      f"ratio 0.01 {avg(*pct, 3) - avg(*off, 3):+.2f} µs CPU ({avg(*pct, 0) / avg(*off, 0):.2f}× req/s; rounds of off differ by "
      f"{abs(off[0][3] - off[1][3]):.2f} µs)")
print(f"  spans at 1.0: {v[24]} exported, {v[25]} dropped (queue full: the receiver takes fewer than wrk sends); at 0.01: {v[26]} exported")
PY

LOGGED=$(wc -l <"$OUT/feedproxy-access.log")
echo "  feedproxy access-log lines written: $LOGGED"
RSS_KB=$(awk '/VmRSS/ {print $2}' "/proc/$FP_PID/status")
echo "feedproxy RSS after benchmark: $((RSS_KB / 1024)) MiB"

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
# xmlwf (Debian's expat) times the same 29 MB feed FeedBench reads whole.
command -v xmlwf >/dev/null 2>&1 || { [ "$(id -u)" = 0 ] && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq expat >/dev/null 2>&1 || true; }
"$BIN/feedproxy-bench" Fixtures

echo
scripts/bench/bench-instructions.sh "$BIN/feedproxy"

echo
# Politeness: upstream bytes per refresh of an unchanged feed (conditional GET, 304) next to the full fetch.
python3 scripts/bench/refresh-bytes.py "$BIN/feedproxy"

echo
# A podcast app's library refresh: 100 podcasts in one conditional request (warm), or all uncached (cold).
python3 scripts/bench/library-bench.py "$BIN/feedproxy"

echo
# A storm of library refreshes (issue 55): 150 apps x 100 podcasts of one hosting platform
# (1,000 feeds, 100 ms each) at once on three replicas sharing Redis, then an expiry round, 10 %
# of the feeds publishing, the apps' sync recipe, a rolling deploy (issue 67: each replica restarted
# with a setting changed, then every app's next refresh: what it cost them), and one address's
# flood beside another's feed.
# Its checks are printed (ok/FAIL) and do not stop the bench: CI's make storm-test is the gate.
python3 scripts/bench/storm.py "$BIN/feedproxy" --podcasts 1000 --apps 150 --per-app 100 --delay-ms 100 --check --deploy --json "$OUT/storm.json" |
  grep -E '^\[|batch latency|feeds:|iTunes:|every app|missed|^  deploy|victim|flood batches|storm checks|^  (ok|FAIL)' || true
echo
# The same storm at three times the apps (issue 66): 450 apps x 100 podcasts. Reported, not
# failing the bench: its checks say where it stands.
echo "storm at 450 apps:"
python3 scripts/bench/storm.py "$BIN/feedproxy" --podcasts 1000 --apps 450 --per-app 100 --delay-ms 100 --check --json "$OUT/storm-450.json" |
  grep -E '^\[|batch latency|feeds:|iTunes:|every app|missed|storm checks|^  (ok|FAIL)' || true

echo
# A big feed as an app waits for it (issue 66): the cold first page of an 18.9 MB feed through
# the service, next to xmlwf on the same file.
python3 scripts/bench/big-feed.py "$BIN/feedproxy" 5

echo
# Clients that try to hold or spin a loop: trickled bodies, slow bodies, long chunk extensions.
python3 scripts/bench/loop-attacks.py "$BIN/feedproxy"

echo
# Image resizing against nginx's image_filter on the same source bytes, and a cached image against a cached feed.
scripts/bench/bench-images.sh "$DURATION"

echo
# Event fan-out (issue 58): 10,000 idle /episodes/events streams from 40 addresses, memory per
# stream and one ping's event on every stream (p50/p99), beside nginx + nchan publishing the same size.
python3 scripts/bench/events-bench.py "$BIN/feedproxy" 10000

echo
# What keeping 1,000 watched feeds of mixed cadence warm costs their publishers in an hour:
# the refresher's own scheduling over one simulated hour (a real hour does not fit a bench).
"$SWIFT" build --build-tests >/dev/null
"$SWIFT" test --skip-build --filter WatchedFeedsCostTests 2>&1 | grep -E "one simulated hour|Test run with"
