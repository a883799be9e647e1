"""Per-item records: the lines of `results/<variant>/samples.jsonl` (one scored answer per
evaluation item, what every paired statistic is computed from) and of
`results/divergence/<variant>/samples.jsonl` (one teacher-forced comparison per item).

Lines carry no schema id of their own: the file's folder says what they are, and the file beside
them (metrics.json) carries the schema. `read_lines` validates every line and names the first bad
one; producers build a record and write `line(record)`, so what is written is what is read.

    >>> recs = read_lines(SampleRecord, Path("results/x/samples.jsonl"))  # doctest: +SKIP
    >>> recs[0].score, recs[0].slices["scenario"]                          # doctest: +SKIP
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TypeVar

from pydantic import ValidationError

from pipeline.contracts.contract import ContractError, Num, OpenPart, Part, describe
from pipeline.io import jsonl_line

R = TypeVar("R", bound=Part)


class SampleRecord(Part):
    """One evaluation item as a variant answered it (evaluate@<variant>). The evaluate stage
    writes every field; what pairing needs (id, slices, score) is required of any writer."""

    id: str
    slices: dict[str, str]
    score: Num                            # 0..1 (1: correct)
    conversation_id: str | None = None
    rubric: str | None = None             # the scorer (exact, key_facts, json, …)
    prompt_tokens: int | None = None
    output_tokens: int | None = None
    ttft: Num | None = None               # seconds to the first token, where the engine streams
    latency: Num | None = None            # seconds to the whole answer
    finish_reason: str | None = None      # stop, length, …
    output: str | None = None
    reason: str | None = None             # why the scorer gave less than 1 ("" otherwise)
    repetition: bool | None = None        # the repetition detector fired
    json_valid: bool | None = None        # only for items that expect JSON
    look: int | None = None               # a sequential evaluation: the look (1, 2, …) that served it


class DivergenceRecord(OpenPart):
    """One item's teacher-forced comparison with the reference (divergence@<variant>): token KL
    along the reference's own answer, top-1 agreement, the change in the gold reference's
    log-likelihood; an engine's own extras (top-k coverage) stay as it writes them."""

    id: str
    slices: dict[str, str]
    tokens: int
    kl: list[Num] | None = None
    top1_agree: int | None = None
    ref_tokens: int | None = None
    ref_loglik_delta: Num | None = None


def line(record: Part, *, compact: bool = True) -> str:
    """The record as one JSONL line, keys sorted: compact and UTF-8 (evaluation records), or
    with json's default separators and escapes (divergence records)."""
    data = record.model_dump(mode="json", exclude_unset=True)
    return jsonl_line(data) if compact else json.dumps(data, sort_keys=True) + "\n"


def read_lines(cls: type[R], path: Path, *, writer: str = "the stage that writes it") -> list[R]:
    """Every line of `path` as a `cls`; ContractError naming the file, the line and the fields."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ContractError(path, "missing", f"re-run {writer}") from None
    out = []
    for n, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        try:
            out.append(cls.model_validate_json(raw))
        except ValidationError as err:
            raise ContractError(f"{path}:{n}", f"not a {cls.__name__} line: {describe(err)}",
                                f"re-run {writer}") from None
    return out
