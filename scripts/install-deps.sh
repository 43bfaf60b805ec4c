#!/usr/bin/env bash
# Installs the named Debian packages that are not installed yet, and only those.
# Runs `apt-get update` once, and only when something is missing.
set -euo pipefail
missing=()
for pkg in "$@"; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$pkg")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0
echo "install-deps: installing missing Debian packages: ${missing[*]}"
if [[ $(id -u) -ne 0 ]]; then
  echo "install-deps: these packages are missing and installing them needs root: ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# The intermediaries the tests drive (apache2, squid, varnish, tinyproxy, trafficserver)
# would start their system services on install, on ports 80, 3128, 6081, 8888 and 8080.
# The tests run each product themselves, on loopback ports, so keep the services from
# starting during this install with a policy-rc.d that says "not now" (exit 101),
# unless the machine already has a policy of its own.
policy=/usr/sbin/policy-rc.d
if [[ ! -e $policy ]]; then
  printf '#!/bin/sh\n# Written by Intact scripts/install-deps.sh for the length of one install.\nexit 101\n' > "$policy"
  chmod 0755 "$policy"
  trap 'rm -f "$policy"' EXIT
fi
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
