"""The verdicts on a real public checkpoint (SmolLM2-135M-Instruct), not the demo model: far less
robust to quantization (a Q8_0's token KL ~1e-3 where the demo's is ~4e-6), so a limit tuned on the
demo would fail its good variants. With the default profile and no gate calibration:

- Q8_0 passes on business accuracy against llama.cpp's own F16 (the engine held fixed), whatever
  its KL — the KL is reported as a diagnostic, never failed against a constant;
- a damaged Q2_K fails: its answers are far shorter than the reference's (MLPerf's output-length
  rule, which the default profile judges), whatever its accuracy on items the model mostly fails;
- a variant planted on the real records (the reference's, 5% of items turned wrong) fails.
"""

import json
import random

import pytest

from pipeline.compare import deltas, gates
from pipeline.evaluate import divergence

# The first test builds the project: three quantizations and evaluations of a real model.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(2400)]


def records(project, variant: str) -> list[dict]:
    project.evaluated(variant)
    path = project.root / "results" / variant / "samples.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines() if x]


def judged(project, variant: str, recs: list[dict] | None = None) -> dict:
    ref_m, ref_r = project.evaluated("gguf_f16"), records(project, "gguf_f16")
    m = project.evaluated(variant)
    v = deltas.compare_variant(ref_m, ref_r, m, recs or records(project, variant), project.params.compare,
                               reference="gguf_f16")
    v["divergence"] = divergence.load(project.root / "results", variant)
    return v | {"gate": gates.evaluate_gates(v, None, project.params.gates, alpha=0.05)}


def test_q8_0_passes_on_business_accuracy_and_agreement_is_a_diagnostic(real_project):
    v = judged(real_project, "gguf_q8_0_business")
    crit = {c["criterion"]: c for c in v["gate"]["criteria"]}
    assert crit["accuracy_overall"]["verdict"] == "pass", crit["accuracy_overall"]["message"]
    assert crit["gain"]["verdict"] == "pass"  # ×1.9 smaller than the F16 it is judged against
    # nothing fails; a small critical slice may still need more items, and says how many
    assert v["gate"]["failed"] == [], [c["message"] for c in v["gate"]["failed"]]
    assert all(c.get("items_needed") for c in v["gate"]["inconclusive"] if c["criterion"].startswith("slice:"))
    assert "kld" not in crit and "task_agreement" not in crit  # reported, not gated, uncalibrated
    na = {x["criterion"]: x for x in v["gate"]["not_applicable"]}
    assert "no gate calibration" in na["task_agreement"]["why"]


def test_a_damaged_q2_k_fails_on_its_far_shorter_answers(real_project):
    # This model answers ~13% of the demo's business items right (it does not know the fictional
    # company), so a 2-bit variant cannot lose many accuracy points here, and its KL sits inside
    # the wide interval of this model's derived limit (benchmarks/RESULTS.md). What it does lose
    # is its answers: far shorter ones, outside MLPerf's 90–110% output-length band, which the
    # default profile judges — and results changed both ways, reported.
    v = judged(real_project, "gguf_q2_k_business")
    assert v["gate"]["verdict"] == "fail", [c["message"] for c in v["gate"]["criteria"]]
    assert [c["criterion"] for c in v["gate"]["failed"]] == ["output_length"]
    length = v["output_length"]["overall"]
    assert length["ci"][1] < 0.9 and not length["within_band"], length
    f = v["flips"]["overall"]
    assert f["correct_to_incorrect"] > 0 and f["incorrect_to_correct"] >= 0


def test_a_variant_planted_to_lose_five_business_points_fails(real_project):
    # the reference's own records with 5% of the items turned from right to wrong (as
    # benchmarks/gate_validity.py plants a regression): a loss the margin (3 points) must catch
    base = records(real_project, "gguf_f16")
    planted = [dict(r) for r in base]
    right = [i for i, r in enumerate(planted) if r["score"] >= 1.0]
    lose = round(0.05 * len(planted))
    assert len(right) >= lose, "the real model answers too few items right to plant a 5-point loss"
    for i in random.Random(0).sample(right, lose):
        planted[i] = {**planted[i], "score": 0.0, "output": planted[i]["output"] + " [planted]"}
    v = judged(real_project, "gguf_f16", planted)
    assert v["accuracy"]["delta"] == pytest.approx(-0.05) and v["flips"]["overall"]["correct_to_incorrect"] == lose
    assert v["gate"]["verdict"] == "fail"
    assert "accuracy_overall" in [c["criterion"] for c in v["gate"]["failed"]]
