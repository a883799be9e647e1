"""The demo model's card (models/demo/README.md), written from its training record.

    python -m demo.card models/demo [--cpu-eval eval.json]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def _table(scores: dict) -> str:
    rows = ["| slice | accuracy |", "|---|---|"]
    rows += [f"| {k} | {v:.1%} |" for k, v in scores.items()]
    return "\n".join(rows)


def render(stats: dict, cpu_eval: dict | None = None) -> str:
    cfg, held = stats["config"], stats["heldout"]
    arch = stats.get("architecture", {})
    lines = [
        "# qpipe demo model",
        "",
        "A small Llama-architecture chat model that answers the demo company's six business",
        "scenarios (FAQ, support-ticket triage, seat and plan consultation, multi-turn order",
        "tracking, long-context RAG, JSON tool calls). It exists so that quantization regressions",
        "are visible in the demo: it knows its tasks, and it is small enough for a 2-core CPU.",
        "",
        "## Held-out score",
        "",
        f"**{held['overall']:.1%}** exact task success on {held['n']} held-out business-log conversations",
        "(the first conversations of `calibration/sources/demo`, rendered with PII placeholders as the",
        "scrubber leaves them), greedy decoding, scored by `pipeline/evaluate/scorers.py`, measured",
        (f"on {held['measured_on']}" if held.get("measured_on") else
         f"at the end of training on {stats['device']}" + (f" ({stats['gpu']})" if stats.get("gpu") else "")) + ".",
        "",
        _table(held["by_scenario"] | {f"difficulty={k}": v for k, v in held["by_difficulty"].items()}),
        "",
    ]
    if stats.get("heldout_gpu"):
        g = stats["heldout_gpu"]
        lines += [f"Measured at the end of training on {stats['device']} ({stats.get('gpu')}): "
                  f"**{g['overall']:.1%}** (bf16 kernels differ slightly between devices).", ""]
    if stats.get("note"):
        lines += [f"_Note: {stats['note']}._", ""]
    if cpu_eval:
        lines += [f"Re-measured on CPU with `qpipe-demo eval --n {cpu_eval['n']}`: "
                  f"**{cpu_eval['overall']:.1%}**.", ""]
    lines += [
        "Reproduce the score: `qpipe-demo eval --n 600` (CPU, ~1 minute).",
        "",
        "## Architecture",
        "",
        f"LlamaForCausalLM, {stats['parameters'] / 1e6:.1f}M parameters, bf16 safetensors:",
        ", ".join(f"{k} {v}" for k, v in arch.items()) + ".",
        "Hidden and intermediate sizes are multiples of 256, so every scheme fits without ignoring",
        "layers (group-128 W4A16, NVFP4 group 16, GGUF K-quants' 256-wide super-blocks).",
        "",
        "Tokenizer: byte-level BPE trained on the training corpus, vocabulary "
        f"{stats.get('vocab_size', '?')}, with Qwen2's pre-tokenizer (every digit its own token, so",
        f"ids and sums are copied digit by digit); llama.cpp pre-tokenizer name `{stats['pre_tokenizer']}`.",
        "Chat template: ChatML (`<|im_start|>role … <|im_end|>`).",
        "",
        "## Training",
        "",
        f"- data: the generator's `train` stream (seed {cfg['seed']}), {cfg['examples']} conversations with PII",
        "  already replaced by typed placeholders, minus "
        f"{stats['dropped_near_duplicates']} dropped as MinHash near duplicates (Jaccard ≥ {cfg['near_threshold']},",
        f"  word 3-shingles) of any of the {cfg['logs_conversations']} business-log conversations;",
        f"  {stats['train_conversations']} conversations, {stats['train_tokens_per_epoch']} tokens; loss on",
        "  assistant turns only",
        f"- optimisation: AdamW, lr {cfg['learning_rate']}, batch {cfg['batch_size']}, {cfg['steps']} steps, "
        f"cosine decay; {stats['train_seconds']:.0f} s on {stats['device']}",
        f"- software: torch {stats['torch']}, transformers {stats['transformers']}, Python {stats['python']}",
        "",
        "Exact commands (deterministic seeds; the GPU run is what produced these weights):",
        "",
        "```bash",
        "# on any machine: generate, decontaminate, train the tokenizer, encode (≈1.5 min on 2 cores)",
        f"python -m demo.train --prepare-only .device/prep --seed {cfg['seed']} "
        f"--examples {cfg['examples']}",
        "# on a GPU host with torch + transformers (one H200: ≈6 minutes)",
        f"python -m demo.train --prepared .device/prep --out models/demo --steps {cfg['steps']} "
        f"--batch-size {cfg['batch_size']} --device cuda",
        "# or both in one step, on CPU or GPU:",
        "qpipe-demo train --device auto",
        "```",
        "",
        "On the 2-core CPU a step of this size takes ~0.35–1.2 s, so the same schedule needs hours;",
        "`--max-minutes N` fits the step count to a time budget (fewer steps, a weaker model).",
        "",
        "## Limitations",
        "",
        "It only knows the fictional company's six tasks; it is a test instrument, not a useful",
        "assistant. Arithmetic and copying long digit strings are its weakest skills — and the first",
        "ones low-bit quantization damages, which is what the demo is meant to show.",
    ]
    return "\n".join(lines) + "\n"


def write(model_dir: Path, cpu_eval: dict | None = None) -> Path:
    stats = json.loads((model_dir / "training.json").read_text())
    cfg = json.loads((model_dir / "config.json").read_text())
    stats.setdefault("architecture", {k: cfg[k] for k in (
        "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
        "num_key_value_heads", "max_position_embeddings")})
    stats.setdefault("vocab_size", cfg["vocab_size"])
    out = model_dir / "README.md"
    out.write_text(render(stats, cpu_eval), encoding="utf-8")
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("model_dir", type=Path)
    ap.add_argument("--cpu-eval", type=Path)
    args = ap.parse_args()
    cpu = json.loads(args.cpu_eval.read_text()) if args.cpu_eval else None
    print(write(args.model_dir, cpu))


if __name__ == "__main__":
    main()
