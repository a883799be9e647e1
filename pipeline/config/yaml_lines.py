"""YAML with line numbers: the parsed document, the line of every key path, and syntax errors
and duplicate keys as problems."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from pipeline.config.problems import Loc, Problem


@dataclass
class YamlDoc:
    """Parsed YAML plus the line of every key path (mapping keys and sequence items)."""

    file: str
    data: Any
    lines: dict[Loc, int]

    def line(self, loc: Loc) -> int | None:
        """Line of ``loc`` or of its nearest ancestor present in the file."""
        path = tuple(p for p in loc if p != "[key]")
        while path:
            if path in self.lines:
                return self.lines[path]
            path = path[:-1]
        return None

    def problem(self, loc: Loc, message: str, fix: str = "") -> Problem:
        return Problem(self.file, self.line(loc), dotted(loc), message, fix)


def dotted(loc: Loc) -> str:
    """``("data", "sources", 0)`` -> ``"data.sources[0]"``."""
    out = ""
    for part in loc:
        if part == "[key]":
            continue
        out += f"[{part}]" if isinstance(part, int) else f".{part}" if out else str(part)
    return out


def read_yaml(path: Path | str) -> tuple[YamlDoc | None, list[Problem]]:
    """Parse ``path``; syntax errors and duplicate keys come back as problems."""
    file = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except OSError as err:
        return None, [Problem(file, None, "", f"cannot read file: {err.strerror or err}",
                              "check the path and its permissions")]
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        reason = getattr(err, "problem", None) or str(err)
        return None, [Problem(file, mark.line + 1 if mark else None, "",
                              f"not valid YAML: {reason}",
                              "fix the syntax here (indentation, a missing ':', a quote)")]
    lines: dict[Loc, int] = {}
    duplicates: list[Problem] = []
    if node is not None:
        _walk(node, (), lines, duplicates, file)
    return YamlDoc(file, data, lines), duplicates


def _walk(node: yaml.Node, path: Loc, lines: dict[Loc, int], dups: list[Problem],
          file: str) -> None:
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                continue
            here = (*path, key_node.value)
            line = key_node.start_mark.line + 1
            if here in lines:
                dups.append(Problem(file, line, dotted(here),
                                    f"duplicate key (first at line {lines[here]}); "
                                    "YAML keeps only the last one", "remove one of them"))
            lines[here] = line
            _walk(value_node, here, lines, dups, file)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            lines[(*path, i)] = item.start_mark.line + 1
            _walk(item, (*path, i), lines, dups, file)
