"""Run llama.cpp's own HF→GGUF converter, with an explicitly declared pre-tokenizer.

The converter recognises a BPE tokenizer's pre-tokenizer by hashing how it splits a check
string, and refuses one it has never seen ("BPE pre-tokenizer was not recognized"). A tokenizer
trained in-house is such a one. Rather than hiding that, the user declares which llama.cpp
pre-tokenizer reproduces its splitting (``model.gguf_pre_tokenizer`` in params.yaml); this
wrapper uses the declaration only when the converter does not recognise the hash itself.

    python -m pipeline.quantize.gguf_convert --converter DIR --pre qwen2 -- MODEL --outfile F
"""

from __future__ import annotations

import argparse
import logging
import runpy
import sys
from pathlib import Path

log = logging.getLogger(__name__)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--converter", type=Path, required=True,
                    help="folder with convert_hf_to_gguf.py, conversion/ and gguf-py/")
    ap.add_argument("--pre", default=None, help="declared llama.cpp pre-tokenizer name")
    ap.add_argument("args", nargs=argparse.REMAINDER)
    ns = ap.parse_args(argv)
    conv = ns.converter.resolve()
    # The converter and its gguf-py come from the same llama.cpp sources as the tools.
    sys.path[:0] = [str(conv), str(conv / "gguf-py")]
    if ns.pre:
        from conversion.base import TextModel  # llama.cpp's converter package

        original = TextModel.get_vocab_base_pre

        def declared(self, tokenizer):
            try:
                return original(self, tokenizer)
            except NotImplementedError:
                logging.getLogger("gguf_convert").warning(
                    "pre-tokenizer hash not known to this converter; using the declared %r", ns.pre)
                return ns.pre

        TextModel.get_vocab_base_pre = declared
    args = ns.args[1:] if ns.args[:1] == ["--"] else ns.args
    sys.argv = [str(conv / "convert_hf_to_gguf.py"), *args]
    runpy.run_path(str(conv / "convert_hf_to_gguf.py"), run_name="__main__")


if __name__ == "__main__":
    main()
