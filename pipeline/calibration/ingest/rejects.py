"""What a failed read looks like: the counts of kept and rejected records per file, and the two
failures on the way there (:class:`IngestError` for a whole input, :class:`Problem` for one
record). A :class:`Reject` and its reason codes are the split's contract
(:mod:`pipeline.contracts.split_outputs`), named here for the ingest package."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from pipeline.contracts.split_outputs import EXCERPT_CHARS, REJECT_REASONS, Reject, RejectReason

__all__ = ["EXCERPT_CHARS", "FileStats", "IngestError", "IngestStats", "Problem", "REJECT_REASONS", "Reject",
           "RejectReason", "too_long"]


class IngestError(ValueError):
    """A whole input is unusable (missing, unsupported, unreadable): nothing to reject."""


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
