#!/usr/bin/env bash
# libFuzzer over the HTTP request parser and every upstream adapter end to end (bytes → decode →
# normalise → encode, as the routes render, through each declaration's fuzz entry: JSON, GraphQL
# and REST answers, RSS/Atom in UTF-8 and through the single-byte charset handler) plus the date
# parsers' range property, the image path (the /images query and its signature, Accept, proxied
# show-notes images, libvips on arbitrary bytes), and the show notes sanitizer's fast path
# against its full one (behind 0xE0–0xEF: any output of the fast path must be the full path's),
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
# The sanitizer's seeds (behind 0xE0): the committed notes_* and the fixtures' feeds' show notes.
python3 - <<'PY'
import glob, html, re
for path in sorted(glob.glob("Fixtures/rss/*.xml")):
    text = open(path, encoding="utf-8", errors="replace").read()
    for n, m in enumerate(re.finditer(r"<(description|content:encoded|summary|content)(\s[^>]*)?>(.*?)</\1>", text, re.S)):
        notes = m.group(3)
        notes = notes[9:-3] if notes.startswith("<![CDATA[") and notes.endswith("]]>") else html.unescape(notes)
        name = path.replace("/", "_").replace(".", "_")
        open(f"fuzz/out/corpus/notes_{name}_{n}", "wb").write(b"\xe0" + notes.encode())
PY
"$BIN" fuzz/out/corpus -dict=Fuzz/feeds.dict -max_total_time="$SECONDS_TO_RUN" -max_len=65536 -timeout=5 -rss_limit_mb=2048 \
  -artifact_prefix=fuzz/out/crashes/ -print_final_stats=1 2>&1 | tail -n 15
echo "fuzz: no crash in ${SECONDS_TO_RUN}s"
