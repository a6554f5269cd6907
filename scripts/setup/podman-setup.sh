#!/usr/bin/env bash
# Makes podman usable on a Debian bookworm CI machine, as root, idempotently:
#  1. installs podman, runc and catatonit (for pods) when missing (crun, podman's default, fails here with
#     "cgroups in hybrid mode not supported");
#  2. sets, in /etc/containers/containers.conf, runtime = "runc", cgroup_manager = "cgroupfs"
#     and default_ulimits (raising rlimits is not permitted here), keeping every other
#     setting of an existing file untouched;
#  3. reports the storage driver podman picked (overlay on ext4 with a current kernel;
#     vfs, a full copy per layer, would make the 3 GB Swift base image unworkable).
set -euo pipefail
CONF=${CONTAINERS_CONF_FILE:-/etc/containers/containers.conf}

need=""
command -v podman >/dev/null 2>&1 || need="$need podman"
command -v runc >/dev/null 2>&1 || need="$need runc"
# pods (podman kube play) need the pause image, which podman builds from catatonit
command -v catatonit >/dev/null 2>&1 || need="$need catatonit"
if [ -n "$need" ]; then
  [ "$(id -u)" = 0 ] || { echo "podman-setup: missing$need (run as root or install them)"; exit 1; }
  echo "podman-setup: installing$need"
  apt-get update -qq
  # shellcheck disable=SC2086 # word splitting of the package list is intended
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $need >/dev/null
fi

# Merge three settings into the TOML file: replace the key inside its table if present
# (also a multi-line array), insert it under the table header otherwise, add the table
# if missing. Comments and all other keys stay as they are. No write when nothing changes.
mkdir -p "$(dirname "$CONF")"
python3 - "$CONF" <<'PY'
import os, re, sys, tomllib
path = sys.argv[1]
want = {
    ("containers", "default_ulimits"): ('["nofile=1024:1024", "nproc=1000:1000"]', ["nofile=1024:1024", "nproc=1000:1000"]),
    ("engine", "runtime"): ('"runc"', "runc"),
    ("engine", "cgroup_manager"): ('"cgroupfs"', "cgroupfs"),
}
text = open(path).read() if os.path.exists(path) else ""
try:
    current = tomllib.loads(text)
except tomllib.TOMLDecodeError as e:
    sys.exit(f"podman-setup: {path} is not valid TOML ({e}); not touching it")
if all(current.get(t, {}).get(k) == v for (t, k), (_, v) in want.items()):
    print(f"podman-setup: {path} already has runtime=runc, cgroup_manager=cgroupfs, default_ulimits")
    sys.exit(0)
lines = text.splitlines()
header = re.compile(r"^\s*\[([^\[\]]+)\]\s*(#.*)?$")
for (table, key), (literal, value) in want.items():
    if current.get(table, {}).get(key) == value:
        continue
    start = next((i for i, l in enumerate(lines) if (m := header.match(l)) and m.group(1).strip() == table), None)
    if start is None:
        lines += ["", f"[{table}]", f"{key} = {literal}"]
        continue
    end = next((i for i in range(start + 1, len(lines)) if re.match(r"^\s*\[", lines[i])), len(lines))
    keyline = next((i for i in range(start + 1, end) if re.match(rf"^\s*{key}\s*=", lines[i])), None)
    if keyline is None:
        lines.insert(start + 1, f"{key} = {literal}")
        continue
    last = keyline
    if lines[keyline].split("=", 1)[1].strip().startswith("[") and lines[keyline].count("[") > lines[keyline].count("]"):
        while last + 1 < end and "]" not in lines[last]:
            last += 1
    lines[keyline:last + 1] = [f"{key} = {literal}"]
new = "\n".join(lines) + "\n"
merged = tomllib.loads(new)
assert all(merged.get(t, {}).get(k) == v for (t, k), (_, v) in want.items()), "merge failed"
tmp = path + ".tmp"
open(tmp, "w").write(new)
os.replace(tmp, path)
print(f"podman-setup: wrote runtime=runc, cgroup_manager=cgroupfs, default_ulimits into {path}")
PY

driver=$(podman info --format '{{.Store.GraphDriverName}}')
runtime=$(podman info --format '{{.Host.OCIRuntime.Name}}')
echo "podman-setup: podman $(podman version --format '{{.Client.Version}}'), runtime $runtime, storage driver $driver"
if [ "$driver" != overlay ]; then
  echo "podman-setup: warning: storage driver is $driver, not overlay: every layer is a full copy (slow, large)" >&2
fi
