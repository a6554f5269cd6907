#!/usr/bin/env bash
# libFuzzer over the HTTP request parser and every upstream adapter end to end (bytes → decode →
# normalise → encode, as the routes render, through each declaration's fuzz entry: JSON, GraphQL
# and REST answers, RSS/Atom in UTF-8 and through the single-byte charset handler) plus the date
# parsers' range property,
# and the image path (the /images query and its signature, Accept, proxied show-notes images,
# libvips on arbitrary bytes),
# with a dictionary of extreme dates, offsets and numbers (Fuzz/feeds.dict) and the real
# fixtures as seeds. Bounded in time. Usage: scripts/checks/fuzz.sh [seconds]
set -euo pipefail
cd "$(dirname "$0")/../.."
SECONDS_TO_RUN=${1:-60}
SWIFT=${SWIFT:-$(command -v swift || echo /opt/swift/usr/bin/swift)}
SCRATCH=.build/fuzz
"$SWIFT" build -c release --scratch-path "$SCRATCH" --product ParserFuzzer \
  -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library -Xswiftc -DFUZZING -Xswiftc -use-ld=lld >/dev/null
BIN=$("$SWIFT" build -c release --scratch-path "$SCRATCH" --show-bin-path)/ParserFuzzer
mkdir -p fuzz/out/corpus fuzz/out/crashes
# Seeds are copied so the committed corpus stays small; discoveries go to fuzz/out. The real
# fixtures join them, behind the byte (0x80 and up) that routes an input to the feed targets:
# every folder of recorded payloads (a new upstream's too), the artwork apart.
cp Fuzz/corpus/* fuzz/out/corpus/
for f in $(find Fixtures -mindepth 2 -maxdepth 2 -type f ! -path 'Fixtures/artwork/*' | sort); do
  { printf '\x80'; head -c 60000 "$f"; } >"fuzz/out/corpus/fixture_$(echo "$f" | tr '/.' '__')"
done
# The image path's seeds (behind 0xF0): real artwork and the hostile files, and queries.
for f in Fixtures/artwork/*; do
  { printf '\xf0'; head -c 60000 "$f"; } >"fuzz/out/corpus/fixture_$(echo "$f" | tr '/.' '__')"
done
printf '\xf0url=https://host.example/a.jpg&w=120&format=webp' >fuzz/out/corpus/image_query
"$BIN" fuzz/out/corpus -dict=Fuzz/feeds.dict -max_total_time="$SECONDS_TO_RUN" -max_len=65536 -timeout=5 -rss_limit_mb=2048 \
  -artifact_prefix=fuzz/out/crashes/ -print_final_stats=1 2>&1 | tail -n 15
echo "fuzz: no crash in ${SECONDS_TO_RUN}s"
