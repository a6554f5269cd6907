#!/usr/bin/env python3
"""What the schema validators cannot know: the deployment files agree with FeedProxy
and with each other (make deploy-check).

Usage: deploy-policy.py [DEPLOY_DIR]   (default: deploy/ next to this script's parent)

Exits 1 listing every violation. Needs PyYAML (in deploy-check's virtualenv).
"""

import base64
import ipaddress
import math
import os
import pathlib
import re
import sys

import yaml

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
DEPLOY = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "deploy"
K8S = DEPLOY / "kubernetes"

# Settings that carry a password: the Secret only, never the ConfigMap or a literal env value.
SECRET_SETTINGS = ("REDIS_URL", "REDIS_PASSWORD", "REDIS_SENTINEL_PASSWORD")

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


# The settings reference is generated from --help and a test keeps it identical, so it names
# every setting, the upstreams' own (Sources/Service/Catalog/) included.
reference = (ROOT / "docs/configuration.md").read_text(encoding="utf-8")
known_settings = set(re.findall(r"^\| `([A-Z0-9_]+)` \| `--", reference, re.M))
check(len(known_settings) > 30, "could not read the settings from docs/configuration.md")
version_match = re.search(r'static let version = "([^"]+)"', (ROOT / "Sources/Service/Configuration/Configuration.swift").read_text(encoding="utf-8"))
version = version_match.group(1) if version_match else "?"


def check_settings(where: str, env: dict) -> None:
    for name, value in env.items():
        check(name in known_settings, f"{where}: {name} is not a FeedProxy setting (docs/configuration.md)")
        check(isinstance(value, str), f"{where}: {name} must be a string, got {value!r}")


def check_redis_args(where: str, settings: dict) -> None:
    check(settings.get("maxmemory-policy") == "volatile-lru", f"{where}: maxmemory-policy must be volatile-lru (noeviction turns a full cache into write errors)")
    check(bool(settings.get("maxmemory")) and settings.get("maxmemory") != "0", f"{where}: maxmemory must be set (0 is unbounded)")
    check(settings.get("save") in ('""', ""), f'{where}: save must be "" (no RDB snapshots)')
    check(settings.get("appendonly") == "no", f"{where}: appendonly must be no")


def cidrs(where: str, text: str) -> list:
    """TRUSTED_PROXIES as FeedProxy reads it: CIDR ranges separated by commas or spaces."""
    ranges = []
    for item in re.split(r"[,\s]+", text.strip()):
        if not item:
            continue
        try:
            ranges.append(ipaddress.ip_network(item, strict=False))
        except ValueError:
            errors.append(f"{where}: TRUSTED_PROXIES must be CIDR ranges, got {item!r}")
    for r in ranges:
        check(r.prefixlen > 0, f"{where}: TRUSTED_PROXIES must not contain {r}: it trusts every peer, so any client names itself")
    return ranges


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
# The client: nginx appends the address it saw (a bare $http_x_forwarded_for would pass on
# whatever the client wrote, and FeedProxy would then believe it), and does not itself
# take the client's address from a header anyone may send.
check(re.search(r"proxy_set_header\s+X-Forwarded-For\s+\$proxy_add_x_forwarded_for;", nginx_code) is not None,
      "nginx: proxy_set_header X-Forwarded-For must be $proxy_add_x_forwarded_for (the address nginx saw, last)")
for source in re.findall(r"set_real_ip_from\s+([^\s;]+)", nginx_code):
    check(source not in ("0.0.0.0/0", "::/0", "all"), f"nginx: set_real_ip_from {source} lets every client choose its address")

# --- compose: who the client is (issue 19) ---------------------------------------
# Every request reaches the replicas from nginx: TRUSTED_PROXIES must name nginx's fixed
# address, and nothing wider than the compose network (a replica, Redis or the gateway
# must not be able to name clients; anything outside the network is not a proxy here).
networks = compose.get("networks") or {}
ipam = ((networks.get("default") or {}).get("ipam") or {}).get("config") or []
subnet = None
ip_range = None
if ipam:
    try:
        subnet = ipaddress.ip_network(ipam[0].get("subnet", ""))
        ip_range = ipaddress.ip_network(ipam[0]["ip_range"]) if ipam[0].get("ip_range") else None
    except ValueError as e:
        errors.append(f"compose: networks.default.ipam: {e}")
check(subnet is not None, "compose: networks.default must have a fixed ipam subnet (nginx's address is in TRUSTED_PROXIES)")
nginx_networks = services.get("nginx", {}).get("networks") or {}
nginx_address = (nginx_networks.get("default") or {}).get("ipv4_address") if isinstance(nginx_networks, dict) else None
nginx_ip = None
try:
    nginx_ip = ipaddress.ip_address(nginx_address) if nginx_address else None
except ValueError:
    errors.append(f"compose nginx: ipv4_address {nginx_address!r} is not an address")
check(nginx_ip is not None, "compose nginx: must have a fixed ipv4_address on the default network (TRUSTED_PROXIES names it)")
if subnet and nginx_ip:
    check(nginx_ip in subnet, f"compose nginx: ipv4_address {nginx_ip} must be inside the subnet {subnet}")
    check(ip_range is None or nginx_ip not in ip_range, f"compose nginx: ipv4_address {nginx_ip} must be outside ip_range {ip_range} (another container could take it)")
for name in replicas:
    where = f"compose {name}"
    trusted = str(services[name].get("environment", {}).get("TRUSTED_PROXIES", ""))
    ranges = cidrs(where, trusted)
    check(bool(ranges), f"{where}: TRUSTED_PROXIES must be set to nginx's address, or every client is 'nginx' for the per-client quota")
    if nginx_ip and ranges:
        check(any(nginx_ip in r for r in ranges), f"{where}: TRUSTED_PROXIES {trusted} must cover nginx's address {nginx_ip}")
    if subnet:
        for r in ranges:
            check(r.version == subnet.version and r.subnet_of(subnet), f"{where}: TRUSTED_PROXIES must not be broader than the compose subnet {subnet}, got {r}")

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
for key in SECRET_SETTINGS:
    check(key not in config, f"ConfigMap feedproxy: {key} must come from a Secret (it may carry a password), not the ConfigMap")
# Issue 56: the ConfigMap states every upstream's rate limit, as --help lists them (the
# reference is --help, word for word), and no other: a new upstream's limit missing here
# would run a deployment on a default nobody chose; one --help does not know is a typo or
# an upstream that is gone.
RATE_LIMIT = re.compile(r"^RATE_LIMIT_[A-Z0-9_]+_PER_MIN$")
rate_limits = {name for name in known_settings if RATE_LIMIT.match(name)}
check(bool(rate_limits), "docs/configuration.md (--help) lists no RATE_LIMIT_*_PER_MIN")
stated = {name for name in config if RATE_LIMIT.match(name)}
for name in sorted(rate_limits - stated):
    check(False, f"ConfigMap feedproxy: {name} missing: --help lists it (an upstream's budget), so the deployment must state it")
for name in sorted(stated - rate_limits):
    check(False, f"ConfigMap feedproxy: {name} is a rate limit --help does not list: each must be one of {', '.join(sorted(rate_limits))}")
for name in sorted(stated):
    try:
        ok = float(config[name]) > 0
    except (TypeError, ValueError):
        ok = False
    check(ok, f"ConfigMap feedproxy: {name} must be a positive number of requests per minute, got {config[name]!r}")


def secret_data(name: str):
    obj = objects.get(("Secret", name))
    if obj is None:
        return None
    data = {k: base64.b64decode(v).decode() for k, v in (obj.get("data") or {}).items()}
    data.update(obj.get("stringData") or {})
    return data


# What the FeedProxy container's environment will be: the ConfigMap, the Secrets it reads,
# its own env (Kubernetes' precedence: env over envFrom, later envFrom over earlier).
environment = dict(config)
secrets_read = []
if deployment:
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    for source in container.get("envFrom", []):
        if "secretRef" in source:
            name = source["secretRef"]["name"]
            secrets_read.append(name)
            data = secret_data(name)
            check(data is not None or source["secretRef"].get("optional") is not True, f"Deployment: envFrom Secret {name} is optional: a missing Secret must stop the pod, not drop Redis unnoticed")
            if data is not None:
                check_settings(f"Secret {name}", data)
                environment.update({source.get("prefix", "") + k: v for k, v in data.items()})
        elif "configMapRef" in source and source["configMapRef"]["name"] != "feedproxy":
            environment.update(objects.get(("ConfigMap", source["configMapRef"]["name"]), {}).get("data", {}))
    for e in container.get("env", []):
        check(e.get("name") not in SECRET_SETTINGS or "value" not in e, f"Deployment: {e.get('name')} must come from a Secret, not a literal env value")
        if "value" in e:
            environment[e["name"]] = e["value"]
        elif "secretKeyRef" in e.get("valueFrom", {}):
            ref = e["valueFrom"]["secretKeyRef"]
            secrets_read.append(ref["name"])
            value = (secret_data(ref["name"]) or {}).get(ref["key"])
            if value is not None:
                environment[e["name"]] = value
check(("Secret", "feedproxy") in objects or "feedproxy" in secrets_read, "kubernetes: REDIS_URL belongs in the Secret feedproxy (feedproxy-secret.yaml), read by the Deployment")
for (kind, name) in objects:
    if kind == "Secret" and name.startswith("feedproxy"):
        check(name in secrets_read, f"Secret {name}: the Deployment must read it (envFrom secretRef or env valueFrom secretKeyRef)")
# Created out of band (the file deleted, as feedproxy-secret.yaml says): its values are unknown here.
secret_out_of_band = any(("Secret", name) not in objects for name in secrets_read)

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
    # Issue 20: while Redis is down every pod spends limit / RATE_LIMIT_FALLBACK_REPLICAS on
    # its own, so the divisor must count every pod that can run at once: the HPA's maximum
    # (or the fixed replica count) plus the rollout's surge (a percentage rounds up, as the
    # Deployment controller rounds maxSurge).
    most = hpa["spec"]["maxReplicas"] if hpa else spec.get("replicas", 1)
    strategy = spec.get("strategy", {})
    surge = 0
    if strategy.get("type", "RollingUpdate") == "RollingUpdate":
        raw = str(strategy.get("rollingUpdate", {}).get("maxSurge", "25%"))
        surge = math.ceil(most * float(raw[:-1]) / 100) if raw.endswith("%") else int(raw)
    fallback = str(environment.get("RATE_LIMIT_FALLBACK_REPLICAS", "1"))
    check(fallback.isdigit() and int(fallback) >= most + surge,
          f"ConfigMap: RATE_LIMIT_FALLBACK_REPLICAS ({fallback}) must be at least {'the HPA maxReplicas' if hpa else 'replicas'} ({most}) "
          f"+ maxSurge ({surge}) = {most + surge}, or a rollout at full scale exceeds the upstreams' budgets while Redis is down")

    # Issue 19: who the client is. Either a LoadBalancer/NodePort Service that keeps the
    # client's address (externalTrafficPolicy: Local), and then nobody's X-Forwarded-For
    # is believed; or a ClusterIP Service behind an Ingress controller, and then
    # TRUSTED_PROXIES names the controller pods' range (private addresses: a pod CIDR).
    service = objects.get(("Service", "feedproxy"), {}).get("spec", {})
    service_type = service.get("type", "ClusterIP")
    trusted = str(environment.get("TRUSTED_PROXIES", ""))
    ranges = cidrs("Deployment environment", trusted)
    if service_type in ("LoadBalancer", "NodePort"):
        check(service.get("externalTrafficPolicy") == "Local",
              f"Service feedproxy: a {service_type} Service must have externalTrafficPolicy: Local (Cluster SNATs every client to a node's address)")
        check(not ranges, f"ConfigMap: TRUSTED_PROXIES ({trusted}) must be unset with a {service_type} Service: peers are the clients, and their X-Forwarded-For must not be believed")
    elif service_type == "ClusterIP":
        check(bool(ranges), "ConfigMap: TRUSTED_PROXIES must name the ingress controller pods' range (the pod CIDR) with a ClusterIP Service, "
              "or every client is the ingress controller; or use a LoadBalancer Service with externalTrafficPolicy: Local")
        for r in ranges:
            check(r.is_private, f"ConfigMap: TRUSTED_PROXIES must be the cluster's (private) pod CIDR, got the public range {r}")

redis_service = objects.get(("Service", "redis"))
if redis_service or ("ConfigMap", "redis") in objects or ("Deployment", "redis") in objects:
    check(redis_service is not None, "kubernetes: Service redis missing")
    port = redis_service["spec"]["ports"][0]["port"] if redis_service else 6379
    check(secret_out_of_band or str(environment.get("REDIS_URL", "")).startswith(f"redis://redis:{port}/"), f"Secret feedproxy: REDIS_URL must be redis://redis:{port}/<db>")
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
    check(secret_out_of_band or bool(environment.get("REDIS_URL")), "Secret feedproxy: without the in-cluster Redis, REDIS_URL must name the managed one")

# --- kubernetes: the Sentinel component (issue 20) -------------------------------
# components/sentinel patches the base: the sentinels and the master name in the ConfigMap,
# the passwords in the Secret, the single Redis dropped. Applied here to the base objects
# above (strategic merge of maps, null deletes a key, $patch: delete drops an object:
# all the component may use; anything else is reported rather than guessed), then checked.
# deploy-check also builds it with kustomize; SENTINEL_RENDER names that build, which must
# agree with this one.
SENTINEL = K8S / "components/sentinel"


def merge(target: dict, patch: dict, where: str) -> dict:
    out = dict(target)
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        elif isinstance(v, dict):
            out[k] = merge(out.get(k) if isinstance(out.get(k), dict) else {}, v, f"{where}.{k}")
        elif isinstance(v, list):
            errors.append(f"{where}.{k}: a list in a patch (deploy-policy.py merges maps only)")
        else:
            out[k] = v
    return out


def sentinel_render() -> dict:
    component = load(SENTINEL / "kustomization.yaml") or {}
    check(component.get("kind") == "Component", "components/sentinel: kustomization.yaml must be a kustomize Component")
    check(not (set(component) - {"apiVersion", "kind", "patches"}), f"components/sentinel: only patches expected, got {sorted(component)}")
    rendered = {key: doc for key, doc in objects.items()}
    for entry in component.get("patches", []):
        if "path" in entry:
            docs = [d for d in yaml.safe_load_all((SENTINEL / entry["path"]).read_text(encoding="utf-8")) if d]
            where = f"components/sentinel/{entry['path']}"
        else:
            docs = [d for d in yaml.safe_load_all(entry.get("patch", "")) if d]
            where = "components/sentinel: inline patch"
        check(len(docs) == 1 and not (set(entry) - {"path", "patch"}), f"{where}: one strategic-merge patch, no target selectors")
        for doc in docs:
            key = (doc.get("kind"), (doc.get("metadata") or {}).get("name"))
            if key not in rendered:
                errors.append(f"{where}: patches {key[0]} {key[1]}, which the base does not have")
                continue
            if doc.get("$patch") == "delete":
                del rendered[key]
            else:
                body = {k: v for k, v in doc.items() if k not in ("apiVersion", "kind", "metadata")}
                rendered[key] = merge(rendered[key], body, f"{where}")
    return rendered


def data_of(obj) -> dict:
    data = {k: base64.b64decode(v).decode() for k, v in ((obj or {}).get("data") or {}).items()}
    data.update((obj or {}).get("stringData") or {})
    return data


if not (SENTINEL / "kustomization.yaml").exists():
    errors.append("kubernetes: components/sentinel/kustomization.yaml missing (the Sentinel variant)")
else:
    rendered = sentinel_render()
    s_config = (rendered.get(("ConfigMap", "feedproxy")) or {}).get("data") or {}
    s_secret_obj = rendered.get(("Secret", "feedproxy"))
    s_secret = data_of(s_secret_obj)
    check_settings("components/sentinel: ConfigMap feedproxy", s_config)
    check_settings("components/sentinel: Secret feedproxy", s_secret)
    sentinels = str(s_config.get("REDIS_SENTINELS", ""))
    check(bool(sentinels.strip()), "components/sentinel: the ConfigMap must set REDIS_SENTINELS (host:port of each sentinel)")
    for item in filter(None, (x.strip() for x in sentinels.split(","))):
        host, _, port = item.rpartition(":")
        check(bool(host) and port.isdigit() and 1 <= int(port) <= 65535, f"components/sentinel: REDIS_SENTINELS entry {item!r} is not host:port")
    check(bool(str(s_config.get("REDIS_SENTINEL_MASTER", "")).strip()), "components/sentinel: the ConfigMap must set REDIS_SENTINEL_MASTER (required with REDIS_SENTINELS)")
    for key in SECRET_SETTINGS:
        check(key not in s_config, f"components/sentinel: {key} must be in the Secret feedproxy, not the ConfigMap")
    check(s_secret_obj is not None and "REDIS_PASSWORD" in s_secret, "components/sentinel: REDIS_PASSWORD must be in the Secret feedproxy")
    for key in ("Deployment", "Service", "ConfigMap", "NetworkPolicy"):
        check((key, "redis") not in rendered, f"components/sentinel: must drop the base's single Redis ({key} redis): nothing uses it")
    check(("Deployment", "feedproxy") in rendered and rendered[("Deployment", "feedproxy")] == objects.get(("Deployment", "feedproxy")),
          "components/sentinel: must leave Deployment feedproxy as the base has it (it reads the ConfigMap and the Secret)")
    render = os.environ.get("SENTINEL_RENDER")
    if render:
        built = {(d["kind"], d["metadata"]["name"]): d for d in yaml.safe_load_all(pathlib.Path(render).read_text(encoding="utf-8")) if d}
        check(set(built) == set(rendered), f"components/sentinel: kustomize builds {sorted(set(built) ^ set(rendered))} differently from deploy-policy.py")
        check(((built.get(("ConfigMap", "feedproxy")) or {}).get("data") or {}) == s_config,
              "components/sentinel: kustomize's ConfigMap feedproxy differs from deploy-policy.py's")
        check(data_of(built.get(("Secret", "feedproxy"))) == s_secret, "components/sentinel: kustomize's Secret feedproxy differs from deploy-policy.py's")

if errors:
    print("deploy policy: %d problem(s)" % len(errors))
    for e in errors:
        print("  - " + e)
    sys.exit(1)
print(f"deploy policy: compose ({len(replicas)} replicas), nginx upstream and {len(objects)} Kubernetes objects and the Sentinel component agree with FeedProxy {version}")
