#!/usr/bin/env python3
"""Upstream bytes per refresh of an unchanged podcast feed, next to the full fetch.

Usage: python3 scripts/bench/refresh-bytes.py path/to/feedproxy   (run by `make bench`)

`feedproxy --fixtures` (whose feeds send ETag and Last-Modified and answer 304 to a matching
validator, as podcast hosts and CDNs do): one load of /podcasts/{id}/episodes, then five
refreshes (`Cache-Control: no-cache`, each going upstream). Prints the feed body bytes the
fixture sent for each, and exits 1 if six loads cost more than 1.1x one full fetch.
"""
import json
import os
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from loopback import free_port, start_feedproxy, stop  # noqa: E402  (the scripts' shared helpers)


def main():
    port = free_port()
    log = tempfile.NamedTemporaryFile(prefix="feedproxy-refresh-", suffix=".log", delete=False)
    env = dict(os.environ, LOG_LEVEL="info")
    proc = start_feedproxy(sys.argv[1], port, env, stdout=log)
    try:
        fixture = None
        for _ in range(100):
            for line in open(log.name):
                if "fixtures_upstream" in line:
                    fixture = json.loads(line)["fixtures_upstream"]
            if fixture:
                break
            time.sleep(0.05)
        def sent():
            return json.loads(urllib.request.urlopen(f"{fixture}/__fixture/bytes", timeout=5).read()).get("rss", 0)
        path = f"http://127.0.0.1:{port}/podcasts/1200361736/episodes"
        urllib.request.urlopen(path, timeout=10).read()
        full = sent()
        per = []
        for _ in range(5):
            before = sent()
            urllib.request.urlopen(urllib.request.Request(path, headers={"Cache-Control": "no-cache"}), timeout=10).read()
            per.append(sent() - before)
        total = sent()
        ratio = total / max(full, 1)
        print(f"upstream feed bytes: full fetch {full}, each conditional refresh {per} (304s), six loads {total} = {ratio:.2f}x one fetch"
              f"   ({'ok' if ratio <= 1.1 else 'FAIL'}: target <= 1.1x)")
        return 0 if ratio <= 1.1 else 1
    finally:
        stop(proc)
        os.unlink(log.name)


if __name__ == "__main__":
    sys.exit(main())
