"""`qpipe calib inspect | diff | freeze`: look at calibration sets before a requantization."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from rich.table import Table


def set_dir(data_dir: Path, ref: str) -> Path:
    """A set by name (under data/calibration/) or by path."""
    p = Path(ref)
    if (p / "card.json").is_file():
        return p
    p = data_dir / "calibration" / ref
    if not (p / "card.json").is_file():
        raise FileNotFoundError(f"no calibration set {ref!r} ({p}/card.json missing) — fix: "
                                f"`qpipe calib build {ref}` or `dvc repro calibration@{ref}`")
    return p


def _samples(d: Path) -> list[dict]:
    return [json.loads(line) for line in (d / "samples.jsonl").open(encoding="utf-8")]


def inspect_table(d: Path) -> tuple[dict, Table]:
    card = json.loads((d / "card.json").read_text())
    rows = _samples(d)
    buckets = sorted({r["length_bucket"] for r in rows}, key=_bucket_key)
    t = Table(title=f"{card['name']}: {card['samples']} samples, sha256 {card['content_sha256'][:16]}…")
    t.add_column("scenario")
    for b in buckets:
        t.add_column(b, justify="right")
    t.add_column("hard", justify="right")
    t.add_column("total", justify="right")
    by = Counter((r["scenario"], r["length_bucket"]) for r in rows)
    for s in sorted({r["scenario"] for r in rows}):
        sub = [r for r in rows if r["scenario"] == s]
        t.add_row(s, *(str(by[(s, b)]) for b in buckets),
                  str(sum(r["difficulty"] == "hard" for r in sub)), str(len(sub)))
    return card, t


def _bucket_key(b: str) -> int:
    digits = "".join(c if c.isdigit() else " " for c in b).split()
    return int(digits[-1]) + (1 if b.startswith(">") else 0) if digits else 0


def diff(a: Path, b: Path) -> dict:
    ca, cb = (json.loads((d / "card.json").read_text()) for d in (a, b))
    ra, rb = {r["id"]: r for r in _samples(a)}, {r["id"]: r for r in _samples(b)}
    comp = {k: cb["composition"].get(k, 0) - ca["composition"].get(k, 0)
            for k in sorted(set(ca["composition"]) | set(cb["composition"]))}
    return {"a": {"path": str(a), "sha256": ca["content_sha256"], "samples": ca["samples"]},
            "b": {"path": str(b), "sha256": cb["content_sha256"], "samples": cb["samples"]},
            "identical": ca["content_sha256"] == cb["content_sha256"],
            "added": sorted(set(rb) - set(ra)), "removed": sorted(set(ra) - set(rb)),
            "changed_text": sorted(i for i in set(ra) & set(rb) if ra[i]["text"] != rb[i]["text"]),
            "composition_delta": {k: v for k, v in comp.items() if v}}


def freeze(d: Path, out: Path) -> int:
    ids = [r["id"] for r in _samples(d)]
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    tmp.write_text("\n".join(ids) + "\n")
    tmp.replace(out)
    return len(ids)
