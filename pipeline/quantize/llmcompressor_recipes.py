"""What an llm-compressor recipe names, read without llm-compressor: its stages, modifier groups,
modifiers, schemes, config groups and ignore lists — and whether they fit a variant's scheme.
`qpipe validate` uses it before any model or environment is touched (pipeline/validate.py)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.config import SCHEMES, Loc, Problem, YamlDoc, known, read_yaml
from pipeline.quantize.llmcompressor import group_sizes

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
