"""Loading params.yaml: validate it against :class:`Params` and turn every pydantic error into
a :class:`Problem` on its line, with the cross-section rules reported in the same pass."""

from __future__ import annotations

import copy
import logging
import re
import types
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

from pipeline.config.cross_checks import cross_section_issues
from pipeline.config.params_model import Params
from pipeline.config.problems import ConfigError, Loc, Problem, known
from pipeline.config.yaml_lines import YamlDoc, dotted, read_yaml

logger = logging.getLogger(__name__)


def check_params(path: Path | str) -> tuple[Params | None, YamlDoc | None, list[Problem]]:
    """Parse and validate ``path`` without raising: the params (None when invalid), the
    parsed document (for callers that check more), and every problem found."""
    doc, problems = read_yaml(path)
    if doc is None:
        return None, None, problems
    if not isinstance(doc.data, Mapping):
        problems.append(doc.problem((), "expected a mapping of sections at the top level",
                                    "start the file with `model:`, `data:`, `variants:` …"))
        return None, doc, problems
    try:
        return Params.model_validate(doc.data), doc, problems
    except ValidationError as err:
        found, extra = _translate(err, doc), _err_locs(err, "extra_forbidden")
    # A model's own rules run only once its keys are valid, and the cross-section rules only
    # on a valid file. Report theirs in this same pass: validate again without the unknown
    # keys, and run the cross-section rules on the raw data.
    if extra:
        try:
            Params.model_validate(_without(doc.data, extra))
        except ValidationError as again:
            found += _translate(again, doc)
    found += [doc.problem(*issue) for issue in cross_section_issues(doc.data)]
    unique = list({(p.key, p.message): p for p in reversed(found)}.values())[::-1]
    problems += sorted(unique, key=lambda p: p.line or 0)
    return None, doc, problems


def _err_locs(err: ValidationError, kind: str) -> list[Loc]:
    """Locations of the errors of one pydantic error type."""
    return [tuple(e["loc"]) for e in err.errors(include_url=False) if e["type"] == kind]


def _without(data: Any, locs: list[Loc]) -> Any:
    """A copy of ``data`` with the keys at ``locs`` removed."""
    data = copy.deepcopy(data)
    for loc in locs:
        parent = data
        for part in loc[:-1]:
            parent = parent[part]
        parent.pop(loc[-1], None)
    return data


def load_params(path: Path | str) -> Params:
    """The validated params; :class:`ConfigError` listing every problem otherwise."""
    params, _, problems = check_params(path)
    if problems or params is None:
        raise ConfigError(problems)
    logger.debug("loaded %s: %d variants", path, len(params.variants))
    return params


def _translate(err: ValidationError, doc: YamlDoc) -> list[Problem]:
    problems: list[Problem] = []
    for e in err.errors(include_url=False):
        loc, kind, ctx = tuple(e["loc"]), e["type"], e.get("ctx") or {}
        if kind == "qpipe_issues":
            problems += [doc.problem((*loc, *sub), msg, fix) for sub, msg, fix in ctx["issues"]]
        elif kind == "extra_forbidden":
            allowed = _allowed_keys(loc[:-1])
            problems.append(doc.problem(loc, f"unknown key '{loc[-1]}'",
                                        known(str(loc[-1]), allowed, "Allowed keys")))
        elif kind == "missing":
            parent = dotted(loc[:-1]) or "the top level"
            problems.append(doc.problem(loc, f"missing required key '{loc[-1]}'",
                                        f"add `{loc[-1]}:` under {parent}"))
        elif kind == "literal_error":
            choices = re.findall(r"'([^']*)'", str(ctx.get("expected", "")))
            problems.append(doc.problem(loc, f"invalid value {e['input']!r}",
                                        known(str(e["input"]), choices, "Allowed")))
        elif loc and loc[-1] == "[key]":
            problems.append(doc.problem(loc, f"invalid name {e['input']!r}",
                                        "use letters, digits, '_' and '-' (the name becomes "
                                        "a directory and a DVC stage name)"))
        else:
            got = e["input"]
            shown = f" (got {got!r})" if isinstance(got, (str, int, float, bool)) else ""
            problems.append(doc.problem(loc, f"{e['msg']}{shown}"))
    return problems


def _allowed_keys(loc: Loc) -> list[str]:
    """Field names of the model found at ``loc`` inside :class:`Params`."""
    annotation: Any = Params
    for part in loc:
        annotation = _model_or_container(annotation)
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            field = annotation.model_fields.get(str(part))
            if field is None:
                return []
            annotation = field.annotation
        elif get_origin(annotation) in (dict, list):
            annotation = get_args(annotation)[-1]
        else:
            return []
    annotation = _model_or_container(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return list(annotation.model_fields)
    return []


def _model_or_container(annotation: Any) -> Any:
    """Strip Annotated[...] and Optional[...] down to the model or container inside."""
    while True:
        origin = get_origin(annotation)
        if origin is Annotated:
            annotation = get_args(annotation)[0]
        elif origin in (Union, types.UnionType):
            annotation = next(a for a in get_args(annotation) if a is not type(None))
        else:
            return annotation
