#!/usr/bin/env bash
# Install the Debian packages Lagscope's tests and demo need, only where something is missing.
# Idempotent; safe on a machine that already has them. Needs root or sudo for apt-get.
set -euo pipefail

need=()
have() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ] || [ -x "/usr/bin/$1" ]; }

have mariadbd || need+=(mariadb-server)
have mariadb-install-db || need+=(mariadb-server)
have mariadb || need+=(mariadb-client)
have redis-server || need+=(redis-server)
# PostgreSQL server binaries: the migration tests start their own cluster with initdb.
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || need+=(python3-venv)
# /metrics is checked by a real Prometheus scrape.
have prometheus || need+=(prometheus)
# The dashboard's end-to-end tests drive Debian's Chromium (Playwright's own browser download does not work here).
have chromium || need+=(chromium)
# The web UI is built with Node (>= 20.19) and npm.
have node || need+=(nodejs)
have npm || need+=(npm)
# The lab's clock-offset incident runs a replica under libfaketime (lagscope.lab.incidents).
ls /usr/lib/*/faketime/libfaketime.so.1 >/dev/null 2>&1 || need+=(faketime)
# The raw-series store past one box is checked against a real VictoriaMetrics single node.
have victoria-metrics || need+=(victoria-metrics)
# Alert webhooks are checked by a real Alertmanager consuming the Alertmanager-format body.
have prometheus-alertmanager || need+=(prometheus-alertmanager)
# The lag check for proxies is checked with a real HAProxy health-checking the lab's replicas.
have haproxy || need+=(haproxy)

if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi

# Deduplicate.
mapfile -t need < <(printf '%s\n' "${need[@]}" | sort -u)
echo "ensure-system-deps: installing ${need[*]}" >&2
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
