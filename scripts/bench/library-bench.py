#!/usr/bin/env python3
"""A podcast app refreshing a library of 100 subscriptions, against `feedproxy --fixtures`.

Usage: python3 scripts/bench/library-bench.py path/to/feedproxy   (run by `make bench`)

Warm (every feed cached, nothing new): one conditional `GET /episodes?podcasts=<100 ids>`
(`If-None-Match` with the last answer's ETag: a 304) against 100 single
`/podcasts/{id}/episodes` requests over one keep-alive connection; bytes on the wire
(status line, headers and body) and wall time, the median of 7 rounds each.
Cold (a fresh service, no feed cached): the batch's time to its answer and until every
podcast is `ok`, and the upstream requests it cost (iTunes lookups, feed downloads), from the
fixture upstream's counters. Exits 1 when a target is missed: warm batch bytes <= 1% and
time <= 20% of the singles'; cold: one iTunes lookup and one download per feed.
"""
import http.client
import json
import os
import statistics
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from loopback import free_port, start_feedproxy, stop  # noqa: E402  (the scripts' shared helpers)

IDS = [1590000001 + i for i in range(100)]  # the fixture upstream's made-up library
BATCH = "/episodes?podcasts=" + ",".join(map(str, IDS))


def wire_bytes(response, body):
    head = len(f"HTTP/1.1 {response.status} {response.reason}\r\n") + sum(len(f"{k}: {v}\r\n") for k, v in response.getheaders()) + 2
    return head + len(body)


def get(conn, path, headers=None):
    conn.request("GET", path, headers=headers or {})
    r = conn.getresponse()
    body = r.read()
    return r, body


def fixture_counts(log_name):
    for _ in range(100):
        for line in open(log_name):
            if "fixtures_upstream" in line:
                base = json.loads(line)["fixtures_upstream"]
                return lambda: json.loads(urllib.request.urlopen(f"{base}/__fixture/counts", timeout=5).read())
        time.sleep(0.05)
    raise SystemExit("the fixture upstream's address was not logged")


def main():
    binary = sys.argv[1]
    failed = []
    # Cold: a fresh service with generous limits (one person's library, not a flood).
    port = free_port()
    log = tempfile.NamedTemporaryFile(prefix="feedproxy-library-", suffix=".log", delete=False)
    env = dict(os.environ, LOG_LEVEL="info", RATE_LIMIT_ITUNES_PER_MIN="6000", ALLOW_PRIVATE_FEED_HOSTS="true")
    proc = start_feedproxy(binary, port, env, stdout=log)
    try:
        counts = fixture_counts(log.name)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        start = time.monotonic()
        r, body = get(conn, BATCH)
        first = time.monotonic() - start
        statuses = [p["status"] for p in json.loads(body)["podcasts"]]
        while statuses.count("ok") < len(IDS) and time.monotonic() - start < 30:
            time.sleep(float(r.getheader("Retry-After") or "0.2"))
            r, body = get(conn, BATCH)
            statuses = [p["status"] for p in json.loads(body)["podcasts"]]
        all_ok = time.monotonic() - start
        c = counts()
        lookups, downloads = c.get("itunes-lookup", 0), c.get("rss", 0)
        print(f"library cold: 100 podcasts, first answer in {first * 1000:.0f} ms ({statuses.count('ok')} ok), all ok in {all_ok * 1000:.0f} ms; "
              f"upstream: {lookups} iTunes lookup(s), {downloads} feed downloads")
        if lookups != 1 or downloads != len(IDS):
            failed.append("cold: one lookup and one download per feed")

        # Warm: the same service, every feed cached; nothing new since the last refresh.
        singles_bytes, singles_time, batch_bytes, batch_time = [], [], [], []
        r, body = get(conn, BATCH)
        etag = r.getheader("ETag")
        for _ in range(7):
            t = time.monotonic()
            total = 0
            for i in IDS:
                r, body = get(conn, f"/podcasts/{i}/episodes")
                total += wire_bytes(r, body)
            singles_time.append(time.monotonic() - t)
            singles_bytes.append(total)
            t = time.monotonic()
            r, body = get(conn, BATCH, {"If-None-Match": etag})
            batch_time.append(time.monotonic() - t)
            batch_bytes.append(wire_bytes(r, body))
            if r.status != 304:
                failed.append(f"warm: the conditional batch answered {r.status}, not 304")
        sb, st, bb, bt = (statistics.median(x) for x in (singles_bytes, singles_time, batch_bytes, batch_time))
        print(f"library warm (nothing new): one conditional batch {bb:.0f} B in {bt * 1000:.2f} ms against 100 single requests "
              f"{sb:.0f} B in {st * 1000:.1f} ms over keep-alive: {bb / sb:.4f}x the bytes, {bt / st:.4f}x the time")
        if bb > 0.01 * sb or bt > 0.2 * st:
            failed.append("warm: batch bytes <= 1% and time <= 20% of 100 singles")
        conn.close()
    finally:
        stop(proc)
        os.unlink(log.name)
    for f in failed:
        print(f"FAIL {f}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
