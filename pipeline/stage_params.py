"""A stage's own params: the keys its dvc.yaml stage declares under `params:`, and nothing else.

Each stage module states its declaration once, e.g. ``PARAMS = Declared("evaluate", "model",
"engines", "evaluate", "variants.${key}")`` (``${key}`` is the foreach key, as in dvc.yaml;
tests/test_dvc_stages.py checks it equals DVC's resolution of dvc.yaml). ``params.for_stage(
PARAMS, key)`` is a read-only view of the validated params through which the stage can read its
declared keys only: reading any other raises :class:`UndeclaredParamError`, so a stage cannot
depend on a value DVC would not re-run it for.

>>> from types import SimpleNamespace as NS
>>> p = NS(model=NS(path="models/demo", trust_remote_code=False), split=NS(out_dir="data"))
>>> view = StageParams(Declared("split", "model.path"), p)
>>> view.model.path
'models/demo'
>>> try:
...     view.split
... except UndeclaredParamError as err:
...     print(str(err).replace(" — ", "\\n— "))
stage 'split' reads params `split`, which its dvc.yaml stage does not declare (DVC would not re-run it on a change)
— fix: add `split` to the `params:` of stage 'split' in dvc.yaml and to the stage module's PARAMS
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

_PARAM = re.compile(r"\$\{([A-Za-z_][\w.]*)\}")  # ${section.field}, as in dvc.yaml
WHOLE = None  # a declared key: everything below it may be read


class UndeclaredParamError(RuntimeError):
    """A stage read a params key its dvc.yaml stage does not declare (a programming error: not an
    AttributeError or KeyError, so no `getattr(…, default)` or `.get()` can swallow it)."""


@dataclass(frozen=True)
class Declared:
    """A stage's declared params, written as in dvc.yaml (``${key}``: the foreach key)."""

    stage: str
    keys: tuple[str, ...]

    def __init__(self, stage: str, *keys: str) -> None:
        object.__setattr__(self, "stage", stage)
        object.__setattr__(self, "keys", keys)

    def resolved(self, key: str | None = None, params: Any = None) -> tuple[str, ...]:
        """The keys with ``${key}`` and any ``${section.field}`` (read from `params`, as DVC
        interpolates dvc.yaml from params.yaml) filled in."""
        if key is None and any("${key}" in k for k in self.keys):
            raise ValueError(f"stage {self.stage!r} is a foreach stage: name its key")

        def value(m: re.Match) -> str:
            if params is None:
                raise ValueError(f"stage {self.stage!r} names {m.group(0)}: resolve it with the params")
            node = params
            for part in m.group(1).split("."):
                node = node[part] if isinstance(node, Mapping) else getattr(node, part)
            return str(node)

        return tuple(_PARAM.sub(value, k.replace("${key}", key or "")) for k in self.keys)


def _tree(keys: tuple[str, ...]) -> dict:
    """Dotted keys as a tree; a leaf (WHOLE) covers everything below it."""
    tree: dict = {}
    for key in keys:
        *parents, last = key.split(".")
        node = tree
        for part in parents:
            if part in node and node[part] is WHOLE:
                break
            node = node.setdefault(part, {})
        else:
            node[last] = WHOLE
    return tree


class _Guarded:
    """An object of which only the `allowed` attributes may be read."""

    __slots__ = ("_obj", "_allowed", "_where", "_stage")

    def __init__(self, obj: Any, allowed: dict, where: str, stage: str) -> None:
        object.__setattr__(self, "_obj", obj)
        object.__setattr__(self, "_allowed", allowed)
        object.__setattr__(self, "_where", where)
        object.__setattr__(self, "_stage", stage)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        value = getattr(self._obj, name)  # AttributeError for what the params do not have
        return _read(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"stage {self._stage!r}: params are read-only")

    def __repr__(self) -> str:
        return f"<params of stage {self._stage!r}{self._where and ' at ' + self._where}: {sorted(self._allowed)}>"


class _GuardedMap(Mapping):
    """A mapping of which only the `allowed` keys are visible (iteration) or readable."""

    def __init__(self, obj: Mapping, allowed: dict, where: str, stage: str) -> None:
        self._obj, self._allowed, self._where, self._stage = obj, allowed, where, stage

    def __getitem__(self, name: str) -> Any:
        value = self._obj[name]  # KeyError for what the params do not have
        return _read(self, name, value)

    def __iter__(self) -> Iterator[str]:
        return (k for k in self._obj if k in self._allowed)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __contains__(self, name: object) -> bool:
        return name in self._allowed and name in self._obj

    def __repr__(self) -> str:
        return f"<params of stage {self._stage!r} at {self._where}: {list(self)}>"


def _read(guard: _Guarded | _GuardedMap, name: str, value: Any) -> Any:
    where = f"{guard._where}.{name}" if guard._where else name
    if name not in guard._allowed:
        raise UndeclaredParamError(
            f"stage {guard._stage!r} reads params `{where}`, which its dvc.yaml stage does not "
            f"declare (DVC would not re-run it on a change) — fix: add `{where}` to the "
            f"`params:` of stage {guard._stage!r} in dvc.yaml and to the stage module's PARAMS")
    below = guard._allowed[name]
    if below is WHOLE:
        return value
    kind = _GuardedMap if isinstance(value, Mapping) else _Guarded
    return kind(value, below, where, guard._stage)


class ParamsHelpers:
    """What params answer beyond their sections: for the whole params (pipeline.config.Params)
    and for a stage's view alike, each reading only the sections it names."""

    __slots__ = ()

    def engine_for(self, name: str) -> str:
        """The engine serving a variant: its own `engine:`, else the format table's."""
        v = self.variants[name]
        return v.engine or self.engines.formats.get(v.format, "none")

    def engine_settings(self, name: str) -> dict[str, Any]:
        engine = self.engine_for(name)
        section = getattr(self.engines, engine, None)
        base = section.model_dump() if section is not None else {}
        merged = base | dict(self.variants[name].engine_options)
        if getattr(section, "runs_model_code", False):
            # one switch: model.trust_remote_code, never an engine option
            merged["trust_remote_code"] = self.model.trust_remote_code
        return merged

    @property
    def baseline(self) -> str:
        """Name of the first baseline variant (the one every other is compared with)."""
        return next(name for name, v in self.variants.items() if v.is_baseline)


class StageParams(_Guarded, ParamsHelpers):
    """The view a stage runs on: its declared sections, and the helpers of the whole params,
    each raising like any undeclared read when it needs more than the stage declares."""

    __slots__ = ()

    def __init__(self, declared: Declared, params: Any, key: str | None = None) -> None:
        stage = declared.stage if key is None else f"{declared.stage}@{key}"
        super().__init__(params, _tree(declared.resolved(key, params)), "", stage)

    @property
    def baseline(self) -> str:
        """The first baseline of all variants: only with `variants` declared whole."""
        if "variants" in self._allowed and self._allowed["variants"] is not WHOLE:
            _read(_Guarded(None, {}, "", self._stage), "variants", None)  # raises, naming it
        return ParamsHelpers.baseline.fget(self)


# The type of a stage's params argument. To a type checker it is the validated params (each
# section and field typed, pipeline/config); at run time it is the guarded view above, through
# which only the declared keys can be read.
if TYPE_CHECKING:
    from pipeline.config.params_model import Params as StageView
else:
    StageView = StageParams
