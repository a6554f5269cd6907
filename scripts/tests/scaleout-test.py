#!/usr/bin/env python3
"""make scaleout-test: three FeedProxy replicas sharing one Redis, nginx in front, and the
counting fixture upstream, all on loopback. Thirteen scenarios, each from a clean state
(replicas restarted, Redis flushed), each printing its figures and failing the run when
an expectation is not met:

  1 one upstream fetch per key across replicas (50 cold concurrent requests per route),
    then identical body and ETag on every replica with no new fetch;
  2 one shared rate budget (60/min: burst 10) for 60 distinct searches across replicas;
  3 Redis killed (-9) under mixed load and restarted empty: no 5xx, reconnect within 3 s,
    L2 writes resume;
  4 Redis stopped (SIGSTOP) for 3 s: no miss slower than the slowest healthy miss at the
    same concurrency plus 2 x REDIS_TIMEOUT_MS + 10 ms;
  5 Redis down the whole run: each replica keeps to limit / RATE_LIMIT_FALLBACK_REPLICAS;
  6 the replica holding a fetch lock killed mid-fetch: another replica answers within
    UPSTREAM_TIMEOUT_MS + 0.5 s;
  7 a Redis at maxmemory 1mb with volatile-lru evicts, and clients only see 200s;
  8 Sentinel: a primary, its replica and three `redis-server --sentinel` (quorum 2,
    down-after 1 s); the replicas find the primary through REDIS_SENTINELS (no REDIS_URL);
    the primary killed (-9) under mixed load: each replica on the promoted one within the
    failover time (until a sentinel names it) + 2 s, no 5xx, L2 writes resume there,
    feedproxy_redis_failovers_total = 1 on each, one iTunes budget (shared decisions, fetches
    within 60/min) before and after;
  9 a 404 from the upstream (fixture mode notfound) after the TTL of a good answer in L2:
    every replica, a cold one too, keeps serving the good 200 and the L2 entry stays 200;
 10 a cold replica and a stale L2 entry (TTL 2 s, CACHE_SWR_FACTOR=100, upstream slowed to
    3 s, UPSTREAM_TIMEOUT_MS=5000 so the refresh outlasts it): the replica that never saw
    the key answers at once (< 500 ms) with X-Cache STALE and the filling replica's ETag
    and body, exactly one upstream fetch follows in the background, and then the L2 entry
    is fresh (a newer 't', L2_HIT on another replica);
 11 the lock holder's fetch fails (fixture mode fail, 503s): replica1, then 100 ms later
    replica2 and replica3 at once, for one cold key: every answer within
    UPSTREAM_TIMEOUT_MS + 500 ms, all the same 502, and only the holder's attempts
    upstream (1, or 2 with its retry on 503);
 12 an older fetch arriving after a newer one (UPSTREAM_TIMEOUT_MS=5000): replica1's
    no-cache fetch held 3 s by the slowed upstream, replica2's no-cache fetch 0.5 s later
    answered at once; when replica1's answer arrives the L2 entry is still replica2's
    (fetch start 'f' and stored time 't' on Redis' clock unchanged, replica1's put
    refused), and replica3 serves replica2's ETag;
 13 an app's /episodes/events stream through nginx: its first event, a new episode and a
    publisher's ping through nginx (whichever replica takes it) reach it as one event with
    one feed download in all, and the idle stream outlives nginx's 15 s read timeout of the
    other routes on heartbeats.

Python 3.11 standard library only. Needs redis-server, redis-cli and nginx (the Makefile
target installs them) and the debug binary (FEEDPROXY_BIN overrides). Everything it starts
it stops, by PID. Exit status 0 only when every scenario passed.
"""

import concurrent.futures as cf
import http.client
import json
import math
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("FEEDPROXY_BIN", os.path.join(ROOT, ".build", "debug", "feedproxy"))
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"
REDIS_CLI = shutil.which("redis-cli") or "/usr/bin/redis-cli"
REPLICAS = 3
UPSTREAM_TIMEOUT_MS = 2000
REDIS_TIMEOUT_MS = 25
# Every upstream's rate limit raised (filled from the binary's --help by main()).
HIGH_LIMITS = {}
# A fair queue being added elsewhere may make rate-limited misses wait for a token; the
# rate-limit scenarios want the immediate answer. Unknown variables are ignored today
# (ConfigurationParser reads only the variables of known options).
NO_QUEUE = {"UPSTREAM_QUEUE_WAIT_MS": "0", "CLIENT_MISS_RATE_PER_MIN": "0"}
# Each route's upstream, the name the fixture upstream counts its requests under: the `source`
# its answer's schema names in the binary's API document (filled by main()).
UPSTREAM_OF = {}


def rate_limit_variables():
    """Every upstream's RATE_LIMIT_*_PER_MIN, as the binary's --help lists them."""
    text = subprocess.run([BIN, "--help"], check=True, capture_output=True, text=True).stdout
    return sorted(set(re.findall(r"\((RATE_LIMIT_[A-Z0-9_]+_PER_MIN)\)", text)))


def sources_by_path():
    """{path: source} for every route whose 200 answer names its source (`"source": {"const": …}`)."""
    document = json.loads(subprocess.run([BIN, "--openapi"], check=True, capture_output=True, text=True).stdout)
    schemas = document["components"]["schemas"]
    found = {}
    for path, item in document["paths"].items():
        answer = item.get("get", {}).get("responses", {}).get("200", {}).get("content", {}).get("application/json", {})
        ref = answer.get("schema", {}).get("$ref", "")
        source = schemas.get(ref.rsplit("/", 1)[-1], {}).get("properties", {}).get("source", {}).get("const")
        if source:
            found[path] = source
    return found


def log(msg):
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


class Reply:
    def __init__(self, status, headers, body, ms, error=None):
        self.status, self.headers, self.body, self.ms, self.error = status, headers, body, ms, error


def get(port, path, headers=None, method="GET", timeout=15, conn=None):
    """One request; status 0 for a connection error. Client-side time in ms."""
    start = time.monotonic()
    own = conn is None
    c = conn or http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.request(method, path, headers=headers or {})
        r = c.getresponse()
        body = r.read()
        reply = Reply(r.status, {k.lower(): v for k, v in r.getheaders()}, body, (time.monotonic() - start) * 1000)
        reply.start = start
        return reply
    except Exception as e:  # refused, reset, timeout: a failure the scenario counts
        if not own:
            c.close()
        return Reply(0, {}, b"", (time.monotonic() - start) * 1000, error=f"{type(e).__name__}: {e}")
    finally:
        if own:
            c.close()


def burst(port, paths, request_ids=None):
    """All requests released at once, one connection each."""
    n = len(paths)
    gate = threading.Barrier(n)
    out = [None] * n

    def one(i):
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=15)
        try:
            c.connect()
        except Exception:
            pass
        gate.wait()
        headers = {"X-Request-ID": request_ids[i]} if request_ids else {}
        out[i] = get(port, paths[i], headers=headers, conn=c)
        c.close()

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


class Cluster:
    def __init__(self, tmp):
        self.tmp = tmp
        self.procs = {}  # name -> Popen
        self.redis_port = free_port()
        self.dead_redis_port = free_port()  # nothing listens there
        self.ports = [free_port() for _ in range(REPLICAS)]
        self.nginx_port = free_port()
        self.upstream = None
        self.replica_env = {}

    # processes

    def spawn(self, name, argv, env=None, stdout_path=None):
        out = open(stdout_path or os.path.join(self.tmp, name + ".log"), "ab")
        p = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT, start_new_session=True)
        out.close()
        self.procs[name] = p
        return p

    def stop(self, name, sig=signal.SIGTERM, grace=5):
        p = self.procs.pop(name, None)
        if p is None or p.poll() is not None:
            return
        try:
            os.kill(p.pid, signal.SIGCONT)
            os.kill(p.pid, sig)
            p.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            os.kill(p.pid, signal.SIGKILL)
            p.wait(timeout=5)
        except ProcessLookupError:
            pass

    def stop_all(self):
        for name in list(self.procs):
            self.stop(name, grace=3)

    @staticmethod
    def base_env(extra):
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/root"), "LANG": "C.UTF-8"}
        env.update(extra)
        return env

    # redis

    def start_redis(self):
        argv = [REDIS_SERVER, "--port", str(self.redis_port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                "--dir", self.tmp, "--protected-mode", "yes"]
        self.spawn("redis", argv)
        if not wait_until(lambda: self.redis("PING") == "PONG", 10):
            raise RuntimeError("redis-server did not start")

    def redis(self, *args):
        r = subprocess.run([REDIS_CLI, "-h", "127.0.0.1", "-p", str(self.redis_port), *args], capture_output=True, text=True, timeout=5)
        return r.stdout.strip()

    def redis_info(self, section):
        info = {}
        for line in self.redis("INFO", section).splitlines():
            if ":" in line:
                k, v = line.split(":", 1)
                info[k] = v.strip()
        return info

    # fixture upstream

    def start_upstream(self):
        path = os.path.join(self.tmp, "upstream.log")
        self.spawn("upstream", [BIN, "--fixtures", "Fixtures", "--port", "0"], env=self.base_env({"THREADS": "1", "LOG_LEVEL": "info"}),
                   stdout_path=path)
        found = {}

        def listening():
            with open(path) as f:
                for line in f:
                    if '"msg":"listening"' in line:
                        found["url"] = json.loads(line)["fixtures_upstream"]
                        return True
            return False

        if not wait_until(listening, 20):
            raise RuntimeError("fixture upstream did not start")
        self.upstream = found["url"]
        self.upstream_port = int(self.upstream.rsplit(":", 1)[1])

    def counts(self):
        r = get(self.upstream_port, "/__fixture/counts")
        return json.loads(r.body)

    def set_mode(self, mode):
        r = get(self.upstream_port, f"/__fixture/mode/{mode}", method="POST")
        assert r.status == 204, f"mode {mode}: {r.status}"

    # replicas

    def start_replicas(self, extra=None, redis_url=None, expect_redis=True):
        u = self.upstream
        for i, port in enumerate(self.ports):
            self.start_replica(i, extra, redis_url, u)
        for i, port in enumerate(self.ports):
            if not wait_until(lambda: get(port, "/healthz", timeout=2).status == 200, 20):
                raise RuntimeError(f"replica {i + 1} did not start (log: {self.replica_log(i)})")
            if expect_redis and not wait_until(lambda: self.metric(i, "feedproxy_redis_up") == 1, 10):
                raise RuntimeError(f"replica {i + 1} did not connect to Redis")

    def start_replica(self, i, extra, redis_url, u=None):
        u = u or self.upstream
        env = {
            "HOST": "127.0.0.1", "PORT": str(self.ports[i]), "THREADS": "1", "LOG_LEVEL": "info",
            "REDIS_URL": redis_url or f"redis://127.0.0.1:{self.redis_port}", "UPSTREAM_TIMEOUT_MS": str(UPSTREAM_TIMEOUT_MS),
            "REDIS_TIMEOUT_MS": str(REDIS_TIMEOUT_MS),
            # One load generator is one client: its own miss quota would turn the load into 429s.
            "CLIENT_MISS_RATE_PER_MIN": "0", "TRUSTED_PROXIES": "127.0.0.1/32",
        }
        env.update(extra or {})
        env = {k: v for k, v in env.items() if v is not None}  # a None in extra removes the variable (REDIS_URL with sentinels)
        with open(self.replica_log(i), "ab") as f:
            f.write(f"--- start {time.strftime('%H:%M:%S')} {' '.join(f'{k}={v}' for k, v in sorted((extra or {}).items()))}\n".encode())
        # Every upstream at the fixture upstream, as the service's own declarations list them.
        self.spawn(f"replica{i + 1}", [BIN, "--fixtures-upstream", u], env=self.base_env(env), stdout_path=self.replica_log(i))

    def stop_replicas(self):
        for i in range(REPLICAS):
            self.stop(f"replica{i + 1}")

    def restart(self, extra=None, redis_url=None, expect_redis=True, flush=True):
        self.stop_replicas()
        if flush:
            self.redis("FLUSHALL")
        self.start_replicas(extra, redis_url, expect_redis)

    def replica_log(self, i):
        return os.path.join(self.tmp, f"replica{i + 1}.log")

    def metrics(self, i):
        r = get(self.ports[i], "/metrics", timeout=3)
        out = {}
        for line in r.body.decode().splitlines():
            if line and not line.startswith("#"):
                name, _, value = line.rpartition(" ")
                out[name] = float(value)
        return out

    def metric(self, i, name):
        return self.metrics(i).get(name)

    def access_log(self, i):
        lines = []
        with open(self.replica_log(i)) as f:
            for line in f:
                if line.startswith("{") and '"msg":"request"' in line:
                    try:
                        lines.append(json.loads(line))
                    except ValueError:
                        pass
        return lines

    def tails(self, n=15):
        for i in range(REPLICAS):
            log(f"    --- tail of replica{i + 1}.log")
            try:
                with open(self.replica_log(i)) as f:
                    for line in f.readlines()[-n:]:
                        log("    " + line.rstrip()[:400])
            except OSError:
                pass

    # nginx

    def start_nginx(self):
        d = os.path.join(self.tmp, "nginx")
        for sub in ("", "logs", "temp"):
            os.makedirs(os.path.join(d, sub), exist_ok=True)
        servers = "\n".join(f"        server 127.0.0.1:{p} max_fails=3 fail_timeout=10s;" for p in self.ports)
        user = "user root;\n" if os.geteuid() == 0 else ""
        conf = f"""# generated by scripts/tests/scaleout-test.py from deploy/nginx/nginx.conf
{user}worker_processes 1;
daemon off;
error_log {d}/logs/error.log warn;
pid {d}/nginx.pid;
events {{ worker_connections 1024; }}
http {{
    server_tokens off;
    client_body_temp_path {d}/temp/body;
    proxy_temp_path {d}/temp/proxy;
    fastcgi_temp_path {d}/temp/fastcgi;
    uwsgi_temp_path {d}/temp/uwsgi;
    scgi_temp_path {d}/temp/scgi;
    map $http_x_request_id $feedproxy_request_id {{
        ""      $request_id;
        default $http_x_request_id;
    }}
    log_format upstream '$remote_addr [$time_iso8601] "$request" $status $body_bytes_sent '
                        'rt=$request_time upstream=$upstream_addr us=$upstream_status '
                        'urt=$upstream_response_time id=$feedproxy_request_id';
    access_log {d}/logs/access.log upstream;
    upstream feedproxy {{
        zone feedproxy 64k;
        least_conn;
{servers}
        keepalive 64;
        keepalive_requests 10000;
        keepalive_timeout 50s;
    }}
    server {{
        listen 127.0.0.1:{self.nginx_port};
        location /episodes/events {{
            proxy_pass http://feedproxy;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_set_header X-Request-ID $feedproxy_request_id;
            proxy_buffering off;
            proxy_connect_timeout 1s;
            proxy_read_timeout 1h;
        }}
        location / {{
            proxy_pass http://feedproxy;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_set_header X-Forwarded-Proto $scheme;
            proxy_set_header X-Request-ID $feedproxy_request_id;
            proxy_next_upstream error timeout;
            proxy_next_upstream_tries 2;
            proxy_next_upstream_timeout 10s;
            proxy_connect_timeout 1s;
            proxy_send_timeout 15s;
            proxy_read_timeout 15s;
        }}
    }}
}}
"""
        path = os.path.join(d, "nginx.conf")
        with open(path, "w") as f:
            f.write(conf)
        self.spawn("nginx", [NGINX, "-p", d, "-c", path, "-e", f"{d}/logs/error.log"])
        if not wait_until(lambda: get(self.nginx_port, "/healthz", timeout=2).status == 200, 10):
            raise RuntimeError("nginx did not start: " + open(f"{d}/logs/error.log").read()[-2000:])


# ---------------------------------------------------------------------------------------
# Redis Sentinel (scenario 8): one primary, one replica, three sentinels, all on loopback.

SENTINEL_MASTER = "mymaster"
# A cache, as deploy/ configures it (docs/scaling.md): bounded, LRU, no persistence.
REDIS_CACHE_ARGS = ["--maxmemory", "64mb", "--maxmemory-policy", "volatile-lru", "--save", "", "--appendonly", "no"]


class RedisReplyError(Exception):
    pass


def _resp_read(f):
    line = f.readline()
    if not line.endswith(b"\r\n"):
        raise ConnectionError("connection closed mid-reply")
    kind, rest = line[:1], line[1:-2]
    if kind == b"+":
        return rest.decode()
    if kind == b"-":
        raise RedisReplyError(rest.decode())
    if kind == b":":
        return int(rest)
    if kind == b"$":
        n = int(rest)
        return None if n < 0 else f.read(n + 2)[:-2].decode(errors="replace")
    if kind == b"*":
        n = int(rest)
        return None if n < 0 else [_resp_read(f) for _ in range(n)]
    raise ConnectionError(f"not RESP: {line[:40]!r}")


def resp(port, *args, timeout=1.0):
    """One command to the Redis or Sentinel on 127.0.0.1:port (RESP2, no redis-cli fork:
    the failover is timed by polling). An error reply raises RedisReplyError."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        parts = [str(a).encode() for a in args]
        sock.sendall(b"*%d\r\n" % len(parts) + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts))
        with sock.makefile("rb") as f:
            return _resp_read(f)


def info(port, section):
    out = {}
    for line in resp(port, "INFO", section).splitlines():
        if ":" in line:
            k, v = line.split(":", 1)
            out[k] = v.strip()
    return out


def scan_count(port, pattern="feedproxy:*"):
    """Keys matching pattern, counted as `redis-cli -p PORT --scan --pattern P | wc -l` does."""
    r = subprocess.run([REDIS_CLI, "-h", "127.0.0.1", "-p", str(port), "--scan", "--pattern", pattern],
                       capture_output=True, text=True, timeout=10)
    return len([line for line in r.stdout.splitlines() if line])


class SentinelSet:
    """A primary, its replica and three sentinels (quorum 2) on free loopback ports, with
    generated configuration files in the run's temp dir. Every process is started through
    the cluster, so stop_all() (every exit path, signals included) stops it by PID."""

    def __init__(self, c, sentinels=3, down_after_ms=1000, failover_timeout_ms=5000):
        self.c = c
        self.dir = os.path.join(c.tmp, "sentinel")
        self.primary_port, self.replica_port = free_port(), free_port()
        self.sentinel_ports = [free_port() for _ in range(sentinels)]
        self.down_after_ms, self.failover_timeout_ms = down_after_ms, failover_timeout_ms
        self.names = []
        self.promoted = {}  # sentinel index -> monotonic time it first named the replica
        self.keys_at_promotion = None

    @property
    def sentinels_env(self):
        return ",".join(f"127.0.0.1:{p}" for p in self.sentinel_ports)

    def _spawn(self, name, argv):
        self.names.append(name)
        self.c.spawn(name, argv)

    def _redis(self, name, port, extra=()):
        d = os.path.join(self.dir, name)
        os.makedirs(d, exist_ok=True)
        self._spawn(name, [REDIS_SERVER, "--port", str(port), "--bind", "127.0.0.1", "--dir", d, "--protected-mode", "yes",
                           *REDIS_CACHE_ARGS, *extra])

    def sentinel_conf(self, port):
        d = os.path.join(self.dir, f"sentinel-{port}")
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "sentinel.conf")  # a sentinel rewrites its file: one each, writable
        with open(path, "w") as f:
            f.write(f"""# generated by scripts/tests/scaleout-test.py (scenario 8)
port {port}
bind 127.0.0.1
daemonize no
dir {d}
sentinel resolve-hostnames no
sentinel monitor {SENTINEL_MASTER} 127.0.0.1 {self.primary_port} 2
sentinel down-after-milliseconds {SENTINEL_MASTER} {self.down_after_ms}
sentinel failover-timeout {SENTINEL_MASTER} {self.failover_timeout_ms}
""")
        return path

    def start(self, timeout=15):
        """Primary, then the replica (in sync before any sentinel starts: a sentinel learns
        replicas from the primary's INFO, which it asks at once and then every 10 s), then the
        sentinels; returns once each sentinel lists the replica and both other sentinels."""
        t0 = time.monotonic()
        # No 5 s wait for more replicas before the first (diskless) full sync.
        self._redis("s8-primary", self.primary_port, ["--repl-diskless-sync-delay", "0"])
        if not wait_until(lambda: resp(self.primary_port, "PING") == "PONG", 10):
            raise RuntimeError("sentinel set: primary redis-server did not start")
        self._redis("s8-replica", self.replica_port, ["--replicaof", "127.0.0.1", str(self.primary_port)])
        if not wait_until(lambda: info(self.replica_port, "replication").get("master_link_status") == "up"
                          and "state=online" in info(self.primary_port, "replication").get("slave0", ""), timeout):
            raise RuntimeError("sentinel set: the replica did not sync with the primary")
        self.synced_after = time.monotonic() - t0
        for n, port in enumerate(self.sentinel_ports):
            self._spawn(f"s8-sentinel{n + 1}", [REDIS_SERVER, self.sentinel_conf(port), "--sentinel"])
        if not wait_until(lambda: all(self.sentinel_ready(p) for p in self.sentinel_ports), max(1, timeout - (time.monotonic() - t0)), 0.1):
            states = {p: self.sentinel_state(p) for p in self.sentinel_ports}
            raise RuntimeError(f"sentinel set: sentinels not ready: {states}")
        return time.monotonic() - t0

    def sentinel_state(self, port):
        try:
            master = resp(port, "SENTINEL", "MASTER", SENTINEL_MASTER)
            replicas = resp(port, "SENTINEL", "REPLICAS", SENTINEL_MASTER)
        except (OSError, RedisReplyError) as e:
            return f"{type(e).__name__}: {e}"
        m = dict(zip(master[::2], master[1::2]))
        rs = [dict(zip(r[::2], r[1::2])) for r in replicas]
        return {"flags": m.get("flags"), "other_sentinels": m.get("num-other-sentinels"),
                "replicas": [(r.get("port"), r.get("flags")) for r in rs]}

    def sentinel_ready(self, port):
        st = self.sentinel_state(port)
        if not isinstance(st, dict) or st["flags"] != "master" or str(st["other_sentinels"]) != str(len(self.sentinel_ports) - 1):
            return False
        return any(p == str(self.replica_port) and flags == "slave" for p, flags in st["replicas"])

    def master_addr(self, port):
        reply = resp(port, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", SENTINEL_MASTER, timeout=0.5)
        return f"{reply[0]}:{reply[1]}" if reply else None

    def kill_primary(self):
        p = self.c.procs.pop("s8-primary")
        os.kill(p.pid, signal.SIGKILL)
        p.wait()
        return time.monotonic()

    def watch_promotion(self, timeout):
        """A thread polling every sentinel (every 20 ms) until each names the replica as the
        primary: the failover time is the first of those moments."""
        want = f"127.0.0.1:{self.replica_port}"

        def run():
            end = time.monotonic() + timeout
            while time.monotonic() < end and len(self.promoted) < len(self.sentinel_ports):
                for n, port in enumerate(self.sentinel_ports):
                    if n in self.promoted:
                        continue
                    try:
                        if self.master_addr(port) == want:
                            self.promoted[n] = time.monotonic()
                            if self.keys_at_promotion is None:
                                self.keys_at_promotion = scan_count(self.replica_port)
                    except (OSError, RedisReplyError, ValueError):
                        pass
                time.sleep(0.02)

        t = threading.Thread(target=run, daemon=True)
        t.start()
        return t

    @property
    def promoted_at(self):
        return min(self.promoted.values()) if self.promoted else None

    def stop(self):
        for name in reversed(self.names):
            self.c.stop(name, grace=3)


class Scenario:
    """Collects the figures of one scenario and whether each met its expectation."""

    def __init__(self, number, title):
        self.number, self.title, self.checks, self.notes = number, title, [], []

    def check(self, label, value, ok, expect):
        self.checks.append((label, value, bool(ok), expect))
        log(f"  [{'ok' if ok else 'FAIL'}] {label}: {value}   (expected {expect})")

    def note(self, text):
        self.notes.append(text)
        log(f"  note: {text}")

    @property
    def passed(self):
        return bool(self.checks) and all(c[2] for c in self.checks)


def statuses(replies):
    out = {}
    for r in replies:
        out[r.status] = out.get(r.status, 0) + 1
    return dict(sorted(out.items()))


def rate_limited(r):
    """A 503 from our own rate limit: Retry-After and the upstream_rate_limited code."""
    try:
        code = json.loads(r.body)["error"]["code"]
    except (ValueError, KeyError, TypeError):
        code = None
    return r.status == 503 and bool(r.headers.get("retry-after")) and code == "upstream_rate_limited"


def fmt_statuses(replies):
    return ", ".join(f"{k if k else 'conn-error'}: {v}" for k, v in statuses(replies).items())


# ---------------------------------------------------------------------------------------


def shared_events(c, i):
    """L2 events and Redis command outcomes other than ok, from a replica's /metrics."""
    out = {}
    for k, v in c.metrics(i).items():
        if k.startswith("feedproxy_l2_events_total"):
            out[k.split('"')[1]] = int(v)
        elif k.startswith("feedproxy_redis_commands_total") and 'outcome="ok"' not in k:
            out["redis " + k.split('operation="')[1].split('"')[0] + " " + k.split('outcome="')[1].split('"')[0]] = int(v)
    return out


def s1_single_flight(c, s):
    c.restart(HIGH_LIMITS)
    for path in ["/photos", "/podcasts?term=swift", "/loans"]:
        upstream = UPSTREAM_OF[path.split("?")[0]]
        before = c.counts().get(upstream, 0)
        replies = burst(c.nginx_port, [path] * 50)
        fetched = c.counts().get(upstream, 0) - before
        s.check(f"upstream fetches for 50 cold concurrent {path} through nginx", fetched, fetched == 1, "1")
        s.check(f"statuses of those 50", fmt_statuses(replies), all(r.status == 200 for r in replies), "all 200")
        before = c.counts().get(upstream, 0)
        direct = [get(p, path) for p in c.ports]
        fetched = c.counts().get(upstream, 0) - before
        s.check(f"new upstream fetches for {path} asked on each of the {REPLICAS} replicas directly", fetched, fetched == 0, "0")
        bodies = {r.body for r in direct} | {r.body for r in replies if r.status == 200}
        etags = {r.headers.get("etag") for r in direct} | {r.headers.get("etag") for r in replies if r.status == 200}
        caches = ",".join(r.headers.get("x-cache", "-") for r in direct)
        if any(c[2] is False for c in s.checks):
            s.note(f"after {path}: " + "; ".join(f"replica{i + 1} {shared_events(c, i)}" for i in range(REPLICAS)))
        s.check(f"distinct bodies / ETags for {path} across replicas and nginx", f"{len(bodies)} / {len(etags)} (X-Cache {caches})",
                len(bodies) == 1 and len(etags) == 1 and None not in etags and all(r.status == 200 for r in direct), "1 / 1, all 200")


    # The same on fresh keys, more times: a double fetch is a race (one replica's lookup
    # misses just before the holder publishes, its lock attempt lands just after the
    # holder unlocks), so one burst per route rarely shows it.
    doubles = []
    rounds = 10
    for n in range(rounds):
        for path in (f"/photos?tags=sf{n}", f"/podcasts?term=swift&limit={n + 1}", f"/loans?page={n + 2}"):
            upstream = UPSTREAM_OF[path.split("?")[0]]
            before = c.counts().get(upstream, 0)
            replies = burst(c.nginx_port, [path] * 50)
            fetched = c.counts().get(upstream, 0) - before
            if fetched != 1 or any(r.status != 200 for r in replies):
                doubles.append(f"{path}: {fetched} fetches, {fmt_statuses(replies)}")
    s.check(f"bursts of 50 cold concurrent requests (through nginx) on {3 * rounds} more keys with other than exactly 1 fetch and 50 x 200",
            f"{len(doubles)} of {3 * rounds}", not doubles, "0")
    for d in doubles:
        s.note(d)
    if doubles:
        s.note("a double fetch: the lock holder looks in L2 once more after SET NX (ResponseCache+Shared), so this needs "
               "a put that lands after that look and before the unlock; the extra bursts' events follow")
        s.note("after the extra bursts: " + "; ".join(f"replica{i + 1} {shared_events(c, i)}" for i in range(REPLICAS)))


def s2_shared_budget(c, s):
    env = dict(HIGH_LIMITS, RATE_LIMIT_ITUNES_PER_MIN="60", **NO_QUEUE)
    c.restart(env)
    before = c.counts().get("itunes", 0)
    tag = int(time.time())
    replies = burst(c.nginx_port, [f"/podcasts?term=budget{tag}x{i}" for i in range(60)])
    fetched = c.counts().get("itunes", 0) - before
    s.check("upstream itunes fetches for 60 distinct concurrent searches across 3 replicas (60/min, burst 10)", fetched, fetched <= 11,
            "<= 11 (burst 10 + 1 refill), not 3x")
    ok = sum(r.status == 200 for r in replies)
    refused = [r for r in replies if r.status != 200]
    s.check("answers 200 / 503", f"{ok} / {sum(r.status == 503 for r in replies)} ({fmt_statuses(replies)})",
            all(rate_limited(r) for r in refused) and ok >= 1,
            "every non-200 is a 503 upstream_rate_limited with Retry-After")
    served = []
    for i in range(REPLICAS):
        m = c.metrics(i)
        modes = {k.split('mode="')[1].split('"')[0] + "/" + k.split('decision="')[1].split('"')[0]: int(v)
                 for k, v in m.items() if k.startswith('feedproxy_rate_limit_decisions_total{upstream="itunes"')}
        served.append(f"replica{i + 1} {modes}")
    s.note("rate decisions: " + "; ".join(served))


def s3_redis_killed(c, s):
    c.restart(HIGH_LIMITS)
    hits = ["/photos", "/podcasts?term=swift", "/loans", "/podcasts/1200361736/episodes"]
    for p in hits:
        get(c.nginx_port, p)
    replies = []
    lock = threading.Lock()
    stop = threading.Event()
    duration, kill_at, down_for = 20.0, 4.0, 7.0

    def worker(t):
        conn = http.client.HTTPConnection("127.0.0.1", c.nginx_port, timeout=15)
        n = 0
        while not stop.is_set():
            n += 1
            kind = n % 4
            miss = [f"/photos?tags=k{t}x{n}", f"/podcasts?term=k{t}x{n}", f"/loans?page={t * 1500 + n}",
                    f"/podcasts/1200361736/episodes?limit={(t * 80 + n) % 500 + 1}"][kind]
            for path in (hits[n % len(hits)], miss):
                r = get(c.nginx_port, path, conn=conn)
                if r.status == 0:
                    conn = http.client.HTTPConnection("127.0.0.1", c.nginx_port, timeout=15)
                with lock:
                    replies.append((time.monotonic(), path, r))
            time.sleep(0.01)
        conn.close()

    start = time.monotonic()
    threads = [threading.Thread(target=worker, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    time.sleep(kill_at)
    redis = c.procs["redis"]
    os.kill(redis.pid, signal.SIGKILL)
    redis.wait()
    c.procs.pop("redis")
    killed = time.monotonic()
    down_seen = wait_until(lambda: all(c.metric(i, "feedproxy_redis_up") == 0 for i in range(REPLICAS)), 3)
    stored_at_down = sum(c.metrics(i).get('feedproxy_l2_events_total{event="stored"}', 0) for i in range(REPLICAS))
    time.sleep(max(0, killed + down_for - time.monotonic()))
    stored_before = sum(c.metrics(i).get('feedproxy_l2_events_total{event="stored"}', 0) for i in range(REPLICAS))
    c.start_redis()
    restarted = time.monotonic()
    up_after = [None] * REPLICAS
    while time.monotonic() - restarted < 5 and None in up_after:
        for i in range(REPLICAS):
            if up_after[i] is None and c.metric(i, "feedproxy_redis_up") == 1:
                up_after[i] = time.monotonic() - restarted
        time.sleep(0.05)
    time.sleep(max(0, start + duration - time.monotonic()))
    stop.set()
    for t in threads:
        t.join()
    stored_after = sum(c.metrics(i).get('feedproxy_l2_events_total{event="stored"}', 0) for i in range(REPLICAS))
    keys = int(c.redis("DBSIZE") or 0)
    rs = [r for _, _, r in replies]
    bad = [(p, r.status, r.error) for _, p, r in replies if r.status >= 500 or r.status == 0]
    s.check(f"responses >= 500 (or connection errors) of {len(rs)} under mixed load through nginx, Redis killed at {kill_at:.0f} s "
            f"and restarted {down_for:.0f} s later", len(bad), not bad, "0")
    s.note(f"statuses: {fmt_statuses(rs)}; replicas saw Redis down: {down_seen}")
    if bad:
        s.note(f"first failures: {bad[:5]}")
    shown = ", ".join("never" if u is None else f"{u:.2f} s" for u in up_after)
    s.check("feedproxy_redis_up back to 1 after the restart, per replica", shown,
            all(u is not None and u <= 3 for u in up_after), "each within 3 s")
    s.check("L2 stored events after the restart / keys in the new Redis", f"+{stored_after - stored_before:.0f} / {keys}",
            stored_after > stored_before and keys > 0, "> 0 / > 0")
    # Nothing can be stored while Redis is dead: a count here means the metric counts attempts.
    s.check("L2 'stored' events counted while Redis was dead (all replicas saw it down)", f"+{stored_before - stored_at_down:.0f}",
            stored_before == stored_at_down, "+0")
    if stored_before != stored_at_down:
        s.note("'stored' is counted only when Redis accepted the put (ResponseCache+Shared), so a count here is a "
               "put that Redis took just before it was killed; writes resuming is shown by the keys in the new Redis")


def s4_redis_stopped(c, s):
    c.restart(HIGH_LIMITS)
    tag = int(time.time())
    seq = [0]

    def miss_batch(label, seconds, threads=3):
        out = []
        lock = threading.Lock()
        end = time.monotonic() + seconds

        def worker(t):
            while time.monotonic() < end:
                with lock:
                    seq[0] += 1
                    n = seq[0]
                rid = f"s4-{label}-{n}"
                path = [f"/podcasts?term=st{tag}x{n}", f"/photos?tags=st{tag}x{n}", f"/loans?page={n}"][n % 3]
                r = get(c.ports[n % REPLICAS], path, headers={"X-Request-ID": rid})
                with lock:
                    out.append((rid, path, r))
                time.sleep(0.02)

        ts = [threading.Thread(target=worker, args=(t,)) for t in range(threads)]
        for t in ts:
            t.start()
        return ts, out

    # Healthy Redis: the miss time (Redis lookups, lock, budget, upstream fetch, render), at
    # the same concurrency as the stopped phase, so the bound compares like with like.
    ts, healthy = miss_batch("healthy", 3.0)
    for t in ts:
        t.join()
    redis = c.procs["redis"]
    before = [shared_events(c, i) for i in range(REPLICAS)]
    ts, stopped = miss_batch("stopped", 5.0)
    time.sleep(1.0)
    os.kill(redis.pid, signal.SIGSTOP)
    paused = time.monotonic()
    time.sleep(3.0)
    os.kill(redis.pid, signal.SIGCONT)
    resumed = time.monotonic()
    for t in ts:
        t.join()
    after = [shared_events(c, i) for i in range(REPLICAS)]
    felt = {}
    for b, a in zip(before, after):
        for k, v in a.items():
            if k.startswith("redis ") and v - b.get(k, 0):
                felt[k[6:]] = felt.get(k[6:], 0) + v - b.get(k, 0)
    s.note(f"Redis command outcomes other than ok during the stop phase, all replicas: {felt}")
    time.sleep(0.4)  # the access log is flushed every 100 ms
    server = {}
    for i in range(REPLICAS):
        for line in c.access_log(i):
            server[line.get("request_id")] = line
    def server_ms(rid):
        line = server.get(rid)
        return float(line["duration_ms"]) if line and "duration_ms" in line else None
    healthy_ms = [server_ms(rid) for rid, _, r in healthy if r.status == 200 and server.get(rid, {}).get("cache") == "MISS"]
    healthy_ms = [x for x in healthy_ms if x is not None]
    if not healthy_ms:
        s.check("healthy MISS requests measured", 0, False, "> 0")
        return
    # The slowest healthy miss is the bound's base: the stopped phase has more misses than a
    # median can speak for, and a busy machine's worst scheduling delay is in both phases.
    base = max(healthy_ms)
    median = statistics.median(healthy_ms)
    base_client = statistics.median(r.ms for _, _, r in healthy if r.status == 200)
    # Two deadlines (the lookup's, then the lock's or the budget's) and one more waiting for a
    # late answer before fetching alone (a busy Redis answers within it: no second download).
    limit = base + 3 * REDIS_TIMEOUT_MS + 10
    during = [(rid, p, r) for rid, p, r in stopped]
    measured = [(server_ms(rid), rid, p, r) for rid, p, r in during]
    missing = [rid for ms, rid, _, _ in measured if ms is None]
    worst = max((m for m in measured if m[0] is not None), key=lambda m: m[0], default=None)
    slow = [m for m in measured if m[0] is not None and m[0] > limit]
    s.note(f"healthy misses (3 threads): {len(healthy_ms)}, median {median:.1f} ms / slowest {base:.1f} ms server-side "
           f"(access log duration_ms), median {base_client:.1f} ms client-side")
    s.check(f"slowest of {len(during)} misses while Redis was SIGSTOPped for {resumed - paused:.1f} s "
            f"(server-side duration_ms)", f"{worst[0]:.1f} ms ({worst[2]})" if worst else "-",
            not slow and not missing and during, f"<= {base:.1f} + 3 x {REDIS_TIMEOUT_MS} + 10 = {limit:.1f} ms")
    client_worst = max(r.ms for _, _, r in during)
    inside = sum(1 for _, _, r in during if paused <= getattr(r, "start", 0) <= resumed)
    s.note(f"{inside} of the {len(during)} misses started while Redis was stopped")
    s.note(f"client-side slowest of those: {client_worst:.1f} ms (includes Python and loopback); "
           f"statuses: {fmt_statuses([r for _, _, r in during])}")
    if slow:
        s.note("over the limit: " + "; ".join(f"{ms:.1f} ms {p} {server[rid].get('cache')}" for ms, rid, p, _ in sorted(slow, key=lambda m: -m[0])[:8]))
    s.check("non-200 answers while Redis was stopped", sum(r.status != 200 for _, _, r in during),
            all(r.status == 200 for _, _, r in during), "0")


def s5_redis_absent(c, s):
    env = dict(RATE_LIMIT_ITUNES_PER_MIN="60", RATE_LIMIT_FALLBACK_REPLICAS="3", **NO_QUEUE)
    c.restart(env, redis_url=f"redis://127.0.0.1:{c.dead_redis_port}", expect_redis=False)
    tag = int(time.time())
    per = []
    allr = []
    for i in range(REPLICAS):
        before = c.counts().get("itunes", 0)
        replies = burst(c.ports[i], [f"/podcasts?term=down{tag}r{i}x{n}" for n in range(20)])
        fetched = c.counts().get("itunes", 0) - before
        per.append(fetched)
        allr += replies
        s.note(f"replica{i + 1}: {fetched} upstream fetches, {fmt_statuses(replies)}, redis_up={c.metric(i, 'feedproxy_redis_up')}")
    s.check("upstream itunes fetches per replica for 20 distinct searches each, Redis down (60/min over 3 replicas: burst 4)",
            " / ".join(map(str, per)), all(f <= 5 for f in per) and all(f >= 1 for f in per), "each <= 4 (+1), >= 1")
    wrong = [r for r in allr if r.status != 200 and not rate_limited(r)]
    s.check("answers other than 200 or 503 upstream_rate_limited with Retry-After (500/502, connection errors)", len(wrong), not wrong, "0")


def s6_lock_holder_killed(c, s):
    c.restart(HIGH_LIMITS)
    path = f"/podcasts?term=lockholder{int(time.time())}"
    c.set_mode("slow")
    try:
        holder = threading.Thread(target=lambda: get(c.ports[0], path, timeout=10))
        holder.start()
        time.sleep(0.3)
        locks = c.redis("--scan", "--pattern", "feedproxy:*:l:*").split()
        p = c.procs.pop("replica1")
        os.kill(p.pid, signal.SIGKILL)
        p.wait()
    finally:
        c.set_mode("normal")
    holder.join()
    s.note(f"fetch locks in Redis when replica1 was killed: {len(locks)}")
    r = get(c.ports[1], path)
    limit = UPSTREAM_TIMEOUT_MS + 500
    s.check("replica2's answer for the key whose lock holder was killed (client-side)",
            f"{r.status} in {r.ms:.0f} ms (X-Cache {r.headers.get('x-cache', '-')})",
            r.status == 200 and r.ms <= limit and len(locks) >= 1, f"200 within {limit} ms; a lock was held")


def s7_eviction(c, s):
    c.restart(HIGH_LIMITS)
    baseline = int(c.redis_info("memory").get("used_memory", "0"))
    maxmemory = max(1 << 20, baseline + (512 << 10))
    c.redis("CONFIG", "SET", "maxmemory", str(maxmemory))
    c.redis("CONFIG", "SET", "maxmemory-policy", "volatile-lru")
    tag = int(time.time())
    paths = [f"/podcasts?term=ab&limit={n}&country={cc}" for cc in ("us", "gb") for n in range(1, 151)]
    paths += [f"/photos?tags=ev{tag}x{n}" for n in range(150)]
    with cf.ThreadPoolExecutor(6) as pool:
        replies = list(pool.map(lambda p: get(c.nginx_port, p), paths))
    stats = c.redis_info("stats")
    mem = c.redis_info("memory")
    evicted = int(stats.get("evicted_keys", "0"))
    s.note(f"Redis used_memory at start {baseline} B; maxmemory {maxmemory} B (volatile-lru); used_memory after {mem.get('used_memory')} B; "
           f"keys {c.redis('DBSIZE')}")
    s.check(f"Redis evicted_keys after {len(paths)} distinct requests", evicted, evicted > 0, "> 0")
    s.check("client answers", fmt_statuses(replies), all(r.status == 200 for r in replies), "all 200")
    c.redis("CONFIG", "SET", "maxmemory", "0")


def rate_modes(c, i, upstream="itunes"):
    """feedproxy_rate_limit_decisions_total for one upstream, as {"shared/granted": n, ...}."""
    out = {}
    for k, v in c.metrics(i).items():
        if k.startswith("feedproxy_rate_limit_decisions_total{") and f'upstream="{upstream}"' in k:
            mode = k.split('mode="')[1].split('"')[0]
            decision = k.split('decision="')[1].split('"')[0]
            out[f"{mode}/{decision}"] = int(v)
    return out


def rate_failures(c, i):
    """Rate-budget commands a replica sent to Redis that did not answer (timeout, unavailable, error)."""
    return sum(v for k, v in shared_events(c, i).items() if k.startswith("redis rate "))


def mode_total(modes, mode):
    return sum(v for k, v in modes.items() if k.startswith(mode + "/"))


def s8_sentinel_failover(c, s):
    """The primary of a Sentinel-managed pair killed (-9) under mixed load: the replicas
    follow the promoted replica within the failover time + 2 s, no 5xx, L2 writes resume
    on the new primary, and the upstream budget stays one shared budget."""
    topo = SentinelSet(c)
    stop = threading.Event()
    threads = []
    try:
        setup = topo.start()
        s.note(f"primary :{topo.primary_port}, replica :{topo.replica_port}, sentinels :{', :'.join(map(str, topo.sentinel_ports))} "
               f"(quorum 2, down-after {topo.down_after_ms} ms, failover-timeout {topo.failover_timeout_ms} ms); "
               f"replica in sync and seen by all three sentinels (and they by each other) {setup:.1f} s after the start")
        per_min = 60
        env = dict(HIGH_LIMITS, RATE_LIMIT_ITUNES_PER_MIN=str(per_min), RATE_LIMIT_FALLBACK_REPLICAS=str(REPLICAS), **NO_QUEUE)
        env.update(REDIS_URL=None, REDIS_SENTINELS=topo.sentinels_env, REDIS_SENTINEL_MASTER=SENTINEL_MASTER)
        c.stop_replicas()
        c.start_replicas(env)
        # Hits: warmed on every replica (no upstream budget spent by them later). Misses in the
        # load: /photos and /loans (high limits); /podcasts misses come from the budget probe only.
        hits = ["/photos", "/podcasts?term=swift", "/loans", "/podcasts/1200361736/episodes"]
        for port in c.ports:
            for p in hits:
                get(port, p)
        keys_on_primary = scan_count(topo.primary_port)
        s.note(f"L2 keys on the primary after the warm-up (replicas found it through the sentinels): {keys_on_primary}")
        lock = threading.Lock()
        replies = []  # mixed load through nginx: (time, path, reply)
        probes = []   # distinct searches straight to the replicas: (time, replica, reply)
        tag = int(time.time())

        def worker(t):
            conn = http.client.HTTPConnection("127.0.0.1", c.nginx_port, timeout=15)
            n = 0
            while not stop.is_set():
                n += 1
                miss = [f"/photos?tags=sf{tag}k{t}x{n}", f"/loans?page={t * 1500 + n}"][n % 2]
                for path in (hits[n % len(hits)], miss):
                    r = get(c.nginx_port, path, conn=conn)
                    if r.status == 0:
                        conn = http.client.HTTPConnection("127.0.0.1", c.nginx_port, timeout=15)
                    with lock:
                        replies.append((time.monotonic(), path, r))
                time.sleep(0.01)
            conn.close()

        def prober():
            n = 0
            while not stop.is_set():
                n += 1
                i = n % REPLICAS
                r = get(c.ports[i], f"/podcasts?term=sb{tag}x{n}", timeout=5)
                with lock:
                    probes.append((time.monotonic(), i, r))
                time.sleep(0.1)

        kill_at, after_up, wait_up = 3.0, 4.0, 15.0
        itunes_start = c.counts().get("itunes", 0)
        started = time.monotonic()
        threads = [threading.Thread(target=worker, args=(t,), daemon=True) for t in range(4)]
        threads.append(threading.Thread(target=prober, daemon=True))
        for t in threads:
            t.start()
        time.sleep(kill_at)
        killed = topo.kill_primary()
        watcher = topo.watch_promotion(wait_up)
        up_at, seen_down = [None] * REPLICAS, [False] * REPLICAS
        while time.monotonic() < killed + wait_up and None in up_at:
            for i in range(REPLICAS):
                if up_at[i] is not None:
                    continue
                try:
                    m = c.metrics(i)
                except Exception:
                    continue
                if m.get("feedproxy_redis_up") == 0:
                    seen_down[i] = True
                # Up again on the new primary: the old one is dead, so an "up" after a "down"
                # or a followed failover can only be the promoted replica.
                if m.get("feedproxy_redis_up") == 1 and (m.get("feedproxy_redis_failovers_total", 0) >= 1 or seen_down[i]):
                    up_at[i] = time.monotonic()
            time.sleep(0.05)
        all_up = time.monotonic()
        watcher.join(timeout=wait_up)
        stored_at_up = sum(c.metrics(i).get('feedproxy_l2_events_total{event="stored"}', 0) for i in range(REPLICAS))
        modes_at_up = [rate_modes(c, i) for i in range(REPLICAS)]
        rate_failed_at_up = [rate_failures(c, i) for i in range(REPLICAS)]
        itunes_at_up = c.counts().get("itunes", 0)
        time.sleep(after_up)
        stop.set()
        for t in threads:
            t.join(timeout=20)
        ended = time.monotonic()
        final = [c.metrics(i) for i in range(REPLICAS)]
        modes_end = [rate_modes(c, i) for i in range(REPLICAS)]
        rate_failed_end = [rate_failures(c, i) for i in range(REPLICAS)]
        itunes_end = c.counts().get("itunes", 0)
        keys_end = scan_count(topo.replica_port)
        promoted = topo.promoted_at

        # The failover, as the sentinels see it.
        failover = promoted - killed if promoted else None
        s.check("failover time: kill -9 of the primary until a sentinel's SENTINEL get-master-addr-by-name names the replica",
                "never" if failover is None else f"{failover:.2f} s (all three: "
                + ", ".join(f"{t - killed:.2f}" for t in sorted(topo.promoted.values())) + " s)",
                failover is not None, f"within {wait_up:.0f} s")
        # Each replica following it.
        if failover is not None:
            shown = ", ".join("never" if u is None else f"{u - killed:.2f} s ({u - promoted:+.2f} s after the promotion)" for u in up_at)
        else:
            shown = ", ".join("never" if u is None else f"{u - killed:.2f} s" for u in up_at)
        s.check("feedproxy_redis_up 1 again on the new primary, per replica, after the kill",
                shown, failover is not None and all(u is not None and u - killed <= failover + 2 for u in up_at),
                f"each within the failover time + 2 s = {failover + 2:.2f} s" if failover is not None else "a failover")
        rs = [r for _, _, r in replies]
        bad = [(p, r.status, r.error) for _, p, r in replies if r.status >= 500 or r.status == 0]
        s.check(f"responses >= 500 (or connection errors) of {len(rs)} under mixed load through nginx (primary killed at {kill_at:.0f} s)",
                len(bad), not bad and rs, "0")
        s.note(f"mixed-load statuses: {fmt_statuses(rs)}; replicas saw Redis down: {seen_down}")
        if bad:
            s.note(f"first failures: {bad[:5]}")
        failovers = [m.get("feedproxy_redis_failovers_total") for m in final]
        s.check("feedproxy_redis_failovers_total per replica", " / ".join("absent" if f is None else f"{f:.0f}" for f in failovers),
                all(f == 1 for f in failovers), "each exactly 1: one primary change, counted once whichever path found it")
        s.note("feedproxy_redis_reconnects_total per replica: "
               + " / ".join(f"{m.get('feedproxy_redis_reconnects_total', 'absent')}" for m in final))
        # L2 writes resume on the new primary.
        stored_end = sum(m.get('feedproxy_l2_events_total{event="stored"}', 0) for m in final)
        s.check("L2 keys on the new primary (redis-cli --scan --pattern 'feedproxy:*') at the promotion -> at the end",
                f"{topo.keys_at_promotion} -> {keys_end}", topo.keys_at_promotion is not None and keys_end > topo.keys_at_promotion, "grows")
        s.check("L2 'stored' events after every replica was back", f"+{stored_end - stored_at_up:.0f}", stored_end > stored_at_up, "> 0")
        # One upstream budget: shared decisions after the failover, and once back no fallback
        # while Redis answers: a fallback decision only for a rate command that failed (on a
        # loaded machine one can still miss its REDIS_TIMEOUT_MS deadline), and the iTunes
        # fetches within the budget.
        after = []
        for i in range(REPLICAS):
            shared = mode_total(modes_end[i], "shared") - mode_total(modes_at_up[i], "shared")
            fb = mode_total(modes_end[i], "fallback") - mode_total(modes_at_up[i], "fallback")
            failed = rate_failed_end[i] - rate_failed_at_up[i]
            after.append((shared, fb, failed))
        s.check("rate decisions (itunes) per replica after every replica was back: shared / fallback (rate commands failed)",
                "; ".join(f"replica{i + 1} +{a} / +{b} ({f})" for i, (a, b, f) in enumerate(after)),
                all(a > 0 and b <= f for a, b, f in after), "each shared > 0, fallback only for a failed rate command")
        s.note("rate decisions (itunes) at the end: " + "; ".join(f"replica{i + 1} {modes_end[i]}" for i in range(REPLICAS)))
        burst, rate = math.ceil(per_min / 6), per_min / 60
        fb_burst, fb_rate = math.ceil(per_min / REPLICAS / 6), per_min / REPLICAS / 60
        t_after, t_total, outage = ended - all_up, ended - started, all_up - killed
        limit_after = burst + rate * t_after + 1
        fetched_after = itunes_end - itunes_at_up
        s.check(f"upstream itunes fetches after the failover ({t_after:.1f} s, {per_min}/min: burst {burst})", fetched_after,
                fetched_after <= limit_after, f"<= {burst} + {rate:g}/s x {t_after:.1f} s + 1 = {limit_after:.1f} (one budget, not {REPLICAS})")
        limit_total = burst + rate * t_total + REPLICAS * (fb_burst + fb_rate * outage) + 1
        fetched_total = itunes_end - itunes_start
        s.check(f"upstream itunes fetches over the whole load ({t_total:.1f} s, {outage:.1f} s of it without Redis)", fetched_total,
                fetched_total <= limit_total,
                f"<= {burst} + {rate:g}/s x {t_total:.1f} s + {REPLICAS} fallback shares ({fb_burst} + {fb_rate:.2f}/s x {outage:.1f} s) + 1 = {limit_total:.1f}")
        wrong = [r for _, _, r in probes if r.status != 200 and not rate_limited(r)]
        s.check(f"budget probe answers other than 200 or 503 upstream_rate_limited with Retry-After ({len(probes)} distinct searches, "
                "about 10/s round-robin over the replicas)", len(wrong), not wrong and probes, "0")
        s.note(f"budget probe statuses: {fmt_statuses([r for _, _, r in probes])}")
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=20)
        c.stop_replicas()  # the next scenario starts them on the plain Redis
        topo.stop()


def l2_statuses(port, contains=""):
    """L2 entries (hashes under feedproxy:, with the status in field 's') -> status."""
    out, cursor = {}, "0"
    while True:
        cursor, keys = resp(port, "SCAN", cursor, "MATCH", "feedproxy:*", "COUNT", 1000)
        for k in keys:
            if contains in k and resp(port, "TYPE", k) == "hash":
                out[k] = resp(port, "HGET", k, "s")
        if cursor == "0":
            return out


def s9_4xx_keeps_good(c, s):
    """A 404 from the upstream while L2 holds a good answer: every replica keeps serving
    the good 200, and the L2 entry stays a 200."""
    ttl = 1
    env = dict(HIGH_LIMITS, CACHE_TTL_PODCASTS=str(ttl), CACHE_NEGATIVE_TTL="5")
    c.restart(env)
    term = "swift"
    path = f"/podcasts?term={term}"
    good = get(c.ports[0], path)
    filled = time.monotonic()
    etag = good.headers.get("etag")
    # The tier is written off the request's path, a few milliseconds after the answer.
    wait_until(lambda: len(l2_statuses(c.redis_port, term)) == 1, 2)
    entries = l2_statuses(c.redis_port, term)
    s.check("the answer that fills L2 (replica1) / L2 entries for the key", f"{good.status}, ETag {etag} / {entries}",
            good.status == 200 and etag and list(entries.values()) == ["200"], "200 with an ETag / one entry, status 200")
    if good.status != 200 or len(entries) != 1:
        return
    r = get(c.upstream_port, "/__fixture/mode/notfound", method="POST")
    if r.status != 204:
        s.check("fixture upstream mode 'notfound' (every feed request answered 404)", f"{r.status} {r.body[:80]!r}", False,
                "204 (FixtureUpstream.Mode.notfound)")
        return
    time.sleep(max(0, filled + ttl + 0.3 - time.monotonic()))  # the entry is stale now, still within SWR and SIE
    before = c.counts().get("itunes", 0)
    forced = get(c.ports[1], path, headers={"Cache-Control": "no-cache"})
    fetched = c.counts().get("itunes", 0) - before
    s.check("upstream fetches for a no-cache request on replica2 once the TTL had passed (the upstream answers 404)",
            fetched, fetched >= 1, ">= 1")
    s.check("replica2's answer to that request (stale-if-error from L2, as from L1)",
            f"{forced.status} (X-Cache {forced.headers.get('x-cache', '-')})", forced.status == 200, "200")
    time.sleep(0.3)  # its publication, if any, has landed
    for rnd in (1, 2):
        answers = [get(p, path) for p in c.ports] + [get(c.nginx_port, path)]
        shown = ", ".join(f"{r.status} {r.headers.get('x-cache', '-')}" for r in answers)
        s.check(f"round {rnd}: replica1..3 and nginx for the key, after the 404 (first ask for replica3)" if rnd == 1
                else f"round {rnd}, 1 s later (background refreshes, answered 404, done)", shown,
                all(r.status == 200 and r.headers.get("etag") == etag and r.body == good.body for r in answers),
                "all 200 with the original ETag and body")
        entries = l2_statuses(c.redis_port, term)
        s.check(f"L2 entry for the key after round {rnd}", entries, list(entries.values()) == ["200"], "one entry, status 200")
        time.sleep(1.0)
    # A replica with an empty local cache now: only L2 can answer it.
    c.stop("replica3")
    c.start_replica(2, env, None)
    ready = wait_until(lambda: get(c.ports[2], "/healthz", timeout=2).status == 200, 20) \
        and wait_until(lambda: c.metric(2, "feedproxy_redis_up") == 1, 10)
    cold = get(c.ports[2], path)
    s.check(f"restarted (cold) replica3 for the key, {time.monotonic() - filled:.1f} s after the fill",
            f"{cold.status} {cold.headers.get('x-cache', '-')}", ready and cold.status == 200 and cold.headers.get("etag") == etag,
            "200 with the original ETag")
    c.set_mode("normal")


def l2_entry(port, contains):
    """The one L2 entry (hash `<prefix>:<fingerprint>:c:<cache key>`) whose key contains
    `contains`: (key, {'t': stored ms, 'f': fetch start ms, 's': status, 'b': body}), both
    times on Redis' clock; (None, None) when there is none (or more than one)."""
    found, cursor = [], "0"
    while True:
        cursor, keys = resp(port, "SCAN", cursor, "MATCH", "feedproxy:*:c:*", "COUNT", 1000)
        found += [k for k in keys if contains in k]
        if cursor == "0":
            break
    if len(found) != 1:
        return None, None
    t, f, st, b = resp(port, "HMGET", found[0], "t", "f", "s", "b")
    return found[0], {"t": int(t) if t else None, "f": int(f) if f else None, "s": st, "b": b}


def redis_ms(port):
    """Redis' clock (TIME) in ms: the clock the put script stamps 't' and 'f' with."""
    sec, usec = resp(port, "TIME")
    return int(sec) * 1000 + int(usec) // 1000


def upstream_attempts(c, i, source="itunes"):
    """feedproxy_upstream_requests_total for one source on replica i, all outcomes
    (every attempt, retries included)."""
    return int(sum(v for k, v in c.metrics(i).items()
                   if k.startswith("feedproxy_upstream_requests_total{") and f'source="{source}"' in k))


def l2_event(c, i, event):
    return int(c.metrics(i).get(f'feedproxy_l2_events_total{{event="{event}"}}', 0))


def access_cache(c, i, request_id):
    """The access log's `cache` field (HIT, MISS, STALE, L2_HIT, L2_WAIT) for one request."""
    for line in c.access_log(i):
        if line.get("request_id") == request_id:
            return line.get("cache", "-")
    return None


def s10_cold_replica_stale_l2(c, s):
    """A replica that never saw a key while L2 holds a stale answer for it: it answers
    from L2 at once (X-Cache STALE) and refreshes the key once, in the background under
    the fetch lock; afterwards the L2 entry is fresh for every replica."""
    ttl = 2
    # The background refresh waits 3 s for the slowed upstream: a budget that outlasts it
    # (with the script's 2 s it would time out and leave L2 stale).
    env = dict(HIGH_LIMITS, CACHE_TTL_PODCASTS=str(ttl), CACHE_SWR_FACTOR="100", UPSTREAM_TIMEOUT_MS="5000")
    c.restart(env)
    term = "swift"
    path = f"/podcasts?term={term}"  # Redis flushed and replicas restarted: only replica1 ever asks for it below
    n0 = c.counts().get("itunes", 0)
    fill = get(c.ports[0], path)
    filled = time.monotonic()
    etag = fill.headers.get("etag")
    # The put runs off the request's path: it lands a few ms after the answer.
    wait_until(lambda: l2_entry(c.redis_port, term)[1] is not None, 2, 0.01)
    key, entry = l2_entry(c.redis_port, term)
    s.check("the answer that fills L2 (replica1) / upstream fetches / L2 entry for the key",
            f"{fill.status} {fill.headers.get('x-cache', '-')}, ETag {etag} / {c.counts().get('itunes', 0) - n0} / "
            + (f"status {entry['s']}, {len(entry['b'] or '')} B" if entry else "none"),
            fill.status == 200 and etag and entry and entry["s"] == "200", "200 MISS with an ETag / 1 / one entry, status 200")
    if not entry:
        return
    t_fill = entry["t"]
    time.sleep(max(0, filled + ttl + 0.3 - time.monotonic()))  # stale now, well inside the SWR window (100 x TTL)
    c.set_mode("slow")
    n1 = c.counts().get("itunes", 0)
    stale_served = l2_event(c, 2, "stale_served")
    r3 = get(c.ports[2], path, headers={"X-Request-ID": "s10-cold-replica3"}, timeout=10)
    answered = time.monotonic()
    age = r3.headers.get("age", "-")
    s.check(f"replica3 (never asked for the key) {time.monotonic() - filled:.1f} s after the fill, TTL {ttl} s, upstream slowed to 3 s",
            f"{r3.status} X-Cache {r3.headers.get('x-cache', '-')} in {r3.ms:.0f} ms, Age {age}, "
            + ("the fill's ETag and body" if r3.headers.get("etag") == etag and r3.body == fill.body else f"ETag {r3.headers.get('etag')}"),
            r3.status == 200 and r3.headers.get("x-cache") == "STALE" and r3.ms < 500 and r3.headers.get("etag") == etag and r3.body == fill.body,
            "200 STALE within 500 ms, the fill's ETag and body")
    arrived = wait_until(lambda: c.counts().get("itunes", 0) - n1 >= 1, 2, 0.02)
    seen = time.monotonic()
    c.set_mode("normal")  # the refresh already at the fixture still takes its 3 s
    s.check("the background refresh reaching the upstream after replica3's answer", f"{(seen - answered) * 1000:.0f} ms" if arrived else "never",
            arrived, "within 2 s")
    refreshed = wait_until(lambda: (l2_entry(c.redis_port, term)[1] or {}).get("t", 0) > t_fill, 5, 0.02)
    now_redis = redis_ms(c.redis_port)
    _, after = l2_entry(c.redis_port, term)
    r2 = get(c.ports[1], path, headers={"X-Request-ID": "s10-after-replica2"})
    time.sleep(0.3)  # access log flushed; any further fetch has landed
    fetched = c.counts().get("itunes", 0) - n1
    s.check("L2 entry after the refresh: stored ('t', Redis clock) vs the fill, age at once",
            f"+{after['t'] - t_fill} ms, age {now_redis - after['t']} ms, status {after['s']}" if refreshed and after else "not refreshed in 5 s",
            refreshed and after and after["s"] == "200" and now_redis - after["t"] < ttl * 1000, f"newer, age < TTL ({ttl * 1000} ms), 200")
    cache2 = access_cache(c, 1, "s10-after-replica2")
    s.check("replica2 (no local copy) right after the refresh",
            f"{r2.status} X-Cache {r2.headers.get('x-cache', '-')} (access log {cache2}), Age {r2.headers.get('age', '-')}",
            r2.status == 200 and r2.headers.get("x-cache") == "HIT" and cache2 == "L2_HIT", "200 HIT, L2_HIT in its access log")
    s.check("upstream itunes fetches from replica3's request to the end (fixture /__fixture/counts)", fetched, fetched == 1, "exactly 1")
    s.check("replica3 feedproxy_l2_events_total{event=\"stale_served\"}", f"+{l2_event(c, 2, 'stale_served') - stale_served}",
            l2_event(c, 2, "stale_served") - stale_served == 1, "+1")
    s.note("the fixture upstream's answers are byte-identical for one key (FixtureState serves the recorded files), so the refreshed "
           f"entry's ETag is the fill's ({'same' if r2.headers.get('etag') == etag else 'differs: ' + str(r2.headers.get('etag'))}); "
           "freshness is shown by the entry's stored time 't' on Redis' clock and by replica2's L2_HIT (a stale entry would be STALE)")


def s11_holder_fails(c, s):
    """The lock holder's fetch fails (the upstream answers 503): its waiters on the other
    replicas answer the same error through the tier's failure marker instead of fetching in
    turn; one fetch (the holder's attempts) in total, every answer within the budget."""
    c.restart(HIGH_LIMITS)
    path = f"/podcasts?term=holderfails{int(time.time())}"
    c.set_mode("fail")
    n0 = c.counts().get("itunes", 0)
    attempts0 = [upstream_attempts(c, i) for i in range(REPLICAS)]
    conns = []
    for port in c.ports:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.connect()
        conns.append(conn)
    out = [None] * REPLICAS
    gate = threading.Barrier(2)

    def ask(i, wait=False):
        if wait:
            gate.wait()
        out[i] = get(c.ports[i], path, headers={"X-Request-ID": f"s11-replica{i + 1}"}, conn=conns[i])

    first = threading.Thread(target=ask, args=(0,))
    others = [threading.Thread(target=ask, args=(i, True)) for i in (1, 2)]
    t0 = time.monotonic()
    first.start()
    time.sleep(0.1)
    for t in others:
        t.start()
    for t in [first] + others:
        t.join(timeout=15)
    for conn in conns:
        conn.close()
    markers = c.redis("--scan", "--pattern", "feedproxy:*:e:*holderfails*").split()
    marker_pttl = c.redis("PTTL", markers[0]) if markers else "-"
    time.sleep(0.3)
    fetched = c.counts().get("itunes", 0) - n0
    attempts = [upstream_attempts(c, i) - attempts0[i] for i in range(REPLICAS)]
    c.set_mode("normal")
    limit = UPSTREAM_TIMEOUT_MS + 500
    codes = []
    for r in out:
        try:
            codes.append(json.loads(r.body)["error"]["code"])
        except (ValueError, KeyError, TypeError, AttributeError):
            codes.append(None)
    shown = "; ".join(f"replica{i + 1} {r.status} {codes[i]} in {r.ms:.0f} ms (sent at +{(r.start - t0) * 1000:.0f} ms)"
                      for i, r in enumerate(out) if r is not None)
    s.check("answers for one cold key, upstream answering 503: replica1, then 100 ms later replica2 and replica3 at once "
            "(own connections, client-side)", shown,
            all(r is not None and r.ms <= limit for r in out), f"each within UPSTREAM_TIMEOUT_MS + 500 = {limit} ms")
    s.check("their statuses / error codes", f"{[r.status for r in out]} / {codes}",
            all(r is not None and r.status == 502 for r in out) and len(set(codes)) == 1 and codes[0], "all 502, one code")
    s.check("upstream itunes requests for the key (fixture counts) / attempts per replica (feedproxy_upstream_requests_total)",
            f"{fetched} / " + " / ".join(map(str, attempts)),
            1 <= fetched <= 2 and attempts[0] == fetched and attempts[1] == 0 and attempts[2] == 0,
            "the holder's attempts only: 1 or 2 (one retry on 503 within the budget), replica1 all of them, replica2 and replica3 0")
    s.note("the upstream client retries a GET once on 502/503/504 (after a 100-300 ms backoff, when the budget allows), so the "
           "holder alone may send 2 requests; any waiter fetching in turn would add its own attempts")
    s.note(f"failure marker in the tier right after the answers: {len(markers)} key(s), PTTL {marker_pttl} ms (failureTTL 2 s)")
    s.note("L2 events: " + "; ".join(f"replica{i + 1} {shared_events(c, i)}" for i in range(REPLICAS)))


def s12_older_fetch_late(c, s):
    """Two no-cache fetches of one key: replica1's starts first against a slowed upstream,
    replica2's starts later and finishes at once; when replica1's older answer finally
    arrives, the L2 entry stays replica2's (newer wins by fetch start on Redis' clock)."""
    # replica1's fetch waits 3 s for the fixture: a budget that outlasts it, or it would
    # time out and never try to store.
    env = dict(HIGH_LIMITS, UPSTREAM_TIMEOUT_MS="5000")
    c.restart(env)
    term = "swift"
    path = f"/podcasts?term={term}"
    nocache = {"Cache-Control": "no-cache"}
    stored0 = [l2_event(c, i, "stored") for i in range(REPLICAS)]
    n0 = c.counts().get("itunes", 0)
    c.set_mode("slow")
    out = {}
    t_a = redis_ms(c.redis_port)
    older = threading.Thread(target=lambda: out.update(r1=get(c.ports[0], path, headers=nocache, timeout=10)))
    older.start()
    at_fixture = wait_until(lambda: c.counts().get("itunes", 0) - n0 >= 1, 2, 0.01)
    c.set_mode("normal")  # replica1's request is already held by the fixture for 3 s
    time.sleep(0.5)       # fetch starts half a second apart: far more than any clock or rounding error
    t_b = redis_ms(c.redis_port)
    r2 = get(c.ports[1], path, headers=nocache)
    r2_done = redis_ms(c.redis_port)
    wait_until(lambda: (l2_entry(c.redis_port, term)[1] or {}).get("t") is not None, 2, 0.01)
    key, newer = l2_entry(c.redis_port, term)
    older.join(timeout=15)
    r1 = out.get("r1")
    r1_done = redis_ms(c.redis_port)
    time.sleep(0.5)  # replica1's put (off the request's path) has landed, or been refused
    _, final = l2_entry(c.redis_port, term)
    r3 = get(c.ports[2], path, headers={"X-Request-ID": "s12-replica3"})
    time.sleep(0.3)
    cache3 = access_cache(c, 2, "s12-replica3")
    fetched = c.counts().get("itunes", 0) - n0
    stored = [l2_event(c, i, "stored") - stored0[i] for i in range(REPLICAS)]
    s.check("replica1's no-cache fetch (started first, upstream slowed to 3 s) / replica2's (started 0.5 s after the fixture had replica1's)",
            (f"{r1.status} {r1.headers.get('x-cache', '-')} in {r1.ms:.0f} ms" if r1 else "no answer")
            + f" / {r2.status} {r2.headers.get('x-cache', '-')} in {r2.ms:.0f} ms",
            at_fixture and r1 and r1.status == 200 and r1.ms >= 2900 and r2.status == 200 and r2.ms < 1000,
            "200 MISS after about 3 s / 200 MISS at once (the older one arrives last)")
    s.check("upstream itunes fetches for the key", fetched, fetched == 2, "2 (one each)")
    if not newer or not final:
        s.check("L2 entry for the key", f"after replica2 {newer}, at the end {final}", False, "present")
        return
    s.check("L2 fetch start 'f' / stored 't' after replica2's fetch (Redis clock, ms after replica1's request was sent)",
            f"+{newer['f'] - t_a} / +{newer['t'] - t_a} (replica2 sent at +{t_b - t_a}, answered by +{r2_done - t_a})",
            t_b - 50 <= newer["f"] <= r2_done and newer["t"] <= r2_done + 200,
            "'f' at replica2's send (>= +500), 't' just after its answer (the put runs off the request's path: within 200 ms)")
    s.check("L2 'f' / 't' after replica1's older answer arrived (its fetch started near +0, answered at "
            f"+{r1_done - t_a})", f"+{final['f'] - t_a} / +{final['t'] - t_a}, body {'unchanged' if final['b'] == newer['b'] else 'changed'}",
            (final["f"], final["t"]) == (newer["f"], newer["t"]) and final["b"] == newer["b"], "unchanged: replica2's entry stays")
    s.check("feedproxy_l2_events_total{event=\"stored\"} per replica (a refused put counts none)", " / ".join(f"+{n}" for n in stored),
            stored[0] == 0 and stored[1] == 1, "replica1 +0, replica2 +1")
    s.check("replica3 for the key afterwards", f"{r3.status} X-Cache {r3.headers.get('x-cache', '-')} (access log {cache3}), "
            + ("replica2's ETag" if r3.headers.get("etag") == r2.headers.get("etag") else f"ETag {r3.headers.get('etag')}"),
            r3.status == 200 and cache3 == "L2_HIT" and r3.headers.get("etag") == r2.headers.get("etag"), "200 L2_HIT with replica2's ETag")
    s.note("the two fetches' answers are byte-identical (FixtureState serves the recorded search; ETags "
           f"{'equal' if r1 and r1.headers.get('etag') == r2.headers.get('etag') else 'differ'}), so ETag and body cannot tell them apart: "
           "the entry's fields 'f' (fetch start) and 't' (stored) on Redis' clock can, against Redis TIME read before each request, "
           "and the stored counters say whose put Redis took")


class EventStream:
    """One /episodes/events stream read raw: its events, comments and end. Asked in HTTP/1.0,
    so nginx sends the body as it is, not in chunks a read could split an event across."""

    def __init__(self, port, path):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.sock.sendall(f"GET {path} HTTP/1.0\r\nHost: x\r\n\r\n".encode())
        self.buf = b""
        self.closed = False
        while b"\r\n\r\n" not in self.buf:
            self._read()
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        self.status = int(head.split(b" ")[1])
        self.head = head.decode("latin-1").lower()

    def _read(self):
        data = self.sock.recv(65536)
        if not data:
            self.closed = True
            raise EOFError
        self.buf += data

    def next_event(self, timeout):
        """The next `event: episodes` block's data (JSON), or None by the deadline; comments counted."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            m = re.search(rb"event: episodes\ndata: (.*?)\n", self.buf)
            if m:
                self.buf = self.buf[m.end():]
                return json.loads(m.group(1))
            self.sock.settimeout(max(0.05, end - time.monotonic()))
            try:
                self._read()
            except socket.timeout:
                pass
            except EOFError:
                return None
        return None

    def hold(self, seconds):
        """Reads for `seconds`: the comments that came, and whether the stream was ended."""
        end = time.monotonic() + seconds
        comments = 0
        while time.monotonic() < end and not self.closed:
            self.sock.settimeout(max(0.05, end - time.monotonic()))
            try:
                before = self.buf.count(b": keep-alive")
                self._read()
                comments += self.buf.count(b": keep-alive") - before
            except socket.timeout:
                pass
            except EOFError:
                break
        return comments, self.closed


def s13_event_stream(c, s):
    """An app's event stream through nginx; a publisher's ping through nginx (whichever
    replica takes it) reaches it; the stream outlives nginx's 15 s read timeout of the other
    routes on heartbeats."""
    c.restart(HIGH_LIMITS)
    podcast = 1590000061
    stream = EventStream(c.nginx_port, f"/episodes/events?podcasts={podcast}&limit=5")
    first = stream.next_event(15)
    s.check("the stream through nginx: status, type, first event",
            f"{stream.status} {'text/event-stream' if 'text/event-stream' in stream.head else 'other type'}, "
            + (f"{len(first.get('items', []))} episodes, podcast {first['podcasts'][0]['status']}" if first else "no event"),
            stream.status == 200 and "text/event-stream" in stream.head and first and first["podcasts"][0]["status"] == "ok",
            "200 text/event-stream, the newest episodes, ok")
    downloads = c.counts().get("rss", 0)
    get(c.upstream_port, f"/__fixture/publish/{podcast}?at={int(time.time())}", method="POST")
    pings = [get(c.nginx_port, f"/hub/notify?id={podcast}") for _ in range(1)]
    started = time.monotonic()
    second = stream.next_event(10)
    took = (time.monotonic() - started) * 1000
    s.check("a ping through nginx, then the stream's next event",
            f"ping {pings[0].status}, event {'with ' + str(len(second.get('items', []))) + ' episode(s)' if second else 'none'} in {took:.0f} ms",
            pings[0].status == 202 and second and len(second.get("items", [])) == 1, "202, one new episode")
    s.check("feed downloads for the ping (all replicas)", c.counts().get("rss", 0) - downloads, c.counts().get("rss", 0) - downloads == 1, "1")
    comments, ended = stream.hold(20)
    s.check("the idle stream held 20 s through nginx (its other routes time out at 15 s)",
            f"{comments} heartbeats, {'ended' if ended else 'open'}", comments >= 1 and not ended, ">= 1 heartbeat, still open")
    stream.sock.close()


SCENARIOS = [
    (1, "one upstream fetch per key across replicas", s1_single_flight),
    (2, "one shared rate budget", s2_shared_budget),
    (3, "Redis killed under load and restarted empty", s3_redis_killed),
    (4, "Redis stopped (SIGSTOP) for 3 s", s4_redis_stopped),
    (5, "Redis down from the start: fallback budget per replica", s5_redis_absent),
    (6, "fetch-lock holder killed mid-fetch", s6_lock_holder_killed),
    (7, "Redis at maxmemory evicts (volatile-lru)", s7_eviction),
    (8, "Sentinel failover: primary killed under load", s8_sentinel_failover),
    (9, "a 4xx from the upstream while L2 holds a good answer", s9_4xx_keeps_good),
    (10, "a cold replica and a stale L2 entry", s10_cold_replica_stale_l2),
    (11, "the lock holder's fetch fails", s11_holder_fails),
    (12, "an older fetch arriving after a newer one", s12_older_fetch_late),
    (13, "an event stream through nginx, a ping on any replica", s13_event_stream),
]


def main():
    only = {int(a) for a in sys.argv[1:] if a.isdigit()}
    for tool in (BIN, NGINX, REDIS_SERVER, REDIS_CLI):
        if not os.path.exists(tool):
            log(f"scaleout: missing {tool}")
            return 2
    HIGH_LIMITS.update({name: "100000" for name in rate_limit_variables()})
    UPSTREAM_OF.update(sources_by_path())
    tmp = tempfile.mkdtemp(prefix="feedproxy-scaleout-")
    c = Cluster(tmp)

    def on_signal(signum, _frame):
        c.stop_all()
        sys.exit(128 + signum)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    t0 = time.monotonic()
    results = []
    try:
        c.start_redis()
        c.start_upstream()
        c.start_replicas(HIGH_LIMITS)
        c.start_nginx()
        log(f"scaleout: redis :{c.redis_port}, upstream {c.upstream}, replicas :{', :'.join(map(str, c.ports))}, nginx :{c.nginx_port}; "
            f"logs in {tmp}")
        for number, title, fn in SCENARIOS:
            if only and number not in only:
                continue
            s = Scenario(number, title)
            log(f"\n[{number}] {title}")
            started = time.monotonic()
            try:
                if "redis" not in c.procs:
                    c.start_redis()
                for i in range(REPLICAS):
                    if f"replica{i + 1}" not in c.procs:
                        c.start_replica(i, HIGH_LIMITS, None)
                fn(c, s)
            except Exception as e:
                import traceback
                traceback.print_exc()
                s.check("scenario ran", f"{type(e).__name__}: {e}", False, "no error")
            finally:
                try:
                    c.set_mode("normal")
                except Exception:
                    pass
            s.seconds = time.monotonic() - started
            if not s.passed:
                c.tails()
            results.append(s)
    finally:
        c.stop_all()
    total = time.monotonic() - t0
    log("\n=== scale-out summary " + "=" * 60)
    for s in results:
        log(f"[{s.number}] {'PASS' if s.passed else 'FAIL'}  {s.title}  ({s.seconds:.1f} s)")
        for label, value, ok, expect in s.checks:
            log(f"      {'ok  ' if ok else 'FAIL'} {label}: {value}   (expected {expect})")
        for n in s.notes:
            log(f"      ..   {n}")
    passed = sum(s.passed for s in results)
    failed = len(results) - passed
    # The failed checks again, last: a CI log cut to its tail still names them.
    for s in results:
        for label, value, ok, expect in s.checks:
            if not ok:
                log(f"scaleout: FAIL [{s.number}] {label}: {value}   (expected {expect})")
    log(f"scaleout: {passed} passed, {failed} failed ({total:.0f} s)")
    if failed == 0:
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        log(f"scaleout: logs kept in {tmp}")
    return 0 if failed == 0 and results else 1


if __name__ == "__main__":
    sys.exit(main())
