"""Turn a GGUF file of a byte-level BPE model (llama.cpp's `gpt2` tokenizer model) into a Hugging
Face checkpoint folder — bfloat16 safetensors, tokenizer.json, chat template — the form the
pipeline takes a base model in.

The weights: transformers reads the GGUF (dequantizing its tensors with gguf-py) but will not save
a model loaded that way, so they are copied into a model built from the same config, every tensor
accounted for. The tokenizer is rebuilt from the GGUF's own vocabulary, merges, token types and
special-token ids with the `tokenizers` library — byte-level BPE without byte fallback, digits
split one by one before the byte-level split when the file's pre-tokenizer is `smollm` (llama.cpp's
name for that regex) — because transformers' GGUF tokenizer conversion mixes in SentencePiece
parts (byte fallback, a ▁ decoder) that llama.cpp's converter then writes back as an SPM
vocabulary, and it names the wrong end-of-sequence token.

    python scripts/convert_gguf_checkpoint.py model.gguf out_dir --name my-model --source "…"
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def _field(reader, key: str):
    f = reader.fields.get(key)
    if f is None:
        return None
    if len(f.data) == 1:
        part = f.parts[f.data[0]]
        return bytes(part).decode() if part.dtype.kind == "u" and part.dtype.itemsize == 1 else part.tolist()[0]
    return [bytes(f.parts[i]).decode() for i in f.data]


def tokenizer_from_gguf(gguf: Path):
    """A PreTrainedTokenizerFast equal to the one the GGUF describes (byte-level BPE only)."""
    from gguf import GGUFReader
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    r = GGUFReader(gguf)
    if _field(r, "tokenizer.ggml.model") != "gpt2":
        sys.exit(f"convert: {gguf.name} has tokenizer model {_field(r, 'tokenizer.ggml.model')!r}; "
                 "only byte-level BPE ('gpt2') is rebuilt here")
    tokens = _field(r, "tokenizer.ggml.tokens")
    merges = [tuple(m.split(" ", 1)) for m in _field(r, "tokenizer.ggml.merges")]
    types = r.fields["tokenizer.ggml.token_type"]
    control = [i for i, j in enumerate(types.data) if int(types.parts[j][0]) == 3]  # CONTROL
    tk = Tokenizer(models.BPE(vocab={t: i for i, t in enumerate(tokens)}, merges=merges,
                              byte_fallback=False, fuse_unk=False))
    split = [pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=True)]
    if _field(r, "tokenizer.ggml.pre") == "smollm":
        split.insert(0, pre_tokenizers.Digits(individual_digits=True))
    tk.pre_tokenizer = pre_tokenizers.Sequence(split)
    tk.decoder = decoders.ByteLevel()
    tk.add_special_tokens([AddedToken(tokens[i], special=True, normalized=False) for i in control])
    ids = {k: _field(r, f"tokenizer.ggml.{k}_token_id") for k in ("bos", "eos", "unknown", "padding")}
    name = lambda k: None if ids[k] is None else tokens[ids[k]]  # noqa: E731
    tok = PreTrainedTokenizerFast(tokenizer_object=tk, bos_token=name("bos"), eos_token=name("eos"),
                                  unk_token=name("unknown"), pad_token=name("padding"),
                                  clean_up_tokenization_spaces=False)
    tok.chat_template = _field(r, "tokenizer.chat_template")
    return tok, ids


def convert(gguf: Path, out: Path, *, name: str, source: str) -> None:
    import torch
    from transformers import AutoModelForCausalLM

    tok, ids = tokenizer_from_gguf(gguf)
    loaded = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, local_files_only=True,
                                                  dtype=torch.float32)
    cfg = loaded.config
    if hasattr(cfg, "quantization_config"):
        delattr(cfg, "quantization_config")
    cfg.bos_token_id, cfg.eos_token_id, cfg.pad_token_id = ids["bos"], ids["eos"], ids["padding"]
    model = AutoModelForCausalLM.from_config(cfg, dtype=torch.float32)
    result = model.load_state_dict(loaded.state_dict(), strict=False)
    tied = {"lm_head.weight"} if getattr(cfg, "tie_word_embeddings", False) else set()
    missing = set(result.missing_keys) - tied
    if missing or result.unexpected_keys:
        sys.exit(f"convert: tensors not carried over: missing {sorted(missing)[:5]}, "
                 f"unexpected {sorted(result.unexpected_keys)[:5]}")
    model = model.to(torch.bfloat16)
    gen = model.generation_config
    gen.bos_token_id, gen.eos_token_id, gen.pad_token_id = ids["bos"], ids["eos"], ids["padding"]
    gen.do_sample = False
    tok.model_max_length = getattr(cfg, "max_position_embeddings", tok.model_max_length)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tok.save_pretrained(out)
    if not (out / "chat_template.jinja").is_file() and tok.chat_template:
        (out / "chat_template.jinja").write_text(tok.chat_template, encoding="utf-8")
    (out / "SOURCE.json").write_text(json.dumps({"name": name, "source": source, "gguf": gguf.name,
                                                 "dtype": "bfloat16"}, indent=2) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("gguf", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--name", required=True)
    ap.add_argument("--source", required=True)
    a = ap.parse_args()
    convert(a.gguf.resolve(), a.out, name=a.name, source=a.source)


if __name__ == "__main__":
    main()
