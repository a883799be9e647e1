"""The evaluation set: `evalset.jsonl` (one EvalItem per line, no schema id of its own: the card
names the item schema) and its card, `card.json`, both written by the split."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pipeline.contracts.contract import Contract, Part
from pipeline.contracts.files import CARD, EVALSET_SCHEMA, EVAL_ITEM_SCHEMA

ITEM_SCHEMA = EVAL_ITEM_SCHEMA


class EvalItem(Part):
    """One scorable record: its prompt (every turn before the answer), gold reference, rubric and
    slice labels, its prompt's length in tokens as the engines see it."""

    id: str
    conversation_id: str
    timestamp: str | None = None
    messages: list[dict[str, Any]]
    reference: str | None = None
    rubric: dict[str, Any] | None = None
    tools: Any = None  # the record's tool definitions, as logged
    prompt_tokens: int | None = None
    slices: dict[str, str] = {}

    def line(self) -> dict[str, Any]:
        """What its line in evalset.jsonl holds (the fields set, as written)."""
        return self.model_dump(mode="json", exclude_unset=True)


class EvalsetCard(Contract):
    """`data/evalset/card.json`: the set's content hash (what results record and compare pairs
    on), its size and composition per slice."""

    SCHEMA: ClassVar[str] = EVALSET_SCHEMA
    FILE: ClassVar[str] = CARD  # its name in its stage's folder
    WRITER: ClassVar[str] = "split"

    items: Literal[EVAL_ITEM_SCHEMA] = ITEM_SCHEMA  # the schema of evalset.jsonl's lines
    content_sha256: str
    samples: int
    slices: dict[str, int] = {}
    length_buckets: list[int] = []
    tokenizer: str | None = None
