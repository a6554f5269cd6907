#!/usr/bin/env python3
"""The optional Kubernetes monitoring component agrees with deploy/prometheus/ and with
the manifests (make deploy-check):

  - its PrometheusRule's spec.groups equal deploy/prometheus/alerts.yml's groups (as
    data: same groups, rules, expressions, labels and annotations);
  - its ServiceMonitor selects Service feedproxy (and not Redis's) on a port that
    Service has, path /metrics;
  - its kustomization.yaml is a kustomize Component listing exactly its files;
  - deploy/prometheus/dashboard.json is provisioning-ready: a uid and no id, its data
    source a ${datasource} variable of type prometheus, every panel and query on it.

These are custom resources kubernetes-validate has no schema for, hence this script.

Usage: monitoring-check.py [--write] [--groups-out FILE] [DEPLOY_DIR]
  --write          regenerate prometheusrule.yaml from alerts.yml (the groups text is
                   copied as written, comments included, indented under spec:)
  --groups-out F   also write the PrometheusRule's groups as a plain rule file F, for
                   promtool check rules
Exits 1 listing every problem. Needs PyYAML.
"""

import argparse
import json
import pathlib
import sys

import yaml

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
parser = argparse.ArgumentParser()
parser.add_argument("--write", action="store_true")
parser.add_argument("--groups-out")
parser.add_argument("deploy", nargs="?", default=str(ROOT / "deploy"))
args = parser.parse_args()
DEPLOY = pathlib.Path(args.deploy)
ALERTS = DEPLOY / "prometheus/alerts.yml"
COMPONENT = DEPLOY / "kubernetes/components/monitoring"
RULE = COMPONENT / "prometheusrule.yaml"

RULE_HEADER = """\
# GENERATED from deploy/prometheus/alerts.yml by scripts/checks/monitoring-check.py --write:
# edit alerts.yml and regenerate (make deploy-check fails while spec.groups differ).
# Your Prometheus's ruleSelector may want a label here too (e.g. release: <name>).
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: feedproxy
  labels:
    app.kubernetes.io/name: feedproxy
spec:
"""

errors: list[str] = []


def check(condition: bool, message: str) -> None:
    if not condition:
        errors.append(message)


def load(path: pathlib.Path):
    with path.open(encoding="utf-8") as f:
        return yaml.safe_load(f)


def first_difference(a, b, where="groups"):
    """The path of the first place two parsed YAML values differ, for the message."""
    if type(a) is not type(b):
        return f"{where}: {a!r} vs {b!r}"
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b), key=str):
            if k not in a or k not in b:
                return f"{where}.{k}: only in {'alerts.yml' if k in a else 'the PrometheusRule'}"
            d = first_difference(a[k], b[k], f"{where}.{k}")
            if d:
                return d
        return None
    if isinstance(a, list):
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, f"{where}[{i}]")
            if d:
                return d
        return None if len(a) == len(b) else f"{where}: {len(a)} vs {len(b)} items"
    return None if a == b else f"{where}: {a!r} vs {b!r}"


if args.write:
    text = ALERTS.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith("groups:"))
    RULE.write_text(RULE_HEADER + "".join(("  " + line) if line.strip() else line for line in lines[start:]), encoding="utf-8")
    print(f"monitoring-check: wrote {RULE.relative_to(DEPLOY.parent) if DEPLOY.is_relative_to(ROOT) else RULE}")

# --- PrometheusRule: the same groups as alerts.yml ----------------------------------
alerts = load(ALERTS)
rule = load(RULE)
check(rule.get("apiVersion") == "monitoring.coreos.com/v1" and rule.get("kind") == "PrometheusRule", "prometheusrule.yaml: must be a monitoring.coreos.com/v1 PrometheusRule")
check(bool(rule.get("metadata", {}).get("name")) and "namespace" not in rule.get("metadata", {}), "prometheusrule.yaml: needs a name and no namespace")
check(set(rule.get("spec", {})) == {"groups"}, "prometheusrule.yaml: spec must hold groups only")
groups, rule_groups = alerts.get("groups"), rule.get("spec", {}).get("groups")
check(isinstance(groups, list) and len(groups) > 0, "alerts.yml: no groups")
difference = first_difference(groups, rule_groups)
check(difference is None, f"prometheusrule.yaml: spec.groups must equal alerts.yml's groups, they differ at {difference} (run scripts/checks/monitoring-check.py --write)")
n_rules = sum(len(g.get("rules", [])) for g in groups or [])
for g in groups or []:
    for r in g.get("rules", []):
        name = r.get("alert") or r.get("record")
        if "alert" in r:
            check(r.get("labels", {}).get("severity") in ("critical", "warning", "info"), f"alerts.yml: {name} needs severity critical, warning or info")
            check({"summary", "description", "runbook"} <= set(r.get("annotations", {})), f"alerts.yml: {name} needs summary, description and runbook")
if args.groups_out:
    pathlib.Path(args.groups_out).write_text(yaml.safe_dump({"groups": rule_groups}, sort_keys=False), encoding="utf-8")

# --- ServiceMonitor: selects Service feedproxy on one of its ports -------------------
monitor = load(COMPONENT / "servicemonitor.yaml")
services = {}
for path in sorted((DEPLOY / "kubernetes").glob("*.yaml")):
    for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")):
        if doc and doc.get("kind") == "Service":
            services[doc["metadata"]["name"]] = doc
check(monitor.get("apiVersion") == "monitoring.coreos.com/v1" and monitor.get("kind") == "ServiceMonitor", "servicemonitor.yaml: must be a monitoring.coreos.com/v1 ServiceMonitor")
check("namespace" not in monitor.get("metadata", {}), "servicemonitor.yaml: no namespace")
selector = monitor.get("spec", {}).get("selector", {}).get("matchLabels", {})
selected = [name for name, s in services.items() if selector and selector.items() <= s["metadata"].get("labels", {}).items()]
check(selected == ["feedproxy"], f"ServiceMonitor: selector {selector} must select Service feedproxy only, selects {selected}")
ports = {p.get("name") for p in services.get("feedproxy", {}).get("spec", {}).get("ports", [])}
endpoints = monitor.get("spec", {}).get("endpoints", [])
check(len(endpoints) > 0, "ServiceMonitor: no endpoints")
for e in endpoints:
    check(e.get("port") in ports, f"ServiceMonitor: endpoint port {e.get('port')!r} must be a port name of Service feedproxy {sorted(ports)}")
    check(e.get("path") == "/metrics", "ServiceMonitor: endpoint path must be /metrics")

# --- the Component itself ------------------------------------------------------------
component = load(COMPONENT / "kustomization.yaml")
check(component.get("apiVersion") == "kustomize.config.k8s.io/v1alpha1" and component.get("kind") == "Component", "components/monitoring: kustomization.yaml must be a kustomize.config.k8s.io/v1alpha1 Component")
present = {p.name for p in COMPONENT.glob("*.yaml")} - {"kustomization.yaml"}
check(set(component.get("resources", [])) == present, f"components/monitoring: resources {component.get('resources')} must be exactly {sorted(present)}")

# --- the Grafana dashboard: importable as is -----------------------------------------
dashboard = json.loads((DEPLOY / "prometheus/dashboard.json").read_text(encoding="utf-8"))
DS = {"type": "prometheus", "uid": "${datasource}"}
check(bool(dashboard.get("uid")) and "id" not in dashboard, "dashboard.json: must have a uid and no id (Grafana assigns the id)")
check(dashboard.get("schemaVersion", 0) >= 36, "dashboard.json: schemaVersion must be 36 or later")
variables = {v.get("name"): v for v in dashboard.get("templating", {}).get("list", [])}
check(variables.get("datasource", {}).get("type") == "datasource" and variables["datasource"].get("query") == "prometheus",
      "dashboard.json: must have a datasource variable of type datasource, query prometheus")
panels = [p for top in dashboard.get("panels", []) for p in [top] + top.get("panels", [])]
ids = [p.get("id") for p in panels]
check(len(ids) == len(set(ids)), "dashboard.json: panel ids must be unique")
n_queries = 0
for p in panels:
    if p.get("type") == "row":
        continue
    check(p.get("datasource") == DS, f"dashboard.json: panel {p.get('title')!r} must use the ${{datasource}} variable")
    check(bool(p.get("targets")), f"dashboard.json: panel {p.get('title')!r} has no query")
    for t in p.get("targets", []):
        n_queries += 1
        check(t.get("datasource") == DS and bool(t.get("expr")), f"dashboard.json: a query of {p.get('title')!r} must use ${{datasource}} and have an expr")

if errors:
    print("monitoring-check: %d problem(s)" % len(errors))
    for e in errors:
        print("  - " + e)
    sys.exit(1)
print(f"monitoring-check: the PrometheusRule holds alerts.yml's {len(groups)} group(s), {n_rules} rules, unchanged; the ServiceMonitor scrapes Service feedproxy's {endpoints[0]['port']} port; dashboard.json: {sum(p.get('type') != 'row' for p in panels)} panels, {n_queries} queries on ${{datasource}}")
