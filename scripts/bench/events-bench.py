#!/usr/bin/env python3
"""Event fan-out: FeedProxy's /episodes/events beside nginx + nchan, side by side, one run.

For each server: N idle Server-Sent Events streams opened from 40 loopback source addresses
(many people, several addresses), memory per stream (the server's RSS growth over N), then
one event published to all of them: FeedProxy's from a publisher's ping (/hub/notify after a
new episode at the fixture upstream: the feed is read and the event built from it), nchan's
from its publisher endpoint with a message of the same size. Reported: time from the ping
(the publish) to the event on every stream, p50/p99/max, as this one client process saw it.

Usage: scripts/bench/events-bench.py FEEDPROXY_BIN [streams] (make events-bench)
Loopback only; stops what it starts, by PID.
"""
import json
import os
import resource
import selectors
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

SOURCES = [f"127.0.0.{n}" for n in range(10, 50)]
PODCAST = 1590000051


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_kib(pids) -> int:
    total = 0
    for pid in pids:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
    return total


def wait_http(url: str):
    for _ in range(100):
        try:
            urllib.request.urlopen(url, timeout=2)
            return
        except Exception:
            time.sleep(0.1)
    raise SystemExit(f"not answering: {url}")


class Streams:
    """N streams on one selector: each holds the bytes it has received since last asked."""

    def __init__(self, port: int, request: bytes, n: int):
        self.sel = selectors.DefaultSelector()
        self.socks = []
        for i in range(n):
            s = socket.socket()
            s.bind((SOURCES[i % len(SOURCES)], 0))
            s.connect(("127.0.0.1", port))
            s.sendall(request)
            s.setblocking(False)
            self.socks.append(s)
            self.sel.register(s, selectors.EVENT_READ, i)
        self.seen = [b""] * n
        self.received = [0] * n

    def wait_for(self, marker: bytes, timeout: float):
        """Reads until every stream has `marker` in what it received; each one's arrival time."""
        arrived = [None] * len(self.socks)
        left = len(self.socks)
        end = time.monotonic() + timeout
        while left and time.monotonic() < end:
            for key, _ in self.sel.select(timeout=0.5):
                i = key.data
                try:
                    data = key.fileobj.recv(65536)
                except BlockingIOError:
                    continue
                if not data:
                    continue
                self.seen[i] += data
                if arrived[i] is None and marker in self.seen[i]:
                    arrived[i] = time.monotonic()
                    self.received[i] = len(self.seen[i])
                    self.seen[i] = b""
                    left -= 1
        return arrived

    def close(self):
        for s in self.socks:
            s.close()


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p))]


def report(name, n, before, after, t0, arrived, event_bytes):
    got = [t - t0 for t in arrived if t is not None]
    per = (after - before) / n
    line = (f"{name}: {n} streams, {per:.1f} KiB each (RSS {before} -> {after} KiB); one event ({event_bytes} bytes) on "
            f"{len(got)}/{n} streams: p50 {percentile(got, 0.5) * 1000:.0f} ms, p99 {percentile(got, 0.99) * 1000:.0f} ms, "
            f"max {max(got) * 1000:.0f} ms" if got else f"{name}: no event arrived")
    print(line)
    return per, got


def feedproxy(binary: str, n: int):
    port = free_port()
    env = dict(os.environ, LOG_LEVEL="warn", CLIENT_MISS_RATE_PER_MIN="0", EVENT_STREAMS_PER_CLIENT=str(n),
               EVENT_STREAMS_MAX=str(n + 100), MAX_CONNECTIONS=str(n + 1000))
    log = tempfile.NamedTemporaryFile(prefix="events-bench-", suffix=".log", delete=False)
    proc = subprocess.Popen([binary, "--fixtures", "Fixtures", "--port", str(port), "--threads", "2"], env=env, stdout=log, stderr=log)
    try:
        base = f"http://127.0.0.1:{port}"
        wait_http(base + "/healthz")
        urllib.request.urlopen(f"{base}/podcasts/{PODCAST}/episodes?limit=1", timeout=10).read()
        # The fixture upstream is where the podcast's feed is.
        feed = json.load(urllib.request.urlopen(f"{base}/podcasts/{PODCAST}", timeout=10))["item"]["feedUrl"]
        fixtures = "/".join(feed.split("/")[:3])
        time.sleep(0.5)
        before = rss_kib([proc.pid])
        streams = Streams(port, f"GET /episodes/events?podcasts={PODCAST}&limit=1 HTTP/1.1\r\nHost: x\r\n\r\n".encode(), n)
        first = streams.wait_for(b"event: episodes", 120)
        if None in first:
            print(f"feedproxy: only {sum(1 for t in first if t)} of {n} streams opened")
        time.sleep(1)
        after = rss_kib([proc.pid])
        at = int(time.time())
        urllib.request.urlopen(urllib.request.Request(f"{fixtures}/__fixture/publish/{PODCAST}?at={at}", method="POST"), timeout=5)
        t0 = time.monotonic()
        urllib.request.urlopen(f"{base}/hub/notify?id={PODCAST}", timeout=5)
        arrived = streams.wait_for(b"event: episodes", 60)
        size = sorted(streams.received)[n // 2]  # the event as a stream received it
        streams.close()
        return report("feedproxy /episodes/events", n, before, after, t0, arrived, size) + (size,)
    finally:
        proc.terminate()
        proc.wait()
        os.unlink(log.name)


def nchan(n: int, event_bytes: int):
    module = "/usr/lib/nginx/modules/ngx_nchan_module.so"
    if not os.path.exists(module):
        if os.geteuid() == 0:
            subprocess.run(["apt-get", "install", "-y", "-qq", "libnginx-mod-nchan"], env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"),
                           stdout=subprocess.DEVNULL, check=False)
        if not os.path.exists(module):
            print("nchan: libnginx-mod-nchan is not installed (apt-get install libnginx-mod-nchan)")
            return None
    port = free_port()
    work = tempfile.mkdtemp(prefix="events-bench-nchan-")
    conf = f"""
load_module {module};
worker_processes 2;
worker_cpu_affinity auto;
worker_rlimit_nofile {n + 1000};
pid {work}/nginx.pid;
error_log {work}/error.log warn;
events {{ worker_connections {n + 1000}; }}
http {{
  access_log off;
  client_body_temp_path {work}; proxy_temp_path {work}; fastcgi_temp_path {work}; uwsgi_temp_path {work}; scgi_temp_path {work};
  server {{
    listen 127.0.0.1:{port} reuseport;
    location /sub {{ nchan_subscriber eventsource; nchan_channel_id episodes; }}
    location /pub {{ nchan_publisher; nchan_channel_id episodes; }}
  }}
}}
"""
    with open(f"{work}/nginx.conf", "w") as f:
        f.write(conf)
    proc = subprocess.Popen(["nginx", "-c", f"{work}/nginx.conf", "-g", "daemon off;"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(50):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        time.sleep(0.3)
        workers = [int(p) for p in subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout.split()]
        pids = [proc.pid] + workers
        before = rss_kib(pids)
        streams = Streams(port, b"GET /sub HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n", n)
        streams.wait_for(b"\r\n\r\n", 120)
        time.sleep(1)
        after = rss_kib(pids)
        message = b"x" * event_bytes
        t0 = time.monotonic()
        urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{port}/pub", data=message, method="POST"), timeout=5)
        arrived = streams.wait_for(b"data: x", 60)
        streams.close()
        return report("nginx + nchan (EventSource)", n, before, after, t0, arrived, event_bytes)
    finally:
        proc.terminate()
        proc.wait()
        shutil.rmtree(work, ignore_errors=True)


def main():
    binary = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 10000
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    n = min(n, hard - 200)
    fp = feedproxy(binary, n)
    nc = nchan(n, fp[2] if fp else 400)
    if fp and nc and fp[1] and nc[1]:
        print(f"ratio (feedproxy / nchan): memory per stream {fp[0] / max(nc[0], 0.01):.2f}, "
              f"p50 {percentile(fp[1], 0.5) / max(percentile(nc[1], 0.5), 1e-6):.2f}, p99 {percentile(fp[1], 0.99) / max(percentile(nc[1], 0.99), 1e-6):.2f}")


if __name__ == "__main__":
    main()
