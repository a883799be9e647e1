"""What every reader hands to the :class:`~pipeline.calibration.ingest.ingestor.Ingestor`: one
:class:`Item` per record (an object to validate, or the problem that stopped it), and the
parsing of JSON text shared by the readers (whole JSONL lines, JSON cells of CSV and Parquet)."""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from pipeline.calibration.ingest.rejects import Problem

JSON_COLUMNS = ("messages", "rubric", "tools")
ID_FIELDS = ("id", "conversation_id")  # what leaves the split pseudonymised, excerpts included


class Item(NamedTuple):
    """What a reader hands to :class:`Ingestor`: an object to validate, or a problem."""

    line: int
    offset: int | None
    sha256: str
    raw: bytes  # for the excerpt only (a prefix)
    obj: dict[str, Any] | None  # with a problem: at most the ids the row was read with
    problem: Problem | None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def parse_json(text: str, what: str) -> Any:
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as err:
        raise Problem("bad_json", f"{what} is not valid JSON: {err.msg} at column {err.colno}") from None
    except (ValueError, RecursionError) as err:
        raise Problem("bad_json", f"{what} is not valid JSON: {type(err).__name__}") from None
