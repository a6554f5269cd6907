#!/usr/bin/env bash
# make prometheus-check: the alert rules and the dashboard against the real thing, on
# loopback, in well under a minute:
#  1. promtool check rules / test rules on deploy/prometheus/ (and check config);
#  2. a redis-server and two FeedProxy replicas (--fixtures, REDIS_URL set) on free
#     loopback ports, and some traffic: every route, a 404, cache hits, L2 hits (the
#     second replica), 429s and 503s (a tight client quota and iTunes budget, so the
#     rejection families have series);
#  3. Debian's prometheus scraping both replicas every second with alerts.yml loaded;
#  4. through its HTTP API: the target is up; every rule group loaded, every rule healthy;
#     every alert expression and every dashboard query (targets[].expr and the template
#     variables' label_values, with $job, $instance, $__rate_interval… filled in)
#     evaluates with status success; every metric name they reference is in the scrape,
#     except the few listed in CONDITIONAL below; and the process_* figures agree with
#     what the kernel says about that PID in /proc.
# FEEDPROXY_BIN names the binary (default .build/debug/feedproxy). Installs Debian's
# prometheus when missing (scripts/setup/install-prometheus.sh). Everything it starts it stops,
# by PID. Exit status 0 only when every check passed.
set -euo pipefail
cd "$(dirname "$0")/../.."
started=$(date +%s)
BIN=${FEEDPROXY_BIN:-.build/debug/feedproxy}
[ -x "$BIN" ] || { echo "prometheus-check: $BIN is not an executable (make prometheus-check builds it)"; exit 1; }
command -v redis-server >/dev/null 2>&1 || { echo "prometheus-check: redis-server missing (make deps installs it)"; exit 1; }
scripts/setup/install-prometheus.sh >/dev/null

# --- 1. promtool ---------------------------------------------------------------------
promtool_quiet() {  # promtool arguments... → its output only when it fails
  local out
  out=$(promtool "$@" 2>&1) || { echo "$out"; echo "prometheus-check: promtool $* failed"; exit 1; }
}
promtool_quiet check rules --lint-fatal deploy/prometheus/alerts.yml
promtool_quiet test rules deploy/prometheus/alerts_test.yml
promtool_quiet check config deploy/prometheus/prometheus.yml
echo "promtool: check rules, test rules ($(grep -c '^  - name:' deploy/prometheus/alerts_test.yml) cases) and check config pass"

# --- 2. Redis, a replica, traffic ---------------------------------------------------
TMP=$(mktemp -d)
PIDS=()
# shellcheck disable=SC2329  # called by the EXIT trap
cleanup() {
  local p
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$TMP"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_for() {  # seconds command... → 0 once the command succeeds
  local end=$((SECONDS + $1))
  shift
  until "$@" >/dev/null 2>&1; do [ $SECONDS -lt $end ] || return 1; sleep 0.1; done
}
REDIS_PORT=$(free_port)
FP_PORTS=("$(free_port)" "$(free_port)")
PROM_PORT=$(free_port)
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$TMP" --daemonize no >"$TMP/redis.log" 2>&1 &
PIDS+=($!)
wait_for 5 redis-cli -p "$REDIS_PORT" ping || { echo "prometheus-check: redis-server did not start"; cat "$TMP/redis.log"; exit 1; }
# TRUSTED_PROXIES: curl's X-Forwarded-For names the client, so one client can spend its
# quota (429) while others spend the iTunes budget (503 upstream_rate_limited).
# The first replica runs the fixture upstream (--fixtures); the second is pointed at it
# (--fixtures-upstream), so both have the same upstreams and hence share Redis entries
# (the L2 key includes them).
FP_PIDS=()
replica() {  # port extra-arguments...
  local port=$1
  shift
  env REDIS_URL="redis://127.0.0.1:$REDIS_PORT" THREADS=1 LOG_LEVEL=info TRUSTED_PROXIES=127.0.0.1/32 \
    CLIENT_MISS_RATE_PER_MIN=30 RATE_LIMIT_ITUNES_PER_MIN=30 UPSTREAM_QUEUE_WAIT_MS=0 \
    "$BIN" --port "$port" --host 127.0.0.1 "$@" >"$TMP/feedproxy-$port.log" 2>&1 &
  FP_PIDS+=($!)
  PIDS+=($!)
  wait_for 20 curl -sf "http://127.0.0.1:$port/healthz" || { echo "prometheus-check: replica :$port did not start"; cat "$TMP/feedproxy-$port.log"; exit 1; }
  wait_for 5 sh -c "curl -s http://127.0.0.1:$port/metrics | grep -q '^feedproxy_redis_up 1'" || { echo "prometheus-check: replica :$port did not connect to Redis"; exit 1; }
}
replica "${FP_PORTS[0]}" --fixtures
# The "listening" line is written by the log thread: it may follow the first /healthz answer.
wait_for 10 grep -q '"fixtures_upstream"' "$TMP/feedproxy-${FP_PORTS[0]}.log"
U=$(sed -n 's/.*"fixtures_upstream":"\([^"]*\)".*/\1/p' "$TMP/feedproxy-${FP_PORTS[0]}.log" | head -1)
[ -n "$U" ] || { echo "prometheus-check: the first replica did not log its fixtures_upstream"; exit 1; }
replica "${FP_PORTS[1]}" --fixtures-upstream "$U"
A="http://127.0.0.1:${FP_PORTS[0]}"
B="http://127.0.0.1:${FP_PORTS[1]}"
STATUSES="$TMP/statuses"
get() {  # client-address URL → the status, appended to $STATUSES
  curl -s -o /dev/null -w '%{http_code}\n' -H "X-Forwarded-For: $1" "$2" >>"$STATUSES"
}
traffic() {  # one round
  local path i
  # Every route twice on A (the second a hit), once on B (an L2 hit), and a 404.
  for path in /photos '/podcasts?term=swift' /loans /podcasts/1200361736/episodes; do
    get 198.51.100.1 "$A$path"
    get 198.51.100.1 "$A$path"
    get 198.51.100.2 "$B$path"
  done
  get 198.51.100.1 "$A/no-such-route"
  # Distinct searches from distinct clients: the iTunes budget (30 a minute, bursts of 5) runs out: 503.
  for i in 1 2 3 4 5; do get "198.51.100.1$i" "$A/podcasts?term=budget$RANDOM$i"; done
  # Distinct misses from one client: its quota (30 a minute, bursts of 5) runs out: 429.
  for i in 1 2 3 4 5 6 7; do get 198.51.100.99 "$A/photos?tags=quota$RANDOM$i"; done
}
traffic

# --- 3. Prometheus --------------------------------------------------------------------
cat >"$TMP/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - $PWD/deploy/prometheus/alerts.yml
scrape_configs:
  - job_name: feedproxy
    static_configs:
      - targets: ["127.0.0.1:${FP_PORTS[0]}", "127.0.0.1:${FP_PORTS[1]}"]
EOF
prometheus --config.file="$TMP/prometheus.yml" --storage.tsdb.path="$TMP/data" --web.listen-address="127.0.0.1:$PROM_PORT" \
  --log.level=warn >"$TMP/prometheus.log" 2>&1 &
PIDS+=($!)
PROM="http://127.0.0.1:$PROM_PORT"
wait_for 20 curl -sf "$PROM/-/ready" || { echo "prometheus-check: prometheus did not become ready"; cat "$TMP/prometheus.log"; exit 1; }
# Scrapes over a few seconds with traffic in between, so rate() has increments to see.
for _ in 1 2 3; do sleep 2; traffic; done
sleep 3
echo "traffic: $(sort "$STATUSES" | uniq -c | awk '{printf "%s%s x %s", (NR > 1 ? ", " : ""), $1, $2}')"

# --- 4. the checks, through the HTTP API ---------------------------------------------
status=0
python3 - "$PROM" "${FP_PORTS[0]}=${FP_PIDS[0]}" "${FP_PORTS[1]}=${FP_PIDS[1]}" <<'PY' || status=$?
import json, os, re, sys, time, urllib.parse, urllib.request

PROM = sys.argv[1]
REPLICAS = {f"127.0.0.1:{port}": int(pid) for port, pid in (a.split("=") for a in sys.argv[2:])}  # instance: PID
failures = []
def fail(msg): failures.append(msg)

def api(path, **params):
    url = f"{PROM}/api/v1/{path}" + ("?" + urllib.parse.urlencode(params) if params else "")
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return json.load(r)
    except urllib.error.HTTPError as e:  # 400 for a query that does not parse: the body says why
        return json.load(e)

def query(expr):
    return api("query", query=expr)

def memory_limit(pid):
    """The cgroup memory limit of pid as the kernel states it (None: unlimited). cgroup v2:
    the smallest memory.max from its cgroup up to the root; v1: memory.stat's
    hierarchical_memory_limit (9223372036854771712, "unlimited", when none is set)."""
    limits = []
    for line in open(f"/proc/{pid}/cgroup"):
        _, controllers, path = line.rstrip("\n").split(":", 2)
        if controllers == "" and os.path.exists("/sys/fs/cgroup/cgroup.controllers"):
            parts = path.strip("/").split("/") if path.strip("/") else []
            for i in range(len(parts), -1, -1):
                f = os.path.join("/sys/fs/cgroup", *parts[:i], "memory.max")
                if os.path.exists(f) and open(f).read().strip() != "max":
                    limits.append(int(open(f).read()))
        elif "memory" in controllers.split(","):
            for d in (f"/sys/fs/cgroup/memory{path}", "/sys/fs/cgroup/memory"):  # a namespaced mount shows its own root
                if os.path.exists(f"{d}/memory.stat"):
                    m = re.search(r"^hierarchical_memory_limit (\d+)", open(f"{d}/memory.stat").read(), re.M)
                    if m and int(m.group(1)) < 1 << 62:
                        limits.append(int(m.group(1)))
                    break
    return min(limits) if limits else None

# Metrics that may legitimately have no series in this run.
CONDITIONAL = {}
LIMITS = {instance: memory_limit(pid) for instance, pid in REPLICAS.items()}
if None in LIMITS.values():
    CONDITIONAL["feedproxy_memory_limit_bytes"] = "the kernel reports no cgroup memory limit"

# Target up.
targets = api("targets")["data"]["activeTargets"]
if not targets or any(t["health"] != "up" for t in targets):
    fail(f"targets: {[(t['scrapeUrl'], t['health'], t.get('lastError')) for t in targets]}")

# Rule groups: all of alerts.yml's, every rule evaluated and healthy (wait for the first evaluation).
text = open("deploy/prometheus/alerts.yml").read()
want_groups = set(re.findall(r"^  - name: (\S+)", text, re.M))
want_rules = len(re.findall(r"^      - (?:alert|record): ", text, re.M))
deadline = time.monotonic() + 10
while True:
    groups = api("rules")["data"]["groups"]
    rules = [r for g in groups for r in g["rules"]]
    if len(rules) == want_rules and all(r["health"] != "unknown" for r in rules) or time.monotonic() > deadline:
        break
    time.sleep(0.5)
if {g["name"] for g in groups} != want_groups:
    fail(f"rule groups loaded {sorted(g['name'] for g in groups)}, alerts.yml has {sorted(want_groups)}")
if len(rules) != want_rules:
    fail(f"{len(rules)} rules loaded, alerts.yml has {want_rules}")
for r in rules:
    if r["health"] != "ok" or r.get("lastError"):
        fail(f"rule {r['name']}: health {r['health']}, lastError {r.get('lastError')!r}")

# Every alert expression and every dashboard query evaluates.
dashboard = json.load(open("deploy/prometheus/dashboard.json"))
VARS = {"job": "feedproxy", "instance": ".+", "datasource": "prometheus", "__rate_interval": "10s", "__interval": "1s",
        "__range": "1m", "__range_s": "60", "__interval_ms": "1000"}
def fill(expr):
    expr = re.sub(r"\$\{(\w+)(?::\w+)?\}", lambda m: VARS[m.group(1)], expr)
    return re.sub(r"\$(\w+)", lambda m: VARS[m.group(1)], expr)
panels = [p for top in dashboard["panels"] for p in [top] + top.get("panels", [])]
exprs = [(f"alert {r['name']}", r["query"]) for r in rules]
exprs += [(f"panel {p['title']!r}", fill(t["expr"])) for p in panels for t in p.get("targets", []) if t.get("expr")]
for v in dashboard["templating"]["list"]:  # label_values(selector, label) as the query Grafana sends
    m = re.fullmatch(r"label_values\((.*),\s*(\w+)\)", v.get("definition", ""))
    if m:
        exprs.append((f"variable ${v['name']}", f"count by ({m.group(2)}) ({fill(m.group(1))})"))
n_alerts = len(rules)
empty, would_fire = [], []
for where, expr in exprs:
    r = query(expr)
    if r.get("status") != "success":
        fail(f"{where}: {r.get('errorType')}: {r.get('error')} in {expr!r}")
    elif where.startswith("alert "):
        would_fire += [where[6:]] if r["data"]["result"] else []
    elif not r["data"]["result"]:
        empty.append(where)

# Metric names the expressions use, all in the scrape (after removing strings, label
# matchers, grouping clauses and ranges, identifiers not followed by "(" are metric names).
KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "and", "or", "unless", "bool", "offset", "inf", "nan"}
names = set()
for _, expr in exprs:
    e = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    e = re.sub(r"\{[^}]*\}", " ", e)
    e = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", e)
    e = re.sub(r"\[[^\]]*\]", " ", e)
    for m in re.finditer(r"\b([a-zA-Z_:][a-zA-Z0-9_:]*)\b(\s*\()?", e):
        if not m.group(2) and m.group(1).lower() not in KEYWORDS and not re.fullmatch(r"\d.*|e\d+", m.group(1)):
            names.add(m.group(1))
missing = []
for name in sorted(names):
    r = query(f'count({{__name__="{name}"}})')
    if not (r.get("status") == "success" and r["data"]["result"]) and name not in CONDITIONAL:
        missing.append(name)
if missing:
    fail(f"not in the scrape: {', '.join(missing)}")

# The process figures against /proc/<pid> (the replica is the process this script started).
def value(expr):
    r = query(expr)["data"]["result"]
    return float(r[0]["value"][1]) if r else None
ticks = os.sysconf("SC_CLK_TCK")
btime = next(int(l.split()[1]) for l in open("/proc/stat") if l.startswith("btime"))
compared = total = 0
for instance, pid in REPLICAS.items():
    stat = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()  # fields from 3 (state) on
    limits = open(f"/proc/{pid}/limits").read()
    rss, vsize = int(stat[21]) * os.sysconf("SC_PAGE_SIZE"), int(stat[20])
    kernel = {  # name: (the kernel's figure now, the difference allowed between the last scrape and now)
        "process_start_time_seconds": (btime + int(stat[19]) / ticks, 1.5),
        "process_cpu_seconds_total": ((int(stat[11]) + int(stat[12])) / ticks, 1.0),
        "process_resident_memory_bytes": (rss, rss / 4),
        "process_virtual_memory_bytes": (vsize, vsize / 4),
        "process_open_fds": (len(os.listdir(f"/proc/{pid}/fd")), 8),
        "process_max_fds": (int(re.search(r"Max open files\s+(\d+)", limits).group(1)), 0),
    }
    if LIMITS[instance] is not None:
        kernel["feedproxy_memory_limit_bytes"] = (LIMITS[instance], 0)
    elif value(f'feedproxy_memory_limit_bytes{{instance="{instance}"}}') is not None:
        fail(f"feedproxy_memory_limit_bytes{{instance=\"{instance}\"}} is present, but the kernel reports no memory limit for it")
    total += len(kernel)
    for name, (want, slack) in kernel.items():
        got = value(f'{name}{{job="feedproxy", instance="{instance}"}}')
        if got is None:
            continue  # reported as missing above
        compared += 1
        if abs(got - want) > slack:
            fail(f"{name}{{instance=\"{instance}\"}} is {got:g}, /proc/{pid} says {want:g} (allowed difference {slack:g})")
if value("count(changes(process_start_time_seconds[1m]) > 0)"):
    fail("process_start_time_seconds changed between scrapes of one process (it must be a constant)")
version = re.search(r'static let version = "([^"]+)"', open("Sources/Service/Configuration/Configuration.swift").read()).group(1)
if value("count(feedproxy_build_info)") is not None and not value(f'count(feedproxy_build_info{{version="{version}"}} == 1)'):
    fail(f"feedproxy_build_info does not carry version=\"{version}\" with value 1")

absent = [n for n in sorted(names & set(CONDITIONAL)) if not query(f'count({{__name__="{n}"}})')["data"]["result"]]
print(f"rules: {len(groups)} group(s), {len(rules)} rules loaded and healthy; {len(targets)} targets up")
print(f"queries: {n_alerts} alert expressions (true now: {', '.join(would_fire) or 'none'}) and {len(exprs) - n_alerts} dashboard "
      f"queries evaluated without error ({len(exprs) - n_alerts - len(empty)} with data; empty now: {', '.join(empty) or 'none'})")
print(f"metrics: {len(names) - len(missing) - len(absent)} of {len(names)} referenced names in the scrape"
      + "".join(f"; {n} absent as allowed ({CONDITIONAL[n]})" for n in absent))
off = sum(f.startswith("process_") or f.startswith("feedproxy_memory_limit") for f in failures)
print(f"process: {compared} of {total} figures scraped and compared with /proc/<pid> and the cgroup of the {len(REPLICAS)} replicas, {off} off")
for f in failures:
    print("FAIL: " + f)
sys.exit(1 if failures else 0)
PY
echo "prometheus-check: $([ $status = 0 ] && echo passed || echo FAILED) in $(($(date +%s) - started)) s (Prometheus $(prometheus --version 2>&1 | awk 'NR == 1 {print $3}'))"
exit $status
