"""The report's distribution-level section shows the engine's own figures beside the exact ones."""

from pipeline.compare.markdown import _divergence


def test_engine_figures_are_shown_with_their_approximation():
    exact = {"measured": True, "overall": {"kld_mean": 0.0013, "kld_p99": 0.0056, "top1_agreement": 0.997,
                                           "ref_loglik_delta": -0.0009, "ref_loglik_delta_ci": [-0.002, -0.0002]},
             "slices": {"scenario=rag": {"kld_mean": 0.002}}}
    engine = {"measured": True, "engine": "vllm 0.32.0",
              "overall": {"top_k": 20, "kld_mean": 0.0021, "kld_p99": 0.01, "top1_agreement": 0.995,
                          "baseline_tail_mass": 0.0004}}
    comparison = {"variants": {"w8a8": {"divergence": {**exact, "engine": engine}},
                               "gptq": {"divergence": exact}}}
    text = "\n".join(_divergence(comparison))
    assert "| w8a8 | vllm 0.32.0 | 20 | 0.00210 |" in text and "top-k" in text
    assert "| gptq | vllm" not in text  # no engine figures: no engine row
    del comparison["variants"]["w8a8"]["divergence"]["engine"]
    assert "serving engine" not in "\n".join(_divergence(comparison))
