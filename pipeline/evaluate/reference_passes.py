"""`divergence_reference`: the reference model's side of every divergence@<variant>, computed
once instead of once per variant.

Every divergence@<variant> teacher-forces the reference (the baseline) along the same sequences —
its own greedy outputs and the gold answers — so its passes are the same for every variant. This
stage runs them once and keeps what the variants need:

- at every position that predicts an output token: the reference's last hidden state (after its
  final norm, before the LM head), with the LM head's weights — a variant stage recomputes the
  reference's full-vocabulary distribution there (KL, top-1 agreement) with one matrix product;
- per item: the gold answer's log-likelihood under the reference.

Float32 in `passes.safetensors` (4 × hidden-size bytes per output token: 1 KB for the demo's
256-wide model, 16 KB for a 4096-wide one), `reference.json` beside it (contract
`qpipe.divergence-reference/v1`) with the identities a variant stage checks before using them.
Nothing in the folder depends on the run (no times): unchanged inputs keep its DVC hash.

A model whose logits are not its LM head applied to the last hidden state (a final soft-cap, a
logit scale) is caught on the first batch: then only the identities are kept (`hidden_states:
false`, with why) and every divergence@ runs the reference itself.

    qpipe divergence-reference               # → results/divergence-reference/
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path
from typing import Any

import numpy as np

from pipeline import progress
from pipeline.contracts.divergence_reference import ReferencePasses
from pipeline.errors import QpipeError
from pipeline.io import atomic_dirs, write_json
from pipeline.layout import Layout
from pipeline.stage_params import Declared, StageView
from pipeline.contracts.files import DIVERGENCE_REFERENCE, SAMPLES
from pipeline.contracts import SampleRecord, read_lines

log = logging.getLogger(__name__)
PARAMS = Declared("divergence_reference", "model", "evaluate.evalset", "divergence.reference",
                  "divergence.device", "variants.${divergence.reference}")
TENSORS = "passes.safetensors"
CARD = DIVERGENCE_REFERENCE
# The LM head applied to the stored states must give the model's own logits to this (float32
# rounding; an architecture that changes logits after the head differs by far more).
HEAD_TOLERANCE = 1e-4


class ReferencePassesError(QpipeError, RuntimeError):
    pass


def teacher_forced(params: StageView, layout: Layout, tokenizer) -> dict[str, Any]:
    """The items the reference was evaluated on (all, or its evaluate.limit first), their prompts
    and the token ids both models are teacher-forced along: the reference's greedy output and
    the gold answer, each re-tokenized with the base tokenizer."""
    from pipeline.evaluate.harness import load_evalset, render

    reference = params.divergence.reference
    records = layout.result(reference) / SAMPLES
    if not records.is_file():
        raise ReferencePassesError(f"{records} does not exist — the baseline's greedy outputs are "
                                   f"the teacher-forcing path — fix: `dvc repro evaluate@{reference}`")
    evalset = load_evalset(layout.evalset)
    outputs = {r.id: r.output for r in read_lines(SampleRecord, records, writer=f"`dvc repro evaluate@{reference}`")}
    items = [i for i in evalset.items if i.id in outputs]
    if len(items) != len(outputs):
        raise ReferencePassesError(f"{records} holds items that are not in {params.evaluate.evalset} "
                                   f"— re-run `dvc repro evaluate@{reference}`")
    return {"evalset": evalset, "items": items, "prompts": render(tokenizer, items),
            "outputs": [tokenizer.encode(outputs[i.id], add_special_tokens=False) for i in items],
            "references": [tokenizer.encode(i.reference, add_special_tokens=False) if i.reference else []
                           for i in items],
            "evalset_sha256": evalset.sha256 if len(items) == len(evalset.items)
            else f"{evalset.sha256}[:{len(items)}]"}


def tokens_sha256(outputs: list[list[int]]) -> str:
    return hashlib.sha256(json.dumps(outputs, separators=(",", ":")).encode()).hexdigest()


def context_length(artifact: Path) -> int:
    """The reference checkpoint's context length (config.json), the long probe's default."""
    config = json.loads((artifact / "config.json").read_text(encoding="utf-8"))
    return int(config.get("max_position_embeddings") or 2048)


def run(params: StageView, layout: Layout) -> str:
    """results/divergence-reference/: passes.safetensors and reference.json; a summary line."""
    import torch
    from safetensors.torch import save_file

    from pipeline.artifacts.manifest import require_verified
    from pipeline.evaluate.divergence import CHUNK, load_reference
    from pipeline.evaluate.passes import (chunk_sequences, continuation, loglik,
                                          sequence_passes)
    from pipeline.models import load_tokenizer

    reference = params.divergence.reference
    artifact = layout.artifact(reference)
    manifest = require_verified(artifact)  # the passes are of the bytes that were evaluated
    tokenizer = load_tokenizer(layout.model, trust_remote_code=params.model.trust_remote_code)
    tf = teacher_forced(params, layout, tokenizer)
    model = load_reference(artifact, device=params.divergence.device)
    head = model.get_output_embeddings()
    states, ref_ll = [], []
    exact, worst, why = True, None, None
    n = len(tf["items"])
    with progress.task(f"divergence reference passes ({reference})", total=n) as shown:
        for start in range(0, n, CHUNK):
            chunk = list(zip(tf["prompts"][start:start + CHUNK], tf["outputs"][start:start + CHUNK],
                             tf["references"][start:start + CHUNK]))
            seqs = chunk_sequences(chunk)
            passes = sequence_passes(model, seqs, hidden=True)
            if start == 0 and seqs:  # is the LM head on the states the model's own logits?
                worst = head_check(model, list(seqs.values())[0][0])
                if worst > HEAD_TOLERANCE:
                    exact, why = False, (f"the LM head on the last hidden states differs from the "
                                         f"model's logits by up to {worst:.3g} (a step after the "
                                         f"head); every divergence@ runs the reference itself")
                    log.warning("divergence reference: %s", why)
            for prompt, output, ref in chunk:
                if output and exact:
                    first, (_, h) = passes[tuple(prompt + output)]
                    states.append(continuation(h, first, len(prompt), len(output)).clone())
                if ref:
                    first, (lp, _) = passes[tuple(prompt + ref)]
                    ref_ll.append(loglik(continuation(lp, first, len(prompt), len(ref)), ref))
                else:
                    ref_ll.append(float("nan"))
                shown.advance()
            del passes
    card = ReferencePasses(
        reference=reference, artifact_sha256=manifest.content_sha256,
        evalset_sha256=tf["evalset_sha256"], ids=[i.id for i in tf["items"]],
        output_tokens_sha256=tokens_sha256(tf["outputs"]), context_length=context_length(artifact),
        hidden_states=exact, lm_head_check_max_abs=worst, why=why,
        method="transformers reference, float32, right-padded batches of "
               f"{CHUNK}-item chunks (as divergence@ batches them)")
    tensors = {"ref_loglik": torch.tensor(ref_ll, dtype=torch.float64),
               "output_offsets": torch.tensor(np.cumsum([0] + [len(o) for o in tf["outputs"]]), dtype=torch.int64)}
    if exact:
        hidden = states[0].shape[-1] if states else head.weight.shape[1]
        tensors |= {"hidden": torch.cat(states) if states else torch.zeros(0, hidden),
                    "lm_head.weight": head.weight.detach().float().cpu().contiguous()}
        if getattr(head, "bias", None) is not None:
            tensors["lm_head.bias"] = head.bias.detach().float().cpu().contiguous()
    dest = layout.divergence_reference
    with atomic_dirs(dest.parent, [dest.name]) as dirs:
        write_json(dirs[dest.name] / CARD, card.dump())
        save_file(tensors, str(dirs[dest.name] / TENSORS), metadata={"schema": ReferencePasses.SCHEMA})
    return (f"divergence reference: {reference}, {n} items, "
            + (f"{sum(len(o) for o in tf['outputs'])} output positions stored" if exact
               else f"no states stored ({why})"))


def head_check(model, seq: list[int]) -> float:
    """The largest difference between the model's logits along `seq` and its LM head applied to
    its last hidden states (0 for an architecture with nothing after the head)."""
    import torch

    with torch.no_grad():
        ids = torch.tensor([seq], device=model.device)
        own = model(ids).logits[0].float()
        via = model.get_output_embeddings()(model.get_decoder()(input_ids=ids).last_hidden_state)[0].float()
    return float((own - via).abs().max().cpu())


class Stored:
    """A variant stage's view of the stored passes: the reference's log-probabilities at item i's
    output positions, and its gold-answer log-likelihood."""

    def __init__(self, folder: Path):
        from safetensors import safe_open

        self.card = ReferencePasses.load(folder / CARD)
        self._file = safe_open(str(folder / TENSORS), framework="pt")
        self.offsets = self._file.get_tensor("output_offsets").tolist()
        self.ref_loglik = self._file.get_tensor("ref_loglik").tolist()
        if self.card.hidden_states:
            self.weight = self._file.get_tensor("lm_head.weight")
            keys = set(self._file.keys())
            self.bias = self._file.get_tensor("lm_head.bias") if "lm_head.bias" in keys else None

    def logprobs(self, i: int):
        import torch

        rows = self._file.get_slice("hidden")[self.offsets[i]:self.offsets[i + 1]]
        return torch.log_softmax(torch.nn.functional.linear(rows, self.weight, self.bias), dim=-1)


def load(params: StageView, layout: Layout, artifact_sha256: str, tf: dict[str, Any]) -> Stored | None:
    """The stored passes for exactly these weights, items and teacher-forced tokens; None when the
    architecture keeps none (`hidden_states: false`). Anything else is an error with the fix —
    never passes of other weights or other outputs."""
    folder = layout.divergence_reference
    fix = "fix: `dvc repro divergence_reference` (or `qpipe divergence-reference`)"
    if not (folder / CARD).is_file():
        raise ReferencePassesError(f"{folder / CARD} does not exist: the reference's passes are "
                                   f"computed once for every variant — {fix}")
    stored = Stored(folder)
    card = stored.card
    checks = [("reference", card.reference, params.divergence.reference),
              ("reference artifact", card.artifact_sha256, artifact_sha256),
              ("evaluation set", card.evalset_sha256, tf["evalset_sha256"]),
              ("items", card.ids, [i.id for i in tf["items"]]),
              ("teacher-forced output tokens", card.output_tokens_sha256, tokens_sha256(tf["outputs"]))]
    for what, got, want in checks:
        if got != want:
            raise ReferencePassesError(f"{folder}: the stored passes are of another {what} than this "
                                       f"stage's — {fix}")
    return stored if card.hidden_states else None
