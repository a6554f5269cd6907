#!/usr/bin/env python3
"""Event fan-out: FeedProxy's /episodes/events beside nginx + nchan, side by side, one run.

Round "same" (the easy shape): for each server, N idle Server-Sent Events streams opened from
40 loopback source addresses (many people, several addresses), memory per stream (the
server's RSS growth over N), then one event published to all of them: FeedProxy's from a
publisher's ping (/hub/notify after a new episode at the fixture upstream: the feed is read
and the event built from it), nchan's from its publisher endpoint with a message of the same
size. Reported: time from the ping (the publish) to the event on every stream, p50/p99/max,
as this one client process saw it.

Round "libraries" (a real app's shape, issue 66): each of the N streams is an app following
20 of the fixtures' library podcasts drawn by Zipf (s = 1.0, seeded: runs compare), opened
from its own refresh's sync token (POST /episodes, then /episodes/events?sync=), FeedProxy
with a Redis beside it; nchan (one worker) with N EventSource subscribers, each multiplexing
the same 20 channels (/sub/a,b,c). For each: memory per stream (RSS growth at the end of the
idle window, once settled), idle CPU over 15 s with every stream open, one new episode of the
most followed podcast (fan-out to its followers, p50/p99/max, reached/expected), then a burst of the 50 most followed podcasts published at
once (p50/p99 over every (stream, podcast) pair expected); the ratios FeedProxy/nchan and the
issue's goals beside them.

Usage: scripts/bench/events-bench.py FEEDPROXY_BIN [streams] [--shape same|libraries|both]
(make events-bench; SHAPE=libraries for that round alone). A quick try:
scripts/bench/events-bench.py BIN 500 --shape libraries
Loopback only; stops what it starts, by PID.
"""
import argparse
import collections
import http.client
import itertools
import json
import os
import random
import resource
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from loopback import free_port  # noqa: E402  (the scripts' shared helpers)

SOURCES = [f"127.0.0.{n}" for n in range(10, 50)]
PODCAST = 1590000051


def rss_kib(pids) -> int:
    total = 0
    for pid in pids:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
    return total


def nginx_pids(proc, port: int):
    """nginx's master and workers once it answers on `port` (5 s at most)."""
    for _ in range(50):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.1)
    time.sleep(0.3)
    workers = [int(p) for p in subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout.split()]
    return [proc.pid] + workers


def wait_http(url: str, log=None):
    """Until `url` answers (30 s at most); else stops the bench, with the server's log tail."""
    for _ in range(300):
        try:
            urllib.request.urlopen(url, timeout=2)
            return
        except Exception:
            time.sleep(0.1)
    tail = ""
    if log is not None:
        with open(log.name, errors="replace") as f:
            tail = "".join(f.readlines()[-10:])
    raise SystemExit(f"not answering: {url}\n{tail}")


class Streams:
    """N streams on one selector: each holds the bytes it has received since last asked.
    `request`: the bytes every stream sends, or a list of them, one a stream."""

    def __init__(self, port: int, request, n: int):
        self.sel = selectors.DefaultSelector()
        self.socks = []
        for i in range(n):
            s = socket.socket()
            s.bind((SOURCES[i % len(SOURCES)], 0))
            s.connect(("127.0.0.1", port))
            s.sendall(request[i] if isinstance(request, list) else request)
            s.setblocking(False)
            self.socks.append(s)
            self.sel.register(s, selectors.EVENT_READ, i)
        self.seen = [b""] * n
        self.received = [0] * n
        # Streams the server closed (or reset): out of the selector, never waited for again.
        self.closed = set()

    def _recv(self, key):
        """What a readable stream has; None when nothing yet, or when it closed (then it leaves the selector)."""
        try:
            data = key.fileobj.recv(65536)
        except BlockingIOError:
            return None
        except OSError:
            data = b""
        if not data:
            self.sel.unregister(key.fileobj)
            self.closed.add(key.data)
            return None
        return data

    def wait_for(self, marker: bytes, timeout: float):
        """Reads until every stream has `marker` in what it received; each one's arrival time."""
        arrived = [None] * len(self.socks)
        left = len(self.socks) - len(self.closed)
        end = time.monotonic() + timeout
        while left > 0 and time.monotonic() < end:
            for key, _ in self.sel.select(timeout=0.5):
                i = key.data
                data = self._recv(key)
                if data is None:
                    if i in self.closed and arrived[i] is None:
                        left -= 1  # closed before its marker: not waited for
                    continue
                self.seen[i] += data
                if arrived[i] is None and marker in self.seen[i]:
                    arrived[i] = time.monotonic()
                    self.received[i] = len(self.seen[i])
                    self.seen[i] = b""
                    left -= 1
        return arrived

    def drain(self, seconds: float):
        """Reads and drops what comes for `seconds` (heartbeats and such), as a live client would."""
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            for key, _ in self.sel.select(timeout=min(0.5, left)):
                self._recv(key)

    def wait_for_markers(self, wanted: dict, timeout: float):
        """Reads until each stream of `wanted` (index -> the markers it should get) has received each of
        its markers, or `timeout`. Only a substring search: no event is parsed. Returns each
        (stream, marker)'s arrival time, and how many bytes each stream had received when its first
        marker came (the event's size, as the stream received it)."""
        pending = {i: set(markers) for i, markers in wanted.items() if markers and i not in self.closed}
        # A marker split across two reads is found in the previous read's tail and the new one.
        keep = max((len(m) for markers in pending.values() for m in markers), default=1) - 1
        tails, got, first_size, arrived = {}, collections.Counter(), {}, {}
        end = time.monotonic() + timeout
        while pending and time.monotonic() < end:
            for key, _ in self.sel.select(timeout=0.5):
                i = key.data
                data = self._recv(key)
                if data is None:
                    if i in self.closed:
                        pending.pop(i, None)
                        tails.pop(i, None)
                    continue
                want = pending.get(i)
                if want is None:
                    continue  # a stream with nothing (more) to wait for: its bytes are dropped
                now = time.monotonic()
                got[i] += len(data)
                buf = tails.get(i, b"") + data
                for m in [m for m in want if m in buf]:
                    arrived[(i, m)] = now
                    want.discard(m)
                    first_size.setdefault(i, got[i])
                if want:
                    tails[i] = buf[-keep:] if keep > 0 else b""
                else:
                    del pending[i]
                    tails.pop(i, None)
        return arrived, first_size

    def close(self):
        for s in self.socks:
            s.close()
        self.sel.close()


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


def nchan_module():
    """Debian's nchan module (installed when missing and running as root); None when it is not there."""
    module = "/usr/lib/nginx/modules/ngx_nchan_module.so"
    if not os.path.exists(module):
        if os.geteuid() == 0:
            subprocess.run(["apt-get", "install", "-y", "-qq", "libnginx-mod-nchan"], env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"),
                           stdout=subprocess.DEVNULL, check=False)
        if not os.path.exists(module):
            print("nchan: libnginx-mod-nchan is not installed (apt-get install libnginx-mod-nchan)")
            return None
    return module


def nchan(n: int, event_bytes: int):
    module = nchan_module()
    if module is None:
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
        pids = nginx_pids(proc, port)
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


# ---------------------------------------------------------------------------------------------
# Round "libraries": a real app's shape (issue 66). Each stream is an app following 20 podcasts
# of a library drawn by Zipf, opened from its own refresh's sync token; nchan's subscribers
# multiplex the same 20 channels. Both see one new episode of the most followed podcast, then
# a burst of the 50 most followed published at once.

# The fixture upstream's synthetic library podcasts (Sources/FixtureUpstream/FixtureLibrary.swift):
# ids from here on; those it does not serve answer podcast_not_found and are left out.
LIBRARY_FIRST = 1590000001
# Longer than the service's heap trimmer's interval (10 s): RSS is read settled before the streams.
SETTLE_SECONDS = 11
# One heartbeat period of the service (15 s): the idle window holds exactly one round of them.
IDLE_SECONDS = 15
# Past this a request line passes what proxies take (8 KiB): the stream is POSTed as a form.
REQUEST_LINE_MAX = 8192
# The goals: both p99s at most half of nchan's, at most 2 KiB a stream, idle CPU near
# zero (read here as at most 1 % of one core over the idle window, FeedProxy and its Redis).
GOAL_P99_RATIO, GOAL_KIB_PER_STREAM, GOAL_IDLE_CORE_SHARE = 0.5, 2.0, 0.01
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def profile(pid: int, phase: str):
    """With PERF_PHASE=phase (idle, one or burst of the libraries round) and PERF_OUT=FILE,
    `perf record -g` of the server over that phase (where its CPU goes)."""
    out = os.environ.get("PERF_OUT")
    if not out or os.environ.get("PERF_PHASE", "idle") != phase:
        return None
    recorder = subprocess.Popen(["perf", "record", "-g", "-F", "999", "-p", str(pid), "-o", out],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.5)  # perf attached before the phase starts
    return recorder


def stop_profile(recorder):
    if recorder is not None:
        recorder.send_signal(signal.SIGINT)
        recorder.wait(timeout=30)


def cpu_seconds(pids) -> float:
    """User and system CPU the processes have spent (/proc/PID/stat's utime and stime)."""
    total = 0
    for pid in pids:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()  # after the command's name: field 3 on
        total += int(fields[11]) + int(fields[12])
    return total / CLOCK_TICKS


def ms(values, p) -> str:
    return f"{percentile(values, p) * 1000:.0f} ms" if values else "-"


def ratio(a, b) -> str:
    return f"{a / b:.2f}" if a is not None and b else "n/a"


class Libraries:
    """N apps' libraries: each follows `follow` distinct podcasts of `universe` (in rank order),
    drawn by Zipf (rank r weighs 1/r^s) from a seeded generator, so runs compare."""

    def __init__(self, universe, n: int, follow: int, s: float, seed: int, burst: int):
        rng = random.Random(seed)
        cumulative = list(itertools.accumulate(1 / r ** s for r in range(1, len(universe) + 1)))
        follow = min(follow, len(universe))
        self.universe, self.follow, self.apps = universe, follow, []
        for _ in range(n):
            chosen = set()
            while len(chosen) < follow:
                chosen.update(rng.choices(universe, cum_weights=cumulative, k=follow - len(chosen)))
            self.apps.append(sorted(chosen))
        self.followers = collections.defaultdict(list)
        for i, app in enumerate(self.apps):
            for podcast in app:
                self.followers[podcast].append(i)
        rank = {podcast: r for r, podcast in enumerate(universe)}
        by_followers = sorted(universe, key=lambda p: (-len(self.followers[p]), rank[p]))
        self.top = by_followers[0]
        self.burst = by_followers[:min(burst, len(universe))]

    def burst_markers(self, markers: dict) -> dict:
        """Each stream's markers of the burst's podcasts it follows (`markers`: podcast -> bytes)."""
        wanted = {}
        for podcast in self.burst:
            for i in self.followers[podcast]:
                wanted.setdefault(i, []).append(markers[podcast])
        return wanted


class AtOnce:
    """Requests sent at one moment: each on its own thread and connection (connected beforehand,
    from the loopback source addresses in turn), all released by one barrier."""

    def __init__(self, port: int, calls):
        self.calls = calls  # (method, path, body)
        self.statuses = [None] * len(calls)
        self.conns = []
        for k in range(len(calls)):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30, source_address=(SOURCES[k % len(SOURCES)], 0))
            conn.connect()
            self.conns.append(conn)
        self.barrier = threading.Barrier(len(calls) + 1, timeout=30)
        self.threads = [threading.Thread(target=self._send, args=(k,), daemon=True) for k in range(len(calls))]
        for t in self.threads:
            t.start()

    def _send(self, k):
        method, path, body = self.calls[k]
        try:
            self.barrier.wait()
            self.conns[k].request(method, path, body=body)
            response = self.conns[k].getresponse()
            response.read()
            self.statuses[k] = response.status
        except Exception as e:  # reported with the statuses
            self.statuses[k] = type(e).__name__
        finally:
            self.conns[k].close()

    def release(self) -> float:
        """Lets every request go; the moment just before (the threads are all waiting by then)."""
        end = time.monotonic() + 10
        while self.barrier.n_waiting < len(self.calls) and time.monotonic() < end:
            time.sleep(0.01)
        t0 = time.monotonic()
        self.barrier.wait()
        return t0

    def finish(self) -> dict:
        """Each status's count, once every thread is done (30 s at most each)."""
        for t in self.threads:
            t.join(timeout=30)
        return dict(collections.Counter(self.statuses))


def start_redis():
    """One redis-server on a free loopback port, without persistence; (process, port, directory),
    or None when redis-server is not installed."""
    server = shutil.which("redis-server")
    if server is None:
        print("redis-server is not installed (apt-get install redis-server): the libraries round runs FeedProxy without Redis")
        return None
    port = free_port()
    work = tempfile.mkdtemp(prefix="events-bench-redis-")
    proc = subprocess.Popen([server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", work],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                s.sendall(b"PING\r\n")
                if s.recv(64).startswith(b"+PONG"):
                    return proc, port, work
        except OSError:
            pass
        time.sleep(0.1)
    proc.terminate()
    proc.wait()
    shutil.rmtree(work, ignore_errors=True)
    raise SystemExit("redis-server did not answer")


def post_form(base: str, path: str, form: dict, timeout: float = 30):
    body = urllib.parse.urlencode(form, safe=",").encode()
    request = urllib.request.Request(base + path, data=body, headers={"Content-Type": "application/x-www-form-urlencoded"})
    return json.load(urllib.request.urlopen(request, timeout=timeout))


def library_universe(base: str, candidates, timeout: float = 120):
    """Reads every candidate podcast once (POST /episodes, 500 a request, again while some are
    pending); the ones the fixtures serve, in rank order."""
    status = {}
    todo = list(candidates)
    end = time.monotonic() + timeout
    while todo and time.monotonic() < end:
        pending = []
        for k in range(0, len(todo), 500):
            chunk = todo[k:k + 500]
            answer = post_form(base, "/episodes", {"podcasts": ",".join(map(str, chunk)), "limit": "1"})
            for entry in answer.get("podcasts", []):
                status[int(entry["id"])] = entry["status"]
                if entry["status"] == "pending":
                    pending.append(int(entry["id"]))
        todo = pending
        if todo:
            time.sleep(1)
    return [podcast for podcast in candidates if status.get(podcast) == "ok"]


def refresh_tokens(port: int, apps, workers: int = 8, timeout: float = 900):
    """Each app's first refresh: POST /episodes with its library (limit=1); its syncToken (None when
    refused). `workers` threads, each one keep-alive connection from its own source address."""
    tokens = [None] * len(apps)
    problems = collections.Counter()
    lock = threading.Lock()
    end = time.monotonic() + timeout

    def work(k):
        conn = None
        for i in range(k, len(apps), workers):
            if time.monotonic() > end:
                break
            body = urllib.parse.urlencode({"podcasts": ",".join(map(str, apps[i])), "limit": "1"}, safe=",")
            problem = None
            for _ in range(2):  # once more on a fresh connection if the kept one broke
                try:
                    if conn is None:
                        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30, source_address=(SOURCES[k % len(SOURCES)], 0))
                    conn.request("POST", "/episodes", body=body, headers={"Content-Type": "application/x-www-form-urlencoded"})
                    response = conn.getresponse()
                    data = response.read()
                    if response.status != 200:
                        problem = f"HTTP {response.status}"
                        break
                    answer = json.loads(data)
                    tokens[i] = answer.get("syncToken")
                    problem = None if all(p.get("status") == "ok" for p in answer.get("podcasts", [])) else "a podcast not ok"
                    break
                except (OSError, http.client.HTTPException, ValueError) as e:
                    problem = type(e).__name__
                    if conn is not None:
                        conn.close()
                    conn = None
            if problem:
                with lock:
                    problems[problem] += 1
        if conn is not None:
            conn.close()

    threads = [threading.Thread(target=work, args=(k,), daemon=True) for k in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=max(1, end - time.monotonic()) + 60)
    return tokens, dict(problems)


def stream_request(app, token) -> bytes:
    """The request that opens an app's stream from its token: a GET, or a form POST when the
    request line would pass REQUEST_LINE_MAX."""
    form = {"podcasts": ",".join(map(str, app))}
    if token:
        form["sync"] = token
    query = urllib.parse.urlencode(form, safe=",")
    line = f"GET /episodes/events?{query} HTTP/1.1\r\n"
    if len(line) <= REQUEST_LINE_MAX:
        return (line + "Host: x\r\n\r\n").encode()
    return (f"POST /episodes/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n"
            f"Content-Length: {len(query)}\r\n\r\n{query}").encode()


def newest_guid(fixtures: str, podcast: int) -> str:
    """The guid of the newest episode of a library podcast's feed at the fixture upstream (the one
    just published: new episodes come first)."""
    feed = urllib.request.urlopen(f"{fixtures}/rss/library-{podcast}.xml", timeout=10).read()
    start = feed.index(b">", feed.index(b"<guid")) + 1
    return feed[start:feed.index(b"</guid>", start)].decode()


def publish_at_fixtures(fixtures: str, podcast: int) -> bytes:
    """A new episode of `podcast` at the fixture upstream; the marker of it in an event (its id, quoted)."""
    urllib.request.urlopen(urllib.request.Request(f"{fixtures}/__fixture/publish/{podcast}?at={int(time.time())}", method="POST"), timeout=5)
    return b'"' + newest_guid(fixtures, podcast).encode() + b'"'


def fan_out(arrived: dict, wanted: dict, t0: float):
    """Seconds from `t0` to each expected (stream, marker) that arrived; how many pairs were expected."""
    times = [arrived[(i, m)] - t0 for i, markers in wanted.items() for m in markers if (i, m) in arrived]
    return times, sum(len(markers) for markers in wanted.values())


def feedproxy_libraries(binary: str, n: int, args):
    """FeedProxy (one replica, --fixtures, a Redis beside it): N apps' streams, each opened from
    its own library refresh's token. Figures, or None when it could not run."""
    redis = start_redis()
    port = free_port()
    env = dict(os.environ, LOG_LEVEL="warn", CLIENT_MISS_RATE_PER_MIN="0", EVENT_STREAMS_PER_CLIENT=str(n),
               EVENT_STREAMS_MAX=str(n + 100), MAX_CONNECTIONS=str(n + 1000), RATE_LIMIT_ITUNES_PER_MIN="60000",
               OTEL_TRACES_EXPORTER="none", DATA_DIR="")
    if redis:
        env["REDIS_URL"] = f"redis://127.0.0.1:{redis[1]}"
    log = tempfile.NamedTemporaryFile(prefix="events-bench-", suffix=".log", delete=False)
    proc = streams = None
    try:
        proc = subprocess.Popen([binary, "--fixtures", "Fixtures", "--port", str(port), "--threads", "2"], env=env, stdout=log, stderr=log)
        base = f"http://127.0.0.1:{port}"
        wait_http(base + "/healthz", log)
        candidates = list(range(LIBRARY_FIRST, LIBRARY_FIRST + args.podcasts))
        universe = library_universe(base, candidates)
        if len(universe) < len(candidates):
            print(f"libraries: the fixtures serve {len(universe)} of the {len(candidates)} podcasts {candidates[0]}…{candidates[-1]} "
                  f"(the rest are podcast_not_found): the libraries are drawn from those {len(universe)}")
        if not universe:
            print("feedproxy (libraries): no library podcast answered")
            return None
        libs = Libraries(universe, n, args.follow, args.zipf, args.seed, args.burst)
        print(f"libraries: {n} apps, each following {libs.follow} of {len(universe)} podcasts (Zipf s={args.zipf}, seed {args.seed}); "
              f"most followed {libs.top} by {len(libs.followers[libs.top])} apps; the burst's {len(libs.burst)} podcasts: "
              f"{sum(len(libs.followers[p]) for p in libs.burst)} (app, podcast) pairs", flush=True)
        feed = json.load(urllib.request.urlopen(f"{base}/podcasts/{universe[0]}", timeout=10))["item"]["feedUrl"]
        fixtures = "/".join(feed.split("/")[:3])
        started = time.monotonic()
        tokens, problems = refresh_tokens(port, libs.apps)
        refreshed = time.monotonic() - started
        refused = sum(1 for t in tokens if not t)
        if problems or refused:
            print(f"feedproxy (libraries): refreshes: {problems or ''} {refused} without a token (their streams start from no position)")
        requests = [stream_request(app, token) for app, token in zip(libs.apps, tokens)]
        posted = sum(1 for r in requests if r.startswith(b"POST"))
        # RSS before the streams, settled as it is read after them: once the heap trimmer (every
        # 10 s) has given back what the refreshes freed (read 1 s after them, the baseline held
        # or had shed that memory by chance, and the figure a stream moved by 1 KiB between runs).
        time.sleep(SETTLE_SECONDS)
        before = rss_kib([proc.pid])
        streams = Streams(port, requests, n)
        opened = streams.wait_for(b"event: episodes", 180)
        if None in opened:
            print(f"feedproxy (libraries): only {sum(1 for t in opened if t)} of {n} streams opened")
        streams.drain(1)
        # Idle: every stream open, nothing published.
        cpu0, redis0 = cpu_seconds([proc.pid]), cpu_seconds([redis[0].pid]) if redis else 0.0
        t_idle = time.monotonic()
        recorder = profile(proc.pid, "idle")
        streams.drain(IDLE_SECONDS)
        stop_profile(recorder)
        idle_wall = time.monotonic() - t_idle
        idle_cpu, idle_redis = cpu_seconds([proc.pid]) - cpu0, (cpu_seconds([redis[0].pid]) - redis0) if redis else None
        # What the streams hold once settled (the idle window is longer than the heap trimmer's 10 s).
        after = rss_kib([proc.pid])
        # One new episode of the most followed podcast: published, then the publisher's ping.
        marker = publish_at_fixtures(fixtures, libs.top)
        wanted = {i: [marker] for i in libs.followers[libs.top]}
        recorder = profile(proc.pid, "one")
        t0 = time.monotonic()
        try:
            ping = urllib.request.urlopen(f"{base}/hub/notify?id={libs.top}", timeout=5).status
        except urllib.error.HTTPError as e:
            ping = e.code
        arrived, sizes = streams.wait_for_markers(wanted, 60)
        stop_profile(recorder)
        one, one_expected = fan_out(arrived, wanted, t0)
        size = sorted(sizes.values())[len(sizes) // 2] if sizes else None
        # A feed's pings are heard once per 10 s: the burst (the most followed again) waits that out.
        streams.drain(max(0.0, t0 + 11 - time.monotonic()))
        # The burst: the 50 most followed podcasts published, then all their pings at one moment.
        markers = {podcast: publish_at_fixtures(fixtures, podcast) for podcast in libs.burst}
        wanted = libs.burst_markers(markers)
        pings = AtOnce(port, [("GET", f"/hub/notify?id={podcast}", None) for podcast in libs.burst])
        recorder = profile(proc.pid, "burst")
        t0 = pings.release()
        arrived, _ = streams.wait_for_markers(wanted, 60)
        stop_profile(recorder)
        burst, burst_expected = fan_out(arrived, wanted, t0)
        burst_pings = pings.finish()
        streams.close()
        streams = None
        if ping != 202 or set(burst_pings) != {202}:
            print(f"feedproxy (libraries): pings answered {ping} (one episode), {burst_pings} (burst); 202 expected")
        return dict(name="feedproxy (libraries)", libs=libs, n=n, opened=n - opened.count(None), before=before, after=after,
                    per=(after - before) / n, idle_cpu=idle_cpu, idle_extra=idle_redis, idle_wall=idle_wall, size=size,
                    one=one, one_expected=one_expected, burst=burst, burst_expected=burst_expected,
                    note=f"the {n} refreshes took {refreshed:.0f} s; {posted} streams opened by a form POST (token past the request line)")
    except Exception:
        log.flush()
        with open(log.name, errors="replace") as f:
            print("feedproxy (libraries) log, last lines:\n" + "".join(f.readlines()[-20:]))
        raise
    finally:
        if streams is not None:
            streams.close()
        if proc is not None:
            proc.terminate()
            proc.wait()
        os.unlink(log.name)
        if redis:
            redis[0].terminate()
            redis[0].wait()
            shutil.rmtree(redis[2], ignore_errors=True)


def nchan_libraries(libs: Libraries, n: int, event_bytes: int):
    """nginx + nchan (one worker, memory store): N EventSource subscribers, each multiplexing its
    app's channels (/sub/a,b,c), the same libraries as FeedProxy's streams; messages of the size
    of FeedProxy's event."""
    module = nchan_module()
    if module is None:
        return None
    port = free_port()
    work = tempfile.mkdtemp(prefix="events-bench-nchan-")
    # A channel a podcast; a subscriber's location names its channels, split on ",".
    conf = f"""
load_module {module};
worker_processes 1;
worker_rlimit_nofile {n + 1000};
pid {work}/nginx.pid;
error_log {work}/error.log warn;
events {{ worker_connections {n + 1000}; }}
http {{
  access_log off;
  client_body_temp_path {work}; proxy_temp_path {work}; fastcgi_temp_path {work}; uwsgi_temp_path {work}; scgi_temp_path {work};
  server {{
    listen 127.0.0.1:{port};
    location ~ ^/sub/([0-9,]+)$ {{ nchan_subscriber eventsource; nchan_channel_id "$1"; nchan_channel_id_split_delimiter ","; }}
    location ~ ^/pub/([0-9]+)$ {{ nchan_publisher; nchan_channel_id "$1"; }}
  }}
}}
"""
    with open(f"{work}/nginx.conf", "w") as f:
        f.write(conf)
    proc = subprocess.Popen(["nginx", "-c", f"{work}/nginx.conf", "-g", "daemon off;"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    streams = None
    try:
        pids = nginx_pids(proc, port)
        before = rss_kib(pids)
        requests = [f"GET /sub/{','.join(map(str, app))} HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n".encode() for app in libs.apps]
        streams = Streams(port, requests, n)
        opened = streams.wait_for(b" 200 OK\r\n", 180)
        if None in opened:
            with open(f"{work}/error.log", errors="replace") as f:
                errors = "".join(f.readlines()[-5:])
            print(f"nchan (libraries): only {sum(1 for t in opened if t)} of {n} subscribers were answered 200; error.log ends:\n{errors}")
        streams.drain(1)
        cpu0, t_idle = cpu_seconds(pids), time.monotonic()
        streams.drain(IDLE_SECONDS)
        idle_wall, idle_cpu = time.monotonic() - t_idle, cpu_seconds(pids) - cpu0
        after = rss_kib(pids)  # as FeedProxy's: once settled, after the idle window

        def message(tag: bytes):
            return tag + b"x" * max(0, event_bytes - len(tag))

        # One message to the most followed podcast's channel.
        marker = f"one-{libs.top}:".encode()
        wanted = {i: [marker] for i in libs.followers[libs.top]}
        t0 = time.monotonic()
        status = urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{port}/pub/{libs.top}", data=message(marker), method="POST"),
                                        timeout=5).status
        arrived, _ = streams.wait_for_markers(wanted, 60)
        one, one_expected = fan_out(arrived, wanted, t0)
        # The burst: one message to each of the 50 channels, all at one moment.
        markers = {podcast: f"burst-{podcast}:".encode() for podcast in libs.burst}
        wanted = libs.burst_markers(markers)
        publishes = AtOnce(port, [("POST", f"/pub/{podcast}", message(markers[podcast])) for podcast in libs.burst])
        t0 = publishes.release()
        arrived, _ = streams.wait_for_markers(wanted, 60)
        burst, burst_expected = fan_out(arrived, wanted, t0)
        statuses = publishes.finish()
        if not 200 <= status < 300 or any(not (isinstance(s, int) and 200 <= s < 300) for s in statuses):
            print(f"nchan (libraries): publishes answered {status} (one), {statuses} (burst)")
        return dict(name="nginx + nchan (libraries)", libs=libs, n=n, opened=n - opened.count(None), before=before, after=after,
                    per=(after - before) / n, idle_cpu=idle_cpu, idle_extra=None, idle_wall=idle_wall, size=event_bytes,
                    one=one, one_expected=one_expected, burst=burst, burst_expected=burst_expected, note=None)
    finally:
        if streams is not None:
            streams.close()
        proc.terminate()
        proc.wait()
        shutil.rmtree(work, ignore_errors=True)


def report_libraries(fig):
    """One server's figures of the libraries round."""
    extra = f" (+ Redis {fig['idle_extra']:.2f} s)" if fig["idle_extra"] is not None else ""
    print(f"{fig['name']}: {fig['opened']}/{fig['n']} streams, {fig['per']:.2f} KiB each (RSS {fig['before']} -> {fig['after']} KiB); "
          f"idle CPU {fig['idle_cpu']:.2f} s over {fig['idle_wall']:.0f} s{extra}")
    one, burst = fig["one"], fig["burst"]
    print(f"  one episode of {fig['libs'].top} ({fig['size'] or '?'} bytes an event): {len(one)}/{fig['one_expected']} streams, "
          f"first {min(one) * 1000:.0f} ms, p50 {ms(one, 0.5)}, p99 {ms(one, 0.99)}, max {max(one) * 1000:.0f} ms" if one else
          f"  one episode of {fig['libs'].top}: reached no stream of {fig['one_expected']}")
    print(f"  burst of {len(fig['libs'].burst)} podcasts at once: {len(burst)}/{fig['burst_expected']} (stream, podcast) pairs, "
          f"first {min(burst) * 1000:.0f} ms, p50 {ms(burst, 0.5)}, p99 {ms(burst, 0.99)}, max {max(burst) * 1000:.0f} ms" if burst else
          f"  burst of {len(fig['libs'].burst)} podcasts: reached no pair of {fig['burst_expected']}")
    if fig["note"]:
        print(f"  ({fig['note']})")


def compare_libraries(fp, nc):
    """FeedProxy/nchan for each figure, and the issue's goals beside them."""
    def p(values, q):
        return percentile(values, q) if values else None

    fp_idle = fp["idle_cpu"] + (fp["idle_extra"] or 0)
    print(f"ratio (feedproxy / nchan), libraries: memory per stream {ratio(fp['per'], nc['per'])}, "
          f"idle CPU {ratio(fp['idle_cpu'], nc['idle_cpu'])} (with Redis {ratio(fp_idle, nc['idle_cpu'])}), "
          f"one episode p50 {ratio(p(fp['one'], 0.5), p(nc['one'], 0.5))} p99 {ratio(p(fp['one'], 0.99), p(nc['one'], 0.99))} "
          f"max {ratio(max(fp['one'], default=None), max(nc['one'], default=None))}, "
          f"burst p50 {ratio(p(fp['burst'], 0.5), p(nc['burst'], 0.5))} p99 {ratio(p(fp['burst'], 0.99), p(nc['burst'], 0.99))}")

    def goal(text, value, met):
        print(f"  goal {text}: {value} {'met' if met else 'NOT met'}")

    print("goals (issue 66):")
    for what in ("one", "burst"):
        a, b = p(fp[what], 0.99), p(nc[what], 0.99)
        complete = len(fp[what]) == fp[f"{what}_expected"]
        goal(f"{'one episode' if what == 'one' else 'burst'} p99 <= {GOAL_P99_RATIO}x nchan's", ratio(a, b) + ("" if complete else " (not every stream reached)"),
             a is not None and b is not None and complete and a <= GOAL_P99_RATIO * b)
    goal(f"<= {GOAL_KIB_PER_STREAM:g} KiB a stream", f"{fp['per']:.2f} KiB", fp["per"] <= GOAL_KIB_PER_STREAM)
    share = fp_idle / fp["idle_wall"]
    goal(f"idle CPU near zero (<= {GOAL_IDLE_CORE_SHARE:.0%} of a core, FeedProxy and Redis)", f"{share:.2%} of a core ({fp_idle:.2f} s)",
         share <= GOAL_IDLE_CORE_SHARE)


def main():
    parser = argparse.ArgumentParser(description="Event fan-out: FeedProxy's /episodes/events beside nginx + nchan.")
    parser.add_argument("binary", help="the feedproxy binary (a release build)")
    parser.add_argument("streams", nargs="?", type=int, default=10000, help="streams on each server (default 10000)")
    parser.add_argument("--shape", choices=("same", "libraries", "both"), default="both",
                        help="same: every stream one podcast, nchan one channel; libraries: each an app's library; both (default): one, then the other")
    parser.add_argument("--podcasts", type=int, default=1000, help=f"library podcasts the apps draw from, ids {LIBRARY_FIRST} on (default 1000)")
    parser.add_argument("--follow", type=int, default=20, help="podcasts each app follows (default 20)")
    parser.add_argument("--zipf", type=float, default=1.0, help="Zipf exponent of the podcasts' popularity (default 1.0)")
    parser.add_argument("--seed", type=int, default=66, help="seed of the libraries' draw (default 66)")
    parser.add_argument("--burst", type=int, default=50, help="most followed podcasts published at once in the burst (default 50)")
    parser.add_argument("--feedproxy-only", action="store_true", help="FeedProxy's figures alone (no nchan round): for profiling")
    args = parser.parse_args()
    binary, n = args.binary, args.streams
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    n = min(n, hard - 200)
    if args.shape in ("same", "both"):
        fp = feedproxy(binary, n)
        nc = nchan(n, fp[2] if fp else 400)
        if fp and nc and fp[1] and nc[1]:
            print(f"ratio (feedproxy / nchan): memory per stream {fp[0] / max(nc[0], 0.01):.2f}, "
                  f"p50 {percentile(fp[1], 0.5) / max(percentile(nc[1], 0.5), 1e-6):.2f}, p99 {percentile(fp[1], 0.99) / max(percentile(nc[1], 0.99), 1e-6):.2f}")
    if args.shape in ("libraries", "both"):
        args.podcasts = max(1, args.podcasts)
        fp = feedproxy_libraries(binary, n, args)
        if fp is None:
            return
        report_libraries(fp)
        if args.feedproxy_only:
            return
        # nchan's messages are as big as FeedProxy's event for that episode was on a stream.
        nc = nchan_libraries(fp["libs"], n, fp["size"] or 2000)
        if nc is None:
            return
        report_libraries(nc)
        compare_libraries(fp, nc)


if __name__ == "__main__":
    main()
