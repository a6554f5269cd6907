#!/usr/bin/env bash
# make image: the Dockerfile, unchanged, built by podman (both stages) and tagged
# feedproxy:<version> (the version the binary reports). The base images come from
# scripts/setup/base-images.sh when no registry is reachable; with --pull=never nothing is
# fetched, so a missing base image fails here rather than being looked for online.
# Docker format, not OCI: OCI image configs have no HEALTHCHECK and podman would drop it.
set -euo pipefail
cd "$(dirname "$0")/../.."
VERSION=$(sed -n 's/.*static let version = "\(.*\)".*/\1/p' Sources/Service/Configuration/Configuration.swift)
IMAGE=${IMAGE:-feedproxy:$VERSION}
scripts/setup/base-images.sh
mkdir -p .build/container
start=$(date +%s.%N)
timeout 1800 podman build --pull=never --network host --layers --format docker --tag "$IMAGE" . >.build/container/image-build.log 2>&1 \
  || { tail -40 .build/container/image-build.log; echo "image: podman build failed (log: .build/container/image-build.log)"; exit 1; }
cached=$(grep -c '^--> Using cache' .build/container/image-build.log || true)
elapsed=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN {printf "%.1f", e - s}')
# Each source change leaves ~220 MB of layers behind (the build stage's .build, the new
# binary). The build stage of this build is tagged so it stays the layer cache, then
# untagged images made from the local base images (the label they all inherit) go.
timeout 600 podman build --pull=never --network host --layers --format docker --target build \
  --tag feedproxy-build-cache:latest . >>.build/container/image-build.log 2>&1
podman image prune -f --filter label=org.feedproxy.base-inputs >/dev/null
echo "image: $IMAGE built in $elapsed s ($cached steps from cache), $(podman image inspect --format '{{.Size}}' "$IMAGE" | awk '{printf "%.1f MB", $1/1e6}')"
