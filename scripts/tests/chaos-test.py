#!/usr/bin/env python3
"""make chaos-test: apps that follow docs/API.md word for word, while replicas are killed,
stopped and redeployed and Redis restarts empty, must never miss an episode and never be
reset (the sync-token promise, issue 67).

Three FeedProxy replicas share one Redis (no persistence) and read a loopback hosting
platform (scripts/lib/publisher.py: iTunes lookup on 127.0.0.2, feeds on 127.0.0.3), with
nginx in front as the load balancer (scripts/tests/scaleout-test.py's configuration; with
--balancer apps, or when nginx is missing, each app talks to a replica itself and moves to
another one after a failure, as a balancer would route it). The replicas' settings are
scripts/bench/storm.py's (its Cluster starts them), CACHE_TTL_EPISODES at its production
default unless --ttl says otherwise, so an episode reaches the apps through the publisher's
ping, not through an expired cache.

  apps       --apps apps (threads, each from its own loopback address), each following
             --per-app MIN-MAX of the --podcasts podcasts (every podcast followed by one at
             least). Each does what docs/API.md says: a first refresh `POST /episodes`
             (`page.next` followed by posting its query, `pending` podcasts asked again after
             `Retry-After` with the token, the token kept), then `GET /episodes/events` with
             `sync=<token>`, read as EventSource reads it (the spec's parser: an event's `id`
             becomes the last event id when the event is dispatched); on any end of the stream
             it reconnects after `retry` ms with `Last-Event-ID`, to any replica; a 400 or
             410 for a token is recovered as the docs say (refresh with an empty `sync=`, follow
             `page.next` to the end, listen from the last token); each answer or event is
             applied as the docs say (per podcast, the ids `removed` names dropped, then each
             item kept by its id). Each app records every episode id it holds per podcast,
             every `resync: true`, and every episode given again without `resync` and not
             named by `changed` (a position moved back: a silent reset).
  publisher  every --interval s a new episode on a random podcast (dated now), and its ping
             on a random replica, `POST /hub/notify` alternately by `id=` and by `url=` (the
             feed URL as the platform serves it); a ping refused at the connection goes to
             another replica (as through a balancer); a 404 or 429 is the service's answer
             and is not retried (429 ping_too_soon promises a read once 10 s have passed).
  faults     in sequence, --gap-s apart, while publishing: replica1 SIGKILLed and started
             again (same port and settings); Redis SIGKILLed and started empty on its port;
             replica2 SIGSTOPped for --stop-s, then SIGCONT; a rolling deploy (each replica
             SIGTERMed and started again with FEED_MAX_BODY_BYTES raised, one after the other).
             --faults picks some (kill,redis,stop,deploy): the deploy's resyncs send every
             podcast whole, which hides what the earlier faults lost; without it, it shows.
  count      after the last publish, up to --final-wait-s (sooner once every app has
             everything): every (app, episode) pair owed (an episode published on a podcast
             the app follows) received or missing, by the phase it was published in; apps
             given `resync: true` after their first sync (loud resets) and apps given an
             episode again without it (silent resets), by phase, and by the replica whose
             stream gave them; pairs given late (--late-s) or only inside a resync; each
             missing episode's ping(s) (with the replicas' log lines of it, by X-Request-ID)
             and the platform's log of that feed's requests after its publish, by replica;
             pings that read nothing (404 feed_unknown) and what became of their episodes.
             Each app's events in brief are in the run's directory (apps/appN.jsonl), with
             the replicas' logs and every feed request (publisher-log.json).

Fails (exit 1) when a pair is missing, when an app was reset silently, or loudly outside the
phase where Redis restarted empty (a replica kill, a stop or a deploy costs no resync; docs/API.md
allows one where a Redis restarted empty without persistence lost a history, counted apart). A summary on stdout, everything
with --json. Bounded: about 50 s, each wait with a timeout, the whole run stopped after
--max-seconds; every process it starts is stopped by PID in a finally.

Usage: python3 scripts/tests/chaos-test.py FEEDPROXY_BIN [--balancer nginx|apps] [--faults kill,redis,stop,deploy]
                                           [--json report.json] [--keep-logs]
Python 3.11 standard library only; needs redis-server and redis-cli (and nginx for the balancer).
"""
import argparse
import concurrent.futures as cf
import http.client
import importlib.util
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts", "bench"))
sys.path.insert(0, os.path.join(ROOT, "scripts", "lib"))
import storm  # noqa: E402  (its Cluster: the publisher, Redis and the replicas as storm-test starts them)
from publisher import BASE_ID  # noqa: E402

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
PUBLISHER_ADDR = "127.0.0.9"  # the pings' source address
log = storm.log


def load_scaleout():
    """scripts/tests/scaleout-test.py as a module (its nginx configuration, made for three replicas)."""
    spec = importlib.util.spec_from_file_location("scaleout_test", os.path.join(ROOT, "scripts", "tests", "scaleout-test.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def pct(values, p):
    return storm.pct(values, p)


# ---------------------------------------------------------------- processes


class Chaos(storm.Cluster):
    """storm.py's cluster, with replicas and Redis started, killed and stopped one at a time."""

    def __init__(self, args, tmp):
        super().__init__(args, tmp)
        self.nginx_port = storm.free_port()
        self.overrides = [{} for _ in self.ports]
        self.replica_pids = {}  # name -> pid of the running process (for the feed-request attribution)
        self.sampler = None  # storm.Sampler: which replica holds which connection to the feed host
        self.events = []  # (t, what)
        self.t0 = time.monotonic()
        self.t0_wall = time.time()  # the same moment on the wall clock (the platform's request log)

    def note(self, what):
        t = round(time.monotonic() - self.t0, 2)
        self.events.append((t, what))
        log(f"  [{t:6.2f} s] {what}")

    # what scaleout-test.py's start_nginx expects of its cluster
    def spawn(self, name, argv, env=None, stdout_path=None):
        return self.procs.spawn(name, argv, env=env)

    def start_replica(self, i, overrides=None):
        if overrides is not None:
            self.overrides[i] = dict(overrides)
        over = self.overrides[i]
        env = self.replica_env(dict(over, PORT=str(self.ports[i])))
        with open(self.replica_log(i), "ab") as f:
            f.write(f"--- start {time.strftime('%H:%M:%S')} {' '.join(f'{k}={v}' for k, v in sorted(over.items()))}\n".encode())
        with open(self.replica_log(i), "ab") as out:
            p = self.procs.spawn(f"replica{i + 1}", [self.args.binary], env=env, stdout=out)
        self.replica_pids[f"replica{i + 1}"] = p.pid
        self.pids_changed()
        return p

    def pids_changed(self):
        if self.sampler is not None:
            self.sampler.pids = dict(self.replica_pids)  # a new dict: the sampler's thread iterates the one it holds

    def wait_replica(self, i, timeout=20, redis=True):
        port = self.ports[i]
        if not storm.wait_until(lambda: storm.http_get(("127.0.0.1", 0), port, "/healthz", timeout=2)[0] == 200, timeout):
            raise RuntimeError(f"replica {i + 1} did not start (log {self.replica_log(i)})")
        if redis and not storm.wait_until(lambda: self.metrics(i).get("feedproxy_redis_up") == 1, 10):
            raise RuntimeError(f"replica {i + 1} did not connect to Redis")

    def signal_replica(self, i, sig):
        p = self.procs.procs[f"replica{i + 1}"]
        os.kill(p.pid, sig)

    def kill_replica(self, i):
        name = f"replica{i + 1}"
        p = self.procs.procs.pop(name)
        os.kill(p.pid, signal.SIGKILL)
        p.wait(timeout=10)
        self.replica_pids.pop(name, None)
        self.pids_changed()

    def term_replica(self, i, grace=15):
        """SIGTERM (a deploy's stop), then SIGKILL after `grace` s; seconds until it exited."""
        exited = self.stop_replica(i, grace)
        self.replica_pids.pop(f"replica{i + 1}", None)
        self.pids_changed()
        return exited

    def kill_redis(self):
        p = self.procs.procs.pop("redis")
        os.kill(p.pid, signal.SIGKILL)
        p.wait(timeout=10)

    def redis_up_everywhere(self, timeout):
        return storm.wait_until(lambda: all(self.metrics(i).get("feedproxy_redis_up") == 1 for i in range(len(self.ports))), timeout, 0.1)


# ---------------------------------------------------------------- apps


class Stopped(Exception):
    pass


class App:
    """One podcast app: a first refresh by docs/API.md, then its library's event stream,
    reconnected as EventSource reconnects."""

    def __init__(self, n, addr, library, run):
        self.n, self.addr, self.library, self.run = n, addr, library, run
        self.ids = ",".join(map(str, library))
        self.received = {fid: set() for fid in library}  # every episode id given, per podcast
        self.got_at = {}  # (podcast, guid) -> first time given (monotonic)
        self.got_via = {}  # (podcast, guid) -> "stream" or "refresh", "+resync" when in a podcast's whole list
        self.walk = set()  # podcasts whose whole list (resync) is being sent page by page
        self.baseline = 0  # episodes held after the first sync
        self.token = None  # the sync token the stream's URL carries
        self.last_id = None  # EventSource's last event ID string
        self.retry_ms = 3000
        self.synced = False  # first refresh done, every podcast ok
        self.listening = False  # the stream's first event came
        self.resyncs = []  # (phase, podcast, via) after the first sync
        self.initial_resyncs = 0
        self.repeats = []  # (phase, podcast, guid): an episode given again without resync or `changed`, after the first sync
        self.removed = []  # (phase, podcast, guid): ids a `removed` list told the app to drop (the platform removes none)
        self.connects = []  # (t, target, status or error)
        self.recoveries = []  # (phase, status, code): a token refused, refreshed with an empty sync=
        self.errors = []
        self.replica = n % run.args.replicas  # direct mode: where it talks to now
        self.conn = None
        self.stream_rid = None  # the X-Request-ID of the stream being read (the replica's log names it)
        self.lock = threading.Lock()

    # transport

    def target(self):
        if self.run.nginx:
            return "nginx", self.run.c.nginx_port
        return f"replica{self.replica + 1}", self.run.c.ports[self.replica]

    def move(self):
        """Direct mode: after a failure, another replica (as a balancer would route the retry)."""
        if not self.run.nginx:
            self.replica = self.run.rng_apps.choice([r for r in range(self.run.args.replicas) if r != self.replica])

    def new_conn(self, timeout):
        _, port = self.target()
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout, source_address=(self.addr, 0))
        with self.lock:
            self.conn = c
        if self.run.stop.is_set():
            raise Stopped()
        return c

    def close(self):
        with self.lock:
            c = self.conn
        if c is not None:
            try:
                if c.sock is not None:
                    c.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            c.close()

    def post(self, path, form, timeout=10):
        """(status, headers, doc or None); status 0 for a connection failure."""
        c = self.new_conn(timeout)
        try:
            c.request("POST", path, body=urllib.parse.urlencode(form), headers={
                "Content-Type": "application/x-www-form-urlencoded", "X-Request-ID": f"app{self.n}-r{len(self.connects)}"})
            r = c.getresponse()
            body = r.read()
            h = {k.lower(): v for k, v in r.getheaders()}
            doc = None
            try:
                doc = json.loads(body) if body else None
            except ValueError:
                pass
            return r.status, h, doc
        except Exception as e:
            if self.run.stop.is_set():
                raise Stopped()
            return 0, {"error": f"{type(e).__name__}: {e}"}, None
        finally:
            c.close()

    def trace(self, doc, event_id):
        """Each event in brief, to the app's file in the run's directory (what a reset looked like)."""
        with open(os.path.join(self.run.tmp, "apps", f"app{self.n}.jsonl"), "a") as f:
            f.write(json.dumps({"t": round(time.monotonic() - self.run.c.t0, 2), "phase": self.run.phase, "via": self.target()[0],
                                "rid": self.stream_rid, "id": event_id, "page": doc.get("page"),
                                "podcasts": [[p.get("id"), p.get("status"), p.get("resync")] for p in doc.get("podcasts", [])
                                             if p.get("status") != "ok" or p.get("resync")],
                                "items": [[i.get("podcastId"), i.get("id")] for i in doc.get("items", [])]}) + "\n")

    # what an answer gives

    def absorb(self, doc, via):
        """Every episode of an answer or event, and its podcasts' `resync` flags. A podcast
        flagged is being sent whole, page by page (`page.next` set) until a last page: what
        those pages repeat belongs to that (loud) reset, whatever flags they carry."""
        now = time.monotonic()
        phase = self.run.phase
        resync = {p.get("id") for p in doc.get("podcasts", []) if p.get("resync") is True}
        for pid in resync:
            if self.synced:
                self.resyncs.append((phase, pid, via, self.stream_rid if via == "stream" else None))
            else:
                self.initial_resyncs += 1
        covered = resync | self.walk
        # docs/API.md: per podcast, drop the episodes `removed` names, then keep each item by
        # its id (an id the app holds is replaced: `changed` names those).
        changed = {}
        for p in doc.get("podcasts", []):
            pid = p.get("id")
            for gone in p.get("removed") or []:
                self.removed.append((phase, pid, gone))
                self.received.setdefault(pid, set()).discard(gone)
            changed[pid] = set(p.get("changed") or [])
        for item in doc.get("items", []):
            pid, guid = item.get("podcastId"), item.get("id")
            held = self.received.setdefault(pid, set())
            if guid in held:
                if self.synced and pid not in covered and guid not in changed.get(pid, ()):
                    self.repeats.append((phase, pid, guid))
                continue
            held.add(guid)
            self.got_at.setdefault((pid, guid), now)
            self.got_via.setdefault((pid, guid), via + ("+resync" if pid in covered else ""))
        self.walk = covered if (doc.get("page") or {}).get("next") else set()

    # the recipe

    def refresh(self, sync, deadline):
        """docs/API.md's refresh: `POST /episodes` (with `sync` when given: "" is the empty
        `sync=` of the recovery), `page.next` followed by posting its query, pending podcasts
        asked again after Retry-After with the token; the last answer's token kept. True when
        every podcast was ok."""
        token = sync
        while time.monotonic() < deadline and not self.run.stop.is_set():
            form = {"podcasts": self.ids}
            if token is not None:
                form["sync"] = token
            status, h, doc = self.post("/episodes", form)
            self.connects.append((round(time.monotonic() - self.run.c.t0, 2), self.target()[0], f"POST /episodes {status}"))
            if status in (400, 410) and token:
                code = ((doc or {}).get("error") or {}).get("code")
                self.recoveries.append((self.run.phase, status, code))
                token = ""  # the docs' recovery: an empty sync=, every podcast whole
                continue
            if status != 200 or not isinstance(doc, dict):
                self.move()
                time.sleep(min(3.0, float(h.get("retry-after") or 0.5)))
                continue
            pending_token = doc.get("syncToken")
            if not isinstance(pending_token, str):
                self.errors.append("an /episodes answer without syncToken")
                return False
            pending = False
            ok = True
            page = doc
            pages = 0
            while True:
                self.absorb(page, "refresh")
                for p in page.get("podcasts", []):
                    if p.get("status") == "pending":
                        pending = True
                    elif p.get("status") != "ok":
                        ok = False
                nxt = (page.get("page") or {}).get("next")
                if not nxt or pages >= 50:
                    break
                pages += 1
                q = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(nxt).query, keep_blank_values=True))
                s2, _, d2 = self.post("/episodes", q)
                if s2 != 200 or not isinstance(d2, dict):
                    ok = False  # a page lost: ask again from the last full token
                    break
                if isinstance(d2.get("syncToken"), str) and "cursor" not in q:
                    pending_token = d2["syncToken"]
                page = d2
            token = pending_token
            self.token = token
            if ok and not pending:
                return True
            time.sleep(min(3.0, float(h.get("retry-after") or 1.0)))
        return False

    def listen(self):
        """The stream, as EventSource reads it, reconnected until the run stops."""
        path = f"/episodes/events?podcasts={self.ids}&sync={urllib.parse.quote(self.token, safe='')}"
        k = 0
        while not self.run.stop.is_set():
            k += 1
            name, _ = self.target()
            self.stream_rid = f"app{self.n}-s{k}"
            headers = {"Accept": "text/event-stream", "Cache-Control": "no-cache", "X-Request-ID": self.stream_rid}
            if self.last_id is not None:
                headers["Last-Event-ID"] = self.last_id
            status = 0
            retry_after = None
            try:
                c = self.new_conn(timeout=35)  # heartbeats every 15 s: 35 s of silence is a dead connection
                c.request("GET", path, headers=headers)
                r = c.getresponse()
                status = r.status
                if status == 200:
                    self.connects.append((round(time.monotonic() - self.run.c.t0, 2), name, "stream 200"))
                    self.read_stream(r)
                    end = "ended"
                else:
                    body = r.read()
                    retry_after = r.getheader("Retry-After")
                    code = None
                    try:
                        code = (json.loads(body).get("error") or {}).get("code")
                    except (ValueError, AttributeError):
                        pass
                    end = f"{status} {code}"
                    self.connects.append((round(time.monotonic() - self.run.c.t0, 2), name, f"stream {end}"))
                    if status in (400, 410):
                        # docs/API.md: the token is refused; refresh with an empty sync= and
                        # follow page.next to the end, then listen from the last token.
                        self.recoveries.append((self.run.phase, status, code))
                        if self.refresh("", time.monotonic() + 15):
                            path = f"/episodes/events?podcasts={self.ids}&sync={urllib.parse.quote(self.token, safe='')}"
                            self.last_id = None
                            continue
            except Stopped:
                return
            except Exception as e:
                end = f"{type(e).__name__}"
                if self.run.stop.is_set():
                    return
                self.connects.append((round(time.monotonic() - self.run.c.t0, 2), name, f"stream {end}"))
            finally:
                self.close()
            if self.run.stop.is_set():
                return
            if status != 200:
                self.move()
            elif not self.run.nginx:
                self.move()  # the replica ended the stream (a drain, a kill): reconnect elsewhere
            wait = self.retry_ms / 1000
            if retry_after:
                try:
                    wait = max(wait, float(retry_after))
                except ValueError:
                    pass
            self.run.stop.wait(wait)

    def read_stream(self, r):
        """The WHATWG event-stream parser: lines, fields, dispatch on a blank line."""
        data, event, id_buffer = [], "", self.last_id
        while not self.run.stop.is_set():
            line = r.readline()
            if not line:
                return  # end of stream: a pending event is discarded
            line = line.decode("utf-8", "replace").rstrip("\r\n")
            if line == "":
                # dispatch: the last event ID string first, then the event (if any data)
                self.last_id = id_buffer
                if data:
                    text = "\n".join(data)
                    if (event or "message") == "episodes":
                        try:
                            doc = json.loads(text)
                        except ValueError:
                            self.errors.append("an event whose data is not JSON")
                            doc = None
                        if isinstance(doc, dict):
                            self.trace(doc, id_buffer)
                            self.absorb(doc, "stream")
                            self.listening = True
                data, event = [], ""
                continue
            if line.startswith(":"):
                continue
            field, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if field == "data":
                data.append(value)
            elif field == "event":
                event = value
            elif field == "id" and "\0" not in value:
                id_buffer = value
            elif field == "retry" and value.isdigit():
                self.retry_ms = int(value)

    def main(self):
        try:
            if not self.refresh(None, time.monotonic() + self.run.args.sync_timeout_s):
                self.errors.append("first refresh not complete in time")
                if self.token is None:
                    return
            self.baseline = sum(len(v) for v in self.received.values())
            self.synced = True
            self.listen()
        except Stopped:
            pass
        except Exception as e:  # a harness fault: reported, never silent
            import traceback
            self.errors.append(f"{type(e).__name__}: {e}: {traceback.format_exc(limit=3)}")


# ---------------------------------------------------------------- the run


class Run:
    def __init__(self, args):
        self.args = args
        self.tmp = tempfile.mkdtemp(prefix="feedproxy-chaos-")
        self.c = Chaos(args, self.tmp)
        self.nginx = False
        self.stop = threading.Event()
        self.rng = random.Random(args.seed)
        self.rng_apps = random.Random(args.seed + 1)
        self.phase = "setup"
        self.phases = []  # (name, start t, end t)
        self.published = []  # dicts: podcast, guid, t, phase, ping
        self.pub_lock = threading.Lock()
        self.apps = []
        self.report = {"settings": {k: v for k, v in vars(args).items()}, "tmp": self.tmp}
        os.makedirs(os.path.join(self.tmp, "apps"))

    def t(self):
        return round(time.monotonic() - self.c.t0, 2)

    def enter(self, name):
        now = self.t()
        if self.phases:
            self.phases[-1][2] = now
        self.phases.append([name, now, None])
        self.phase = name
        self.c.note(f"phase {name}")

    # setup

    def setup(self):
        a = self.args
        info = self.c.start_publisher(a.podcasts)
        self.c.start_redis()
        for i in range(a.replicas):
            self.c.start_replica(i, {})
        for i in range(a.replicas):
            self.c.wait_replica(i)
        if a.balancer == "nginx":
            if os.path.exists(NGINX):
                load_scaleout().Cluster.start_nginx(self.c)
                self.nginx = True
            else:
                log(f"chaos: {NGINX} missing: the apps pick replicas themselves (--balancer apps)")
        self.feed_base = info["feed_base"]
        ids = [BASE_ID + k for k in range(a.podcasts)]
        libraries = [self.rng.sample(ids, self.rng.randint(a.per_app_min, min(a.per_app_max, len(ids)))) for _ in range(a.apps)]
        followed = {i for lib in libraries for i in lib}
        for k, fid in enumerate(i for i in ids if i not in followed):  # every podcast followed by someone
            libraries[k % a.apps].append(fid)
        self.apps = [App(n, f"127.0.0.{10 + n % 240}", lib, self) for n, lib in enumerate(libraries)]
        self.followers = {}
        for app in self.apps:
            for fid in app.library:
                self.followers.setdefault(fid, []).append(app)
        log(f"chaos: {a.podcasts} podcasts at {info['feed_base']} ({a.delay_ms} ms an answer), lookups at {info['lookup_url']}; "
            f"{a.replicas} replicas :{', :'.join(map(str, self.c.ports))} sharing redis :{self.c.redis_port}"
            + (f", nginx :{self.c.nginx_port} in front" if self.nginx else ", apps talk to replicas directly")
            + f"; {len(self.apps)} apps following {min(map(len, libraries))}-{max(map(len, libraries))} podcasts each; "
            f"binary {a.binary}; logs in {self.tmp}")

    def start_apps(self):
        self.enter("first-sync")
        self.app_threads = [threading.Thread(target=app.main, name=f"app{app.n}", daemon=True) for app in self.apps]
        for th in self.app_threads:
            th.start()
        ok = storm.wait_until(lambda: all(app.listening or app.errors for app in self.apps), self.args.sync_timeout_s + 10, 0.1)
        synced = sum(app.listening for app in self.apps)
        self.c.note(f"{synced} of {len(self.apps)} apps synced and listening"
                    + ("" if ok else " (not all within the bound)"))
        self.report["apps_listening_before_publishing"] = synced
        if synced == 0:
            raise RuntimeError("no app got as far as its stream: " + "; ".join(sorted({e for app in self.apps for e in app.errors}))[:500])

    # publishing

    def ping(self, k, fid, mode):
        """One publisher's ping: a random replica, another one when the connection is refused."""
        order = self.rng.sample(range(self.args.replicas), self.args.replicas)
        attempts = []
        form = {"id": str(fid)} if mode == "id" else {"url": f"{self.feed_base}/{fid}.xml"}
        for a, r in enumerate(order):
            rid = f"ping{k}-{a}"
            started = self.t()
            c = http.client.HTTPConnection("127.0.0.1", self.c.ports[r], timeout=self.args.ping_timeout_s, source_address=(PUBLISHER_ADDR, 0))
            try:
                c.request("POST", "/hub/notify", body=urllib.parse.urlencode(form),
                          headers={"Content-Type": "application/x-www-form-urlencoded", "X-Request-ID": rid})
                resp = c.getresponse()
                body = resp.read()
                code = None
                try:
                    code = (json.loads(body).get("error") or {}).get("code") if resp.status >= 400 else json.loads(body).get("status")
                except (ValueError, AttributeError):
                    pass
                attempts.append({"replica": r + 1, "request_id": rid, "t": started, "status": resp.status, "code": code,
                                 "ms": round((self.t() - started) * 1000)})
                break
            except (ConnectionRefusedError, ConnectionResetError, http.client.RemoteDisconnected, BrokenPipeError) as e:
                attempts.append({"replica": r + 1, "request_id": rid, "t": started, "status": 0, "code": type(e).__name__,
                                 "ms": round((self.t() - started) * 1000)})
                continue  # never reached a replica, or it died on it: the balancer tries another
            except Exception as e:  # a timeout: the replica may have it; not sent again
                attempts.append({"replica": r + 1, "request_id": rid, "t": started, "status": 0, "code": type(e).__name__,
                                 "ms": round((self.t() - started) * 1000)})
                break
            finally:
                c.close()
        return attempts

    def publisher_loop(self):
        k = 0
        pool = cf.ThreadPoolExecutor(max_workers=16, thread_name_prefix="ping")
        futures = []
        next_at = time.monotonic()
        ids = [BASE_ID + i for i in range(self.args.podcasts)]
        try:
            while not self.publishing_done.is_set():
                fid = self.rng.choice(ids)
                try:
                    r = self.c.publisher.publish(fid, time.time())
                except Exception as e:
                    log(f"chaos: publish failed: {e}")
                    raise
                mode = "id" if k % 2 == 0 else "url"
                entry = {"n": k, "podcast": fid, "guid": r["guid"], "t": self.t(), "wall": time.time(), "phase": self.phase, "mode": mode}
                with self.pub_lock:
                    self.published.append(entry)
                fut = pool.submit(self.ping, k, fid, mode)
                fut.add_done_callback(lambda f, e=entry: e.__setitem__("ping", f.result() if not f.exception() else [{"error": str(f.exception())}]))
                futures.append(fut)
                k += 1
                next_at += self.args.interval
                self.publishing_done.wait(max(0.0, next_at - time.monotonic()))
        finally:
            cf.wait(futures, timeout=self.args.ping_timeout_s + 2)
            pool.shutdown(wait=False, cancel_futures=True)

    # faults

    def faults(self):
        a, c = self.args, self.c
        gap = a.gap_s
        self.enter("calm")
        self.stop.wait(gap)
        if "kill" in a.faults:
            # a replica SIGKILLed, started again on its port with the same settings
            self.enter("replica-killed")
            c.kill_replica(0)
            c.note("replica1 SIGKILLed")
            self.stop.wait(a.down_s)
            c.start_replica(0)
            c.wait_replica(0)
            c.note("replica1 started again, serving and on Redis")
            self.stop.wait(gap)
        if "redis" in a.faults:
            # Redis SIGKILLed, started empty on its port
            self.enter("redis-restarted-empty")
            c.kill_redis()
            c.note("redis SIGKILLed")
            self.stop.wait(a.down_s)
            c.start_redis()
            c.note(f"redis started empty on :{c.redis_port}")
            up = c.redis_up_everywhere(10)
            c.note("every replica on Redis again" if up else "not every replica on Redis again after 10 s")
            self.stop.wait(gap)
        if "stop" in a.faults:
            # a replica SIGSTOPped, then SIGCONT
            self.enter("replica-stopped")
            c.signal_replica(1, signal.SIGSTOP)
            c.note(f"replica2 SIGSTOPped for {a.stop_s} s")
            try:
                self.stop.wait(a.stop_s)
            finally:
                c.signal_replica(1, signal.SIGCONT)
            c.note("replica2 SIGCONT")
            self.stop.wait(gap)
        if "deploy" in a.faults:
            # a rolling deploy: each replica stopped (SIGTERM) and started with a routine setting changed
            self.enter("rolling-deploy")
            for i in range(a.replicas):
                took = c.term_replica(i)
                c.note(f"replica{i + 1} SIGTERMed, exited in {took:.1f} s")
                c.start_replica(i, {"FEED_MAX_BODY_BYTES": str(a.deploy_feed_max_body_bytes)})
                c.wait_replica(i)
                c.note(f"replica{i + 1} started with FEED_MAX_BODY_BYTES={a.deploy_feed_max_body_bytes}")
                self.stop.wait(a.deploy_pause_s)
            self.stop.wait(gap)
        self.enter("after-faults")
        self.stop.wait(a.tail_s)

    # counting

    def owed(self):
        with self.pub_lock:
            pubs = list(self.published)
        return [(e, app) for e in pubs for app in self.followers.get(e["podcast"], [])]

    def missing(self):
        return [(e, app) for e, app in self.owed() if e["guid"] not in app.received.get(e["podcast"], ())]

    def run(self):
        a = self.args
        self.setup()
        self.start_apps()
        self.c.publisher.reset_counts()  # the feed-request log from here on
        self.publishing_done = threading.Event()
        pub = threading.Thread(target=self.publisher_loop, name="publisher", daemon=True)
        host, port = urllib.parse.urlsplit(self.feed_base).netloc.split(":")
        self.sampler = self.c.sampler = storm.Sampler(interval=0.25, pids=dict(self.c.replica_pids), feed_host=(host, int(port))).start()
        pub.start()
        try:
            self.faults()
        finally:
            self.publishing_done.set()
            pub.join(timeout=a.ping_timeout_s + 5)
        self.enter("final-wait")
        last_publish = self.t()
        done = storm.wait_until(lambda: not self.missing(), a.final_wait_s, 0.25)
        self.report["final_wait_s"] = round(self.t() - last_publish, 2)
        self.c.note(f"final wait {self.report['final_wait_s']} s: " + ("every app has every episode" if done else "episodes still missing"))
        self.phases[-1][2] = self.t()
        self.stop.set()
        for app in self.apps:
            app.close()
        end = time.monotonic() + 10
        for th in self.app_threads:
            th.join(timeout=max(0.1, end - time.monotonic()))
        self.sampler.stop()
        self.count()

    def count(self):
        a = self.args
        owed = self.owed()
        with self.pub_lock:
            pubs = list(self.published)
        plog = self.c.publisher.request_log()
        ports = self.sampler.ports
        with open(os.path.join(self.tmp, "publisher-log.json"), "w") as f:  # every feed request: [start, end, id, port, status, conditional]
            json.dump({"t0_wall": self.c.t0_wall, "requests": plog, "ports": {str(k): v for k, v in ports.items()}}, f)
        phases = {}
        for name, start, end in self.phases:
            phases[name] = {"start_s": start, "end_s": end, "published": 0, "pairs_owed": 0, "pairs_missing": 0, "episodes_missing": 0,
                            "apps_missing": 0, "pairs_late": 0, "pairs_only_by_resync": 0, "pings": {}, "pings_lost": 0,
                            "lost_pings_episodes": {"delivered_by_a_later_read": 0, "delivered_by_a_resync": 0, "missing": 0},
                            "loud_resets": {"apps": 0, "flags": 0}, "silent_resets": {"apps": 0, "repeats": 0}}
        for e in pubs:
            ph = phases[e["phase"]]
            ph["published"] += 1
            final = (e.get("ping") or [{}])[-1]
            e["ping_status"] = final.get("status")
            e["ping_lost"] = final.get("status") not in (202, 429)  # 404 feed_unknown, a failure: the service read nothing for it
            key = f"{e['mode']}:{final.get('status')} {final.get('code')}"
            ph["pings"][key] = ph["pings"].get(key, 0) + 1
            ph["pings_lost"] += e["ping_lost"]
        # Each pair: missing, or how and when it came.
        per_episode = {}
        lat = []
        for e, app in owed:
            ph = phases[e["phase"]]
            ph["pairs_owed"] += 1
            key = (e["podcast"], e["guid"])
            st = per_episode.setdefault(e["n"], {"e": e, "missing": [], "resync": 0, "plain": 0, "late": 0})
            if e["guid"] not in app.received.get(e["podcast"], ()):
                ph["pairs_missing"] += 1
                st["missing"].append(app.n)
                continue
            took = app.got_at[key] - self.c.t0 - e["t"]
            lat.append(took)
            if took > a.late_s:
                ph["pairs_late"] += 1
                st["late"] += 1
            if app.got_via.get(key, "").endswith("+resync"):
                ph["pairs_only_by_resync"] += 1
                st["resync"] += 1
            else:
                st["plain"] += 1
        details, lost, episodes = [], [], []
        for n, st in sorted(per_episode.items()):
            e = st["e"]
            ph = phases[e["phase"]]
            if st["missing"]:
                ph["episodes_missing"] += 1
            reads = [{"t": round(r[0] - self.c.t0_wall, 2), "status": r[4], "conditional": r[5], "replica": ports.get(r[3], "?")}
                     for r in plog if r[2] == e["podcast"] and r[0] >= e["wall"] - 0.05]
            later = [{"n": x["n"], "t": x["t"], "ping": x.get("ping_status")} for x in pubs if x["podcast"] == e["podcast"] and x["n"] > e["n"]]
            d = {"n": n, "podcast": e["podcast"], "guid": e["guid"], "published_s": e["t"], "phase": e["phase"], "ping_by": e["mode"],
                 "ping": e.get("ping"), "apps_following": len(self.followers[e["podcast"]]), "apps_missing": len(st["missing"]),
                 "apps_given_in_a_resync_only": st["resync"], "apps_given_later_than_late_s": st["late"],
                 "feed_requests_after": reads[:12], "later_publishes_same_podcast": later}
            episodes.append(d)
            if st["missing"]:
                details.append(d)
            if e["ping_lost"]:
                outcome = "missing" if st["missing"] else ("delivered_by_a_resync" if st["resync"] else "delivered_by_a_later_read")
                ph["lost_pings_episodes"][outcome] += 1
                lost.append(dict(d, outcome=outcome))
        for name in phases:
            phases[name]["apps_missing"] = len({app.n for e, app in owed if e["phase"] == name and e["guid"] not in app.received.get(e["podcast"], ())})
            loud = [app for app in self.apps if any(r[0] == name for r in app.resyncs)]
            phases[name]["loud_resets"] = {"apps": len(loud), "flags": sum(1 for app in self.apps for r in app.resyncs if r[0] == name)}
            silent = [app for app in self.apps if any(r[0] == name for r in app.repeats)]
            phases[name]["silent_resets"] = {"apps": len(silent), "repeats": sum(1 for app in self.apps for r in app.repeats if r[0] == name)}
        apps = {
            "apps": len(self.apps), "listening_before_publishing": self.report.get("apps_listening_before_publishing"),
            "loud_reset_apps": sum(1 for app in self.apps if app.resyncs), "resync_flags_after_first_sync": sum(len(app.resyncs) for app in self.apps),
            # docs/API.md allows one: a Redis restarted empty (no persistence) lost the history's
            # record, and a replica that held none of the podcast's data started it again.
            "loud_reset_apps_outside_redis_empty": sum(1 for app in self.apps if any(r[0] != "redis-restarted-empty" for r in app.resyncs)),
            "silent_reset_apps": sum(1 for app in self.apps if app.repeats), "repeats_without_resync": sum(len(app.repeats) for app in self.apps),
            "resync_flags_during_first_sync": sum(app.initial_resyncs for app in self.apps),
            "token_recoveries": sum(len(app.recoveries) for app in self.apps),
            "removed_ids_told": sum(len(app.removed) for app in self.apps),
            "stream_connects": sum(1 for app in self.apps for x in app.connects if x[2] == "stream 200"),
            "stream_failures": {}, "errors": sorted({e for app in self.apps for e in app.errors})[:20],
        }
        for app in self.apps:
            for x in app.connects:
                if x[2].startswith("stream") and x[2] != "stream 200":
                    apps["stream_failures"][x[2]] = apps["stream_failures"].get(x[2], 0) + 1
        self.report.update({
            "phases": phases, "published": len(pubs), "pairs_owed": len(owed), "pairs_missing": sum(p["pairs_missing"] for p in phases.values()),
            "episodes_missing": len(details), "missing": details, "lost_pings": lost, "apps": apps,
            "delivery_s": {"n": len(lat), "p50": round(pct(lat, 50), 2) if lat else None, "p90": round(pct(lat, 90), 2) if lat else None,
                           "max": round(max(lat), 2) if lat else None},
            "timeline": self.c.events,
            "resets": [{"app": app.n, "phase": r[0], "podcast": r[1], "via": r[2], "stream": r[3]} for app in self.apps for r in app.resyncs],
            "repeats": [{"app": app.n, "phase": r[0], "podcast": r[1], "guid": r[2]} for app in self.apps for r in app.repeats][:300],
            "recoveries": [{"app": app.n, "phase": r[0], "status": r[1], "code": r[2]} for app in self.apps for r in app.recoveries][:300],
            "removed": [{"app": app.n, "phase": r[0], "podcast": r[1], "guid": r[2]} for app in self.apps for r in app.removed][:300],
            "episodes": episodes,
        })

    def scan_logs(self):
        """Warnings and errors per replica (counted by message), and the replicas' log lines
        of the pings of missing episodes and of pings that read nothing (by request id)."""
        want = {}
        for d in self.report.get("missing", []) + self.report.get("lost_pings", []):
            for p in d.get("ping") or []:
                if p.get("request_id"):
                    want[p["request_id"]] = d["n"]
        out, lines, streams = [], {}, {}
        for i in range(self.args.replicas):
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
                        rid = d.get("request_id")
                        if d.get("msg") == "request" and isinstance(rid, str) and rid.startswith("app") and "-s" in rid:
                            streams[rid] = i + 1
                        if rid in want:
                            lines.setdefault(want[rid], []).append(dict(d, replica=i + 1))
                        if d.get("msg") == "request":
                            continue
                        if d.get("level") in ("warn", "warning", "error"):
                            k = f"{d.get('level')}: {d.get('msg')}" + (f" ({d['reason']})" if d.get("reason") else "")
                            msgs[k] = msgs.get(k, 0) + 1
            except OSError:
                pass
            out.append(msgs)
        self.report["log_warnings"] = out
        # Which replica served each loud reset (the stream's request id in the replicas' logs).
        by = {}
        for x in self.report.get("resets", []):
            x["replica"] = streams.get(x.get("stream"), "?") if x.get("stream") else "refresh"
            key = f"{x['phase']}: replica{x['replica']}"
            by.setdefault(key, {"apps": set(), "flags": 0})
            by[key]["apps"].add(x["app"])
            by[key]["flags"] += 1
        self.report["loud_resets_by_replica"] = {k: {"apps": len(v["apps"]), "flags": v["flags"]} for k, v in sorted(by.items())}
        for d in self.report.get("missing", []) + self.report.get("lost_pings", []):
            d["ping_log_lines"] = lines.get(d["n"], [])

    def summary(self):
        r = self.report
        a = self.args
        log("\n=== chaos summary " + "=" * 60)
        log(f"{r['published']} episodes published ({a.interval} s apart), {r['pairs_owed']} (app, episode) pairs owed; "
            f"delivery after publish p50 {r['delivery_s']['p50']} s, p90 {r['delivery_s']['p90']} s, max {r['delivery_s']['max']} s")
        log(f"{'phase':<22} {'from':>6} {'to':>6} {'publ':>4} {'owed':>5} {'miss':>5} {'eps':>4} {'late':>5} {'rsync':>5} {'loud':>4} {'silent':>6}  pings (mode:status)")
        for name, p in r["phases"].items():
            log(f"{name:<22} {p['start_s']:>6} {p['end_s'] if p['end_s'] is not None else '-':>6} {p['published']:>4} {p['pairs_owed']:>5} "
                f"{p['pairs_missing']:>5} {p['episodes_missing']:>4} {p['pairs_late']:>5} {p['pairs_only_by_resync']:>5} "
                f"{p['loud_resets']['apps']:>4} {p['silent_resets']['apps']:>6}  " + ", ".join(f"{k} x{v}" for k, v in sorted(p["pings"].items())))
        log(f"  by the phase the episode was published in: miss = pairs missing, eps = episodes some app missed, late = pairs given more than "
            f"{a.late_s:g} s after the publish, rsync = pairs given only inside a podcast's whole list (resync);")
        log("  by the phase they happened in: loud = apps given resync: true, silent = apps given an episode again without it")
        for name, p in r["phases"].items():
            if p["pings_lost"]:
                o = p["lost_pings_episodes"]
                log(f"  {name}: {p['pings_lost']} pings read nothing (404 or no answer); their episodes: {o['delivered_by_a_later_read']} came "
                    f"with a later read of the feed, {o['delivered_by_a_resync']} only in a resync, {o['missing']} never")
        ap = r["apps"]
        log(f"apps: {ap['loud_reset_apps']} reset loudly ({ap['resync_flags_after_first_sync']} resync flags after the first sync), "
            f"{ap['silent_reset_apps']} silently ({ap['repeats_without_resync']} episodes given again); {ap['token_recoveries']} token recoveries; "
            f"{ap['removed_ids_told']} ids told removed (the platform removes none); "
            f"{ap['stream_connects']} stream connections; failed connects {ap['stream_failures'] or 0}")
        if ap["errors"]:
            log(f"app errors: {ap['errors']}")
        for d in r["missing"][:20]:
            ping = "; ".join(f"replica{p.get('replica')} {p.get('status')} {p.get('code')} at {p.get('t')} s" for p in d.get("ping") or []) or "no answer"
            reads = ", ".join(f"{x['t']}s:{x['status']}{'c' if x['conditional'] else ''}@{x['replica']}" for x in d["feed_requests_after"]) or "none"
            log(f"  missing #{d['n']} {d['guid']} ({d['phase']}, published {d['published_s']} s): {d['apps_missing']} of "
                f"{d['apps_following']} apps; ping by {d['ping_by']}: {ping}; the feed's requests after (s:status@replica, c conditional): {reads}; "
                f"later publishes there: {[(x['n'], x['t'], x['ping']) for x in d['later_publishes_same_podcast']]}")
        if len(r["missing"]) > 20:
            log(f"  … {len(r['missing']) - 20} more missing episodes in --json")
        if r.get("loud_resets_by_replica"):
            log("loud resets by the replica whose stream gave them (phase: replica apps/flags): "
                + ", ".join(f"{k} {v['apps']}/{v['flags']}" for k, v in r["loud_resets_by_replica"].items()))
        for i, msgs in enumerate(r.get("log_warnings", [])):
            if msgs:
                log(f"replica{i + 1} log warnings/errors: {dict(sorted(msgs.items(), key=lambda kv: -kv[1])[:8])}")

    def verdicts(self):
        r = self.report
        ap = r["apps"]
        return [
            ("every app has every episode of its podcasts", f"{r['pairs_missing']} of {r['pairs_owed']} pairs missing ({r['episodes_missing']} episodes)",
             r["pairs_missing"] == 0, "none missing"),
            ("no app reset silently (an episode given again without resync)", f"{ap['silent_reset_apps']} apps", ap["silent_reset_apps"] == 0, "0"),
            ("no app reset loudly after its first sync (resync: true), but where Redis restarted empty lost a history",
             f"{ap['loud_reset_apps_outside_redis_empty']} apps ({ap['loud_reset_apps']} with the Redis phase's)",
             ap["loud_reset_apps_outside_redis_empty"] == 0, "0"),
            ("every app synced and listening before publishing", f"{ap['listening_before_publishing']} of {ap['apps']}",
             ap["listening_before_publishing"] == ap["apps"], "all"),
        ]


def main():
    ap = argparse.ArgumentParser(description="apps following docs/API.md through replica kills, a Redis restarted empty, a stopped replica and a deploy")
    ap.add_argument("binary", nargs="?", default=os.environ.get("FEEDPROXY_BIN", os.path.join(ROOT, ".build", "debug", "feedproxy")))
    ap.add_argument("--podcasts", type=int, default=40)
    ap.add_argument("--apps", type=int, default=60)
    ap.add_argument("--per-app-min", type=int, default=5)
    ap.add_argument("--per-app-max", type=int, default=10)
    ap.add_argument("--episodes", type=int, default=10, help="episodes per feed at the start")
    ap.add_argument("--delay-ms", type=int, default=20, help="the platform's delay per feed answer")
    ap.add_argument("--replicas", type=int, default=3, choices=[3])
    ap.add_argument("--balancer", choices=["nginx", "apps"], default="nginx",
                    help="nginx in front (least_conn), or each app picking a replica and moving after a failure")
    ap.add_argument("--ttl", type=int, default=1800, help="CACHE_TTL_EPISODES (the production default: episodes come by pings)")
    ap.add_argument("--interval", type=float, default=0.3, help="seconds between publishes")
    ap.add_argument("--faults", default="kill,redis,stop,deploy", type=lambda v: set(v.split(",")),
                    help="which faults, in this order whatever the list's: kill (replica1 SIGKILL), redis (killed, started empty), "
                    "stop (replica2 SIGSTOP), deploy (rolling restart)")
    ap.add_argument("--gap-s", type=float, default=5.0, help="seconds between faults")
    ap.add_argument("--down-s", type=float, default=1.0, help="seconds a killed replica or Redis stays down")
    ap.add_argument("--stop-s", type=float, default=3.0, help="seconds replica2 stays SIGSTOPped")
    ap.add_argument("--deploy-pause-s", type=float, default=1.5, help="seconds between a deployed replica being ready and the next one's stop")
    ap.add_argument("--deploy-feed-max-body-bytes", type=int, default=64 << 20, help="the setting the deploy changes")
    ap.add_argument("--tail-s", type=float, default=3.0, help="seconds of publishing after the deploy's gap")
    ap.add_argument("--late-s", type=float, default=12.0, help="a pair given later than this after its publish is counted late (a ping's "
                    "10 s ping_too_soon wait passes within it)")
    ap.add_argument("--final-wait-s", type=float, default=20.0, help="at most this long after the last publish for the apps to have everything")
    ap.add_argument("--sync-timeout-s", type=float, default=15.0, help="an app's first refresh's bound")
    ap.add_argument("--ping-timeout-s", type=float, default=8.0)
    ap.add_argument("--env", action="append", default=[], help="KEY=VALUE for every replica (repeatable)")
    ap.add_argument("--seed", type=int, default=67)
    ap.add_argument("--max-seconds", type=float, default=180, help="the whole run is stopped after this long")
    ap.add_argument("--json", help="write the report here")
    ap.add_argument("--keep-logs", action="store_true", help="keep the temporary directory (replica logs) even when all went well")
    args = ap.parse_args()
    if args.faults - {"kill", "redis", "stop", "deploy"}:
        ap.error(f"--faults: unknown {sorted(args.faults - {'kill', 'redis', 'stop', 'deploy'})}")
    # What storm.py's Cluster reads from its arguments.
    args.threads, args.itunes_rate, args.redis_monitor = None, 100000, False
    args.env = ["TRUSTED_PROXIES=127.0.0.1/32", *args.env]
    for tool in (args.binary, storm.REDIS_SERVER, storm.REDIS_CLI):
        if not os.path.exists(tool):
            log(f"chaos: missing {tool}")
            return 2
    run = Run(args)

    class Stop(Exception):
        pass

    def on_signal(signum, _frame):
        raise Stop(f"signal {signum}")

    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGALRM):
        signal.signal(s, on_signal)
    signal.alarm(int(args.max_seconds))
    status = 0
    try:
        run.run()
    except (Stop, KeyboardInterrupt) as e:
        log(f"chaos: stopped ({e})")
        run.report["stopped"] = str(e)
        status = 2
    except Exception as e:
        import traceback
        traceback.print_exc()
        run.report["error"] = f"{type(e).__name__}: {e}"
        status = 2
    finally:
        signal.alarm(0)
        run.stop.set()
        for app in run.apps:
            app.close()
        run.c.procs.stop_all()  # by PID, SIGCONT first (a stopped replica too)
    run.report["total_s"] = round(time.monotonic() - run.c.t0, 1)
    if "phases" in run.report:
        run.scan_logs()
        run.summary()
        log("\nchaos checks:")
        for label, value, ok, expected in run.verdicts():
            log(f"  {'ok  ' if ok else 'FAIL'} {label}: {value}   (expected {expected})")
            if not ok and status == 0:
                status = 1
        run.report["passed"] = status == 0
    log(f"\nchaos: {'passed' if status == 0 else 'FAILED'} in {run.report['total_s']} s; logs in {run.tmp}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(run.report, f, indent=1, default=str)
        log(f"chaos: report written to {args.json}")
    if status == 0 and not args.keep_logs:
        shutil.rmtree(run.tmp, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
