"""`qpipe search`'s parts that need no engine: proposals into params.yaml as ordinary variants
(comments kept), their entries, the rejection reasons, the uniform comparison and the proxy's rank
correlation. The whole search, on a real project, is in tests/test_dvc_pipeline.py (slow)."""

from types import SimpleNamespace

import pytest
import yaml

from pipeline.orchestrate.certify import (SearchError, add_variants, outcome, render, spearman, summarize,
                                          uniform_passing, variant_spec)

PARAMS = """# the project's params
variants:
  baseline:               # the reference
    backend: none
    scheme: bf16
    recipe: recipes/baseline.yaml
    calibration: none
    reference: none
engines:
  formats: {gguf: llamacpp}
"""


def candidate(label="mix_4_5", bits=4.46, kl=0.003, **kw):
    return {"label": label, "budget_bits": 4.5, "bits_per_weight": bits, "predicted_kl": kl,
            "formats": {"BF16": 0, "W4A16": 21, "W8A16": 3},
            "recipes": {"gguf": f"candidates/{label}/gguf.yaml",
                        "llmcompressor": f"candidates/{label}/llmcompressor.yaml"}, "notes": [], **kw}


def fake_params(engine_baselines=None):
    return SimpleNamespace(search=SimpleNamespace(out_dir="reports/search", calibration="business"),
                           compare=SimpleNamespace(engine_baselines=engine_baselines or {}),
                           baseline="baseline")


def test_proposals_join_params_as_variants_and_the_comments_stay(tmp_path):
    path = tmp_path / "params.yaml"
    path.write_text(PARAMS)
    spec = {"backend": "llamacpp", "scheme": "gguf_q4_k_m", "recipe": "reports/search/candidates/mix_4_5/gguf.yaml",
            "calibration": "business", "reference": "gguf_f16"}
    assert add_variants(path, {"search_mix_4_5_gguf": spec}) == ["search_mix_4_5_gguf"]
    text = path.read_text()
    assert "# the project's params" in text and "# the reference" in text and "qpipe search" in text
    assert yaml.safe_load(text)["variants"]["search_mix_4_5_gguf"] == spec
    assert list(yaml.safe_load(text)["variants"]) == ["baseline", "search_mix_4_5_gguf"]
    assert add_variants(path, {"search_mix_4_5_gguf": spec}) == []  # again: nothing added
    assert path.read_text() == text
    with pytest.raises(SearchError, match="exists with another entry"):
        add_variants(path, {"search_mix_4_5_gguf": {**spec, "calibration": "general"}})
    assert path.read_text() == text  # refused: untouched


def test_a_proposals_entry_names_its_backend_scheme_recipe_and_engine_reference(tmp_path):
    recipe = tmp_path / "reports/search/candidates/mix_4_5/gguf.yaml"
    recipe.parent.mkdir(parents=True)
    recipe.write_text("preset: Q4_K_M\ntensor_types: ['blk\\\\.0\\\\.ffn_down\\\\.weight=q8_0']\n")
    p = fake_params({"llamacpp": "gguf_f16"})
    assert variant_spec(p, tmp_path, candidate(), "gguf") == {
        "backend": "llamacpp", "scheme": "gguf_q4_k_m", "recipe": "recipes/search/search_mix_4_5_gguf.yaml",
        "calibration": "business", "reference": "gguf_f16"}
    copied, judged_with = tmp_path / "recipes/search/search_mix_4_5_gguf.yaml", recipe.read_text()
    assert copied.read_text() == judged_with
    variant_spec(p, tmp_path, candidate(), "gguf")  # the same recipe again: fine
    recipe.write_text("preset: Q4_K_M\ntensor_types: ['blk\\.1\\.ffn_down\\.weight=q8_0']\n")
    with pytest.raises(SearchError, match="holds another recipe"):  # re-measured: never replaced
        variant_spec(p, tmp_path, candidate(), "gguf")
    assert copied.read_text() == judged_with
    (recipe.parent / "llmcompressor.yaml").write_text(
        "quant_stage:\n  quant_modifiers:\n    GPTQModifier:\n      config_groups: {}\n")
    spec = variant_spec(p, tmp_path, candidate(), "llmcompressor")
    assert spec["scheme"] == "w4a16_gptq" and spec["reference"] == "baseline"  # no vLLM engine baseline
    with pytest.raises(SearchError, match="no gguf recipe: too many parts"):
        variant_spec(p, tmp_path, candidate(recipes={"gguf": None}, notes=["too many parts"]), "gguf")
    with pytest.raises(SearchError, match="--tool"):
        variant_spec(p, tmp_path, candidate(), "mlx")


def test_spearman_needs_three_points_and_two_values_on_each_side():
    assert spearman([1, 2], [1, 2]) is None
    assert spearman([1, 2, 3], [5, 5, 5]) is None
    assert spearman([1, 2, 3, 4], [10, 20, 30, 40]) == 1.0
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == -1.0


def judged(verdict, size, kl, delta, why=()):
    crit = [{"criterion": c, "verdict": verdict, "items_needed": 499} for c in why]
    return {"served": True, "size_bytes": size, "divergence": {"overall": {"kld_mean": kl}},
            "accuracy": {"delta": delta, "ci_low": delta - 0.01, "ci_high": delta + 0.01},
            "gate": {"verdict": verdict, "failed": crit if verdict == "fail" else [],
                     "inconclusive": crit if verdict == "inconclusive" else []}}


def test_the_cheapest_passing_proposal_is_certified_and_each_cheaper_one_says_why_not():
    c1, c2, c3 = candidate("mix_4_5", 4.46, 0.003), candidate("mix_5", 4.96, 0.0012), candidate("mix_6", 5.96, 3e-4)
    tried = [outcome("search_mix_4_5_gguf", c1, judged("inconclusive", 4.5e6, 1e-3, -0.004,
                                                       ["slice:scenario=tool_call"])),
             outcome("search_mix_5_gguf", c2, judged("pass", 4.8e6, 9e-4, -0.001))]
    assert tried[0]["why_not"] == ["slice:scenario=tool_call: inconclusive (about 499 items needed)"]
    assert tried[1]["why_not"] == []
    uniform = {"variant": "gguf_q8_0_business", "size_bytes": 7.4e6}
    s = summarize("gguf", tried, [c3], uniform, "general_saas")
    assert s["certified"] == "search_mix_5_gguf" and s["smaller_than_uniform"] is True
    assert s["not_tried"] == [{"label": "mix_6", "bits_per_weight": 5.96, "why": "a cheaper proposal passed first"}]
    assert s["proxy_rank_correlation"]["points"] == 2 and s["proxy_rank_correlation"]["measured_kl"] is None
    s["uniform"] = {"gguf_q8_0_business": {"size_bytes": 7.4e6, "verdict": "pass", "measured_kl": 1e-5,
                                           "accuracy_delta": 0.001}}
    md = render(s)
    assert "**Certified:** `search_mix_5_gguf`" in md and "gguf_q8_0_business" in md
    assert "| `gguf_q8_0_business` (uniform) | | | 7.40 MB | 1.00e-05 | +0.0010 | pass | |" in md
    assert "about 499 items needed" in md and "not tried" in md
    none = summarize("gguf", tried[:1], [], None, "general_saas")
    assert none["certified"] is None and "smaller_than_uniform" not in none
    assert "No proposal passed" in render(none)


def test_the_uniform_yardstick_is_the_smallest_of_the_backends_uniform_variants_that_passed():
    comparison = {"variants": {
        "gguf_q8_0": {"served": True, "size_bytes": 7e6, "gate": {"passed": True}},
        "gguf_q4_k_m": {"served": True, "size_bytes": 4e6, "gate": {"passed": False}},
        "gguf_q6_k": {"served": True, "size_bytes": 5.5e6, "gate": {"passed": True}},
        "gguf_q3_k_m": {"served": False, "size_bytes": 3e6},
        "w8a8": {"served": True, "size_bytes": 3e6, "gate": {"passed": True}}}}
    uniform = ["gguf_q8_0", "gguf_q4_k_m", "gguf_q6_k", "gguf_q3_k_m"]
    assert uniform_passing(comparison, uniform) == {"variant": "gguf_q6_k", "size_bytes": 5.5e6}
    assert uniform_passing(comparison, ["gguf_q4_k_m", "gguf_q3_k_m"]) is None
    assert uniform_passing({"variants": {}}, uniform) is None


def test_with_every_proposal_tried_the_cheapest_that_passed_is_certified_and_the_proxy_ranked():
    cands = [candidate(f"mix_{b}", b, kl) for b, kl in ((4.5, 3e-3), (5.0, 1.2e-3), (6.0, 2.5e-4), (7.0, 8e-5))]
    verdicts = ["inconclusive", "pass", "pass", "pass"]
    served = [1.9e-4, 1.0e-4, 4e-5, 1e-5]  # in the proxy's order
    tried = [outcome(f"search_{c['label']}_gguf", c, judged(v, 5e6 + i * 5e5, kl, -0.001 * (4 - i), ["x"]))
             for i, (c, v, kl) in enumerate(zip(cands, verdicts, served))]
    s = summarize("gguf", tried, [], {"variant": "gguf_q8_0_business", "size_bytes": 7.4e6}, "general_saas")
    assert s["certified"] == "search_mix_5.0_gguf" and s["smaller_than_uniform"] is True
    assert s["proxy_rank_correlation"] == {"measured_kl": 1.0, "accuracy_drop": 1.0, "points": 4}


def test_a_proposal_that_cannot_be_built_or_served_is_rejected_withdrawn_and_the_next_one_tried(
        tmp_path, monkeypatch):
    """One stage of a proposal fails (an engine that cannot serve its formats, say): the search
    records the failure as that proposal's reason, takes it out of params.yaml with what it left
    behind, and certifies the next one; the uniform yardstick is brought up to date once."""
    import shutil

    from pipeline.compare import stage as compare_stage
    from pipeline.contracts import SensitivityReport
    from pipeline.orchestrate import certify, repro as repro_mod
    from conftest import REPO

    shutil.copy2(REPO / "params.yaml", tmp_path / "params.yaml")
    before = (tmp_path / "params.yaml").read_text()
    cands = [candidate("mix_4_5", 4.46, 3e-3), candidate("mix_5", 4.96, 1.2e-3)]
    for c in cands:
        d = tmp_path / "reports/search/candidates" / c["label"]
        d.mkdir(parents=True)
        (d / "gguf.yaml").write_text("preset: Q4_K_M\ntensor_types: ['blk\\\\.0\\\\.ffn_down\\\\.weight=q8_0']\n")
    monkeypatch.setattr(SensitivityReport, "load", classmethod(
        lambda cls, path: SimpleNamespace(dump=lambda: {"candidates": cands})))
    calls = []

    def fake_repro(root, targets, **kw):
        assert targets, "no targets: a repro of the whole pipeline"
        calls.append(list(targets))
        if "evaluate@search_mix_4_5_gguf" in targets:
            (root / "artifacts/search_mix_4_5_gguf").mkdir(parents=True)  # what its quantize left
            raise repro_mod.ReproError("failed to reproduce 'evaluate@search_mix_4_5_gguf': its command exited "
                                       "with code 1 (log: logs/x.log) — not run because of it: divergence@x")
        return []

    def fake_compare(params, layout, variants):
        assert "search_mix_4_5_gguf" not in variants  # a failed proposal is judged by nobody
        return {"variants": {n: judged("pass", 5e6, 1e-4, -0.001) for n in variants}}

    monkeypatch.setattr(repro_mod, "repro", fake_repro)
    monkeypatch.setattr(compare_stage, "run", fake_compare)
    s = certify.run(tmp_path / "params.yaml", tool="gguf", max_candidates=2, say=lambda m: None)
    assert [t["verdict"] for t in s["tried"]] == ["failed", "pass"]
    assert s["tried"][0]["why_not"] == ["failed to reproduce 'evaluate@search_mix_4_5_gguf': its command "
                                        "exited with code 1 (log: logs/x.log)"]
    assert s["certified"] == "search_mix_5_gguf"
    assert calls[0] == ["sensitivity"]
    assert calls[1] and all(t.split("@")[1].startswith("gguf_") for t in calls[1])  # the yardstick, once
    assert calls[2:] == [["evaluate@search_mix_4_5_gguf", "divergence@search_mix_4_5_gguf"],
                         ["evaluate@search_mix_5_gguf", "divergence@search_mix_5_gguf"]]
    variants = yaml.safe_load((tmp_path / "params.yaml").read_text())["variants"]
    assert "search_mix_4_5_gguf" not in variants and "search_mix_5_gguf" in variants
    assert not (tmp_path / "artifacts/search_mix_4_5_gguf").exists()
    assert not (tmp_path / "recipes/search/search_mix_4_5_gguf.yaml").exists()
    assert (tmp_path / "recipes/search/search_mix_5_gguf.yaml").is_file()
    # the rest of params.yaml as it was: comments and order
    after = (tmp_path / "params.yaml").read_text().splitlines()
    start = next(i for i, line in enumerate(after) if line.startswith("  search_mix_5_gguf:"))
    end = next(i for i in range(start + 1, len(after)) if not after[i].startswith("    "))
    assert after[:start] + after[end:] == before.splitlines()
    assert "search" in (tmp_path / "reports/certify/search.md").read_text()
    # without uniform variants of the backend there is no yardstick to bring up to date (and no
    # empty repro, which would be the whole pipeline)
    data = yaml.safe_load((tmp_path / "params.yaml").read_text())
    for n in [n for n, v in data["variants"].items() if v["backend"] == "llamacpp" and n != "gguf_f16"]:
        del data["variants"][n]
    upgrades = data["serving"]["upgrades"]
    data["serving"]["upgrades"] = {k: u for k, u in upgrades.items() if u["artifact"] in data["variants"]}
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    calls.clear()
    s = certify.run(tmp_path / "params.yaml", tool="gguf", max_candidates=1, say=lambda m: None)
    assert calls == [["sensitivity"], ["evaluate@search_mix_4_5_gguf", "divergence@search_mix_4_5_gguf"]]
    assert s["uniform"] == {} and s["smallest_uniform_passing"] is None
