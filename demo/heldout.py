"""Score a demo-model checkpoint on held-out business-log conversations.

The held-out conversations are the business logs' own (stream ``logs``), rendered with PII
placeholders as the scrubber would leave them; the training corpus was decontaminated against
them. Greedy decoding, the project's scorers.
"""

from __future__ import annotations

import os
from pathlib import Path

from demo.generator import conversation


def heldout_conversations(seed: int, n: int) -> list[dict]:
    return [conversation("logs", seed, i, mode="placeholder") for i in range(n)]


def evaluate_model(model_dir: Path | str, *, seed: int, n: int, device: str = "cpu") -> dict:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from demo.train import evaluate

    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.bfloat16).to(device)
    return evaluate(model, tokenizer, heldout_conversations(seed, n), torch.device(device))
