"""What an llm-compressor recipe names, read without llm-compressor: its stages, modifier groups,
modifiers, schemes, config groups and ignore lists — and whether they fit a variant's scheme.
`qpipe validate` uses it before any model or environment is touched (pipeline/validate.py)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.config import SCHEMES, Loc, Problem, YamlDoc, known, read_yaml

# Modifier classes an llm-compressor recipe may name (keys under a `*_modifiers` group).
KNOWN_MODIFIERS = (
    "GPTQModifier",
    "QuantizationModifier",
    "AWQModifier",
    "SmoothQuantModifier",
    "SparseGPTModifier",
    "ConstantPruningModifier",
    "LogarithmicEqualizationModifier",
    "QuIPModifier",
    "SpinQuantModifier",
)
# The algorithm a scheme is named after must be in its recipe.
REQUIRED_MODIFIER = {"w4a16_gptq": "GPTQModifier", "w4a16_awq": "AWQModifier"}


# The group size of each compressed-tensors preset scheme that groups its weights
# (compressed_tensors.quantization.quant_scheme); the others are per channel.
PRESET_GROUP_SIZE = {"W4A16": 128, "W4A16_ASYM": 128, "NVFP4": 16, "NVFP4A16": 16,
                     "MXFP4": 32, "MXFP4A16": 32}


def group_sizes(fields: Mapping[str, Any]) -> set[int]:
    """The weight group sizes one modifier's fields quantize with: each `config_groups` entry's
    `weights.group_size` (what the recipe says), else the preset scheme's own."""
    out: set[int] = set()
    groups = fields.get("config_groups")
    if isinstance(groups, Mapping):
        for group in groups.values():
            weights = group.get("weights") if isinstance(group, Mapping) else None
            size = weights.get("group_size") if isinstance(weights, Mapping) else None
            if isinstance(size, int) and not isinstance(size, bool) and size > 0:
                out.add(size)
        return out
    scheme = fields.get("scheme")
    presets = [scheme] if isinstance(scheme, str) else list(scheme) if isinstance(scheme, Mapping) else []
    return {PRESET_GROUP_SIZE[str(p).upper()] for p in presets if str(p).upper() in PRESET_GROUP_SIZE}


def recipe_group_size(recipe: Any) -> int | None:
    """The group size a whole recipe quantizes weights with (the largest, where modifiers
    differ: every grouped layer's in-features must divide by it); None: not grouped."""
    found: set[int] = set()

    def walk(obj: Any) -> None:
        if isinstance(obj, Mapping):
            if "config_groups" in obj or "scheme" in obj:
                found.update(group_sizes(obj))
            for value in obj.values():
                walk(value)

    walk(recipe)
    return max(found) if found else None


@dataclass
class Recipe:
    """What validation learned from one recipe file."""

    doc: YamlDoc | None
    problems: list[Problem] = field(default_factory=list)
    modifiers: list[tuple[str, Loc]] = field(default_factory=list)
    schemes: list[tuple[str, Loc]] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    config_groups: bool = False
    group_sizes: set[int] = field(default_factory=set)  # what its modifiers group weights by


def read_recipe(path: Path) -> Recipe:
    rdoc, problems = read_yaml(path)
    recipe = Recipe(rdoc, problems)
    if rdoc is None:
        return recipe
    if not isinstance(rdoc.data, Mapping):
        recipe.problems.append(rdoc.problem((), "a recipe is a mapping of stages",
                                            "start with `quant_stage:`"))
        return recipe
    for stage, groups in rdoc.data.items():
        if stage == "args":
            continue
        if not str(stage).endswith("_stage") or not isinstance(groups, Mapping):
            recipe.problems.append(rdoc.problem(
                (stage,), f"'{stage}' is not a stage; llm-compressor silently skips it",
                f"name it '{stage}_stage' with `<name>_modifiers:` groups inside"))
            continue
        for group, modifiers in groups.items():
            read_group(recipe, (stage, group), modifiers)
    if not recipe.modifiers and not recipe.problems:
        recipe.problems.append(rdoc.problem((), "the recipe has no modifiers",
                                            "add e.g. quant_stage: quant_modifiers: "
                                            "GPTQModifier: {...}"))
    return recipe


def read_group(recipe: Recipe, loc: Loc, modifiers: Any) -> None:
    rdoc = recipe.doc
    assert rdoc is not None
    if not str(loc[-1]).endswith("_modifiers") or not isinstance(modifiers, Mapping):
        recipe.problems.append(rdoc.problem(
            loc, f"'{loc[-1]}' is not a modifier group; llm-compressor silently skips it",
            f"name it '{loc[-1]}_modifiers' and put `<ModifierName>: {{fields}}` inside"))
        return
    for name, fields in modifiers.items():
        here = (*loc, name)
        if name not in KNOWN_MODIFIERS:
            recipe.problems.append(rdoc.problem(here, f"unknown modifier '{name}'",
                                                known(str(name), KNOWN_MODIFIERS)))
            continue
        if not isinstance(fields, Mapping):
            recipe.problems.append(rdoc.problem(here, f"{name} needs a mapping of fields",
                                                f"write `{name}: {{}}` for the defaults"))
            continue
        recipe.modifiers.append((str(name), here))
        read_fields(recipe, here, fields)


def read_fields(recipe: Recipe, loc: Loc, fields: Mapping[str, Any]) -> None:
    scheme = fields.get("scheme")
    if isinstance(scheme, str):
        recipe.schemes.append((scheme, (*loc, "scheme")))
    elif isinstance(scheme, Mapping):  # {preset: [targets]} form
        recipe.schemes += [(str(preset), (*loc, "scheme", preset)) for preset in scheme]
    recipe.config_groups |= "config_groups" in fields
    recipe.group_sizes |= group_sizes(fields)
    ignore = fields.get("ignore")
    if isinstance(ignore, str):
        ignore = [ignore]
    if isinstance(ignore, list):
        recipe.ignore += [str(entry) for entry in ignore]


def scheme_problems(recipe: Recipe, rel: str, variant: str, scheme: str) -> list[Problem]:
    if recipe.doc is None or scheme not in SCHEMES:
        return []
    rdoc, info = recipe.doc, SCHEMES.get(scheme)
    expected = " or ".join(sorted(info.recipe_schemes)) or "no quantization"
    problems = []
    for preset, loc in recipe.schemes:
        if preset not in info.recipe_schemes:
            problems.append(rdoc.problem(
                loc, f"scheme '{preset}' does not match variant '{variant}' (scheme "
                f"{scheme} expects {expected})",
                f"set `scheme: {min(info.recipe_schemes, default='…')}` here, or point "
                f"variants.{variant}.recipe at a recipe for {scheme}"))
    if info.recipe_schemes and not recipe.schemes and not recipe.config_groups:
        problems.append(rdoc.problem((), f"{rel} sets no quantization scheme, variant "
                                     f"'{variant}' ({scheme}) expects {expected}",
                                     f"add `scheme: {min(info.recipe_schemes)}` to its "
                                     "QuantizationModifier or GPTQModifier"))
    needed = REQUIRED_MODIFIER.get(scheme)
    if needed and needed not in {name for name, _ in recipe.modifiers}:
        problems.append(rdoc.problem((), f"variant '{variant}' ({scheme}) needs a {needed}, "
                                     f"which {rel} does not have",
                                     f"add {needed} to the recipe, or use the recipe "
                                     f"written for {scheme}"))
    return problems
