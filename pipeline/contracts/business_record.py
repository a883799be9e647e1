"""The record schema of business conversation logs.

One record is one conversation snapshot: the messages up to and including the final
assistant turn, an optional gold ``reference`` for that turn and an optional ``rubric``
telling the scorer how to compare. Validation is strict (unknown keys are refused, no
silent coercion of numbers into strings) so that a typo in an export fails at ingest
with a reason code, not later as a wrong calibration sample.

Custom validation failures raise :class:`pydantic_core.PydanticCustomError` whose *type*
is the ingest reason code (``empty_message``, ``empty_conversation``, ``invalid_value``,
``wrong_type``), so :mod:`pipeline.calibration.ingest` can map errors without parsing
messages. Messages never contain the offending value (it may be personal data).

Example:
    >>> rec = Record.model_validate({
    ...     "id": "r-1", "conversation_id": "c-1", "timestamp": "2026-08-01T10:22:03Z",
    ...     "scenario": "faq",
    ...     "messages": [{"role": "user", "content": "Where is my order?"}]})
    >>> rec.timestamp.isoformat()
    '2026-08-01T10:22:03+00:00'
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator, model_validator
from pydantic_core import PydanticCustomError

Role = Literal["system", "user", "assistant", "tool"]
Difficulty = Literal["easy", "medium", "hard"]
RubricType = Literal["exact", "key_facts", "numeric", "json"]

#: Scenarios the demo and the reports know; any other non-empty string is accepted.
KNOWN_SCENARIOS = ("faq", "ticket", "consultation", "multi_turn", "rag", "tool_call")

_STRICT = ConfigDict(extra="forbid", frozen=True, str_strict=True)


def _non_blank(value: str, what: str) -> str:
    if not value.strip():
        raise PydanticCustomError(
            "invalid_value", "{what} is empty; give a non-blank string", {"what": what}
        )
    return value


class Message(BaseModel):
    """One chat turn. ``content`` must hold something other than whitespace."""

    model_config = _STRICT

    role: Role
    content: str

    @field_validator("content")
    @classmethod
    def _content_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise PydanticCustomError(
                "empty_message",
                "message content is empty after stripping whitespace; drop the turn or fill it",
            )
        return value


class Rubric(BaseModel):
    """How the final assistant turn is scored against the reference.

    ``key_facts`` rubrics need a non-empty ``key_facts`` list; ``expected`` is any JSON
    value (the parsed answer for ``json``, the number for ``numeric``).
    """

    model_config = _STRICT

    type: RubricType
    key_facts: list[str] | None = None
    expected: Any = None

    @model_validator(mode="after")
    def _key_facts_present(self) -> Rubric:
        if self.type == "key_facts" and not self.key_facts:
            raise PydanticCustomError(
                "invalid_value",
                "rubric type 'key_facts' needs a non-empty 'key_facts' list of strings",
            )
        if self.key_facts is not None and any(not fact.strip() for fact in self.key_facts):
            raise PydanticCustomError(
                "invalid_value", "rubric 'key_facts' holds an empty string; remove it"
            )
        return self


class Record(BaseModel):
    """One business conversation record (see the module docstring for an example)."""

    model_config = _STRICT

    id: str
    conversation_id: str
    timestamp: datetime
    scenario: str
    difficulty: Difficulty | None = None
    segment: str | None = None
    messages: list[Message]
    reference: str | None = None
    rubric: Rubric | None = None
    tools: list[dict[str, Any]] | None = None

    @field_validator("id", "conversation_id", "scenario")
    @classmethod
    def _required_strings_not_blank(cls, value: str, info: ValidationInfo) -> str:
        return _non_blank(value, info.field_name or "field")

    @field_validator("timestamp", mode="before")
    @classmethod
    def _parse_timestamp(cls, value: Any) -> datetime:
        if isinstance(value, datetime):
            parsed = value
        elif isinstance(value, str):
            try:
                # 3.11's fromisoformat takes 'Z' and offsets; pydantic's own parser would
                # also take bare unix numbers, which this format does not allow.
                parsed = datetime.fromisoformat(value.strip())
            except ValueError:
                raise PydanticCustomError(
                    "invalid_value",
                    "timestamp is not ISO-8601; write e.g. 2026-08-01T10:22:03Z",
                ) from None
        else:
            raise PydanticCustomError(
                "wrong_type", "timestamp must be an ISO-8601 string, not {kind}",
                {"kind": type(value).__name__},
            )
        if parsed.tzinfo is None or parsed.utcoffset() is None:
            raise PydanticCustomError(
                "invalid_value",
                "timestamp has no time zone; append 'Z' or an offset such as +02:00",
            )
        return parsed

    @field_validator("messages")
    @classmethod
    def _has_user_turn(cls, messages: list[Message]) -> list[Message]:
        if not messages:
            raise PydanticCustomError(
                "empty_conversation", "messages is an empty list; give at least one user turn"
            )
        if not any(message.role == "user" for message in messages):
            raise PydanticCustomError(
                "empty_conversation",
                "conversation has no user message; every record needs at least one",
            )
        return messages

