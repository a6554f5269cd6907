#!/usr/bin/env python3
"""docs/adding-an-upstream.md, done on a copy of the tree for any upstream written the way the
page says: an example directory holding the new files as they go in the tree (the adapter, the
declaration in Sources/Service/Catalog/, recorded answers and the paths they are served at,
the adapter's tests) and `API-section.md`, the route's section of docs/API.md.

The copy gets those files, the one line in the catalog (`.name` at the end of
`UpstreamCatalog.all`, the name read from the declaration) and the section (after the last
operation's); the API document and the settings reference are regenerated from the build;
the tests that check every declaration and the example's own tests run over the copy; then
`feedproxy --fixtures` from the copy must serve each operation the declaration adds (found by
comparing the copy's /openapi.json with docs/openapi.json): its required parameters' examples
answer 200 from the upstream and then from the cache, a value outside a parameter's enum or
range answers 400, the index lists it, /metrics counts its source, --help lists its settings,
and a published rate limit of one a minute refuses a second miss with Retry-After.

With --omissions it then leaves out each part in turn and checks that the build, a generator or
those tests fail: the catalog line, the docs section, each file, each regenerated document, and
the docs section's text (its heading kept), in the declaration each setting, each schema, each parameter description, the rate budget, the
fuzz entry's recorded answers and what the fuzz entry reads; and the adapter's upstream name
(asking under another name). The parts are found in the declaration's text, so this works for whatever upstream the example adds.

Usage: scripts/checks/add-upstream-check.py [--example DIR] [--omissions] [--keep]
       (DIR default docs/examples/news; --keep leaves the copy)
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
from loopback import free_port  # noqa: E402  (the scripts' shared helpers)

ROOT = Path(__file__).resolve().parents[2]
SWIFT = os.environ.get("SWIFT") or shutil.which("swift") or "/opt/swift/usr/bin/swift"
CATALOG = Path("Sources/Service/Catalog/UpstreamCatalog.swift")
API_PAGE = Path("docs/API.md")
SECTION = "API-section.md"
GENERATED = {"the settings reference": ("scripts/generate/settings-reference.py", "docs/configuration.md"),
             "the API document": ("scripts/generate/openapi.py", "docs/openapi.json")}
# The tests that check every declaration, run over the copy with the example's own.
DECLARATION_TESTS = ["UpstreamCatalogTests", "settingsReferenceMatchesHelpExactly", "theFixtureUpstreamAnswersEveryDeclaredEndpoint",
                     "everyUpstreamRouteAnswersItemsFromTheFixtureUpstream", "committedOpenAPIDocumentMatchesTheServedOne",
                     "routeTablesMatchTheServedDocument"]

# A declaration however Swift lets it be written (`= UpstreamDeclaration(`, `: UpstreamDeclaration = .init(`, …),
# as UpstreamCatalogTests.everyDeclaredUpstreamIsInTheCatalog reads it.
DECLARATION = re.compile(r"static\s+(?:let|var)\s+(\w+)\s*(?::\s*UpstreamDeclaration\s*)?=\s*(?:UpstreamDeclaration)?(?:\.init)?\s*\(")

STARTED = time.monotonic()


def step(message):
    print(f"add-upstream-check [{time.monotonic() - STARTED:5.0f} s]: {message}", flush=True)


def fail(message):
    print(f"add-upstream-check: FAILED: {message}", file=sys.stderr, flush=True)
    sys.exit(1)


# --- Reading Swift well enough to find a declaration's parts -------------------------------

def closing(text, start):
    """The index just past the bracket that closes the one at `start`, skipping string
    literals and comments."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    stack = []
    i = start
    while i < len(text):
        c = text[i]
        if text.startswith("//", i):
            i = text.find("\n", i)
            i = len(text) if i < 0 else i
            continue
        if c == '"':
            i = closing_quote(text, i)
            continue
        if c in pairs:
            stack.append(pairs[c])
        elif stack and c == stack[-1]:
            stack.pop()
            if not stack:
                return i + 1
        i += 1
    fail(f"unbalanced brackets from offset {start}")


def elements(text, start):
    """The spans of the comma-separated elements inside the bracket at `start`."""
    end = closing(text, start) - 1
    spans, i, begin = [], start + 1, start + 1
    while i < end:
        c = text[i]
        if c in "([{":
            i = closing(text, i)
            continue
        if text.startswith("//", i):
            i = text.find("\n", i)
            i = end if i < 0 else i
            continue
        if c == '"':
            i = closing_quote(text, i)
            continue
        if c == ",":
            spans.append((begin, i))
            begin = i + 1
        i += 1
    if text[begin:end].strip():
        spans.append((begin, end))
    return [(a + len(text[a:b]) - len(text[a:b].lstrip()), b) for a, b in spans]


def closing_quote(text, i):
    if text.startswith('"""', i):
        return text.find('"""', i + 3) + 3
    i += 1
    while i < len(text) and text[i] != '"':
        i += 2 if text[i] == "\\" else 1
    return i + 1


def without(text, span):
    """`text` with the element at `span` and its comma taken out of its list."""
    a, b = span
    rest = text[b:]
    if rest.lstrip().startswith(","):
        b += len(rest) - len(rest.lstrip()) + 1
    else:
        before = text[:a].rstrip()
        if before.endswith(","):
            a = len(before) - 1
    return text[:a] + text[b:]


def argument(text, call_start, label):
    """The span of `label: value` among the arguments of the call whose `(` is at call_start."""
    for a, b in elements(text, call_start):
        if re.match(rf"{label}\s*:", text[a:b]):
            return a, b
    return None


class Example:
    def __init__(self, directory):
        self.dir = directory.resolve()
        self.files = sorted(p.relative_to(self.dir) for p in self.dir.rglob("*") if p.is_file() and p.name != SECTION)
        declarations = [f for f in self.files if f.parts[:3] == ("Sources", "Service", "Catalog") and DECLARATION.search((self.dir / f).read_text())]
        if len(declarations) != 1:
            fail(f"{directory}: one declaration in Sources/Service/Catalog/ expected, found {[str(f) for f in declarations]}")
        self.declaration = declarations[0]
        self.text = (self.dir / self.declaration).read_text()
        self.name = DECLARATION.search(self.text).group(1)
        self.section = (self.dir / SECTION).read_text() if (self.dir / SECTION).exists() else None
        if self.section is None:
            fail(f"{directory}/{SECTION}: the route's section of docs/API.md is part of the example")
        self.tests = sorted({m for f in self.files if f.parts[0] == "Tests" for m in re.findall(r"@Suite(?:\([^)]*\))?\s+struct\s+(\w+)", (self.dir / f).read_text())})
        self.adapters = [f for f in self.files if f.parts[:3] == ("Sources", "Feeds", "Adapters")]
        self.variables = sorted(set(re.findall(r'"--[a-z0-9-]+",\s*"([A-Z][A-Z0-9_]+)"', self.text)))
        rate = re.search(r'RateLimitSetting\(\s*"--[a-z0-9-]+",\s*"([A-Z0-9_]+)"', self.text)
        self.rate_variable = rate.group(1) if rate else None

    def declaration_parts(self):
        """(what it is, the declaration's text without it) for each part the compiler may not see missing."""
        text = self.text
        call = text.index("UpstreamDeclaration(") + len("UpstreamDeclaration")
        parts = []
        settings = argument(text, call, "settings")
        if settings:
            bracket = text.index("[", settings[0])
            for span in elements(text, bracket):
                env = re.search(r'"([A-Z][A-Z0-9_]+)"', text[span[0]:span[1]])
                parts.append((f"the setting {env.group(1) if env else text[span[0]:span[0] + 40]}", without(text, span)))
        schemas = argument(text, call, "schemas")
        if schemas:
            bracket = text.index("[", schemas[0])
            for span in elements(text, bracket):
                name = re.match(r'"(\w+)"', text[span[0]:span[1]])
                parts.append((f"the schema {name.group(1) if name else '?'}", without(text, span)))
        for m in re.finditer(r"\.(query|required|repeatable)\(", text):
            if re.search(r"=\s*(OpenAPIValue)?\s*$", text[:m.start()]):
                continue  # a definition, used by name elsewhere
            span = (m.start(), closing(text, m.end() - 1))
            name = re.match(r'\s*"(\w+)"', text[m.end():])
            parts.append((f"the parameter description {name.group(1) if name else '?'}", without(text, span)))
        rate = argument(text, call, "rateLimit")
        if rate:
            parts.append(("the rate budget", without(text, rate)))
        fuzz = re.search(r"FuzzEntry\(reading:\s*\[", text)
        if fuzz:
            bracket = fuzz.end() - 1
            parts.append(("the fuzz entry's recorded answers", text[:bracket + 1] + text[closing(text, bracket) - 1:]))
            brace = text.index("{", closing(text, text.index("(", fuzz.start())))
            parts.append(("what the fuzz entry reads", text[:brace] + "{ _ in FuzzRun() }" + text[closing(text, brace):]))
        return parts


# --- The copy ---------------------------------------------------------------------------------

def copy_tree(example, into, files_only=False):
    files = [] if files_only else subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT, check=True, capture_output=True).stdout.split(b"\0")
    for name in filter(None, files):
        source = ROOT / name.decode()
        if source.is_file():
            target = into / name.decode()
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    for name in example.files:
        target = into / name
        if target.exists():
            fail(f"{name} of the example would overwrite a file of the tree")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(example.dir / name, target)


def catalog_with(text, name):
    line = re.search(r"static let all: \[UpstreamDeclaration\] = \[([^\]]*)\]", text)
    if not line:
        fail(f"{CATALOG}: no `static let all: [UpstreamDeclaration] = [...]` line; update this script and docs/adding-an-upstream.md")
    return text[:line.end(1)] + f", .{name}" + text[line.end(1):]


def page_with(text, section):
    """docs/API.md with `section` after the last operation's section."""
    headings = [m.start() for m in re.finditer(r"^## ", text, re.M)]
    operations = [h for h in headings if text.startswith("## `GET ", h)]
    if not operations:
        fail("docs/API.md has no `## `GET …` section to put the new one after")
    following = [h for h in headings if h > operations[-1]]
    at = following[0] if following else len(text)
    return text[:at] + section.rstrip("\n") + "\n\n" + text[at:]


def write_if_changed(path, text):
    # A rewritten file would rebuild everything that depends on it.
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def apply_edits(example, tree, leaving_out=None):
    catalog = (ROOT / CATALOG).read_text()
    write_if_changed(tree / CATALOG, catalog if leaving_out == "the catalog line" else catalog_with(catalog, example.name))
    page = (ROOT / API_PAGE).read_text()
    section = example.section.splitlines()[0] + "\n" if leaving_out == "the docs/API.md section's text" else example.section
    write_if_changed(tree / API_PAGE, page if leaving_out == "the docs/API.md section" else page_with(page, section))


def run(args, tree, quiet=False):
    done = subprocess.run(args, cwd=tree, capture_output=True, text=True)
    if done.returncode != 0 and quiet:
        raise subprocess.CalledProcessError(done.returncode, args, done.stdout + done.stderr)
    if done.returncode != 0:
        print(done.stdout[-6000:], done.stderr[-6000:], sep="\n", file=sys.stderr)
        fail(f"{' '.join(map(str, args))} exited {done.returncode}")
    return done.stdout


def prune_package(tree):
    """The copy builds what the tests need: the other test targets and the bench and fuzz
    executables leave its Package.swift (about half of a cold build)."""
    package = tree / "Package.swift"
    text = package.read_text()
    # Test targets other than those three go, each whole however many lines it spans.
    for start in reversed([m.start() for m in re.finditer(r"\.testTarget\(", text)]):
        end = closing(text, start + len(".testTarget"))
        name = re.search(r'name:\s*"(\w+)"', text[start:end])
        if name and name.group(1) in ("FeedsTests", "ServiceTests", "EndToEndTests"):
            continue
        end += len(text[end:]) - len(text[end:].lstrip(","))
        line_start = text.rfind("\n", 0, start) + 1
        line_end = text.find("\n", end)
        if text[line_start:start].strip() == "" and text[end:line_end].strip() == "":
            start, end = line_start, line_end + 1
        text = text[:start] + text[end:]
    kept = [line for line in text.splitlines(keepends=True) if '"ParserFuzzer"' not in line and '"FeedBench"' not in line]
    package.write_text("".join(kept))


def build_and_test(example, tree, quiet=False, stale=None):
    """Builds, regenerates the settings reference and the API document from the build (but
    for `stale`, one of GENERATED left as the tree had it), runs the tests."""
    run([SWIFT, "build", "--build-tests"], tree, quiet)
    for name, (script, written) in GENERATED.items():
        if name == stale:
            (tree / written).write_text((ROOT / written).read_text())
        else:
            run([sys.executable, script], tree, quiet)
    return run([SWIFT, "test", "--skip-build", "--filter", "|".join(DECLARATION_TESTS + example.tests)], tree, quiet)


# --- Serving it -------------------------------------------------------------------------------

def get(port, path):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=60) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def serve(tree, env):
    port = free_port()
    process = subprocess.Popen([str(tree / ".build" / "debug" / "feedproxy"), "--fixtures", "Fixtures", "--port", str(port)],
                               cwd=tree, env=dict(os.environ, LOG_LEVEL="warn", **env), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(600):
        try:
            if get(port, "/healthz")[0] == 200:
                return process, port
        except OSError:
            time.sleep(0.1)
    process.kill()
    fail("feedproxy --fixtures did not answer /healthz")


def request_for(path, operation, changes=None):
    """The operation's path and query from its parameters' examples (required ones, and any in
    `changes`, a name → value map)."""
    query = {}
    for parameter in operation.get("parameters", []):
        name = parameter.get("name")
        if parameter.get("in") == "path":
            path = path.replace("{" + name + "}", urllib.parse.quote(str(parameter.get("example", "")), safe=""))
        elif parameter.get("in") == "query" and parameter.get("required"):
            query[name] = str(parameter.get("example", ""))
    query.update(changes or {})
    return path + ("?" + urllib.parse.urlencode(query) if query else "")


def out_of_range(parameter):
    """A value its description rules out, or None."""
    schema = parameter.get("schema", {})
    if "enum" in schema:
        return "not-one-of-these"
    if schema.get("type") == "integer" and "maximum" in schema:
        return str(schema["maximum"] + 1)
    if schema.get("type") == "integer" and "minimum" in schema:
        return str(schema["minimum"] - 1)
    return None


def two_values(parameter):
    """Two values its description allows, or None (two misses with different cache keys)."""
    schema = parameter.get("schema", {})
    if len(schema.get("enum", [])) >= 2:
        return [str(v) for v in schema["enum"][:2]]
    if schema.get("type") == "integer" and schema.get("maximum", 0) > schema.get("minimum", 0):
        return [str(schema.get("minimum", 1)), str(schema["maximum"])]
    return None


def check_served(example, tree):
    before = set(json.loads((ROOT / "docs" / "openapi.json").read_text())["paths"])
    process, port = serve(tree, {})
    try:
        paths = json.loads(get(port, "/openapi.json")[2])["paths"]
        new = {path: item for path, item in paths.items() if path not in before}
        added = {path: item["get"] for path, item in new.items() if "get" in item}
        if not new:
            fail("the copy's /openapi.json has no operation docs/openapi.json lacks")
        index = json.loads(get(port, "/")[2])["routes"]
        for path, item in new.items():
            if "post" in item:
                check_form(port, path, item["post"], index)
        for path, operation in added.items():
            target = request_for(path, operation)
            status, headers, body = get(port, target)
            if status != 200:
                fail(f"{target} answered {status}: {body[:300]!r}")
            answer = json.loads(body)
            source = answer.get("source")
            if not (answer.get("count") or answer.get("items") or answer.get("item")):
                fail(f"{target} answered no item from the fixture upstream: {body[:300]!r}")
            if headers.get("X-Cache") != "MISS" or get(port, target)[1].get("X-Cache") != "HIT":
                fail(f"{target} is not cached (MISS, then HIT)")
            if not source or f'source="{source}"' not in get(port, "/metrics")[2].decode():
                fail(f"{target}: /metrics has no series for its source {source!r}")
            if not any(route == path or route.startswith(path + "?") for route in index):
                fail(f"the index does not list {path}")
            for parameter in operation.get("parameters", []):
                bad = out_of_range(parameter) if parameter.get("in") == "query" else None
                if bad is None:
                    continue
                status, _, body = get(port, request_for(path, operation, {parameter["name"]: bad}))
                if status != 400 or json.loads(body)["error"]["code"] != "invalid_parameter":
                    fail(f"{path}?{parameter['name']}={bad} answered {status}: {body[:200]!r}")
            step(f"served {target}: 200 (MISS, HIT), source {source}, its parameters' bad values 400")
    finally:
        process.kill()
        process.wait()
    help_text = run([str(tree / ".build" / "debug" / "feedproxy"), "--help"], tree)
    for variable in example.variables:
        if f"({variable})" not in help_text:
            fail(f"--help does not list {variable}")
    if example.rate_variable:
        check_rate_limit(example, tree, added)


def post(port, path, body, content_type="application/x-www-form-urlencoded"):
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=body.encode(), headers={"Content-Type": content_type}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=60) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def check_form(port, path, operation, index):
    """A POST of a form (its fields' examples) answers items, as a GET would; another body type is a 415."""
    schema = operation.get("requestBody", {}).get("content", {}).get("application/x-www-form-urlencoded", {}).get("schema", {})
    fields = {name: str(field.get("example", "")) for name, field in schema.get("properties", {}).items() if name in schema.get("required", [])}
    if not fields:
        fail(f"POST {path} takes no form field with an example")
    form = urllib.parse.urlencode(fields)
    status, _, body = post(port, path, form)
    answer = json.loads(body) if status == 200 else {}
    if status != 200 or not (answer.get("count") or answer.get("items") or answer.get("item")):
        fail(f"POST {path} ({form}) answered {status}: {body[:300]!r}")
    if post(port, path, form, "text/plain")[0] != 415:
        fail(f"POST {path} as text/plain is not a 415")
    if not any(route == path or route.startswith(path + "?") for route in index):
        fail(f"the index does not list {path}")
    step(f"served POST {path} ({form}): 200 with items, text/plain 415")


def check_rate_limit(example, tree, added):
    """At one request a minute, a second miss would wait a minute for a token: refused with Retry-After."""
    for path, operation in added.items():
        for parameter in operation.get("parameters", []):
            values = two_values(parameter) if parameter.get("in") == "query" and not parameter.get("required") else None
            if not values:
                continue
            process, port = serve(tree, {example.rate_variable: "1", "CLIENT_MISS_RATE_PER_MIN": "0"})
            try:
                first = get(port, request_for(path, operation, {parameter["name"]: values[0]}))[0]
                status, headers, _ = get(port, request_for(path, operation, {parameter["name"]: values[1]}))
                if first != 200 or status != 503 or "Retry-After" not in headers:
                    fail(f"{example.rate_variable}=1: two misses of {path} answered {first} and {status}")
            finally:
                process.kill()
                process.wait()
            step(f"{example.rate_variable}=1: a second miss of {path} is refused with Retry-After")
            return
    step(f"{example.rate_variable}: no parameter gives two cache keys; left to everyRateLimitReachesTheUpstreamClientsBudget")


# --- Leaving parts out ------------------------------------------------------------------------

def what_failed(error):
    command = " ".join(map(str, error.cmd))
    if "scripts/generate/" in command:
        return "the generator " + command.split("scripts/generate/")[1]
    if " build" in command:
        errors = sorted({line.split(": error: ")[1][:120] for line in error.output.splitlines() if ": error: " in line})
        return "the build: " + "; ".join(errors[:2])
    failed = sorted({line.split("Test ")[1].split("(")[0] for line in error.output.splitlines() if line.startswith("✘ Test ") and "recorded an issue" in line})
    return "the tests " + ", ".join(failed)


def check_omissions(example, tree):
    """Each part left out must stop the build, a generator or a test."""
    parts = [("the catalog line", "edit"), ("the docs/API.md section", "edit"), ("the docs/API.md section's text", "edit")]
    parts += [(str(f), f) for f in example.files]
    parts += [(name, name) for name in GENERATED]
    parts += [(name, ("declaration", text)) for name, text in example.declaration_parts()]
    # The adapter asking its upstream under another name: no rate budget, queue or cache counters of its own.
    for adapter in example.adapters:
        text = (example.dir / adapter).read_text()
        if "upstream: source" in text:
            parts.append((f"the upstream name in {adapter.name}", ("file", adapter, text.replace("upstream: source", 'upstream: "renamed"'))))
    silent = []
    for name, part in parts:
        apply_edits(example, tree, leaving_out=name if part == "edit" else None)
        if isinstance(part, Path):
            (tree / part).unlink()
        if isinstance(part, tuple):
            (tree / (part[1] if part[0] == "file" else example.declaration)).write_text(part[-1])
        try:
            build_and_test(example, tree, quiet=True, stale=part if part in GENERATED else None)
            silent.append(name)
            step(f"leaving out {name}: NOTHING FAILED")
        except subprocess.CalledProcessError as e:
            step(f"leaving out {name}: caught by {what_failed(e)}")
        finally:
            if isinstance(part, Path):
                shutil.copy2(example.dir / part, tree / part)
            if isinstance(part, tuple):
                changed = part[1] if part[0] == "file" else example.declaration
                shutil.copy2(example.dir / changed, tree / changed)
    apply_edits(example, tree)
    if silent:
        fail("left out without a failure: " + ", ".join(silent))


def check_page_shows_the_example(example):
    """docs/adding-an-upstream.md shows the news example's declaration word for word."""
    if example.dir != (ROOT / "docs" / "examples" / "news").resolve():
        return
    page = (ROOT / "docs" / "adding-an-upstream.md").read_text()
    shown = page.split("```swift\n", 1)[1].split("```", 1)[0]
    shown = "".join(line[3:] if line.startswith("   ") else line for line in shown.splitlines(keepends=True))
    if shown.strip() not in example.text:
        fail(f"docs/adding-an-upstream.md shows a declaration that is not {example.declaration} of the example")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--example", type=Path, default=ROOT / "docs" / "examples" / "news")
    parser.add_argument("--omissions", action="store_true")
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--then", type=Path, action="append", default=[],
                        help="another example, added, built, tested and served in the same copy afterwards (its build is incremental)")
    arguments = parser.parse_args()
    example = Example(arguments.example)
    check_page_shows_the_example(example)
    tree = Path(tempfile.mkdtemp(prefix=f"feedproxy-{example.name}-"))
    try:
        step(f"copying the tree to {tree}, adding {arguments.example}: .{example.name} ({example.declaration}), {len(example.files)} files")
        copy_tree(example, tree)
        prune_package(tree)
        apply_edits(example, tree)
        step(f"building the copy, then running the declaration tests and {', '.join(example.tests) or 'no tests of its own'} over it")
        out = build_and_test(example, tree)
        for suite in example.tests:
            if f"Suite {suite} passed" not in out:
                fail(f"{suite} did not run")
        step("serving what it adds from the copy")
        check_served(example, tree)
        step(f"passed: .{example.name} added by the walk-through builds, passes the declaration tests and is served end to end")
        if arguments.omissions:
            check_omissions(example, tree)
            step("passed: every part left out is caught")
        for directory in arguments.then:
            previous, example = example, Example(directory)
            for name in previous.files:
                (tree / name).unlink()
            step(f"in the same copy, {previous.name} taken out and {directory} added: .{example.name} ({example.declaration}), {len(example.files)} files")
            copy_tree(example, tree, files_only=True)
            apply_edits(example, tree)
            out = build_and_test(example, tree)
            for suite in example.tests:
                if f"Suite {suite} passed" not in out:
                    fail(f"{suite} did not run")
            check_served(example, tree)
            step(f"passed: .{example.name} added by the walk-through builds, passes the declaration tests and is served end to end")
    finally:
        if arguments.keep:
            step(f"the copy stays at {tree}")
        else:
            shutil.rmtree(tree, ignore_errors=True)


if __name__ == "__main__":
    main()
