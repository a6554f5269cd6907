#!/usr/bin/env bash
# Installs Debian's prometheus package (prometheus and promtool) when either is missing,
# for make prometheus-check and make deploy-check. The package's postinst starts a
# daemon through invoke-rc.d; with no systemd here a policy-rc.d that says 101 ("not
# allowed") stops that, and one is put in place for the install only if none exists.
# Should a daemon start anyway, the processes of the freshly installed binary (there
# was none before) are stopped by PID.
set -euo pipefail
command -v promtool >/dev/null 2>&1 && command -v prometheus >/dev/null 2>&1 && exit 0
[ "$(id -u)" = 0 ] || { echo "prometheus/promtool missing (run as root or: sudo apt-get install --no-install-recommends prometheus)"; exit 1; }
policy=/usr/sbin/policy-rc.d
made_policy=
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\n# temporary, scripts/setup/install-prometheus.sh\nexit 101\n' >"$policy"
  chmod 755 "$policy"
  made_policy=1
fi
trap '[ -z "$made_policy" ] || rm -f "$policy"' EXIT
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null
for pid in $(pgrep -x prometheus || true); do
  [ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = /usr/bin/prometheus ] && kill "$pid" && echo "install-prometheus: stopped the daemon the package started (pid $pid)"
done
echo "install-prometheus: $(prometheus --version 2>&1 | head -1)"
