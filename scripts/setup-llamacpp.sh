#!/usr/bin/env bash
# Build llama.cpp's command-line tools (llama-quantize, llama-imatrix, llama-server,
# llama-perplexity, llama-bench) once, from the sources vendored in the llama-cpp-python sdist
# on PyPI, and cache them under ${QPIPE_CACHE:-~/.cache/qpipe}/llama.cpp/<version>/ (outside the
# checkout, so every clone on the machine shares one build). A llama.cpp already on PATH (or
# QPIPE_LLAMACPP_BIN=/dir/with/tools) is used instead and nothing is built.
#
# Also installs the converter's Python side (convert_hf_to_gguf.py and gguf-py from the same
# sources) so conversion and quantization come from one llama.cpp version.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=${QPIPE_LLAMACPP_PY_VERSION:-0.3.36}
cache=${QPIPE_CACHE:-$HOME/.cache/qpipe}/llama.cpp
dest=$cache/$VERSION
tools="llama-quantize llama-imatrix llama-server llama-perplexity llama-bench"
if [ -f "$dest/.built" ]; then
  echo "setup-llamacpp: cached build in $dest"
  exit 0
fi
if [ -z "${QPIPE_LLAMACPP_FORCE_BUILD:-}" ] && command -v llama-quantize >/dev/null; then
  echo "setup-llamacpp: using llama.cpp on PATH ($(command -v llama-quantize))"
  exit 0
fi
mkdir -p "$cache/src"
sdist=$(ls $cache/src/llama_cpp_python-$VERSION.tar.gz 2>/dev/null || true)
if [ -z "$sdist" ]; then
  .venv/bin/python -m pip download -q --no-deps --no-binary :all: "llama-cpp-python==$VERSION" \
    -d "$cache/src" 2>&1 | grep -v "is ignored" || true
  sdist=$cache/src/llama_cpp_python-$VERSION.tar.gz
fi
src=$cache/src/llama_cpp_python-$VERSION
[ -d "$src" ] || tar -xzf "$sdist" -C "$cache/src"
start=$(date +%s)
jobs=$(nproc)
cmake -S "$src/vendor/llama.cpp" -B "$dest/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=ON \
  -DLLAMA_BUILD_SERVER=ON -DGGML_NATIVE=OFF -DBUILD_SHARED_LIBS=OFF > "$dest.cmake.log" 2>&1 \
  || { tail -30 "$dest.cmake.log"; exit 1; }
# shellcheck disable=SC2086
cmake --build "$dest/build" -j "$jobs" --target $tools > "$dest.build.log" 2>&1 \
  || { tail -30 "$dest.build.log"; exit 1; }
mkdir -p "$dest/bin"
for t in $tools; do cp "$dest/build/bin/$t" "$dest/bin/"; done
# The converter and its gguf-py package, from the same llama.cpp sources.
rm -rf "$dest/convert"; mkdir -p "$dest/convert"
cp -r "$src/vendor/llama.cpp/convert_hf_to_gguf.py" "$src/vendor/llama.cpp/gguf-py" "$dest/convert/"
[ -d "$src/vendor/llama.cpp/conversion" ] && cp -r "$src/vendor/llama.cpp/conversion" "$dest/convert/"
# "version: 0.5.0-dev (build 1, commit 0c1e570)" or, in older builds, "version: 1 (4227c9b)"
"$dest/bin/llama-server" --version 2>&1 | grep -oE "commit [0-9a-f]+|\([0-9a-f]{7,}\)" | head -1 \
  | tr -d '()' | sed 's/^commit //; s/^/commit /' > "$dest/commit" || true
rm -rf "$dest/build"
touch "$dest/.built"
echo "setup-llamacpp: built $tools in $(( $(date +%s) - start )) s into $dest/bin"
