#!/usr/bin/env bash
# Idempotent set-up of an alternative quantization backend in its own locked environment.
# GPTQModel, NVIDIA ModelOpt and AutoAWQ each pin a transformers (and torch) that conflicts
# with llm-compressor's, and MLX-LM pins a transformers 5.24 (and no torch), so none of them
# shares the core environment: the quantize stage runs each as a subprocess with that
# environment's Python (`python -m pipeline.quantize.<name>`: the backend's module is also its
# worker); the mlx engine starts `python -m mlx_lm.server` with the mlx environment's Python.
#
# The environment lives outside the checkout, keyed by its lock file's hash, so every clone on
# a machine shares one: ${QPIPE_CACHE:-~/.cache/qpipe}/envs/<name>-<hash>. One you already have
# (a GPU host) is used instead with QPIPE_<NAME>_PYTHON=/path/to/python.
#
#   bash scripts/setup-backend-env.sh gptqmodel     # prints the environment's python last
#   bash scripts/setup-backend-env.sh all           # gptqmodel, modelopt, autoawq (what the tests and demo use)
#   bash scripts/setup-backend-env.sh mlx           # MLX-LM (CPU build): the full matrix's mlx variant
set -euo pipefail
cd "$(dirname "$0")/.."
name=${1:?usage: setup-backend-env.sh gptqmodel|modelopt|autoawq|mlx|all}
if [ "$name" = all ]; then
  for n in gptqmodel modelopt autoawq; do bash "$0" "$n" >/dev/null; done
  exit 0
fi
case "$name" in
  gptqmodel) pkg="gptqmodel==7.6.0" ;;
  modelopt)  pkg="nvidia-modelopt[hf]==0.47.0" ;;
  autoawq)   pkg="autoawq==0.2.9" ;;
  mlx)       pkg="mlx-lm==0.32.2" ;;   # with mlx[cpu] (below); torch is not needed
  *) echo "setup-backend-env: unknown backend '$name' — fix: one of gptqmodel, modelopt, autoawq, mlx" >&2; exit 2 ;;
esac
override_var="QPIPE_$(echo "$name" | tr '[:lower:]' '[:upper:]')_PYTHON"
if [ -n "${!override_var:-}" ]; then
  module=${name/autoawq/awq}; module=${module/modelopt/modelopt.torch}; module=${module/mlx/mlx_lm}
  "${!override_var}" -c "import $module" \
    || { echo "setup-backend-env: $override_var=${!override_var} cannot import $module" >&2; exit 1; }
  echo "${!override_var}"; exit 0
fi
PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null || PY=python3
lock=constraints/$name.txt
key=$(cat "$lock" scripts/setup-backend-env.sh | sha256sum | cut -c1-12)
env=${QPIPE_CACHE:-$HOME/.cache/qpipe}/envs/$name-$key
if [ -f "$env/.ready" ]; then
  echo "setup-backend-env: $name environment up to date ($env)" >&2
  echo "$env/bin/python"; exit 0
fi
# A venv is not relocatable, so it is made in place; `.ready` is written last and a directory
# without it (an interrupted set-up) is made again from scratch.
rm -rf "$env"; mkdir -p "$(dirname "$env")"
start=$(date +%s)
quiet() { grep -v -E "is ignored: it is neither a file nor a directory|^$" >&2 || true; }
"$PY" -m venv "$env"
"$env/bin/python" -m pip install -q --disable-pip-version-check "pip==25.3" 2>&1 | quiet
if [ "$name" = mlx ]; then
  # MLX's CPU build (mlx[cpu]: the mlx-cpu wheel; Linux has no Metal) and MLX-LM, no torch.
  "$env/bin/python" -m pip install -q -c "$lock" "mlx[cpu]==0.32.4" "$pkg" 2>&1 | quiet
else
  # torch's CPU build first (a bare requirement would pull a multi-GB CUDA build), then the lock.
  "$env/bin/python" -m pip install -q "torch==2.13.0" 2>&1 | quiet
  "$env/bin/python" -m pip install -q -c "$lock" "$pkg" 2>&1 | quiet
fi
touch "$env/.ready"
echo "setup-backend-env: $name environment ready in $(( $(date +%s) - start )) s ($env)" >&2
echo "$env/bin/python"
