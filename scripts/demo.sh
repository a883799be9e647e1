#!/usr/bin/env bash
# Set up (idempotent) and run the whole pipeline on the embedded demo: `dvc repro`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/setup-llamacpp.sh
bash scripts/setup-vllm.sh >/dev/null   # the vLLM engine's own locked environment
bash scripts/setup-backend-env.sh all   # GPTQModel, ModelOpt, AutoAWQ: one locked environment each
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1 DVC_NO_ANALYTICS=1 \
       MLFLOW_DISABLE_TELEMETRY=true DO_NOT_TRACK=true TOKENIZERS_PARALLELISM=false \
       DVC_SITE_CACHE_DIR="$PWD/.dvc/tmp/site-cache" PATH="$PWD/.venv/bin:$PATH"
.venv/bin/qpipe validate
.venv/bin/dvc repro "$@"
echo
echo "demo: done. Outputs: data/evalset, data/split (rejects, report), data/calibration/<set>/card.md,"
echo "      artifacts/<variant>/ (manifest.json, SHA256SUMS), results/<variant>/ (per-sample records,"
echo "      metrics), results/bench/bench.json, reports/comparison.md (+ plots), handoff/<variant>/."
echo "      MLflow: .venv/bin/qpipe ui  →  http://127.0.0.1:5000. See README.md, \"Where to look\"."
