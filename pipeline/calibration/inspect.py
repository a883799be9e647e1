"""`qpipe calib inspect | diff | freeze`: look at calibration sets before a requantization."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from rich.table import Table

from pipeline.contracts import CalibrationCard, read_lines
from pipeline.contracts.files import CARD, SAMPLES
from pipeline.contracts.split_outputs import CalibrationSample


def set_dir(data_dir: Path, ref: str) -> Path:
    """A set by name (under data/calibration/) or by path."""
    p = Path(ref)
    if (p / CARD).is_file():
        return p
    p = data_dir / "calibration" / ref
    if not (p / CARD).is_file():
        raise FileNotFoundError(f"no calibration set {ref!r} ({p}/card.json missing) — fix: "
                                f"`qpipe calib build {ref}` or `dvc repro calibration@{ref}`")
    return p


def _samples(d: Path) -> list[CalibrationSample]:
    return read_lines(CalibrationSample, d / SAMPLES, writer=f"`dvc repro calibration@{d.name}`")


def inspect_table(d: Path) -> tuple[CalibrationCard, Table]:
    card = CalibrationCard.load(d / CARD)
    rows = _samples(d)
    buckets = sorted({r.length_bucket for r in rows}, key=_bucket_key)
    t = Table(title=f"{card.name}: {card.samples} samples, sha256 {(card.content_sha256 or '-')[:16]}…")
    t.add_column("scenario")
    for b in buckets:
        t.add_column(b, justify="right")
    t.add_column("hard", justify="right")
    t.add_column("total", justify="right")
    by = Counter((r.scenario, r.length_bucket) for r in rows)
    for s in sorted({r.scenario for r in rows}):
        sub = [r for r in rows if r.scenario == s]
        t.add_row(s, *(str(by[(s, b)]) for b in buckets),
                  str(sum(r.difficulty == "hard" for r in sub)), str(len(sub)))
    return card, t


def _bucket_key(b: str) -> int:
    digits = "".join(c if c.isdigit() else " " for c in b).split()
    return int(digits[-1]) + (1 if b.startswith(">") else 0) if digits else 0


def diff(a: Path, b: Path) -> dict:
    ca, cb = (CalibrationCard.load(d / CARD) for d in (a, b))
    ra, rb = {r.id: r for r in _samples(a)}, {r.id: r for r in _samples(b)}
    comp_a, comp_b = ca.composition or {}, cb.composition or {}
    comp = {k: comp_b.get(k, 0) - comp_a.get(k, 0) for k in sorted(set(comp_a) | set(comp_b))}
    return {"a": {"path": str(a), "sha256": ca.content_sha256, "samples": ca.samples},
            "b": {"path": str(b), "sha256": cb.content_sha256, "samples": cb.samples},
            "identical": ca.content_sha256 == cb.content_sha256,
            "added": sorted(set(rb) - set(ra)), "removed": sorted(set(ra) - set(rb)),
            "changed_text": sorted(i for i in set(ra) & set(rb) if ra[i].text != rb[i].text),
            "composition_delta": {k: v for k, v in comp.items() if v}}


def freeze(d: Path, out: Path) -> int:
    ids = [r.id for r in _samples(d)]
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    tmp.write_text("\n".join(ids) + "\n")
    tmp.replace(out)
    return len(ids)


def inspect_set(layout, ref: str) -> list:
    """What `qpipe calib inspect` shows of a set (by name or path): its composition table, each
    shortfall against its quotas, and its overlap with the evaluation set. `layout`: the
    project's pipeline.layout.Layout."""
    card, table = inspect_table(set_dir(layout.data, ref))
    shortfalls = [f"[yellow]shortfall ({src}):[/yellow] {s}"
                  for src, short in (card.shortfalls or {}).items() for s in short]
    overlap = card.overlap_with_evalset.model_dump() if card.overlap_with_evalset else None
    return [table, *shortfalls, f"overlap with eval set: {overlap}"]


def diff_sets(layout, a: str, b: str) -> dict:
    """`diff` of two sets named or given by path, resolved against the project's data folder."""
    data = layout.data
    return diff(set_dir(data, a), set_dir(data, b))


def freeze_set(layout, ref: str, out: Path | None = None) -> str:
    """Freeze a set's ids into `out` (default calibration/specs/<set>.ids, committed, for
    `rotation.previous`); the line that says how many and where."""
    target = out or layout.calibration_spec(ref)
    n = freeze(set_dir(layout.data, ref), target)
    return f"froze {n} ids of {ref} into {target}"
