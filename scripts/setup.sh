#!/usr/bin/env bash
# Idempotent set-up of the core environment `.venv` (Python 3.11): torch's CPU build first, then
# the project and its pinned dependencies (constraints/core.txt). A second run only checks a stamp.
# Tools whose pins conflict with the core get their own locked environments, shared by every clone
# on the machine under ~/.cache/qpipe/envs/: the vLLM engine (scripts/setup-vllm.sh) and the
# GPTQModel, ModelOpt and AutoAWQ backends (scripts/setup-backend-env.sh).
#
#   bash scripts/setup.sh            # core environment
#   QPIPE_TORCH="torch==2.13.0" ...  # another torch spec (GPU hosts: install yours, then
#                                    # `pip install --no-deps -e .`)
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null || PY=python3
"$PY" - <<'PYCHECK' || { echo "setup: Python >= 3.11 is required (set PYTHON=/path/to/python3.11)" >&2; exit 1; }
import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)
PYCHECK

[ -x .venv/bin/python ] || "$PY" -m venv .venv
stamp=.venv/.qpipe-setup
want=$(cat constraints/core.txt pyproject.toml scripts/setup.sh | sha256sum | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  echo "setup: core environment up to date (.venv)"
  exit 0
fi

quiet() { grep -v -E "is ignored: it is neither a file nor a directory|^$" || true; }
start=$(date +%s)
.venv/bin/python -m pip install -q --disable-pip-version-check "pip==25.3" 2>&1 | quiet
# torch first, pinned: the CPU build (a bare `torch` requirement would pull a multi-GB CUDA build).
.venv/bin/python -m pip install -q "${QPIPE_TORCH:-torch==2.13.0}" 2>&1 | quiet
.venv/bin/python -m pip install -q -c constraints/core.txt -e ".[all]" 2>&1 | quiet
.venv/bin/python -m pip check >/dev/null 2>&1 || .venv/bin/python -m pip check | quiet
echo "$want" > "$stamp"
echo "setup: core environment ready in $(( $(date +%s) - start )) s (.venv)"
