#!/usr/bin/env bash
# libFuzzer over the HTTP request parser and the upstream-body parsers (JSON, RSS), bounded in time. Usage: scripts/fuzz.sh [seconds]
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_TO_RUN=${1:-60}
SWIFT=${SWIFT:-$(command -v swift || echo /opt/swift/usr/bin/swift)}
SCRATCH=.build/fuzz
"$SWIFT" build -c release --scratch-path "$SCRATCH" --product ParserFuzzer \
  -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library -Xswiftc -DFUZZING -Xswiftc -use-ld=lld >/dev/null
BIN=$("$SWIFT" build -c release --scratch-path "$SCRATCH" --show-bin-path)/ParserFuzzer
mkdir -p fuzz/out/corpus fuzz/out/crashes
# Seeds are copied so the committed corpus stays small; discoveries go to fuzz/out.
cp Fuzz/corpus/* fuzz/out/corpus/
"$BIN" fuzz/out/corpus -max_total_time="$SECONDS_TO_RUN" -max_len=65536 -timeout=5 -rss_limit_mb=2048 \
  -artifact_prefix=fuzz/out/crashes/ -print_final_stats=1 2>&1 | tail -n 15
echo "fuzz: no crash in ${SECONDS_TO_RUN}s"
