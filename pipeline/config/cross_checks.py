"""Rules between params sections (calibration sets a variant names, the baseline, engines per
format, reference variants, the handoff folder, remote code, variant names), run on plain data
so they report even when another part of the file is broken."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pipeline.config.problems import Issue, known
from pipeline.config.scheme_tables import (BASELINE_SCHEMES, NO_CALIBRATION, NO_REFERENCE, UNQUANTIZED_SCHEMES,
                                           backend_format, engine_names)
from pipeline.config.serving import EnginesConfig


def cross_section_issues(data: Mapping[str, Any]) -> list[Issue]:
    """Rules between sections, on plain (possibly invalid) data, so they run even when some
    other part of the file is broken; locations are absolute."""
    issues: list[Issue] = []
    calibration = _mapping(data.get("calibration"))
    sets = _mapping(calibration.get("sets"))
    variants = _mapping(data.get("variants"))
    for name, variant in variants.items():
        wanted = _mapping(variant).get("calibration")
        if isinstance(wanted, str) and wanted != NO_CALIBRATION and wanted not in sets:
            issues.append((("variants", name, "calibration"),
                           f"calibration set '{wanted}' is not defined in calibration.sets",
                           known(wanted, sets, "Defined")))
    wanted = _mapping(data.get("search")).get("calibration", "business")
    if isinstance(wanted, str) and wanted not in sets:
        issues.append((("search", "calibration"), f"calibration set '{wanted}' is not defined in calibration.sets",
                       known(wanted, sets, "Defined")))
    schemes = [_mapping(v).get("scheme") for v in variants.values()]
    if variants and not any(s in BASELINE_SCHEMES for s in schemes):
        issues.append((("variants",), "no baseline variant (scheme bf16 or fp16)",
                       "add one, e.g. `baseline: {backend: none, scheme: bf16, engine: vllm}`;"
                       " every variant is compared with it"))
    formats = _mapping(_mapping(data.get("engines")).get("formats")) or \
        EnginesConfig.model_fields["formats"].default_factory()
    for name, variant in variants.items():
        variant = _mapping(variant)
        fmt = backend_format(variant.get("backend")) if isinstance(variant.get("backend"), str) \
            else variant.get("backend")
        if variant.get("engine") is None and isinstance(fmt, str) and fmt not in formats:
            issues.append((("variants", name, "engine"),
                           f"no engine for format '{fmt}' in engines.formats",
                           f"add `engine:` to the variant or `{fmt}: <engine>` to engines.formats"))
    if not _mapping(data.get("data")).get("general_corpus"):
        for name, spec in sets.items():
            spec = _mapping(spec)
            if spec.get("source") == "general" or (spec.get("general_ratio") or 0) > 0:
                issues.append((("calibration", "sets", name),
                               f"set '{name}' draws from the general corpus, but "
                               "data.general_corpus is not set",
                               "set data.general_corpus to a JSONL file of general text"))
    compare = _mapping(data.get("compare"))
    for key in ("engine_baselines", "noise_floor"):
        for engine, name in _mapping(compare.get(key)).items():
            if engine not in engine_names():
                issues.append((("compare", key, engine), f"unknown engine '{engine}'",
                               known(engine, engine_names())))
            if name not in variants:
                issues.append((("compare", key, engine), f"variant '{name}' is not defined",
                               known(str(name), variants, "Defined")))
            elif key == "engine_baselines" and \
                    _mapping(variants[name]).get("scheme") not in UNQUANTIZED_SCHEMES:
                issues.append((("compare", key, engine), f"'{name}' is quantized "
                               f"({_mapping(variants[name]).get('scheme')}), not an unquantized baseline",
                               "name a variant of the unquantized model in that engine's format "
                               "(bf16 / fp16; gguf_f16 for llama.cpp)"))
    reference = _mapping(data.get("divergence")).get("reference", "baseline")
    if not any(s in BASELINE_SCHEMES for s in schemes):
        pass  # no baseline at all: said above
    elif reference not in variants:
        issues.append((("divergence", "reference"), f"variant '{reference}' is not defined",
                       known(str(reference), variants, "Defined")))
    elif _mapping(variants[reference]).get("scheme") not in BASELINE_SCHEMES:
        issues.append((("divergence", "reference"), f"'{reference}' is quantized, not a baseline",
                       "name the unquantized baseline variant (scheme bf16 or fp16)"))
    issues += _reference_issues(variants)
    issues += _handoff_dir_issues(data)
    issues += _remote_code_issues(data)
    issues += _variant_name_issues(data)
    for name, variant in variants.items():
        args = _mapping(_mapping(variant).get("engine_options")).get("extra_args")
        if args is not None and not (isinstance(args, list) and all(isinstance(a, (str, int, float))
                                                                     for a in args)):
            issues.append((("variants", name, "engine_options", "extra_args"),
                           f"extra_args must be a list of arguments, got {type(args).__name__}",
                           "write one list item per argument, e.g. `[--max-num-batched-tokens, '4096']`"))
    issues += _upgrade_issues(data, variants, formats)
    return issues


def _upgrade_issues(data: Mapping[str, Any], variants: Mapping[str, Any], formats: Mapping[str, Any]) -> list[Issue]:
    """An upgrade serves a variant's artifact with its serving configurations' engine: the variant
    must exist and be in a format that engine serves."""
    serving = _mapping(data.get("serving"))
    configs = _mapping(serving.get("configs"))
    issues: list[Issue] = []
    for name, spec in _mapping(serving.get("upgrades")).items():
        spec = _mapping(spec)
        art = spec.get("artifact")
        if not isinstance(art, str):
            continue
        if art not in variants:
            issues.append((("serving", "upgrades", name, "artifact"), f"variant '{art}' is not defined",
                           known(art, variants, "Defined")))
            continue
        variant = _mapping(variants[art])
        fmt = backend_format(variant.get("backend")) if isinstance(variant.get("backend"), str) else None
        engine = _mapping(configs.get(spec.get("current"))).get("engine")
        served_by = variant.get("engine") or formats.get(fmt)
        if isinstance(engine, str) and served_by in engine_names() and served_by != engine:
            issues.append((("serving", "upgrades", name, "artifact"),
                           f"variant '{art}' is served by {served_by}, the configurations by {engine}",
                           f"name a variant that {engine} serves"))
    return issues + _p99_bound_issues(data)


def _p99_bound_issues(data: Mapping[str, Any]) -> list[Issue]:
    """An upgrade's P99 verdict needs an upper bound on each side's P99 (its order statistics,
    rounds pooled, at 1 − α/2 for the ratio: pipeline.stats.latency.requests_for_upper_bound):
    fewer requests than that can only ever be inconclusive."""
    serving = _mapping(data.get("serving"))
    traffic = _mapping(serving.get("traffic"))
    requests, rounds = traffic.get("requests", 300), traffic.get("rounds", 2)
    alpha = _mapping(data.get("compare")).get("alpha", 0.05)
    if not (serving.get("upgrades") and all(isinstance(x, int) and x > 0 for x in (requests, rounds))
            and isinstance(alpha, float) and 0 < alpha < 1):
        return []
    needed = math.ceil(math.log(alpha / 4) / math.log(0.99))  # P(all of n below ξ_0.99) ≤ α/4
    if requests * rounds >= needed:
        return []
    return [(("serving", "traffic", "requests"),
             f"{requests} requests × {rounds} rounds = {requests * rounds} per configuration cannot bound a "
             f"P99 at α = {alpha} (it needs ≥ {needed}): every P99 criterion would stay inconclusive",
             f"set requests ≥ {math.ceil(needed / rounds)} (or more rounds)")]


def _variant_name_issues(data: Mapping[str, Any]) -> list[Issue]:
    """A variant's results live in <evaluate.out_dir>/<name>: a name must not be a folder that
    another stage writes there (divergence@ writes `divergence/`, divergence_reference
    `divergence-reference/`, gate_calibration `gate-calibration/`, evaluate_none `none/`, bench its
    out_dir)."""
    results = str(_mapping(data.get("evaluate")).get("out_dir", "results")).strip("/")
    taken = {"divergence", "divergence-reference", "gate-calibration", NO_REFERENCE}
    bench = str(_mapping(data.get("bench")).get("out_dir", "results/bench")).strip("/")
    if bench.startswith(results + "/"):
        taken.add(bench[len(results) + 1:].split("/")[0])
    return [(("variants", name), f"variant name '{name}' is the folder {results}/{name}, which "
             "another stage writes", "rename the variant") for name in _mapping(data.get("variants"))
            if str(name) in taken]


_REMOTE_FLAGS = ("--trust-remote-code", "--trust_remote_code")


def _remote_code_issues(data: Mapping[str, Any]) -> list[Issue]:
    """Remote code runs only behind `model.trust_remote_code`: no engine option or engine flag
    turns it on by another route."""
    if _mapping(data.get("model")).get("trust_remote_code") is True:
        return []
    fix = ("remove it; to run a model's own Python code, set `model.trust_remote_code: true` "
           "(the one switch, recorded in every manifest)")
    out: list[Issue] = []
    places: list[tuple[tuple, Mapping[str, Any]]] = [
        (("engines", k), _mapping(v)) for k, v in _mapping(data.get("engines")).items()]
    places += [(("variants", k, "engine_options"), _mapping(_mapping(v).get("engine_options")))
               for k, v in _mapping(data.get("variants")).items()]
    for loc, section in places:
        for key, value in section.items():
            if key.replace("-", "_") == "trust_remote_code" and value:
                out.append(((*loc, key), "remote code is off (model.trust_remote_code: false)", fix))
        args = section.get("extra_args")
        for i, a in enumerate(args if isinstance(args, list) else []):
            if str(a).split("=", 1)[0] in _REMOTE_FLAGS:
                out.append(((*loc, "extra_args", i), f"'{a}': remote code is off "
                            "(model.trust_remote_code: false)", fix))
    return out


# Folders of the project that the handoff stage must never write into or delete from.
_PROJECT_DIRS = ("artifacts", "approvals", "logs", "models", "data", "calibration", "recipes",
                 "pipeline", "tests", "scripts", "mlruns", ".dvc", ".git")


def _handoff_dir_issues(data: Mapping[str, Any]) -> list[Issue]:
    """handoff.out_dir deletes stale bundles: it must be a folder of its own, inside the project,
    never the project itself nor any input or output of another stage."""
    raw = _mapping(data.get("handoff")).get("out_dir", "handoff")
    loc, fix = ("handoff", "out_dir"), "use a folder of its own inside the project, e.g. `handoff`"
    text = str(raw)
    parts = [p for p in text.replace("\\", "/").split("/") if p not in ("", ".")]
    if text.startswith(("/", "~")) or ".." in parts or not parts:
        return [(loc, f"handoff.out_dir '{text}' is not a folder of its own inside the project (absolute, "
                      "`..`, or the project root)", fix)]
    mine = tuple(parts)
    others: list[tuple[str, tuple[str, ...]]] = [(d, (d,)) for d in _PROJECT_DIRS]

    def collect(node: Any, where: tuple[str, ...]) -> None:
        if isinstance(node, Mapping):
            for k, v in node.items():
                if k in ("out_dir", "path", "evalset", "general_corpus", "recipe") and \
                        isinstance(v, (str, Path)) and where[:1] != ("handoff",):
                    others.append((".".join((*where, str(k))), tuple(
                        p for p in str(v).split("/") if p not in ("", "."))))
                else:
                    collect(v, (*where, str(k)))

    collect(data, ())
    for what, other in others:
        if other and (mine[:len(other)] == other or other[:len(mine)] == mine):
            return [(loc, f"handoff.out_dir '{text}' overlaps {what} ('{'/'.join(other)}'): stale bundles are "
                          "deleted from handoff.out_dir", fix)]
    return []


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _reference_issues(variants: Mapping[str, Any]) -> list[Issue]:
    """Each variant's `reference`: the first baseline's is `none`; every other names another,
    unquantized variant (its evaluation runs every item: the ones judged against it stop early)."""
    issues: list[Issue] = []
    first = next((n for n, v in variants.items() if _mapping(v).get("scheme") in BASELINE_SCHEMES), None)
    if first is None:
        return issues  # no baseline at all: said once, above
    for name, variant in variants.items():
        ref = _mapping(variant).get("reference")
        if not isinstance(ref, str):
            continue  # missing: the variant's own check says so
        where = ("variants", name, "reference")
        if name == first:
            if ref != NO_REFERENCE:
                issues.append((where, f"'{name}' is the baseline, judged against nothing",
                               f"write `reference: {NO_REFERENCE}`"))
        elif ref == NO_REFERENCE or ref == name:
            issues.append((where, f"'{name}' must be judged against another variant",
                           f"name its reference: `reference: {first}` (or its engine's own baseline)"))
        elif ref not in variants:
            issues.append((where, f"variant '{ref}' is not defined", known(ref, variants, "Defined")))
        elif _mapping(variants[ref]).get("scheme") not in UNQUANTIZED_SCHEMES:
            issues.append((where, f"'{ref}' is quantized ({_mapping(variants[ref]).get('scheme')}), not a reference",
                           "name an unquantized variant (bf16 / fp16, or gguf_f16 for llama.cpp)"))
    return issues
