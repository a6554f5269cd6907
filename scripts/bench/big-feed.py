#!/usr/bin/env python3
"""A big feed as an app waits for it: the first page of an 18.9 MB, 3,000-episode feed with
marked-up show notes (as FeedBench builds it), cold, end to end through the service, next to
expat's own `xmlwf` only checking the same file on the same machine in the same run.

The feed is served from loopback by a plain HTTP server (Content-Length, no compression, as a
hosting platform's CDN sends a big feed). Each round names the feed by a URL never read before
(so its feed id is cold): `GET /podcasts/byfeedurl?url=` (the service downloads, parses,
sanitizes and encodes the feed) then `GET /podcasts/{id}/episodes?limit=20`, timed together
as the app waits for its first page. Median of ROUNDS rounds, and the ratio to xmlwf's median.

Usage: python3 scripts/bench/big-feed.py path/to/feedproxy [rounds]   (run by `make bench`)
Loopback only; stops what it starts, by PID.
"""
import http.server
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from loopback import free_port, start_feedproxy, stop  # noqa: E402


def marked_up_notes(n: int) -> str:
    """~6 KB of show notes as long-running shows write them (FeedBench's markedUpNotes)."""
    notes, k = "", n
    while len(notes) < 5_300:
        k += 1
        notes += (f"<p>In episode {n} we talk with <strong>Guest {k}</strong> about the history of radio, <em>listener questions</em> "
                  "and what changed this week. Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor &amp; more.</p>")
        if k % 3 == 0:
            notes += (f"<ul><li><a href=\"https://example.com/links/{n}/{k}\">Link one</a></li><li><a href=\"https://shop.example.org/p?id={k}&amp;ref=pod\">"
                      "Our sponsor</a></li></ul>")
        else:
            notes += "<p>Support the show at <a href=\"https://patreon.example/show\" title=\"Patreon\">patreon</a><br>Music by Someone.</p>"
    notes += "<p>"
    while len(notes) < 6_020:
        notes += "Lorem ipsum "
    return notes + "</p>"


def feed(items: int = 3_000) -> bytes:
    out = ['<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd">'
           "<channel><title>A long-running show</title><link>https://show.example</link><description>Big</description>"]
    start = 1_700_000_000
    for n in range(items, 0, -1):
        date = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(start + n * 86_400))
        out.append(f"<item><guid>https://show.example/ep/{n}</guid><title>Episode {n}</title><pubDate>{date}</pubDate>"
                   f"<enclosure url=\"https://cdn.show.example/ep{n}.mp3\" length=\"1000\" type=\"audio/mpeg\"/>"
                   f"<description><![CDATA[{marked_up_notes(n)}]]></description></item>")
    out.append("</channel></rss>")
    return "".join(out).encode()


def serve(body: bytes):
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (the stdlib's name)
            self.send_response(200)
            self.send_header("Content-Type", "application/rss+xml")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main():
    binary = sys.argv[1]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    body = feed()
    path = tempfile.NamedTemporaryFile(prefix="big-feed-", suffix=".xml", delete=False).name
    with open(path, "wb") as f:
        f.write(body)
    xmlwf = []
    for _ in range(5):
        t = time.perf_counter()
        subprocess.run(["xmlwf", path], check=True, stdout=subprocess.DEVNULL)
        xmlwf.append((time.perf_counter() - t) * 1000)
    server = serve(body)
    port = free_port()
    env = dict(os.environ, LOG_LEVEL="warn", ALLOW_PRIVATE_FEED_HOSTS="true", CLIENT_MISS_RATE_PER_MIN="0", DATA_DIR="")
    proc = start_feedproxy(binary, port, env)
    waits = []
    try:
        for r in range(rounds + 1):
            url = f"http://127.0.0.1:{server.server_address[1]}/show-{r}.xml"
            t = time.perf_counter()
            found = json.loads(urllib.request.urlopen(
                f"http://127.0.0.1:{port}/podcasts/byfeedurl?url={urllib.parse.quote(url, safe='')}", timeout=60).read())
            pid = found["item"]["id"]
            page = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/podcasts/{pid}/episodes?limit=20", timeout=60).read())
            took = (time.perf_counter() - t) * 1000
            assert page.get("count") == 20, page.get("count")
            if r > 0:  # the first round warms the process (page faults, the allocator)
                waits.append(took)
    finally:
        stop(proc)
        server.shutdown()
        os.unlink(path)
    x, w = statistics.median(xmlwf), statistics.median(waits)
    print(f"big feed, {len(body) / 1e6:.1f} MB, 3,000 episodes with marked-up notes: first page cold through the service "
          f"median {w:.0f} ms (min {min(waits):.0f}, max {max(waits):.0f}, {len(waits)} rounds); xmlwf median {x:.0f} ms: "
          f"{w / x:.1f}x xmlwf (goal <= 5x)")


if __name__ == "__main__":
    main()
