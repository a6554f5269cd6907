#!/usr/bin/env bash
# Builds, with no image registry, the two images the Dockerfile starts FROM, tagged with
# exactly the names it uses (podman keeps locally made images under localhost/, and an
# unqualified FROM finds them there):
#   debian:bookworm-slim  debootstrap --variant=minbase from Debian's packages, with the
#                         slim variant's exclusions (docs but copyright files, man/info
#                         pages, locales, apt lists and caches), imported as one layer;
#   swift:6.3-bookworm    that image + the official Swift image's Debian packages + the
#                         toolchain installed on this machine, in /usr
#                         (scripts/setup/base-images/swift.Containerfile says what differs).
# Each image carries a label with the hash of its inputs (this script, the Containerfile,
# the suite and mirror, the toolchain's version); an image with the same hash is kept, so
# a rebuild happens only when an input changes. An image of that name WITHOUT the label is
# taken to be the real upstream image (pulled on a machine with registry access) and is
# never replaced. BASE_IMAGES_REBUILD=1 forces a rebuild. On a machine with registry
# access, BASE_IMAGES=pull pulls the real upstream images instead (and drops local ones of
# the same names), and nothing else changes.
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/setup/podman-setup.sh

LABEL_KEY=org.feedproxy.base-inputs
WORK=.build/base-images
SWIFT=${SWIFT:-$(command -v swift || echo /opt/swift/usr/bin/swift)}
# The toolchain root: the directory holding usr/bin/swift (e.g. /opt/swift).
TOOLCHAIN=${SWIFT_TOOLCHAIN:-$(dirname "$(dirname "$(dirname "$(readlink -f "$SWIFT")")")")}
[ -x "$TOOLCHAIN/usr/bin/swift" ] || { echo "base-images: no toolchain at $TOOLCHAIN (set SWIFT_TOOLCHAIN)"; exit 1; }

DEBIAN_IMAGE=$(awk '/^FROM .* AS runtime/ {print $2}' Dockerfile)
SWIFT_IMAGE=$(awk '/^FROM .* AS build/ {print $2}' Dockerfile)
[[ $DEBIAN_IMAGE == debian:*-slim && $SWIFT_IMAGE == swift:*-* ]] \
  || { echo "base-images: unexpected FROM lines in the Dockerfile ($SWIFT_IMAGE, $DEBIAN_IMAGE)"; exit 1; }
SUITE=${DEBIAN_IMAGE#debian:}
SUITE=${SUITE%-slim}
SWIFT_TAG=${SWIFT_IMAGE#swift:}
[ "${SWIFT_TAG#*-}" = "$SUITE" ] || { echo "base-images: $SWIFT_IMAGE is not on $SUITE like $DEBIAN_IMAGE"; exit 1; }
SWIFT_VERSION=$("$TOOLCHAIN/usr/bin/swift" --version 2>/dev/null | sed -n 's/.*Swift version \([0-9.]*\).*/\1/p' | head -1)
case "$SWIFT_VERSION." in
  "${SWIFT_TAG%%-*}".*) ;;
  *) echo "base-images: the toolchain at $TOOLCHAIN is Swift $SWIFT_VERSION, not ${SWIFT_TAG%%-*} as $SWIFT_IMAGE says"; exit 1 ;;
esac

MIRROR=$(awk '/^URIs:/ && $2 ~ /debian\/?$/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
MIRROR=${MIRROR:-http://deb.debian.org/debian}

label_of() { podman image inspect --format "{{ index .Config.Labels \"$LABEL_KEY\" }}" "$1" 2>/dev/null || true; }
exists() { podman image exists "$1"; }
# true when the image must be (re)built; prints why.
stale() {
  local image=$1 key=$2 have
  [ "${BASE_IMAGES_REBUILD:-0}" = 1 ] && { echo "base-images: $image: rebuild forced"; return 0; }
  exists "$image" || { echo "base-images: $image: not present, building"; return 0; }
  have=$(label_of "$image")
  case "$have" in
    "$key") echo "base-images: $image: up to date ($LABEL_KEY=$key)"; return 1 ;;
    ""|"<no value>") echo "base-images: $image: present without $LABEL_KEY (the upstream image), kept"; return 1 ;;
    *) echo "base-images: $image: inputs changed ($have -> $key), rebuilding"; return 0 ;;
  esac
}

DEBIAN_KEY=$( { cat "$0"; echo "$SUITE $MIRROR"; } | sha256sum | cut -c1-16)
SWIFT_KEY=$( { echo "$DEBIAN_KEY"; cat scripts/setup/base-images/swift.Containerfile; echo "$SWIFT_VERSION"; "$TOOLCHAIN/usr/bin/swift" --version 2>&1; } | sha256sum | cut -c1-16)

build_debian() {
  local root="$WORK/debian-$SUITE-slim" start=$SECONDS
  command -v debootstrap >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null; }
  mkdir -p "$WORK"
  rm -rf "$root"
  timeout 900 debootstrap --variant=minbase "$SUITE" "$root" "$MIRROR" >"$WORK/debootstrap.log" 2>&1 \
    || { tail -20 "$WORK/debootstrap.log"; exit 1; }
  # The slim variant: dpkg leaves these paths out of every later install, and what the
  # first install put there goes now.
  cat >"$root/etc/dpkg/dpkg.cfg.d/docker" <<'EOF'
# slim: no documentation (copyright files stay), manual or info pages, or translations
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
EOF
  find "$root/usr/share/doc" -mindepth 1 ! -type d ! -name copyright -delete
  find "$root/usr/share/doc" -mindepth 1 -type d -empty -delete
  find "$root/usr/share/locale" -mindepth 1 -maxdepth 1 ! -name locale.alias -exec rm -rf {} +
  rm -rf "$root"/usr/share/{man,groff,info,lintian,linda}/*
  # apt as in container images: no downloaded .debs or package caches kept, no translations.
  cat >"$root/etc/apt/apt.conf.d/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF
  echo 'Acquire::Languages "none";' >"$root/etc/apt/apt.conf.d/docker-no-languages"
  echo 'APT::AutoRemove::SuggestsImportant "false";' >"$root/etc/apt/apt.conf.d/docker-autoremove-suggests"
  printf '#!/bin/sh\n# no services are started inside an image build\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
  chmod 755 "$root/usr/sbin/policy-rc.d"
  rm -f "$root/etc/apt/sources.list"
  cat >"$root/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $MIRROR
Suites: $SUITE $SUITE-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: ${MIRROR%/debian}/debian-security
Suites: $SUITE-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb \
    "$root"/var/cache/debconf/*-old "$root"/var/lib/dpkg/*-old "$root"/var/log/* "$root"/tmp/* \
    "${root:?}"/dev/* "${root:?}"/proc/* "${root:?}"/sys/*
  : >"$root/etc/hostname"
  : >"$root/etc/resolv.conf"
  tar --numeric-owner --xattrs -C "$root" -c . | podman import -q \
    --change 'CMD ["bash"]' \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change "LABEL $LABEL_KEY=$DEBIAN_KEY" \
    --change "LABEL org.opencontainers.image.description=\"$DEBIAN_IMAGE made locally by scripts/setup/base-images.sh: debootstrap minbase $SUITE, slim exclusions\"" \
    --message "debootstrap --variant=minbase $SUITE $MIRROR, slim" \
    - "$DEBIAN_IMAGE" >/dev/null
  rm -rf "$root"
  echo "base-images: $DEBIAN_IMAGE built in $((SECONDS - start)) s, $(podman image inspect --format '{{.Size}}' "$DEBIAN_IMAGE" | awk '{printf "%.1f MB", $1/1e6}')"
}

build_swift() {
  local start=$SECONDS
  timeout 1800 podman build --pull=never --network host --layers \
    --file scripts/setup/base-images/swift.Containerfile \
    --label "$LABEL_KEY=$SWIFT_KEY" \
    --label "org.opencontainers.image.description=$SWIFT_IMAGE made locally by scripts/setup/base-images.sh: $DEBIAN_IMAGE + the official image's packages + Swift $SWIFT_VERSION from $TOOLCHAIN" \
    --tag "$SWIFT_IMAGE" "$TOOLCHAIN" >"$WORK/swift-image.log" 2>&1 \
    || { tail -30 "$WORK/swift-image.log"; exit 1; }
  echo "base-images: $SWIFT_IMAGE built in $((SECONDS - start)) s, $(podman image inspect --format '{{.Size}}' "$SWIFT_IMAGE" | awk '{printf "%.1f MB", $1/1e6}'), $(timeout 60 podman run --rm --network host "$SWIFT_IMAGE" swift --version 2>&1 | head -1)"
}

if [ "${BASE_IMAGES:-auto}" = pull ]; then
  for image in "$DEBIAN_IMAGE" "$SWIFT_IMAGE"; do
    timeout 1800 podman pull "docker.io/library/$image"
    case "$(label_of "localhost/$image")" in
      "" | "<no value>") ;;
      *) podman untag "localhost/$image" ;;
    esac
  done
  exit 0
fi

mkdir -p "$WORK"
if stale "$DEBIAN_IMAGE" "$DEBIAN_KEY"; then build_debian; fi
# SWIFT_KEY includes DEBIAN_KEY: new debian inputs rebuild the Swift image too.
if stale "$SWIFT_IMAGE" "$SWIFT_KEY"; then build_swift; fi
