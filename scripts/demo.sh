#!/usr/bin/env bash
# Set up (idempotent) and run the whole pipeline on the embedded demo: `dvc repro`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1 DVC_NO_ANALYTICS=1 \
       MLFLOW_ENABLE_TELEMETRY=false DO_NOT_TRACK=1 TOKENIZERS_PARALLELISM=false \
       DVC_SITE_CACHE_DIR="$PWD/.dvc/tmp/site-cache"
.venv/bin/qpipe validate
.venv/bin/dvc repro "$@"
echo
echo "demo: done. Outputs: data/ (evaluation set, pools, rejects), data/calibration/<set>/card.md"
