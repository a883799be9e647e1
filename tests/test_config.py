import copy
from pathlib import Path

import pytest
import yaml

from demo.matrix import full_params
from pipeline.config import (
    backend_schemes,
    SCHEMES,
    ConfigError,
    Params,
    Problem,
    check_params,
    load_params,
    render_problems,
)

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def repo_params() -> dict:
    return full_params(REPO)


@pytest.fixture
def params(repo_params) -> dict:
    return copy.deepcopy(repo_params)


def write(tmp_path: Path, data: dict) -> Path:
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def line_of(path: Path, text: str, after: str | None = None) -> int:
    """1-based line of the first line containing ``text`` (after the line with ``after``)."""
    lines = path.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if after in line) if after else 0
    return next(i + 1 for i, line in enumerate(lines) if i >= start and text in line)


def problems_at(path: Path, key: str) -> list[Problem]:
    _, _, problems = check_params(path)
    return [p for p in problems if p.key == key]


def one_problem(path: Path) -> Problem:
    _, _, problems = check_params(path)
    assert len(problems) == 1, render_problems(problems)
    return problems[0]


def test_repository_params_load(repo_params):
    """params.yaml (the default matrix) and the full matrix it grows into both validate."""
    params = load_params(REPO / "params.yaml")
    assert set(params.variants) < set(repo_params["variants"])  # the full matrix adds to it
    assert params.baseline == "baseline"
    assert params.variants["w8a8_int8_business"].needs_calibration
    full = Params.model_validate(repo_params)
    assert full.variants["gptq_w4a16_business"].needs_calibration
    assert not full.variants["fp8_dynamic"].needs_calibration
    assert params.calibration.sets["general"].overlength == "truncate"
    assert str(params.model.path) == "models/demo"


def test_tables_cover_the_known_schemes_and_backends():
    MLX = {"mlx_q4", "mlx_q8", "mlx_mxfp4", "mlx_nvfp4", "mlx_mxfp8"}
    gguf = {f"gguf_{p}" for p in "q2_k q3_k_m q4_0 q4_k_m q5_k_m q6_k q8_0 f16".split()}
    assert set(SCHEMES) == {"bf16", "fp16", "w4a16_gptq", "w4a16_awq", "w8a8_int8",
                            "fp8_dynamic", "fp8", "nvfp4"} | gguf | MLX
    assert backend_schemes()["llamacpp"] == gguf
    assert backend_schemes()["mlx"] == MLX and not any(SCHEMES.get(s).needs_calibration for s in MLX)
    assert backend_schemes()["modelopt"] == {"fp8", "nvfp4", "w4a16_awq"}
    assert not SCHEMES.get("gguf_f16").needs_calibration
    assert SCHEMES.get("gguf_q8_0").needs_calibration


def test_typo_key_in_variant_suggests_the_allowed_key(tmp_path, params):
    params["variants"]["awq_w4a16_business"]["calibraton"] = "business"
    path = write(tmp_path, params)
    [problem] = problems_at(path, "variants.awq_w4a16_business.calibraton")
    assert problem.message == "unknown key 'calibraton'"
    assert problem.fix.startswith("did you mean 'calibration'? Allowed keys: backend, scheme")
    assert problem.line == line_of(path, "calibraton:")


def test_typo_top_level_section_suggests_the_section(tmp_path, params):
    params["calibraton"] = params.pop("calibration")
    for variant in params["variants"].values():
        variant.pop("calibration", None)  # keep this test about the one key
    _, _, problems = check_params(write(tmp_path, params))
    [problem] = [p for p in problems if p.key == "calibraton"]
    assert problem.message == "unknown key 'calibraton'"
    assert "did you mean 'calibration'?" in problem.fix


def test_unknown_scheme(tmp_path, params):
    params["variants"]["gptq_w4a16_business"]["scheme"] = "w4a16_gtpq"
    path = write(tmp_path, params)
    problem = one_problem(path)
    assert problem.key == "variants.gptq_w4a16_business.scheme"
    assert problem.message == "unknown scheme 'w4a16_gtpq'"
    assert problem.fix.startswith("did you mean 'w4a16_gptq'? Known: bf16, fp16,")
    assert problem.line == line_of(path, "w4a16_gtpq")
    assert str(problem) == (
        f"{path}:{problem.line}: variants.gptq_w4a16_business.scheme: unknown scheme "
        f"'w4a16_gtpq' — fix: {problem.fix}"
    )


def test_unknown_backend(tmp_path, params):
    params["variants"]["fp8_dynamic"]["backend"] = "llmcompresor"
    problem = one_problem(write(tmp_path, params))
    assert problem.key == "variants.fp8_dynamic.backend"
    assert problem.message == "unknown backend 'llmcompresor'"
    assert "did you mean 'llmcompressor'?" in problem.fix


def test_backend_that_does_not_do_the_scheme(tmp_path, params):
    params["variants"]["nvfp4_business"]["backend"] = "gptqmodel"
    problem = one_problem(write(tmp_path, params))
    assert problem.key == "variants.nvfp4_business.backend"
    assert problem.message == "backend 'gptqmodel' does not do scheme 'nvfp4'"
    assert problem.fix == "scheme 'nvfp4' is done by backend llmcompressor or modelopt"


def test_baseline_needs_backend_none(tmp_path, params):
    params["variants"]["baseline"]["backend"] = "llmcompressor"
    problem = one_problem(write(tmp_path, params))
    assert problem.key == "variants.baseline.backend"
    assert "unquantized baseline and needs backend none" in problem.fix


def test_missing_calibration_for_a_scheme_that_needs_it(tmp_path, params):
    del params["variants"]["awq_w4a16_business"]["calibration"]
    problem = one_problem(write(tmp_path, params))
    assert problem.key == "variants.awq_w4a16_business.calibration"
    assert problem.message == "scheme 'w4a16_awq' needs a calibration set"
    assert "calibration.sets" in problem.fix


def test_gguf_imatrix_needs_calibration_but_f16_does_not(tmp_path, params):
    del params["variants"]["gguf_q4_k_m_business"]["calibration"]
    assert one_problem(write(tmp_path, params)).key == (
        "variants.gguf_q4_k_m_business.calibration")
    params["variants"]["gguf_q4_k_m_business"]["scheme"] = "gguf_f16"
    params["variants"]["gguf_q4_k_m_business"]["calibration"] = "none"  # the empty set
    assert check_params(write(tmp_path, params))[2] == []


def test_calibration_naming_an_unknown_set(tmp_path, params):
    params["variants"]["w8a8_int8_business"]["calibration"] = "busines"
    problem = one_problem(write(tmp_path, params))
    assert problem.key == "variants.w8a8_int8_business.calibration"
    assert problem.message == "calibration set 'busines' is not defined in calibration.sets"
    assert problem.fix == "did you mean 'business'? Defined: business, general"


def test_calibration_on_a_scheme_that_uses_none(tmp_path, params):
    params["variants"]["fp8_dynamic"]["calibration"] = "business"
    problem = one_problem(write(tmp_path, params))
    assert problem.key == "variants.fp8_dynamic.calibration"
    assert "uses no calibration data" in problem.message


def test_every_variant_names_a_recipe(tmp_path, params):
    del params["variants"]["fp8_dynamic"]["recipe"]
    problem = one_problem(write(tmp_path, params))
    assert problem.key == "variants.fp8_dynamic.recipe"
    assert problem.message == "variant has no recipe (backend 'llmcompressor')"
    assert "llm-compressor recipe" in problem.fix


def test_calibration_none_only_for_schemes_without_data(tmp_path, params):
    params["variants"]["gptq_w4a16_business"]["calibration"] = "none"
    problem = one_problem(write(tmp_path, params))
    assert problem.key == "variants.gptq_w4a16_business.calibration"
    assert "needs a calibration set" in problem.message
    del params["variants"]["gptq_w4a16_business"]
    del params["variants"]["fp8_dynamic"]["calibration"]
    problem = one_problem(write(tmp_path, params))
    assert "calibration: none" in problem.fix


@pytest.mark.parametrize("variant,reference,key,message", [
    ("gptq_w4a16_business", None, "variants.gptq_w4a16_business.reference", "names no reference"),
    ("baseline", "gguf_f16", "variants.baseline.reference", "is the baseline, judged against nothing"),
    ("gptq_w4a16_business", "none", "variants.gptq_w4a16_business.reference", "must be judged against another"),
    ("gptq_w4a16_business", "gptq_w4a16_business", "variants.gptq_w4a16_business.reference",
     "must be judged against another"),
    ("gguf_q8_0_business", "gguf_q2_k_business", "variants.gguf_q8_0_business.reference", "is quantized (gguf_q2_k)"),
    ("gguf_q8_0_business", "gguf_f1", "variants.gguf_q8_0_business.reference", "'gguf_f1' is not defined"),
])
def test_every_variant_names_an_unquantized_reference(tmp_path, params, variant, reference, key, message):
    """dvc.yaml runs a variant's evaluation after its reference's (a sequential evaluation stops
    against those records): the baseline's is `none`, every other names an unquantized variant."""
    if reference is None:
        del params["variants"][variant]["reference"]
    else:
        params["variants"][variant]["reference"] = reference
    problem = one_problem(write(tmp_path, params))
    assert problem.key == key and message in problem.message, render_problems([problem])


def test_engine_none_needs_a_reason(tmp_path, params):
    params["variants"]["nvfp4_business"]["engine"] = "none"
    params["variants"]["nvfp4_business"].pop("reason", None)
    problem = one_problem(write(tmp_path, params))
    assert problem.key == "variants.nvfp4_business.reason"
    assert problem.message == "engine 'none' needs a reason"
    params["variants"]["nvfp4_business"]["reason"] = "no Blackwell GPU in CI"
    assert check_params(write(tmp_path, params))[2] == []


def test_engine_openai_needs_a_url(tmp_path, params):
    params["variants"]["fp8_dynamic"]["engine"] = "openai"
    problem = one_problem(write(tmp_path, params))
    assert problem.key == "variants.fp8_dynamic.url"
    assert problem.message == "engine 'openai' needs a url"
    params["variants"]["fp8_dynamic"]["url"] = "http://gpu-7:8000/v1"
    params["variants"]["fp8_dynamic"]["options"] = {"pipeline": "basic"}
    loaded, _, problems = check_params(write(tmp_path, params))
    assert problems == [] and loaded.variants["fp8_dynamic"].url == "http://gpu-7:8000/v1"


def test_transformers_reference_for_a_quantized_variant_needs_a_reason(tmp_path, params):
    params["variants"]["fp8_dynamic"].pop("reason", None)
    problem = one_problem(write(tmp_path, params))
    assert problem.key == "variants.fp8_dynamic.reason"
    assert "reference" in problem.message


def test_engine_comes_from_the_format_table_unless_the_variant_names_one(tmp_path, params):
    params["serving"]["upgrades"].pop("vllm_release")  # it serves w8a8 with vLLM, moved to openai here
    params["variants"]["gptq_w4a16_business"].pop("engine", None)
    params["variants"]["gguf_q8_0_business"].pop("engine", None)
    params.setdefault("engines", {})["formats"] = {"hf": "vllm", "compressed-tensors": "openai",
                                                   "gguf": "llamacpp", "gptq": "vllm", "awq": "vllm"}
    loaded, _, problems = check_params(write(tmp_path, params))
    assert problems == []
    assert loaded.engine_for("gptq_w4a16_business") == "openai"
    assert loaded.engine_for("gguf_q8_0_business") == "llamacpp"
    assert loaded.engine_for("fp8_dynamic") == "transformers"  # its own `engine:` wins
    params["engines"]["formats"] = {"hf": "vllm", "gguf": "llamacpp", "gptq": "vllm", "awq": "vllm"}
    problem = next(p for p in check_params(write(tmp_path, params))[2]
                   if p.key == "variants.gptq_w4a16_business.engine")
    assert "no engine for format 'compressed-tensors'" in problem.message


def test_unknown_engine_in_the_format_table(tmp_path, params):
    params.setdefault("engines", {})["formats"] = {"hf": "vllm", "compressed-tensors": "vllm",
                                                   "gptq": "vllm", "awq": "vllm", "gguf": "llama.cpp"}
    problem = one_problem(write(tmp_path, params))
    assert problem.key.startswith("engines.formats")
    assert "unknown engine 'llama.cpp'" in problem.message


def test_unknown_engine(tmp_path, params):
    params["variants"]["fp8_dynamic"]["engine"] = "vlm"
    problem = one_problem(write(tmp_path, params))
    assert problem.key == "variants.fp8_dynamic.engine"
    assert "did you mean 'vllm'?" in problem.fix


def test_no_baseline_variant(tmp_path, params):
    del params["variants"]["baseline"], params["variants"]["baseline_rerun"]
    params["compare"]["noise_floor"] = {}
    problem = one_problem(write(tmp_path, params))
    assert problem.key == "variants"
    assert problem.message == "no baseline variant (scheme bf16 or fp16)"


def test_reference_runs_name_defined_unquantized_variants(tmp_path, params):
    params["compare"]["engine_baselines"] = {"llamacpp": "gguf_f61"}
    problem = one_problem(write(tmp_path, params))
    assert problem.key == "compare.engine_baselines.llamacpp"
    assert "'gguf_f61' is not defined" in problem.message and "gguf_f16" in problem.fix
    params["compare"]["engine_baselines"] = {"llamacpp": "gguf_q8_0_business"}
    problem = one_problem(write(tmp_path, params))
    assert "is quantized (gguf_q8_0), not an unquantized baseline" in problem.message


def test_length_buckets_must_increase(tmp_path, params):
    params["calibration"]["length_buckets"] = [128, 512, 256]
    path = write(tmp_path, params)
    problem = one_problem(path)
    assert problem.key == "calibration.length_buckets[2]"
    assert "strictly increasing: 512 then 256" in problem.message
    assert problem.line == line_of(path, "- 256")


def test_share_out_of_range(tmp_path, params):
    params["split"]["eval_share"] = 1.5
    params["calibration"]["sets"]["business"]["hard_share_min"] = -0.1
    _, _, problems = check_params(write(tmp_path, params))
    assert [p.key for p in problems] == ["split.eval_share",
                                         "calibration.sets.business.hard_share_min"]
    assert "less than 1" in problems[0].message and "1.5" in problems[0].message


def test_literal_value_typo_suggests_allowed_value(tmp_path, params):
    params["calibration"]["sets"]["business"]["overlength"] = "drip"
    problem = one_problem(write(tmp_path, params))
    assert problem.key == "calibration.sets.business.overlength"
    assert problem.message == "invalid value 'drip'"
    assert problem.fix == "did you mean 'drop'? Allowed: drop, truncate"


def test_split_by_date_needs_recent_days(tmp_path, params):
    params["split"]["by"] = "date"
    problem = one_problem(write(tmp_path, params))
    assert problem.key == "split.eval_recent_days"


def test_general_set_needs_general_corpus(tmp_path, params):
    params["data"]["general_corpus"] = None
    problem = one_problem(write(tmp_path, params))
    assert problem.key == "calibration.sets.general"
    assert "data.general_corpus is not set" in problem.message


def test_variant_name_must_be_usable_as_a_directory(tmp_path, params):
    params["variants"]["fp8 dynamic"] = params["variants"].pop("fp8_dynamic")
    problem = one_problem(write(tmp_path, params))
    assert problem.key == "variants.fp8 dynamic"
    assert problem.message == "invalid name 'fp8 dynamic'"


def test_missing_required_key(tmp_path, params):
    del params["model"]["name"]
    problem = one_problem(write(tmp_path, params))
    assert (problem.key, problem.message) == ("model.name", "missing required key 'name'")
    assert problem.fix == "add `name:` under model"


def test_all_problems_are_reported_in_one_pass(tmp_path, params):
    variants = params["variants"]
    variants["gptq_w4a16_business"]["calibraton"] = "business"  # typo'd key …
    variants["gptq_w4a16_business"]["engine"] = "openai"  # … hides no rule of its variant
    variants["fp8_dynamic"]["scheme"] = "fp8_dynamc"
    variants["nvfp4_business"]["calibration"] = "nope"
    params["calibration"]["length_buckets"] = [256, 128]
    params["split"]["dedup"]["near_threshold"] = 2
    with pytest.raises(ConfigError) as info:
        load_params(write(tmp_path, params))
    keys = [p.key for p in info.value.problems]
    assert sorted(keys) == sorted([
        "variants.gptq_w4a16_business.calibraton",
        "variants.gptq_w4a16_business.url",
        "variants.fp8_dynamic.scheme",
        "variants.nvfp4_business.calibration",
        "calibration.length_buckets[1]",
        "split.dedup.near_threshold",
    ])
    assert [p.line for p in info.value.problems] == sorted(p.line for p in info.value.problems)
    assert isinstance(info.value, ValueError)
    assert str(info.value).endswith("6 problems found")


def test_duplicate_key_is_reported(tmp_path):
    text = (REPO / "params.yaml").read_text().replace(
        "  dtype: bfloat16\n", "  dtype: bfloat16\n  dtype: float16\n", 1)
    path = tmp_path / "params.yaml"
    path.write_text(text)
    problem = one_problem(path)
    assert problem.key == "model.dtype" and "duplicate key" in problem.message
    assert problem.line == line_of(path, "dtype: float16")


def test_yaml_syntax_error_has_a_line(tmp_path):
    path = tmp_path / "params.yaml"
    path.write_text("model:\n  name: x\n  path: [unclosed\ndata: {}\n")
    problem = one_problem(path)
    assert problem.message.startswith("not valid YAML") and problem.line is not None


def test_problem_rendering():
    problem = Problem("params.yaml", 42, "variants.x.scheme", "unknown scheme 'y'", "fix it")
    assert str(problem) == "params.yaml:42: variants.x.scheme: unknown scheme 'y' — fix: fix it"
    assert str(Problem("params.yaml", None, "", "cannot read file")) == (
        "params.yaml: cannot read file")
    assert render_problems([]) == "no problems found"
    assert render_problems([problem]).splitlines() == [str(problem), "1 problem found"]


def test_params_constructed_directly_still_enforces_cross_section_rules(repo_params):
    data = copy.deepcopy(repo_params)
    data["variants"]["w8a8_int8_business"]["calibration"] = "missing"
    with pytest.raises(ValueError, match="calibration set 'missing' is not defined"):
        Params.model_validate(data)


def test_gate_profile_must_be_known_and_custom_needs_thresholds(tmp_path, params):
    params["gates"] = {"profile": "finance"}
    problem = one_problem(write(tmp_path, params))
    assert problem.key == "gates.profile" and "finance_medical" in problem.fix
    params["gates"] = {"profile": "custom"}
    assert one_problem(write(tmp_path, params)).key == "gates.custom"
    params["gates"] = {"profile": "research", "critical_slices": ["tool_call"]}
    assert "scenario=tool_call" in one_problem(write(tmp_path, params)).fix


def test_the_divergence_reference_must_be_a_defined_baseline(tmp_path):
    for ref, says in (("w8a8_int8_business", "is quantized, not a baseline"),
                      ("basline", "variant 'basline' is not defined")):
        data = yaml.safe_load((REPO / "params.yaml").read_text())
        data["divergence"]["reference"] = ref
        path = tmp_path / "params.yaml"
        path.write_text(yaml.safe_dump(data, sort_keys=False))
        problem = one_problem(path)
        assert problem.key == "divergence.reference" and says in problem.message


@pytest.mark.parametrize("variant, change, key, message, fix", [
    ("gguf_f16", {"engine": "vllm", "url": "http://gpu-7:8000/v1"}, "url",
     "url is only used by engine 'openai', not 'vllm'", "remove `url:` or set `engine: openai`"),
    ("w8a8_int8_business", {"engine": "llamacpp"}, "engine",
     "engine 'llamacpp' cannot serve scheme 'w8a8_int8'", "llama.cpp serves gguf_* schemes; use vllm"),
    ("w8a8_int8_business", {"engine": "mlx"}, "engine", "engine 'mlx' cannot serve scheme 'w8a8_int8'",
     "mlx_lm.server serves the mlx backend's checkpoints (mlx_* schemes)"),
    ("gguf_f16", {"engine": "transformers"}, "reason",
     "engine 'transformers' (the in-process reference) needs a reason", None),
])
def test_what_an_engine_demands_of_its_variants_comes_from_its_settings_class(
        tmp_path, params, variant, change, key, message, fix):
    """Each rule is stated by the engine's settings section (reference_only, takes_url,
    schemes_prefix), not by a branch on the engine's name."""
    params["variants"][variant].update(change)
    params["serving"]["upgrades"].pop("vllm_release")  # it would name the engine change too
    problem = one_problem(write(tmp_path, params))
    assert (problem.key, problem.message) == (f"variants.{variant}.{key}", message)
    assert fix is None or problem.fix == fix


def test_an_upgrade_names_defined_configurations_of_one_engine(tmp_path, params):
    serving = params["serving"]
    serving["upgrades"]["llamacpp_release"]["candidate"] = "llamacpp_0337"
    problem = one_problem(write(tmp_path, params))
    assert problem.key == "serving.upgrades.llamacpp_release.candidate"
    assert "no serving configuration 'llamacpp_0337'" in problem.message and "llamacpp_0336" in problem.fix


def test_an_upgrade_of_two_engines_is_refused(tmp_path, params):
    params["serving"]["configs"]["vllm_now"] = {"engine": "vllm"}
    params["serving"]["upgrades"]["llamacpp_release"]["candidate"] = "vllm_now"
    problem = one_problem(write(tmp_path, params))
    assert problem.key == "serving.upgrades.llamacpp_release" and "diff-engines" in problem.fix


def test_an_upgrade_serves_a_defined_variant_its_engine_serves(tmp_path, params):
    params["serving"]["upgrades"]["llamacpp_release"]["artifact"] = "gguf_q4_k_m_busines"
    problem = one_problem(write(tmp_path, params))
    assert problem.key == "serving.upgrades.llamacpp_release.artifact" and "gguf_q4_k_m_business" in problem.fix
    params["serving"]["upgrades"]["llamacpp_release"]["artifact"] = "baseline"  # a vLLM artifact
    problem = one_problem(write(tmp_path, params))
    assert "served by vllm, the configurations by llamacpp" in problem.message


def test_a_release_is_built_only_for_an_engine_that_builds_them(tmp_path, params):
    params["serving"]["configs"]["mlx_old"] = {"engine": "mlx", "release": "0.28.0"}
    problem = one_problem(write(tmp_path, params))
    assert problem.key == "serving.configs.mlx_old.release" and "python" in problem.fix
    del params["serving"]["configs"]["mlx_old"]
    params["serving"]["configs"]["vllm_old"] = {"engine": "vllm", "release": "0.31.0"}  # its own environment
    assert check_params(write(tmp_path, params))[2] == []


def test_too_few_replayed_requests_to_bound_a_p99_are_refused(tmp_path, params):
    """Below the order statistics' minimum (rounds pooled) every P99 criterion could only be
    inconclusive: the same count pipeline.stats.latency gives."""
    from pipeline.stats.latency import requests_for_upper_bound

    needed = requests_for_upper_bound(0.99, 1 - 0.05 / 2)
    params["serving"]["traffic"].update(requests=needed // 2 - 1, rounds=2)
    problem = one_problem(write(tmp_path, params))
    assert problem.key == "serving.traffic.requests" and f"needs ≥ {needed}" in problem.message
    assert problem.fix == f"set requests ≥ {needed // 2 + needed % 2} (or more rounds)"
    params["serving"]["traffic"]["requests"] = needed // 2 + needed % 2
    assert check_params(write(tmp_path, params))[2] == []


def test_bench_traffic_levels_are_increasing(tmp_path, params):
    params["bench"]["traffic"] = {"concurrency": [8, 1]}
    problem = one_problem(write(tmp_path, params))
    assert problem.key == "bench.traffic.concurrency" and "lowest first" in problem.fix


def test_arrivals_are_poisson_or_constant(tmp_path, params):
    params["serving"]["traffic"]["arrivals"] = "constant"
    assert check_params(write(tmp_path, params))[2] == []
    params["serving"]["traffic"]["arrivals"] = "bursty"
    problem = one_problem(write(tmp_path, params))
    assert problem.key == "serving.traffic.arrivals" and problem.fix == "Allowed: poisson, constant"
