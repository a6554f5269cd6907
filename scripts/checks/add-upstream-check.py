#!/usr/bin/env python3
"""docs/adding-an-upstream.md, done on a copy of the tree: a fourth upstream, a news API at
/news, added exactly as the page says, then built, tested and served.

The copy gets the files of docs/examples/news/ (the adapter, the declaration with its API
description, a recorded answer and the path it is served at, the adapter's tests) and the
one-line edits listed in EDITS below; the API document and the settings reference are
regenerated from the build; the tests that check every declaration run over
the copy; then `feedproxy --fixtures` from the copy must serve /news end to end: the answer,
a bad parameter's 400, the index, the OpenAPI operation, --help, the metrics, its own rate
limit. Nothing here touches the working tree.

With --omissions it then leaves out each edit in turn (and each recorded file, and each
regenerated document) and checks that the build, a generator or those tests fail:
no part of the walk-through can be forgotten silently. That takes a build each (minutes), so
CI runs the walk-through only.

Usage: scripts/checks/add-upstream-check.py [--omissions] [--keep]   (--keep leaves the copy)
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "examples" / "news"
SWIFT = os.environ.get("SWIFT") or shutil.which("swift") or "/opt/swift/usr/bin/swift"

# The edits the page lists, each an anchor that must occur once and what goes in its place
# (the anchor kept). When the code around an anchor changes, this fails and says which:
# update the page and this list together.
EDITS = [
    ("Sources/Service/Catalog/UpstreamCatalog.swift", ".kiva, .images]", ".kiva, .images, .news]"),
]

# Parts of the declaration's file a maintainer may drop and the build does not notice, each
# (what it is, the text taken out of the example): checked like the edits.
DECLARATION = Path("Sources/Service/Catalog/NewsUpstream.swift")
DROPPABLE = [
    ("the answer's item schema (Article)",
     '            "Article": .closedObject([\n'
     '                "title": .nullable("string"), "url": .nullable("string"), "imageUrl": .nullable("string"), "published": .timestamp,\n'
     '                "outlet": .nullable("string"),\n'
     '            ]),\n'),
]

# The tests that check every declaration (and the new adapter's own), run over the copy.
TESTS = ("UpstreamCatalogTests|NewsAdapterTests|settingsReferenceMatchesHelpExactly|theFixtureUpstreamAnswersEveryDeclaredEndpoint"
         "|committedOpenAPIDocumentMatchesTheServedOne")


STARTED = time.monotonic()


def step(message):
    print(f"add-upstream-check [{time.monotonic() - STARTED:5.0f} s]: {message}", flush=True)


def fail(message):
    print(f"add-upstream-check: FAILED: {message}", file=sys.stderr, flush=True)
    sys.exit(1)


def copy_tree(into):
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT, check=True, capture_output=True).stdout.split(b"\0")
    for name in filter(None, files):
        source = ROOT / name.decode()
        if source.is_file():
            target = into / name.decode()
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    for source in EXAMPLE.rglob("*"):
        if source.is_file():
            target = into / source.relative_to(EXAMPLE)
            if target.exists():
                fail(f"docs/examples/news/{source.relative_to(EXAMPLE)} would overwrite a file of the tree")
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


def check_page_shows_the_example():
    """The page's declaration is the example's, word for word."""
    page = (ROOT / "docs" / "adding-an-upstream.md").read_text()
    shown = page.split("```swift\n", 1)[1].split("```", 1)[0]
    shown = "".join(line[3:] if line.startswith("   ") else line for line in shown.splitlines(keepends=True))
    example = (EXAMPLE / "Sources" / "Service" / "Catalog" / "NewsUpstream.swift").read_text()
    if shown.strip() not in example:
        fail("docs/adding-an-upstream.md shows a declaration that is not docs/examples/news/Sources/Service/Catalog/NewsUpstream.swift")


def apply_edits(tree, leaving_out=None):
    """Every edit but the one numbered `leaving_out`, each over the file as the tree has it."""
    for path in sorted({path for path, _, _ in EDITS}):
        text = (ROOT / path).read_text()
        for number, (edited, anchor, replacement) in enumerate(EDITS):
            if edited != path or number == leaving_out:
                continue
            if text.count(anchor) != 1:
                fail(f"{path}: the anchor {anchor.strip()!r} occurs {text.count(anchor)} times; update EDITS and docs/adding-an-upstream.md")
            text = text.replace(anchor, replacement)
        # Written only when it changes: a rewritten file would rebuild everything that depends on it.
        if not (tree / path).exists() or (tree / path).read_text() != text:
            (tree / path).write_text(text)


def run(args, tree, quiet=False):
    done = subprocess.run(args, cwd=tree, capture_output=True, text=True)
    if done.returncode != 0 and quiet:
        raise subprocess.CalledProcessError(done.returncode, args, done.stdout + done.stderr)
    if done.returncode != 0:
        print(done.stdout[-6000:], done.stderr[-6000:], sep="\n", file=sys.stderr)
        fail(f"{' '.join(map(str, args))} exited {done.returncode}")
    return done.stdout


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(port, path):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=60) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def serve(tree, env):
    port = free_port()
    process = subprocess.Popen([str(tree / ".build" / "debug" / "feedproxy"), "--fixtures", "Fixtures", "--port", str(port)],
                               cwd=tree, env=dict(os.environ, LOG_LEVEL="warn", **env),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(600):
        try:
            if get(port, "/healthz")[0] == 200:
                return process, port
        except OSError:
            time.sleep(0.1)
    process.kill()
    fail("feedproxy --fixtures did not answer /healthz")


def check_served(tree):
    process, port = serve(tree, {})
    try:
        status, headers, body = get(port, "/news?category=science")
        answer = json.loads(body)
        if status != 200 or answer.get("source") != "news" or answer.get("count") != 3:
            fail(f"/news answered {status}: {body[:300]!r}")
        hostile = answer["items"][1]
        if hostile["url"] is not None or hostile["imageUrl"] is not None or hostile["published"] is not None:
            fail(f"/news passed a stranger's URL or date through: {hostile}")
        if headers.get("X-Cache") != "MISS" or get(port, "/news?category=science")[1].get("X-Cache") != "HIT":
            fail("/news is not cached (MISS, then HIT)")
        status, _, body = get(port, "/news?category=gossip")
        if status != 400 or json.loads(body)["error"]["code"] != "invalid_parameter":
            fail(f"/news?category=gossip answered {status}: {body[:200]!r}")
        if "/news" not in json.loads(get(port, "/")[2])["routes"]:
            fail("the index does not list /news")
        operation = json.loads(get(port, "/openapi.json")[2])["paths"].get("/news", {}).get("get", {})
        if operation.get("operationId") != "listNews" or operation.get("tags") != ["News"]:
            fail(f"/openapi.json: /news is {operation.get('operationId')} under {operation.get('tags')}")
        metrics = get(port, "/metrics")[2].decode()
        if 'source="news"' not in metrics:
            fail("/metrics has no series for source=\"news\"")
    finally:
        process.kill()
        process.wait()
    help_text = run([str(tree / ".build" / "debug" / "feedproxy"), "--help"], tree)
    for variable in ["NEWS_API_URL", "RATE_LIMIT_NEWS_PER_MIN", "CACHE_TTL_NEWS"]:
        if variable not in help_text:
            fail(f"--help does not list {variable}")
    # Its own rate limit reaches the upstream client: at one request a minute, the second
    # category's miss would wait a minute for a token, so it is refused with Retry-After.
    process, port = serve(tree, {"RATE_LIMIT_NEWS_PER_MIN": "1", "CLIENT_MISS_RATE_PER_MIN": "0"})
    try:
        first = get(port, "/news?category=science")[0]
        status, headers, _ = get(port, "/news?category=sports")
        if first != 200 or status != 503 or "Retry-After" not in headers:
            fail(f"RATE_LIMIT_NEWS_PER_MIN=1: two misses answered {first} and {status}")
    finally:
        process.kill()
        process.wait()


def prune_package(tree):
    """The copy builds what TESTS need: the other test targets and the bench and fuzz
    executables leave its Package.swift (about half of a cold build)."""
    package = tree / "Package.swift"
    kept = []
    for line in package.read_text().splitlines(keepends=True):
        target = line.split('name: "', 1)[1].split('"', 1)[0] if 'name: "' in line else None
        if (".testTarget(" in line and target not in ("FeedsTests", "ServiceTests", "EndToEndTests")) or '"ParserFuzzer"' in line or '"FeedBench"' in line:
            continue
        kept.append(line)
    package.write_text("".join(kept))


GENERATED = {"the settings reference": ("scripts/generate/settings-reference.py", "docs/configuration.md"),
             "the API document": ("scripts/generate/openapi.py", "docs/openapi.json")}


def build_and_test(tree, quiet=False, stale=None):
    """Builds, regenerates the settings reference and the API document from the build (but
    for `stale`, one of GENERATED left as the tree had it), runs TESTS."""
    run([SWIFT, "build", "--build-tests"], tree, quiet)
    for name, (script, written) in GENERATED.items():
        if name == stale:
            (tree / written).write_text((ROOT / written).read_text())
        else:
            run([sys.executable, script], tree, quiet)
    return run([SWIFT, "test", "--skip-build", "--filter", TESTS], tree, quiet)


def what_failed(error):
    command = " ".join(map(str, error.cmd))
    if "scripts/generate/" in command:
        return "the generator " + command.split("scripts/generate/")[1]
    if " build" in command:
        errors = sorted({line.split(": error: ")[1][:120] for line in error.output.splitlines() if ": error: " in line})
        return "the build: " + "; ".join(errors[:2])
    failed = sorted({line.split("Test ")[1].split("(")[0] for line in error.output.splitlines() if line.startswith("✘ Test ") and "recorded an issue" in line})
    return "the tests " + ", ".join(failed)


def check_omissions(tree):
    """Each part left out must stop the build or a test."""
    example_files = sorted(p.relative_to(EXAMPLE) for p in EXAMPLE.rglob("*") if p.is_file())
    parts = ([(f"edit {n + 1} ({path})", n) for n, (path, _, _) in enumerate(EDITS)]
             + [(str(f), f) for f in example_files if f.parts[0] == "Fixtures"] + [(name, name) for name in GENERATED]
             + [(name, ("drop", text)) for name, text in DROPPABLE])
    silent = []
    for name, part in parts:
        apply_edits(tree, leaving_out=part if isinstance(part, int) else None)
        if isinstance(part, Path):
            (tree / part).unlink()
        if isinstance(part, tuple):
            declaration = (EXAMPLE / DECLARATION).read_text()
            if declaration.count(part[1]) != 1:
                fail(f"{name} is not once in docs/examples/news/{DECLARATION}; update DROPPABLE")
            (tree / DECLARATION).write_text(declaration.replace(part[1], ""))
        try:
            build_and_test(tree, quiet=True, stale=part if part in GENERATED else None)
            silent.append(name)
            step(f"leaving out {name}: NOTHING FAILED")
        except subprocess.CalledProcessError as e:
            step(f"leaving out {name}: caught by {what_failed(e)}")
        finally:
            if isinstance(part, Path):
                shutil.copy2(EXAMPLE / part, tree / part)
            if isinstance(part, tuple):
                shutil.copy2(EXAMPLE / DECLARATION, tree / DECLARATION)
    apply_edits(tree)
    if silent:
        fail("left out without a failure: " + ", ".join(silent))


def main():
    keep = "--keep" in sys.argv[1:]
    check_page_shows_the_example()
    tree = Path(tempfile.mkdtemp(prefix="feedproxy-news-"))
    try:
        step(f"copying the tree to {tree}, adding docs/examples/news/ and {len(EDITS)} edits")
        copy_tree(tree)
        prune_package(tree)
        apply_edits(tree)
        step(f"building the copy, then running the declaration tests over it ({TESTS})")
        out = build_and_test(tree)
        if "NewsAdapterTests" not in out:
            fail("the news adapter's tests did not run")
        step("serving /news from the copy")
        check_served(tree)
        step("passed: /news added by the walk-through builds, passes the declaration tests and is served end to end")
        if "--omissions" in sys.argv[1:]:
            check_omissions(tree)
            step("passed: every part left out is caught")
    finally:
        if keep:
            step(f"the copy stays at {tree}")
        else:
            shutil.rmtree(tree, ignore_errors=True)


if __name__ == "__main__":
    main()
