#!/usr/bin/env bash
# Image resizing: FeedProxy's /images (libvips, shrink-on-load) vs nginx's image_filter (libgd)
# resizing the same source bytes, side by side in one run, plus a cached image against a cached
# feed and FeedProxy's peak memory under 8 concurrent large decodes.
# Usage: scripts/bench/bench-images.sh [duration-seconds]   (make bench runs it; loopback only;
# everything it starts it stops, by PID)
set -euo pipefail
cd "$(dirname "$0")/../.."
DURATION=${1:-10}
SWIFT=${SWIFT:-$(command -v swift || echo /opt/swift/usr/bin/swift)}
OUT=bench/out/images
mkdir -p "$OUT/www"

need() { [ -e "$1" ] || command -v "$1" >/dev/null 2>&1 || { [ "$(id -u)" = 0 ] && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null; }; }
need wrk wrk
need nginx nginx-light
need /usr/lib/nginx/modules/ngx_http_image_filter_module.so libnginx-mod-http-image-filter
python3 -c "import PIL" 2>/dev/null || python3 -m pip install -q pillow 2>&1 | grep -v "as the 'root' user" || true

"$SWIFT" build -c release --product feedproxy >/dev/null
BIN=$("$SWIFT" build -c release --show-bin-path)

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT

ORIGIN_PORT=18190   # nginx: the publisher's host (static files, no validators: every fetch is a full download)
FILTER_PORT=18191   # nginx: image_filter resizing the same files on every request
FP_PORT=18192
KEY=bench-images
cp Fixtures/artwork/cover-3000.jpg Fixtures/artwork/logo-1400.png "$OUT/www/"

# nginx at its best for this: a worker per core pinned to it, reuseport, the file cached open,
# image_filter's buffer large enough for the sources, JPEG quality as FeedProxy's (80).
cat >"$OUT/nginx.conf" <<CONF
load_module /usr/lib/nginx/modules/ngx_http_image_filter_module.so;
worker_processes 2;
worker_cpu_affinity auto;
pid $PWD/$OUT/nginx.pid;
error_log $PWD/$OUT/nginx-error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 1000000;
    open_file_cache max=100 inactive=60s;
    server {
        listen 127.0.0.1:$ORIGIN_PORT reuseport;
        root $PWD/$OUT/www;
        etag off;
        if_modified_since off;
        add_header Last-Modified "";
        location / { }
    }
    server {
        listen 127.0.0.1:$FILTER_PORT reuseport;
        root $PWD/$OUT/www;
        location ~ ^/(\d+)/(.+)$ {
            alias $PWD/$OUT/www/\$2;
            image_filter resize \$1 -;
            image_filter_jpeg_quality 80;
            image_filter_buffer 32M;
        }
    }
}
CONF
nginx -c "$PWD/$OUT/nginx.conf" -g 'daemon off;' &
pids+=($!)
NGINX_PID=$!
LOG_LEVEL=warn IMAGE_PROXY_KEY=$KEY ALLOW_PRIVATE_FEED_HOSTS=true CLIENT_MISS_RATE_PER_MIN=0 CACHE_MAX_BYTES=268435456 \
  "$BIN/feedproxy" --fixtures Fixtures --port "$FP_PORT" --threads 2 >"$OUT/feedproxy.log" 2>&1 &
pids+=($!)
FP_PID=$!
for url in "http://127.0.0.1:$ORIGIN_PORT/cover-3000.jpg" "http://127.0.0.1:$FILTER_PORT/300/cover-3000.jpg" "http://127.0.0.1:$FP_PORT/healthz"; do
  for _ in $(seq 50); do curl -sf "$url" -o /dev/null && break; sleep 0.1; done
done
cmp <(curl -s "http://127.0.0.1:$ORIGIN_PORT/cover-3000.jpg") Fixtures/artwork/cover-3000.jpg

# Signed /images paths: PATHS of them, each source URL made unique by a query (?n=), so that
# every request is a miss (download, decode, resize, encode), as every nginx request is.
paths() {  # file width count format -> one path per line
  python3 - "$KEY" "http://127.0.0.1:$ORIGIN_PORT/$1" "$2" "$3" "$4" <<'PY'
import base64, hashlib, hmac, sys, urllib.parse
key, source, width, count, fmt = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
for n in range(count):
    url = source if count == 1 else f"{source}?n={n}"
    sig = base64.urlsafe_b64encode(hmac.new(key.encode(), url.encode(), hashlib.sha256).digest()).rstrip(b"=").decode()
    print(f"/images?url={urllib.parse.quote(url, safe='')}&w={width}&sig={sig}&format={fmt}")
PY
}
# wrk cycles through a file of paths, each thread through its own half.
cat >"$OUT/paths.lua" <<'LUA'
local threads, counter = {}, 0
function setup(thread) counter = counter + 1; thread:set("id", counter); table.insert(threads, thread) end
function init(args)
  paths = {}
  for line in io.lines(args[1]) do paths[#paths + 1] = line end
  n = (id - 1) * math.floor(#paths / 2)
end
function request() n = n + 1; return wrk.format("GET", paths[(n % #paths) + 1]) end
LUA

cpu_seconds() {
  local ticks=0 p
  for p in "$@"; do ticks=$((ticks + $(awk '{print $14 + $15}' "/proc/$p/stat"))); done
  echo "$ticks $(getconf CLK_TCK)" | awk '{print $1 / $2}'
}
run() {  # name url pids conns [wrk args...] -> "req/s p50 p99 cpu-ms-per-request"
  local name=$1 url=$2 who=$3 conns=$4 before after
  shift 4
  before=$(cpu_seconds $who)
  wrk -t2 -c"$conns" -d"${DURATION}s" --latency "$url" "$@" >"$OUT/$name.wrk"
  after=$(cpu_seconds $who)
  awk -v cpu="$(echo "$before $after" | awk '{print $2 - $1}')" '/Requests\/sec/ {r=$2} $1=="50%" {p50=$2} $1=="99%" {p99=$2} / requests in / {n=$1}
    END {print r, p50, p99, cpu * 1e3 / n}' "$OUT/$name.wrk"
}
report() {  # label fp-result nginx-result (each "req/s p50 p99 cpu")
  python3 - "$@" <<'PY'
import sys
def ms(v):
    for unit, f in (("us", 1e-3), ("ms", 1.0), ("s", 1e3)):
        if v.endswith(unit): return float(v[: -len(unit)]) * f
    return float(v)
label, *v = sys.argv[1:]
fp = (float(v[0]), ms(v[1]), ms(v[2]), float(v[3]))
ng = (float(v[4]), ms(v[5]), ms(v[6]), float(v[7]))
print(label)
print(f"  feedproxy {fp[0]:>8.1f} req/s  p50 {fp[1]:7.2f} ms  p99 {fp[2]:7.2f} ms  CPU {fp[3]:6.2f} ms/image")
print(f"  nginx     {ng[0]:>8.1f} req/s  p50 {ng[1]:7.2f} ms  p99 {ng[2]:7.2f} ms  CPU {ng[3]:6.2f} ms/image")
print(f"  ratio feedproxy/nginx = {fp[0] / ng[0]:.2f}   p99 feedproxy/nginx = {fp[2] / ng[2]:.2f}   CPU per image feedproxy/nginx = {fp[3] / ng[3]:.2f}")
PY
}
workers=$(pgrep -P "$NGINX_PID" | tr '\n' ' ')
echo "image resize, uncached: every request downloads, decodes, resizes and encodes (wrk -t2 -c8 -d${DURATION}s; 2 cores shared with wrk and the origin)"
for spec in "cover-3000.jpg 300 jpeg" "logo-1400.png 300 png"; do
  set -- $spec
  paths "$1" "$2" 20000 "$3" >"$OUT/paths-$1"
  fp=$(run "miss-$1-fp" "http://127.0.0.1:$FP_PORT" "$FP_PID" 8 -s "$OUT/paths.lua" -- "$PWD/$OUT/paths-$1")
  ng=$(run "miss-$1-ng" "http://127.0.0.1:$FILTER_PORT/$2/$1" "$workers" 8)
  report "$1 → $2 px $3 (same source bytes; nginx image_filter resize $2 -)" $fp $ng
  # The answers: the asked width, and what each weighs.
  first=$(head -1 "$OUT/paths-$1")
  curl -s "http://127.0.0.1:$FP_PORT$first" -o "$OUT/fp-$1.out"
  curl -s "http://127.0.0.1:$FILTER_PORT/$2/$1" -o "$OUT/ng-$1.out"
  python3 - "$OUT/fp-$1.out" "$OUT/ng-$1.out" <<'PY'
import sys
from PIL import Image
for who, path in zip(("feedproxy", "nginx"), sys.argv[1:]):
    with Image.open(path) as im:
        print(f"  {who:9} answer: {im.format} {im.size[0]}x{im.size[1]} {im.mode}, {len(open(path, 'rb').read())} bytes")
PY
done
# Memory: a replica with 8 decode threads, 8 large decodes at once (both sources, every one a miss).
FP8_PORT=18193
LOG_LEVEL=warn IMAGE_PROXY_KEY=$KEY ALLOW_PRIVATE_FEED_HOSTS=true CLIENT_MISS_RATE_PER_MIN=0 IMAGE_DECODE_THREADS=8 \
  "$BIN/feedproxy" --fixtures Fixtures --port "$FP8_PORT" --threads 2 >"$OUT/feedproxy-8.log" 2>&1 &
pids+=($!)
FP8_PID=$!
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$FP8_PORT/healthz" -o /dev/null && break; sleep 0.1; done
BASE_KB=$(awk '/VmRSS/ {print $2}' "/proc/$FP8_PID/status")
paste -d'\n' "$OUT/paths-cover-3000.jpg" "$OUT/paths-logo-1400.png" >"$OUT/paths-both"
run "memory-8" "http://127.0.0.1:$FP8_PORT" "$FP8_PID" 8 -s "$OUT/paths.lua" -- "$PWD/$OUT/paths-both" >/dev/null
HWM_KB=$(awk '/VmHWM/ {print $2}' "/proc/$FP8_PID/status")
echo "memory: IMAGE_DECODE_THREADS=8, 8 connections of uncached 3000x3000 JPEG and 1400x1400 PNG resizes for ${DURATION}s:" \
  "RSS $((BASE_KB / 1024)) MiB idle, peak $((HWM_KB / 1024)) MiB ($(((HWM_KB - BASE_KB) / 1024)) MiB for the decodes and what they cached)"
echo
# Cached: the same signed URL again and again (a hit, WebP as a browser gets it) against a cached feed.
one=$(paths cover-3000.jpg 120 1 auto)
curl -sf -H 'Accept: image/webp' "http://127.0.0.1:$FP_PORT$one" -o "$OUT/hit.webp"
curl -sf "http://127.0.0.1:$FP_PORT/photos" -o /dev/null
img=$(run "hit-image" "http://127.0.0.1:$FP_PORT$one" "$FP_PID" 64 -H 'Accept: image/webp')
feed=$(run "hit-feed" "http://127.0.0.1:$FP_PORT/photos" "$FP_PID" 64)
python3 - $img $feed "$(wc -c <"$OUT/hit.webp")" <<'PY'
import sys
def ms(v):
    for unit, f in (("us", 1e-3), ("ms", 1.0), ("s", 1e3)):
        if v.endswith(unit): return float(v[: -len(unit)]) * f
    return float(v)
v = sys.argv[1:]
img, feed = (float(v[0]), ms(v[2]), float(v[3]) * 1000), (float(v[4]), ms(v[6]), float(v[7]) * 1000)
print(f"cached: a {v[8]}-byte WebP thumbnail vs the cached /photos feed (wrk -t2 -c64)")
print(f"  image {img[0]:>9.0f} req/s  p99 {img[1]:5.2f} ms  CPU {img[2]:5.2f} µs/req")
print(f"  feed  {feed[0]:>9.0f} req/s  p99 {feed[1]:5.2f} ms  CPU {feed[2]:5.2f} µs/req")
print(f"  ratio image/feed = {img[0] / feed[0]:.2f}")
PY
