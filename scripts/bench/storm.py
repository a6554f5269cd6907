#!/usr/bin/env python3
"""Library-refresh storm (issue 55): many podcast apps refreshing their libraries at once
through three FeedProxy replicas sharing one Redis, against a loopback hosting platform
(scripts/lib/publisher.py: iTunes lookup on 127.0.0.2, every feed on one host 127.0.0.3,
each feed answer delayed like a real publisher's).

Usage:
  python3 scripts/bench/storm.py [FEEDPROXY_BIN] [--podcasts 1000 --apps 150 --per-app 100
      --delay-ms 100 --replicas 3 --ttl 20 --recipe sync|since --deploy --check --json report.json]
  (FEEDPROXY_BIN also from the environment; default .build/release/feedproxy)
  On a shared machine run it under the CPU lock: flock /tmp/fp-cpu.lock python3 scripts/bench/storm.py ...

Each app is a thread with one keep-alive connection from its own source address
(127.0.0.10, .11, ...; the replicas see one client per app), apps spread round-robin over
the replicas. Phases:
  a cold     every app's first refresh at once, `GET /episodes?podcasts=<its ids>`, asked
             again every --retry-s until none of its podcasts is pending: feed downloads per
             feed, iTunes lookups and ids per lookup, batch latency (client side, request's
             first byte to answer's last), answers later than deadline + 0.5 s, statuses;
  b publish  --publish-share of the feeds get one new episode each, dates interleaved: half
             dated in the last 10 minutes (published in shuffled order), half backdated 2-60 h
             (earlier than episodes the apps have already seen from other feeds);
  c expiry   once CACHE_TTL_EPISODES has passed since the last fill, every app refreshes
             again by its recipe: revalidations (conditional requests) per feed, downloads,
             lookups, latency;
  d misses   settle (background refreshes done), then --settle-rounds more refreshes by the
             recipe; did every app see every new episode of its podcasts? Recipes:
               sync   docs/API.md's: the first refresh plain (its first page's `syncToken`
                      kept), then `&sync=<token>` with If-None-Match: <last ETag>, page.next
                      followed to the end, the last answer's token and ETag kept; `resync:
                      true` on a podcast means its whole list comes again (apps dedupe by id);
               since  the recipe it replaced: keep the newest `published` seen, send it as
                      `since` (misses episodes by design: dated before one already seen);
  e flood    replicas restarted with the default CLIENT_MISS_RATE_PER_MIN, feed delay
             --flood-delay-ms: one address sends --flood-batches concurrent batches of
             --flood-size cold ids while another asks one cold /podcasts/{id}/episodes on the
             same feed host and the same replica: its status and latency.
  deploy     with --deploy (off by default; after d, before e, so every app holds a token
             and an ETag): a rolling deploy, each replica in turn SIGTERMed, waited for, and
             started again on its port with one routine setting changed
             (--deploy-feed-max-body-bytes for FEED_MAX_BODY_BYTES, a part of the shared
             cache's key fingerprint: the new replicas find none of the old cache), until it
             answers /readyz and is on Redis; then every app refreshes once by its recipe.
             What the deploy cost the apps: requests, answers by status, answer body bytes
             (total and per app), items sent, podcasts flagged `resync: true` (a sync history
             is a record kept apart from the cache: none expected), feed downloads and
             conditional requests at the platform and iTunes lookups from the first SIGTERM
             on (background revalidations included), the round's wall time and latency.
Replicas' /metrics are snapshotted after each phase (deltas in the report), CPU seconds of
every process (this load generator too) and of each replica's threads per phase, the
machine's busy share every 0.5 s, which replica made each feed request (by its source
port) and whether a repeat overlapped the previous request or came after it, and the
replicas' warn/error log lines counted. Diagnostics (they cost CPU themselves): --perf ace
(perf record of the replicas per phase, hottest symbols), --redis-monitor (every Redis
command to redis-monitor.txt). Scales: full 1000/150/100/100 ms (about 80 s plus startup),
CI-friendly --podcasts 300 --apps 60 --per-app 50 --delay-ms 50 (about 45 s). A human summary on stdout, everything in --json. Everything it starts it stops by
PID, on Ctrl-C, an error or --max-seconds too. Python 3.11 standard library only.
"""
import argparse
import http.client
import json
import os
import random
import re
import select
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from datetime import datetime

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts", "lib"))
from publisher import BASE_ID, Remote  # noqa: E402

REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"
REDIS_CLI = shutil.which("redis-cli") or "/usr/bin/redis-cli"
CLK_TCK = os.sysconf("SC_CLK_TCK")
PERF = shutil.which("perf")
DEMANGLE = shutil.which("swift-demangle") or next((p for p in ("/opt/swift/usr/bin/swift-demangle",) if os.path.exists(p)), None)
FLOOD_ADDR, VICTIM_ADDR = "127.0.0.252", "127.0.0.253"


def log(msg=""):
    print(msg, flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(predicate, timeout, interval=0.05):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            if predicate():
                return True
        except Exception:
            pass
        time.sleep(interval)
    return False


def pct(values, p):
    if not values:
        return None
    v = sorted(values)
    return v[min(len(v) - 1, max(0, int(round(p / 100 * len(v) + 0.5)) - 1))]


def lat_summary(ms, late_after_ms):
    if not ms:
        return {"n": 0}
    return {"n": len(ms), "p50_ms": round(pct(ms, 50)), "p90_ms": round(pct(ms, 90)), "p99_ms": round(pct(ms, 99)), "max_ms": round(max(ms)),
            "late": sum(1 for m in ms if m > late_after_ms), "late_after_ms": late_after_ms}


def fmt_lat(s):
    if not s.get("n"):
        return "no requests"
    return (f"n={s['n']} p50 {s['p50_ms']} ms, p90 {s['p90_ms']} ms, p99 {s['p99_ms']} ms, max {s['max_ms']} ms; "
            f"{s['late']} later than {s['late_after_ms'] / 1000:.1f} s")


def proc_cpu(pid):
    """user+system CPU seconds of a process (0 when gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK
    except (OSError, IndexError, ValueError):
        return 0.0


def perf_top(data, n=25):
    """The hottest symbols of a `perf record` of the replicas (self time, demangled), and
    where the samples' call chains pass (children time) for the same number."""
    def report(extra):
        try:
            r = subprocess.run([PERF, "report", "-i", data, "--stdio", "--sort", "symbol", "--percent-limit", "0.7", *extra], capture_output=True,
                               text=True, timeout=120)
        except (OSError, subprocess.TimeoutExpired):
            return []
        rows = []
        for line in r.stdout.splitlines():
            m = re.match(r"^\s+([\d.]+)%\s+(?:([\d.]+)%\s+)?\[[.k]\]\s+(.*)$", line)
            if m:
                rows.append((float(m.group(1)), re.sub(r"(\s+-)+\s*$", "", m.group(3)).strip()))
        names = [sym for _, sym in rows]
        if DEMANGLE and names:
            try:
                d = subprocess.run([DEMANGLE, "--simplified"], input="\n".join(names), capture_output=True, text=True, timeout=60).stdout.splitlines()
                if len(d) == len(names):
                    names = d
            except (OSError, subprocess.TimeoutExpired):
                pass
        return [(pc, re.sub(r"(\s+-)+\s*$", "", name).strip()[:160]) for (pc, _), name in zip(rows, names)][:n]
    if not PERF:
        return None
    return {"self": report(["--no-children"]), "children": report(["--children"])}


def thread_cpu(pid):
    """{thread name: CPU seconds} of a process's threads (same-named threads added up)."""
    out = {}
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/comm") as f:
                    name = f.read().strip()
                with open(f"/proc/{pid}/task/{tid}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                name = re.sub(r"[-_ ]?\d+$", "", name) or name
                out[name] = out.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / CLK_TCK
            except (OSError, IndexError, ValueError):
                continue
    except OSError:
        pass
    return out


def machine_busy():
    with open("/proc/stat") as f:
        parts = [int(x) for x in f.readline().split()[1:]]
    idle = parts[3] + parts[4]
    return sum(parts) - idle, sum(parts)


def socket_ports(pids, remote):
    """{local port: name} of the TCP connections the processes `pids` ({name: pid}) hold to
    `remote` (host, port): which replica a feed request came from, by its source port."""
    inodes = {}
    for name, pid in pids.items():
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                try:
                    link = os.readlink(f"/proc/{pid}/fd/{fd}")
                except OSError:
                    continue
                if link.startswith("socket:["):
                    inodes[link[8:-1]] = name
        except OSError:
            continue
    host, port = remote
    want = "%08X:%04X" % (int.from_bytes(socket.inet_aton(host), "little"), port)
    out = {}
    try:
        with open("/proc/net/tcp") as f:
            next(f)
            for line in f:
                parts = line.split()
                if parts[2] == want and parts[9] in inodes:
                    out[int(parts[1].split(":")[1], 16)] = inodes[parts[9]]
    except OSError:
        pass
    return out


class Sampler:
    """The machine's busy share every 0.5 s (all cores), and which replica holds which
    connection to the feed host, until stopped."""

    def __init__(self, interval=0.5, pids=None, feed_host=None):
        self.interval, self.samples, self.done = interval, [], threading.Event()
        self.pids, self.feed_host, self.ports = pids or {}, feed_host, {}

    def start(self):
        def loop():
            last = machine_busy()
            while not self.done.wait(self.interval):
                now = machine_busy()
                self.samples.append((now[0] - last[0]) / max(1, now[1] - last[1]))
                last = now
                if self.feed_host:
                    self.ports.update(socket_ports(self.pids, self.feed_host))

        self.thread = threading.Thread(target=loop, daemon=True)
        self.thread.start()
        return self

    def stop(self):
        self.done.set()
        self.thread.join(timeout=2)
        if self.feed_host:
            self.ports.update(socket_ports(self.pids, self.feed_host))
        return self.samples


# ---------------------------------------------------------------- processes


class Procs:
    def __init__(self, tmp):
        self.tmp = tmp
        self.procs = {}

    def spawn(self, name, argv, env=None, stdout=None):
        out = stdout if stdout is not None else open(os.path.join(self.tmp, name + ".log"), "ab")
        p = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT if stdout is None else open(os.path.join(self.tmp, name + ".err"), "ab"),
                             cwd=ROOT, start_new_session=True)
        if stdout is None:
            out.close()
        self.procs[name] = p
        return p

    def stop(self, name, grace=5):
        p = self.procs.pop(name, None)
        if p is None or p.poll() is not None:
            return
        try:
            os.kill(p.pid, signal.SIGCONT)
            p.terminate()
            p.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            p.kill()
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        except ProcessLookupError:
            pass

    def stop_all(self):
        for name in list(self.procs):
            self.stop(name, grace=3)

    def pids(self):
        return {n: p.pid for n, p in self.procs.items() if p.poll() is None}


class Cluster:
    def __init__(self, args, tmp):
        self.args, self.tmp = args, tmp
        self.procs = Procs(tmp)
        self.redis_port = free_port()
        self.ports = [free_port() for _ in range(args.replicas)]
        self.publisher = None
        self.lookup_url = None
        self.base_env_extra = {}

    def start_publisher(self, feeds):
        p = self.procs.spawn("publisher", [sys.executable, os.path.join(ROOT, "scripts", "lib", "publisher.py"), "--feeds", str(feeds),
                                           "--episodes", str(self.args.episodes), "--delay-ms", str(self.args.delay_ms),
                                           "--max-seconds", str(self.args.max_seconds + 60)], stdout=subprocess.PIPE)
        ready, _, _ = select.select([p.stdout], [], [], 15)
        if not ready:
            raise RuntimeError("publisher did not start")
        info = json.loads(p.stdout.readline())
        self.lookup_url = info["lookup_url"]
        self.feed_base = info["feed_base"]
        self.publisher = Remote(info["control"])
        return info

    def start_redis(self):
        self.procs.spawn("redis", [REDIS_SERVER, "--port", str(self.redis_port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                                   "--dir", self.tmp, "--protected-mode", "yes", "--maxclients", "1000",
                                   "--maxmemory", "1gb", "--maxmemory-policy", "volatile-lru"])
        if not wait_until(lambda: self.redis("PING") == "PONG", 10):
            raise RuntimeError("redis-server did not start")
        if self.args.redis_monitor:
            self.procs.spawn("redis-monitor", [REDIS_CLI, "-h", "127.0.0.1", "-p", str(self.redis_port), "MONITOR"],
                             stdout=open(os.path.join(self.tmp, "redis-monitor.txt"), "ab"))

    def redis(self, *argv):
        r = subprocess.run([REDIS_CLI, "-h", "127.0.0.1", "-p", str(self.redis_port), *argv], capture_output=True, text=True, timeout=5)
        return r.stdout.strip()

    def replica_env(self, overrides):
        a = self.args
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/root"), "LANG": "C.UTF-8",
               "HOST": "127.0.0.1", "LOG_LEVEL": "info", "REDIS_URL": f"redis://127.0.0.1:{self.redis_port}",
               "ITUNES_LOOKUP_URL": self.lookup_url, "ALLOW_PRIVATE_FEED_HOSTS": "true", "RATE_LIMIT_ITUNES_PER_MIN": str(a.itunes_rate),
               "CLIENT_MISS_RATE_PER_MIN": "0", "CACHE_TTL_EPISODES": str(a.ttl), "OTEL_TRACES_EXPORTER": "none"}
        if a.threads is not None:
            env["THREADS"] = str(a.threads)
        for kv in a.env:
            k, _, v = kv.partition("=")
            env[k] = v
        env.update(overrides)
        return {k: v for k, v in env.items() if v is not None}

    def start_replicas(self, overrides=None):
        for i, port in enumerate(self.ports):
            env = self.replica_env(dict(overrides or {}, PORT=str(port)))
            with open(self.replica_log(i), "ab") as f:
                f.write(f"--- start {time.strftime('%H:%M:%S')} {' '.join(f'{k}={v}' for k, v in sorted((overrides or {}).items()))}\n".encode())
            self.procs.spawn(f"replica{i + 1}", [self.args.binary], env=env, stdout=open(self.replica_log(i), "ab"))
        for i, port in enumerate(self.ports):
            if not wait_until(lambda: http_get(("127.0.0.1", 0), port, "/healthz", timeout=2)[0] == 200, 20):
                raise RuntimeError(f"replica {i + 1} did not start (log {self.replica_log(i)})")
            if not wait_until(lambda: self.metrics(i).get("feedproxy_redis_up") == 1, 10):
                raise RuntimeError(f"replica {i + 1} did not connect to Redis")

    def stop_replicas(self):
        for i in range(len(self.ports)):
            self.procs.stop(f"replica{i + 1}")

    def stop_replica(self, i, grace=15):
        """A deploy's stop: replica i SIGTERMed, SIGKILLed after `grace` s; seconds until it exited."""
        p = self.procs.procs.pop(f"replica{i + 1}")
        t = time.monotonic()
        p.terminate()
        try:
            p.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(timeout=10)
        return time.monotonic() - t

    def redeploy_replica(self, i, overrides, grace=15, timeout=20):
        """One step of a rolling deploy (scripts/tests/chaos-test.py's): replica i SIGTERMed
        (SIGKILL after `grace` s), waited for, started again on its port with `overrides`,
        until it answers /readyz 200 and is on Redis. Returns (seconds to exit, seconds from
        the start to ready)."""
        exited = self.stop_replica(i, grace)
        port = self.ports[i]
        env = self.replica_env(dict(overrides, PORT=str(port)))
        with open(self.replica_log(i), "ab") as f:
            f.write(f"--- deploy {time.strftime('%H:%M:%S')} {' '.join(f'{k}={v}' for k, v in sorted(overrides.items()))}\n".encode())
        t = time.monotonic()
        self.procs.spawn(f"replica{i + 1}", [self.args.binary], env=env, stdout=open(self.replica_log(i), "ab"))
        if not wait_until(lambda: http_get(("127.0.0.1", 0), port, "/readyz", timeout=2)[0] == 200, timeout):
            raise RuntimeError(f"replica {i + 1} not ready after the deploy (log {self.replica_log(i)})")
        if not wait_until(lambda: self.metrics(i).get("feedproxy_redis_up") == 1, 10):
            raise RuntimeError(f"replica {i + 1} did not connect to Redis after the deploy")
        return exited, time.monotonic() - t

    def replica_log(self, i):
        return os.path.join(self.tmp, f"replica{i + 1}.log")

    def metrics_text(self, i):
        status, _, body = http_get(("127.0.0.1", 0), self.ports[i], "/metrics", timeout=5)
        return body.decode() if status == 200 else ""

    def metrics(self, i, text=None):
        out = {}
        for line in (text if text is not None else self.metrics_text(i)).splitlines():
            if line and not line.startswith("#"):
                name, _, value = line.rpartition(" ")
                try:
                    out[name] = float(value)
                except ValueError:
                    pass
        return out

    def cpu(self):
        return {name: proc_cpu(pid) for name, pid in self.procs.pids().items()}


def http_get(source, port, path, headers=None, timeout=30):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout, source_address=source)
    try:
        c.request("GET", path, headers=headers or {})
        r = c.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    except Exception as e:
        return 0, {"error": f"{type(e).__name__}: {e}"}, b""
    finally:
        c.close()


# ---------------------------------------------------------------- apps and recipes


class RecipeUnsupported(Exception):
    pass


class App:
    def __init__(self, n, addr, port, replica, library):
        self.n, self.addr, self.port, self.replica = n, addr, port, replica
        self.library = library
        self.ids = ",".join(map(str, library))
        self.conn = None
        self.seen = set()  # (podcastId, episode id) received since `seen` was last cleared
        self.newest = None  # since recipe: newest `published` seen (Unix s)
        self.etag = None
        self.token = None  # sync recipe
        self.pending_token = self.pending_etag = None
        self.recipe_errors = []
        self.resyncs = 0

    def request(self, path, headers=None, timeout=30):
        """(status, headers, body, ms): ms from the request's first byte to the answer's last."""
        for attempt in (0, 1):
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout, source_address=(self.addr, 0))
                try:
                    self.conn.connect()
                except OSError as e:
                    self.conn = None
                    return 0, {"error": f"connect: {e}"}, b"", 0.0
            t0 = time.monotonic()
            try:
                self.conn.request("GET", path, headers=headers or {})
                r = self.conn.getresponse()
                body = r.read()
                ms = (time.monotonic() - t0) * 1000
                h = {"etag": r.getheader("ETag"), "retry-after": r.getheader("Retry-After"), "x-cache": r.getheader("X-Cache")}
                if r.getheader("Connection", "").lower() == "close":
                    self.conn.close()
                    self.conn = None
                return r.status, h, body, ms
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as e:
                # A keep-alive connection the server closed while idle: once more on a new one.
                self.conn.close()
                self.conn = None
                if attempt == 1 or time.monotonic() - t0 > 1:
                    return 0, {"error": f"{type(e).__name__}"}, b"", (time.monotonic() - t0) * 1000
            except Exception as e:
                self.conn.close()
                self.conn = None
                return 0, {"error": f"{type(e).__name__}: {e}"}, b"", (time.monotonic() - t0) * 1000
        return 0, {"error": "unreachable"}, b"", 0.0


def published_seconds(text):
    if not text:
        return None
    try:
        return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp())
    except ValueError:
        return None


class SinceRecipe:
    """docs/API.md, "How an app refreshes a library": keep the newest `published` seen and
    the last ETag; `GET /episodes?podcasts=…&since=<newest>` with If-None-Match; follow
    page.next; retry pending."""
    name = "since"

    def first(self, app):
        path = f"/episodes?podcasts={app.ids}"
        if app.newest is not None:
            path += f"&since={app.newest}"
        return path, ({"If-None-Match": app.etag} if app.etag else {})

    def retry(self, app):
        return self.first(app)

    def absorb(self, app, status, headers, doc, first):
        """After one answer; returns the next page's path or None."""
        if status == 304:
            return None
        if first and headers.get("etag"):
            app.etag = headers["etag"]
        for item in doc.get("items", []):
            app.seen.add((item.get("podcastId"), item.get("id")))
            p = published_seconds(item.get("published"))
            if p is not None and (app.newest is None or p > app.newest):
                app.newest = p
        return (doc.get("page") or {}).get("next")


class SyncRecipe:
    """docs/API.md, "How an app refreshes a library": the first refresh is plain (its first
    page's `syncToken` is kept; pages reached by `page.next` there carry none); every refresh
    after sends `&sync=<token>` with the last ETag as If-None-Match (a 304: nothing new),
    follows `page.next` to the end and keeps the last answer's token and ETag; `resync: true`
    on a podcast means its whole list comes again (apps dedupe by episode id)."""
    name = "sync"

    def first(self, app):
        path = f"/episodes?podcasts={app.ids}"
        if app.token is not None:
            path += "&sync=" + urllib.parse.quote(app.token, safe="")
            return path, ({"If-None-Match": app.etag} if app.etag else {})
        return path, {}

    def retry(self, app):
        return self.first(app)

    def absorb(self, app, status, headers, doc, first):
        if status != 200:
            return None
        for item in doc.get("items", []):
            app.seen.add((item.get("podcastId"), item.get("id")))
        app.resyncs += sum(1 for p in doc.get("podcasts", []) if p.get("resync") is True)
        nxt = (doc.get("page") or {}).get("next")
        token = doc.get("syncToken")
        if first or isinstance(token, str):
            if not isinstance(token, str):
                app.recipe_errors.append("answer has no top-level syncToken")
                raise RecipeUnsupported("answer has no top-level syncToken")
            app.pending_token, app.pending_etag = token, headers.get("etag")
        if nxt is None:
            app.token, app.etag = app.pending_token, app.pending_etag
        return nxt


RECIPES = {"since": SinceRecipe, "sync": SyncRecipe}


class PhaseStats:
    def __init__(self, deadline):
        self.lock = threading.Lock()
        self.batch_ms = []
        self.first_ms = []  # each app's first request of the phase
        self.page_ms = []
        self.http = {}
        self.podcast = {}
        self.xcache = {}
        self.errors = {}
        self.done_s = []  # per app: phase start → nothing pending
        self.unfinished = 0
        self.requests = 0
        self.deadline = deadline
        self.recipe_unsupported = 0
        # what the answers sent the apps (first requests, re-asks and pages alike)
        self.answers = {}  # status -> answers
        self.body_bytes = 0
        self.app_bytes = {}  # app n -> answer body bytes
        self.items = 0
        self.changed = 0  # ids named by `changed` (sent again, edited)
        self.resync = {}  # podcast id -> answers that flagged it `resync: true`
        self.resync_apps = set()

    def count(self, d, k):
        d[k] = d.get(k, 0) + 1

    def answer(self, app, status, body, doc):
        with self.lock:
            self.count(self.answers, status)
            self.body_bytes += len(body)
            self.app_bytes[app.n] = self.app_bytes.get(app.n, 0) + len(body)
            self.items += len(doc.get("items") or [])
            for p in doc.get("podcasts") or []:
                self.changed += len(p.get("changed") or [])
                if p.get("resync") is True:
                    self.resync[p.get("id")] = self.resync.get(p.get("id"), 0) + 1
                    self.resync_apps.add(app.n)


def refresh(app, recipe, stats, start, args, stop_at):
    """One library refresh by the recipe: ask, follow pages, re-ask while anything is pending."""
    rounds = 0
    first = True
    fallback = False  # the recipe is unsupported by this binary: plain requests from now on
    while True:
        rounds += 1
        path, headers = (f"/episodes?podcasts={app.ids}", {}) if fallback else (recipe.first(app) if rounds == 1 else recipe.retry(app))
        status, h, body, ms = app.request(path, headers)
        pending = False
        doc = {}
        if status == 200:
            try:
                doc = json.loads(body)
            except ValueError:
                doc = {}
        stats.answer(app, status, body, doc)
        with stats.lock:
            stats.requests += 1
            stats.batch_ms.append(ms)
            if first:
                stats.first_ms.append(ms)
            stats.count(stats.http, status)
            stats.count(stats.xcache, h.get("x-cache") or "-")
            if status == 0:
                stats.count(stats.errors, h.get("error", "?")[:80])
            for p in doc.get("podcasts", []):
                s = p.get("status")
                if s == "pending":
                    pending = True
                stats.count(stats.podcast, s if s != "error" else "error:" + str((p.get("error") or {}).get("code")))
        first = False
        nxt = None
        if not fallback:
            try:
                nxt = recipe.absorb(app, status, h, doc, True)
                pages = 0
                while nxt and pages < args.max_pages and time.monotonic() < stop_at:
                    pages += 1
                    s2, h2, b2, ms2 = app.request(nxt)
                    with stats.lock:
                        stats.page_ms.append(ms2)
                        stats.requests += 1
                    if s2 != 200:
                        stats.answer(app, s2, b2, {})
                        break
                    d2 = json.loads(b2)
                    stats.answer(app, s2, b2, d2)
                    if any(p.get("status") == "pending" for p in d2.get("podcasts", [])):
                        pending = True
                    nxt = recipe.absorb(app, s2, h2, d2, False)
            except RecipeUnsupported:
                fallback = True
                with stats.lock:
                    stats.recipe_unsupported += 1
                for item in doc.get("items", []):
                    app.seen.add((item.get("podcastId"), item.get("id")))
        if status in (200, 304) and not pending:
            stats_done(stats, time.monotonic() - start)
            return
        if rounds >= args.max_rounds or time.monotonic() + args.retry_s >= stop_at:
            with stats.lock:
                stats.unfinished += 1
            return
        time.sleep(args.retry_s)


def stats_done(stats, seconds):
    with stats.lock:
        stats.done_s.append(seconds)


def run_round(apps, recipe, args, label, bound):
    """Every app refreshes at once (released by one barrier); returns PhaseStats and wall time."""
    stats = PhaseStats(args.deadline)
    for app in apps:  # connections open before the release
        if app.conn is None:
            app.conn = http.client.HTTPConnection("127.0.0.1", app.port, timeout=30, source_address=(app.addr, 0))
            try:
                app.conn.connect()
            except OSError:
                app.conn = None
    gate = threading.Barrier(len(apps) + 1)
    stop_at = [0.0]
    t0 = [0.0]

    def one(app):
        gate.wait()
        refresh(app, recipe, stats, t0[0], args, stop_at[0])

    threads = [threading.Thread(target=one, args=(a,), daemon=True, name=f"app{a.n}") for a in apps]
    for t in threads:
        t.start()
    t0[0] = time.monotonic()
    stop_at[0] = t0[0] + bound
    gate.wait()
    for t in threads:
        t.join(timeout=max(0.1, stop_at[0] + 35 - time.monotonic()))
    wall = time.monotonic() - t0[0]
    return stats, wall


def round_report(stats, wall):
    late = (stats.deadline + 0.5) * 1000
    return {
        "wall_s": round(wall, 2), "requests": stats.requests,
        "batch_latency": lat_summary(stats.batch_ms, late), "first_request_latency": lat_summary(stats.first_ms, late),
        "page_latency": lat_summary(stats.page_ms, late),
        "http_status": {str(k): v for k, v in sorted(stats.http.items(), key=lambda kv: str(kv[0]))},
        "podcast_status": dict(sorted(stats.podcast.items())), "x_cache": stats.xcache, "errors": stats.errors,
        "apps_done_s": {"p50": round(pct(stats.done_s, 50), 2) if stats.done_s else None, "max": round(max(stats.done_s), 2) if stats.done_s else None,
                        "n": len(stats.done_s)},
        "apps_unfinished": stats.unfinished, "recipe_unsupported_answers": stats.recipe_unsupported,
    }


# ---------------------------------------------------------------- publisher counts and metrics


def feed_counts(c, key):
    per = c.get(key, {})
    values = list(per.values())
    hist = {}
    for v in values:
        hist[v] = hist.get(v, 0) + 1
    return {"feeds": len(values), "total": sum(values), "feeds_more_than_once": sum(1 for v in values if v > 1), "max": max(values, default=0),
            "histogram": {str(k): hist[k] for k in sorted(hist)}}


def upstream_report(c):
    ids = c.get("lookup_ids", [])
    return {
        "full_downloads": feed_counts(c, "full"), "abandoned_by_client": feed_counts(c, "abandoned"), "conditional_requests": feed_counts(c, "conditional"), "not_modified": feed_counts(c, "not_modified"),
        "lookups": {"requests": c.get("lookups", 0), "ids_total": sum(ids), "distinct_ids": c.get("lookup_distinct_ids"),
                    "ids_in_more_than_one_lookup": c.get("lookup_ids_repeated"), "max_lookups_per_id": c.get("lookup_id_max"),
                    "ids_per_lookup": {"min": min(ids, default=0), "p50": pct(ids, 50) or 0, "max": max(ids, default=0),
                                       "mean": round(sum(ids) / len(ids), 1) if ids else 0}},
        "max_feed_requests_in_flight": c.get("max_in_flight"), "other_feed_host_requests": c.get("other"),
    }


def fmt_feed(d, what):
    return (f"{d['total']} {what} of {d['feeds']} feeds; {d['feeds_more_than_once']} feeds more than once, max {d['max']} "
            f"(histogram times:feeds {d['histogram']})")


INTERESTING = ("feedproxy_l2_events_total", "feedproxy_redis_commands_total", "feedproxy_upstream_requests_total", "feedproxy_upstream_queue_",
               "feedproxy_cache_requests_total", "feedproxy_rejected_requests_total", "feedproxy_rate_limit_decisions_total", "feedproxy_shared_",
               "feedproxy_redis_", "feedproxy_http_requests_total", "feedproxy_circuit_breaker_state", "feedproxy_feed_circuit_breakers")


def metric_delta(before, after):
    out = {}
    for k, v in after.items():
        if not k.startswith(INTERESTING) or k.endswith("_bucket"):
            continue
        d = v - before.get(k, 0.0)
        if "redis_up" in k or "queue_depth" in k or "breaker" in k:
            d = v  # gauges: the value now
        if d:
            out[k] = round(d, 4)
    return out


def redis_histogram_over(before, after, threshold):
    """Redis commands slower than `threshold` seconds (from the duration histogram buckets), by operation."""
    out = {}
    rx = re.compile(r'feedproxy_redis_command_duration_seconds_bucket\{(.*)\}')
    per = {}
    for k, v in after.items():
        m = rx.match(k)
        if not m:
            continue
        labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
        le = labels.pop("le", None)
        key = ",".join(f"{a}={b}" for a, b in sorted(labels.items()))
        per.setdefault(key, {})[le] = v - before.get(k, 0.0)
    for key, buckets in per.items():
        total = buckets.get("+Inf", 0)
        finite = sorted(((float(le), n) for le, n in buckets.items() if le != "+Inf"), key=lambda x: x[0])
        under = max((n for le, n in finite if le <= threshold + 1e-9), default=0)
        if total:
            out[key] = {"total": total, "over": total - under}
    return out


def hist_delta(before, after, metric, label, value):
    """Per-bucket counts (not cumulative) of histogram `metric` for `label`=`value`, between two snapshots."""
    rx = re.compile(re.escape(metric) + r'_bucket\{(.*)\}')
    cum = []
    for k, v in after.items():
        m = rx.match(k)
        if not m:
            continue
        labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
        if labels.get(label) != value:
            continue
        le = labels.get("le")
        cum.append((float("inf") if le == "+Inf" else float(le), v - before.get(k, 0.0)))
    cum.sort()
    out, prev = {}, 0.0
    for le, n in cum:
        if n - prev:
            out["+Inf" if le == float("inf") else f"{le:g}"] = int(n - prev)
        prev = n
    return out


def repeat_analysis(entries, ports):
    """Feeds asked more than once (full downloads, and conditional requests, apart): by the
    same replica or another one (by source port), and whether the later request started
    while the earlier one was still running (two holders at once) or after it ended (and
    how long after)."""
    out = {}
    for kind, pick in (("full", lambda e: e[4] == 200), ("conditional", lambda e: e[5])):
        per = {}
        for e in entries:
            if pick(e):
                per.setdefault(e[2], []).append(e)
        same = other = unknown = overlap = 0
        gaps = []
        by_replica = {}
        for fid, es in per.items():
            es.sort()
            for e in es:
                who = ports.get(e[3], "?")
                by_replica[who] = by_replica.get(who, 0) + 1
            for a, b in zip(es, es[1:]):
                ra, rb = ports.get(a[3]), ports.get(b[3])
                if ra is None or rb is None:
                    unknown += 1
                elif ra == rb:
                    same += 1
                else:
                    other += 1
                if b[0] < a[1]:
                    overlap += 1
                else:
                    gaps.append(round((b[0] - a[1]) * 1000))
        out[kind] = {"repeats": same + other + unknown, "same_replica": same, "other_replica": other, "replica_unknown": unknown,
                     "started_while_previous_running": overlap,
                     "gap_after_previous_ms": {"n": len(gaps), "p50": pct(gaps, 50), "p90": pct(gaps, 90), "max": max(gaps, default=None)},
                     "requests_by_replica": by_replica}
    # A request the replica gave up on (status 0) followed by another of the same feed.
    retried = {}
    for e in sorted(entries):
        if e[4] == 0:
            retried.setdefault(e[2], [e, 0])
        elif e[2] in retried and e[0] >= retried[e[2]][0][0]:
            retried[e[2]][1] += 1
    out["abandoned_then_asked_again"] = {"feeds": sum(1 for v in retried.values() if v[1]), "requests": sum(v[1] for v in retried.values())}
    return out


def sum_by(delta, prefix, label):
    out = {}
    for k, v in delta.items():
        if k.startswith(prefix):
            m = re.search(label + r'="([^"]*)"', k)
            lab = m.group(1) if m else "-"
            out[lab] = out.get(lab, 0) + v
    return out


# ---------------------------------------------------------------- the storm


class Storm:
    def __init__(self, args):
        self.args = args
        self.tmp = tempfile.mkdtemp(prefix="feedproxy-storm-")
        self.c = Cluster(args, self.tmp)
        self.report = {"settings": {k: v for k, v in vars(args).items()}, "phases": {}, "tmp": self.tmp}
        self.recipe = RECIPES[args.recipe]()
        self.rng = random.Random(args.seed)
        self.metrics_before = None
        self.cpu_before = None
        self.self_cpu_before = None
        self.busy_before = None
        self.sampler = None
        self.threads_before = {}

    def mark(self, phase=None):
        self.perf = None
        if phase and phase in self.args.perf:
            pids = ",".join(str(p) for n, p in self.c.procs.pids().items() if n.startswith("replica"))
            out = os.path.join(self.tmp, f"perf-{phase}.data")
            self.perf = (subprocess.Popen([PERF, "record", "-F", "99", "-g", "-p", pids, "-o", out], stdout=subprocess.DEVNULL,
                                          stderr=subprocess.DEVNULL, start_new_session=True), out)
        self.metrics_before = [self.c.metrics(i) for i in range(len(self.c.ports))]
        self.log_offsets = [os.path.getsize(self.c.replica_log(i)) if os.path.exists(self.c.replica_log(i)) else 0 for i in range(len(self.c.ports))]
        self.cpu_before = self.c.cpu()
        self.threads_before = {n: thread_cpu(p) for n, p in self.c.procs.pids().items() if n.startswith("replica")}
        t = os.times()
        self.self_cpu_before = (t.user + t.system, time.monotonic())
        self.busy_before = machine_busy()
        host, port = urllib.parse.urlsplit(self.c.feed_base).netloc.split(":")
        replicas = {n: p for n, p in self.c.procs.pids().items() if n.startswith("replica")}
        self.sampler = Sampler(pids=replicas, feed_host=(host, int(port))).start()

    def collect(self, name):
        perf = None
        if getattr(self, "perf", None):
            proc, out = self.perf
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
            perf = perf_top(out)
            self.perf = None
        texts = [self.c.metrics_text(i) for i in range(len(self.c.ports))]
        for i, text in enumerate(texts):
            with open(os.path.join(self.tmp, f"metrics-{name}-replica{i + 1}.txt"), "w") as f:
                f.write(text)
        after = [self.c.metrics(i, texts[i]) for i in range(len(texts))]
        deltas = [metric_delta(b, a) for b, a in zip(self.metrics_before, after)]
        slow = [redis_histogram_over(b, a, self.args.redis_timeout_ms / 1000) for b, a in zip(self.metrics_before, after)]
        hists = [{"server_episodes_batch_s": hist_delta(b, a, "feedproxy_http_request_duration_seconds", "route", "/episodes"),
                  "server_single_episodes_s": hist_delta(b, a, "feedproxy_http_request_duration_seconds", "route", "/podcasts/{id}/episodes"),
                  "upstream_feed_fetch_s": hist_delta(b, a, "feedproxy_upstream_request_duration_seconds", "source", "episodes"),
                  "upstream_itunes_s": hist_delta(b, a, "feedproxy_upstream_request_duration_seconds", "source", "itunes")}
                 for b, a in zip(self.metrics_before, after)]
        samples = self.sampler.stop() if self.sampler else []
        plog = self.c.publisher.request_log()
        ports = self.sampler.ports if self.sampler else {}
        with open(os.path.join(self.tmp, f"publisher-log-{name}.json"), "w") as f:
            json.dump({"requests": plog, "ports": {str(k): v for k, v in ports.items()}}, f)
        repeats = repeat_analysis(plog, ports)
        cpu_now = self.c.cpu()
        t = os.times()
        wall = time.monotonic() - self.self_cpu_before[1]
        busy, total = machine_busy()
        cpu = {n: round(cpu_now[n] - self.cpu_before.get(n, 0.0), 2) for n in cpu_now}
        cpu["load-generator (this script)"] = round(t.user + t.system - self.self_cpu_before[0], 2)
        threads = {}
        for n, p in self.c.procs.pids().items():
            if n in self.threads_before:
                now_t, before_t = thread_cpu(p), self.threads_before[n]
                threads[n] = {k: round(v - before_t.get(k, 0.0), 2) for k, v in sorted(now_t.items(), key=lambda kv: -kv[1]) if v - before_t.get(k, 0.0) >= 0.01}
        ncpu = os.cpu_count() or 1
        machine = (busy - self.busy_before[0]) / max(1, total - self.busy_before[1])
        return {"metrics_delta": deltas, "redis_slower_than_timeout": slow, "histograms": hists, "repeats": repeats, "perf_top": perf,
                "machine_busy_samples": {"n": len(samples), "at_least_95pct": sum(1 for x in samples if x >= 0.95),
                                         "p50": round(pct(samples, 50), 3) if samples else None},
                "cpu_seconds": cpu, "replica_thread_cpu_seconds": threads, "cpu_share_of_machine": {n: round(v / (wall * ncpu), 3) for n, v in cpu.items()},
                "machine_busy": round(machine, 3), "measured_s": round(wall, 2)}

    def settle(self, quiet=1.5, bound=30):
        """Until the publisher has seen no feed request for `quiet` s (background fetches done)."""
        end = time.monotonic() + bound
        while time.monotonic() < end:
            c = self.c.publisher.counts()
            if c["in_flight"] == 0 and (c["last_at"] is None or time.time() - c["last_at"] > quiet):
                return True
            time.sleep(0.25)
        return False

    def run(self):
        a = self.args
        t_start = time.monotonic()
        flood_feeds = a.flood_batches * a.flood_size + 1 if "e" in a.phases else 0
        info = self.c.start_publisher(a.podcasts + flood_feeds)
        self.c.start_redis()
        self.c.start_replicas()
        ids = [BASE_ID + i for i in range(a.podcasts)]
        self.flood_ids = [BASE_ID + a.podcasts + i for i in range(flood_feeds)]
        addrs = [f"127.0.0.{10 + (n % 241)}" for n in range(a.apps)]
        self.apps = [App(n, addrs[n], self.c.ports[n % a.replicas], n % a.replicas, self.rng.sample(ids, min(a.per_app, len(ids))))
                     for n in range(a.apps)]
        followed = sorted({i for app in self.apps for i in app.library})
        log(f"storm: {a.podcasts} podcasts on one feed host ({info['feed_base']}, {a.delay_ms} ms per answer), lookups at {info['lookup_url']}; "
            f"{a.apps} apps x {a.per_app} ({len(followed)} distinct followed), {a.replicas} replicas :{', :'.join(map(str, self.c.ports))}, "
            f"redis :{self.c.redis_port}, recipe {a.recipe}, TTL {a.ttl} s; binary {a.binary}; logs in {self.tmp}")
        self.report["followed_distinct"] = len(followed)
        self.report["setup_s"] = round(time.monotonic() - t_start, 1)
        if "a" in a.phases:
            self.phase_cold()
        if "b" in a.phases:
            self.phase_publish(followed)
        if "c" in a.phases:
            self.phase_expiry()
        if "d" in a.phases and "b" in a.phases:
            self.phase_misses()
        if a.deploy and "a" in a.phases:
            self.phase_deploy()
        if "e" in a.phases:
            self.phase_flood()
        self.report["logs"] = self.scan_logs()
        self.report["redis_info"] = self.redis_info()
        self.report["total_s"] = round(time.monotonic() - t_start, 1)

    # a
    def phase_cold(self):
        a = self.args
        log(f"\n[a] cold storm: {a.apps} apps refresh at once, re-asking every {a.retry_s} s while anything is pending")
        self.c.publisher.reset_counts()
        self.mark("a")
        stats, wall = run_round(self.apps, self.recipe, a, "cold", a.phase_timeout)
        self.settle()
        r = round_report(stats, wall)
        r["server_batch_latency"] = self.server_batch_latency()
        r["upstream"] = upstream_report(self.c.publisher.counts())
        r.update(self.collect("a-cold"))
        # From here the expiry round's count starts: a feed the replicas revalidate in the
        # background before the round (recent libraries are kept warm) counts there.
        self.c.publisher.reset_counts()
        self.cold_filled_at = time.time()
        self.report["phases"]["a_cold"] = r
        self.print_round(r, "downloads")

    # b
    def phase_publish(self, followed):
        a = self.args
        n = max(1, round(a.publish_share * len(followed)))
        chosen = self.rng.sample(followed, n)
        now = int(time.time())
        plan = []
        for k, fid in enumerate(chosen):
            if k % 2 == 0:
                plan.append((fid, now - self.rng.randint(0, 600), "recent"))
            else:
                plan.append((fid, now - self.rng.randint(2 * 3600, 60 * 3600), "backdated"))
        self.rng.shuffle(plan)  # published in an order unrelated to their dates
        self.new = []
        for fid, published, kind in plan:
            r = self.c.publisher.publish(fid, published)
            self.new.append({"podcast": fid, "guid": r["guid"], "published": published, "kind": kind})
        by_feed = {}
        for e in self.new:
            by_feed.setdefault(e["podcast"], []).append(e)
        # What each app is owed, and whether its `since` was already past the new episode's date.
        self.owed = {}
        for app in self.apps:
            owed = []
            for fid in app.library:
                for e in by_feed.get(fid, []):
                    owed.append(dict(e, before_since=app.newest is not None and e["published"] <= app.newest))
            self.owed[app.n] = owed
            app.seen = set()  # from now on: what the app is given after the publish
        total_owed = sum(len(v) for v in self.owed.values())
        before = sum(1 for v in self.owed.values() for e in v if e["before_since"])
        self.report["phases"]["b_publish"] = {"episodes": len(self.new), "recent": sum(e["kind"] == "recent" for e in self.new),
                                             "backdated": sum(e["kind"] == "backdated" for e in self.new), "app_episode_pairs_owed": total_owed,
                                             "pairs_dated_at_or_before_the_apps_since": before}
        log(f"\n[b] published {len(self.new)} new episodes on {len(by_feed)} feeds in shuffled order "
            f"({self.report['phases']['b_publish']['recent']} dated in the last 10 min, {self.report['phases']['b_publish']['backdated']} backdated 2-60 h); "
            f"{total_owed} (app, episode) pairs owed, {before} of them dated at or before that app's `since`")

    # c
    def phase_expiry(self):
        a = self.args
        filled = getattr(self, "cold_filled_at", time.time())
        wait = filled + a.ttl + 1.0 - time.time()
        log(f"\n[c] expiry round: waiting {max(0, wait):.1f} s for CACHE_TTL_EPISODES={a.ttl} s to pass since the last fill, then every app refreshes by its recipe"
            " (feed requests counted from the cold fill on: background revalidations included)")
        if wait > 0:
            time.sleep(wait)
        self.mark("c")
        stats, wall = run_round(self.apps, self.recipe, a, "expiry", a.phase_timeout)
        self.settle()
        r = round_report(stats, wall)
        r["upstream"] = upstream_report(self.c.publisher.counts())
        r.update(self.collect("c-expiry"))
        self.report["phases"]["c_expiry"] = r
        self.print_round(r, "revalidations")

    # d
    def phase_misses(self):
        a = self.args
        log(f"\n[d] miss check ({a.recipe} recipe): background refreshes settled, then {a.settle_rounds} more refresh rounds {a.settle_gap_s} s apart")
        self.settle(quiet=2, bound=30)
        rounds = []
        self.c.publisher.reset_counts()
        for k in range(a.settle_rounds):
            if k:
                time.sleep(a.settle_gap_s)
            stats, wall = run_round(self.apps, self.recipe, a, f"settle{k + 1}", a.phase_timeout)
            rounds.append(round_report(stats, wall))
        self.settle()
        missed_apps, missed_pairs, by_kind, by_since = 0, 0, {}, {"before_since": 0, "after_since": 0}
        owed_total = 0
        for app in self.apps:
            owed = self.owed.get(app.n, [])
            owed_total += len(owed)
            miss = [e for e in owed if (e["podcast"], e["guid"]) not in app.seen]
            if miss:
                missed_apps += 1
            missed_pairs += len(miss)
            for e in miss:
                by_kind[e["kind"]] = by_kind.get(e["kind"], 0) + 1
                by_since["before_since" if e["before_since"] else "after_since"] += 1
        unsupported = sum(r["recipe_unsupported_answers"] for r in rounds) + sum(
            self.report["phases"].get(p, {}).get("recipe_unsupported_answers", 0) for p in ("a_cold", "c_expiry"))
        errors = sorted({e for app in self.apps for e in app.recipe_errors})
        r = {"recipe": a.recipe, "rounds": rounds, "apps": len(self.apps), "apps_owed": sum(1 for v in self.owed.values() if v),
             "pairs_owed": owed_total, "apps_missing_episodes": missed_apps, "pairs_missed": missed_pairs, "missed_by_kind": by_kind,
             "missed_by_since": by_since, "recipe_unsupported_answers": unsupported, "recipe_errors": errors,
             "resync_flags_seen": sum(app.resyncs for app in self.apps), "upstream": upstream_report(self.c.publisher.counts())}
        r["verdict"] = ("recipe unsupported by this binary: " + "; ".join(errors)) if unsupported else (
            "every app saw every new episode" if missed_apps == 0 else f"{missed_apps} of {len(self.apps)} apps missed episodes")
        self.report["phases"]["d_misses"] = r
        for k, rr in enumerate(rounds):
            log(f"  round {k + 1}: {rr['requests']} requests in {rr['wall_s']} s; batch latency {fmt_lat(rr['batch_latency'])}; HTTP {rr['http_status']}")
        log(f"  {r['verdict']}: {missed_pairs} of {owed_total} (app, episode) pairs missed; by date kind {by_kind}; "
            f"by the app's since at publish time {by_since}")
        if unsupported:
            log(f"  sync recipe: {unsupported} answers had no syncToken; the apps carried on with plain requests (misses above are not the recipe's)")

    # deploy
    def phase_deploy(self):
        """A rolling deploy with a routine setting changed, then every app's next refresh by
        its recipe: what the deploy costs the apps and the platform."""
        a = self.args
        setting = {"FEED_MAX_BODY_BYTES": str(a.deploy_feed_max_body_bytes)}
        log(f"\n[deploy] rolling deploy: each replica in turn SIGTERMed and started again with FEED_MAX_BODY_BYTES={a.deploy_feed_max_body_bytes} "
            f"(a new cache key fingerprint), ready on /readyz, {a.deploy_pause_s} s apart; then every app refreshes once by its recipe ({a.recipe})")
        self.settle(quiet=2, bound=30)
        self.c.publisher.reset_counts()
        t0 = time.monotonic()
        steps = []
        for i in range(a.replicas):
            if i:
                time.sleep(a.deploy_pause_s)
            exited, ready = self.c.redeploy_replica(i, setting)
            steps.append({"replica": f"replica{i + 1}", "exit_s": round(exited, 2), "ready_s": round(ready, 2)})
        deploy_s = time.monotonic() - t0
        during = self.c.publisher.counts()
        for app in self.apps:  # their connections went with the old processes: the balancer's new ones
            if app.conn is not None:
                app.conn.close()
                app.conn = None
        tokens = sum(1 for app in self.apps if app.token is not None)
        etags = sum(1 for app in self.apps if app.etag is not None)
        self.mark("deploy")
        stats, wall = run_round(self.apps, self.recipe, a, "deploy", a.phase_timeout)
        self.settle()
        r = round_report(stats, wall)
        after = self.c.publisher.counts()
        r["upstream"] = upstream_report(after)
        r.update(self.collect("deploy"))
        per_app = [stats.app_bytes.get(app.n, 0) for app in self.apps]
        up = r["upstream"]
        resynced = sorted(stats.resync)
        d = {
            "setting": setting, "replicas": steps, "rolling_restart_s": round(deploy_s, 2),
            "apps": len(self.apps), "apps_with_token": tokens, "apps_with_etag": etags, "recipe": a.recipe,
            "requests": stats.requests, "answers_by_status": {str(k): v for k, v in sorted(stats.answers.items(), key=lambda kv: str(kv[0]))},
            "answer_body_bytes": stats.body_bytes,
            "answer_body_bytes_per_app": {"mean": round(stats.body_bytes / max(1, len(per_app))), "p50": pct(per_app, 50), "max": max(per_app, default=0)},
            "items": stats.items, "changed_ids": stats.changed,
            "podcasts_resynced": len(resynced), "resync_flags": sum(stats.resync.values()), "apps_given_a_resync": len(stats.resync_apps),
            "resynced_podcasts_sample": resynced[:20],
            "platform": {"full_downloads": up["full_downloads"]["total"], "conditional_requests": up["conditional_requests"]["total"],
                         "not_modified": up["not_modified"]["total"],
                         "feeds_requested": len(set(after.get("full", {})) | set(after.get("conditional", {}))),
                         "itunes_lookups": up["lookups"]["requests"],
                         "during_rolling_restart": {"full_downloads": sum(during.get("full", {}).values()),
                                                    "conditional_requests": sum(during.get("conditional", {}).values()),
                                                    "itunes_lookups": during.get("lookups", 0)}},
            "wall_s": r["wall_s"], "batch_latency": r["batch_latency"], "apps_unfinished": r["apps_unfinished"],
            "x_cache": r["x_cache"], "podcast_status": r["podcast_status"], "errors": r["errors"],
            "round": r,
        }
        self.report["deploy"] = d
        pl = d["platform"]
        log(f"  deploy: rolling restart {d['rolling_restart_s']} s (" + ", ".join(f"{s['replica']} exited in {s['exit_s']} s, ready in {s['ready_s']} s" for s in steps)
            + f"); {tokens} of {len(self.apps)} apps held a sync token, {etags} an ETag")
        log(f"  deploy round: {d['requests']} requests from {len(self.apps)} apps, answers {d['answers_by_status']}, wall {d['wall_s']} s, "
            f"batch latency p99 {r['batch_latency'].get('p99_ms')} ms (max {r['batch_latency'].get('max_ms')} ms), unfinished {d['apps_unfinished']}")
        log(f"  deploy sent apps: {d['answer_body_bytes']} B of answer bodies ({d['answer_body_bytes_per_app']['mean']} B per app, "
            f"max {d['answer_body_bytes_per_app']['max']}), {d['items']} items ({d['changed_ids']} named changed), "
            f"{d['podcasts_resynced']} podcasts resynced ({d['resync_flags']} resync flags to {d['apps_given_a_resync']} apps)"
            + (f"; resynced e.g. {resynced[:8]}" if resynced else ""))
        log(f"  deploy cost the platform (from the first SIGTERM): {pl['full_downloads']} feed downloads, {pl['conditional_requests']} conditional requests "
            f"({pl['not_modified']} answered 304) of {pl['feeds_requested']} feeds, {pl['itunes_lookups']} iTunes lookups; during the restart itself "
            f"{pl['during_rolling_restart']}")
        if r["errors"]:
            log(f"  deploy round errors: {r['errors']}")
        self.print_metrics(r)

    # e
    def phase_flood(self):
        a = self.args
        log(f"\n[e] flood fairness: replicas restarted with the default CLIENT_MISS_RATE_PER_MIN; feed delay {a.flood_delay_ms} ms; "
            f"{FLOOD_ADDR} sends {a.flood_batches} batches of {a.flood_size} cold ids to replica1 while {VICTIM_ADDR} asks one cold "
            f"/podcasts/{{id}}/episodes there")
        self.c.stop_replicas()
        self.c.start_replicas({"CLIENT_MISS_RATE_PER_MIN": None})
        self.c.publisher.set_delay(a.flood_delay_ms)
        self.c.publisher.reset_counts()
        self.mark("e")
        port = self.c.ports[0]
        batches = [self.flood_ids[k * a.flood_size:(k + 1) * a.flood_size] for k in range(a.flood_batches)]
        victim_id = self.flood_ids[-1]
        out = [None] * len(batches)
        conns = []
        for _ in batches:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=60, source_address=(FLOOD_ADDR, 0))
            c.connect()
            conns.append(c)
        gate = threading.Barrier(len(batches) + 1)

        def flood(k):
            gate.wait()
            t0 = time.monotonic()
            try:
                conns[k].request("GET", "/episodes?podcasts=" + ",".join(map(str, batches[k])))
                r = conns[k].getresponse()
                body = r.read()
                doc = json.loads(body) if r.status == 200 else {}
                sts = {}
                for p in doc.get("podcasts", []):
                    s = p["status"] if p["status"] != "error" else "error:" + str((p.get("error") or {}).get("code"))
                    sts[s] = sts.get(s, 0) + 1
                out[k] = (r.status, (time.monotonic() - t0) * 1000, sts)
            except Exception as e:
                out[k] = (0, (time.monotonic() - t0) * 1000, {type(e).__name__: 1})
            finally:
                conns[k].close()

        threads = [threading.Thread(target=flood, args=(k,), daemon=True) for k in range(len(batches))]
        for t in threads:
            t.start()
        gate.wait()
        time.sleep(a.victim_after_s)
        vc = http.client.HTTPConnection("127.0.0.1", port, timeout=60, source_address=(VICTIM_ADDR, 0))
        t0 = time.monotonic()
        try:
            vc.request("GET", f"/podcasts/{victim_id}/episodes", headers={"X-Request-ID": "storm-victim"})
            r = vc.getresponse()
            body = r.read()
            victim = {"status": r.status, "ms": round((time.monotonic() - t0) * 1000), "x_cache": r.getheader("X-Cache"),
                      "retry_after": r.getheader("Retry-After")}
            if r.status != 200:
                try:
                    victim["error"] = json.loads(body).get("error")
                except ValueError:
                    victim["error"] = body[:200].decode(errors="replace")
        except Exception as e:
            victim = {"status": 0, "ms": round((time.monotonic() - t0) * 1000), "error": f"{type(e).__name__}: {e}"}
        finally:
            vc.close()
        for t in threads:
            t.join(timeout=60)
        counts = self.c.publisher.counts()
        flood_sts, flood_http = {}, {}
        for o in out:
            if o is None:
                continue
            flood_http[str(o[0])] = flood_http.get(str(o[0]), 0) + 1
            for k, v in o[2].items():
                flood_sts[k] = flood_sts.get(k, 0) + v
        victim_fetched = counts.get("full", {}).get(str(victim_id), 0)
        r = {"victim": victim, "victim_feed_downloaded_by_then": victim_fetched,
             "flood_latency": lat_summary([o[1] for o in out if o], (a.deadline + 0.5) * 1000), "flood_http": flood_http,
             "flood_podcast_status": flood_sts, "upstream": upstream_report(counts)}
        r.update(self.collect("e-flood"))
        self.report["phases"]["e_flood"] = r
        log(f"  victim GET /podcasts/{victim_id}/episodes: {victim['status']} in {victim['ms']} ms "
            f"(X-Cache {victim.get('x_cache')}){' error ' + json.dumps(victim.get('error')) if victim.get('error') else ''}")
        log(f"  flood batches: HTTP {flood_http}, latency {fmt_lat(r['flood_latency'])}; podcasts {flood_sts}")
        log(f"  publisher: {fmt_feed(r['upstream']['full_downloads'], 'downloads')} by then, {r['upstream']['abandoned_by_client']['total']} abandoned by the "
            f"replica; max {counts.get('max_in_flight')} feed requests in flight")
        self.print_metrics(r)

    # output

    def server_batch_latency(self):
        """The /episodes batches of the round as the replicas' own access logs time them (arrival to
        the answer's last byte written): the deadline held from the server's side, without the
        client's own scheduling (hundreds of app threads on the same cores)."""
        ms = []
        for i in range(len(self.c.ports)):
            with open(self.c.replica_log(i), "rb") as f:
                f.seek(self.log_offsets[i])
                for line in f:
                    if not line.startswith(b"{") or b'"route":"/episodes"' not in line:
                        continue
                    try:
                        d = json.loads(line)
                    except ValueError:
                        continue
                    if d.get("msg") == "request" and "duration_ms" in d:
                        ms.append(d["duration_ms"])
        return lat_summary(ms, (self.args.deadline + 0.5) * 1000)

    def print_round(self, r, what):
        u = r["upstream"]
        log(f"  wall {r['wall_s']} s, {r['requests']} requests; apps done (nothing pending) p50 {r['apps_done_s']['p50']} s, "
            f"max {r['apps_done_s']['max']} s, unfinished {r['apps_unfinished']}")
        log(f"  batch latency: {fmt_lat(r['batch_latency'])}")
        if r.get("server_batch_latency", {}).get("n"):
            log(f"  batch latency, the replicas' own access logs: {fmt_lat(r['server_batch_latency'])}")
        log(f"  first request per app: {fmt_lat(r['first_request_latency'])}")
        if r["page_latency"].get("n"):
            log(f"  page.next requests: {fmt_lat(r['page_latency'])}")
        log(f"  HTTP {r['http_status']}, X-Cache {r['x_cache']}, podcast statuses {r['podcast_status']}"
            + (f", errors {r['errors']}" if r["errors"] else ""))
        log(f"  feeds: {fmt_feed(u['full_downloads'], 'full downloads (200)')}")
        log(f"  feeds: {fmt_feed(u['conditional_requests'], 'conditional requests')}; {u['not_modified']['total']} answered 304")
        if u["abandoned_by_client"]["total"]:
            log(f"  feeds: {u['abandoned_by_client']['total']} requests abandoned by the replica before the answer was due (timed out; not counted above)")
        lk = u["lookups"]
        log(f"  iTunes: {lk['requests']} lookups for {lk['ids_total']} ids ({lk['distinct_ids']} distinct; {lk['ids_in_more_than_one_lookup']} ids in "
            f">1 lookup, max {lk['max_lookups_per_id']}); ids per lookup min {lk['ids_per_lookup']['min']} / p50 {lk['ids_per_lookup']['p50']} / "
            f"mean {lk['ids_per_lookup']['mean']} / max {lk['ids_per_lookup']['max']}")
        log(f"  max feed requests in flight at the publisher: {u['max_feed_requests_in_flight']}")
        if r.get("recipe_unsupported_answers"):
            log(f"  recipe {self.args.recipe}: {r['recipe_unsupported_answers']} answers without syncToken (unsupported by this binary)")
        self.print_metrics(r)

    def print_metrics(self, r):
        for kind, d in r.get("repeats", {}).items():
            if kind == "abandoned_then_asked_again":
                if d["feeds"]:
                    log(f"  feeds asked again after a request the replica abandoned: {d['feeds']} feeds, {d['requests']} requests")
                continue
            if d["repeats"]:
                log(f"  repeated {kind} requests of one feed: {d['repeats']} ({d['other_replica']} by another replica, {d['same_replica']} by the same, "
                    f"{d['replica_unknown']} unknown); {d['started_while_previous_running']} started while the previous one was still running, "
                    f"the rest {d['gap_after_previous_ms']['p50']} ms (p50) / {d['gap_after_previous_ms']['max']} ms (max) after it ended; "
                    f"by replica {d['requests_by_replica']}")
        cpu = r["cpu_seconds"]
        share = r["cpu_share_of_machine"]
        log(f"  CPU seconds (share of {os.cpu_count()} cores over {r['measured_s']} s, round + settling): "
            + ", ".join(f"{n} {v} ({share[n] * 100:.0f}%)" for n, v in sorted(cpu.items())) + f"; machine busy {r['machine_busy'] * 100:.0f}% "
            f"(0.5 s samples: median {r['machine_busy_samples']['p50']}, {r['machine_busy_samples']['at_least_95pct']} of {r['machine_busy_samples']['n']} at >= 95%)")
        if r.get("perf_top"):
            log("  perf, replicas' hottest symbols (self %): " + "; ".join(f"{pc}% {name}" for pc, name in r["perf_top"]["self"][:12]))
            log("  perf, inclusive (children %): " + "; ".join(f"{pc}% {name}" for pc, name in r["perf_top"]["children"][:20]))
        for n, th in sorted(r.get("replica_thread_cpu_seconds", {}).items()):
            log(f"  {n} CPU by thread: {th}")
        for i, d in enumerate(r["metrics_delta"]):
            l2 = sum_by(d, "feedproxy_l2_events_total", "event")
            redis = {}
            for k, v in d.items():
                if k.startswith("feedproxy_redis_commands_total"):
                    op = re.search(r'operation="([^"]*)"', k)
                    res = re.search(r'outcome="([^"]*)"', k)
                    key = f"{op.group(1) if op else '-'}:{res.group(1) if res else '-'}"
                    redis[key] = redis.get(key, 0) + v
            up = {}
            for k, v in d.items():
                if k.startswith("feedproxy_upstream_requests_total"):
                    src = re.search(r'source="([^"]*)"', k)
                    res = re.search(r'outcome="([^"]*)"', k)
                    key = f"{src.group(1) if src else '-'}:{res.group(1) if res else '-'}"
                    up[key] = up.get(key, 0) + v
            queue = {k.replace("feedproxy_upstream_queue_", ""): v for k, v in d.items() if k.startswith("feedproxy_upstream_queue_")}
            slow = {k: v["over"] for k, v in r["redis_slower_than_timeout"][i].items() if v["over"]}
            log(f"  replica{i + 1}: l2 events {l2}; redis commands {redis}; redis slower than {self.args.redis_timeout_ms} ms {slow or 0}; "
                f"upstream requests {up}" + (f"; queue {queue}" if queue else ""))
            h = r["histograms"][i]
            log(f"    server-side durations (s, bucket:count): /episodes {h['server_episodes_batch_s']}"
                + (f"; /podcasts/{{id}}/episodes {h['server_single_episodes_s']}" if h["server_single_episodes_s"] else "")
                + f"; feed fetches {h['upstream_feed_fetch_s']}; iTunes {h['upstream_itunes_s']}")

    def scan_logs(self):
        out = []
        for i in range(len(self.c.ports)):
            msgs = {}
            try:
                with open(self.c.replica_log(i)) as f:
                    for line in f:
                        if not line.startswith("{"):
                            continue
                        try:
                            d = json.loads(line)
                        except ValueError:
                            continue
                        if d.get("msg") == "request":
                            continue
                        lvl = d.get("level", "?")
                        if lvl in ("warn", "warning", "error"):
                            k = f"{lvl}: {d.get('msg')}"
                            msgs[k] = msgs.get(k, 0) + 1
            except OSError:
                pass
            out.append(msgs)
        return out

    def redis_info(self):
        try:
            info = self.c.redis("INFO", "commandstats")
            stats = self.c.redis("INFO", "stats")
            return {"commandstats": [l for l in info.splitlines() if l.startswith("cmdstat_")],
                    "stats": {k: v for k, v in (l.split(":", 1) for l in stats.splitlines() if ":" in l) if k in (
                        "total_commands_processed", "total_connections_received", "rejected_connections", "expired_keys", "evicted_keys")},
                    "slowlog": self.c.redis("SLOWLOG", "GET", "5")[:2000]}
        except Exception as e:
            return {"error": str(e)}


def verdicts(report, args):
    """What issue 55 asks of a storm, checked against the report: (label, value, ok, expected)."""
    out = []
    ph = report.get("phases", {})
    margin_ms = (args.deadline + args.margin) * 1000
    a, c, d, e = ph.get("a_cold"), ph.get("c_expiry"), ph.get("d_misses"), ph.get("e_flood")
    if a:
        full = a["upstream"]["full_downloads"]
        out.append(("cold: downloads per feed", f"{full['total']} for {full['feeds']} feeds, max {full['max']}", full["max"] <= 1, "each feed once"))
        lk = a["upstream"]["lookups"]
        # Each replica looks up what it loads: a lookup per 200 ids, and one more, each.
        bound = args.replicas * (-(-lk["distinct_ids"] // 200) + 1)
        out.append(("cold: iTunes lookups", f"{lk['requests']} for {lk['distinct_ids']} ids, {lk['ids_in_more_than_one_lookup']} ids in more than one",
                    lk["requests"] <= bound and lk["ids_in_more_than_one_lookup"] == 0, f"at most {bound}, no id twice"))
        # The server's own timing (its access log): the apps' side adds this machine's client threads.
        late, seen = a["server_batch_latency"], a["batch_latency"]
        out.append(("cold: slowest batch answer, the replicas' own", f"{late.get('max_ms')} ms (the apps saw {seen['max_ms']} ms)",
                    late.get("n", 0) > 0 and late["max_ms"] <= margin_ms, f"within the deadline + {args.margin} s"))
    if c:
        cond, full = c["upstream"]["conditional_requests"], c["upstream"]["full_downloads"]
        # Every followed feed revalidated (by the round, or before it in the background), none twice:
        # a round that found everything fresh without anyone asking would be a stale cache.
        followed = report.get("followed_distinct") if a else None
        every = followed is None or cond["feeds"] == followed
        out.append(("expiry: revalidations per feed", f"{cond['total']} for {cond['feeds']} of {followed if followed is not None else '?'} feeds, max {cond['max']}; downloads max {full['max']}",
                    every and cond["max"] <= 1 and full["max"] <= 1, "each followed feed once"))
        out.append(("expiry: slowest batch answer", f"{c['batch_latency']['max_ms']} ms", c["batch_latency"]["max_ms"] <= margin_ms, f"within the deadline + {args.margin} s"))
    if d:
        out.append(("every app saw every new episode", f"{d['pairs_missed']} of {d['pairs_owed']} (app, episode) pairs missed", d["pairs_missed"] == 0, "none missed"))
    dep = report.get("deploy")
    if dep and dep.get("recipe") == "sync":
        out.append(("a deploy costs no resync", f"{dep['podcasts_resynced']} podcasts resynced ({dep['resync_flags']} flags to {dep['apps_given_a_resync']} apps), "
                    f"{dep['items']} items, {dep['answer_body_bytes']} B to {dep['apps']} apps", dep["podcasts_resynced"] == 0 and dep["apps_unfinished"] == 0,
                    "0 podcasts resynced, every app done"))
    if e:
        v = e["victim"]
        out.append(("flood: another address's one cold feed", f"{v['status']} in {v['ms']} ms", v["status"] == 200 and v["ms"] <= margin_ms,
                    f"200 within the deadline + {args.margin} s"))
    return out


def main():
    ap = argparse.ArgumentParser(description="library-refresh storm against three FeedProxy replicas sharing Redis (issue 55)")
    ap.add_argument("binary", nargs="?", default=os.environ.get("FEEDPROXY_BIN", os.path.join(ROOT, ".build", "release", "feedproxy")))
    ap.add_argument("--podcasts", type=int, default=1000)
    ap.add_argument("--apps", type=int, default=150)
    ap.add_argument("--per-app", type=int, default=100)
    ap.add_argument("--delay-ms", type=int, default=100, help="publisher delay per feed answer (phases a-d)")
    ap.add_argument("--episodes", type=int, default=10, help="episodes per feed")
    ap.add_argument("--replicas", type=int, default=3)
    ap.add_argument("--ttl", type=int, default=20, help="CACHE_TTL_EPISODES")
    ap.add_argument("--deadline", type=float, default=3.0, help="the replicas' EPISODES_BATCH_DEADLINE_S (what 'late' is measured against)")
    ap.add_argument("--threads", type=int, default=None, help="THREADS per replica (default: the binary's, one per core)")
    ap.add_argument("--itunes-rate", type=int, default=100000, help="RATE_LIMIT_ITUNES_PER_MIN")
    ap.add_argument("--redis-timeout-ms", type=int, default=25, help="what REDIS_TIMEOUT_MS is (only for the report; set it with --env)")
    ap.add_argument("--env", action="append", default=[], help="KEY=VALUE for every replica (repeatable)")
    ap.add_argument("--recipe", choices=sorted(RECIPES), default="sync")
    ap.add_argument("--retry-s", type=float, default=1.0, help="an app asks again this long after an answer with pending podcasts")
    ap.add_argument("--max-rounds", type=int, default=60, help="asks per app per refresh at most")
    ap.add_argument("--max-pages", type=int, default=20, help="page.next followed per answer at most")
    ap.add_argument("--phase-timeout", type=float, default=150, help="seconds one refresh round may take")
    ap.add_argument("--publish-share", type=float, default=0.1)
    ap.add_argument("--settle-rounds", type=int, default=2)
    ap.add_argument("--settle-gap-s", type=float, default=2.0)
    ap.add_argument("--flood-batches", type=int, default=30)
    ap.add_argument("--flood-size", type=int, default=100)
    ap.add_argument("--flood-delay-ms", type=int, default=250)
    ap.add_argument("--victim-after-s", type=float, default=0.5)
    ap.add_argument("--phases", default="abcde", help="which of a b c d e to run")
    ap.add_argument("--deploy", action="store_true", help="after d: a rolling deploy of the replicas with a setting changed, then one refresh "
                    "by every app (what the deploy costs: requests, bytes, items, resyncs, feed requests, lookups)")
    ap.add_argument("--deploy-feed-max-body-bytes", type=int, default=64 << 20, help="FEED_MAX_BODY_BYTES the deployed replicas get (--deploy)")
    ap.add_argument("--deploy-pause-s", type=float, default=1.0, help="seconds between a deployed replica being ready and the next one's stop")
    ap.add_argument("--seed", type=int, default=55)
    ap.add_argument("--max-seconds", type=float, default=1200, help="the whole run is stopped after this long")
    ap.add_argument("--perf", default="", help="diagnostics: perf record the replicas during these phases (e.g. ac); top symbols in the report")
    ap.add_argument("--redis-monitor", action="store_true", help="diagnostics: every Redis command to redis-monitor.txt (costs Redis CPU)")
    ap.add_argument("--json", help="write the report here")
    ap.add_argument("--check", action="store_true", help="exit 1 unless each feed is downloaded and revalidated once, lookups are few, "
                    "batches answer within --deadline + --margin, no app missed an episode, the flood left another address's feed on time "
                    "and (--deploy) the deploy resynced no podcast")
    ap.add_argument("--margin", type=float, default=0.5, help="seconds past the deadline an answer may take (--check)")
    ap.add_argument("--keep-logs", action="store_true", help="keep the temporary directory (replica logs, metrics) even when all went well")
    args = ap.parse_args()
    for tool in (args.binary, REDIS_SERVER, REDIS_CLI):
        if not os.path.exists(tool):
            log(f"storm: missing {tool}")
            return 2
    if args.redis_timeout_ms == 25:
        for kv in args.env:
            if kv.startswith("REDIS_TIMEOUT_MS="):
                args.redis_timeout_ms = int(kv.split("=", 1)[1])
    storm = Storm(args)

    class Stop(Exception):
        pass

    def on_signal(signum, _frame):
        raise Stop(f"signal {signum}")

    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGALRM):
        signal.signal(s, on_signal)
    signal.alarm(int(args.max_seconds))
    status = 0
    t0 = time.monotonic()
    try:
        storm.run()
    except (Stop, KeyboardInterrupt) as e:
        log(f"storm: stopped ({e})")
        storm.report["stopped"] = str(e)
        status = 130
    except Exception as e:
        import traceback
        traceback.print_exc()
        storm.report["error"] = f"{type(e).__name__}: {e}"
        status = 1
    finally:
        signal.alarm(0)
        storm.c.procs.stop_all()
    storm.report["total_s"] = round(time.monotonic() - t0, 1)
    logs = storm.report.get("logs") or []
    for i, msgs in enumerate(logs):
        if msgs:
            log(f"replica{i + 1} log warnings/errors: {dict(sorted(msgs.items(), key=lambda kv: -kv[1])[:8])}")
    log(f"\nstorm: done in {storm.report['total_s']} s; logs and metrics in {storm.tmp}")
    if args.check and status == 0:
        log("\nstorm checks:")
        for label, value, ok, expected in verdicts(storm.report, args):
            log(f"  {'ok  ' if ok else 'FAIL'} {label}: {value}   (expected {expected})")
            if not ok:
                status = 1
        storm.report["checks_passed"] = status == 0
    if args.json:
        with open(args.json, "w") as f:
            json.dump(storm.report, f, indent=1, default=str)
        log(f"storm: report written to {args.json}")
    if status == 0 and not args.keep_logs and not args.json:
        shutil.rmtree(storm.tmp, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
