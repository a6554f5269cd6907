#!/usr/bin/env python3
"""Adapts the repository's Kubernetes manifests for `podman kube play` on a CI machine.

usage: kube-play-manifest.py DIR IMAGE PORT OUT.yaml   (probes to check on stdout)

Keeps the FeedProxy Deployment (the one whose container image names feedproxy) and the
ConfigMaps in DIR; everything else (Services, PDBs, HPAs, ...) has no podman meaning and
is left out. In the Deployment, only what this machine needs changes: hostNetwork: true
(no bridge networks here), one replica, the locally built IMAGE with imagePullPolicy
Never (no registry), HOST=127.0.0.1 and PORT as the listening port (loopback only,
a free test port), probes moved to PORT with it, containerPorts dropped (podman 4.3
refuses them on the host network), and --fixtures added to the arguments (no upstreams
reachable). Secrets the pod reads (envFrom secretRef, env valueFrom secretKeyRef) are
inlined as plain env values and the Secret objects left out: kube play would store each
Secret as a podman secret on the machine (and podman 4.3's support for them is partial),
and these are the repository's placeholders, not real credentials. Prints one line per probe for the caller:
  <kind> http :PORT/path | <kind> tcp PORT | <kind> exec <shell-quoted command>
"""
import base64
import pathlib
import shlex
import sys

import yaml

src, image, port, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
docs = []
# The base as kustomize builds it: the files its kustomization lists (optional components
# under components/ patch it only when an overlay asks for them); without one, every file
# outside components/.
base = pathlib.Path(src)
kustomization = base / "kustomization.yaml"
if kustomization.is_file():
    paths = [base / r for r in (yaml.safe_load(kustomization.read_text()) or {}).get("resources", [])]
else:
    paths = [p for p in sorted(base.rglob("*")) if "components" not in p.relative_to(base).parts]
for path in paths:
    if path.suffix in (".yaml", ".yml") and path.is_file():
        docs += [d for d in yaml.safe_load_all(path.read_text()) if isinstance(d, dict) and d.get("kind")]


def feedproxy_container(deployment):
    for c in deployment.get("spec", {}).get("template", {}).get("spec", {}).get("containers", []):
        if "feedproxy" in str(c.get("image", "")):
            return c
    return None


deployments = [d for d in docs if d["kind"] == "Deployment" and feedproxy_container(d)]
if not deployments:
    sys.exit(f"kube-play-manifest: no Deployment with a feedproxy image in {src}")
deployment = deployments[0]
pod = deployment["spec"]["template"]["spec"]
container = feedproxy_container(deployment)

# The port the manifest serves on: the PORT env, else the first containerPort, else 8080.
env = container.setdefault("env", [])
named = {p.get("name"): p.get("containerPort") for p in container.get("ports", []) if p.get("name")}
old_port = next((int(e["value"]) for e in env if e.get("name") == "PORT" and str(e.get("value", "")).isdigit()), None)
if old_port is None:
    old_port = int((container.get("ports") or [{}])[0].get("containerPort", 8080))


def set_env(name, value):
    for e in env:
        if e.get("name") == name:
            e.clear()
            e.update(name=name, value=value)
            return
    env.append({"name": name, "value": value})




def secret_values(name):
    """The Secret's keys and values (data is base64, stringData plain; stringData wins)."""
    for d in docs:
        if d["kind"] == "Secret" and d.get("metadata", {}).get("name") == name:
            values = {k: base64.b64decode(v).decode() for k, v in (d.get("data") or {}).items()}
            values.update({k: str(v) for k, v in (d.get("stringData") or {}).items()})
            return values
    return None


def inline_secrets(c):
    explicit = c.setdefault("env", [])
    names = {e.get("name") for e in explicit}
    kept = []
    for source in c.get("envFrom") or []:
        ref = source.get("secretRef")
        if ref is None:
            kept.append(source)
            continue
        values = secret_values(ref.get("name"))
        if values is None:
            if ref.get("optional"):
                continue
            sys.exit(f"kube-play-manifest: Secret {ref.get('name')} (envFrom of {c.get('name')}) is not in {src}")
        for key, value in values.items():
            key = source.get("prefix", "") + key
            if key not in names:  # as in Kubernetes: env wins over envFrom
                explicit.append({"name": key, "value": value})
                names.add(key)
    if "envFrom" in c:
        c["envFrom"] = kept
    for e in list(explicit):
        ref = (e.get("valueFrom") or {}).get("secretKeyRef")
        if ref is None:
            continue
        value = (secret_values(ref.get("name")) or {}).get(ref.get("key"))
        if value is None:
            if ref.get("optional"):
                explicit.remove(e)
                continue
            sys.exit(f"kube-play-manifest: Secret {ref.get('name')} key {ref.get('key')} (env {e.get('name')}) is not in {src}")
        e.pop("valueFrom")
        e["value"] = value


for c in pod.get("initContainers", []) + pod.get("containers", []):
    inline_secrets(c)

deployment["spec"]["replicas"] = 1
pod["hostNetwork"] = True
container["image"] = image
container["imagePullPolicy"] = "Never"
set_env("PORT", str(port))
set_env("HOST", "127.0.0.1")
# Podman 4.3 lets envFrom (the ConfigMap's PORT) override env, unlike Kubernetes; flags
# win over both in FeedProxy, so the loopback port and address are passed as flags too.
args = [a for a in (container.get("args") or []) if a != "--fixtures"]
container["args"] = args + ["--fixtures", "--port", str(port), "--host", "127.0.0.1"]

probes = []
for kind in ("startupProbe", "readinessProbe", "livenessProbe"):
    probe = container.get(kind)
    if not probe:
        continue
    name = kind.removesuffix("Probe")
    for how in ("httpGet", "tcpSocket"):
        if how in probe:
            action = probe[how]
            p = action.get("port")
            if isinstance(p, str) and not p.isdigit():
                p = named.get(p)
            if p is None or int(p) != old_port:
                sys.exit(f"kube-play-manifest: {kind} uses port {action.get('port')}, not the serving port {old_port}")
            action["port"] = port
            action.pop("host", None)
            if how == "httpGet":
                probes.append(f"{name} http :{port}{action.get('path', '/')}")
            else:
                probes.append(f"{name} tcp {port}")
    if "exec" in probe:
        probes.append(f"{name} exec {shlex.join(probe['exec']['command'])}")

# With hostNetwork, podman 4.3 turns containerPorts into port mappings and then refuses
# them ("PortMappings can only be used with Bridge or slirp4netns networking"); on the host
# network they mean nothing anyway (the probes above already have numeric ports).
for c in pod.get("containers", []):
    c.pop("ports", None)

# podman 4.3 names a Deployment's pod <name>-pod-0 and its containers <pod>-<container>.
print(f"container {deployment['metadata']['name']}-pod-0-{container['name']}")
print("\n".join(probes))
keep = [d for d in docs if d["kind"] == "ConfigMap"] + [deployment]
pathlib.Path(out).write_text(yaml.safe_dump_all(keep, sort_keys=False))
