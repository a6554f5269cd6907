#!/usr/bin/env bash
# Validates deploy/ offline (make deploy-check):
#  1. yamllint --strict (.yamllint) on every YAML file under deploy/;
#  2. kubernetes-validate --strict on every manifest in deploy/kubernetes/, against the
#     oldest and the newest Kubernetes this project supports (schemas bundled in the
#     package: no cluster, no network); and on the base with the optional Sentinel
#     component (components/sentinel) applied, as kubectl's kustomize builds it (skipped,
#     saying so, where kubectl is missing; deploy-policy.py checks the component anyway);
#  3. check-jsonschema on deploy/compose.yaml against the compose-spec schema that
#     check-jsonschema vendors (--builtin-schema vendor.compose-spec: no network);
#  4. nginx -t on deploy/nginx/nginx.conf. nginx resolves upstream host names when it
#     loads a configuration and feedproxy-1..3 exist only inside compose's network, so the
#     copy tested has them replaced by 127.0.0.1 (and pid moved to a scratch directory);
#     everything else is tested as written;
#  5. redis-server (Debian's, 7.x) loads the Kubernetes redis.conf and, separately, the
#     compose command's arguments, and must report volatile-lru, a maxmemory, no save,
#     no appendonly (on a unix socket in a scratch directory; no TCP port, no daemon);
#  6. scripts/checks/deploy-policy.py: what no schema knows (settings named as in docs/configuration.md,
#     the ConfigMap's RATE_LIMIT_*_PER_MIN exactly those --help lists (docs/configuration.md is
#     --help word for word), volatile-lru and no persistence, probes, grace periods, selectors, image version,
#     who the client is: TRUSTED_PROXIES against nginx's address and the Service type,
#     REDIS_URL in a Secret, the fallback share against the HPA maximum + surge, the
#     Sentinel component's REDIS_SENTINELS/REDIS_SENTINEL_MASTER and passwords in the Secret…);
#  7. each validator is shown a deliberately broken copy and must reject it (for
#     deploy-policy.py also: an upstream's rate limit left out of the ConfigMap or one --help
#     does not know, compose trusting more than nginx, no TRUSTED_PROXIES behind
#     the ClusterIP Service, a fallback share below the HPA maximum + surge, REDIS_URL in
#     the ConfigMap instead of the Secret, a Sentinel component without the master name or
#     with a password in the ConfigMap, and one whose patch kubernetes-validate rejects).
#  8. deploy/prometheus/ and the optional kustomize component
#     deploy/kubernetes/components/monitoring/ (custom resources: kubernetes-validate
#     has no schema for them and skips that directory): promtool check rules on
#     alerts.yml and on the PrometheusRule's groups, promtool test rules, promtool check
#     config on the example prometheus.yml, and scripts/checks/monitoring-check.py (the
#     PrometheusRule equals alerts.yml, the ServiceMonitor selects Service feedproxy,
#     the dashboard is provisioning-ready); their broken copies are in step 7's list.
# Tools are installed when missing: a virtualenv under .build/ (PyPI), nginx and
# redis-tools (apt), Debian's prometheus for promtool (scripts/setup/install-prometheus.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
K8S_VERSIONS=${K8S_VERSIONS:-"1.30.0 1.37.0"}
VENV=.build/deploy-venv
REQUIREMENTS="kubernetes-validate==1.37.0 yamllint==1.38.0 check-jsonschema==0.39.0"
started=$(date +%s%N)

# --- tools -------------------------------------------------------------------------
if [ "$(cat "$VENV/requirements" 2>/dev/null)" != "$REQUIREMENTS" ]; then
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  # shellcheck disable=SC2086
  "$VENV/bin/python" -m pip install -q $REQUIREMENTS
  echo "$REQUIREMENTS" >"$VENV/requirements"
fi
# nginx for nginx -t; redis-tools for redis-cli and redis-check-rdb, which is the server
# binary too (started through a symlink named redis-server; no daemon is installed).
need() {  # command package
  command -v "$1" >/dev/null 2>&1 && return
  [ "$(id -u)" = 0 ] || { echo "$1 missing (run as root or: sudo apt-get install $2)"; exit 1; }
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null
}
need nginx nginx-light
need redis-check-rdb redis-tools
scripts/setup/install-prometheus.sh >/dev/null
BIN=$VENV/bin
SCRATCH=$(mktemp -d)
REDIS_PIDS=()
cleanup() {
  local p
  for p in "${REDIS_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$SCRATCH"
}
trap cleanup EXIT
ln -s "$(command -v redis-check-rdb)" "$SCRATCH/redis-server"
# components/: kustomize Components of custom resources (checked in step 8 instead).
MANIFESTS=$(find deploy/kubernetes -path deploy/kubernetes/components -prune -o -name '*.yaml' ! -name kustomization.yaml -print | sort)

# --- the checks --------------------------------------------------------------------
"$BIN/yamllint" --strict -c .yamllint .yamllint deploy
echo "yamllint: clean ($(find deploy -name '*.yaml' -o -name '*.yml' | wc -l) files)"

for v in $K8S_VERSIONS; do
  # shellcheck disable=SC2086
  "$BIN/kubernetes-validate" --strict --quiet -k "$v" $MANIFESTS
done
echo "kubernetes-validate --strict: $(echo "$MANIFESTS" | wc -l) manifests valid for Kubernetes ${K8S_VERSIONS// / and }"

# A component applied to the base, as an overlay in the scratch directory would.
component_validate() {  # a deploy/kubernetes directory, a component → kustomize build with it, then kubernetes-validate
  local dir base v
  dir=$(mktemp -d "$SCRATCH/${2:-sentinel}.XXXX")
  base=$(realpath --relative-to="$dir" "$1")
  printf 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - %s\ncomponents:\n  - %s/components/%s\n' \
    "$base" "$base" "${2:-sentinel}" >"$dir/kustomization.yaml"
  kubectl kustomize "$dir" >"$dir/build.yaml" || return 1
  for v in $K8S_VERSIONS; do
    "$BIN/kubernetes-validate" --strict --quiet -k "$v" "$dir/build.yaml" >&2 || return 1
  done
  echo "$dir/build.yaml"
}
SENTINEL_RENDER=""
if command -v kubectl >/dev/null 2>&1; then
  SENTINEL_RENDER=$(component_validate deploy/kubernetes)
  echo "kustomize (kubectl $(kubectl version --client 2>/dev/null | sed -n 's/^Kustomize Version: //p')): components/sentinel applies to the base; kubernetes-validate --strict: its $(grep -c '^kind:' "$SENTINEL_RENDER") manifests valid"
  TRACING_RENDER=$(component_validate deploy/kubernetes tracing)
  grep -q 'OTEL_EXPORTER_OTLP_ENDPOINT: http' "$TRACING_RENDER"
  echo "kustomize: components/tracing applies to the base (the ConfigMap gains the OTLP endpoint); kubernetes-validate --strict: valid"
else
  echo "kubectl not found: components/sentinel is checked by deploy-policy.py only (no kustomize build, no kubernetes-validate of the patched manifests)"
fi

"$BIN/check-jsonschema" --builtin-schema vendor.compose-spec deploy/compose.yaml >/dev/null
echo "check-jsonschema: deploy/compose.yaml matches the compose-spec schema"

nginx_test() {  # nginx.conf → nginx -t on a copy with the upstream hosts on loopback
  local dir
  dir=$(mktemp -d "$SCRATCH/nginx.XXXX")
  sed -E "s/\bfeedproxy-[0-9]+:8080\b/127.0.0.1:8080/; s#^pid .*#pid $dir/nginx.pid;#" "$1" >"$dir/nginx.conf"
  # Only the upstream host names and the pid path may differ from the file as written.
  [ "$(diff "$1" "$dir/nginx.conf" | grep -c '^>')" -le 4 ] || { echo "nginx_test: unexpected substitutions"; return 1; }
  nginx -t -q -p "$dir" -e stderr -c "$dir/nginx.conf"
}
nginx_test deploy/nginx/nginx.conf
echo "nginx -t: deploy/nginx/nginx.conf is valid (nginx $(nginx -v 2>&1 | sed 's#.*/##'); upstream hosts as 127.0.0.1)"

# Redis reads both configurations itself (a unix socket in the scratch directory, no TCP
# port) and reports the settings that matter; an unknown directive or value stops it.
redis_test() {  # redis-server arguments (a config file first, if any) → 0 if Redis agrees
  local dir pid got
  dir=$(mktemp -d "$SCRATCH/redis.XXXX")
  if [ -f "${1:-}" ]; then sed "s#^dir .*#dir $dir#" "$1" >"$dir/redis.conf"; shift; set -- "$dir/redis.conf" "$@"; fi
  "$SCRATCH/redis-server" "$@" --port 0 --unixsocket "$dir/redis.sock" --dir "$dir" --daemonize no >"$dir/log" 2>&1 &
  pid=$!
  REDIS_PIDS+=("$pid")
  for _ in $(seq 100); do [ -S "$dir/redis.sock" ] || ! kill -0 "$pid" 2>/dev/null && break; sleep 0.05; done
  got=$(for k in maxmemory-policy save appendonly; do redis-cli -s "$dir/redis.sock" --raw config get "$k" 2>/dev/null | paste -sd= -; done | paste -sd' ' -)
  got="$got maxmemory>0=$(redis-cli -s "$dir/redis.sock" --raw config get maxmemory 2>/dev/null | sed -n 2p | awk '{print ($1 > 0) ? "yes" : "no"}')"
  redis-cli -s "$dir/redis.sock" shutdown nosave >/dev/null 2>&1 || kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  [ "$got" = "maxmemory-policy=volatile-lru save= appendonly=no maxmemory>0=yes" ] && return
  if grep -q FATAL "$dir/log"; then
    echo "redis-server reports: it refused the configuration, $(grep -A3 FATAL "$dir/log" | tail -2 | paste -sd' ' -)"
  else
    echo "redis-server reports: $got"
  fi
  return 1
}
"$BIN/python" -c 'import yaml; print(yaml.safe_load(open("deploy/kubernetes/redis-configmap.yaml"))["data"]["redis.conf"], end="")' >"$SCRATCH/redis.conf"
redis_test "$SCRATCH/redis.conf"
mapfile -d '' COMPOSE_REDIS < <("$BIN/python" -c 'import sys, yaml; sys.stdout.write("".join(a + "\0" for a in yaml.safe_load(open("deploy/compose.yaml"))["services"]["redis"]["command"][1:]))')
redis_test "${COMPOSE_REDIS[@]}"
echo "redis-server: the Kubernetes redis.conf and the compose command both give volatile-lru, a maxmemory, no save, no appendonly (Redis $(redis-cli --version | awk '{print $2}'))"

SENTINEL_RENDER="$SENTINEL_RENDER" "$BIN/python" scripts/checks/deploy-policy.py

"$BIN/python" scripts/checks/monitoring-check.py --groups-out "$SCRATCH/prometheusrule-groups.yml"
promtool check rules --lint-fatal deploy/prometheus/alerts.yml "$SCRATCH/prometheusrule-groups.yml" >/dev/null
promtool test rules deploy/prometheus/alerts_test.yml >/dev/null
promtool check config deploy/prometheus/prometheus.yml >/dev/null
echo "promtool: alerts.yml and the PrometheusRule's groups check, alerts_test.yml passes, prometheus.yml is valid ($(promtool --version 2>&1 | awk 'NR == 1 {print $3}'))"

# --- each validator must reject a broken copy ---------------------------------------
NEGATIVE=0
must_fail() {  # description command...
  local what=$1
  shift
  NEGATIVE=$((NEGATIVE + 1))
  if "$@" >"$SCRATCH/negative.log" 2>&1; then
    echo "deploy-check: $what was NOT rejected"
    cat "$SCRATCH/negative.log"
    exit 1
  fi
  echo "  rejected $what: $(grep -iE 'error|emerg|must|unexpected|not valid|reports' "$SCRATCH/negative.log" | grep -m1 -viE 'encountered|problem|fatal' | sed "s#$SCRATCH/##g" | cut -c1-150)"
}
broken() {  # file sed-expression → path of a changed copy (fails if sed changed nothing)
  local out
  out="$SCRATCH/broken-$(basename "$1")"
  sed -E "$2" "$1" >"$out"
  ! cmp -s "$1" "$out" || { echo "deploy-check: the negative test's edit '$2' no longer applies to $1" >&2; exit 1; }
  echo "$out"
}
must_fail "a duplicated key (yamllint)" "$BIN/yamllint" --strict -c .yamllint "$(broken deploy/kubernetes/deployment.yaml 's/^  replicas: 3$/  replicas: 3\n  replicas: 4/')"
must_fail "a misspelt field (kubernetes-validate)" "$BIN/kubernetes-validate" --strict --quiet -k 1.30.0 "$(broken deploy/kubernetes/deployment.yaml 's/readinessProbe:/readinesProbe:/')"
must_fail "a mistyped value (kubernetes-validate)" "$BIN/kubernetes-validate" --strict --quiet -k 1.30.0 "$(broken deploy/kubernetes/hpa.yaml 's/maxReplicas: 6/maxReplicas: six/')"
must_fail "an unknown service key (check-jsonschema)" "$BIN/check-jsonschema" --builtin-schema vendor.compose-spec "$(broken deploy/compose.yaml 's/^  read_only: true/  readonly: true/')"
must_fail "a bad directive argument (nginx -t)" nginx_test "$(broken deploy/nginx/nginx.conf 's/keepalive 64;/keepalive sixty-four;/')"
must_fail "an unresolvable upstream host (nginx -t)" nginx -t -q -p "$SCRATCH" -e stderr -c "$(broken deploy/nginx/nginx.conf "s/feedproxy-1:8080/feedproxy-1.invalid:8080/; s#^pid .*#pid $SCRATCH/nginx.pid;#")"
must_fail "an unknown eviction policy (redis-server)" redis_test "$(broken "$SCRATCH/redis.conf" 's/volatile-lru/volatile-lruu/')"
must_fail "noeviction (redis-server)" redis_test "${COMPOSE_REDIS[@]/volatile-lru/noeviction}"
policy_broken() {  # file-under-deploy/ sed-expression → a copy of deploy/ with that one edit
  local dir
  dir=$(mktemp -d "$SCRATCH/policy.XXXX")
  mkdir -p "$dir/kubernetes" "$dir/nginx"
  cp deploy/compose.yaml "$dir/"
  cp deploy/nginx/nginx.conf "$dir/nginx/"
  cp deploy/kubernetes/*.yaml "$dir/kubernetes/"
  cp -r deploy/kubernetes/components "$dir/kubernetes/"
  cp "$(broken "deploy/$1" "$2")" "$dir/$1"
  echo "$dir"
}
must_fail "noeviction in redis.conf (deploy-policy.py)" "$BIN/python" scripts/checks/deploy-policy.py \
  "$(policy_broken kubernetes/redis-configmap.yaml 's/maxmemory-policy volatile-lru/maxmemory-policy noeviction/')"
# Issue 19: compose trusting more than nginx (here Docker's whole 172.16.0.0/12).
must_fail "TRUSTED_PROXIES wider than the compose subnet (deploy-policy.py)" "$BIN/python" scripts/checks/deploy-policy.py \
  "$(policy_broken compose.yaml 's#TRUSTED_PROXIES: 172\.16\.238\.10/32#TRUSTED_PROXIES: 172.16.0.0/12#')"
# Issue 19: a ClusterIP Service behind an Ingress with nobody trusted: every client is the controller.
must_fail "no TRUSTED_PROXIES behind a ClusterIP Service (deploy-policy.py)" "$BIN/python" scripts/checks/deploy-policy.py \
  "$(policy_broken kubernetes/feedproxy-configmap.yaml '/^  TRUSTED_PROXIES:/d')"
# Issue 20: the fallback share counting the HPA's maximum but not the rollout's surge.
must_fail "an upstream's rate limit missing from the ConfigMap (deploy-policy.py)" "$BIN/python" scripts/checks/deploy-policy.py \
  "$(policy_broken kubernetes/feedproxy-configmap.yaml '0,/^  RATE_LIMIT_[A-Z0-9_]*_PER_MIN:/{/^  RATE_LIMIT_[A-Z0-9_]*_PER_MIN:/d}')"
must_fail "a rate limit --help does not list in the ConfigMap (deploy-policy.py)" "$BIN/python" scripts/checks/deploy-policy.py \
  "$(policy_broken kubernetes/feedproxy-configmap.yaml 's/^(  RATE_LIMIT_FALLBACK_REPLICAS:.*)$/\1\n  RATE_LIMIT_GONE_PER_MIN: "60"/')"
must_fail "RATE_LIMIT_FALLBACK_REPLICAS below maxReplicas + maxSurge (deploy-policy.py)" "$BIN/python" scripts/checks/deploy-policy.py \
  "$(policy_broken kubernetes/feedproxy-configmap.yaml 's/RATE_LIMIT_FALLBACK_REPLICAS: "7"/RATE_LIMIT_FALLBACK_REPLICAS: "6"/')"
# Issue 20: REDIS_URL back in the ConfigMap.
must_fail "REDIS_URL in the ConfigMap (deploy-policy.py)" "$BIN/python" scripts/checks/deploy-policy.py \
  "$(policy_broken kubernetes/feedproxy-configmap.yaml 's#^  REDIS_TIMEOUT_MS:#  REDIS_URL: redis://redis:6379/0\n  REDIS_TIMEOUT_MS:#')"
# Issue 20: the Sentinel component without the master name, or with a password in the ConfigMap.
must_fail "a Sentinel component without REDIS_SENTINEL_MASTER (deploy-policy.py)" "$BIN/python" scripts/checks/deploy-policy.py \
  "$(policy_broken kubernetes/components/sentinel/feedproxy-configmap.yaml '/^  REDIS_SENTINEL_MASTER:/d')"
must_fail "REDIS_SENTINEL_PASSWORD in the Sentinel component's ConfigMap (deploy-policy.py)" "$BIN/python" scripts/checks/deploy-policy.py \
  "$(policy_broken kubernetes/components/sentinel/feedproxy-configmap.yaml 's#^  REDIS_SENTINEL_MASTER: (.*)#  REDIS_SENTINEL_MASTER: \1\n  REDIS_SENTINEL_PASSWORD: EXAMPLE#')"
monitoring_broken() {  # file-under-deploy/ sed-expression → a copy of deploy/prometheus and deploy/kubernetes with that one edit
  local dir
  dir=$(mktemp -d "$SCRATCH/monitoring.XXXX")
  cp -r deploy/prometheus deploy/kubernetes "$dir/"
  cp "$(broken "deploy/$1" "$2")" "$dir/$1"
  echo "$dir"
}
must_fail "a PrometheusRule that differs from alerts.yml (monitoring-check.py)" "$BIN/python" scripts/checks/monitoring-check.py \
  "$(monitoring_broken kubernetes/components/monitoring/prometheusrule.yaml '0,/for: 5m/s//for: 6m/')"
must_fail "a ServiceMonitor on a port the Service lacks (monitoring-check.py)" "$BIN/python" scripts/checks/monitoring-check.py \
  "$(monitoring_broken kubernetes/components/monitoring/servicemonitor.yaml 's/port: http$/port: metrics/')"
must_fail "a rule expression that does not parse (promtool check rules)" promtool check rules \
  "$(broken deploy/prometheus/alerts.yml 's/expr: feedproxy_redis_up == 0/expr: feedproxy_redis_up ==/')"
must_fail "a threshold its unit test disagrees with (promtool test rules)" promtool test rules \
  "$(monitoring_broken prometheus/alerts.yml 's#process_open_fds / process_max_fds > 0.8#process_open_fds / process_max_fds > 0.9#')/prometheus/alerts_test.yml"
if command -v kubectl >/dev/null 2>&1; then
  must_fail "a misspelt field in a Sentinel component patch (kustomize build + kubernetes-validate)" component_validate \
    "$(monitoring_broken kubernetes/components/sentinel/feedproxy-secret.yaml 's/^stringData:/stringdata:/')/kubernetes"
fi
echo "negative tests: each validator rejected its broken copy ($NEGATIVE of $NEGATIVE)"

elapsed=$((($(date +%s%N) - started) / 100000000))
echo "deploy-check: passed in $((elapsed / 10)).$((elapsed % 10)) s"
