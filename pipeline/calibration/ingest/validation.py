"""Validation of one parsed object as a :class:`~pipeline.contracts.business_record.Record`: pydantic's
errors become one reject reason code (the most structural one) and a detail that names the
fields, never their values."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from pipeline.calibration.ingest.rejects import REJECT_REASONS, Problem
from pipeline.contracts.business_record import Record

# When a record has several problems the reason is the most structural one.
_REASON_PRIORITY = ("missing_field", "wrong_type", "empty_conversation", "empty_message",
                    "invalid_value")


def _format_loc(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else f".{str(part)[:40]}"
    return out.lstrip(".") or "record"


def _reason_of(error_type: str) -> str:
    if error_type in REJECT_REASONS:
        return error_type  # business_record.py raises custom errors typed by reason code
    if error_type == "missing":
        return "missing_field"
    if error_type.endswith("_type"):
        return "wrong_type"
    return "invalid_value"


def _describe(error: dict[str, Any]) -> str:
    where = _format_loc(error["loc"])
    if error["type"] == "missing":
        return f"{where}: required field is missing"
    if error["type"] == "extra_forbidden":
        return f"{where}: unknown field; remove it or fix its spelling"
    return f"{where}: {error['msg']}"  # pydantic and business_record.py messages never quote the input


def validate_object(obj: dict[str, Any]) -> Record:
    """``obj`` as a Record, or :class:`Problem` with the reason code and a detail."""
    try:
        return Record.model_validate(obj)
    except ValidationError as err:
        errors = err.errors(include_input=False, include_url=False)
        reasons = [_reason_of(e["type"]) for e in errors]
        reason = min(reasons, key=lambda r: (_REASON_PRIORITY + (r,)).index(r))
        details = [_describe(e) for e in errors[:3]]
        if len(errors) > 3:
            details.append(f"(+{len(errors) - 3} more)")
        raise Problem(reason, "; ".join(details)) from None
