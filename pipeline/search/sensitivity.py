"""How much each part of a model minds each candidate weight format, measured on the business's
own calibration set: the proxy that a mixed-precision search ranks its candidates by.

A part is a group of linear layers that a mixed recipe gives one format: in each decoder layer,
q/k/v together, the output projection, gate/up together, the down projection (the grouping of
llm-compressor's fused-scale rules and of llama.cpp's per-tensor overrides). For each part and
format the part's weights alone are quantized with compressed-tensors' own numerics (the preset
scheme's `QuantizationArgs`: its bits, group size, symmetry; round-to-nearest, the error a
calibrated method then reduces), every other weight kept, and the model is run over the
calibration texts; the proxy is the mean per-token KL divergence of its next-token distribution
from the unquantized model's. The parts' sensitivities add up to predict a mix's KL (the
assumption of HAWQ-V3 and of ModelOpt's AutoQuantize); `additivity` measures how well on a given
model, and pipeline/search/front.py picks the mixes.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from pipeline import progress

log = logging.getLogger(__name__)

UNQUANTIZED = "BF16"
UNQUANTIZED_BITS = 16.0
# a projection's group within its decoder layer: fused projections share a format
FUSED = {"q_proj": "qkv", "k_proj": "qkv", "v_proj": "qkv", "gate_proj": "gate_up", "up_proj": "gate_up",
         "query_key_value": "qkv", "gate_up_proj": "gate_up"}
LAYER = re.compile(r"^(?P<prefix>.*\.(?:layers|h|blocks)\.\d+)\.(?P<rest>.+)$")


class SensitivityError(ValueError):
    pass


def weight_args(preset: str, group_size: int | None = None):
    """The weight `QuantizationArgs` of a compressed-tensors preset scheme (W4A16, W8A16, …), with
    its group size replaced by `group_size` where given (a group-wise preset only)."""
    from compressed_tensors.quantization import preset_name_to_scheme

    try:
        args = preset_name_to_scheme(preset, ["Linear"]).weights
    except (KeyError, ValueError) as err:
        raise SensitivityError(f"{preset!r} is not a compressed-tensors preset scheme — fix: one of W4A16, "
                               "W8A16 (or BF16 for unquantized)") from err
    if args is None:
        raise SensitivityError(f"preset {preset!r} quantizes no weights")
    if group_size is not None and args.group_size:
        args = args.model_copy(update={"group_size": group_size})
    return args


def unfit(preset: str, in_features: int, group_size: int | None = None) -> str | None:
    """Why a layer of `in_features` columns cannot take the format (compressed-tensors refuses a
    group size that does not divide the columns), or None."""
    if preset == UNQUANTIZED:
        return None
    g = weight_args(preset, group_size).group_size
    if g and in_features % g:
        return f"{in_features} columns do not divide into groups of {g}"
    return None


def bits_per_weight(preset: str, in_features: int, group_size: int | None = None) -> float:
    """A format's stored bits per weight, its scales (bf16) included."""
    if preset == UNQUANTIZED:
        return UNQUANTIZED_BITS
    args = weight_args(preset, group_size)
    per_scale = args.group_size if args.group_size else in_features
    return args.num_bits + 16.0 / per_scale


def parts(model, ignore: tuple[str, ...] = ("lm_head",)) -> dict[str, list[str]]:
    """The model's quantizable linear layers, grouped into parts (in the model's order)."""
    import torch

    out: dict[str, list[str]] = {}
    for name, mod in model.named_modules():
        if not isinstance(mod, torch.nn.Linear) or any(name == i or name.endswith("." + i) for i in ignore):
            continue
        m = LAYER.match(name)
        if m is None:
            key = name
        else:
            leaf = m["rest"].rsplit(".", 1)
            key = f"{m['prefix']}.{'.'.join(leaf[:-1] + [FUSED.get(leaf[-1], leaf[-1])])}"
        out.setdefault(key, []).append(name)
    if not out:
        raise SensitivityError("the model has no linear layers to quantize")
    return out


def fake_quantized(weight, preset: str, group_size: int | None = None):
    """`weight` quantized and dequantized with the preset's numerics (round-to-nearest)."""
    from compressed_tensors.quantization.lifecycle.forward import fake_quantize
    from compressed_tensors.quantization.utils import calculate_qparams

    args = weight_args(preset, group_size)
    w = weight.detach().float()
    rows, cols = w.shape
    if args.group_size:
        if cols % args.group_size:
            raise SensitivityError(f"a weight of {cols} columns does not divide into groups of {args.group_size}")
        g = w.reshape(rows, cols // args.group_size, args.group_size)
        lo, hi = g.amin(-1), g.amax(-1)
    else:
        lo, hi = w.amin(-1, keepdim=True), w.amax(-1, keepdim=True)
    scale, zero = calculate_qparams(lo, hi, args)
    return fake_quantize(w, scale, zero, args).to(weight.dtype)


@contextmanager
def quantized(model, assignment: dict[str, str], groups: dict[str, list[str]],
              group_size: int | None = None) -> Iterator[None]:
    """The model with each part in `assignment` quantized to its format, restored afterwards."""
    import torch

    mods = dict(model.named_modules())
    saved = {}
    try:
        with torch.no_grad():
            for part, preset in assignment.items():
                if preset == UNQUANTIZED:
                    continue
                for name in groups[part]:
                    w = mods[name].weight
                    saved[name] = w.detach().clone()
                    w.copy_(fake_quantized(w, preset, group_size))
        yield
    finally:
        with torch.no_grad():
            for name, w in saved.items():
                mods[name].weight.copy_(w)


def token_batches(tokenizer, texts: list[str], max_tokens: int, max_seq_len: int, batch: int = 4) -> list[dict]:
    """The calibration texts as padded batches, cut to `max_seq_len` tokens each and `max_tokens`
    in all (texts in their order: the set is already stratified)."""
    import torch

    seqs, total = [], 0
    for text in texts:
        ids = tokenizer(text, add_special_tokens=False)["input_ids"][:max_seq_len]
        if len(ids) < 2:
            continue
        ids = ids[: max_tokens - total] if total + len(ids) > max_tokens else ids
        seqs.append(ids)
        total += len(ids)
        if total >= max_tokens:
            break
    if not seqs:
        raise SensitivityError("no calibration text of two tokens or more")
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    out = []
    for i in range(0, len(seqs), batch):
        chunk = seqs[i:i + batch]
        width = max(len(s) for s in chunk)
        ids = torch.full((len(chunk), width), pad, dtype=torch.long)
        mask = torch.zeros((len(chunk), width), dtype=torch.long)
        for j, s in enumerate(chunk):
            ids[j, :len(s)] = torch.tensor(s)
            mask[j, :len(s)] = 1
        out.append({"input_ids": ids, "attention_mask": mask})
    return out


class Reference:
    """The unquantized model's next-token log-probabilities on the calibration batches, kept to
    score every quantized pass against (tokens × vocabulary floats)."""

    def __init__(self, model, batches: list[dict]):
        self.model, self.batches = model, batches
        self.logp = [self._logp(b) for b in batches]
        self.tokens = int(sum(b["attention_mask"].sum() for b in batches))

    def _logp(self, b: dict):
        import torch

        with torch.no_grad():
            logits = self.model(**b).logits.float()
        return torch.log_softmax(logits, -1)[b["attention_mask"].bool()]

    def kl(self) -> float:
        """Mean per-token KL(unquantized ‖ the model as it is now)."""
        import torch

        total = 0.0
        for b, ref in zip(self.batches, self.logp):
            q = self._logp(b)
            total += float(torch.sum(ref.exp() * (ref - q)))
        return total / self.tokens


def measure(model, batches: list[dict], formats: list[str], group_size: int | None = None,
            on_step: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Each part's KL under each format (alone), and each format's KL everywhere at once (the
    uniform variant, where every part can take it), with the parts' weight counts. A part that
    cannot take a format (its columns and the group size) is listed under `unfit`."""
    groups = parts(model)
    mods = dict(model.named_modules())
    ref = Reference(model, batches)
    started = time.time()
    rows, unfit_rows = [], []
    with progress.task("sensitivity", total=len(groups) * len(formats) + len(formats)) as shown:
        for part, names in groups.items():
            weights = sum(mods[n].weight.numel() for n in names)
            for f in formats:
                why = next((w for n in names if (w := unfit(f, mods[n].weight.shape[1], group_size))), None)
                if why is not None:
                    unfit_rows.append({"part": part, "format": f, "why": why})
                else:
                    bits = sum(mods[n].weight.numel() * bits_per_weight(f, mods[n].weight.shape[1], group_size)
                               for n in names) / weights
                    with quantized(model, {part: f}, groups, group_size):
                        rows.append({"part": part, "format": f, "kl": ref.kl(), "weights": weights,
                                     "bits_per_weight": round(bits, 4)})
                shown.advance()
                if on_step:
                    on_step(f"{part} {f}")
        uniform = {}
        for f in formats:
            if not any(u["format"] == f for u in unfit_rows):
                with quantized(model, dict.fromkeys(groups, f), groups, group_size):
                    uniform[f] = ref.kl()
            shown.advance()
    return {"parts": {p: names for p, names in groups.items()}, "rows": rows, "unfit": unfit_rows,
            "weights": {p: sum(mods[n].weight.numel() for n in names) for p, names in groups.items()},
            "uniform_kl": uniform, "tokens": ref.tokens, "seconds": round(time.time() - started, 1)}


def mix_kl(model, batches: list[dict], assignment: dict[str, str], reference: Reference | None = None,
           group_size: int | None = None) -> float:
    """The measured KL of a mix (every part at its assigned format at once)."""
    ref = reference or Reference(model, batches)
    with quantized(model, assignment, parts(model), group_size):
        return ref.kl()
