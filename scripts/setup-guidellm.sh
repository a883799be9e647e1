#!/usr/bin/env bash
# Idempotent set-up of the load generator, GuideLLM, in its own locked environment: it pins
# transformers and torch releases of its own, so it cannot share the core environment; `qpipe
# upgrade` runs it as a subprocess (pipeline/loadgen/guidellm_driver.py).
#
# The environment lives outside the checkout, keyed by the lock file's hash, so every clone on a
# machine shares one (~1.5 GB, a few minutes to make): ${QPIPE_CACHE:-~/.cache/qpipe}/envs/guidellm-<hash>.
# A GuideLLM you already have is used instead with QPIPE_GUIDELLM_PYTHON=/path/to/python.
#
#   bash scripts/setup-guidellm.sh       # prints the environment's python on its last line
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -n "${QPIPE_GUIDELLM_PYTHON:-}" ]; then
  "$QPIPE_GUIDELLM_PYTHON" -c "import guidellm" \
    || { echo "setup-guidellm: QPIPE_GUIDELLM_PYTHON=$QPIPE_GUIDELLM_PYTHON cannot import guidellm" >&2; exit 1; }
  echo "$QPIPE_GUIDELLM_PYTHON"; exit 0
fi
PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null || PY=python3
lock=constraints/guidellm.txt
key=$(cat "$lock" scripts/setup-guidellm.sh | sha256sum | cut -c1-12)
env=${QPIPE_CACHE:-$HOME/.cache/qpipe}/envs/guidellm-$key
if [ -f "$env/.ready" ]; then
  echo "setup-guidellm: environment up to date ($env)" >&2
  echo "$env/bin/python"; exit 0
fi
# A venv is not relocatable, so it is made in place; `.ready` is written last and a directory
# without it (an interrupted set-up) is made again from scratch.
rm -rf "$env"; mkdir -p "$(dirname "$env")"
start=$(date +%s)
quiet() { grep -v -E "is ignored: it is neither a file nor a directory|^$" >&2 || true; }
"$PY" -m venv "$env"
"$env/bin/python" -m pip install -q --disable-pip-version-check "pip==25.3" 2>&1 | quiet
# torch's CPU build first (a bare requirement would pull a multi-GB CUDA build), then the lock.
"$env/bin/python" -m pip install -q "torch==2.13.0" 2>&1 | quiet
"$env/bin/python" -m pip install -q -c "$lock" "guidellm==0.8.1" 2>&1 | quiet
"$env/bin/python" -c "import guidellm, sys; from importlib.metadata import version; print('setup-guidellm: guidellm', version('guidellm'), file=sys.stderr)"
touch "$env/.ready"
echo "setup-guidellm: environment ready in $(( $(date +%s) - start )) s ($env)" >&2
echo "$env/bin/python"
