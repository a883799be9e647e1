#!/usr/bin/env bash
# System packages the tracking tests use: a real PostgreSQL (the team's MLflow backend) and
# Debian's Chromium (the MLflow UI check; Playwright drives it, no browser download).
# Installed only when missing (apt, as root or through sudo), so a second run costs nothing.
set -euo pipefail
apt_need=()
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || apt_need+=(postgresql)
[ -x /usr/bin/chromium ] || apt_need+=(chromium)
if [ ${#apt_need[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -q >/dev/null
  $sudo apt-get install -y -q --no-install-recommends "${apt_need[@]}" >/dev/null
  echo "setup-system: installed ${apt_need[*]}"
fi
