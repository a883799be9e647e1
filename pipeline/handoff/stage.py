"""The `handoff` stage (a bundle for every variant whose gates passed) and `qpipe approve` (the
human sign-off: Model Registry version with the `approved` alias, and a record in approvals/)."""

from __future__ import annotations

import datetime as dt
import hashlib
import shutil
from pathlib import Path
from typing import Any

from pipeline.contracts import BundleIndex, Comparison, ContractError, HandoffIndex
from pipeline.contracts.artifact_manifest import read_listing
from pipeline.handoff import bundle
from pipeline.handoff import custody
from pipeline.io import write_json
from pipeline.errors import QpipeError
from pipeline.layout import Layout
from pipeline.stage_params import Declared, StageView
from pipeline.contracts.files import BUNDLE_INDEX, MANIFEST

# Beside the paths: the configured baseline and each variant's engine (variants, engines: the
# bundle's serve command), and the PII switch its model card states.
PARAMS = Declared("handoff", "handoff", "evaluate.out_dir", "compare.out_dir", "quantize.out_dir",
                  "quantize.runs_dir", "variants", "engines", "split.pii.enabled")


class ApprovalError(QpipeError, ValueError):
    pass


BUNDLE_SCHEMA = bundle.SCHEMA


def _comparison(layout: Layout) -> dict[str, Any]:
    path = layout.comparison
    if not path.is_file():
        raise ApprovalError(f"{path} does not exist — fix: `dvc repro compare`")
    return Comparison.load(path).dump()  # an old or foreign file: ContractError, with the fix


def _made_here(d: Path) -> bool:
    """A folder this stage wrote: a bundle (its manifest says so), not anything else in out_dir."""
    try:
        return not d.is_symlink() and d.is_dir() and read_listing(d / MANIFEST).schema_id == BUNDLE_SCHEMA
    except ContractError:
        return False


def run(params: StageView, layout: Layout) -> dict[str, Any]:
    """handoff/<variant>/ for every variant that passed its gates; handoff/index.json says which
    were left out and why. `params`: the stage's own (PARAMS)."""
    comparison = _comparison(layout)
    dest = layout.handoff
    dest.mkdir(parents=True, exist_ok=True)
    index: dict[str, Any] = {"gate_profile": comparison.get("gate_profile"), "bundles": {},
                             "left_out": {}}
    candidates = []
    for name, v in comparison["variants"].items():
        gate = v.get("gate")
        if not v.get("served"):
            index["left_out"][name] = v.get("reason") or "not served"
        elif v.get("reference_role"):
            index["left_out"][name] = f"a reference run, not a candidate: {v['reference_role']}"
        elif not gate or not gate["passed"]:
            index["left_out"][name] = _why_not(gate)
        else:
            candidates.append(name)
    # Every chain is checked before anything is written: one broken link stops the stage.
    chains, broken = {}, []
    for name in candidates:
        chains[name], problems = custody.check(params, layout, name, comparison, layout.comparison)
        broken += [f"{name}: {p}" for p in problems]
    if broken:
        raise custody.CustodyError("handoff refused — what is on disk is not what was evaluated:\n  "
                                   + "\n  ".join(broken) + "\nnothing was written")
    for name in candidates:
        m = bundle.build(params, layout, name, comparison, dest, chain=chains[name],
                         tarball=params.handoff.tarball)
        index["bundles"][name] = {"content_sha256": m["content_sha256"], "path": f"{dest.name}/{name}"}
    for stale in dest.iterdir():  # bundles of variants that no longer pass — bundles only
        if stale.name not in index["bundles"] and _made_here(stale):
            shutil.rmtree(stale)
    write_json(dest / BUNDLE_INDEX, HandoffIndex.model_validate(index).dump())
    return index


def _why_not(gate: dict[str, Any] | None) -> str:
    if not gate:
        return "no gate verdict"
    parts = []
    if gate.get("failed"):
        parts.append("gates failed: " + "; ".join(f["criterion"] for f in gate["failed"]))
    if gate.get("inconclusive"):
        parts.append("gates inconclusive: " + "; ".join(
            f"{c['criterion']} (about {c.get('items_needed') or 'no feasible number of'} items needed)"
            for c in gate["inconclusive"]))
    return "; ".join(parts) or "gates did not pass"


def _stale(bundle_dir: Path, entry: dict, chain: dict) -> bool:
    """A bundle made from another comparison, artifact or chain than the one being approved."""
    path = bundle_dir / MANIFEST
    if not path.is_file():
        return True
    try:
        made = BundleIndex.load(path)
    except ContractError:
        return True  # a bundle of an older version (or none): made again
    return made.gate != entry.get("gate") or made.chain.as_json() != chain


def approve(params: StageView, layout: Layout, variant: str, *, by: str, note: str | None = None,
            override: bool = False, reason: str | None = None) -> dict[str, Any]:
    """`qpipe approve` (no DVC stage: `params` are the whole params)."""
    comparison = _comparison(layout)
    v = comparison["variants"].get(variant)
    if v is None:
        raise ApprovalError(f"variant {variant!r} is not in the comparison "
                            f"({', '.join(comparison['variants'])})")
    if not v.get("served"):
        raise ApprovalError(f"{variant} was not evaluated here ({v.get('reason')}): nothing to approve")
    if v.get("reference_role"):
        raise ApprovalError(f"{variant} is a reference run ({v['reference_role']}), not a candidate "
                            "for deployment — fix: approve a quantized variant")
    gate = v["gate"]
    if not gate["passed"] and not override:
        failed = "\n  - ".join(f["message"] for f in [*gate["failed"], *gate.get("inconclusive", [])])
        what = "failed its gates" if gate["failed"] else "did not pass its gates (inconclusive)"
        raise ApprovalError(f"{variant} {what} (profile {gate['profile']}):\n  - {failed}\n"
                            "fix: choose a variant that passed, or approve with `--override --reason "
                            "\"…\"` (recorded as an override)")
    if override and not reason:
        raise ApprovalError("--override needs --reason \"why this variant ships despite its gates\"")
    chain, broken = custody.check(params, layout, variant, comparison, layout.comparison)
    if broken and not override:
        raise ApprovalError(f"{variant}: what is on disk is not what was evaluated — nothing was "
                            "approved:\n  - " + "\n  - ".join(broken) + "\nfix: as each line says; "
                            "or approve with `--override --reason \"…\"` (recorded as an override)")
    dest = layout.handoff
    if _stale(dest / variant, v, chain):
        bundle.build(params, layout, variant, comparison, dest, chain=chain,
                     tarball=params.handoff.tarball)
    problems = custody.verify_bundle(dest / variant)  # what is registered is exactly what verifies
    if problems:
        raise ApprovalError(f"{dest / variant} does not verify: " + "; ".join(map(str, problems)))
    manifest = BundleIndex.load(dest / variant / MANIFEST)
    tags = {"qpipe.approved_by": by, "qpipe.note": note or "", "qpipe.gate_profile": gate["profile"],
            "qpipe.gate_passed": str(gate["passed"]).lower(),
            "qpipe.gate_verdict": gate.get("verdict", "pass" if gate["passed"] else "fail"),
            "qpipe.gate_failed": "; ".join(f["criterion"] for f in gate["failed"]),
            "qpipe.gate_inconclusive": "; ".join(f["criterion"] for f in gate.get("inconclusive", [])),
            "qpipe.override": str(bool(override and (not gate["passed"] or broken))).lower(),
            "qpipe.custody_overridden": "; ".join(broken)[:5000],
            "qpipe.override_reason": reason or "",
            "qpipe.bundle_sha256": manifest.content_sha256,
            "qpipe.artifact_sha256": manifest.artifact_sha256,
            "qpipe.manifest_sha256": hashlib.sha256(
                (dest / variant / "model" / MANIFEST).read_bytes()).hexdigest(),
            "qpipe.calibration_sha256": manifest.calibration_sha256 or "",
            "qpipe.evalset_sha256": manifest.evalset_sha256}
    from pipeline import tracking
    from pipeline.tracking.log import PARAMS as TRACK

    # The registry version hangs off the variant's run: make sure the evaluation is logged
    # (idempotent: nothing is logged twice), as the `track` stage does.
    logged = tracking.run(params.for_stage(TRACK), layout)
    if logged.get("pending"):
        raise ApprovalError(f"the tracking server is unavailable ({logged.get('reason')}); nothing "
                            "was registered — fix: start it (or check MLFLOW_TRACKING_URI), then "
                            "approve again")
    registered = tracking.register(params, layout.root, variant, dest / variant, tags)
    record = {"variant": variant, "approved_by": by, "note": note,
              "at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
              "override": bool(override and (not gate["passed"] or broken)), "reason": reason,
              "custody": chain, "custody_overridden": broken,
              "gate": gate, "bundle": f"{dest.name}/{variant}",
              "bundle_sha256": manifest.content_sha256, "registry": registered}
    approvals = layout.approvals
    approvals.mkdir(exist_ok=True)
    write_json(approvals / f"{variant}.json", record)
    return record


def summary_lines(index: dict[str, Any]) -> list[str]:
    """The handoff index for the terminal: each bundle with its hash, each variant left out."""
    lines = [f"{name}: {b['path']} (sha256 {b['content_sha256'][:16]}…)"
             for name, b in index["bundles"].items()]
    return lines + [f"{name}: left out — {why}" for name, why in index["left_out"].items()]


def approval_line(record: dict[str, Any]) -> str:
    """An approval record in one line: who, any override and why, registry version, bundle."""
    reg = record["registry"]
    override = f" (OVERRIDE: {record['reason']})" if record["override"] else ""
    return (f"{record['variant']}: approved by {record['approved_by']}{override}; registered "
            f"{reg.get('name')} v{reg.get('version')} @{reg.get('alias')}; bundle "
            f"{record['bundle']} sha256 {record['bundle_sha256'][:16]}…")
