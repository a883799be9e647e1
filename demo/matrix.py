"""The demo's variant matrices: the default one in params.yaml (a first run in minutes, on any
x86 CPU with AVX2) and the full one (every backend and scheme), whose extra variants are
demo/full_matrix.yaml. A matrix file may also drop params.yaml's variants (`drop:`).

`qpipe-demo full-matrix` runs a matrix as a DVC experiment: one ``-S '~variants.<name>'`` per
variant it drops, one ``-S '+variants.<name>={…}'`` per variant it adds and one
``-S '+<key>=<value>'`` per added param (Hydra's override grammar, which `dvc exp run` parses),
so params.yaml in the repository stays the default and DVC records the change.

    >>> override("fp8", {"backend": "llmcompressor", "reason": "no kernel; served elsewhere"})
    "+variants.fp8={backend:llmcompressor,reason:'no kernel; served elsewhere'}"
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

FULL_MATRIX = Path(__file__).with_name("full_matrix.yaml")
_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_./-]*")


def extra_variants(path: Path = FULL_MATRIX) -> dict[str, dict[str, Any]]:
    return yaml.safe_load(path.read_text(encoding="utf-8"))["variants"]


def added_params(path: Path = FULL_MATRIX) -> dict[str, Any]:
    """The full matrix's other params: dotted key → value, each absent from params.yaml."""
    return yaml.safe_load(path.read_text(encoding="utf-8")).get("add") or {}


def dropped_variants(path: Path = FULL_MATRIX) -> list[str]:
    """params.yaml's variants the matrix runs without."""
    return list(yaml.safe_load(path.read_text(encoding="utf-8")).get("drop") or [])


def full_params(repo: Path, path: Path = FULL_MATRIX) -> dict[str, Any]:
    """params.yaml's data with the matrix's variants dropped, and its variants and params added
    (what the experiment runs)."""
    data = yaml.safe_load((repo / "params.yaml").read_text(encoding="utf-8"))
    for name in dropped_variants(path):
        if name not in data["variants"]:
            raise ValueError(f"{path}: drop names {name!r}, which params.yaml does not have — fix: "
                             "drop only params.yaml's variants")
        del data["variants"][name]
    extra = extra_variants(path)
    clash = sorted(set(extra) & set(data["variants"]))
    if clash:
        raise ValueError(f"{path}: variants {clash} are already in params.yaml — fix: keep each "
                         "variant in one of the two files")
    data["variants"] = {**data["variants"], **extra}
    for key, value in added_params(path).items():
        *parents, leaf = key.split(".")
        node = data
        for part in parents:
            node = node.setdefault(part, {})
        if leaf in node:
            raise ValueError(f"{path}: add.{key} is already set in params.yaml — fix: set it in "
                             "one of the two files")
        node[leaf] = value
    return data


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (int, float)) or value is None:
        return "null" if value is None else repr(value)
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_value(v) for v in value) + "]"
    text = str(value)
    if _PLAIN.fullmatch(text) and text not in ("true", "false", "null"):
        return text
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def override(name: str, spec: dict[str, Any]) -> str:
    return f"+variants.{name}={_value(spec)}"


def overrides(path: Path = FULL_MATRIX) -> list[str]:
    return [*(f"~variants.{name}" for name in dropped_variants(path)),
            *(f"+{key}={_value(value)}" for key, value in added_params(path).items()),
            *(override(name, spec) for name, spec in extra_variants(path).items())]

