"""Train the embedded demo model: a small Llama that really answers the demo business tasks.

The training corpus comes from the generator's ``train`` stream, rendered with PII placeholders
(evaluation prompts are scrubbed the same way), and is decontaminated against the business logs
(``logs`` stream) with MinHash LSH, so the logs — and the evaluation set later drawn from them —
stay unseen. The held-out score is measured on business-log conversations with the project's
own scorer and greedy decoding.

Run: ``python -m demo.train --out models/demo`` (or ``qpipe-demo train``). This module
imports no pydantic/config code, so it also runs on a bare GPU host with torch + transformers.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import platform
import random
import shutil
import tempfile
import time
from collections import defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path

from demo.generator import conversation, conversation_text
from demo.tokenizer import PRE_TOKENIZER, train_tokenizer

log = logging.getLogger(__name__)

ARCH = dict(hidden_size=256, intermediate_size=768, num_hidden_layers=6, num_attention_heads=4,
            num_key_value_heads=2, max_position_embeddings=1024, rope_theta=10000.0,
            rms_norm_eps=1e-5, tie_word_embeddings=False)


@dataclass
class TrainConfig:
    out: str = "models/demo"
    seed: int = 7
    logs_seed: int = 20261129
    logs_conversations: int = 3000
    examples: int = 120000
    heldout: int = 600
    steps: int = 10000
    batch_size: int = 128
    learning_rate: float = 2e-3
    warmup: int = 300
    vocab_size: int = 4096
    max_len: int = 640
    device: str = "auto"
    near_threshold: float = 0.8
    max_minutes: float = 0.0          # >0: fit the step count to this training-time budget
    prepare_only: str = ""            # write tokenizer + encoded corpus here, then stop
    prepared: str = ""                # train from a directory written by --prepare-only


# --- data --------------------------------------------------------------------------------------
def shingles(text: str, k: int = 3) -> set[bytes]:
    words = text.lower().split()
    return {" ".join(words[i:i + k]).encode() for i in range(max(1, len(words) - k + 1))}


def decontaminate(train: list[dict], held: list[dict], threshold: float) -> tuple[list[dict], int]:
    """Drop training conversations that are near duplicates of any held-out one.

    MinHash LSH at a lower threshold proposes candidates; the exact Jaccard of the word
    3-shingles decides. (LSH alone, at the threshold itself, misses some pairs above it.)
    """
    from datasketch import MinHash, MinHashLSH

    lsh = MinHashLSH(threshold=max(0.1, threshold - 0.25), num_perm=128)
    held_sh = []
    for i, conv in enumerate(held):
        sh = shingles(conversation_text(conv["messages"]))
        held_sh.append(sh)
        m = MinHash(num_perm=128, seed=1)
        m.update_batch(list(sh))
        lsh.insert(i, m)
    kept = []
    for conv in train:
        sh = shingles(conversation_text(conv["messages"]))
        m = MinHash(num_perm=128, seed=1)
        m.update_batch(list(sh))
        if not any(len(sh & held_sh[i]) >= threshold * len(sh | held_sh[i]) for i in lsh.query(m)):
            kept.append(conv)
    return kept, len(train) - len(kept)


def encode(tokenizer, messages: list[dict], max_len: int) -> tuple[list[int], list[int]] | None:
    """Token ids and labels; only assistant turns (and their end token) carry loss."""
    text = tokenizer.apply_chat_template(messages, tokenize=False)
    enc = tokenizer(text, return_offsets_mapping=True, add_special_tokens=False)
    spans, pos = [], 0
    for m in messages:
        head = f"<|im_start|>{m['role']}\n"
        start = text.index(head, pos) + len(head)
        end = start + len(m["content"]) + len("<|im_end|>")
        if m["role"] == "assistant":
            spans.append((start, end))
        pos = end
    ids = enc["input_ids"]
    if len(ids) > max_len:
        return None
    labels = [tid if any(s <= a and b <= e for s, e in spans) and b > a else -100
              for tid, (a, b) in zip(ids, enc["offset_mapping"])]
    return ids, labels


# --- evaluation ----------------------------------------------------------------------------------
def evaluate(model, tokenizer, convs: list[dict], device, batch_size: int = 64,
             max_new_tokens: int = 96) -> dict:
    import torch

    from pipeline.evaluate.scorers import score

    tokenizer.padding_side = "left"
    per: dict[str, list[float]] = defaultdict(list)
    by_diff: dict[str, list[float]] = defaultdict(list)
    samples = []
    model.eval()
    for b in range(0, len(convs), batch_size):
        batch = convs[b:b + batch_size]
        prompts = [tokenizer.apply_chat_template(c["messages"][:-1], tokenize=False,
                                                 add_generation_prompt=True) for c in batch]
        enc = tokenizer(prompts, return_tensors="pt", padding=True, add_special_tokens=False).to(device)
        with torch.no_grad():
            out = model.generate(**enc, max_new_tokens=max_new_tokens, do_sample=False,
                                 eos_token_id=tokenizer.eos_token_id,
                                 pad_token_id=tokenizer.pad_token_id)
        for c, row in zip(batch, out[:, enc["input_ids"].shape[1]:]):
            text = tokenizer.decode(row, skip_special_tokens=True).strip()
            s = score(c["rubric"], c["reference"], text)
            per[c["scenario"]].append(s.value)
            by_diff[c["difficulty"]].append(s.value)
            samples.append({"scenario": c["scenario"], "output": text, "score": s.value})
    total = [v for vs in per.values() for v in vs]
    return {"overall": sum(total) / len(total), "n": len(total),
            "by_scenario": {k: round(sum(v) / len(v), 4) for k, v in sorted(per.items())},
            "by_difficulty": {k: round(sum(v) / len(v), 4) for k, v in sorted(by_diff.items())},
            "samples": samples[:20]}


# --- training ------------------------------------------------------------------------------------
def _device(name: str):
    import torch

    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def _batches(data: list[tuple[list[int], list[int]]], batch_size: int, rng: random.Random):
    """Length-bucketed batches (less padding), in a seeded random order, forever."""
    while True:
        order = sorted(range(len(data)), key=lambda i: (len(data[i][0]), rng.random()))
        chunks = [order[i:i + batch_size] for i in range(0, len(order) - batch_size + 1, batch_size)]
        rng.shuffle(chunks)
        yield from chunks


@dataclass
class Prepared:
    tokenizer: object
    data: list[tuple[list[int], list[int]]]
    dropped: int


def prepare(cfg: TrainConfig) -> Prepared:
    """Generate, decontaminate, train the tokenizer and encode: everything before the GPU."""
    held_all = [conversation("logs", cfg.logs_seed, i, mode="placeholder")
                for i in range(cfg.logs_conversations)]
    corpus = [conversation("train", cfg.seed, i, mode="placeholder") for i in range(cfg.examples)]
    corpus, dropped = decontaminate(corpus, held_all, cfg.near_threshold)
    log.info("training corpus: %d conversations (%d dropped as near duplicates of the logs)",
             len(corpus), dropped)
    tokenizer = train_tokenizer((_chatml(c["messages"]) for c in corpus[:30000]), cfg.vocab_size)
    data = [e for e in (encode(tokenizer, c["messages"], cfg.max_len) for c in corpus) if e]
    return Prepared(tokenizer, data, dropped)


def save_prepared(p: Prepared, out: Path) -> None:
    import numpy as np

    out.mkdir(parents=True, exist_ok=True)
    p.tokenizer.save_pretrained(out)
    lengths = np.array([len(a) for a, _ in p.data], dtype=np.int32)
    tokens = np.fromiter((t for a, _ in p.data for t in a), dtype=np.uint16, count=int(lengths.sum()))
    mask = np.fromiter((lab != -100 for _, b in p.data for lab in b), dtype=bool, count=int(lengths.sum()))
    np.savez_compressed(out / "corpus.npz", tokens=tokens, lengths=lengths, loss_mask=np.packbits(mask),
                        dropped=np.array([p.dropped]))


def load_prepared(path: Path) -> Prepared:
    import numpy as np
    from transformers import AutoTokenizer

    z = np.load(path / "corpus.npz")
    tokens, lengths = z["tokens"].astype(np.int64), z["lengths"]
    mask = np.unpackbits(z["loss_mask"])[: len(tokens)].astype(bool)
    data, pos = [], 0
    for n in lengths.tolist():
        ids = tokens[pos:pos + n].tolist()
        data.append((ids, [t if m else -100 for t, m in zip(ids, mask[pos:pos + n].tolist())]))
        pos += n
    return Prepared(AutoTokenizer.from_pretrained(path), data, int(z["dropped"][0]))


def train(cfg: TrainConfig) -> dict:
    import torch
    import transformers
    from transformers import LlamaConfig, LlamaForCausalLM

    t0 = time.time()
    random.seed(cfg.seed)
    torch.manual_seed(cfg.seed)
    device = _device(cfg.device)
    prep = load_prepared(Path(cfg.prepared)) if cfg.prepared else prepare(cfg)
    if cfg.prepare_only:
        save_prepared(prep, Path(cfg.prepare_only))
        return {"prepared": cfg.prepare_only, "conversations": len(prep.data)}
    tokenizer, data, dropped = prep.tokenizer, prep.data, prep.dropped
    n_tokens = sum(len(ids) for ids, _ in data)
    log.info("data ready: %d conversations, %d tokens (%.0f s)", len(data), n_tokens, time.time() - t0)

    model_cfg = LlamaConfig(vocab_size=len(tokenizer), bos_token_id=tokenizer.pad_token_id,
                            eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
                            **ARCH)
    model = LlamaForCausalLM(model_cfg).to(device)
    n_params = sum(p.numel() for p in model.parameters())
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.learning_rate, betas=(0.9, 0.95),
                            weight_decay=0.1)
    total = [cfg.steps]  # may shrink once the step time is known (--max-minutes)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / cfg.warmup) * (
        0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, s / total[0])))))
    rng = random.Random(cfg.seed)
    batches = _batches(data, cfg.batch_size, rng)
    use_bf16 = device.type == "cuda"
    model.train()
    losses = []
    t_train = time.time()
    step = 0
    while step < total[0]:
        idx = next(batches)
        width = max(len(data[i][0]) for i in idx)
        ids = torch.full((len(idx), width), tokenizer.pad_token_id, dtype=torch.long)
        labels = torch.full((len(idx), width), -100, dtype=torch.long)
        mask = torch.zeros((len(idx), width), dtype=torch.long)
        for r, i in enumerate(idx):
            a, b = data[i]
            ids[r, :len(a)], labels[r, :len(b)], mask[r, :len(a)] = (torch.tensor(a), torch.tensor(b), 1)
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=use_bf16):
            loss = model(input_ids=ids.to(device), attention_mask=mask.to(device),
                         labels=labels.to(device)).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        if step == 100:
            t_100 = time.time()
        if step == 300 and cfg.max_minutes > 0:  # steady-state step time (after warm-up)
            per_step = (time.time() - t_100) / 200
            total[0] = max(400, min(cfg.steps, int((cfg.max_minutes * 60 - (t_100 - t_train)) / per_step) + 100))
            log.info("%.1f ms/step: training %d steps to fit %.1f minutes", per_step * 1e3,
                     total[0], cfg.max_minutes)
        if step % 200 == 0 or step == total[0] - 1:
            losses.append((step, round(loss.item(), 4)))
            log.info("step %d/%d loss %.4f (%.0f s)", step, total[0], loss.item(), time.time() - t0)
        step += 1
    train_s = time.time() - t0
    cfg.steps = total[0]

    model = model.to(torch.bfloat16)
    heldout = [conversation("logs", cfg.logs_seed, i, mode="placeholder") for i in range(cfg.heldout)]
    result = evaluate(model, tokenizer, heldout, device)
    log.info("held-out accuracy %.3f %s", result["overall"], result["by_scenario"])
    stats = {"config": asdict(cfg), "parameters": n_params, "train_conversations": len(data),
             "dropped_near_duplicates": dropped, "train_tokens_per_epoch": n_tokens,
             "train_seconds": round(train_s, 1), "device": str(device),
             "gpu": torch.cuda.get_device_name(0) if device.type == "cuda" else None,
             "torch": torch.__version__, "transformers": transformers.__version__,
             "python": platform.python_version(), "loss_curve": losses, "heldout": result,
             "pre_tokenizer": PRE_TOKENIZER}
    _save(model, tokenizer, cfg, stats)
    return stats


def _chatml(messages: list[dict]) -> str:
    return "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)


def _save(model, tokenizer, cfg: TrainConfig, stats: dict) -> None:
    """Write into a temporary directory, then swap it in: never a half-written model."""
    from transformers import GenerationConfig

    out = Path(cfg.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".train-", dir=out.parent))
    model.generation_config = GenerationConfig(do_sample=False, max_new_tokens=96,
                                               eos_token_id=tokenizer.eos_token_id,
                                               pad_token_id=tokenizer.pad_token_id,
                                               bos_token_id=tokenizer.pad_token_id)
    model.save_pretrained(tmp, safe_serialization=True)
    tokenizer.padding_side = "left"
    tokenizer.save_pretrained(tmp)
    (tmp / "training.json").write_text(json.dumps(stats, indent=2) + "\n")
    from demo.card import write as write_card

    write_card(tmp)
    tmp.chmod(0o755)
    for f in tmp.iterdir():
        f.chmod(0o644)
    if out.exists():
        shutil.rmtree(out)
    tmp.rename(out)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for f, default in asdict(TrainConfig()).items():
        parser.add_argument(f"--{f.replace('_', '-')}", type=type(default), default=default)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    stats = train(TrainConfig(**vars(args)))
    if "heldout" not in stats:
        print(json.dumps(stats))
        return
    print(json.dumps({k: stats[k] for k in ("parameters", "train_seconds", "device")}
                     | {"heldout": {k: stats["heldout"][k] for k in ("overall", "by_scenario")}}))


if __name__ == "__main__":
    main()
