"""benchmarks/gate_validity.py plants losses into a baseline's real records; a loss the baseline
has too few right answers to lose cannot be planted, and its margin row must say so."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

SPEC = importlib.util.spec_from_file_location(
    "gate_validity", Path(__file__).resolve().parents[2] / "benchmarks" / "gate_validity.py")
gv = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(gv)


def records(n_tool: int = 60, n_faq: int = 340, faq_right: float = 0.15) -> list[dict]:
    """A weak model's records: nothing right on tool_call, 15% right on faq."""
    right = round(faq_right * n_faq)
    rows = [("tool_call", 0.0)] * n_tool + [("faq", float(i < right)) for i in range(n_faq)]
    return [{"id": f"p-{i}", "conversation_id": f"c-{i}", "output": f"answer {i}", "score": score,
             "slices": {"scenario": scenario}, "json_valid": None, "output_tokens": 8, "prompt_tokens": 40,
             "rubric": "key_facts", "reason": "", "finish_reason": "stop", "repetition": False,
             "latency": 0.1, "ttft": 0.01} for i, (scenario, score) in enumerate(rows)]


def test_a_loss_larger_than_the_scopes_accuracy_is_not_plantable():
    recs = records()
    assert not gv.plantable(recs, {"extra_loss": 0.10, "in_slice": "scenario=tool_call"})
    assert gv.plantable(recs, {"extra_loss": 0.10, "in_slice": "scenario=faq"})
    assert gv.plantable(recs, {"extra_loss": 0.03})           # 12.75% overall
    assert not gv.plantable(recs, {"extra_loss": 0.20})
    assert gv.scope_accuracy(recs, "scenario=tool_call") == (0.0, 60)


def test_the_simulation_plants_the_asked_loss_where_plantable_and_less_where_not():
    recs = records()
    base = np.array([r["score"] for r in recs])
    tool = np.array([r["slices"]["scenario"] == "tool_call" for r in recs])
    faq = ~tool
    rng = np.random.default_rng(7)
    faq_loss, tool_loss = [], []
    for _ in range(300):
        new = gv.simulate(recs, rng, discordance=0.0, extra_loss=0.10, in_slice="scenario=faq")
        faq_loss.append(base[faq].mean() - new[faq].mean())
        new = gv.simulate(recs, rng, discordance=0.0, extra_loss=0.10, in_slice="scenario=tool_call")
        tool_loss.append(base[tool].mean() - new[tool].mean())
    assert abs(np.mean(faq_loss) - 0.10) < 0.005          # the planted loss, in expectation
    assert max(tool_loss) == 0.0                          # nothing to lose: a null, not a margin


def test_a_margin_row_reports_whether_its_loss_could_be_planted(tmp_path):
    params = Path(__file__).resolve().parents[2] / "params.yaml"
    sc = {"name": "at the slice margin", "discordance": 0.0, "extra_loss": 0.10,
          "in_slice": "scenario=tool_call", "margin_of": "general_saas",
          "criterion": "slice:scenario=tool_call"}
    row = gv.run_scenario((sc, np.random.SeedSequence(1), records(), str(params), 3,
                           ["scenario=tool_call"], None))
    assert row["plantable"] is False and row["scope_accuracy"] == 0.0 and row["scope_n"] == 60
    sc = {**sc, "in_slice": "scenario=faq", "criterion": "slice:scenario=faq"}
    row = gv.run_scenario((sc, np.random.SeedSequence(1), records(), str(params), 3,
                           ["scenario=faq"], None))
    assert row["plantable"] is True and row["scope_accuracy"] == 0.15
