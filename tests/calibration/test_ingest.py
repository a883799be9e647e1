import csv
import hashlib
import io
import json
import logging

import pytest

from pipeline.calibration.ingest import (
    REJECT_REASONS, IngestedRecord, IngestError, Ingestor, IngestStats, Reject, iter_records,
)
from pipeline.calibration.pii import PIIConfig, Scrubber

# Invented personal data planted early in lines, so an unscrubbed excerpt would show it.
RAW_PII = ("ingrid.larsen@example.com", "Ingrid Larsen", "Larsen", "(212) 555-0147", "555-0147")


def record(i, **overrides):
    data = {
        "messages": [{"role": "user", "content": "I am Ingrid Larsen, call (212) 555-0147 or "
                                                 "mail ingrid.larsen@example.com"},
                     {"role": "assistant", "content": "Noted, we will call you back."}],
        "id": f"r-{i}", "conversation_id": f"c-{i}", "timestamp": "2026-08-01T10:22:03Z",
        "scenario": "ticket",
    }
    data.update(overrides)
    return data


def dumps(obj) -> bytes:
    return json.dumps(obj).encode("utf-8")


def write_lines(path, lines):
    """Write (body, eol) pairs; return the (line number, offset, sha256) of each body."""
    where, offset = [], 0
    with path.open("wb") as fh:
        for number, (body, eol) in enumerate(lines, start=1):
            fh.write(body + eol)
            where.append((number, offset, hashlib.sha256(body).hexdigest()))
            offset += len(body) + len(eol)
    return where


def assert_no_raw_pii(reject):
    for raw in RAW_PII:
        assert raw not in reject.excerpt, (reject.reason, reject.excerpt)
        assert raw not in reject.detail, (reject.reason, reject.detail)
    assert len(reject.excerpt) <= 120


MAX = 2000


@pytest.fixture
def crafted(tmp_path):
    """A JSONL file with one line per reject reason, a blank line and CRLF endings."""
    long_text = "x" * 5000
    bad_utf8 = b'{"messages": "mail ingrid.larsen@example.com from caf\xe9", "id": "r-9"}'
    exact = dumps(record(13, reference=""))
    exact = dumps(record(13, reference="p" * (MAX - len(exact))))
    assert len(exact) == MAX
    lines = [
        (dumps(record(1)), b"\n"),                                                  # 1 kept
        (b"   ", b"\n"),                                                             # 2 blank
        (b'{"messages": "mail ingrid.larsen@example.com", "id": "r-3", ', b"\r\n"),  # 3 bad_json
        (dumps(["Ingrid Larsen", "ingrid.larsen@example.com"]), b"\n"),             # 4 not_an_object
        (dumps({k: v for k, v in record(5).items() if k != "timestamp"}), b"\n"),   # 5 missing_field
        (dumps(record(6, scenario=["call (212) 555-0147"])), b"\r\n"),              # 6 wrong_type
        (dumps(record(7, messages=[])), b"\n"),                                     # 7 empty_conversation
        (dumps(record(8, messages=[{"role": "user", "content": "Ingrid Larsen here"},
                                   {"role": "assistant", "content": "\n "}])), b"\n"),  # 8 empty_message
        (bad_utf8, b"\n"),                                                          # 9 bad_encoding
        (dumps(record(10, reference=long_text)), b"\n"),                            # 10 line_too_long
        (dumps(record(1, reference="same id, other content")), b"\n"),              # 11 duplicate_id
        (dumps(record(12, difficulty="extreme")), b"\n"),                           # 12 invalid_value
        (exact, b"\r\n"),                                                           # 13 kept, at the limit
        (dumps(record(14)), b""),                                                   # 14 kept, no final EOL
    ]
    path = tmp_path / "logs.jsonl"
    where = write_lines(path, lines)
    return path, where


EXPECTED = {3: "bad_json", 4: "not_an_object", 5: "missing_field", 6: "wrong_type",
            7: "empty_conversation", 8: "empty_message", 9: "bad_encoding", 10: "line_too_long",
            11: "duplicate_id", 12: "invalid_value"}


def test_every_reason_with_its_line_offset_and_hash(crafted):
    path, where = crafted
    ingestor = Ingestor(max_line_bytes=MAX)
    items = list(ingestor.read(path))
    rejects = {r.line: r for r in items if isinstance(r, Reject)}
    assert {line: r.reason for line, r in rejects.items()} == EXPECTED
    assert set(EXPECTED.values()) == set(REJECT_REASONS)
    for line, reject in rejects.items():
        number, offset, sha = where[line - 1]
        assert (reject.line, reject.offset, reject.sha256) == (number, offset, sha)
        assert reject.file == path.as_posix()
        assert reject.detail


def test_kept_records_carry_their_origin(crafted):
    path, where = crafted
    kept = [item for item in Ingestor(max_line_bytes=MAX).read(path) if isinstance(item, IngestedRecord)]
    assert [k.record.id for k in kept] == ["r-1", "r-13", "r-14"]
    assert [(k.origin.line, k.origin.offset) for k in kept] == [where[0][:2], where[12][:2], where[13][:2]]
    assert kept[0].record.messages[0].content.startswith("I am Ingrid Larsen")  # ingest does not scrub


def test_excerpts_are_scrubbed_and_short(crafted):
    path, _ = crafted
    rejects = [r for r in Ingestor(max_line_bytes=MAX).read(path) if isinstance(r, Reject)]
    for reject in rejects:
        assert_no_raw_pii(reject)
    by_reason = {r.reason: r for r in rejects}
    # the values were inside the first 120 characters: the placeholders prove the scrub ran
    assert "<EMAIL_1>" in by_reason["bad_json"].excerpt
    assert "<EMAIL_1>" in by_reason["bad_encoding"].excerpt
    assert "<PERSON_1>" in by_reason["not_an_object"].excerpt
    assert "<PHONE_1>" in by_reason["missing_field"].excerpt
    assert by_reason["line_too_long"].excerpt.startswith('{"messages": [{"role": "user"')


def test_details_name_the_field(crafted):
    path, _ = crafted
    rejects = {r.reason: r for r in Ingestor(max_line_bytes=MAX).read(path) if isinstance(r, Reject)}
    assert "timestamp" in rejects["missing_field"].detail
    assert "scenario" in rejects["wrong_type"].detail
    assert "messages[1].content" in rejects["empty_message"].detail
    assert "difficulty" in rejects["invalid_value"].detail
    assert f"{rejects['duplicate_id'].file}:1" in rejects["duplicate_id"].detail
    assert "max_line_bytes=2000" in rejects["line_too_long"].detail


def test_counts_add_up(crafted):
    path, _ = crafted
    ingestor = Ingestor(max_line_bytes=MAX)
    items = list(ingestor.read(path))
    stats = ingestor.stats
    assert stats.records_in == len(items) == 13
    assert stats.kept == 3
    assert stats.rejected == 10
    assert stats.records_in == stats.kept + stats.rejected
    assert stats.rejected_by_reason == {reason: 1 for reason in EXPECTED.values()}
    assert stats.blank_lines == 1
    per_file = stats.per_file[path.as_posix()]
    assert (per_file.records_in, per_file.kept, per_file.rejected) == (13, 3, 10)


def test_over_long_line_is_not_parsed_even_when_broken(tmp_path):
    path = tmp_path / "long.jsonl"
    body = b"{" + b"z" * 10_000  # invalid JSON: would be bad_json if it were parsed
    where = write_lines(path, [(body, b"\n"), (dumps(record(2)), b"\n")])
    items = list(Ingestor(max_line_bytes=100).read(path))
    assert items[0].reason == "line_too_long"
    assert (items[0].line, items[0].offset, items[0].sha256) == where[0]
    assert items[1].reason == "line_too_long"  # a normal record is longer than 100 bytes too
    assert items[1].offset == where[1][1]


def test_lines_just_over_the_limit(tmp_path):
    path = tmp_path / "edge.jsonl"
    ok = dumps(record(1))
    over = dumps(record(2, reference="q"))
    write_lines(path, [(ok, b"\r\n"), (over, b"\n")])
    items = list(Ingestor(max_line_bytes=len(ok)).read(path))
    assert isinstance(items[0], IngestedRecord)
    assert items[1].reason == "line_too_long"


def test_folders_are_walked_in_sorted_order(tmp_path, caplog):
    root = tmp_path / "sources"
    (root / "sub").mkdir(parents=True)
    write_lines(root / "b.jsonl", [(dumps(record(2)), b"\n")])
    write_lines(root / "a.jsonl", [(dumps(record(1)), b"\n")])
    write_lines(root / "sub" / "c.json", [(dumps(record(3)), b"\n")])
    write_lines(root / ".hidden.jsonl", [(dumps(record(4)), b"\n")])
    (root / "notes.txt").write_text("not data")
    caplog.set_level(logging.WARNING)
    items = list(iter_records(root))
    assert [i.origin.file for i in items] == [f"{root.as_posix()}/a.jsonl", f"{root.as_posix()}/b.jsonl",
                                             f"{root.as_posix()}/sub/c.json"]
    assert "notes.txt" in caplog.text
    assert ".hidden" not in caplog.text


def test_duplicate_ids_across_files_keep_the_first(tmp_path):
    write_lines(tmp_path / "a.jsonl", [(dumps(record(1)), b"\n")])
    write_lines(tmp_path / "b.jsonl", [(dumps(record(1)), b"\n")])
    stats = IngestStats()
    items = list(iter_records([tmp_path / "a.jsonl", tmp_path / "b.jsonl"], stats=stats))
    assert isinstance(items[0], IngestedRecord)
    assert items[1].reason == "duplicate_id" and items[1].file.endswith("b.jsonl")
    assert (tmp_path / "a.jsonl").as_posix() + ":1" in items[1].detail
    assert stats.per_file[(tmp_path / "b.jsonl").as_posix()].rejected_by_reason == {"duplicate_id": 1}


def test_input_level_errors(tmp_path):
    with pytest.raises(IngestError, match="no such file"):
        list(iter_records(tmp_path / "absent"))
    (tmp_path / "x.txt").write_text("{}")
    with pytest.raises(IngestError, match="unsupported"):
        list(iter_records(tmp_path / "x.txt"))
    (tmp_path / "array.json").write_text(json.dumps([record(1)], indent=2))
    with pytest.raises(IngestError, match="one object per line"):
        list(iter_records(tmp_path / "array.json"))
    (tmp_path / "summary.json").write_text("\n" + json.dumps({"records": 3}, indent=2))
    with pytest.raises(IngestError, match="pretty-printed"):
        list(iter_records(tmp_path / "summary.json"))
    with pytest.raises(ValueError, match="scrubbed"):
        Ingestor(excerpt_scrubber=Scrubber(PIIConfig(enabled=False)))


# ----------------------------------------------------------------------------------- CSV

COLUMNS = ["id", "conversation_id", "timestamp", "scenario", "difficulty", "segment", "messages",
           "reference", "rubric", "tools"]


def csv_row(cells) -> bytes:
    buffer = io.StringIO()
    csv.writer(buffer).writerow(cells)  # "\r\n" terminators, quotes where needed
    return buffer.getvalue().encode("utf-8")


def csv_cells(i, **overrides):
    rec = record(i)
    cells = {"id": rec["id"], "conversation_id": rec["conversation_id"],
             "timestamp": rec["timestamp"], "scenario": rec["scenario"], "difficulty": "easy",
             "segment": "", "messages": json.dumps(rec["messages"]), "reference": "",
             "rubric": json.dumps({"type": "key_facts", "key_facts": ["call back"]}),
             "tools": json.dumps([{"name": "get_order_status"}])}
    cells.update(overrides)
    return [cells[c] for c in COLUMNS]


def test_csv_reader(tmp_path):
    rows = [
        csv_row(COLUMNS),                                                      # line 1 header
        csv_row(csv_cells(1)),                                                 # line 2 kept
        csv_row(csv_cells(2, reference="line one\nline two")),                 # lines 3-4 kept
        csv_row(csv_cells(3, messages="Ingrid Larsen: call (212) 555-0147 {")),  # line 5 bad_json
        csv_row(csv_cells(4) + ["extra"]),                                     # line 6 invalid_value
        csv_row(csv_cells(5, timestamp="")),                                   # line 7 missing_field
        csv_row(csv_cells(6, reference="caf_")).replace(b"caf_", b"caf\xe9"),  # line 8 bad_encoding
        b"\r\n",                                                               # line 9 blank
        csv_row(csv_cells(7)),                                                 # line 10 kept
    ]
    path = tmp_path / "logs.csv"
    path.write_bytes(b"".join(rows))
    offsets = [sum(map(len, rows[:i])) for i in range(len(rows))]
    ingestor = Ingestor()
    items = list(ingestor.read(path))
    summary = [(i.origin.line, i.origin.offset) if isinstance(i, IngestedRecord) else (i.line, i.reason)
               for i in items]
    assert summary == [(2, offsets[1]), (3, offsets[2]), (5, "bad_json"), (6, "invalid_value"),
                       (7, "missing_field"), (8, "bad_encoding"), (10, offsets[8])]
    kept = [i.record for i in items if isinstance(i, IngestedRecord)]
    assert kept[1].reference == "line one\nline two"
    assert kept[0].segment is None and kept[0].rubric.key_facts == ["call back"]
    assert kept[0].tools == [{"name": "get_order_status"}]
    rejects = [i for i in items if isinstance(i, Reject)]
    assert rejects[0].offset == offsets[3]
    assert rejects[0].sha256 == hashlib.sha256(rows[3][:-2]).hexdigest()
    assert "messages" in rejects[0].detail
    for reject in rejects:
        assert_no_raw_pii(reject)
    stats = ingestor.stats
    assert (stats.records_in, stats.kept, stats.rejected, stats.blank_lines) == (7, 3, 4, 1)


def test_csv_header_must_be_usable(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_bytes(csv_row(["id", "id", ""]) + csv_row(["a", "b", "c"]))
    with pytest.raises(IngestError, match="header"):
        list(iter_records(path))


# ------------------------------------------------------------------------------- Parquet

def test_parquet_reader(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    message = pa.struct([("role", pa.string()), ("content", pa.string())])
    good = record(1)
    table = pa.table({
        "id": ["r-1", "r-2", "r-3", "r-4"],
        "conversation_id": ["c-1", None, "c-3", "c-4"],
        "timestamp": ["2026-08-01T10:22:03Z"] * 4,
        "scenario": ["faq"] * 4,
        "messages": pa.array([good["messages"], good["messages"], good["messages"], []],
                             type=pa.list_(message)),
        "rubric": ['{"type": "exact"}', None, '{"type": "exact", ', None],
    })
    path = tmp_path / "logs.parquet"
    pq.write_table(table, path, row_group_size=2)
    items = list(Ingestor().read(path))
    assert isinstance(items[0], IngestedRecord)
    assert items[0].origin.line == 1 and items[0].origin.offset is None
    assert items[0].record.rubric.type == "exact"
    assert [(i.line, i.reason) for i in items[1:]] == [(2, "missing_field"), (3, "bad_json"),
                                                      (4, "empty_conversation")]
    assert all(i.offset is None and len(i.sha256) == 64 for i in items[1:])
    assert len({i.sha256 for i in items[1:]}) == 3
    for reject in items[1:]:
        assert_no_raw_pii(reject)


def test_parquet_native_timestamps_and_row_limit(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    from datetime import datetime, timezone
    table = pa.table({
        "id": ["r-1"], "conversation_id": ["c-1"], "scenario": ["faq"],
        "timestamp": pa.array([datetime(2026, 8, 1, 10, 22, 3, tzinfo=timezone.utc)],
                              type=pa.timestamp("us", tz="UTC")),
        "messages": ['[{"role": "user", "content": "hello"}]'],
    })
    path = tmp_path / "ts.parquet"
    pq.write_table(table, path)
    (item,) = Ingestor().read(path)
    assert item.record.timestamp == datetime(2026, 8, 1, 10, 22, 3, tzinfo=timezone.utc)
    (item,) = Ingestor(max_line_bytes=40).read(path)
    assert item.reason == "line_too_long"


def test_excerpts_show_a_rejected_lines_ids_as_pseudonyms(tmp_path):
    """Kept records leave the split with pseudonymised ids; a rejected line's excerpt must not
    carry them as they came in either — whether the line parsed (ids known), is broken JSON
    (ids found by their keys) or a CSV row (ids by their columns)."""
    def pseudo(value):
        return "p-" + hashlib.sha256(value.encode()).hexdigest()[:20]

    jsonl = tmp_path / "logs.jsonl"
    jsonl.write_bytes(b"".join(line + b"\n" for line in (
        b'{"id": "r-31", "conversation_id": "c-31", "messages": "mail ingrid.larsen@example.com", ',
        dumps({"id": "r-32", "conversation_id": "c-32", "timestamp": "2026-08-01T10:22:03Z",
               "scenario": "faq", "messages": []}),
        dumps({"conversation_id": "c-33", "timestamp": "2026-08-01T10:22:03Z", "messages": []}),
    )))
    csv_path = tmp_path / "logs.csv"
    csv_path.write_bytes(csv_row(COLUMNS) + csv_row(csv_cells(34, messages="not json {"))
                         + csv_row(csv_cells(35, timestamp="")))
    for pseudonym in (pseudo, None):
        rejects = [r for path in (jsonl, csv_path)
                   for r in Ingestor(pseudonym=pseudonym).read(path) if isinstance(r, Reject)]
        assert [r.reason for r in rejects] == ["bad_json", "empty_conversation", "missing_field",
                                               "bad_json", "missing_field"]
        for reject, ids in zip(rejects, (("r-31", "c-31"), ("r-32", "c-32"), ("c-33",),
                                         ("r-34", "c-34"), ("r-35", "c-35"))):
            assert_no_raw_pii(reject)
            for raw in ids:
                if pseudonym is None:  # ids kept as they are (split.pii.pseudonymize_ids: false)
                    assert raw in reject.excerpt, (raw, reject.excerpt)
                else:
                    assert raw not in reject.excerpt and pseudo(raw) in reject.excerpt, (raw, reject.excerpt)
