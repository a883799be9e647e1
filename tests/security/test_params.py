"""Point 8 — bad parameters are refused at load with where and how to fix, before any work."""

import json

import pytest
import yaml
from pydantic import ValidationError

from pipeline.config import Params


def load(repo, edit):
    data = yaml.safe_load((repo / "params.yaml").read_text())
    edit(data)
    return Params.model_validate(data)


@pytest.mark.parametrize("edit, what", [
    (lambda d: d["split"].update(eval_share=0.0), "eval_share"),
    (lambda d: d["split"].update(eval_share=1.0), "eval_share"),
    (lambda d: d["split"].update(workers=100_000), "workers"),
    (lambda d: d["compare"].update(bootstrap=10**9), "bootstrap"),
    (lambda d: d["compare"].update(alpha=0.0), "alpha"),
    (lambda d: d["data"].update(max_line_bytes=1 << 62), "max_line_bytes"),
    (lambda d: d["variants"].update(divergence=dict(d["variants"]["gguf_f16"])), "divergence"),
    (lambda d: d["variants"].update(bench=dict(d["variants"]["gguf_f16"])), "bench"),
    (lambda d: d["variants"]["gguf_f16"].update(engine_options={"extra_args": "--flag value"}),
     "extra_args"),
])
def test_out_of_range_and_colliding_values_are_refused(repo, edit, what):
    with pytest.raises(ValidationError, match=what):
        load(repo, edit)


def test_the_demo_params_load(repo):
    assert load(repo, lambda d: None).split.eval_share == 0.5


def test_compressed_logs_are_reported_not_dropped_in_silence(tmp_path):
    import gzip

    from pipeline.calibration.ingest import IngestError, discover_files

    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "a.jsonl").write_text("{}\n")
    with gzip.open(tmp_path / "logs" / "b.jsonl.gz", "wt") as fh:
        fh.write("{}\n")
    skipped: dict[str, str] = {}
    found = discover_files([tmp_path / "logs"], skipped)
    assert [p.name for p, _ in found] == ["a.jsonl"]
    assert [(k.rsplit("/", 1)[-1], "compressed" in v) for k, v in skipped.items()] == [("b.jsonl.gz", True)]
    with pytest.raises(IngestError, match="decompress"):
        discover_files([tmp_path / "logs" / "b.jsonl.gz"])


def test_an_over_long_parquet_row_is_rejected_before_it_is_read(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from pipeline.calibration.ingest import iter_records

    rows = [{"id": f"r-{i}", "conversation_id": f"c-{i}", "timestamp": "2026-10-01T10:00:00Z",
             "scenario": "faq", "messages": json.dumps([{"role": "user", "content": text}])}
            for i, text in enumerate(["short question", "x" * 300_000, "another question"])]
    (tmp_path / "logs").mkdir()
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "logs" / "only.parquet")
    out = list(iter_records(tmp_path / "logs", max_line_bytes=65536))
    kinds = [type(x).__name__ for x in out]
    assert kinds == ["IngestedRecord", "Reject", "IngestedRecord"], out
    assert out[1].reason == "line_too_long" and "not read" in out[1].excerpt


def test_csv_only_and_parquet_only_source_folders_validate(repo, tmp_path):
    import shutil

    from pipeline.validate import validate_project

    for rel in ("params.yaml", "recipes", "models/demo"):
        src = repo / rel
        (shutil.copytree if src.is_dir() else shutil.copy)(src, tmp_path / rel)
    for kind in ("csv", "parquet"):
        logs = tmp_path / f"logs-{kind}"
        logs.mkdir()
        (logs / f"a.{kind}").write_text("id\n")
        data = yaml.safe_load((tmp_path / "params.yaml").read_text())
        data["data"]["sources"] = [f"logs-{kind}"]
        (tmp_path / "params.yaml").write_text(yaml.safe_dump(data))
        assert [p for p in validate_project(tmp_path / "params.yaml") if "sources" in p.key] == []
