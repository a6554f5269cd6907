#!/usr/bin/env python3
"""Memory under load (make soak): RSS must be bounded by configuration, never by load.

The release binary in --fixtures mode with CACHE_MAX_BYTES=4 MiB is driven with cache misses
as fast as it answers them (wrk, 6 connections: search terms never asked before, Kiva pages)
beside a fixed rate of hits from several loopback sources, long enough to plateau; its RSS is
read from /proc every second. Variants:
  misses   no Redis
  redis    the same with a real Redis as the shared tier
  streams  10,000 idle /episodes/events streams held open while the misses run
  images   artwork resizes (signed /images URLs at every width the answers offer) beside misses
Each fails when RSS passes its ceiling (docs/operations.md, *Memory*) or still climbs in the
last third of the run, and when requests stay in flight once the load stops (work that outlives
its request). Loopback only; stops what it starts, by PID.

Usage: scripts/tests/soak.py FEEDPROXY_BIN [--seconds S] [--only VARIANT ...]
"""
import argparse
import http.client
import json
import os
import random
import re
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from loopback import check, failures, free_port, start_feedproxy, stop  # noqa: E402

MIB = 1 << 20
CACHE_MAX_BYTES = 4 * MIB
# The ceilings docs/operations.md gives (*Memory*): the cache's budget plus a fixed overhead,
# plus what each open stream may hold.
BASE_CEILING = CACHE_MAX_BYTES + 76 * MIB
STREAMS = 10_000
STREAM_CEILING = BASE_CEILING + STREAMS * 8 * 1024
IMAGE_CEILING = BASE_CEILING + 64 * MIB  # IMAGE_DECODERS (2) decodes of at most 24 MP, libvips' caches off
SOURCES = [f"127.0.0.{n}" for n in range(20, 26)]


def rss_bytes(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def metric(port: int, name: str) -> float:
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return -1


class Driver(threading.Thread):
    """One client (its own loopback source, one keep-alive connection) asking `paths()` at a
    fixed rate until `stop` is set; counts answers by status."""

    def __init__(self, port: int, source: str, rate: float, paths, stop: threading.Event):
        super().__init__(daemon=True)
        self.port, self.source, self.interval, self.paths, self.stop_event = port, source, 1.0 / rate, paths, stop
        self.statuses = {}

    def connection(self):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30, source_address=(self.source, 0))
        c.connect()
        return c

    def run(self):
        conn = self.connection()
        due = time.monotonic()
        while not self.stop_event.is_set():
            path = self.paths()
            try:
                conn.request("GET", path)
                r = conn.getresponse()
                r.read()
                self.statuses[r.status] = self.statuses.get(r.status, 0) + 1
                if r.getheader("Connection", "").lower() == "close":
                    conn.close()
                    conn = self.connection()
            except (OSError, http.client.HTTPException):
                self.statuses["error"] = self.statuses.get("error", 0) + 1
                conn.close()
                time.sleep(0.05)
                conn = self.connection()
            due += self.interval
            pause = due - time.monotonic()
            if pause > 0:
                time.sleep(pause)
            elif pause < -1:
                due = time.monotonic()  # fell behind (a busy machine): no catch-up burst


def miss_path():
    if random.random() < 0.7:
        return f"/podcasts?term=soak{random.getrandbits(48):x}&limit=5"
    return f"/loans?page={random.randint(1, 100_000)}"


MISSES_LUA = """
math.randomseed(os.time())
request = function()
  if math.random() < 0.7 then
    return wrk.format("GET", string.format("/podcasts?term=soak%x%x&limit=5", math.random(0, 0x7fffffff), math.random(0, 0x7fffffff)))
  end
  return wrk.format("GET", "/loans?page=" .. math.random(1, 100000))
end
"""


def hit_path():
    return random.choice(["/photos", "/loans", "/podcasts?term=swift", "/healthz"])


def image_paths(port: int):
    """Signed resize URLs the fixture answers offer (every width of every artwork found)."""
    urls = set()
    for path in ["/podcasts?term=swift", "/podcasts?term=news", "/photos", "/loans"]:
        try:
            body = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10).read())
        except Exception:
            continue

        def walk(value):
            if isinstance(value, dict):
                for v in value.values():
                    walk(v)
            elif isinstance(value, list):
                for v in value:
                    walk(v)
            elif isinstance(value, str) and value.startswith("/images?"):
                urls.add(value)
            elif isinstance(value, str) and "/images?" in value:
                urls.add(value[value.index("/images?"):])

        walk(body)
    return sorted(urls)


def open_streams(port: int, n: int):
    socks = []
    request = b"GET /episodes/events?podcasts=1590000051 HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n"
    for i in range(n):
        s = socket.socket()
        s.bind((f"127.0.1.{10 + i % 200}", 0))
        s.connect(("127.0.0.1", port))
        s.sendall(request)
        socks.append(s)
    # Each reads its head and first events, then sits idle (the kernel keeps what arrives).
    time.sleep(2)
    opened = 0
    for s in socks:
        s.setblocking(False)
        try:
            if s.recv(65536).startswith(b"HTTP/1.1 200"):
                opened += 1
        except BlockingIOError:
            pass
    return socks, opened


def start_redis():
    port = free_port()
    data = tempfile.mkdtemp(prefix="soak-redis-")
    proc = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", data,
         "--maxmemory", "64mb", "--maxmemory-policy", "volatile-lru"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    return proc, port, data


def budgets_off(binary: str):
    """Every upstream's RATE_LIMIT_*_PER_MIN (as --help names them) at a million a minute."""
    text = subprocess.run([binary, "--help"], capture_output=True, text=True, check=True).stdout
    return {name: "1000000" for name in re.findall(r"\((RATE_LIMIT_[A-Z0-9_]+_PER_MIN)\)", text)}


def soak(binary: str, variant: str, seconds: float):
    print(f"soak [{variant}] {seconds:.0f} s", flush=True)
    # Budgets out of the way: every miss reaches the (fixture) upstream, the heaviest case.
    env = dict(os.environ, **budgets_off(binary), LOG_LEVEL="warn", CACHE_MAX_BYTES=str(CACHE_MAX_BYTES), CLIENT_MISS_RATE_PER_MIN="0",
               EVENT_STREAMS_PER_CLIENT=str(STREAMS), EVENT_STREAMS_MAX=str(STREAMS + 100), MAX_CONNECTIONS=str(STREAMS + 1000))
    redis = None
    if variant == "redis":
        redis = start_redis()
        env["REDIS_URL"] = f"redis://127.0.0.1:{redis[1]}"
    port = free_port()
    proc = start_feedproxy(binary, port, env)
    if proc.poll() is not None or rss_bytes(proc.pid) == 0:
        check(f"[{variant}] started", f"exit {proc.poll()}", False, "a running server")
        return
    stop_event = threading.Event()
    socks = []
    try:
        ceiling = BASE_CEILING
        miss_rate, hit_rate = 20.0, 50.0  # per source and second: 120 resizes (images only) and 300 hits a second
        lua = os.path.join(tempfile.gettempdir(), f"soak-misses-{os.getpid()}.lua")
        paths_for_misses = miss_path
        if variant == "streams":
            socks, opened = open_streams(port, STREAMS)
            check("streams opened", opened, opened >= STREAMS * 0.98, f">= {int(STREAMS * 0.98)}")
            ceiling = STREAM_CEILING
        if variant == "images":
            images = image_paths(port)
            check("resize URLs found", len(images), len(images) > 0, "> 0")
            if images:
                paths_for_misses = lambda: random.choice(images)  # noqa: E731
            ceiling = IMAGE_CEILING
        drivers = [Driver(port, s, hit_rate, hit_path, stop_event) for s in SOURCES]
        if variant == "images":
            drivers += [Driver(port, s, miss_rate, paths_for_misses, stop_event) for s in SOURCES]
        for d in drivers:
            d.start()
        with open(lua, "w") as f:
            f.write(MISSES_LUA)
        wrk = subprocess.Popen(["wrk", "-t1", "-c6", f"-d{int(seconds)}s", "-s", lua, f"http://127.0.0.1:{port}/"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        samples = []
        started = time.monotonic()
        while time.monotonic() - started < seconds:
            time.sleep(1)
            samples.append(rss_bytes(proc.pid))
        stop_event.set()
        wrk_out = wrk.communicate(timeout=60)[0]
        misses = next((line.split()[0] for line in wrk_out.splitlines() if "requests in" in line), "?")
        print(f"  misses (wrk): {misses} in {seconds:.0f} s", flush=True)
        for d in drivers:
            d.join(timeout=35)
        statuses = {}
        for d in drivers:
            for k, v in d.statuses.items():
                statuses[k] = statuses.get(k, 0) + v
        answered = sum(v for k, v in statuses.items() if k != "error")
        print(f"  answers: {dict(sorted(statuses.items(), key=str))}", flush=True)
        check(f"[{variant}] hits answered", answered, answered >= seconds * 100, f">= {int(seconds * 100)}")
        peak = max(samples)
        third = max(1, len(samples) // 3)
        early = max(samples[:-third])
        late = max(samples[-third:])
        print(f"  RSS MB each 5 s: {[round(s / MIB) for s in samples[::5]]}", flush=True)
        check(f"[{variant}] peak RSS", f"{peak / MIB:.1f} MB", peak <= ceiling, f"<= {ceiling / MIB:.0f} MB")
        check(f"[{variant}] plateau (last third vs before)", f"{late / MIB:.1f} / {early / MIB:.1f} MB", late <= early * 1.05 + 4 * MIB,
              "at most 5 % + 4 MB more")
        # Once the load stops nothing may stay in flight (the deadline timers' leak showed here).
        for _ in range(100):
            left = metric(port, "feedproxy_requests_in_flight"), metric(port, "feedproxy_cache_deadline_waits")
            if left[0] <= 1 and left[1] == 0:
                break
            time.sleep(0.1)
        check(f"[{variant}] in flight / deadline waits after the load", left, left[0] <= 1 and left[1] == 0, "(1, 0) within 10 s: the scrape itself is in flight")
    finally:
        stop_event.set()
        for s in socks:
            s.close()
        stop(proc)
        if redis:
            stop(redis[0])
            shutil.rmtree(redis[2], ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--seconds", type=float, default=40)
    ap.add_argument("--only", nargs="*", default=["misses", "redis", "streams", "images"])
    args = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, STREAMS + 4096)), hard))
    for variant in args.only:
        soak(args.binary, variant, args.seconds)
    print(f"soak: {len(failures)} failed" + (f": {', '.join(failures)}" if failures else ""))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
