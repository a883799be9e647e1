"""Quantization backends are plug-ins: each class states what it does, and pyproject.toml's
`[project.entry-points."qpipe.backends"]` names where the class lives — the same mechanism a
backend shipped in another package uses. Validation reads the classes' own declarations; no
table elsewhere repeats them.

A backend class declares:
  name           the `backend:` a variant names
  schemes        the schemes it makes
  format         the artifact format it writes (the key of `engines.formats`)
  recipe_format  what its recipe file holds: `llm-compressor` (a recipe in llm-compressor's own
                 format), `tool` (the tool's own config fields), `preset` (a GGUF preset) or
                 `dtype` (the baseline's dtype)
"""

from __future__ import annotations

import functools
import importlib
import tomllib
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path

from pipeline.errors import QpipeError

GROUP = "qpipe.backends"
PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"
RECIPE_FORMATS = ("llm-compressor", "tool", "preset", "dtype")


class PluginError(QpipeError, RuntimeError):
    pass


@dataclass(frozen=True)
class BackendFacts:
    name: str
    schemes: frozenset[str]
    format: str
    recipe_format: str
    target: str  # module:Class


def _targets() -> dict[str, str]:
    """name -> "module:Class": the installed entry points of other packages, and this package's
    own from the pyproject.toml beside it when running from a source tree (an editable install's
    metadata is a copy made at `pip install -e .` time: a backend added to pyproject.toml since
    then is found all the same, and `pip install -e .` refreshes the copy)."""
    found: dict[str, str] = {}
    for ep in entry_points(group=GROUP):
        dist = getattr(ep, "dist", None)
        if dist is None or dist.name != "qpipe" or not PYPROJECT.is_file():
            found[ep.name] = ep.value
    if PYPROJECT.is_file():
        table = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))
        found.update(table.get("project", {}).get("entry-points", {}).get(GROUP, {}))
    if not found:
        raise PluginError(f"no quantization backend is registered (entry-point group {GROUP!r}) — "
                          "fix: `pip install -e .` in the repository (bash scripts/setup.sh)")
    return found


def load_class(target: str) -> type:
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


@functools.cache
def backends() -> dict[str, BackendFacts]:
    """Every registered backend's declaration, by name."""
    out = {}
    for name, target in sorted(_targets().items()):
        cls = load_class(target)
        facts = BackendFacts(getattr(cls, "name", None), frozenset(getattr(cls, "schemes", ())),
                             getattr(cls, "format", None), getattr(cls, "recipe_format", None), target)
        if facts.name != name or not facts.schemes or not facts.format \
                or facts.recipe_format not in RECIPE_FORMATS:
            raise PluginError(f"backend {name!r} ({target}) must declare name = {name!r}, its schemes, "
                              f"its format and recipe_format (one of {', '.join(RECIPE_FORMATS)}); "
                              f"it declares {facts}")
        out[name] = facts
    return out


def backend_class(name: str) -> type:
    """The class of backend `name` (imported on first use)."""
    from pipeline.names import did_you_mean

    found = backends()
    if name not in found:
        hint = did_you_mean(name, found)
        raise PluginError(f"unknown quantization backend {name!r}" + (f" — {hint}" if hint else "")
                          + f"; registered: {', '.join(found)}")
    return load_class(found[name].target)
