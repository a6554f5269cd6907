#!/usr/bin/env python3
"""A real browser as a web app uses FeedProxy: Debian's Chromium driven by Playwright.

Usage: FEEDPROXY_BIN=path/to/feedproxy python3 scripts/tests/browser-test.py   (run by `make test`)

An app page served from another origin (its own loopback port) talks to `feedproxy
--fixtures` under default settings, the way search boxes do: a `fetch` per keystroke, the
previous one aborted with `AbortController`, debounced and not. Checks:
  1. three searches typed within a minute, 350 ms a key, no debounce: every final term 200,
     no 429 anywhere;
  2. the same debounced (250 ms): every final term 200;
  3. CORS: the page reads ETag, Age, X-Cache and X-Request-ID from a cross-origin answer;
  4. the browser cache revalidates (`cache: "no-cache"`): FeedProxy answers 304 and the page
     still gets the body;
  5. aborted keystrokes cost nothing: the aborted requests that were still waiting for an
     upstream turn are logged 499 and the upstream saw no more requests than were answered.
Each line says ok or FAIL; exits 1 on any FAIL. Everything it starts it stops, by PID.
"""
import http.server
import json
import os
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from loopback import check, failures, free_port, start_feedproxy, stop  # noqa: E402  (the scripts' shared helpers)


PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>search app</title></head>
<body><input id="q" aria-label="Search podcasts"><ul id="results"></ul>
<script>
const sleep = ms => new Promise(r => setTimeout(r, ms));
// One search typed key by key from its second letter; each key aborts the previous fetch.
async function typeSearch(api, word, keyMs, debounceMs) {
  let controller = null, last = null, timer = null;
  const seen = [];
  const fire = prefix => {
    if (controller) controller.abort();
    controller = new AbortController();
    const url = api + "/podcasts?term=" + encodeURIComponent(prefix);
    last = fetch(url, {signal: controller.signal}).then(async r => {
      const body = await r.text();
      const answer = {term: prefix, status: r.status, etag: r.headers.get("ETag"), age: r.headers.get("Age"),
                      xcache: r.headers.get("X-Cache"), requestId: r.headers.get("X-Request-ID"),
                      retryAfter: r.headers.get("Retry-After"), bytes: body.length};
      seen.push(answer);
      return answer;
    }).catch(e => ({term: prefix, status: e.name === "AbortError" ? "aborted" : "error: " + e.message}));
    return last;
  };
  for (let i = 2; i <= word.length; i++) {
    const prefix = word.slice(0, i);
    document.getElementById("q").value = prefix;
    if (debounceMs > 0) {
      clearTimeout(timer);
      timer = setTimeout(() => fire(prefix), debounceMs);
    } else {
      fire(prefix);
    }
    await sleep(keyMs);
  }
  if (debounceMs > 0) await sleep(debounceMs + 50);
  const final = await last;
  return {final, seen};
}
async function revalidate(api, path) {
  const first = await fetch(api + path);
  const a = await first.text();
  const second = await fetch(api + path, {cache: "no-cache"});
  const b = await second.text();
  return {first: first.status, second: second.status, same: a === b && a.length > 0, etag: second.headers.get("ETag")};
}
</script></body></html>
"""


def metric(port, name_and_labels):
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    for line in text.splitlines():
        if line.startswith(name_and_labels + " "):
            return float(line.split()[-1])
    return 0.0


def main():
    binary = os.environ.get("FEEDPROXY_BIN") or sys.argv[1]
    from playwright.sync_api import sync_playwright

    api_port, page_port = free_port(), free_port()
    log = tempfile.NamedTemporaryFile(prefix="feedproxy-browser-", suffix=".log", delete=False)
    env = dict(os.environ, LOG_LEVEL="info")
    for k in list(env):
        if k.startswith(("CACHE_", "RATE_LIMIT_", "CLIENT_", "UPSTREAM_")) or k.endswith("_URL"):
            del env[k]  # default settings, as an app developer runs it
    proxy = start_feedproxy(binary, api_port, env, stdout=log)

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = PAGE.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    pages = http.server.ThreadingHTTPServer(("127.0.0.1", page_port), Page)
    threading.Thread(target=pages.serve_forever, daemon=True).start()
    try:
        api = f"http://127.0.0.1:{api_port}"
        print(f"browser test: feedproxy :{api_port} (default settings, --fixtures), app page http://localhost:{page_port}/ (another origin)")
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=["--no-sandbox"])
            page = browser.new_page()
            page.goto(f"http://localhost:{page_port}/")

            # 1. Typed without debounce, three searches in one minute.
            finals, any_429 = [], []
            started = time.monotonic()
            for word in ["history", "cooking", "science"]:
                r = page.evaluate("([api, w]) => typeSearch(api, w, 350, 0)", [api, word])
                finals.append(r["final"]["status"])
                any_429 += [s for s in r["seen"] if s["status"] == 429]
            took = time.monotonic() - started
            check(f"three searches typed at 350 ms a key with AbortController, no debounce ({took:.1f} s)", finals,
                  finals == [200, 200, 200] and took < 60, "[200, 200, 200] within a minute")
            check("429 answers seen by the page", len(any_429), not any_429, "0")

            # 2. Debounced.
            finals = [page.evaluate("([api, w]) => typeSearch(api, w, 120, 250)", [api, w])["final"]["status"] for w in ["gardening", "football"]]
            check("two searches typed at 120 ms a key, debounced 250 ms", finals, finals == [200, 200], "[200, 200]")

            # 3. Headers a cross-origin script may read.
            r = page.evaluate("([api, w]) => typeSearch(api, w, 50, 0)", [api, "swift"])["final"]
            readable = {k: r.get(k) for k in ("etag", "age", "xcache", "requestId")}
            check("headers the page can read cross-origin (ETag, Age, X-Cache, X-Request-ID)", readable,
                  all(readable.values()), "all present")

            # 4. The browser cache revalidates; FeedProxy answers 304.
            before = metric(api_port, 'feedproxy_http_requests_total{route="/photos",status="304"}')
            r = page.evaluate("([api]) => revalidate(api, '/photos')", [api])
            after = metric(api_port, 'feedproxy_http_requests_total{route="/photos",status="304"}')
            check("fetch(cache: 'no-cache') after a cached answer", f"page saw {r['first']} then {r['second']}, same body {r['same']}; "
                  f"304s answered +{after - before:.0f}", r["first"] == 200 and r["second"] == 200 and r["same"] and after - before >= 1,
                  "200 / 200 with the body, +1 304 from FeedProxy")

            # 5. Aborted keystrokes cost nothing.
            browser.close()
        time.sleep(0.3)
        lines = [json.loads(l) for l in open(log.name) if l.startswith("{")]
        search_lines = [l for l in lines if l.get("route") == "/podcasts"]
        aborted = [l for l in search_lines if l.get("status") == 499]
        answered_misses = [l for l in search_lines if l.get("status") == 200 and l.get("cache") == "MISS"]
        upstream = metric(api_port, 'feedproxy_upstream_requests_total{source="itunes",outcome="ok"}')
        check("aborted searches logged 499 / upstream iTunes requests / misses answered 200",
              f"{len(aborted)} / {upstream:.0f} / {len(answered_misses)}", aborted and upstream <= len(answered_misses),
              "some 499; upstream requests only for answered misses (an aborted keystroke still queued sends nothing)")
    finally:
        pages.shutdown()
        stop(proxy)
    print(f"browser test: {'all passed' if not failures else str(len(failures)) + ' failed'} (log {log.name})")
    if not failures:
        os.unlink(log.name)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
