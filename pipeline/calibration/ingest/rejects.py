"""What a failed read looks like: the reject reason codes, :class:`Reject`, the counts of kept and
rejected records per file, and the two failures on the way there (:class:`IngestError` for a whole
input, :class:`Problem` for one record)."""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

RejectReason = Literal[
    "bad_encoding", "bad_json", "not_an_object", "missing_field", "wrong_type",
    "empty_conversation", "empty_message", "line_too_long", "duplicate_id", "invalid_value",
]
REJECT_REASONS: tuple[str, ...] = get_args(RejectReason)
EXCERPT_CHARS = 120


class IngestError(ValueError):
    """A whole input is unusable (missing, unsupported, unreadable): nothing to reject."""


class Reject(BaseModel):
    """One input record that did not become a :class:`Record`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    file: str
    line: int
    offset: int | None
    sha256: str
    reason: RejectReason
    detail: str
    excerpt: str = Field(max_length=EXCERPT_CHARS)


class FileStats(BaseModel):
    """Counts for one file; ``records_in == kept + rejected`` by construction."""

    model_config = ConfigDict(extra="forbid")

    records_in: int = 0
    kept: int = 0
    rejected_by_reason: dict[str, int] = Field(default_factory=dict)
    blank_lines: int = 0

    @property
    def rejected(self) -> int:
        return sum(self.rejected_by_reason.values())

    def _count(self, reason: str | None) -> None:
        self.records_in += 1
        if reason is None:
            self.kept += 1
        else:
            self.rejected_by_reason[reason] = self.rejected_by_reason.get(reason, 0) + 1


class IngestStats(FileStats):
    """Counts over all files, and per file (keyed by the file as reported in rejects)."""

    per_file: dict[str, FileStats] = Field(default_factory=dict)

    def count(self, file: str, reason: str | None) -> None:
        """Count one record of ``file``: kept when ``reason`` is None, else rejected."""
        self._count(reason)
        self.per_file.setdefault(file, FileStats())._count(reason)

    def count_blank(self, file: str) -> None:
        self.blank_lines += 1
        self.per_file.setdefault(file, FileStats()).blank_lines += 1


class Problem(Exception):
    """Internal: a record-level failure on its way to becoming a Reject."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


def too_long(max_line_bytes: int) -> Problem:
    return Problem("line_too_long", f"line is longer than max_line_bytes={max_line_bytes}; "
                    "not parsed (raise max_line_bytes if such records are expected)")
