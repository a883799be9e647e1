"""The `sensitivity` stage (`qpipe sensitivity`): the base model's sensitivity, part by part, to
each candidate weight format, on a business calibration set — and the mixed-precision candidates
it proposes under the size budgets of params `search` (docs/search.md).

The model is loaded in float32 (the unquantized reference; its weights are the checkpoint's
numbers) on `search.device`; the calibration set's own rendered texts are read in their order up
to `search.tokens` tokens. Outputs, in `search.out_dir`: sensitivity.json (the contract),
sensitivity.md and sensitivity.png. Nothing in them depends on the run (no times), so unchanged
inputs keep the stage's DVC hash.

    qpipe sensitivity                  # → reports/search/sensitivity.{json,md,png}
"""

from __future__ import annotations

import hashlib
import logging
import time
from typing import Any

import yaml

from pipeline.contracts import CalibrationCard, SensitivityReport
from pipeline.contracts.files import CALIBRATION_DATA, CARD, SENSITIVITY, SENSITIVITY_MD, SENSITIVITY_PLOT
from pipeline.errors import QpipeError
from pipeline.io import atomic_dirs, file_sha256, write_json
from pipeline.layout import Layout
from pipeline.search import front, recipes, sensitivity
from pipeline.stage_params import Declared, StageView

log = logging.getLogger(__name__)
PARAMS = Declared("sensitivity", "model", "search")
CANDIDATES = "candidates"  # <out_dir>/candidates/<label>/{llmcompressor,gguf}.yaml
HEADER = {"llmcompressor": "llm-compressor recipe of a mixed-precision proposal: config_groups per format",
          "gguf": "GGUF recipe (llama.cpp backend) of a mixed-precision proposal: preset + --tensor-type overrides"}


class SearchError(QpipeError, ValueError):
    pass


def formats_allowed(params: StageView) -> list[str]:
    s = params.search
    return list(s.formats) + ([sensitivity.UNQUANTIZED] if s.keep_unquantized else [])


def run(params: StageView, layout: Layout) -> dict[str, Any]:
    """`search.out_dir`/sensitivity.json, .md, .png (`params`: the stage's own, PARAMS)."""
    import pyarrow.parquet as pq

    from pipeline.models import load_model, load_tokenizer
    from pipeline.search.sensitivity_report import plot, write_markdown

    s = params.search
    calib = layout.calibration_set(s.calibration)
    data = calib / CALIBRATION_DATA
    if not data.is_file():
        raise SearchError(f"{data} does not exist — fix: `qpipe calib build {s.calibration}` "
                          f"(or `dvc repro calibration@{s.calibration}`)")
    card = CalibrationCard.load(calib / CARD)
    texts = pq.read_table(data, columns=["text"]).column("text").to_pylist()
    tok = load_tokenizer(layout.model, trust_remote_code=params.model.trust_remote_code)
    model = load_model(layout.model, dtype="float32", trust_remote_code=params.model.trust_remote_code,
                       device=s.device).eval()
    batches = [{k: v.to(model.device) for k, v in b.items()}
               for b in sensitivity.token_batches(tok, texts, s.tokens, s.max_seq_len)]
    started = time.time()
    measured = sensitivity.measure(model, batches, list(s.formats), group_size=s.group_size)
    allowed = formats_allowed(params)
    report = {"schema": SensitivityReport.SCHEMA, "model": params.model.name,
              "model_sha256": _weights_sha256(layout), "calibration": s.calibration,
              "calibration_sha256": card.content_sha256 or file_sha256(data),
              "method": _method(params), "formats": allowed, "group_size": s.group_size,
              "tokens": measured["tokens"], "parts": measured["parts"], "rows": measured["rows"],
              "unfit": measured["unfit"], "weights": measured["weights"],
              "uniform": front.uniform(measured, allowed),
              "candidates": front.front(measured, allowed, list(s.budgets))}
    dest = layout.search
    recipes = {c["label"]: _recipes(c, measured["parts"], s.group_size) for c in _labelled(report["candidates"])}
    for c in report["candidates"]:
        c["recipes"] = {tool: (f"{CANDIDATES}/{c['label']}/{tool}.yaml" if r is not None else None)
                        for tool, (r, _) in recipes[c["label"]].items()}
        c["notes"] = [why for _, why in recipes[c["label"]].values() if why]
    report = SensitivityReport.read(report, dest / SENSITIVITY).dump()
    with atomic_dirs(dest.parent, [dest.name]) as staged:
        out = staged[dest.name]
        for label, made in recipes.items():
            (out / CANDIDATES / label).mkdir(parents=True)
            for tool, (recipe, _) in made.items():
                if recipe is not None:
                    (out / CANDIDATES / label / f"{tool}.yaml").write_text(
                        f"# {HEADER[tool]} (qpipe sensitivity: proposal {label})\n"
                        + yaml.safe_dump(recipe, sort_keys=False, width=200), encoding="utf-8")
        write_json(out / SENSITIVITY, report)
        write_markdown(report, out / SENSITIVITY_MD)
        plot(report, out / SENSITIVITY_PLOT)
    log.info("sensitivity: %d parts × %d formats on %d tokens in %.0f s", len(report["parts"]),
             len(s.formats), report["tokens"], time.time() - started)
    return report | {"out": str(dest)}


def _labelled(candidates: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each proposal named by its budget (`mix_5_0`: at most 5.0 bits per weight)."""
    for c in candidates:
        c["label"] = "mix_" + f"{c['budget_bits']:g}".replace(".", "_")
    return candidates


def _recipes(c: dict[str, Any], parts: dict[str, list[str]], group_size: int | None
             ) -> dict[str, tuple[dict[str, Any] | None, str | None]]:
    """The proposal as each tool's recipe, or why it cannot be written."""
    out: dict[str, tuple[dict[str, Any] | None, str | None]] = {
        "llmcompressor": (recipes.llmcompressor_recipe(c["assignment"], parts, group_size), None)}
    try:
        out["gguf"] = (recipes.gguf_recipe(c["assignment"]), None)
    except recipes.RecipeError as err:
        out["gguf"] = (None, f"no GGUF recipe: {err}")
    return out


def _weights_sha256(layout: Layout) -> str:
    files = sorted(layout.model.glob("*.safetensors"))
    if not files:
        raise SearchError(f"{layout.model} has no .safetensors weights — fix: model.path must be a Hugging Face "
                          "checkpoint folder with safetensors weights")
    return hashlib.sha256("".join(f"{f.name}:{file_sha256(f)}\n" for f in files).encode()).hexdigest()


def _method(params: StageView) -> str:
    s = params.search
    group = f", groups of {s.group_size}" if s.group_size else ""
    return (f"each part alone quantized round-to-nearest with compressed-tensors' preset numerics "
            f"({', '.join(s.formats)}{group}), the rest kept; mean per-token KL(unquantized ‖ quantized) of "
            f"the float32 model over up to {s.tokens} tokens of calibration set '{s.calibration}' "
            f"(≤ {s.max_seq_len} per text); mixes: the summed KL minimised under each budget of average "
            "stored bits per weight (an integer program, HiGHS)")


def summary_lines(r: dict[str, Any]) -> list[str]:
    lines = [f"sensitivity: {len(r['parts'])} parts, {r['tokens']} calibration tokens → {r['out']}"]
    for u in r["uniform"]:
        lines.append(f"  uniform {u['format']}: {u['bits_per_weight']:.3f} bits/weight, KL {u['measured_kl']:.3g} "
                     f"(sum of parts {u['predicted_kl']:.3g})")
    for c in r["candidates"]:
        mix = ", ".join(f"{n} {f}" for f, n in c["formats"].items() if n)
        lines.append(f"  ≤ {c['budget_bits']} bits: {c['bits_per_weight']:.3f} bits/weight, predicted KL "
                     f"{c['predicted_kl']:.3g} ({mix})")
    return lines
