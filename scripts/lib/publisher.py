#!/usr/bin/env python3
"""A loopback podcast hosting platform and iTunes lookup, for storms against FeedProxy.

Two listening addresses, so a client's per-host connection limit sees two hosts:

  lookup (default 127.0.0.2): `GET /lookup?id=a,b,c&entity=podcast` answers like iTunes
      (`{"resultCount":N,"results":[{collectionId, collectionName, artistName, feedUrl,
      artworkUrl600, ...}]}`; ids it does not know are left out) and the control API:
        POST /__publish?id=X&published=<unix s>[&title=...]  a new episode in feed X dated
                                                            `published` (may be earlier than
                                                            episodes already out): {"id","guid","published"}
        POST /__delay?ms=N                                  the delay of every feed response from now on
        GET  /__counts                                      every counter as JSON
        GET  /__log                                         every feed request since the last reset:
                                                            [start, end, id, client port, status, conditional]
        POST /__reset_counts                                counters back to zero (feeds keep their episodes)
  feeds (default 127.0.0.3): `GET /feed/<id>.xml`, RSS 2.0 with the itunes namespace and
      `episodes` items (guid, title, pubDate, enclosure, short description), a strong ETag
      and Last-Modified; 304 for a matching If-None-Match (or, without one, an
      If-Modified-Since not older than the feed); every answer, 200 and 304 alike, after
      `delay_ms`.

Known ids are `base_id` .. `base_id + feeds - 1`; a feed's episodes are made from its id
(deterministic), newest first, weekly, the newest 1 to 72 hours before the publisher started.

Counters: lookups (requests, ids in each), and per feed full downloads (200), conditional
requests (If-None-Match or If-Modified-Since sent), 304s, abandoned requests (the client had
closed the connection when the answer was due: not counted as a download); feed requests in flight and the
most ever in flight at once.

As a module: `Publisher(feeds=1000, delay_ms=100).start()` then `.lookup_url`, `.feed_base`,
`.counts()`, `.publish(id, published)`, `.stop()`. Standalone:
`python3 scripts/lib/publisher.py --feeds 1000 --delay-ms 100` prints one JSON line
`{"msg":"listening","lookup_url":...,"feed_base":...,"control":...}` and serves until
SIGTERM/SIGINT (or --max-seconds). Python 3.11 standard library only.
"""
import argparse
import email.utils
import json
import random
import select
import signal
import socket
import sys
import threading
import time
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

BASE_ID = 1_800_000_000


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 4096
    allow_reuse_address = True

    def handle_error(self, request, client_address):  # a client that went away is not news
        pass


class Feed:
    """One podcast's feed: its episodes (newest first), version, validators and rendered body."""

    __slots__ = ("id", "episodes", "version", "modified", "body", "etag", "last_modified", "lock")

    def __init__(self, fid, episodes, started):
        rnd = random.Random(fid)
        newest = started - rnd.randint(3600, 72 * 3600)
        self.id = fid
        self.episodes = [
            {"guid": f"ep-{fid}-{k}", "title": f"Episode {episodes - k} of podcast {fid}", "published": newest - k * 7 * 86400,
             "n": episodes - k}
            for k in range(episodes)
        ]
        self.version = 1
        self.modified = started - 3600
        self.lock = threading.Lock()
        self.render()

    def render(self):
        items = []
        for e in self.episodes:
            items.append(
                "<item>"
                f"<title>{e['title']}</title>"
                f"<guid isPermaLink=\"false\">{e['guid']}</guid>"
                f"<pubDate>{email.utils.formatdate(e['published'], usegmt=True)}</pubDate>"
                f"<enclosure url=\"https://media.example.com/{self.id}/{e['guid']}.mp3\" length=\"{1_000_000 + e['n']}\" type=\"audio/mpeg\"/>"
                f"<itunes:duration>{1200 + (e['n'] * 37) % 2400}</itunes:duration>"
                f"<itunes:episode>{e['n']}</itunes:episode>"
                f"<description>Show notes of episode {e['n']}: guests, links and a short summary.</description>"
                "</item>")
        body = (
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            '<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd">'
            f"<channel><title>Podcast {self.id}</title><link>https://podcasts.example.com/{self.id}</link>"
            f"<description>Storm test podcast {self.id}.</description><language>en-us</language>"
            f"<itunes:author>Host {self.id % 97}</itunes:author>"
            f"<itunes:image href=\"https://podcasts.example.com/art/{self.id}.jpg\"/>"
            + "".join(items) + "</channel></rss>\n")
        self.body = body.encode()
        self.etag = f'"f{self.id}-v{self.version}"'
        self.last_modified = email.utils.formatdate(self.modified, usegmt=True)

    def add(self, published, title=None):
        with self.lock:
            n = max(e["n"] for e in self.episodes) + 1 if self.episodes else 1
            guid = f"ep-{self.id}-new{n}"
            self.episodes.append({"guid": guid, "title": title or f"Episode {n} of podcast {self.id}", "published": int(published), "n": n})
            self.episodes.sort(key=lambda e: -e["published"])
            self.version += 1
            # Last-Modified moves forward (second granularity): never equal to the previous one.
            self.modified = max(int(time.time()), self.modified + 1)
            self.render()
            return guid


class Publisher:
    def __init__(self, feeds=1000, episodes=10, delay_ms=100, lookup_host="127.0.0.2", feed_host="127.0.0.3", lookup_port=0, feed_port=0,
                 base_id=BASE_ID):
        self.n_feeds = feeds
        self.episodes = episodes
        self.delay = delay_ms / 1000
        self.base_id = base_id
        self.started = int(time.time())
        self._feeds = {}
        self._feeds_lock = threading.Lock()
        self._lock = threading.Lock()
        self._reset()
        self._lookup = _Server((lookup_host, lookup_port), self._handler("lookup"))
        self._feed = _Server((feed_host, feed_port), self._handler("feed"))
        self.lookup_url = f"http://{lookup_host}:{self._lookup.server_address[1]}/lookup"
        self.control = f"http://{lookup_host}:{self._lookup.server_address[1]}"
        self.feed_base = f"http://{feed_host}:{self._feed.server_address[1]}/feed"
        self._threads = []

    # state

    def ids(self):
        return list(range(self.base_id, self.base_id + self.n_feeds))

    def known(self, fid):
        return self.base_id <= fid < self.base_id + self.n_feeds

    def feed(self, fid):
        f = self._feeds.get(fid)
        if f is None:
            with self._feeds_lock:
                f = self._feeds.get(fid)
                if f is None:
                    f = self._feeds[fid] = Feed(fid, self.episodes, self.started)
        return f

    def _reset(self):
        with self._lock:
            self.lookups = 0
            self.lookup_ids = []  # ids in each lookup, in arrival order
            self.lookup_id_counts = {}  # id -> lookups that named it
            self.full = {}
            self.conditional = {}
            self.not_modified = {}
            self.other = 0  # feed-host requests that were not a known feed
            self.abandoned = {}  # id -> requests whose client had closed the connection when the answer was due
            self.in_flight = 0
            self.max_in_flight = 0
            self.first_at = None
            self.last_at = None
            self.log = []  # (start, end, id, client port, status, conditional): every feed request
                                # (status 0: abandoned, the client had gone when the answer was due)

    def reset_counts(self):
        in_flight = self.in_flight
        self._reset()
        with self._lock:
            self.in_flight = in_flight

    def counts(self):
        with self._lock:
            return {
                "lookups": self.lookups, "lookup_ids": list(self.lookup_ids), "lookup_distinct_ids": len(self.lookup_id_counts),
                "lookup_ids_repeated": sum(1 for n in self.lookup_id_counts.values() if n > 1),
                "lookup_id_max": max(self.lookup_id_counts.values(), default=0),
                "full": {str(k): v for k, v in self.full.items()},
                "conditional": {str(k): v for k, v in self.conditional.items()},
                "not_modified": {str(k): v for k, v in self.not_modified.items()},
                "abandoned": {str(k): v for k, v in self.abandoned.items()},
                "other": self.other, "in_flight": self.in_flight, "max_in_flight": self.max_in_flight,
                "first_at": self.first_at, "last_at": self.last_at, "delay_ms": self.delay * 1000,
            }

    def request_log(self):
        with self._lock:
            return list(self.log)

    def publish(self, fid, published, title=None):
        return self.feed(fid).add(published, title)

    # HTTP

    def _handler(self, role):
        pub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            server_version = "storm-publisher"

            def log_message(self, *args):
                pass

            def send(self, status, body=b"", ctype="application/json", headers=()):
                self.send_response(status)
                for k, v in headers:
                    self.send_header(k, v)
                if status != 304:
                    self.send_header("Content-Type", ctype)
                    self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if status != 304 and self.command != "HEAD":
                    self.wfile.write(body)

            def do_GET(self):
                url = urllib.parse.urlsplit(self.path)
                try:
                    if role == "feed":
                        return self.feed(url)
                    if url.path == "/lookup":
                        return self.lookup(url)
                    if url.path == "/__counts":
                        return self.send(200, json.dumps(pub.counts()).encode())
                    if url.path == "/__log":
                        return self.send(200, json.dumps(pub.request_log()).encode())
                    self.send(404, b'{"error":"not found"}')
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def do_POST(self):
                url = urllib.parse.urlsplit(self.path)
                q = dict(urllib.parse.parse_qsl(url.query))
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                if role != "lookup":
                    return self.send(405)
                if url.path == "/__publish":
                    fid = int(q["id"])
                    if not pub.known(fid):
                        return self.send(404, b'{"error":"unknown feed"}')
                    published = int(q.get("published", time.time()))
                    guid = pub.publish(fid, published, q.get("title"))
                    return self.send(200, json.dumps({"id": fid, "guid": guid, "published": published}).encode())
                if url.path == "/__reset_counts":
                    pub.reset_counts()
                    return self.send(204)
                if url.path == "/__delay":
                    pub.delay = int(q["ms"]) / 1000
                    return self.send(204)
                self.send(404, b'{"error":"not found"}')

            def client_gone(self):
                """The client closed its end while the answer was being delayed (it gave up)."""
                try:
                    readable, _, _ = select.select([self.connection], [], [], 0)
                    return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""
                except OSError:
                    return True

            def lookup(self, url):
                q = dict(urllib.parse.parse_qsl(url.query))
                ids = [int(x) for x in q.get("id", "").split(",") if x.strip().isdigit()]
                with pub._lock:
                    pub.lookups += 1
                    pub.lookup_ids.append(len(ids))
                    for fid in ids:
                        pub.lookup_id_counts[fid] = pub.lookup_id_counts.get(fid, 0) + 1
                results = []
                for fid in ids:
                    if not pub.known(fid):
                        continue
                    results.append({
                        "wrapperType": "track", "kind": "podcast", "collectionId": fid, "trackId": fid,
                        "artistName": f"Host {fid % 97}", "collectionName": f"Podcast {fid}", "trackName": f"Podcast {fid}",
                        "collectionViewUrl": f"https://podcasts.example.com/{fid}", "releaseDate": "2025-11-03T10:45:00Z",
                        "trackCount": pub.episodes, "country": "USA", "primaryGenreName": "Technology", "genres": ["Technology", "Podcasts"],
                        "feedUrl": f"{pub.feed_base}/{fid}.xml",
                        "artworkUrl600": f"https://podcasts.example.com/art/{fid}/600x600bb.jpg",
                        "artworkUrl100": f"https://podcasts.example.com/art/{fid}/100x100bb.jpg",
                    })
                self.send(200, json.dumps({"resultCount": len(results), "results": results}).encode(), "text/javascript; charset=utf-8")

            def feed(self, url):
                name = url.path.rsplit("/", 1)[-1]
                fid = int(name[:-4]) if url.path.startswith("/feed/") and name.endswith(".xml") and name[:-4].isdigit() else None
                now = time.time()
                with pub._lock:
                    pub.in_flight += 1
                    pub.max_in_flight = max(pub.max_in_flight, pub.in_flight)
                    pub.first_at = pub.first_at or now
                try:
                    if pub.delay:
                        time.sleep(pub.delay)
                    if fid is None or not pub.known(fid):
                        with pub._lock:
                            pub.other += 1
                        return self.send(404, b"not found", "text/plain")
                    if self.client_gone():
                        with pub._lock:
                            pub.abandoned[fid] = pub.abandoned.get(fid, 0) + 1
                            pub.log.append((round(now, 4), round(time.time(), 4), fid, self.client_address[1], 0, False))
                        self.close_connection = True
                        return
                    f = pub.feed(fid)
                    with f.lock:
                        body, etag, last_modified, modified = f.body, f.etag, f.last_modified, f.modified
                    inm = self.headers.get("If-None-Match")
                    ims = self.headers.get("If-Modified-Since")
                    if inm is not None:
                        fresh = inm.strip() == "*" or etag in [t.strip().removeprefix("W/") for t in inm.split(",")]
                    elif ims is not None:
                        try:
                            fresh = email.utils.parsedate_to_datetime(ims).timestamp() >= modified
                        except (TypeError, ValueError):
                            fresh = False
                    else:
                        fresh = False
                    with pub._lock:
                        if inm is not None or ims is not None:
                            pub.conditional[fid] = pub.conditional.get(fid, 0) + 1
                        if fresh:
                            pub.not_modified[fid] = pub.not_modified.get(fid, 0) + 1
                        else:
                            pub.full[fid] = pub.full.get(fid, 0) + 1
                        pub.last_at = time.time()
                        pub.log.append((round(now, 4), round(pub.last_at, 4), fid, self.client_address[1], 304 if fresh else 200,
                                        inm is not None or ims is not None))
                    headers = [("ETag", etag), ("Last-Modified", last_modified), ("Cache-Control", "max-age=0")]
                    if fresh:
                        return self.send(304, headers=headers)
                    self.send(200, body, "application/rss+xml; charset=utf-8", headers)
                finally:
                    with pub._lock:
                        pub.in_flight -= 1

        return Handler

    def start(self):
        for server in (self._lookup, self._feed):
            t = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True)
            t.start()
            self._threads.append(t)
        return self

    def stop(self):
        for server in (self._lookup, self._feed):
            server.shutdown()
            server.server_close()


class Remote:
    """A publisher in another process, through its control API (what `storm.py` uses)."""

    def __init__(self, control):
        self.control = control

    def _call(self, method, path, timeout=10):
        req = urllib.request.Request(self.control + path, method=method, data=b"" if method == "POST" else None)
        with urllib.request.urlopen(req, timeout=timeout) as r:
            body = r.read()
        return json.loads(body) if body else None

    def counts(self):
        return self._call("GET", "/__counts")

    def reset_counts(self):
        self._call("POST", "/__reset_counts")

    def publish(self, fid, published, title=None):
        q = {"id": fid, "published": int(published)}
        if title:
            q["title"] = title
        return self._call("POST", "/__publish?" + urllib.parse.urlencode(q))

    def request_log(self):
        return self._call("GET", "/__log", timeout=30)

    def set_delay(self, ms):
        self._call("POST", f"/__delay?ms={int(ms)}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--feeds", type=int, default=1000, help="known podcasts: ids base-id .. base-id+feeds-1")
    ap.add_argument("--episodes", type=int, default=10, help="episodes per feed")
    ap.add_argument("--delay-ms", type=int, default=100, help="delay of every feed response (200 and 304)")
    ap.add_argument("--lookup-host", default="127.0.0.2")
    ap.add_argument("--feed-host", default="127.0.0.3")
    ap.add_argument("--lookup-port", type=int, default=0)
    ap.add_argument("--feed-port", type=int, default=0)
    ap.add_argument("--base-id", type=int, default=BASE_ID)
    ap.add_argument("--max-seconds", type=float, default=6 * 3600, help="stop by itself after this long")
    a = ap.parse_args(argv)
    p = Publisher(a.feeds, a.episodes, a.delay_ms, a.lookup_host, a.feed_host, a.lookup_port, a.feed_port, a.base_id).start()
    print(json.dumps({"msg": "listening", "lookup_url": p.lookup_url, "feed_base": p.feed_base, "control": p.control,
                      "first_id": a.base_id, "feeds": a.feeds}), flush=True)
    done = threading.Event()
    for s in (signal.SIGTERM, signal.SIGINT):
        signal.signal(s, lambda *_: done.set())
    done.wait(a.max_seconds)
    p.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
