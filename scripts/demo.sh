#!/usr/bin/env bash
# Set up (idempotent) and run the pipeline on the embedded demo.
#
#   bash scripts/demo.sh            # the default matrix (params.yaml): `qpipe repro` (DVC's
#                                   # pipeline, execution.jobs stages at a time)
#   bash scripts/demo.sh --serial   # the same with plain `dvc repro` (one stage at a time)
#   bash scripts/demo.sh --full     # the full matrix (+ demo/full_matrix.yaml): a DVC experiment
#
# The default matrix runs on any x86 CPU with AVX2; the full matrix's W4A16 variants need
# vLLM's 4-bit weight-only kernel, which its CPU build has only with AVX-512 (`qpipe validate`
# names them, with the fix, on a CPU without it).
#
# Only the environments the chosen matrix's variants need are made (the GPTQModel, ModelOpt and
# AutoAWQ and MLX backends each have their own; the default matrix uses none of them).
set -euo pipefail
cd "$(dirname "$0")/.."
full=0
serial=0
if [ "${1:-}" = "--full" ]; then full=1; shift; fi
if [ "${1:-}" = "--serial" ]; then serial=1; shift; fi
bash scripts/setup.sh
# llama.cpp's build (compiling, ~10 min on 2 cores) overlaps the environments' pip installs.
bash scripts/setup-llamacpp.sh & llamacpp=$!
bash scripts/setup-vllm.sh >/dev/null   # the vLLM engine's own locked environment
bash scripts/setup-guidellm.sh >/dev/null   # the load generator's (the serving upgrades)
needs=$(.venv/bin/python - "$full" <<'PY'
import sys
from pathlib import Path

import yaml

from demo.matrix import full_params

data = full_params(Path(".")) if sys.argv[1] == "1" else yaml.safe_load(Path("params.yaml").read_text())
print(" ".join(sorted({v["backend"] for v in data["variants"].values()} & {"gptqmodel", "modelopt", "autoawq", "mlx"})))
PY
)
for backend in $needs; do bash scripts/setup-backend-env.sh "$backend"; done
wait "$llamacpp" || { echo "demo: llama.cpp's tools could not be built (above)" >&2; exit 1; }
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1 DVC_NO_ANALYTICS=1 \
       MLFLOW_DISABLE_TELEMETRY=true DO_NOT_TRACK=true TOKENIZERS_PARALLELISM=false \
       DVC_SITE_CACHE_DIR="$PWD/.dvc/tmp/site-cache" PATH="$PWD/.venv/bin:$PATH"
.venv/bin/qpipe validate
start=$(date +%s)
if [ "$full" = 1 ]; then
  .venv/bin/qpipe-demo full-matrix "$@"
elif [ "$serial" = 1 ]; then
  .venv/bin/dvc repro "$@"
else
  .venv/bin/qpipe repro "$@"
fi
echo
echo "demo: done in $(( $(date +%s) - start )) s. Outputs: data/evalset, data/split (rejects, report),"
echo "      data/calibration/<set>/card.md, artifacts/<variant>/ (manifest.json, SHA256SUMS),"
echo "      runs/quantize/<variant>.json (times, memory, host, git commit), results/<variant>/"
echo "      (per-sample records, metrics), results/bench/bench.json, reports/comparison.md (+ plots),"
echo "      handoff/<variant>/. MLflow: .venv/bin/qpipe ui  →  http://127.0.0.1:5000. See README.md."
