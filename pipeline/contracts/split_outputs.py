"""What the `split` stage hands on besides the evaluation set, and what a calibration set holds:

- `data/split/report.json` — :class:`SplitReport`: every record accounted for (read, kept,
  rejected by reason and file; evaluation, calibration and duplicates), the PII replacements by
  kind, the sources' and outputs' hashes; the calibration card copies its provenance from it;
- `data/split/rejects.jsonl` — one :class:`Reject` per input record that did not validate
  (where it was, why, and a scrubbed excerpt to find it by);
- `data/split/duplicates.jsonl` — one :class:`DuplicateLine` per record dropped as an exact or
  near duplicate of a record kept before it;
- `data/pools/calibration.jsonl` — the calibration pool: scrubbed business records, each a
  :class:`~pipeline.contracts.business_record.Record` (the log schema itself, ids pseudonymised);
- `data/calibration/<set>/samples.jsonl` — one :class:`CalibrationSample` per sample, the text as
  the quantizers see it (chat template applied); its Parquet twin holds the same columns.

Lines carry no schema id (see :mod:`pipeline.contracts.records`); the report does.

    >>> report = SplitReport.load(Path("data/split/report.json"))  # doctest: +SKIP
    >>> report.ingest.rejected_by_reason                           # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal, get_args

from pydantic import ConfigDict, Field

from pipeline.contracts.contract import Contract, Part
from pipeline.contracts.files import REPORT, SPLIT_REPORT_SCHEMA

RejectReason = Literal[
    "bad_encoding", "bad_json", "not_an_object", "missing_field", "wrong_type",
    "empty_conversation", "empty_message", "line_too_long", "duplicate_id", "invalid_value",
]
REJECT_REASONS: tuple[str, ...] = get_args(RejectReason)
EXCERPT_CHARS = 120  # the most of a rejected record a reject shows


class Reject(Part):
    """One input record that did not become a record (a line of `rejects.jsonl`)."""

    model_config = ConfigDict(frozen=True)

    file: str
    line: int
    offset: int | None
    sha256: str           # of the record's raw bytes
    reason: RejectReason
    detail: str           # what is wrong and how to fix it, scrubbed
    excerpt: str = Field(max_length=EXCERPT_CHARS)  # scrubbed harder than records are


class DuplicateLine(Part):
    """A record dropped as a duplicate (a line of `duplicates.jsonl`): of which kept record, how
    (the same normalised text, or MinHash near-duplicate), in which pool."""

    id: str
    pool: Literal["eval", "calibration"]
    kind: Literal["exact", "near"]
    duplicate_of: str


class CalibrationSample(Part):
    """One sample of a calibration set (a line of `samples.jsonl`, a row of its Parquet file)."""

    id: str
    source: Literal["business", "general"]
    scenario: str
    length_bucket: str
    difficulty: str | None
    n_tokens: int
    text: str             # as the quantizers see it: the chat template applied, cut at max_seq_len


class FileCounts(Part):
    """What was read of one source file: records_in = kept + rejected."""

    records_in: int
    kept: int
    rejected_by_reason: dict[str, int]
    blank_lines: int


class IngestCounts(Part):
    """What was read of all the sources, in total and per file."""

    records_in: int
    kept: int
    rejected: int
    rejected_by_reason: dict[str, int]
    blank_lines: int
    files_not_read: dict[str, str]        # file -> why it was not read
    per_file: dict[str, FileCounts]


class PiiCounts(Part):
    enabled: bool
    replacements: dict[str, int]          # placeholders written, by kind


class SplitReport(Contract):
    """`data/split/report.json`: kept = eval + calibration + duplicates + unusable, and rejects
    add up to records_in with them."""

    SCHEMA: ClassVar[str] = SPLIT_REPORT_SCHEMA
    FILE: ClassVar[str] = REPORT
    WRITER: ClassVar[str] = "split"

    params: dict[str, Any]                # the data and split params it ran with
    ids: str                              # how record ids were pseudonymised
    ingest: IngestCounts
    special_tokens_escaped: int
    pii: PiiCounts
    sources: dict[str, str]               # source file -> sha256
    split: dict[str, int]                 # eval, calibration, *_duplicates, eval_unscorable
    evalset_sha256: str
    calibration_pool_sha256: str
