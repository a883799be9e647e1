"""Check a whole project before anything expensive runs: params.yaml, the files it names,
the llm-compressor recipes, and the base model's shapes against each variant's scheme.

Every problem is collected in one pass; nothing here imports torch, transformers or
llmcompressor, so it runs in well under a second. How the CLI uses it:

>>> from pathlib import Path
>>> problems = validate_project(Path("params.yaml"))     # doctest: +SKIP
>>> if problems:                                          # doctest: +SKIP
...     print(render_problems(problems))
...     raise typer.Exit(1)
params.yaml:42: variants.x.scheme: unknown scheme 'w4a16_gtpq' — fix: did you mean 'w4a16_gptq'? …
1 problem found
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml

from pipeline.calibration.ingest import SUFFIXES as SOURCE_SUFFIXES
from pipeline.config import (
    SCHEMES,
    recipe_format,
    Loc,
    Problem,
    SchemeInfo,
    YamlDoc,
    check_params,
    read_yaml,
    render_problems,
)
from pipeline.plugins import backends
from pipeline.quantize.base import get_backend
from pipeline.quantize.llmcompressor_recipes import KNOWN_MODIFIERS, Recipe, read_recipe, scheme_problems

__all__ = ["KNOWN_MODIFIERS", "Problem", "render_problems", "validate_project"]

logger = logging.getLogger(__name__)

# (config.json dimension, its value, the Linear modules whose in-features it is)
Families = list[tuple[str, int, list[str]]]


def validate_project(params_path: Path, *, root: Path | None = None) -> list[Problem]:
    """Every problem of the project described by ``params_path``; empty when all is well.

    Paths in params.yaml are relative to ``root`` (default: the params file's directory).
    """
    params_path = Path(params_path)
    root = params_path.parent if root is None else Path(root)
    _, doc, problems = check_params(params_path)
    if doc is None or not isinstance(doc.data, Mapping):
        return problems
    problems += _check_paths(doc, root)
    recipes = _check_recipes(doc, root)
    problems += [p for r in recipes.values() for p in r.problems]
    problems += _check_model_shapes(doc, root, recipes)
    problems += _check_presets(doc, root)
    problems += _check_base_model(doc, root)
    problems += _check_lm_eval_code(doc, root)
    logger.debug("validated %s: %d problems", params_path, len(problems))
    return problems


# ── remote code in lm-eval task files ────────────────────────────────────────────────────


def _check_lm_eval_code(doc: YamlDoc, root: Path) -> list[Problem]:
    """lm-eval task folders can import Python (`!function` in a task YAML, `.py` files beside
    it): that is remote code, run only with `model.trust_remote_code: true`."""
    if _get(doc.data, ("model", "trust_remote_code")) is True:
        return []
    rel = _get(doc.data, ("evaluate", "lm_eval", "include_path"))
    if not isinstance(rel, str) or not (root / rel).is_dir():
        return []
    found = [p for p in sorted((root / rel).rglob("*")) if p.is_file() and (
        p.suffix == ".py" or (p.suffix in (".yaml", ".yml")
                              and "!function" in p.read_text(errors="replace")))]
    return [Problem(file=str(doc.file), line=doc.line(("evaluate", "lm_eval", "include_path")),
                    key="evaluate.lm_eval.include_path",
                    message=f"{p.relative_to(root)} runs Python (lm-eval `!function` or a module): "
                            "remote code is off (model.trust_remote_code: false)",
                    fix="remove the Python from the task folder, or set `model.trust_remote_code: "
                        "true` (the one switch)") for p in found]


# ── GGUF presets and the baseline's recipe ───────────────────────────────────────────────


def _check_presets(doc: YamlDoc, root: Path) -> list[Problem]:
    """A variant's recipe holds the key its backend reads for the scheme (a llama.cpp preset,
    a baseline's dtype: `Backend.recipe_key`)."""
    problems = []
    for name, variant in _variants(doc):
        backend, scheme, rel = variant.get("backend"), str(variant.get("scheme")), variant.get("recipe")
        if backend not in backends() or not isinstance(rel, str) or not (root / rel).is_file():
            continue
        wanted = get_backend(str(backend)).recipe_key(scheme)
        if wanted is None:
            continue
        rdoc, rproblems = read_yaml(root / rel)
        if rdoc is None or not isinstance(rdoc.data, Mapping):
            problems += rproblems
            continue
        key, want = wanted
        got = rdoc.data.get(key)
        if got != want:
            problems.append(Problem(file=rel, line=rdoc.lines.get((key,)), key=key,
                                    message=f"{key} is {got!r} but variant '{name}' has scheme '{scheme}'",
                                    fix=f"set `{key}: {want}` or use a recipe written for {scheme}"))
    return problems


# ── paths ─────────────────────────────────────────────────────────────────────────────────


def _get(data: Any, loc: Loc) -> Any:
    for part in loc:
        if isinstance(data, Mapping):
            data = data.get(part)
        elif isinstance(data, list) and isinstance(part, int) and part < len(data):
            data = data[part]
        else:
            return None
    return data


def _variants(doc: YamlDoc) -> Iterator[tuple[str, Mapping[str, Any]]]:
    variants = _get(doc.data, ("variants",))
    if isinstance(variants, Mapping):
        yield from ((str(k), v) for k, v in variants.items() if isinstance(v, Mapping))


def _path_keys(doc: YamlDoc) -> Iterator[tuple[Loc, str]]:
    """Every (key path, kind) whose value names an input file or directory."""
    yield ("model", "path"), "model"
    sources = _get(doc.data, ("data", "sources"))
    for i in range(len(sources) if isinstance(sources, list) else 0):
        yield ("data", "sources", i), "source"
    yield ("data", "general_corpus"), "file"
    yield ("split", "pii", "dictionary"), "file"
    for name, _ in _variants(doc):
        yield ("variants", name, "recipe"), "file"


def _check_paths(doc: YamlDoc, root: Path) -> list[Problem]:
    made_by_demo = {
        _norm(_get(doc.data, ("demo", *loc))): "demo." + ".".join(loc)
        for loc in (("logs", "out_dir"), ("general_corpus", "path"), ("train", "out_dir"))
        if isinstance(_get(doc.data, ("demo", *loc)), str)
    }
    problems = []
    for loc, kind in _path_keys(doc):
        value = _get(doc.data, loc)
        if not isinstance(value, str) or not value:
            continue  # absent, null or mistyped: the schema check reports what matters
        path, maker = root / value, made_by_demo.get(_norm(value))
        by_demo = f"it is written by the demo ({maker}): generate the demo first"
        if not path.exists():
            fix = by_demo if maker else f"create it, or correct the path (relative to {root})"
            problems.append(doc.problem(loc, f"'{value}' does not exist", fix))
        elif kind == "model" and not (path / "config.json").is_file():
            problems.append(doc.problem(loc, f"'{value}' has no config.json",
                                        "point model.path at a Hugging Face checkpoint "
                                        "directory (config.json, tokenizer, weights)"))
        elif kind == "source" and path.is_dir() and not any(
                p.is_file() and p.suffix.lower() in SOURCE_SUFFIXES for p in path.rglob("*")):
            problems.append(doc.problem(loc, f"'{value}' holds no log files "
                                             f"({', '.join('*' + s for s in SOURCE_SUFFIXES)})",
                                        by_demo if maker else "put the logs there as JSONL, CSV or "
                                                              "Parquet"))
    return problems


def _norm(value: Any) -> str:
    return Path(str(value)).as_posix().rstrip("/")


# ── recipes ───────────────────────────────────────────────────────────────────────────────


def _check_recipes(doc: YamlDoc, root: Path) -> dict[str, Recipe]:
    """Parse each llm-compressor recipe once, check its shape, then its scheme against
    every variant that uses it."""
    users: dict[str, list[tuple[str, str]]] = {}
    for name, variant in _variants(doc):
        recipe, scheme = variant.get("recipe"), variant.get("scheme")
        if recipe_format(str(variant.get("backend"))) == "llm-compressor" and isinstance(recipe, str):
            users.setdefault(recipe, []).append((name, str(scheme)))
    recipes: dict[str, Recipe] = {}
    for rel, variants in users.items():
        if not (root / rel).is_file():
            continue  # reported by the path check
        recipe = read_recipe(root / rel)
        for name, scheme in variants:
            recipe.problems += scheme_problems(recipe, rel, name, scheme)
        recipes[rel] = recipe
    return recipes


# ── model shapes ──────────────────────────────────────────────────────────────────────────


def _check_model_shapes(doc: YamlDoc, root: Path, recipes: dict[str, Recipe]) -> list[Problem]:
    """Grouped schemes need every quantized Linear's in-features divisible by the group."""
    model_path = _get(doc.data, ("model", "path"))
    config_path = root / str(model_path) / "config.json"
    if not isinstance(model_path, str) or not config_path.is_file():
        return []
    try:
        config = json.loads(config_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        return [doc.problem(("model", "path"), f"cannot read {config_path}: {err}",
                            "write a valid Hugging Face config.json")]
    families = _linear_in_features(config.get("text_config", config))
    problems = []
    for name, variant in _variants(doc):
        scheme = variant.get("scheme")
        if scheme not in SCHEMES or not SCHEMES.get(str(scheme)).group_size:
            continue
        recipe_path = str(variant.get("recipe"))
        fmt = recipe_format(str(variant.get("backend")))
        if fmt == "tool":  # the tool's own recipe names its group; the backend knows what it quantizes
            backend = get_backend(str(variant["backend"]))
            group = _external_group_size(backend, root / recipe_path)
            if group:
                problems += [doc.problem(("variants", name, "scheme"), what, fix) for what, fix in
                             backend.shape_problems(name, str(scheme), group, families, recipe_path)]
            continue
        if fmt != "llm-compressor":
            continue  # presets: llama.cpp gives a tensor its block does not divide a fallback type
            # itself (the manifest records which); a dtype has no groups
        problems += _shape_problems(doc, name, SCHEMES.get(str(scheme)), families,
                                    recipes.get(recipe_path), recipe_path)
    return problems




def _external_group_size(backend, recipe_path: Path) -> int | None:
    """The group size an alternative backend's recipe asks for (its backend reads it the same
    way before it starts; see pipeline/quantize/<backend>.py)."""
    try:
        recipe = yaml.safe_load(recipe_path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError):
        return None  # reported by the recipe checks
    return backend.group_size(recipe) if isinstance(recipe, dict) else None


def _check_base_model(doc: YamlDoc, root: Path) -> list[Problem]:
    """What each variant's backend could not carry faithfully of the base model's config.json
    (`Backend.base_model_problems`: MLX refuses a RoPE scaling mlx-lm would ignore)."""
    config = _model_config(doc, root)
    if config is None:
        return []
    return [doc.problem(("variants", name, "backend"), what, fix)
            for name, v in _variants(doc) if v.get("backend") in backends()
            for what, fix in get_backend(str(v["backend"])).base_model_problems(dict(config))]


def _model_config(doc: YamlDoc, root: Path) -> Mapping[str, Any] | None:
    model_path = _get(doc.data, ("model", "path"))
    path = root / str(model_path) / "config.json"
    if not isinstance(model_path, str) or not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # reported by the shape check


def _linear_in_features(config: Mapping[str, Any]) -> Families:
    """(config dimension, its value, module names whose in-features it is) for a
    Llama-style decoder; dimensions missing from the config are skipped."""
    hidden, inter = config.get("hidden_size"), config.get("intermediate_size")
    heads, layers = config.get("num_attention_heads"), config.get("num_hidden_layers") or 0
    head_dim = config.get("head_dim") or (hidden // heads if hidden and heads else None)
    per_layer = [
        ("hidden_size", hidden, ["self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj",
                                 "mlp.gate_proj", "mlp.up_proj"]),
        ("num_attention_heads * head_dim", heads * head_dim if heads and head_dim else None,
         ["self_attn.o_proj"]),
        ("intermediate_size", inter, ["mlp.down_proj"]),
    ]
    extra = {"hidden_size": ["lm_head"]}  # usually in `ignore`, checked like the others
    return [(dim, value, [f"model.layers.{i}.{m}" for i in range(layers) for m in mods]
             + extra.get(dim, []))
            for dim, value, mods in per_layer if isinstance(value, int)]


def _shape_problems(doc: YamlDoc, variant: str, info: SchemeInfo, families: Families,
                    recipe: Recipe | None, recipe_path: str) -> list[Problem]:
    """The group size an llm-compressor recipe sets (a `config_groups` entry's `group_size`, else
    its preset's) against every quantized Linear's in-features."""
    group = max(recipe.group_sizes) if recipe is not None and recipe.group_sizes else info.group_size or 1
    ignore = [] if recipe is None else recipe.ignore
    bad = []
    for dim, value, modules in families:
        hit = [m for m in modules if not any(_matches(entry, m) for entry in ignore)]
        if value % group and hit:
            bad.append((dim, value, hit))
    if not bad:
        return []
    widths = [v for _, v, _ in bad] + [v for _, v, mods in families if v % group == 0 and mods]
    dividing = next((g for g in (128, 64, 32, 16) if g < group and all(w % g == 0 for w in widths)), None)
    problems = []
    for dim, value, hit in bad:
        kinds = sorted({m.rsplit(".", 1)[-1] for m in hit})
        what = (f"{dim}={value} is not divisible by {group}, the quantization group size "
                f"{variant!r} uses ({recipe_path}): {len(hit)} Linear layer{'s' if len(hit) > 1 else ''} "
                f"({', '.join(kinds)}) cannot be quantized")
        pattern = "|".join(kinds)
        fix = (f"quantize with group size {dividing}, which divides every layer: in {recipe_path} "
               "replace `scheme:` by `config_groups: {group_0: {targets: [Linear], weights: "
               f"{{num_bits: 4, type: int, symmetric: true, strategy: group, group_size: {dividing}}}}}}}`; "
               if dividing else "")
        fix += (f"or add them to `ignore` in {recipe_path} (\"re:.*({pattern})$\"; they stay "
                "unquantized), or use a scheme without groups (w8a8_int8, fp8_dynamic)")
        problems.append(doc.problem(("variants", variant, "scheme"), what, fix))
    return problems


def _matches(entry: str, module: str) -> bool:
    """llm-compressor's `ignore` matching: exact module name, `re:` + a regex anchored at
    the start of the name, or the class name Linear."""
    if entry.startswith("re:"):
        try:
            return re.match(entry[3:], module) is not None
        except re.error:
            return False
    return entry in (module, "Linear")
