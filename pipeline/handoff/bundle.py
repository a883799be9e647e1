"""Handoff bundles: what the algorithm team receives for an approved variant, verifiable by anyone
with `sha256sum -c SHA256SUMS` (or `qpipe verify handoff/<variant>`).

    handoff/<variant>/
      model/              the artifact exactly as quantized (its own manifest.json + SHA256SUMS)
      MODEL_CARD.md       lineage, calibration set, evaluation, gates, how to serve it
      comparison.md       the comparison report it was approved on (+ its plots)
      calibration_card.md, calibration_card.json   the calibration set's card
      evaluation.json     its metrics and its entry of comparison.json
      metrics.json        the evaluation's results file, verbatim (its hash is in the chain)
      quantize_run.json   how the artifact was made: times, memory, host, git commit
      manifest.json, SHA256SUMS   over every file above, with the chain of custody
                          (artifact → evaluation → comparison → gates): `qpipe verify` checks it
"""

from __future__ import annotations

import shutil
import tarfile
from pathlib import Path
from typing import Any

import yaml

from pipeline.artifacts.manifest import build_manifest, require_verified
from pipeline.artifacts.runrecord import read_run_record
from pipeline.engines.base import engine_names, get_engine
from pipeline.contracts import ArtifactManifest, BundleEvaluation, BundleIndex, CalibrationCard, Metrics
from pipeline.errors import QpipeError
from pipeline.io import atomic_dirs, file_sha256, write_json
from pipeline.layout import Layout
from pipeline.contracts.files import CARD, CARD_MD, COMPARISON_MD, EVALUATION, METRICS, MODEL_CARD, PLOTS, QUANTIZE_RUN
from pipeline.stage_params import StageView

SCHEMA = BundleIndex.SCHEMA


def serve_command(params: StageView, engine: str, variant: str, model_dir: Path) -> str:
    """The exact command that serves the bundle's model with the engine and settings it was
    evaluated with (the model at `model`, port 8000), as the engine states it."""
    if engine not in engine_names():
        return f"served elsewhere ({engine})"
    return get_engine(engine).handoff_command(model_dir, params.engine_settings(variant))


def model_card(variant: str, manifest: ArtifactManifest, evaluation: dict, comparison: dict, calib: dict | None,
               engine: str, serve: str, pii_enabled: bool = True, run: dict | None = None) -> str:
    v = evaluation["comparison"]
    a, g = v["accuracy"], v.get("gate") or {}
    calib_line = "none (this scheme uses no calibration data)" if not calib else (
        f"`{calib.get('name')}` — {calib.get('samples')} samples, content SHA256 "
        f"`{calib.get('content_sha256')}`, PII replacements "
        f"{sum((calib.get('pii') or {}).get('replacements', {}).values())}"
        + _calibration_summary(calib))
    recipe = manifest.recipe
    lines = [
        f"# {variant}", "",
        f"Quantized from **{manifest.base_model.name}** (content SHA256 "
        f"`{manifest.base_model.content_sha256}`) with scheme `{manifest.scheme}` "
        f"({manifest.bits} bits, group size {manifest.group_size}) by the "
        f"`{manifest.backend}` backend; format `{manifest.format}`.", "",
        "## Lineage", "",
        f"- recipe: `{recipe and recipe.path}` (SHA256 `{recipe and recipe.sha256}`)",
        f"- calibration set: {calib_line}",
        f"- PII scrubbing at the split (evaluation and calibration data): "
        f"{'on' if pii_enabled else '**OFF** (split.pii.enabled: false)'}",
        f"- remote code: {'**ON** (model.trust_remote_code)' if manifest.trust_remote_code else 'off'}",
        f"- tools: {', '.join(f'{k} {v_}' for k, v_ in manifest.tool_versions.items())}",
        f"- artifact content SHA256: `{manifest.content_sha256}`; quantized at git commit "
        f"`{((run or {}).get('git') or {}).get('commit')}`"
        + (" (with uncommitted changes)" if ((run or {}).get("git") or {}).get("dirty") else ""), "",
        f"## Evaluation (business evaluation set, paired against `{v.get('reference', 'the baseline')}`)",
        "",
        f"- accuracy {a['variant']:.3f} vs reference {a['base']:.3f}: {100 * a['delta']:+.1f} points, "
        f"95% CI [{100 * a['ci_low']:+.1f}, {100 * a['ci_high']:+.1f}] (Tango score interval), "
        f"McNemar p={a['p_value']:.2g}, n={a['n']}",
        f"- slices with a significant drop (Benjamini–Hochberg across slices): "
        f"{', '.join(v['significant_drops']) or 'none'}",
        f"- same task result as the baseline on {v['detectors']['consistency']['task_agreement']:.1%}"
        f" of samples; JSON valid {v['detectors']['variant'].get('json_validity')}",
        f"- engine: {v['engine']['name']} {v['engine']['version']} ({v['engine']['kernel']})",
        f"- evaluation set SHA256 `{comparison['evalset_sha256']}`, harness "
        f"`{comparison['harness_version']}`", "",
        f"## Gates — profile `{g.get('profile')}`: "
        f"{str(g.get('verdict') or ('pass' if g.get('passed') else 'fail')).upper()}", "",
        *([f"- {c['verdict']}: {c['message']}" for c in g.get("criteria", [])]
          or [f"- {f['message']}" for f in g.get("failed", [])] or ["Every criterion held."]), "",
        *recipe_section(manifest),
        "## Serving", "", "```bash", serve, "```", "",
        "## Verifying this bundle", "", "```bash", "sha256sum -c SHA256SUMS", "```", ""]
    return "\n".join(lines)


def recipe_section(manifest: ArtifactManifest) -> list[str]:
    """The card's account of what was quantized how: the recipe as the backend applied it, in the
    tool's own format, from the manifest (a mixed-precision variant's per-layer formats — GGUF
    `tensor_types` overrides, llm-compressor `config_groups` targets — are all there)."""
    recipe = manifest.recipe
    if recipe is None or recipe.resolved is None:
        return []
    text = yaml.safe_dump(recipe.resolved, sort_keys=False, allow_unicode=True, width=120).rstrip()
    return ["## Recipe as applied", "",
            f"`{recipe.path}` (SHA256 `{recipe.sha256}`), as the `{manifest.backend}` backend read it; "
            "every layer's format is in it (the manifest's `recipe.resolved`):", "",
            "```yaml", text, "```", ""]


def _calibration_summary(card: dict) -> str:
    """The calibration card's composition in one line (the whole card is in the bundle)."""
    parts = []
    if card.get("by_scenario"):
        parts.append("scenarios " + ", ".join(f"{k} {v}" for k, v in card["by_scenario"].items()))
    if card.get("by_difficulty"):
        parts.append("difficulty " + ", ".join(f"{k} {v}" for k, v in card["by_difficulty"].items()))
    if card.get("hard_share") is not None:
        parts.append(f"hard share {card['hard_share']:.0%}")
    tokens = card.get("token_lengths") or {}
    if tokens.get("median") is not None:
        parts.append(f"tokens median {tokens['median']:.0f}, max {tokens.get('max')}")
    overlap = card.get("overlap_with_evalset") or {}
    if overlap:
        parts.append(f"overlap with the evaluation set: {overlap.get('by_id')} by id, "
                     f"{overlap.get('near_duplicates')} near duplicates")
    short = [x for xs in (card.get("shortfalls") or {}).values() for x in xs]
    if short:
        parts.append(f"{len(short)} quota shortfalls")
    return ("; " + "; ".join(parts) + " (calibration_card.md)") if parts else ""


class BundleError(QpipeError, RuntimeError):
    pass


def build(params: StageView, layout: Layout, variant: str, comparison: dict, dest_parent: Path,
          *, chain: dict[str, Any], tarball: bool = False) -> dict[str, Any]:
    """Write handoff/<variant>/ atomically from the verified artifact whose hash the chain of
    custody names (pipeline.handoff.custody.check); returns its manifest."""
    art = layout.artifact(variant)
    manifest = require_verified(art, ArtifactManifest)  # a bundle is never made from files that do not verify
    if manifest.content_sha256 != chain["artifact_sha256"]:
        raise BundleError(f"{art} changed since its chain of custody was checked — nothing written")
    entry = comparison["variants"][variant]
    results = layout.result(variant)
    metrics = Metrics.load(results / METRICS).dump()
    calib, card_dir = None, None
    used = manifest.calibration
    if used is not None and used.name:
        card_dir = layout.calibration_set(used.name)
        card = card_dir / CARD
        calib = (CalibrationCard.load(card).dump() if card.is_file()
                 else used.model_dump(mode="json", exclude_unset=True))
    engine = params.engine_for(variant)
    run_path = layout.quantize_run(variant)
    run = read_run_record(run_path)
    if run and run.get("artifact_content_sha256") != manifest.content_sha256:
        run = {}  # the record of a run that made other bytes: not this artifact's provenance
    with atomic_dirs(dest_parent, [variant]) as dirs:
        out = dirs[variant]
        # Links are copied as links (never followed), so the copy's verification refuses them;
        # the copy itself must hash to the evaluated artifact.
        shutil.copytree(art, out / "model", symlinks=True)
        if require_verified(out / "model").content_sha256 != chain["artifact_sha256"]:
            raise BundleError(f"{art} changed while it was copied into the bundle — nothing written")
        shutil.copy2(results / METRICS, out / METRICS)  # verbatim: its hash is in the chain
        if file_sha256(out / METRICS) != chain["evaluation"]["metrics_sha256"]:
            raise BundleError(f"{results / METRICS} is not the one the comparison read — "
                              "nothing written; fix: `dvc repro compare`")
        reports = layout.reports
        # the report with the plots it shows
        for name in (COMPARISON_MD, *PLOTS.values()):
            if (reports / name).is_file():
                shutil.copy2(reports / name, out / name)
        for name in (CARD_MD, CARD):
            if card_dir is not None and (card_dir / name).is_file():
                shutil.copy2(card_dir / name, out / f"calibration_{name}")
        if run:  # how the artifact was made: times, memory, host, git commit
            shutil.copy2(run_path, out / QUANTIZE_RUN)
        evaluation = {"metrics": metrics, "comparison": entry}
        write_json(out / EVALUATION, BundleEvaluation.model_validate(evaluation).dump())
        serve = serve_command(params, engine, variant, out / "model")
        (out / MODEL_CARD).write_text(
            model_card(variant, manifest, evaluation, comparison, calib, engine, serve,
                       pii_enabled=params.split.pii.enabled, run=run),
            encoding="utf-8")
        bundle = build_manifest(out, lineage={
            "schema": SCHEMA, "variant": variant, "artifact_sha256": manifest.content_sha256,
            "base_model": manifest.base_model.model_dump(mode="json", exclude_unset=True), "scheme": manifest.scheme,
            "calibration_sha256": used.content_sha256 if used is not None else None,
            "evalset_sha256": comparison["evalset_sha256"], "gate": entry.get("gate"),
            "engine": engine, "serve": serve, "chain": chain,
            "pii_scrubbing": params.split.pii.enabled,
            "trust_remote_code": bool(manifest.trust_remote_code)}, contract=BundleIndex)
    if tarball:
        with tarfile.open(dest_parent / f"{variant}.tar.gz", "w:gz") as tar:
            tar.add(dest_parent / variant, arcname=variant)
    return bundle
