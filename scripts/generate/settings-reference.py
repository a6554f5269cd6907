#!/usr/bin/env python3
"""Writes docs/configuration.md, the full settings reference, from `feedproxy --help` (which
comes from Options.swift and the upstreams' declarations in Sources/Service/Catalog/). A test checks the committed file against --help word for word.
Usage: scripts/generate/settings-reference.py [path to feedproxy]   (default: .build/debug/feedproxy)"""
import re, subprocess, sys, pathlib

root = pathlib.Path(__file__).resolve().parent.parent.parent
binary = sys.argv[1] if len(sys.argv) > 1 else str(root / ".build" / "debug" / "feedproxy")
help_text = subprocess.run([binary, "--help"], check=True, capture_output=True, text=True).stdout
rows = []
ENDPOINTLESS = "Upstreams without an endpoint setting of their own"
unbudgeted = help_text.split("Upstreams without a shared rate budget", 1)[1].split(ENDPOINTLESS, 1)[0].splitlines()[1:] if "Upstreams without a shared rate budget" in help_text else []
unlimited = [f"- `{m.group(1)}`: {m.group(2)}" for m in (re.match(r"^  (\S+): (.*)$", line) for line in unbudgeted) if m]
endpointless = [f"- `{m.group(1)}`: {m.group(2)}" for m in (re.match(r"^  (\S+): (.*)$", line) for line in help_text.split(ENDPOINTLESS, 1)[-1].splitlines()[1:]) if m] if ENDPOINTLESS in help_text else []
flag_only = []
for line in help_text.split("Upstreams without a shared rate budget", 1)[0].splitlines():
    m = re.match(r"^\s+(--\S+) \((\S+)\)\s+(.*) \[default: (.*)\]$", line)
    if m:
        flag, env, text, default = m.groups()
        rows.append(f"| `{env}` | `{flag}` | `{default}` | {text.strip()} |")
        continue
    # Flags without a variable (--fixtures, --healthcheck, --help, --openapi …), in the same table.
    m = re.match(r"^  (--\S+(?:, --\S+)*(?: [A-Z\[][A-Z\]]*)?)\s{2,}(.*)$", line)
    if m:
        flags = ", ".join(f"`{f}`" for f in m.group(1).split(", "))
        flag_only.append(f"| — | {flags} | — | {m.group(2).strip()} |")
(root / "docs" / "configuration.md").write_text(
    "# Configuration reference\n\n"
    "Every setting: an environment variable with a matching flag (flags win). `feedproxy --help` prints the same list;\n"
    "invalid values stop startup with a message naming the setting, and exit code 2. Generated whole from `--help` by\n"
    "`scripts/generate/settings-reference.py` (a test keeps the two identical); the README lists the ones a newcomer needs.\n\n"
    "| Environment variable | Flag | Default | Meaning |\n|---|---|---|---|\n" + "\n".join(rows + flag_only) + "\n\n"
    "## Upstreams without a shared rate budget\n\n"
    "Each upstream either publishes a limit (its `RATE_LIMIT_*_PER_MIN` above, one budget for all replicas) or spends nobody's budget, for a reason its declaration gives:\n\n"
    + "\n".join(unlimited) + "\n\n"
    "## Upstreams without an endpoint setting of their own\n\n"
    "Each upstream either names where it is (its `*_URL` settings above) or has no address of its own, for a reason its declaration gives:\n\n"
    + "\n".join(endpointless) + "\n")
print(f"docs/configuration.md: {len(rows)} settings")
