"""The base of every contract: a file one stage writes and later stages read, as a pydantic model
with a fixed schema id.

    >>> m = Metrics.load(Path("results/x/metrics.json"))  # doctest: +SKIP
    >>> m.accuracy                                         # doctest: +SKIP

`load(path)` / `read(data, where)` raise one error, ContractError, saying what is wrong with
which file (no schema id, another schema, the fields that fail) and which stage to re-run; an old
or foreign file never turns into a KeyError deep inside a consumer. `dump()` is what producers
write: the fields that were set (a key absent today stays absent, a None stays None), in JSON
types, with the schema id.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from pipeline.errors import QpipeError

# A number as written: an int stays an int and a float a float (a plain `float` field would turn
# 1 into 1.0 and change the bytes written).
Num = int | float


class ContractError(QpipeError, ValueError):
    """A contract file that is missing, unreadable, of another schema or with failing fields."""

    def __init__(self, where: str | Path, problem: str, fix: str):
        self.where, self.problem, self.fix = str(where), problem, fix
        super().__init__(f"{where}: {problem} — fix: {fix}")


class Part(BaseModel):
    """A typed part of a contract: unknown keys are refused, numbers keep their JSON type."""

    model_config = ConfigDict(extra="forbid", ser_json_inf_nan="constants", populate_by_name=True)

    def as_json(self) -> dict[str, Any]:
        """The part as its file holds it (the fields set, JSON types): for a consumer that writes
        it on (an MLflow metric per number), not for reading its fields."""
        return self.model_dump(mode="json", exclude_unset=True, by_alias=True)


class OpenPart(Part):
    """A part whose content is open-ended (tool versions, a backend's own facts): keys beyond the
    typed ones are kept as they are."""

    model_config = ConfigDict(extra="allow")


class Contract(Part):
    """One schema-versioned file. Subclasses set SCHEMA (the id written in the file) and WRITER
    (the DVC stage that writes it; `{name}` is the file's folder: the variant or the set)."""

    SCHEMA: ClassVar[str]
    FILE: ClassVar[str]  # the file's name in its folder (pipeline.contracts.files)
    WRITER: ClassVar[str]

    # the file's `schema` key, fixed to SCHEMA (`schema` itself would shadow BaseModel.schema)
    schema_id: str = Field(default="", alias="schema")

    @model_validator(mode="after")
    def _fixed_schema(self) -> Self:
        if self.schema_id not in ("", self.SCHEMA):
            raise ValueError(f"schema {self.schema_id!r} is not {self.SCHEMA!r}")
        object.__setattr__(self, "schema_id", self.SCHEMA)
        return self

    @classmethod
    def fix(cls, where: str | Path | None = None) -> str:
        """How to get a valid file: re-run the stage that writes it."""
        name = Path(str(where)).parent.name if where else ""
        return f"re-run the stage that writes it: `dvc repro {cls.WRITER.format(name=name or '<name>')}`"

    @classmethod
    def read(cls, data: Any, where: str | Path) -> Self:
        """The contract from a parsed JSON value; ContractError on anything else."""
        if not isinstance(data, dict):
            raise ContractError(where, f"not a {cls.SCHEMA} file (a JSON {type(data).__name__}, "
                                       "not an object)", cls.fix(where))
        found = data.get("schema")
        if found != cls.SCHEMA:
            what = ("no schema id (written by an older version, or not a qpipe file)"
                    if found is None else f"schema {found!r}")
            raise ContractError(where, f"{what}; expected {cls.SCHEMA!r}", cls.fix(where))
        try:
            return cls.model_validate(data)
        except ValidationError as err:
            raise ContractError(where, f"not a valid {cls.SCHEMA} file: {describe(err)}",
                                cls.fix(where)) from None

    @classmethod
    def load(cls, path: Path) -> Self:
        """The contract in file `path`; ContractError when it is missing or not one."""
        try:
            text = Path(path).read_text(encoding="utf-8")
        except FileNotFoundError:
            raise ContractError(path, "missing", cls.fix(path)) from None
        try:
            data = json.loads(text)
        except ValueError as err:
            raise ContractError(path, f"not valid JSON ({err})", cls.fix(path)) from None
        return cls.read(data, path)

    def dump(self) -> dict[str, Any]:
        """What the file holds: the fields set (absent ones stay absent), in JSON types."""
        fields = self.model_dump(mode="json", exclude_unset=True, by_alias=True)
        return {"schema": self.SCHEMA, **{k: v for k, v in fields.items() if k != "schema"}}


def describe(err: Exception, shown: int = 6) -> str:
    """The fields that fail, by location (`variants.x.accuracy: Input should be …`)."""
    if not isinstance(err, ValidationError):
        return str(err)
    problems = [f"{'.'.join(map(str, e['loc'])) or '(top)'}: {e['msg']}" for e in err.errors()]
    more = f" (and {len(problems) - shown} more)" if len(problems) > shown else ""
    return "; ".join(problems[:shown]) + more
