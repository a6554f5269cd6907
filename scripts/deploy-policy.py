#!/usr/bin/env python3
"""What the schema validators cannot know: the deployment files agree with FeedProxy
and with each other (make deploy-check).

Usage: deploy-policy.py [DEPLOY_DIR]   (default: deploy/ next to this script's parent)

Exits 1 listing every violation. Needs PyYAML (in deploy-check's virtualenv).
"""

import pathlib
import re
import sys

import yaml

ROOT = pathlib.Path(__file__).resolve().parent.parent
DEPLOY = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "deploy"
K8S = DEPLOY / "kubernetes"

# Issue 10's settings, added to Options.swift in parallel with these files. Once they
# are there this set is redundant (but harmless).
ISSUE_10_SETTINGS = {
    "REDIS_URL",
    "REDIS_TIMEOUT_MS",
    "REDIS_CONNECT_TIMEOUT_MS",
    "L2_MAX_VALUE_BYTES",
    "RATE_LIMIT_FALLBACK_REPLICAS",
}

errors: list[str] = []


def check(condition: bool, message: str) -> None:
    if not condition:
        errors.append(message)


def load(path: pathlib.Path):
    with path.open(encoding="utf-8") as f:
        return yaml.safe_load(f)


def seconds(value) -> float:
    """Compose durations such as 20s, 1m30s, or a bare number of seconds."""
    if isinstance(value, (int, float)):
        return float(value)
    total, units = 0.0, {"h": 3600, "m": 60, "s": 1, "ms": 0.001}
    for number, unit in re.findall(r"(\d+(?:\.\d+)?)(ms|h|m|s)", str(value)):
        total += float(number) * units[unit]
    return total


options_swift = (ROOT / "Sources/Service/Options.swift").read_text(encoding="utf-8")
known_settings = set(re.findall(r'env: "([A-Z0-9_]+)"', options_swift)) | ISSUE_10_SETTINGS
check(len(known_settings) > 30, "could not read the settings from Sources/Service/Options.swift")
version_match = re.search(r'static let version = "([^"]+)"', (ROOT / "Sources/Service/Configuration.swift").read_text(encoding="utf-8"))
version = version_match.group(1) if version_match else "?"


def check_settings(where: str, env: dict) -> None:
    for name, value in env.items():
        check(name in known_settings, f"{where}: {name} is not a FeedProxy setting (Options.swift)")
        check(isinstance(value, str), f"{where}: {name} must be a string, got {value!r}")


def check_redis_args(where: str, settings: dict) -> None:
    check(settings.get("maxmemory-policy") == "allkeys-lru", f"{where}: maxmemory-policy must be allkeys-lru (noeviction turns a full cache into write errors)")
    check(bool(settings.get("maxmemory")) and settings.get("maxmemory") != "0", f"{where}: maxmemory must be set (0 is unbounded)")
    check(settings.get("save") in ('""', ""), f'{where}: save must be "" (no RDB snapshots)')
    check(settings.get("appendonly") == "no", f"{where}: appendonly must be no")


# --- compose ---------------------------------------------------------------------
compose = load(DEPLOY / "compose.yaml")
services = compose.get("services", {})
replicas = sorted(name for name in services if re.fullmatch(r"feedproxy-\d+", name))
check(len(replicas) >= 2, "compose: expected several feedproxy-N services")
redis_command = services.get("redis", {}).get("command", [])
check(isinstance(redis_command, list) and redis_command[:1] == ["redis-server"], "compose: redis command must be an exec-form redis-server list")
args = dict(zip(redis_command[1::2], redis_command[2::2])) if isinstance(redis_command, list) else {}
check_redis_args("compose redis", {k.lstrip("-"): v for k, v in args.items()})
for name in replicas:
    service = services[name]
    where = f"compose {name}"
    env = service.get("environment", {})
    check(isinstance(env, dict), f"{where}: environment must be a mapping")
    check_settings(where, env)
    check(service.get("image") == f"feedproxy:{version}", f"{where}: image must be feedproxy:{version} (Configuration.version)")
    check(service.get("read_only") is True, f"{where}: read_only must be true")
    check(str(service.get("user", "")).split(":")[0] == "10001", f"{where}: user must be 10001")
    check(str(env.get("REDIS_URL", "")).startswith("redis://redis:"), f"{where}: REDIS_URL must point at the redis service")
    check(env.get("RATE_LIMIT_FALLBACK_REPLICAS") == str(len(replicas)), f"{where}: RATE_LIMIT_FALLBACK_REPLICAS must be {len(replicas)} (the replica count)")
    budget = float(env.get("SHUTDOWN_DELAY_S", 0)) + float(env.get("DRAIN_TIMEOUT_S", 10))
    check(seconds(service.get("stop_grace_period", 10)) > budget, f"{where}: stop_grace_period must exceed SHUTDOWN_DELAY_S + DRAIN_TIMEOUT_S = {budget:g}s")
    check("healthcheck" in service, f"{where}: healthcheck missing")
    check(services.get("nginx", {}).get("depends_on", {}).get(name, {}).get("condition") == "service_healthy", f"compose nginx: must wait for {name} to be healthy")
    redis_dependency = service.get("depends_on", {}).get("redis", {})
    check(redis_dependency.get("condition") == "service_started", f"{where}: depends on redis with service_started only (Redis is optional)")

# --- nginx -----------------------------------------------------------------------
nginx = (DEPLOY / "nginx/nginx.conf").read_text(encoding="utf-8")
nginx_code = "\n".join(line.split("#", 1)[0] for line in nginx.splitlines())
upstream = re.search(r"upstream\s+feedproxy\s*\{(.*?)\}", nginx_code, re.S)
check(upstream is not None, "nginx: upstream feedproxy { … } missing")
servers = re.findall(r"^\s*server\s+([^\s;]+)", upstream.group(1), re.M) if upstream else []
check(sorted(servers) == [f"{name}:8080" for name in replicas], f"nginx: upstream servers {servers} must be the compose replicas {replicas} on :8080")
for directive in [r"keepalive\s+\d+;", r"proxy_http_version\s+1\.1;", r'proxy_set_header\s+Connection\s+"";', r"proxy_set_header\s+X-Forwarded-For\s",
                  r"proxy_next_upstream\s+error\s+timeout;", r"max_fails=\d+"]:
    check(re.search(directive, nginx_code) is not None, f"nginx: {directive} missing")
check("non_idempotent" not in nginx_code, "nginx: proxy_next_upstream must not retry non-idempotent requests")

# --- kubernetes ------------------------------------------------------------------
kustomization = load(K8S / "kustomization.yaml")
listed = set(kustomization.get("resources", []))
present = {p.name for p in K8S.glob("*.yaml")} - {"kustomization.yaml"}
check(listed == present, f"kustomization.yaml lists {sorted(listed)} but the directory holds {sorted(present)}")
check(all(image.get("newTag") == version for image in kustomization.get("images", []) if image.get("name") == "feedproxy"), f"kustomization: feedproxy newTag must be {version}")

objects = {}
for path in sorted(K8S.glob("*.yaml")):
    if path.name == "kustomization.yaml":
        continue
    for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")):
        if doc:
            check("namespace" not in doc.get("metadata", {}), f"{path.name}: manifests are namespace-less")
            objects[(doc["kind"], doc["metadata"]["name"])] = doc

deployment = objects.get(("Deployment", "feedproxy"))
config = objects.get(("ConfigMap", "feedproxy"), {}).get("data", {})
check(deployment is not None, "kubernetes: Deployment feedproxy missing")
check(bool(config), "kubernetes: ConfigMap feedproxy missing")
check_settings("ConfigMap feedproxy", config)
if deployment:
    spec = deployment["spec"]
    pod = spec["template"]["spec"]
    labels = spec["template"]["metadata"]["labels"]
    container = pod["containers"][0]
    check(spec.get("replicas") == 3, "Deployment: 3 replicas")
    check(container["image"] == f"feedproxy:{version}", f"Deployment: image must be feedproxy:{version}")
    check({"configMapRef": {"name": "feedproxy"}} in container.get("envFrom", []), "Deployment: env from ConfigMap feedproxy")
    pod_security = pod.get("securityContext", {})
    security = container.get("securityContext", {})
    check(pod_security.get("runAsNonRoot") is True and pod_security.get("runAsUser") == 10001, "Deployment: runAsNonRoot, runAsUser 10001")
    check(pod_security.get("seccompProfile", {}).get("type") == "RuntimeDefault", "Deployment: seccompProfile RuntimeDefault")
    check(security.get("readOnlyRootFilesystem") is True, "Deployment: readOnlyRootFilesystem")
    check(security.get("allowPrivilegeEscalation") is False, "Deployment: allowPrivilegeEscalation false")
    check(security.get("capabilities", {}).get("drop") == ["ALL"], "Deployment: capabilities drop ALL")
    check(container.get("readinessProbe", {}).get("httpGet", {}).get("path") == "/readyz", "Deployment: readinessProbe on /readyz")
    check(container.get("livenessProbe", {}).get("httpGet", {}).get("path") == "/healthz", "Deployment: livenessProbe on /healthz")
    check("startupProbe" in container, "Deployment: startupProbe")
    check("preStop" not in container.get("lifecycle", {}), "Deployment: no preStop hook (SHUTDOWN_DELAY_S does its job)")
    check(all(k in container.get("resources", {}).get(kind, {}) for kind in ("requests", "limits") for k in ("memory",)), "Deployment: memory requests and limits")
    budget = float(config.get("SHUTDOWN_DELAY_S", 0)) + float(config.get("DRAIN_TIMEOUT_S", 10))
    check(float(config.get("SHUTDOWN_DELAY_S", 0)) > 0, "ConfigMap: SHUTDOWN_DELAY_S must be > 0 behind a Service")
    check(pod.get("terminationGracePeriodSeconds", 30) > budget, f"Deployment: terminationGracePeriodSeconds must exceed SHUTDOWN_DELAY_S + DRAIN_TIMEOUT_S = {budget:g}")
    keys = {c["topologyKey"] for c in pod.get("topologySpreadConstraints", [])}
    check({"topology.kubernetes.io/zone", "kubernetes.io/hostname"} <= keys, "Deployment: topology spread across zones and hostnames")
    for c in pod.get("topologySpreadConstraints", []):
        check(c.get("labelSelector", {}).get("matchLabels", {}).items() <= labels.items(), f"Deployment: spread constraint on {c['topologyKey']} must select the pods")
    for kind in ("Service", "PodDisruptionBudget"):
        obj = objects.get((kind, "feedproxy"))
        check(obj is not None, f"kubernetes: {kind} feedproxy missing")
        if obj:
            selector = obj["spec"]["selector"]
            selector = selector.get("matchLabels", selector) if kind != "Service" else selector
            check(selector.items() <= labels.items(), f"{kind} feedproxy: selector {selector} does not match the pods' labels")
    hpa = objects.get(("HorizontalPodAutoscaler", "feedproxy"))
    check(hpa is not None, "kubernetes: HorizontalPodAutoscaler feedproxy missing")
    if hpa:
        check(hpa["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "feedproxy"}, "HPA: must scale Deployment feedproxy")
        check(hpa["spec"].get("minReplicas", 1) <= spec.get("replicas", 1) <= hpa["spec"]["maxReplicas"], "HPA: Deployment replicas outside min..max")
        check(config.get("RATE_LIMIT_FALLBACK_REPLICAS") == str(hpa["spec"]["maxReplicas"]), "ConfigMap: RATE_LIMIT_FALLBACK_REPLICAS must equal the HPA's maxReplicas")

redis_service = objects.get(("Service", "redis"))
if redis_service or ("ConfigMap", "redis") in objects or ("Deployment", "redis") in objects:
    check(redis_service is not None, "kubernetes: Service redis missing")
    port = redis_service["spec"]["ports"][0]["port"] if redis_service else 6379
    check(config.get("REDIS_URL", "").startswith(f"redis://redis:{port}/"), f"ConfigMap: REDIS_URL must be redis://redis:{port}/<db>")
    conf = objects.get(("ConfigMap", "redis"), {}).get("data", {}).get("redis.conf", "")
    settings = {}
    for line in conf.splitlines():
        parts = line.split("#", 1)[0].split(None, 1)
        if len(parts) == 2:
            settings[parts[0]] = parts[1].strip()
    check_redis_args("redis.conf", settings)
    redis = objects.get(("Deployment", "redis"))
    check(redis is not None, "kubernetes: Deployment redis missing")
    if redis:
        pod = redis["spec"]["template"]["spec"]
        check(pod.get("securityContext", {}).get("runAsNonRoot") is True, "Deployment redis: runAsNonRoot")
        check("/usr/local/etc/redis/redis.conf" in pod["containers"][0].get("command", []), "Deployment redis: must start with the ConfigMap's redis.conf")
        check(redis_service is None or redis_service["spec"]["selector"].items() <= redis["spec"]["template"]["metadata"]["labels"].items(), "Service redis: selector does not match")
else:
    check(bool(config.get("REDIS_URL")), "ConfigMap: without the in-cluster Redis, REDIS_URL must name the managed one")

if errors:
    print("deploy policy: %d problem(s)" % len(errors))
    for e in errors:
        print("  - " + e)
    sys.exit(1)
print(f"deploy policy: compose ({len(replicas)} replicas), nginx upstream and {len(objects)} Kubernetes objects agree with FeedProxy {version}")
