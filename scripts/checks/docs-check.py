#!/usr/bin/env python3
"""Every example request in README.md and docs/API.md, run as a newcomer would run it, against
`feedproxy --fixtures` on loopback, and compared with the answer the page shows.

What counts as an example (the convention the pages follow):

- A ```console block: each line starting with `$ ` is a command (continued onto the next line by a
  trailing `\\`, or by a here-document `<<EOF` up to its terminator); the lines after it, up to
  the next `$ ` line, are its output as shown. The command must run curl. It is run with bash,
  exactly as written, but for `localhost:8080`, which becomes the checker's port, and with
  `FIXTURES_UPSTREAM` set to the fixture upstream's address (what the startup log line names as
  `fixtures_upstream`; the pages say so where an example needs a feed URL).
- A ```sh or ```bash block: each line running curl is an example with no shown answer; it must
  succeed: status below 400, and a JSON answer with no `"status":"error"`, no non-null `error`
  and no empty `items` (an example that finds nothing teaches nothing). Other lines (make, podman)
  are not examples.
- A line of prose `` `GET /path` → `200 {…}` ``: a method and a literal path in one code span, `→`,
  and a code span starting with the status (the JSON after it, if any, is the body shown).
- curl anywhere else in a fenced block (```json, ```text, a bare ```) is an error: the check would
  not read it, so the example could rot unseen. So is a `$ ` line in a ```sh block, a console
  command that runs no curl, and a shown JSON answer that does not parse.

How an answer is compared:

- The status: the status line when the output shows one (`curl -i`), else the `status` of a shown
  `{"error":{"status":N,…}}`, else anything below 400.
- Headers: each `Name: value` line of a shown head (after an `HTTP/1.1 …` line) against the header
  of that name; extra headers are fine. Output that is not JSON (a header grep, an OPML file, an
  event stream) is compared line by line, in order; a line that is `…` alone stands for any
  number of lines, and a streamed answer (`curl -N`) may go on past the lines shown.
- JSON: every key shown must be there, with a value of the same JSON type, in the order shown;
  a literal (string, number, true/false/null) must be equal. `…` (or `...`) marks what is left out
  on purpose: a member of an object (without it, no other key may be there), elements of an array
  (without it, the array has exactly the elements shown; `[a, …]` is its start, `[…, z]` its end),
  a value (`"id":…`: any value), or a part of a string (`"http://127.0.0.1:…/rss/indie.xml"`).
  An SSE `data: {…}` line is compared as JSON the same way.

Examples run in the order of the pages (README.md, then docs/API.md) against one server started
for the run with default settings (`--fixtures`, as `make run ARGS=--fixtures` starts it), so a
page may rely on what an earlier example of it read (a feed cached, a podcast known).

KNOWN_FAILURES lists the examples that show the service's intended answer while it gives another
(a bug, not a doc error): they print `known` and do not fail the run, but one that passes fails it
(take it off the list).

Usage: scripts/checks/docs-check.py path/to/feedproxy [--port N] [files…]
Prints one `ok`/`FAIL`/`known` line per example (file:line), then `docs-check: N examples, M failed`.
"""
import argparse
import http.client
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts" / "lib"))
from loopback import free_port, stop  # noqa: E402

DEFAULT_FILES = ("README.md", "docs/API.md")

# (file, the example's first command line as written) -> the issue it waits for.
KNOWN_FAILURES: dict = {}

ELLIPSIS_WORDS = ("…", "...")


class Elided:
    """`…` where a value, an object member or array elements are left out."""

    def __repr__(self):
        return "…"


ELIDED = Elided()


class Unparseable(Exception):
    pass


# ---------------------------------------------------------------- JSON with `…`


class ShownJSON:
    """A JSON text as the pages show it: JSON, plus `…`/`...` as a value, an array element or
    an object member. Objects parse to a list of (key, value) pairs (ELIDED for `…`) to keep
    their order; arrays to lists that may hold ELIDED."""

    NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")

    def __init__(self, text):
        self.text, self.i = text, 0

    @classmethod
    def parse(cls, text):
        p = cls(text)
        value = p.value()
        p.space()
        if p.i != len(p.text):
            raise Unparseable(f"unexpected {p.text[p.i:p.i + 20]!r} after the JSON value")
        return value

    def space(self):
        while self.i < len(self.text) and self.text[self.i] in " \t\r\n":
            self.i += 1

    def ellipsis(self):
        self.space()
        for word in ELLIPSIS_WORDS:
            if self.text.startswith(word, self.i):
                self.i += len(word)
                return True
        return False

    def value(self):
        self.space()
        if self.ellipsis():
            return ELIDED
        if self.i >= len(self.text):
            raise Unparseable("the JSON ends early")
        c = self.text[self.i]
        if c == "{":
            return self.members()
        if c == "[":
            return self.elements()
        if c == '"':
            return self.string()
        for word, value in (("true", True), ("false", False), ("null", None)):
            if self.text.startswith(word, self.i):
                self.i += len(word)
                return value
        m = self.NUMBER.match(self.text, self.i)
        if m:
            self.i = m.end()
            return json.loads(m.group())
        raise Unparseable(f"not JSON at {self.text[self.i:self.i + 20]!r}")

    def string(self):
        try:
            s, self.i = json.decoder.scanstring(self.text, self.i + 1)
        except json.JSONDecodeError as e:
            raise Unparseable(f"bad string: {e}") from None
        return s

    def expect(self, c):
        self.space()
        if not self.text.startswith(c, self.i):
            raise Unparseable(f"expected {c!r} at {self.text[self.i:self.i + 20]!r}")
        self.i += 1

    def sequence(self, close, item):
        self.i += 1
        out = []
        self.space()
        if self.text.startswith(close, self.i):
            self.i += 1
            return out
        while True:
            out.append(item())
            self.space()
            if self.text.startswith(",", self.i):
                self.i += 1
                continue
            # `…` written without a comma before the closing bracket: `{"a":1 …}` is read as `{"a":1, …}`.
            if self.ellipsis():
                out.append(ELIDED)
                self.space()
            self.expect(close)
            return out

    def members(self):
        def member():
            if self.ellipsis():
                return ELIDED
            self.space()
            if not self.text.startswith('"', self.i):
                raise Unparseable(f"expected a key at {self.text[self.i:self.i + 20]!r}")
            key = self.string()
            self.expect(":")
            return (key, self.value())

        return ("object", self.sequence("}", member))

    def elements(self):
        return ("array", self.sequence("]", self.value))


def wildcard(shown):
    """A shown string or line as a regex: `…`/`...` stand for any run of characters."""
    parts = re.split(r"…|\.\.\.", shown)
    return re.compile(".*".join(re.escape(p) for p in parts), re.S)


def text_matches(shown, actual):
    return wildcard(shown).fullmatch(actual) is not None


def kind(value):
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def shown_kind(shown):
    if isinstance(shown, tuple):
        return shown[0]
    return kind(shown)


def brief(value, limit=70):
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, tuple) else "{…}" if value[0] == "object" else "[…]"
    return text if len(text) <= limit else text[:limit - 1] + "…"


def compare(shown, actual, path="$"):
    """The differences between a shown value (ShownJSON) and the answer's (json), as lines."""
    if shown is ELIDED:
        return []
    if shown_kind(shown) != kind(actual):
        return [f"{path}: the page shows {shown_kind(shown)} {brief(shown)}, the answer has {kind(actual)} {brief(actual)}"]
    if isinstance(shown, tuple) and shown[0] == "object":
        return compare_object(shown[1], actual, path)
    if isinstance(shown, tuple):
        return compare_array(shown[1], actual, path)
    if isinstance(shown, str):
        return [] if text_matches(shown, actual) else [f"{path}: the page shows {brief(shown)}, the answer has {brief(actual)}"]
    if shown != actual:
        return [f"{path}: the page shows {brief(shown)}, the answer has {brief(actual)}"]
    return []


def compare_object(members, actual, path):
    diffs = []
    elided = any(m is ELIDED for m in members)
    keys = [m[0] for m in members if m is not ELIDED]
    order = list(actual.keys())
    for key, value in (m for m in members if m is not ELIDED):
        if key not in actual:
            diffs.append(f"{path}: no key {key!r} in the answer")
        else:
            diffs += compare(value, actual[key], f"{path}.{key}")
    present = [k for k in keys if k in actual]
    positions = [order.index(k) for k in present]
    if positions != sorted(positions):
        diffs.append(f"{path}: keys in another order: the page shows {', '.join(present)}; the answer has "
                     f"{', '.join(k for k in order if k in present)}")
    if not elided:
        extra = [k for k in order if k not in keys]
        if extra:
            diffs.append(f"{path}: the answer has {', '.join(extra)}, which the page neither shows nor elides with …")
    return diffs


def compare_array(elements, actual, path):
    if not any(e is ELIDED for e in elements):
        if len(elements) != len(actual):
            return [f"{path}: the page shows {len(elements)} element(s) and no …, the answer has {len(actual)}"]
        diffs = []
        for n, (s, a) in enumerate(zip(elements, actual)):
            diffs += compare(s, a, f"{path}[{n}]")
        return diffs
    # Segments between the `…`s: the first at the start (unless `…` opens), the last at the end
    # (unless `…` closes), the others in order between them.
    segments, current = [], []
    for e in elements:
        if e is ELIDED:
            segments.append(current)
            current = []
        else:
            current.append(e)
    segments.append(current)
    head, middle, tail = segments[0], segments[1:-1], segments[-1]
    if len(head) + len(tail) + sum(map(len, middle)) > len(actual):
        return [f"{path}: the page shows more elements than the answer's {len(actual)}"]
    diffs = []
    for n, s in enumerate(head):
        diffs += compare(s, actual[n], f"{path}[{n}]")
    end = len(actual) - len(tail)
    for n, s in enumerate(tail):
        diffs += compare(s, actual[end + n], f"{path}[{end + n}]")
    if diffs:
        return diffs
    at = len(head)
    for segment in middle:
        while at + len(segment) <= end:
            if not any(compare(s, actual[at + n], path) for n, s in enumerate(segment)):
                break
            at += 1
        else:
            return [f"{path}: no run of elements in the answer matches the page's {brief(('array', segment))}"]
        at += len(segment)
    return diffs


# ---------------------------------------------------------------- reading the pages


class Example:
    def __init__(self, file, line, kind, command, shown=None, method=None, path=None, status=None):
        self.file, self.line, self.kind, self.command, self.shown = file, line, kind, command, shown
        self.method, self.path, self.status = method, path, status
        self.error = None  # why it could not be read (fails the run)

    @property
    def title(self):
        first = self.command.splitlines()[0]
        return first if len(first) <= 110 else first[:109] + "…"


FENCE = re.compile(r"^\s*```(\S*)\s*$")
ARROW = re.compile(r"`(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS) (/[^`\s]*)` → `(\d{3})(?: ([^`]*))?`")
# A request in a code span, an arrow and a code span: an arrow example, or one written wrong.
ARROW_LIKE = re.compile(r"`(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS) /[^`]*` → `")
HEREDOC = re.compile(r"<<-?\s*(['\"]?)(\w+)\1")
RUNS_CURL = re.compile(r"(^|[\s|;&(])curl\s")


def read_page(file):
    lines = (ROOT / file).read_text(encoding="utf-8").splitlines()
    examples = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            if len(ARROW_LIKE.findall(lines[i])) > len(ARROW.findall(lines[i])):
                ex = Example(file, i + 1, "arrow", lines[i].strip()[:100])
                ex.error = "a `METHOD /path` → `…` line the check cannot read: write `GET /path` → `200 {…}` (a literal path, the status first)"
                examples.append(ex)
            for a in ARROW.finditer(lines[i]):
                method, path, status, body = a.groups()
                ex = Example(file, i + 1, "arrow", f"{method} {path} → {status}", shown=(body or "").strip(), method=method,
                             path=path, status=int(status))
                examples.append(ex)
            i += 1
            continue
        language, start = m.group(1), i
        i += 1
        block = []
        while i < len(lines) and not FENCE.match(lines[i]):
            block.append((i + 1, lines[i]))
            i += 1
        i += 1  # the closing fence
        if language == "console":
            examples += console_examples(file, block)
        elif language in ("sh", "bash", "shell"):
            examples += shell_examples(file, block)
        else:
            for number, text in block:
                if RUNS_CURL.search(text) and "localhost:8080" in text:
                    ex = Example(file, number, "unread", text.strip())
                    ex.error = f"a curl example in a ```{language or ' (bare)'} block (from line {start + 1}): use ```console (with its output) or ```sh"
                    examples.append(ex)
    return examples


def joined_command(block, k):
    """The command starting at block[k] (its `$ ` or nothing stripped by the caller), continued
    by trailing backslashes and here-documents; returns (text, next index)."""
    number, text = block[k]
    parts = [text]
    k += 1
    while parts[-1].endswith("\\") and k < len(block):
        parts.append(block[k][1])
        k += 1
    here = HEREDOC.search("\n".join(parts))
    if here:
        terminator = here.group(2)
        while k < len(block) and block[k][1].strip() != terminator:
            parts.append(block[k][1])
            k += 1
        if k < len(block):
            parts.append(block[k][1])
            k += 1
    return "\n".join(parts), k


def console_examples(file, block):
    examples = []
    k = 0
    while k < len(block):
        number, text = block[k]
        if not text.startswith("$ "):
            if text.strip():
                ex = Example(file, number, "console", text.strip())
                ex.error = "output with no `$ ` command before it"
                examples.append(ex)
            k += 1
            continue
        command, k = joined_command(block, k)
        output = []
        while k < len(block) and not block[k][1].startswith("$ "):
            output.append(block[k][1])
            k += 1
        while output and not output[0].strip():
            output.pop(0)
        while output and not output[-1].strip():
            output.pop()
        ex = Example(file, number, "console", command[2:], shown=output)
        if not RUNS_CURL.search(" " + ex.command):
            ex.error = "a console command that runs no curl (only requests are examples here)"
        examples.append(ex)
    return examples


def shell_examples(file, block):
    examples = []
    k = 0
    while k < len(block):
        number, text = block[k]
        if text.startswith("$ "):
            ex = Example(file, number, "sh", text)
            ex.error = "a `$ ` prompt in a ```sh block: a command shown with its output goes in a ```console block"
            examples.append(ex)
            k += 1
            continue
        command, k = joined_command(block, k)
        if RUNS_CURL.search(" " + command):
            examples.append(Example(file, number, "sh", command))
    return examples


# ---------------------------------------------------------------- running them


class Runner:
    def __init__(self, binary, port, work):
        self.binary, self.port, self.work = binary, port, Path(work)
        self.server_dir = self.work / "server"
        self.run_dir = self.work / "run"
        self.headers = self.work / "headers"
        self.bin = self.work / "bin"
        for d in (self.server_dir, self.run_dir):
            shutil.rmtree(d, ignore_errors=True)
            d.mkdir(parents=True)
        (self.run_dir / "Fixtures").symlink_to(ROOT / "Fixtures")
        self.bin.mkdir(parents=True, exist_ok=True)
        real = shutil.which("curl")
        if not real:
            sys.exit("docs-check: curl is not installed (apt-get install curl)")
        # curl as the pages run it, with the answer's head also kept (numbered, in order) for the check.
        wrapper = self.bin / "curl"
        wrapper.write_text('#!/bin/sh\nn=$(ls "$DOCS_CHECK_HEADERS" | wc -l)\n'
                           f'exec {real} -q -D "$DOCS_CHECK_HEADERS/$(printf %04d "$n")" "$@"\n')
        wrapper.chmod(0o755)
        self.proc = None
        self.fixtures_upstream = None

    def start(self):
        # The settings a newcomer has: none but the port (and loopback only, for the check).
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.server_dir), "LANG": "C.UTF-8", "HOST": "127.0.0.1"}
        self.log = open(self.work / "feedproxy.log", "wb")
        self.proc = subprocess.Popen([self.binary, "--fixtures", str(ROOT / "Fixtures"), "--port", str(self.port)], env=env,
                                     cwd=self.server_dir, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            for line in (self.work / "feedproxy.log").read_text(errors="replace").splitlines():
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue
                if isinstance(entry, dict) and entry.get("fixtures_upstream"):
                    self.fixtures_upstream = entry["fixtures_upstream"]
            if self.fixtures_upstream and self.get("/healthz")[0] == 200:
                return
            time.sleep(0.1)
        sys.exit(f"docs-check: feedproxy did not start (log: {self.work / 'feedproxy.log'})")

    def stop(self):
        if self.proc:
            stop(self.proc)
            self.log.close()

    def get(self, path, method="GET"):
        try:
            c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=20)
            c.request(method, path)
            r = c.getresponse()
            return r.status, dict((k.lower(), v) for k, v in r.getheaders()), r.read()
        except OSError as e:
            return 0, {}, str(e).encode()

    def shell(self, command, stream):
        """Runs `command` as the page writes it; returns (stdout, heads of each curl answer, timed out)."""
        shutil.rmtree(self.headers, ignore_errors=True)
        self.headers.mkdir()
        command = command.replace("localhost:8080", f"127.0.0.1:{self.port}")
        env = dict(os.environ, PATH=f"{self.bin}:{os.environ.get('PATH', '')}", FIXTURES_UPSTREAM=self.fixtures_upstream,
                   DOCS_CHECK_HEADERS=str(self.headers), NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
        proc = subprocess.Popen(["bash", "-c", command], cwd=self.run_dir, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True)
        out = b""
        # A stream's keep-alive comment comes within 15 s (the service's heartbeat).
        deadline = time.monotonic() + (20 if stream else 30)
        timed_out = False
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                timed_out = True
                break
            ready, _, _ = select.select([proc.stdout], [], [], min(left, 0.2))
            if ready:
                chunk = os.read(proc.stdout.fileno(), 65536)
                if not chunk:
                    break
                out += chunk
                if stream and stream(out.decode("utf-8", "replace")):
                    break
            elif proc.poll() is not None:
                out += proc.stdout.read()
                break
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        err = proc.stderr.read().decode("utf-8", "replace")
        heads = [parse_head(p.read_text(encoding="utf-8", errors="replace")) for p in sorted(self.headers.iterdir())]
        return out.decode("utf-8", "replace"), heads, timed_out and not stream, err


def parse_head(text):
    """The last response head in a curl header dump: (status line, {name: value})."""
    blocks = [b for b in re.split(r"\r?\n\r?\n", text) if b.strip()]
    if not blocks:
        return ("", {})
    lines = blocks[-1].splitlines()
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers.setdefault(name.strip().lower(), value.strip())
    return (lines[0].strip(), headers)


def status_of(status_line):
    m = re.match(r"HTTP/\S+ (\d{3})", status_line)
    return int(m.group(1)) if m else 0


def expected_status(shown_body):
    """The status a shown body implies: an error object's `status`, else None (any below 400)."""
    if isinstance(shown_body, tuple) and shown_body[0] == "object":
        for member in shown_body[1]:
            if member is not ELIDED and member[0] == "error" and isinstance(member[1], tuple) and member[1][0] == "object":
                for m in member[1][1]:
                    if m is not ELIDED and m[0] == "status" and isinstance(m[1], int):
                        return m[1]
    return None


def check_status(actual, expected):
    if expected is None:
        return [] if 0 < actual < 400 else [f"status {actual}, not a success"]
    return [] if actual == expected else [f"status {actual}, the page shows {expected}"]


def compare_lines(shown, actual, stream):
    """Shown text lines against the output's, in order; `…` alone: any lines; a data: line as JSON."""
    actual = [line.rstrip("\r") for line in actual]
    diffs = []

    def match(s, a):
        if s.startswith("data: {") and a.startswith("data: {"):
            try:
                return not compare(ShownJSON.parse(s[6:]), json.loads(a[6:]))
            except (Unparseable, ValueError):
                return False
        return text_matches(s.rstrip(), a.rstrip())

    def walk(si, ai):
        if si == len(shown):
            return stream or ai == len(actual) or all(not a.strip() for a in actual[ai:])
        if shown[si].strip() in ELLIPSIS_WORDS:
            return any(walk(si + 1, k) for k in range(ai, len(actual) + 1))
        return ai < len(actual) and match(shown[si], actual[ai]) and walk(si + 1, ai + 1)

    if not walk(0, 0):
        # The first shown line that differs, for the report.
        for n, s in enumerate(shown):
            if s.strip() in ELLIPSIS_WORDS:
                break
            if n >= len(actual):
                diffs.append(f"line {n + 1}: the page shows {s!r}, the output has ended")
                break
            if not match(s, actual[n]):
                detail = ""
                if s.startswith("data: {") and actual[n].startswith("data: {"):
                    try:
                        detail = "; " + "; ".join(compare(ShownJSON.parse(s[6:]), json.loads(actual[n][6:]))[:4])
                    except (Unparseable, ValueError) as e:
                        detail = f"; {e}"
                diffs.append(f"line {n + 1}: the page shows {s[:100]!r}, the output has {actual[n][:100]!r}{detail}")
                break
        else:
            diffs.append(f"the output has {len(actual)} lines: {' | '.join(actual)[:300]!r}")
    return diffs


def faults_of_bare_answer(body):
    """What makes an answer shown nowhere a failed example: errors in it, or nothing found."""
    try:
        value = json.loads(body)
    except ValueError:
        # A file the service writes says in a comment what it had to leave out (an OPML export).
        return [f"the answer says {m.group()!r}" for m in re.finditer(r"<!--\s*left out[^>]*-->", body)]
    faults = []

    def walk(v, path):
        if isinstance(v, dict):
            if v.get("error") is not None:
                faults.append(f"{path}.error: {brief(v['error'], 120)}")
            if v.get("status") == "error":
                faults.append(f"{path}: status error")
            if v.get("items") == []:
                faults.append(f"{path}.items is empty: the example finds nothing")
            for k, x in v.items():
                if k != "error":
                    walk(x, f"{path}.{k}")
        elif isinstance(v, list):
            for n, x in enumerate(v):
                walk(x, f"{path}[{n}]")

    walk(value, "$")
    return faults


def run_example(runner, ex):
    """The example's failures, as lines (empty: ok)."""
    if ex.error:
        return [ex.error]
    if ex.kind == "arrow":
        shown = None
        if ex.shown:
            try:
                shown = ShownJSON.parse(ex.shown)
            except Unparseable as e:
                return [f"the answer shown is not JSON the check reads: {e}"]
        status, _, body = runner.get(ex.path, ex.method)
        diffs = [] if status == ex.status else [f"status {status}, the page shows {ex.status}"]
        if shown is not None:
            try:
                diffs += compare(shown, json.loads(body))
            except ValueError:
                diffs.append(f"the answer is not JSON: {body[:120]!r}")
        return diffs

    stream = bool(re.search(r"\s(-N|--no-buffer|-\w*N\w*)\s", " " + ex.command + " "))
    shown_lines = ex.shown or []
    if ex.kind == "console":
        head_shown, body_shown = split_shown(shown_lines)
        body_json = None
        if body_shown and body_shown[0].lstrip().startswith(("{", "[")):
            try:
                body_json = ShownJSON.parse("\n".join(body_shown))
            except Unparseable as e:
                return [f"the answer shown is not JSON the check reads: {e}"]
        done = (lambda out: not compare_lines(shown_lines, out.splitlines(), True)) if stream else None
        out, heads, timed_out, err = runner.shell(ex.command, done)
    else:
        # A stream's first event is enough: its data is checked like any answer.
        out, heads, timed_out, err = runner.shell(ex.command, (lambda out: re.search(r"^data: .*\n", out, re.M)) if stream else None)
    if timed_out:
        return ["no answer within 30 s"]
    if not heads:
        return [f"curl got no answer: {err.strip()[:200] or 'no output'}"]
    status_line, headers = heads[-1]
    status = status_of(status_line)

    if ex.kind == "sh":
        diffs = check_status(status, None)
        bodies = [out]
        if stream:
            bodies = [line[6:] for line in out.splitlines() if line.startswith("data: ")]
        written = re.search(r"\s(?:-o|--output)\s+(\S+)", ex.command)
        if written and written.group(1) != "/dev/null" and (runner.run_dir / written.group(1)).is_file():
            bodies.append((runner.run_dir / written.group(1)).read_text(encoding="utf-8", errors="replace"))
        for body in bodies:
            diffs += faults_of_bare_answer(body)
        return diffs

    diffs = []
    if not shown_lines:
        diffs += check_status(status, None)
        if out.strip():
            diffs.append(f"the command prints what the page does not show: {out.strip()[:120]!r}")
        return diffs
    if head_shown:
        if not text_matches(head_shown[0].strip(), status_line):
            diffs.append(f"status line {status_line!r}, the page shows {head_shown[0].strip()!r}")
        for line in head_shown[1:]:
            name, _, value = line.partition(":")
            got = headers.get(name.strip().lower())
            if got is None:
                diffs.append(f"no {name.strip()} header")
            elif not text_matches(value.strip(), got):
                diffs.append(f"{name.strip()}: {got!r}, the page shows {value.strip()!r}")
        out_body = re.split(r"\r?\n\r?\n", out, maxsplit=1)[1] if re.search(r"\r?\n\r?\n", out) else ""
    else:
        diffs += check_status(status, expected_status(body_json))
        out_body = out
    if body_json is not None:
        try:
            actual = json.loads(out_body)
        except ValueError:
            return diffs + [f"the output is not JSON: {out_body[:120]!r}"]
        diffs += compare(body_json, actual)
    elif body_shown:
        diffs += compare_lines(body_shown, out_body.splitlines(), stream)
    elif out_body.strip():
        diffs.append(f"the command prints a body the page does not show: {out_body.strip()[:120]!r}")
    return diffs


def split_shown(lines):
    """A shown output's head (when it starts with a status line) and the rest."""
    if lines and re.match(r"HTTP/\S+ \d{3}", lines[0]):
        for n, line in enumerate(lines):
            if not line.strip():
                return lines[:n], lines[n + 1:]
        return lines, []
    return [], lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("binary")
    parser.add_argument("files", nargs="*", default=list(DEFAULT_FILES))
    parser.add_argument("--port", type=int, default=0, help="the service's port (default: a free one)")
    parser.add_argument("--work", default=str(ROOT / ".build" / "docs-check"), help="scratch directory (server log, files the examples write)")
    args = parser.parse_args()

    examples = []
    for file in args.files:
        examples += read_page(file)
    runner = Runner(os.path.abspath(args.binary), args.port or free_port(), args.work)
    runner.start()
    print(f"docs-check: feedproxy --fixtures on 127.0.0.1:{runner.port}, fixture upstream {runner.fixtures_upstream}", flush=True)
    failed = known = 0
    try:
        for ex in examples:
            diffs = run_example(runner, ex)
            where = f"{ex.file}:{ex.line}"
            reason = KNOWN_FAILURES.get((ex.file, ex.command.splitlines()[0]))
            if reason and diffs:
                known += 1
                print(f"known {where} {ex.title}\n        {reason}", flush=True)
                for d in diffs[:3]:
                    print(f"        {d}")
            elif reason:
                failed += 1
                print(f"FAIL {where} {ex.title}\n        listed in KNOWN_FAILURES but passes: take it off the list", flush=True)
            elif diffs:
                failed += 1
                print(f"FAIL {where} {ex.title}", flush=True)
                for d in diffs[:8]:
                    print(f"        {d}")
                if len(diffs) > 8:
                    print(f"        … and {len(diffs) - 8} more")
            else:
                print(f"ok   {where} {ex.title}", flush=True)
    finally:
        runner.stop()
    listed = {(ex.file, ex.command.splitlines()[0]) for ex in examples}
    for key in KNOWN_FAILURES:
        if key[0] in args.files and key not in listed:
            failed += 1
            print(f"FAIL {key[0]} KNOWN_FAILURES names an example the page no longer has: {key[1]}")
    print(f"docs-check: {len(examples)} examples, {failed} failed" + (f", {known} known failures" if known else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
