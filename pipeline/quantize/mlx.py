"""MLX-LM backend: MLX's own quantized checkpoints (`mlx_lm.convert`), run in its own environment
(see `ExternalBackend` in base.py; made by `bash scripts/setup-backend-env.sh mlx`: mlx[cpu] and
mlx-lm, no torch). Calibration-free, and deterministic: converting twice gives the same bytes
(docs/mlx.md §2), so `qpipe reproduce` matches.

Recipe (recipes/mlx_*.yaml): `mode:` (affine | mxfp4 | nvfp4 | mxfp8), `bits:`, `group_size:`
and optionally `dtype:` (float16 | bfloat16 | float32; default: the stored dtype). The scheme
fixes the mode and bits (mlx_q4/mlx_q8: affine 4/8-bit, group size from the recipe — 32, 64 or
128; mlx_mxfp4/mlx_nvfp4/mlx_mxfp8: the microscaling formats, whose group size is fixed at 32, 16
and 32). MLX quantizes the embedding and lm_head too, and silently leaves unquantized any layer
whose in-features its group size does not divide: refused here (and by `qpipe validate`) with a
dividing group size proposed.

RoPE: mlx-lm's Llama reads only a top-level `rope_theta` (and `rope_scaling`); a transformers-5
config keeps them in `rope_parameters`, which mlx-lm silently drops (theta 10000, no scaling). The
artifact's config.json gets `rope_theta` copied to the top level (`fix_rope`); a `rope_type` other
than "default" (a scaling mlx-lm would ignore) is refused before anything is converted.

The worker (`<mlx env python> -m pipeline.quantize.mlx request.json result.json`) converts into
the stage's staging directory, fixes the RoPE keys, reloads the artifact with `mlx_lm.load` and
generates the load-check prompt greedily. The same worker tokenizes texts with the artifact's
own tokenizer as `mlx_lm.server` does (`tokenize` requests), for the mlx engine's prompt check.
Only the standard library and base.py are imported at module level.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

from pipeline.quantize.base import (
    ExternalBackend,
    QuantizeRequest,
    linear_in_features,
    log,
    read_request,
    versions,
    write_result,
)
from pipeline.stage_params import StageView

# scheme -> (mode, bits, the fixed group size or None: the recipe's, default 64)
MLX_SCHEMES: dict[str, tuple[str, int, int | None]] = {
    "mlx_q4": ("affine", 4, None),
    "mlx_q8": ("affine", 8, None),
    "mlx_mxfp4": ("mxfp4", 4, 32),
    "mlx_nvfp4": ("nvfp4", 4, 16),
    "mlx_mxfp8": ("mxfp8", 8, 32),
}
AFFINE_GROUP_SIZES = (32, 64, 128)   # what mx.quantize takes in affine mode
DEFAULT_AFFINE_GROUP = 64
DTYPES = ("float16", "bfloat16", "float32")


def recipe_settings(scheme: str, recipe: dict[str, Any]) -> tuple[str, int, int]:
    """(mode, bits, group size) the conversion uses for `scheme` with `recipe`."""
    mode, bits, fixed = MLX_SCHEMES[scheme]
    group = fixed or int(recipe.get("group_size") or DEFAULT_AFFINE_GROUP)
    return mode, bits, group


def quantized_in_features(model_dir: Path) -> dict[str, int]:
    """In-features of every 2-D weight MLX would quantize: the decoder layers' linears, the
    embedding and lm_head (MLX quantizes both), from safetensors headers."""
    from safetensors import safe_open

    out = dict(linear_in_features(model_dir))
    for f in sorted(Path(model_dir).glob("*.safetensors")):
        with safe_open(str(f), framework="np") as st:
            for key in st.keys():
                if key.endswith((".weight",)) and ("embed_tokens" in key or key.startswith("lm_head")):
                    shape = st.get_slice(key).get_shape()
                    if len(shape) == 2:
                        out[key[: -len(".weight")]] = int(shape[1])
    return out


def dividing_group(widths: list[int], below: int | None = None) -> int | None:
    """The largest affine group size MLX takes that divides every width (smaller than `below`)."""
    return next((g for g in sorted(AFFINE_GROUP_SIZES, reverse=True)
                 if (below is None or g != below) and all(w % g == 0 for w in widths)), None)


def rope_problems(config: dict[str, Any], where: str) -> tuple[list[str], list[str]]:
    """(problems, notes) of a base model's RoPE keys for mlx-lm (docs/mlx.md §4): a rope_type
    other than default is refused (mlx-lm's Llama would ignore the scaling); a theta only in
    rope_parameters is handled by `fix_rope` (noted)."""
    cfg = config.get("text_config", config)
    params = cfg.get("rope_parameters")
    if not isinstance(params, dict):
        return [], []
    problems, notes = [], []
    rope_type = params.get("rope_type", params.get("type", "default"))
    if rope_type not in (None, "default"):
        problems.append(
            f"{where}: rope_parameters.rope_type is {rope_type!r}; mlx-lm reads only a top-level "
            "rope_theta/rope_scaling and would silently run without this scaling (different "
            "outputs, not an error) — fix: serve this model with another backend/engine (vLLM, "
            "llama.cpp); MLX variants need rope_type 'default'")
    if "rope_theta" in params and "rope_theta" not in cfg:
        notes.append(f"rope_theta {params['rope_theta']} is only in rope_parameters, which mlx-lm "
                     "ignores (it would use 10000): copied to the artifact's top-level rope_theta")
    return problems, notes


def fix_rope(config_path: Path) -> bool:
    """Copy a transformers-5 `rope_parameters.rope_theta` to the top-level `rope_theta` of the
    artifact's config.json (mlx-lm reads only that). True when the file changed. Refuses a
    rope_type other than "default" (the backend's check refuses it earlier)."""
    config = json.loads(config_path.read_text(encoding="utf-8"))
    problems, _ = rope_problems(config, str(config_path))
    if problems:
        raise ValueError(problems[0])
    params = config.get("rope_parameters")
    if not isinstance(params, dict) or "rope_theta" not in params or "rope_theta" in config:
        return False
    config["rope_theta"] = params["rope_theta"]
    # mlx_lm.save writes config.json with indent 4 (and sorted keys: its own save_config)
    config_path.write_text(json.dumps(dict(sorted(config.items())), indent=4) + "\n", encoding="utf-8")
    return True


def handled_notes(params: StageView, root: Path) -> list[str]:
    """What `qpipe validate` reports as handled rather than wrong (after "OK"): a RoPE theta only
    in rope_parameters, which this backend copies to the artifact's top-level rope_theta."""
    users = [n for n, v in params.variants.items() if v.backend == "mlx"]
    path = Path(root) / params.model.path / "config.json"
    if not users or not path.is_file():
        return []
    _, found = rope_problems(json.loads(path.read_text(encoding="utf-8")), "config.json")
    return [f"{', '.join(users)}: {n} (handled by the mlx backend)" for n in found]


class MlxBackend(ExternalBackend):
    name = "mlx"
    schemes = frozenset(MLX_SCHEMES)
    format = "mlx"
    recipe_format = "tool"

    def group_size(self, recipe: dict[str, Any]) -> int | None:
        mode = recipe.get("mode", "affine")
        fixed = {m: g for m, _, g in MLX_SCHEMES.values() if g}.get(mode)
        try:
            return fixed or int(recipe.get("group_size") or DEFAULT_AFFINE_GROUP)
        except (TypeError, ValueError):
            return None

    def shape_problems(self, variant: str, scheme: str, group: int, families: list[tuple[str, int, list[str]]],
                       recipe_path: str) -> list[tuple[str, str]]:
        """MLX quantizes every Linear, the embedding and lm_head, and silently leaves unquantized
        a layer whose in-features its group size does not divide (a different model, no error)."""
        widths = [value for _, value, _ in families]
        proposal = dividing_group(widths, below=group)
        affine = MLX_SCHEMES.get(scheme, ("affine",))[0] == "affine"
        problems = []
        for dim, value, modules in families:
            if value % group == 0:
                continue
            hit = modules + (["model.embed_tokens"] if dim == "hidden_size" else [])
            kinds = sorted({m.rsplit(".", 1)[-1] for m in hit})
            fix = (f"set `group_size: {proposal}` in {recipe_path} (it divides every layer)" if proposal and affine
                   else f"use scheme mlx_q4 or mlx_q8 with `group_size: {proposal}` ({scheme}'s group "
                        f"size is fixed at {group})" if proposal
                   else "no MLX group size (32, 64, 128) divides every layer: quantize with another backend")
            problems.append((f"{dim}={value} is not divisible by {group}, the MLX group size of {variant!r} "
                             f"({recipe_path}): MLX would silently leave {len(hit)} layers ({', '.join(kinds)}) "
                             "unquantized", fix))
        return problems

    def base_model_problems(self, config: dict[str, Any]) -> list[tuple[str, str]]:
        """mlx-lm reads only a top-level rope_theta/rope_scaling: a rope_type other than default
        in rope_parameters would be silently ignored (refused); a theta only there is copied to
        the artifact's top level by this backend (a note, `handled_notes`)."""
        found, _ = rope_problems(config, "config.json")
        rope = config.get("text_config", config).get("rope_parameters") or {}
        return [(f"the base model's rope_parameters.rope_type is {rope.get('rope_type')!r}: mlx-lm would "
                 "ignore this RoPE scaling and generate with plain RoPE (different outputs, no error)",
                 "serve this model with another backend and engine (vLLM, llama.cpp); MLX variants "
                 "need rope_type 'default'")] if found else []

    def recipe_problems(self, req: QuantizeRequest, recipe: dict[str, Any]) -> list[str]:
        if req.scheme not in MLX_SCHEMES:
            return [f"{req.variant}: backend mlx does not do scheme {req.scheme}"]
        mode, bits, fixed = MLX_SCHEMES[req.scheme]
        problems = []
        if recipe.get("mode", mode) != mode:
            problems.append(f"{req.recipe}: mode is {recipe.get('mode')!r} but scheme {req.scheme} is "
                            f"MLX {mode} — fix: set `mode: {mode}` or use the scheme of that mode")
        if int(recipe.get("bits", bits)) != bits:
            problems.append(f"{req.recipe}: bits is {recipe.get('bits')} but scheme {req.scheme} is "
                            f"{bits}-bit — fix: set `bits: {bits}`")
        if recipe.get("dtype") not in (None, *DTYPES):
            problems.append(f"{req.recipe}: dtype {recipe.get('dtype')!r} — fix: one of {', '.join(DTYPES)}, "
                            "or leave it out (the stored dtype)")
        unknown = sorted(set(recipe) - {"mode", "bits", "group_size", "dtype"})
        if unknown:
            problems.append(f"{req.recipe}: unknown keys {unknown} — fix: an mlx recipe has mode, "
                            "bits, group_size and optionally dtype")
        group = recipe.get("group_size")
        if fixed and group not in (None, fixed):
            problems.append(f"{req.recipe}: {mode} quantizes in groups of {fixed}, not {group} — "
                            f"fix: set `group_size: {fixed}` (or leave it out)")
        elif not fixed and group is not None and group not in AFFINE_GROUP_SIZES:
            problems.append(f"{req.recipe}: MLX affine quantization takes group size 32, 64 or 128, "
                            f"not {group} — fix: set `group_size:` to one of them")
        if problems:
            return problems
        _, _, group = recipe_settings(req.scheme, recipe)
        problems += mlx_group_problems(req, group, mode)
        config_path = Path(req.model_dir) / "config.json"
        if config_path.is_file():
            problems += rope_problems(json.loads(config_path.read_text(encoding="utf-8")),
                                      str(config_path))[0]
        return problems

    def quantize(self, req: QuantizeRequest):
        result = super().quantize(req)
        if result.format != "mlx":
            raise ValueError(f"mlx worker returned format {result.format!r}")
        return result


def mlx_group_problems(req: QuantizeRequest, group: int, mode: str) -> list[str]:
    """MLX skips (leaves unquantized, silently) a layer whose in-features `group` does not
    divide: refuse it, proposing a group size that divides them all."""
    widths = quantized_in_features(req.model_dir)
    bad = {n: k for n, k in widths.items() if k % group}
    if not bad:
        return []
    names = ", ".join(f"{n} ({k})" for n, k in sorted(bad.items())[:6])
    more = f" and {len(bad) - 6} more" if len(bad) > 6 else ""
    proposal = dividing_group(list(widths.values()), below=group)
    fix = (f"set `group_size: {proposal}` in {req.recipe} (it divides every layer)" if proposal and mode == "affine"
           else f"use scheme mlx_q4/mlx_q8 with `group_size: {proposal}`" if proposal
           else "no MLX group size divides every layer: use another backend")
    return [f"{req.recipe}: group size {group} does not divide the in-features of {names}{more} in "
            f"{req.model_dir}; MLX would silently leave them unquantized — fix: {fix}"]


# ── the worker, in the backend's environment ──────────────────────────────────────────


def _tokenize(request: dict[str, Any]) -> dict[str, Any]:
    """Token ids of texts as mlx_lm.server makes them: `tokenizer.encode(prompt)`."""
    from mlx_lm.utils import load_tokenizer

    tok = load_tokenizer(Path(request["tokenize"]["dir"]))
    return {"ids": [list(tok.encode(t)) for t in request["tokenize"]["texts"]],
            "eos_token_ids": sorted(tok.eos_token_ids)}


def load_check(out_dir: Path, spec: dict[str, Any]) -> dict[str, Any]:
    """Reload the artifact with mlx_lm.load and generate the load-check prompt greedily."""
    from mlx_lm import load, stream_generate
    from mlx_lm.sample_utils import make_sampler

    t0 = time.time()
    model, tok = load(str(out_dir))
    ids = tok.apply_chat_template(spec["messages"], add_generation_prompt=True)
    if isinstance(ids, dict) or hasattr(ids, "keys"):
        ids = ids["input_ids"]
    tokens = [int(r.token) for r in stream_generate(model, tok, list(ids), max_tokens=spec["new_tokens"],
                                                    sampler=make_sampler(temp=0.0))]
    text = tok.decode([t for t in tokens if t not in tok.eos_token_ids])
    version = versions("mlx-lm").get("mlx-lm")
    return {"loader": f"mlx-lm {version} mlx_lm.load (mlx CPU)", "ok": True, "tokens": tokens,
            "text": text, "device": "cpu", "seconds": round(time.time() - t0, 3)}


def main() -> None:
    request, result_path = read_request()
    if "tokenize" in request:
        write_result(result_path, _tokenize(request))
        return
    if "load_only" in request:
        write_result(result_path, {"load_check": load_check(Path(request["load_only"]),
                                                            request["load_check"])})
        return
    from mlx_lm import convert

    mode, bits, group = recipe_settings(request["scheme"], request["recipe"])
    out = Path(request["out_dir"])
    # mlx_lm.convert refuses an existing folder: it writes a fresh one inside the staging
    # directory, whose files then move up.
    scratch = out / ".mlx-convert"
    shutil.rmtree(scratch, ignore_errors=True)
    log(f"mlx: converting {request['variant']} ({mode}, {bits} bit, group size {group})")
    t0 = time.time()
    convert(request["model_dir"], mlx_path=str(scratch), quantize=True, q_group_size=group,
            q_bits=bits, q_mode=mode, dtype=request["recipe"].get("dtype"),
            trust_remote_code=request["trust_remote_code"])
    for f in sorted(scratch.iterdir()):
        os.replace(f, out / f.name)
    scratch.rmdir()
    convert_s = time.time() - t0
    notes = []
    config = json.loads((out / "config.json").read_text(encoding="utf-8"))
    _, rope_notes = rope_problems(config, "config.json")
    if fix_rope(out / "config.json"):
        notes += rope_notes
    config = json.loads((out / "config.json").read_text(encoding="utf-8"))
    check = load_check(out, request["load_check"])
    write_result(result_path, {
        "format": "mlx",
        "tool_versions": versions("mlx", "mlx-cpu", "mlx-lm", "transformers"),
        "details": {"mlx_quantization": config.get("quantization"), "mode": mode, "bits": bits,
                    "group_size": group, "dtype": request["recipe"].get("dtype"),
                    "rope_theta": config.get("rope_theta"), "convert_seconds": round(convert_s, 3)},
        "notes": notes,
        "load_check": check,
    })


if __name__ == "__main__":
    main()
