"""The typed contracts between stages (pipeline.contracts): each file round-trips through its
model to the same bytes its producer writes, and an old, foreign or incomplete file gives one
clear ContractError naming the file and the stage to re-run — never a KeyError in a consumer."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from pipeline.artifacts.manifest import build_manifest, require_verified
from pipeline.calibration.empty import write_empty_set
from pipeline.calibration.eval_items import eval_item
from pipeline.compare.deltas import load_results
from pipeline.contracts import (ITEM_SCHEMA, ArtifactManifest, BundleIndex, CalibrationCard, Comparison,
                                ContractError, EvalItem, EvalsetCard, Metrics)
from pipeline.errors import QpipeError
from pipeline.evaluate.harness import load_evalset
from pipeline.evaluate.stage import not_served
from pipeline.io import file_sha256, jsonl_line, write_json

SHA = "a" * 64


def manifest_bytes(d: dict) -> str:  # how build_manifest writes
    return json.dumps(d, indent=2, sort_keys=True, default=str) + "\n"


def written(d: dict) -> str:  # how pipeline.io.write_json writes
    return json.dumps(d, indent=2, ensure_ascii=False, sort_keys=True) + "\n"


def artifact(root: Path) -> tuple[Path, dict]:
    art = root / "artifacts" / "w4"
    art.mkdir(parents=True)
    (art / "model.safetensors").write_bytes(b"W" * 100)
    (art / "config.json").write_text('{"architectures": ["LlamaForCausalLM"]}\n')
    return art, build_manifest(art, lineage={
        "variant": "w4", "scheme": "w4a16_gptq", "bits": 4, "group_size": 128, "format": "compressed-tensors",
        "engine": "vllm", "backend": "llmcompressor", "tool_versions": {"qpipe": "0.1.0", "torch": "2.5"},
        "base_model": {"name": "demo", "architectures": ["LlamaForCausalLM"], "content_sha256": SHA,
                       "files": 9, "path": "models/demo"},
        "recipe": {"path": "recipes/w4.yaml", "sha256": SHA, "resolved": {"GPTQModifier": {"scheme": "W4A16"}}},
        "calibration": {"name": "business", "content_sha256": SHA, "samples": 256,
                        "files_sha256": {"samples.jsonl": SHA}},
        "options": {}, "trust_remote_code": False,
        "quantization": {"device": "cpu", "device_requested": "cpu", "processes": 1, "gpu": None,
                         "onloading": None, "max_seq_length": 512},
        "load_check": {"ok": True, "device": "cpu", "text": "ünïcode", "tokens": [1, 2]}, "notes": []},
        contract=ArtifactManifest)


def served_metrics(variant: str = "w4", accuracy: float = 0.8188) -> dict:
    return {"schema": "qpipe.results/v1", "variant": variant, "served": True, "accuracy": accuracy, "n": 2,
            "slices": {"scenario=faq": {"n": 2, "accuracy": 1.0}},
            "detectors": {"output_tokens": {"n": 2, "mean": 14.1, "p50": 12.0, "p90": 25.0, "p99": 37.0,
                                            "max": 37.0}, "hit_max_tokens_share": 0.0,
                          "empty_output_share": 0.0, "repetition_rate": 0.0, "json_validity": None,
                          "json_samples": 0},
            "speed": {"serving_engine": True, "note": None, "wall_seconds": 72.467,
                      "output_tokens_per_second": 292, "ttft_p50": 0.03541, "ttft_p99": 0.37708,
                      "tpot_p50": 0.01035, "tpot_p99": 0.03914, "burst_share": None,
                      "latency_p50": 0.15221, "latency_p99": 0.65141},
            "memory": {"engine_peak_rss_bytes": 3086942208, "gpu": None},
            "engine": {"name": "vllm", "version": "0.32.0", "kernel": "k", "serving": True, "reason": None},
            "evalset_sha256": SHA, "harness_version": "e3b0c44298fc1c14",
            "protocol": {"prompts_sha256": SHA, "decoding": "greedy", "max_tokens": 128},
            "artifact_sha256": SHA, "size_bytes": 6932233,
            "lm_eval": {"tasks": {"business_exact": {"exact_match,strip": 1.0}}, "version": "0.4.13"}}


def comparison() -> dict:
    return {"schema": "qpipe.comparison/v1", "baseline": "baseline", "configured_baseline": "baseline",
            "baseline_artifact_sha256": SHA, "evalset_sha256": SHA, "harness_version": "h", "alpha": 0.05,
            "min_effect": 0.05, "interval": "tango score interval (paired proportions)",
            "baseline_metrics": {"accuracy": 0.82, "n": 2, "engine": {"name": "vllm"}, "size_bytes": 1},
            "references": {"w4": "baseline"}, "engine_baselines": {},
            "variants": {
                "w4": {"variant": "w4", "served": True, "engine": {"name": "vllm"}, "reference": "baseline",
                       "size_bytes": 1, "compression": None,
                       "accuracy": {"base": 0.82, "variant": 0.8, "delta": -0.02, "p_value": 1}, "slices": {},
                       "significant_drops": [], "underpowered_slices": [], "json": None,
                       "disagreement": {"n": 2, "outputs_changed": 0}, "speed": {"serving_engine": True},
                       "custody": {"artifact_sha256": SHA, "reference_artifact_sha256": SHA,
                                   "metrics_sha256": SHA, "samples_sha256": SHA},
                       "divergence": None, "gate": {"profile": "general_saas", "passed": True},
                       "utility": {"score": -1.5, "accuracy_loss_pts": 2, "throughput_gain_pct": None,
                                   "instability_pct": 0.0, "weights": {"alpha": 1.0, "beta": 1.0}}},
                "gguf": {"variant": "gguf", "served": False, "reason": "not served here: no engine"}},
            "noise_floor": {}, "pareto_optimal": ["w4"], "gate_profile": "general_saas"}


# ── round trips: the producer's bytes, through the model, back to the same bytes ──────────────


def test_artifact_manifest_round_trips_byte_identical(tmp_path):
    art, made = artifact(tmp_path)
    text = (art / "manifest.json").read_text()
    m = ArtifactManifest.load(art / "manifest.json")
    assert m.calibration.samples == 256 and m.files[0].path == "config.json" and m.bits == 4
    assert manifest_bytes(m.dump()) == text and m.dump() == made == require_verified(art, ArtifactManifest).dump()


def test_bundle_index_round_trips_byte_identical(tmp_path):
    out = tmp_path / "handoff" / "w4"
    out.mkdir(parents=True)
    (out / "metrics.json").write_text("{}\n")
    chain = {"schema": "qpipe.custody/v1", "variant": "w4", "artifact_sha256": SHA,
             "evaluation": {"artifact_sha256": SHA, "metrics_sha256": SHA, "samples_sha256": SHA},
             "comparison": {"sha256": SHA, "baseline": "baseline", "baseline_artifact_sha256": SHA,
                            "reference": "baseline", "reference_artifact_sha256": SHA, "evalset_sha256": SHA},
             "gate": {"profile": "general_saas", "verdict": "pass"}}
    build_manifest(out, lineage={
        "schema": BundleIndex.SCHEMA, "variant": "w4", "artifact_sha256": SHA,
        "base_model": {"name": "demo", "content_sha256": SHA}, "scheme": "w4a16_gptq",
        "calibration_sha256": None, "evalset_sha256": SHA, "gate": None, "engine": "vllm",
        "serve": "vllm serve model", "chain": chain, "pii_scrubbing": True, "trust_remote_code": False},
        contract=BundleIndex)
    b = BundleIndex.load(out / "manifest.json")
    assert b.chain.evaluation.metrics_sha256 == SHA and b.calibration_sha256 is None
    assert manifest_bytes(b.dump()) == (out / "manifest.json").read_text()
    with pytest.raises(ContractError, match="qpipe.handoff/v1"):  # an artifact's is not a bundle's
        ArtifactManifest.load(out / "manifest.json")


@pytest.mark.parametrize("make", [served_metrics, lambda: {"schema": "qpipe.results/v1", "variant": "x",
                                                           "served": False, "reason": "not served here: y"}])
def test_metrics_round_trip_byte_identical(tmp_path, make):
    path = tmp_path / "results" / "w4" / "metrics.json"
    path.parent.mkdir(parents=True)
    write_json(path, make())
    m = Metrics.load(path)
    assert written(m.dump()) == path.read_text()
    if m.served:  # ints stay ints, floats floats, None kept, absent keys absent
        assert m.speed.output_tokens_per_second == 292 and m.detectors.output_tokens["max"] == 37.0
        assert "latency_vs_baseline" not in m.dump()["speed"]


def test_not_served_metrics_from_the_stage(tmp_path):
    params = SimpleNamespace(variants={"gguf": SimpleNamespace(reason="no llama.cpp here")})
    made = not_served(params, "gguf", tmp_path)
    m = Metrics.load(tmp_path / "metrics.json")
    assert m.served is False and m.reason == made["reason"] == "not served here: no llama.cpp here"
    assert written(m.dump()) == (tmp_path / "metrics.json").read_text()


def test_comparison_round_trips_byte_identical(tmp_path):
    path = tmp_path / "comparison.json"
    write_json(path, comparison())
    c = Comparison.load(path)
    assert c.variants["w4"].utility.score == -1.5 and c.variants["w4"].custody.metrics_sha256 == SHA
    assert c.variants["gguf"].served is False
    assert written(c.dump()) == path.read_text()


def test_empty_calibration_card_round_trips(tmp_path):
    d = write_empty_set(tmp_path)
    card = CalibrationCard.load(d / "card.json")
    assert (card.name, card.samples, card.content_sha256) == ("none", 0, None)
    assert json.dumps(card.dump(), indent=2) + "\n" == (d / "card.json").read_text()
    assert list(card.dump())[0] == "schema"


def evalset(tmp_path: Path) -> Path:
    rec = {"id": "r1", "conversation_id": "c1", "timestamp": "2026-01-01T00:00:00Z", "scenario": "faq",
           "difficulty": "easy", "segment": None, "messages": [{"role": "user", "content": "Hi?"},
                                                               {"role": "assistant", "content": "Hello."}]}
    item = eval_item(rec, rec["messages"][:1], "Hello.", 12, [128, 256])
    d = tmp_path / "data" / "evalset"
    d.mkdir(parents=True)
    (d / "evalset.jsonl").write_text(jsonl_line(EvalItem.model_validate(item).line()), encoding="utf-8")
    assert (d / "evalset.jsonl").read_text() == jsonl_line(item)  # the line's bytes: unchanged
    card = EvalsetCard(content_sha256=file_sha256(d / "evalset.jsonl"), samples=1,
                       slices={"scenario=faq": 1}, length_buckets=[128, 256], tokenizer="models/demo")
    (d / "card.json").write_text(json.dumps(card.dump(), indent=2) + "\n")
    return d


def test_evalset_card_and_items_round_trip(tmp_path):
    d = evalset(tmp_path)
    card = EvalsetCard.load(d / "card.json")
    assert card.items == ITEM_SCHEMA and json.dumps(card.dump(), indent=2) + "\n" == (d / "card.json").read_text()
    loaded = load_evalset(d)
    assert [i.id for i in loaded.items] == ["r1"] and loaded.items[0].slices["segment"] == "unknown"


def test_a_limit_that_keeps_every_item_names_the_whole_set(tmp_path):
    # the teacher-forced passes and the gate calibration name the whole set by its digest alone: a
    # limit at or past the set's size must not make the evaluation's records name a prefix of it
    d = evalset(tmp_path)
    line = (d / "evalset.jsonl").read_text(encoding="utf-8")
    (d / "evalset.jsonl").write_text(line + line.replace('"r1"', '"r2"'), encoding="utf-8")
    card = json.loads((d / "card.json").read_text()) | {"content_sha256": file_sha256(d / "evalset.jsonl"),
                                                         "samples": 2}
    (d / "card.json").write_text(json.dumps(card))
    whole = card["content_sha256"]
    assert [load_evalset(d, limit=n).sha256 for n in (None, 2, 5)] == [whole] * 3
    part = load_evalset(d, limit=1)
    assert part.sha256 == f"{whole}[:1]" and [i.id for i in part.items] == ["r1"]


# ── old, foreign, incomplete files: one clear error, with the file and the fix ───────────────────


CASES = [  # (contract, a valid file's content, its path under tmp, the fix)
    (ArtifactManifest, None, "artifacts/w4/manifest.json", "dvc repro quantize@w4"),
    (Metrics, served_metrics(), "results/w4/metrics.json", "dvc repro evaluate@w4"),
    (Comparison, comparison(), "reports/comparison.json", "dvc repro compare"),
    (CalibrationCard, {"schema": CalibrationCard.SCHEMA, "name": "business", "samples": 1,
                       "content_sha256": SHA}, "data/calibration/business/card.json",
     "dvc repro calibration@business"),
    (EvalsetCard, {"schema": EvalsetCard.SCHEMA, "items": ITEM_SCHEMA, "content_sha256": SHA, "samples": 1},
     "data/evalset/card.json", "dvc repro split"),
]


@pytest.mark.parametrize("contract, good, rel, fix", CASES, ids=[c[0].__name__ for c in CASES])
@pytest.mark.parametrize("damage", ["old", "foreign", "missing_field", "wrong_type", "not_json"])
def test_a_bad_file_gives_the_clear_error(tmp_path, contract, good, rel, fix, damage):
    if good is None:
        _, good = artifact(tmp_path)
    path = tmp_path / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    data = dict(good)
    required = next(k for k, f in contract.model_fields.items() if f.is_required())
    if damage == "old":
        del data["schema"]
    elif damage == "foreign":
        data = {"schema": "someone.else/v3", "rows": [1, 2]}
    elif damage == "missing_field":
        del data[required]
    elif damage == "wrong_type":
        data[required] = {"not": "this"}
    path.write_text("{not json" if damage == "not_json" else json.dumps(data))
    with pytest.raises(ContractError) as err:
        contract.load(path)
    msg = str(err.value)
    assert isinstance(err.value, QpipeError) and str(path) in msg and fix in msg
    expected = {"old": f"no schema id (written by an older version, or not a qpipe file); expected "
                       f"{contract.SCHEMA!r}",
                "foreign": f"schema 'someone.else/v3'; expected {contract.SCHEMA!r}",
                "missing_field": f"{required}: Field required", "wrong_type": f"{required}",
                "not_json": "not valid JSON"}[damage]
    assert expected in msg


def test_a_missing_file_says_which_stage_writes_it(tmp_path):
    with pytest.raises(ContractError, match=r"metrics.json: missing — fix: .*dvc repro evaluate@w4"):
        Metrics.load(tmp_path / "results" / "w4" / "metrics.json")


def test_served_metrics_need_what_compare_pairs_on(tmp_path):
    data = served_metrics()
    del data["harness_version"]
    with pytest.raises(ContractError, match="need harness_version"):
        Metrics.read(data, tmp_path / "metrics.json")


def test_a_field_nested_deep_is_named_by_its_location(tmp_path):
    data = comparison()
    data["variants"]["w4"]["custody"]["metrics_sha256"] = 5
    with pytest.raises(ContractError, match=r"variants\.w4\.custody\.metrics_sha256"):
        Comparison.read(data, tmp_path / "comparison.json")


# ── consumers fail cleanly on a foreign file ───────────────────────────────────────────────────


def test_compare_refuses_a_foreign_metrics_file(tmp_path):
    d = tmp_path / "w4"
    d.mkdir()
    (d / "metrics.json").write_text(json.dumps({"accuracy": 0.9, "rows": []}))  # no schema, no engine
    (d / "samples.jsonl").write_text("")
    with pytest.raises(ContractError, match=r"metrics.json: no schema id.*dvc repro evaluate@w4"):
        load_results(tmp_path, "w4")


def test_the_harness_refuses_an_old_evalset_card(tmp_path):
    d = evalset(tmp_path)
    card = json.loads((d / "card.json").read_text())
    del card["schema"]  # as the split wrote it before the card had a schema id
    (d / "card.json").write_text(json.dumps(card))
    with pytest.raises(ContractError, match=r"card.json: no schema id.*dvc repro split"):
        load_evalset(d)


def test_the_harness_refuses_a_foreign_evaluation_line(tmp_path):
    d = evalset(tmp_path)
    (d / "evalset.jsonl").write_text('{"question": "?", "answer": "!"}\n')
    card = json.loads((d / "card.json").read_text()) | {"content_sha256": file_sha256(d / "evalset.jsonl")}
    (d / "card.json").write_text(json.dumps(card))
    with pytest.raises(ContractError, match=r"evalset.jsonl:1: not a qpipe.eval-item/v1 record.*id: Field "
                                            r"required.*dvc repro split"):
        load_evalset(d)


def test_the_quantize_stage_cannot_write_a_manifest_its_readers_would_refuse(tmp_path):
    (tmp_path / "w.bin").write_bytes(b"x")
    with pytest.raises(ContractError, match="base_model: Field required"):
        build_manifest(tmp_path, lineage={"variant": "w4", "scheme": "s", "format": "f", "backend": "b"},
                       contract=ArtifactManifest)
    assert not (tmp_path / "manifest.json").exists()


def test_the_contract_map_reads_a_bad_record_line_as_an_error_naming_it(tmp_path):
    from pipeline.contract_map import contract_files
    from pipeline.contracts import ContractError
    from pipeline.layout import Layout

    params = SimpleNamespace(quantize=SimpleNamespace(out_dir=Path("artifacts"), runs_dir=Path("runs/quantize")),
                             split=SimpleNamespace(out_dir=Path("data")),
                             evaluate=SimpleNamespace(out_dir=Path("results"), evalset=Path("data/evalset")),
                             bench=SimpleNamespace(out_dir=Path("results/bench")),
                             compare=SimpleNamespace(out_dir=Path("reports")),
                             handoff=SimpleNamespace(out_dir=Path("handoff")),
                             serving=SimpleNamespace(out_dir=Path("reports/upgrades")),
                             search=SimpleNamespace(out_dir=Path("reports/search")),
                             model=SimpleNamespace(path=Path("models/demo")))
    good = {"id": "a", "slices": {"scenario": "faq"}, "score": 1.0}
    (tmp_path / "results" / "v").mkdir(parents=True)
    (tmp_path / "results" / "v" / "samples.jsonl").write_text(json.dumps(good) + "\n" + json.dumps({"id": "b"}) + "\n")
    found = dict(contract_files(Layout(tmp_path, params)))
    reader = found[tmp_path / "results" / "v" / "samples.jsonl"]
    with pytest.raises(ContractError, match=r"samples.jsonl:2: not a SampleRecord line: .*score"):
        reader(tmp_path / "results" / "v" / "samples.jsonl")
    (tmp_path / "results" / "v" / "samples.jsonl").write_text(json.dumps(good) + "\n")
    assert [r.score for r in reader(tmp_path / "results" / "v" / "samples.jsonl")] == [1.0]
