"""The chain of custody: what is approved and shipped is exactly what was evaluated.

    artifact (its files' SHA256, recomputed) ─▶ evaluation (results/<v>/metrics.json records the
    artifact hash it served; its own hash and samples.jsonl's) ─▶ comparison (comparison.json's
    custody record for <v>: those hashes, its reference's artifact, the baseline, the evaluation
    set) ─▶ gates (the verdict in that entry)

`check` recomputes every link from the bytes on disk before `approve` or `handoff` acts; a
broken link is a refusal that names it, not a warning. A handoff bundle carries the chain in its
manifest and `verify_bundle` (`qpipe verify handoff/<v>`) checks it from the bundle alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pipeline.artifacts.manifest import MANIFEST, Mismatch, VerificationError, require_verified, verify
from pipeline.contracts import BundleEvaluation, BundleIndex, ContractError, Metrics
from pipeline.contracts.artifact_manifest import read_listing
from pipeline.errors import QpipeError
from pipeline.io import file_sha256
from pipeline.layout import Layout
from pipeline.contracts.files import CUSTODY_SCHEMA, EVALUATION, METRICS, REFERENCE_SAMPLES, SAMPLES
from pipeline.stage_params import StageView

SCHEMA = CUSTODY_SCHEMA


class CustodyError(QpipeError, RuntimeError):
    pass


def check(params: StageView, layout: Layout, variant: str, comparison: dict[str, Any],
          comparison_path: Path) -> tuple[dict[str, Any], list[str]]:
    """The chain for `variant` as it stands on disk, and every link that does not hold.

    Raises VerificationError when the artifact does not even match its own manifest (no
    override can ship files that do not verify)."""
    entry = comparison["variants"][variant]
    rec = entry.get("custody") or {}
    results = layout.result(variant)
    manifest = require_verified(layout.artifact(variant))  # recomputes every file's hash
    on_disk = manifest.content_sha256
    problems: list[str] = []
    if comparison.get("baseline") != params.baseline:
        problems.append(f"the comparison was made against {comparison.get('baseline')!r}, not the "
                        f"configured baseline {params.baseline!r} (`compare --baseline`?) — fix: "
                        "`dvc repro compare`")
    if not rec:
        problems.append("the comparison has no custody record for this variant (made by an older "
                        "version) — fix: `dvc repro compare`")
    else:
        if rec.get("artifact_sha256") != on_disk:
            problems.append(f"artifacts/{variant} on disk (content SHA256 {on_disk[:16]}…) is not "
                            f"the artifact that was evaluated ({str(rec.get('artifact_sha256'))[:16]}…)"
                            f" — fix: `dvc repro` (re-evaluates what changed), or `dvc checkout "
                            f"artifacts/{variant}` to restore the evaluated files")
        paired = ((REFERENCE_SAMPLES, "reference_samples_sha256"),) if rec.get("reference_samples_sha256") else ()
        for name, key in ((METRICS, "metrics_sha256"), (SAMPLES, "samples_sha256"), *paired):
            path = results / name
            now = file_sha256(path) if path.is_file() else None
            if now != rec.get(key):
                problems.append(f"{path} changed after the comparison read it — fix: `dvc repro compare`")
        metrics = results / METRICS
        if metrics.is_file():
            evaluated = Metrics.load(metrics).artifact_sha256
            if evaluated != rec.get("artifact_sha256"):
                problems.append(f"{metrics} records artifact {str(evaluated)[:16]}…, the comparison "
                                f"{str(rec.get('artifact_sha256'))[:16]}… — fix: `dvc repro`")
    gate = entry.get("gate") or {}
    chain = {"schema": SCHEMA, "variant": variant, "artifact_sha256": on_disk,
             "evaluation": {k: rec.get(k) for k in ("artifact_sha256", "metrics_sha256",
                                                     "samples_sha256")},
             "comparison": {"sha256": file_sha256(comparison_path),
                            "baseline": comparison.get("baseline"),
                            "baseline_artifact_sha256": comparison.get("baseline_artifact_sha256"),
                            "reference": entry.get("reference"),
                            "reference_artifact_sha256": rec.get("reference_artifact_sha256"),
                            "evalset_sha256": comparison.get("evalset_sha256")},
             "gate": {"profile": gate.get("profile"),
                      "verdict": gate.get("verdict", "pass" if gate.get("passed") else "fail")}}
    return chain, problems


def verify_bundle(bundle: Path) -> list[Mismatch]:
    """A handoff bundle's files against its manifest, its model against the model's own
    manifest, and the chain it carries against the files beside it."""
    out = verify(bundle)
    if out:
        return out
    if not getattr(read_listing(bundle / MANIFEST), "chain", None):  # verify() read it already
        return [Mismatch(MANIFEST, "no chain of custody (a bundle from an older version): "
                                   "rebuild it with `dvc repro handoff`")]
    try:
        m = BundleIndex.load(bundle / MANIFEST)
    except ContractError as err:
        return [Mismatch(MANIFEST, f"{err.problem} — fix: {err.fix}")]
    chain = m.chain
    try:
        model = require_verified(bundle / "model")
    except VerificationError as err:
        return [Mismatch(f"model/{p.path}", p.problem) for p in err.mismatches]
    art = chain.artifact_sha256
    if model.content_sha256 != art or m.artifact_sha256 != art:
        out.append(Mismatch("model", f"content SHA256 {str(model.content_sha256)[:16]}… is not the "
                                     f"chain's artifact {str(art)[:16]}…"))
    metrics = bundle / METRICS
    if not metrics.is_file() or file_sha256(metrics) != chain.evaluation.metrics_sha256:
        out.append(Mismatch(METRICS, "not the evaluation results the comparison read"))
    elif Metrics.load(metrics).artifact_sha256 != art:
        out.append(Mismatch(METRICS, "records another artifact than the bundle's model"))
    evaluation = BundleEvaluation.load(bundle / EVALUATION) if (bundle / EVALUATION).is_file() else None
    entry = evaluation.comparison if evaluation else {}  # the comparison's entry, as compare wrote it
    if (entry.get("custody") or {}).get("artifact_sha256") != art:
        out.append(Mismatch(EVALUATION, "its comparison entry paired another artifact"))
    if entry.get("gate") != m.gate:
        out.append(Mismatch(EVALUATION, "its gate verdict is not the bundle's"))
    return out


def verify_path(path: Path) -> tuple[list[str], bool]:
    """`qpipe verify`: an artifact folder against its manifest, or — when its manifest is a
    handoff bundle's — the whole bundle and its chain of custody. The lines to show (one
    `MISMATCH <path>/<problem>` each, or the one that says everything holds) and whether it did."""
    from pipeline.handoff.bundle import SCHEMA as BUNDLE

    try:
        is_bundle = read_listing(path / MANIFEST).schema_id == BUNDLE
    except ContractError:
        is_bundle = False
    problems = verify_bundle(path) if is_bundle else verify(path)
    if problems:
        return [f"MISMATCH {path}/{p}" for p in problems], False
    holds = ", and its chain of custody holds" if is_bundle else ""
    return [f"{path}: every file matches its manifest{holds}"], True
