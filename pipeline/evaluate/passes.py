"""Teacher-forced passes for the divergence stages: log-probabilities of a model along token
sequences, batched and right-padded, with only the positions that predict a continuation going
through the LM head and the softmax."""

from __future__ import annotations

from typing import Any

import numpy as np


def logprobs(model, ids: list[int], start: int = 0):
    """Log-probabilities at positions `start`… of `ids` (one sequence, one pass)."""
    return batched_logprobs(model, [ids], 1, starts=[start])[0]


BATCH = 8  # sequences per forward pass: ~2.3× the one-at-a-time rate on 2 CPU cores (32: 1.8×)


def _head_rows(model, ids, mask, lo: int):
    """The model's own logits at positions `lo`… of a batch (its `logits_to_keep`: the LM head and
    whatever follows it run on those positions only — 28% less time for the evaluation set's
    prompts, the same values); a model without that argument computes them all."""
    import torch

    try:
        return model(ids, attention_mask=mask, logits_to_keep=torch.arange(lo, ids.shape[1])).logits
    except TypeError:
        return model(ids, attention_mask=mask).logits[:, lo:]


def batched_logprobs(model, seqs: list[list[int]], batch: int = BATCH, *, hidden: bool = False,
                     starts: list[int] | None = None) -> list:
    """Log-probabilities of every position from ``starts[i]`` on (default 0: all) of every
    sequence — row r is position starts[i] + r — ``batch`` sequences of similar length per
    forward pass, right-padded under an attention mask: a real position attends to the same
    tokens at the same positions as alone, so it gets the same values up to float rounding of
    the batched matmuls (~1e-5 in log-probability; tests bound it). Only the positions asked for
    go through the LM head and the softmax. ``hidden``: each as (log-probs, last hidden states
    at the same positions), the logits being the LM head applied to those states (the same
    operations as the model's own forward)."""
    import torch

    starts = starts or [0] * len(seqs)
    out: list = [None] * len(seqs)
    order = sorted(range(len(seqs)), key=lambda i: len(seqs[i]))  # little padding per batch
    for k in range(0, len(order), batch):
        idx = order[k:k + batch]
        width = max(len(seqs[i]) for i in idx)
        lo = min(starts[i] for i in idx)
        ids = torch.zeros(len(idx), width, dtype=torch.long)
        mask = torch.zeros(len(idx), width, dtype=torch.long)
        for row, i in enumerate(idx):
            ids[row, :len(seqs[i])] = torch.tensor(seqs[i])
            mask[row, :len(seqs[i])] = 1
        ids, mask = ids.to(model.device), mask.to(model.device)
        with torch.no_grad():  # on the model's device; the results come back to the host
            if hidden:
                states = model.get_decoder()(input_ids=ids, attention_mask=mask).last_hidden_state
                logits = model.get_output_embeddings()(states[:, lo:]).float()
                states = states.float().cpu()
            else:
                logits = _head_rows(model, ids, mask, lo).float()
        lp = torch.log_softmax(logits, dim=-1).cpu()
        for row, i in enumerate(idx):
            rows = lp[row, starts[i] - lo:len(seqs[i]) - lo]
            out[i] = (rows, states[row, starts[i]:len(seqs[i])]) if hidden else rows
    return out


def chunk_sequences(items: list[tuple[list[int], list[int], list[int]]]) -> dict[tuple, tuple[list[int], int]]:
    """The distinct sequences a chunk of (prompt, output, reference) items is teacher-forced
    along (a reference equal to the output shares its sequence), in a fixed order, each with the
    first position whose log-probabilities are needed: the one that predicts the continuation's
    first token (the prompt's last)."""
    seqs: dict[tuple, tuple[list[int], int]] = {}
    for prompt, output, reference in items:
        for cont in (output, reference):
            if cont:
                key = tuple(prompt + cont)
                start = min(len(prompt) - 1, seqs[key][1]) if key in seqs else len(prompt) - 1
                seqs[key] = (prompt + cont, start)
    return seqs


def sequence_passes(model, seqs: dict[tuple, tuple[list[int], int]], **kw) -> dict[tuple, Any]:
    """`batched_logprobs` over `chunk_sequences`' sequences, keyed alike, each from its start."""
    todo = list(seqs.values())
    got = batched_logprobs(model, [q for q, _ in todo], starts=[st for _, st in todo], **kw)
    return {key: (start, lp) for key, (_, start), lp in zip(seqs, todo, got)}


def chunk_passes(base, variant, items: list[tuple[list[int], list[int], list[int]]]) -> dict:
    """The passes a chunk of (prompt, output, reference) items needs, batched: sequence (as a
    tuple) → (first position, baseline log-probs, variant log-probs) from that position on. The
    shortcuts of `item_signals` apply: byte-identical weights need none; a reference equal to
    the output reuses the output's."""
    if variant is None:
        return {}
    seqs = chunk_sequences(items)
    b, v = sequence_passes(base, seqs), sequence_passes(variant, seqs)
    return {key: (b[key][0], b[key][1], v[key][1]) for key in seqs}


def continuation(rows, first: int, prompt_len: int, length: int):
    """Of log-probability rows starting at position `first`, those at the positions that predict
    a continuation of `length` tokens after a prompt of `prompt_len`."""
    at = prompt_len - 1 - first
    return rows[at:at + length]


def loglik(rows, tokens: list[int]) -> float:
    """The log-likelihood of `tokens` from the log-probability rows at the positions that
    predict them (`continuation`)."""
    return float(rows[np.arange(len(tokens)), tokens].sum())
