"""Point 1 — a chain of custody: approve and handoff act only on the bytes that were evaluated,
against the configured baseline; a bundle carries the chain and `qpipe verify` checks it."""

import json
import shutil
import subprocess
import sys

import pytest
import yaml

from pipeline.artifacts.manifest import build_manifest
from pipeline.evaluate.harness import EvalSetError, load_evalset
from pipeline.handoff import custody
from pipeline.handoff import stage as handoff
from pipeline.handoff.stage import ApprovalError

from .conftest import CANDIDATE, MIXED_RECIPE, OTHER, REPO, compare, make_artifact
from conftest import stage_args


def test_an_intact_project_hands_off_a_bundle_whose_chain_verifies(project):
    index = handoff.run(*stage_args(project.params, project.root, handoff.PARAMS))
    assert set(index["bundles"]) == {CANDIDATE, OTHER}
    bundle = project.root / "handoff" / CANDIDATE
    chain = json.loads((bundle / "manifest.json").read_text())["chain"]
    assert chain["artifact_sha256"] == project.shas[CANDIDATE]
    assert chain["comparison"]["baseline"] == "baseline"
    assert chain["comparison"]["baseline_artifact_sha256"] == project.shas["baseline"]
    assert custody.verify_bundle(bundle) == []
    done = subprocess.run([sys.executable, "-m", "pipeline.cli", "verify", str(bundle)],
                          capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0 and "chain of custody holds" in done.stdout + done.stderr
    # the card says what every layer was quantized to: the recipe as applied, from the manifest
    card = (bundle / "MODEL_CARD.md").read_text()
    recipe = card.split("## Recipe as applied", 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0]
    assert yaml.safe_load(recipe) == MIXED_RECIPE


def test_an_artifact_swapped_after_evaluation_is_neither_bundled_nor_approved(project):
    # Another variant's files (with their own, self-consistent manifest) copied over the
    # evaluated artifact: the artifact verifies against its manifest, but is not what was evaluated.
    target = project.root / "artifacts" / CANDIDATE
    shutil.rmtree(target)
    shutil.copytree(project.root / "artifacts" / OTHER, target)
    with pytest.raises(custody.CustodyError, match="is not the artifact that was evaluated"):
        handoff.run(*stage_args(project.params, project.root, handoff.PARAMS))
    assert not (project.root / "handoff" / CANDIDATE).exists()
    assert not (project.root / "handoff" / OTHER).exists()  # nothing written at all
    with pytest.raises(ApprovalError, match="not what was evaluated"):
        handoff.approve(*stage_args(project.params, project.root), CANDIDATE, by="mallory")
    assert not (project.root / "approvals").exists()


def test_a_comparison_against_another_baseline_is_refused(project):
    compare(project.root, [CANDIDATE], baseline=OTHER)  # `qpipe compare --baseline <any>`
    with pytest.raises(custody.CustodyError, match="not the configured baseline"):
        handoff.run(*stage_args(project.params, project.root, handoff.PARAMS))
    with pytest.raises(ApprovalError, match="not the configured baseline"):
        handoff.approve(*stage_args(project.params, project.root), CANDIDATE, by="mallory")


def test_results_edited_after_the_comparison_are_refused(project):
    metrics = project.root / "results" / CANDIDATE / "metrics.json"
    m = json.loads(metrics.read_text())
    m["accuracy"] = 0.99
    metrics.write_text(json.dumps(m))
    with pytest.raises(custody.CustodyError, match="changed after the comparison read it"):
        handoff.run(*stage_args(project.params, project.root, handoff.PARAMS))


def test_a_tampered_bundle_with_a_recomputed_manifest_fails_its_chain(project):
    handoff.run(*stage_args(project.params, project.root, handoff.PARAMS))
    bundle = project.root / "handoff" / CANDIDATE
    # Swap the bundle's model for other weights and re-hash everything, as a careful attacker
    # would: every file matches the manifest, the chain does not.
    shutil.rmtree(bundle / "model")
    shutil.copytree(project.root / "artifacts" / OTHER, bundle / "model")
    lineage = {k: v for k, v in json.loads((bundle / "manifest.json").read_text()).items()
               if k not in ("files", "content_sha256", "size_bytes")}
    (bundle / "manifest.json").unlink()
    (bundle / "SHA256SUMS").unlink()
    build_manifest(bundle, lineage=lineage)
    problems = custody.verify_bundle(bundle)
    assert [p.path for p in problems] == ["model"], problems
    done = subprocess.run([sys.executable, "-m", "pipeline.cli", "verify", str(bundle)],
                          capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 1 and "chain's artifact" in done.stdout + done.stderr


def test_a_requantized_artifact_needs_a_new_evaluation(project):
    make_artifact(project.root, CANDIDATE, b"X" * 2048)  # same recipe, other bytes
    chain, problems = custody.check(*stage_args(project.params, project.root, handoff.PARAMS), CANDIDATE,
                                    project.comparison(), project.root / "reports" / "comparison.json")
    assert chain["artifact_sha256"] != project.shas[CANDIDATE]
    assert any("is not the artifact that was evaluated" in p for p in problems)


def test_the_evaluation_set_hash_is_computed_from_the_bytes_read(tmp_path):
    d = tmp_path / "evalset"
    d.mkdir()
    line = json.dumps({"id": "a", "conversation_id": "c", "messages": [{"role": "user",
                       "content": "hi\u2028there"}], "reference": "x"}, ensure_ascii=False) + "\n"
    (d / "evalset.jsonl").write_text(line, encoding="utf-8")
    from pipeline.io import file_sha256

    (d / "card.json").write_text(json.dumps({"schema": "qpipe.evalset/v1", "samples": 1,
                                             "content_sha256": file_sha256(d / "evalset.jsonl")}))
    es = load_evalset(d)
    assert es.sha256 == file_sha256(d / "evalset.jsonl") and len(es.items) == 1
    (d / "evalset.jsonl").write_text(line.replace("hi", "ho"), encoding="utf-8")  # edited after the split
    with pytest.raises(EvalSetError, match="changed after the split"):
        load_evalset(d)


def test_calibration_files_a_quantizer_reads_are_the_ones_built(tmp_path):
    from pipeline.calibration.build import CONSUMED
    from pipeline.io import file_sha256
    from pipeline.quantize.base import BackendError
    from pipeline.quantize.stage import calibration_files

    d = tmp_path / "business"
    d.mkdir()
    for n in CONSUMED:
        (d / n).write_text(f"{n} as built\n")
    (d / "card.json").write_text(json.dumps({"schema": "qpipe.calibration-card/v1", "name": "business",
                                             "samples": 1, "content_sha256": file_sha256(d / "samples.jsonl"),
                                             "files_sha256": {n: file_sha256(d / n) for n in CONSUMED}}))
    assert set(calibration_files(d)) == set(CONSUMED)
    (d / "imatrix.txt").write_text("text edited after the build\n")  # samples.jsonl untouched
    with pytest.raises(BackendError, match="imatrix.txt changed after the set was built"):
        calibration_files(d)
