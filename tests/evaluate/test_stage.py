"""The evaluate and compare stages end to end on real engines (llama-server, transformers) and
the demo model's artifacts, made by the real quantize stage."""

import json
import shutil

import psutil
import pytest

import pipeline.models

from pipeline.engines.base import EngineError, get_engine
from pipeline.evaluate import stage
from pipeline.compare import matrix as compare
from pipeline.compare.deltas import CompareError

from .conftest import kill_when_found, make_params
from conftest import stage_args
from pipeline.compare.stage import PARAMS as COMPARE
from pipeline.quantize import stage as quantize

pytestmark = pytest.mark.slow
Q8, Q2 = "gguf_q8_0_business", "gguf_q2_k_business"


@pytest.fixture(scope="module")
def q8_full(served):
    """Q8_0 evaluated on the whole evaluation set, twice (a re-run of the same variant), and Q2_K."""
    served.artifact(Q8)
    served.artifact(Q2)
    stage.run(*stage_args(served.params, served.root, stage.PARAMS, Q8), Q8)
    again = served.root / "rerun"
    shutil.rmtree(again, ignore_errors=True)
    rerun = make_params(served.data, evaluate={"out_dir": "rerun"})
    (again).mkdir()
    shutil.copytree(served.root / "results" / Q8, again / "q8_first")
    stage.run(*stage_args(rerun, served.root, stage.PARAMS, Q8), Q8)
    stage.run(*stage_args(served.params, served.root, stage.PARAMS, Q2), Q2)
    return served


def read(root, name):
    d = root / name
    return (json.loads((d / "metrics.json").read_text()),
            [json.loads(x) for x in (d / "samples.jsonl").read_text().splitlines()])


def test_results_have_per_sample_records_slices_and_engine_facts(q8_full):
    m, recs = read(q8_full.root / "results", Q8)
    n = json.loads((q8_full.root / "data" / "evalset" / "card.json").read_text())["samples"]
    assert m["n"] == len(recs) == n
    assert {"id", "slices", "prompt_tokens", "output_tokens", "ttft", "latency", "output",
            "score"} <= set(recs[0])
    assert all(r["prompt_tokens"] > 0 and r["latency"] > 0 for r in recs)
    assert {"scenario=tool_call", "difficulty=hard", "segment=smb"} <= set(m["slices"])
    hand = sum(r["score"] for r in recs if r["slices"]["scenario"] == "tool_call")
    assert m["slices"]["scenario=tool_call"]["accuracy"] == pytest.approx(
        hand / m["slices"]["scenario=tool_call"]["n"], abs=1e-4)
    assert m["engine"]["name"] == "llamacpp" and "ggml CPU" in m["engine"]["kernel"]
    assert m["speed"]["serving_engine"] and m["speed"]["ttft_p50"] > 0
    assert m["memory"]["engine_peak_rss_bytes"] > 1e6
    run = json.loads((q8_full.root / "results" / Q8 / "run.json").read_text())
    assert run["evalset_sha256"] == json.loads(
        (q8_full.root / "data" / "evalset" / "card.json").read_text())["content_sha256"]
    engine_log = (q8_full.root / "results" / Q8 / "engine.log").read_text()
    assert "llama-server" in engine_log
    # no host prompt cache: it logged its whole state at every request (quadratic log growth:
    # ~95 kB per request over 1,501 requests; -lv 4 alone writes ~3 kB per request)
    assert "cache state:" not in engine_log and len(engine_log) < 10_000 * len(recs)
    assert run["artifact"]["path"] == f"artifacts/{Q8}"  # relative: records compare across hosts


def test_rerun_of_the_same_variant_shows_no_difference(q8_full):
    r = compare.run(*stage_args(make_params(q8_full.data, evaluate={"out_dir": "rerun"}), q8_full.root, COMPARE),
                    baseline="q8_first", variants=[Q8])
    v = r["variants"][Q8]
    assert v["accuracy"]["delta"] == 0 and not v["accuracy"]["significant"]
    assert v["significant_drops"] == []
    assert v["detectors"]["consistency"]["exact_match_rate"] == 1.0


def test_damaged_variant_is_a_significant_regression_with_worst_slices_named(q8_full):
    r = compare.run(*stage_args(q8_full.params, q8_full.root, COMPARE), baseline=Q8, variants=[Q2])
    v = r["variants"][Q2]
    assert v["accuracy"]["significant"] and v["accuracy"]["ci_high"] < 0
    assert v["significant_drops"], v["slices"]
    worst = v["significant_drops"][0]
    assert v["slices"][worst]["delta"] == min(v["slices"][k]["delta"] for k in v["significant_drops"])
    assert v["detectors"]["consistency"]["exact_match_rate"] < 1.0
    assert (q8_full.root / "reports" / "comparison.json").is_file()


def test_compare_refuses_records_from_another_harness_or_evalset(q8_full, tmp_path):
    res = tmp_path / "results"
    for name in (Q8, Q2):
        shutil.copytree(q8_full.root / "results" / name, res / name)
    m = json.loads((res / Q2 / "metrics.json").read_text())
    m["harness_version"] = "0000older0000000"
    m["evalset_sha256"] = "f" * 64
    (res / Q2 / "metrics.json").write_text(json.dumps(m))
    with pytest.raises(CompareError) as err:
        compare.run(*stage_args(make_params(q8_full.data, evaluate={"out_dir": str(res)}), q8_full.root, COMPARE),
                    baseline=Q8, variants=[Q2])
    assert "evaluation harness" in str(err.value) and "evaluation set" in str(err.value)
    assert Q2 in str(err.value)
    # another engine version, other prompts (a changed chat template) or max tokens: refused too
    fresh = json.loads((q8_full.root / "results" / Q2 / "metrics.json").read_text())
    for change, named in ((("engine", "version"), "b0000 (0ld)"), (("protocol", "prompts_sha256"), "0" * 64),
                          (("protocol", "max_tokens"), 7)):
        m = json.loads(json.dumps(fresh))
        m[change[0]][change[1]] = named
        (res / Q2 / "metrics.json").write_text(json.dumps(m))
        with pytest.raises(CompareError) as err:
            compare.run(*stage_args(make_params(q8_full.data, evaluate={"out_dir": str(res)}), q8_full.root, COMPARE),
                        baseline=Q8, variants=[Q2])
        assert str(named) in str(err.value), change
    (res / Q2 / "metrics.json").write_text(json.dumps(fresh))  # the real records still pair
    compare.run(*stage_args(make_params(q8_full.data, evaluate={"out_dir": str(res)},
                            compare={"out_dir": str(tmp_path / "reports")}), q8_full.root, COMPARE),
                baseline=Q8, variants=[Q2])
    assert (tmp_path / "reports" / "comparison.json").is_file()


def test_killing_the_engine_mid_run_fails_with_its_log_and_leaves_no_metrics(served):
    served.artifact(Q8)
    results = served.root / "kill-results"
    params = make_params(served.data, evaluate={"out_dir": "kill-results", "concurrency": 1})

    def serving_engine():  # the evaluation's llama-server, once it has served a few
        logs = list(results.glob(".staging-*/*/engine.log"))
        if not logs or logs[0].read_text().count("print_timing") <= 30:
            return None
        return next((p for p in psutil.process_iter(["cmdline"])
                     if "llama-server" in (cmd := " ".join(p.info["cmdline"] or []))
                     and f"{served.root}/artifacts/gguf_q8_0_business" in cmd), None)

    killer = kill_when_found(serving_engine)
    with pytest.raises(EngineError) as err:
        stage.run(*stage_args(params, served.root, stage.PARAMS, Q8), Q8)
    killer.thread.join()
    killed = killer.killed
    assert killed, "the engine was never seen serving"
    assert "log tail" in str(err.value) and "print_timing" in str(err.value)
    assert not (results / Q8 / "metrics.json").exists()
    assert (served.root / "logs" / "failed" / Q8 / "engine.log").is_file()


def _failed_project(served, out_dir: str, **variant) -> tuple:
    """Params whose Q8 variant is changed as given, and an earlier result left in place: a
    failure must remove it, never leave stale metrics for `compare`."""
    served.artifact(Q8)
    data = json.loads(json.dumps(served.data))
    data["variants"][Q8].update(variant)
    params = make_params(data, evaluate={"out_dir": out_dir})
    stale = served.root / out_dir / Q8
    stale.mkdir(parents=True, exist_ok=True)
    (stale / "metrics.json").write_text('{"accuracy": 1.0}')
    return params, stale


def _error_record(served) -> dict:
    return json.loads((served.root / "logs" / "failed" / Q8 / "error.json").read_text())


def test_an_engine_that_is_not_installed_fails_the_stage_and_leaves_no_metrics(served):
    params, stale = _failed_project(served, "missing-results", engine="vllm",
                                    engine_options={"python": "/nonexistent/vllm-env/bin/python"})
    with pytest.raises(EngineError, match="not installed or cannot be started") as err:
        stage.run(*stage_args(params, served.root, stage.PARAMS, Q8), Q8)
    assert "/nonexistent/vllm-env/bin/python" in str(err.value)
    assert not stale.exists()
    assert _error_record(served)["error"] == "EngineError"


def test_an_engine_that_dies_at_start_fails_with_its_log_tail(served):
    params, stale = _failed_project(served, "dies-results",
                                    engine_options={"extra_args": ["--no-such-flag"]})
    with pytest.raises(EngineError, match="exited with code") as err:
        stage.run(*stage_args(params, served.root, stage.PARAMS, Q8), Q8)
    assert "while starting" in str(err.value) and "no-such-flag" in str(err.value)  # its log
    assert not stale.exists()
    failed = served.root / "logs" / "failed" / Q8
    assert "no-such-flag" in (failed / "engine.log").read_text()
    assert "no-such-flag" in _error_record(served)["message"]


def test_a_failed_qpipe_eval_is_logged_to_mlflow_as_failed_at_once(served, tmp_path):
    """The pipeline stops at a failed evaluation, before its `track` stage: `qpipe eval` logs
    the run as FAILED itself, with the error as its reason."""
    import subprocess
    import sys

    import yaml
    from mlflow import MlflowClient

    served.artifact(Q8)
    data = json.loads(json.dumps(served.data))
    data["variants"][Q8].update(engine="vllm",
                                engine_options={"python": "/nonexistent/vllm-env/bin/python"})
    data["evaluate"]["out_dir"] = "cli-fail-results"
    data["tracking"]["tracking_uri"] = "sqlite:///cli-fail-mlflow.db"
    params_file = served.root / "params-cli-fail.yaml"
    params_file.write_text(yaml.safe_dump(data, sort_keys=False))
    done = subprocess.run([sys.executable, "-m", "pipeline.cli", "eval", Q8, "--params",
                           str(params_file)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=600)
    out = done.stdout + done.stderr
    assert done.returncode == 1 and "not installed or cannot be started" in out, out
    assert "logged to MLflow as FAILED" in out, out
    client = MlflowClient(f"sqlite:///{served.root / 'cli-fail-mlflow.db'}")
    exp = client.get_experiment_by_name(data["model"]["name"])
    [run] = client.search_runs([exp.experiment_id], f"tags.variant = '{Q8}'")
    assert run.info.status == "FAILED" and "not installed" in run.data.tags["reason"]


def test_engine_none_is_reported_not_skipped(served):
    data = json.loads(json.dumps(served.data))
    data["variants"][Q8].update(engine="none", reason="no engine for it on this host")
    params = make_params(data)
    m = stage.run(*stage_args(params, served.root, stage.PARAMS, Q8), Q8)
    assert m == json.loads((served.root / "results" / Q8 / "metrics.json").read_text())
    assert m["served"] is False and m["reason"] == "not served here: no engine for it on this host"


def test_external_openai_endpoint_gives_the_same_outputs(served, tmp_path, monkeypatch):
    art = served.artifact(Q8)
    params = make_params(served.data, evaluate={"out_dir": str(tmp_path / "own"), "limit": 24})
    stage.evaluate(*stage_args(params, served.root, stage.PARAMS, Q8), Q8, _mk(tmp_path / "own"))
    settings = served.params.engines.llamacpp.model_dump()
    with get_engine("llamacpp")(art, settings, log_path=tmp_path / "remote.log") as remote:
        # the endpoint wants a key (ours, per run): the variant names the variable that holds it
        monkeypatch.setenv("QPIPE_TEST_REMOTE_KEY", remote.api_key)
        data = json.loads(json.dumps(served.data))
        data["variants"][Q8].update(engine="openai", url=f"{remote.base_url}/v1",
                                    engine_options={"api_key_env": "QPIPE_TEST_REMOTE_KEY"})
        ext = make_params(data, evaluate={"limit": 24})
        stage.evaluate(*stage_args(ext, served.root, stage.PARAMS, Q8), Q8, _mk(tmp_path / "ext"))
    own = [json.loads(x)["output"] for x in (tmp_path / "own" / "samples.jsonl").read_text().splitlines()]
    got = [json.loads(x)["output"] for x in (tmp_path / "ext" / "samples.jsonl").read_text().splitlines()]
    assert own == got and len(got) == 24
    assert json.loads((tmp_path / "ext" / "metrics.json").read_text())["engine"]["name"] == "openai"


def test_transformers_reference_is_labelled_and_kept_out_of_speed(served, tmp_path):
    served.artifact("baseline")
    data = json.loads(json.dumps(served.data))
    data["variants"]["baseline"]["engine"] = "transformers"
    params = make_params(data, evaluate={"limit": 16})
    m = stage.evaluate(*stage_args(params, served.root, stage.PARAMS, "baseline"), "baseline", _mk(tmp_path / "ref"))
    assert m["engine"]["serving"] is False and m["speed"]["serving_engine"] is False
    assert "reference" in m["speed"]["note"] and m["n"] == 16
    # bfloat16 weights, computed in float32 where this CPU has no native bfloat16 kernels
    native = pipeline.models.native_cpu_dtype("bfloat16")
    assert ("bfloat16" if native else "float32") in m["engine"]["kernel"]
    assert m["accuracy"] > 0.5  # the demo model answers most business questions


def _mk(path):
    path.mkdir(parents=True, exist_ok=True)
    return path


def test_lm_eval_runs_the_business_task_against_the_served_endpoint(served, tmp_path):
    served.artifact(Q8)
    params = make_params(served.data, evaluate={"limit": 60, "lm_eval": {"tasks": ["business_exact"]}})
    m = stage.evaluate(*stage_args(params, served.root, stage.PARAMS, Q8), Q8, _mk(tmp_path / "lm"))
    recs = [json.loads(x) for x in (tmp_path / "lm" / "samples.jsonl").read_text().splitlines()]
    exact = [r["score"] for r in recs if r["rubric"] == "exact"]
    got = m["lm_eval"]
    assert got["model"] == "the evaluation's engine client (record cache)"  # the business task alone
    assert got["n_samples"]["business_exact"] == len(exact) > 0
    # lm-eval's own exact match (case and punctuation ignored) agrees with the harness's scorer
    assert got["tasks"]["business_exact"]["exact_match,strip"] == pytest.approx(
        sum(exact) / len(exact), abs=0.05)


def test_a_gguf_artifact_does_not_depend_on_where_it_was_made(served):
    """llama.cpp writes the paths it is given into the GGUF metadata; given absolute ones, every
    quantization (its staging folder has a random name) and every checkout made other bytes from
    the same weights. The tools get bare names, so the metadata says only those."""
    from gguf import GGUFReader

    served.artifact(Q8)
    d = served.root / "artifacts" / Q8
    fields = GGUFReader(next(d.glob("model-*.gguf"))).fields
    assert fields["quantize.imatrix.file"].contents() == "imatrix.gguf"
    assert fields["quantize.imatrix.dataset"].contents() == "imatrix.txt"
    assert GGUFReader(d / "imatrix.gguf").fields["imatrix.datasets"].contents() == ["imatrix.txt"]


def test_the_gguf_log_is_the_runs_not_the_artifacts(served):
    """llama.cpp's output names times and paths: it goes to quantize.runs_dir, and the artifact
    holds only the model files, the importance matrix and the manifest."""
    served.artifact(Q8)
    d = served.root / "artifacts" / Q8
    assert sorted(p.name for p in d.iterdir()) == ["SHA256SUMS", "imatrix.gguf", "manifest.json",
                                                   "model-Q8_0.gguf"]
    log = (served.root / "runs/quantize" / f"{Q8}.log").read_text()
    assert "llama-imatrix" in log and "llama-quantize" in log
    assert "tokenizes 8 calibration texts as the Hugging Face tokenizer does" in log
    m = json.loads((d / "manifest.json").read_text())
    assert m["quantization"]["fallbacks"] == [] and m["quantization"]["reader"]["tensor_types"]


def test_a_gguf_that_tokenizes_otherwise_is_refused_before_its_imatrix(served, tmp_path):
    """A pre-tokenizer that splits the calibration text otherwise than the Hugging Face tokenizer
    ('falcon' splits ' <' where the demo's byte-level BPE keeps it) stops the stage before
    llama-imatrix, naming where the tokenizations part and the fix; nothing is left behind."""
    from pipeline.quantize import stage as quantize
    from pipeline.quantize.base import BackendError

    data = json.loads(json.dumps(served.data))
    data["model"]["gguf_pre_tokenizer"] = "falcon"
    root = tmp_path / "p"
    shutil.copytree(served.root, root, ignore=shutil.ignore_patterns("artifacts", "runs"))
    with pytest.raises(BackendError) as err:
        quantize.run(*stage_args(make_params(data), root, quantize.PARAMS, Q8), Q8)
    text = str(err.value)
    assert "tokenizes calibration text" in text and "first difference at token" in text
    assert "Fix: set model.gguf_pre_tokenizer (now 'falcon')" in text
    assert not (root / "artifacts" / Q8).exists()
    assert "llama-imatrix" not in (root / "runs/quantize" / f"{Q8}.log").read_text()


def test_reproduce_rebuilds_a_calibrated_gguf_byte_for_byte(served, tmp_path):
    """Conversion, the business importance matrix and Q8_0 quantization are deterministic:
    `qpipe reproduce` finds every file and the manifest identical (run facts live in the run
    record), and keeps the rebuild with its own record beside it."""
    from pipeline.artifacts.manifest import MANIFEST
    from pipeline.quantize.reproduce import reproduce

    recorded = json.loads((served.artifact(Q8) / MANIFEST).read_text())
    result = reproduce(*stage_args(served.params, served.root, quantize.PARAMS, Q8), Q8, keep=tmp_path / "again")
    assert result.matches and result.manifest_identical, result.lines()
    assert json.loads((tmp_path / "again" / Q8 / MANIFEST).read_text())["files"] == recorded["files"]
    assert (tmp_path / "again" / f"{Q8}.run.json").is_file()
    assert not list((served.root / "artifacts").glob(".staging-*"))


def test_reproduce_rebuilds_gptq_byte_for_byte(served, tmp_path):
    """llm-compressor's GPTQ rebuilds byte for byte: the calibration samples keep the set's order
    (llm-compressor shuffles them by default, and GPTQ's rounding follows the Hessian's
    accumulation order) and the tokenizer saved beside the weights is a fresh load."""
    from pipeline.quantize.reproduce import reproduce

    gptq = "gptq_w4a16_business"
    served.artifact(gptq)
    result = reproduce(*stage_args(served.params, served.root, quantize.PARAMS, gptq), gptq)
    assert result.matches and result.manifest_identical, result.lines()


def test_items_already_served_are_not_served_again_and_a_kill_keeps_what_was_answered(served, tmp_path,
                                                                                      monkeypatch):
    """The record cache through the real stage and llama-server: a second evaluation serves
    nothing and writes the same records; after a cache cut mid-line (a kill while writing), only
    the rest is served; another max_tokens is another identity."""
    served.artifact(Q8)
    monkeypatch.setenv("QPIPE_RECORD_CACHE", str(tmp_path / "records"))

    def evaluate(out_dir, **evaluate):
        params = make_params(served.data, evaluate={"out_dir": out_dir, **evaluate})
        stage.run(*stage_args(params, served.root, stage.PARAMS, Q8), Q8)
        d = served.root / out_dir / Q8
        return (json.loads((d / "run.json").read_text())["record_cache"],
                json.loads((d / "metrics.json").read_text()),
                [json.loads(x) for x in (d / "samples.jsonl").read_text().splitlines()])

    try:
        first, m1, s1 = evaluate("cache-a", lm_eval={"tasks": ["business_exact"]})
        n = m1["n"]
        assert (first["from_cache"], first["served"]) == (0, n)
        # lm-eval's business task asks for items the evaluation was just given: nothing generated again
        exact = sum(r["rubric"] == "exact" for r in s1)
        assert (first["lm_eval_from_cache"], first["lm_eval_served"]) == (exact, 0) and exact > 0
        assert m1["lm_eval"]["n_samples"]["business_exact"] == exact
        second, m2, s2 = evaluate("cache-b")
        assert (second["from_cache"], second["served"]) == (n, 0)
        assert [r["output"] for r in s2] == [r["output"] for r in s1] and m2["accuracy"] == m1["accuracy"]
        assert m2["speed"]["output_tokens_per_second"] is None and "record cache" in m2["speed"]["note"]

        path = tmp_path / "records" / first["file"]
        lines = path.read_bytes().split(b"\n")
        path.write_bytes(b"\n".join(lines[:6]) + b"\n" + lines[6][:30])  # 5 answers and a torn one
        third, m3, s3 = evaluate("cache-c")
        assert (third["from_cache"], third["served"], third["unreadable_lines"]) == (5, n - 5, 1)
        assert [r["output"] for r in s3] == [r["output"] for r in s1]
        assert m3["speed"]["output_tokens_per_second"] > 0

        other, _, _ = evaluate("cache-d", max_tokens=8)
        assert (other["from_cache"], other["served"]) == (0, n) and other["file"] != first["file"]
    finally:
        for d in ("cache-a", "cache-b", "cache-c", "cache-d"):
            shutil.rmtree(served.root / d, ignore_errors=True)
