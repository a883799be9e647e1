"""The real dvc.yaml under `dvc repro`: an edit of one calibration-pool log line re-runs `split`
and the calibration sets, never invalidates the evaluation set, the general set's data does not
depend on the business logs, and exactly the variants quantized with business calibration data
are requantized — never FP8 dynamic, the baseline, or a variant calibrated on the general set —
and then exactly those are re-evaluated (the baseline's cached evaluation stays valid), with
speed re-measured and the comparison redone.

Runs the repository's own `dvc` and `qpipe` (from the venv) in a copy of the project under tmp.
"""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from demo.matrix import full_params

from conftest import vllm_w4a16_problem

# Two full repros of seven variants with every stage: longer than pytest-timeout's default.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(3000)]

# The business/general pair served on vLLM's CPU build: GPTQ W4A16 where that build has its
# 4-bit kernel (AVX-512), else W8A8 (oneDNN's int8 kernel, as in the default matrix).
if vllm_w4a16_problem() is None:
    BUSINESS, GENERAL, SCHEME, PAIR = "gptq_w4a16_business", "gptq_w4a16_general", "w4a16_gptq", {}
else:
    BUSINESS, GENERAL, SCHEME = "w8a8_int8_business", "w8a8_int8_general", "w8a8_int8"
    PAIR = {name: {"backend": "llmcompressor", "scheme": SCHEME, "recipe": "recipes/w8a8_int8.yaml",
                   "calibration": calib, "reference": "baseline"}
            for name, calib in ((BUSINESS, "business"), (GENERAL, "general"))}

MODEL_FILES = ("config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json",
               "chat_template.jinja", "special_tokens_map.json", "model.safetensors")
# A calibration-free variant, the baseline, its re-run (vLLM's noise floor), llama.cpp's own
# baseline and its re-run (llama.cpp's noise floor), one per calibration set, and GGUF (imatrix).
VARIANTS = ("baseline", "baseline_rerun", "gguf_f16", "gguf_f16_rerun", "fp8_dynamic",
            BUSINESS, GENERAL, "gguf_q4_k_m_business")
DATA_FILES = ("samples.jsonl", "data.parquet", "imatrix.txt")


def venv_bin(repo: Path) -> Path:
    for candidate in (repo / ".venv" / "bin", Path(sys.executable).parent):
        if (candidate / "dvc").is_file() and (candidate / "qpipe").is_file():
            return candidate
    pytest.skip("dvc and qpipe are not installed next to this Python (pip install -e '.[pipeline]')")


def copy_project(repo: Path, root: Path) -> None:
    shutil.copy2(repo / "dvc.yaml", root / "dvc.yaml")
    params = full_params(repo)
    params["variants"] = {k: v for k, v in (params["variants"] | PAIR).items() if k in VARIANTS}
    params["serving"]["upgrades"] = {}  # the upgrades serve variants left out here
    for spec in params["calibration"]["sets"].values():
        spec["num_samples"] = 32  # small sets: quantization in seconds
    params["evaluate"].update(limit=40, warmup=2)  # evaluation in seconds per variant
    params["divergence"].update(long_prompts=0)  # the probe has its own test
    params["search"].update(tokens=256, max_seq_len=128)  # the sensitivity in seconds
    params["gate_calibration"].update(start=0.3, max_steps=3, batch=40)  # three steps on 40 items
    params["bench"].update(rounds=1, repeats=1, num_prompts=2, input_len=32, output_len=8,
                           concurrency=[1], stream_requests=2,
                           variants=["baseline", "gguf_q4_k_m_business"],
                           traffic={"requests": 6, "concurrency": [1, 2]})
    write_project(repo, root, params)


def write_project(repo: Path, root: Path, params: dict) -> None:
    """`params` as root's params.yaml, beside the code, recipes, logs and demo model it names."""
    (root / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("calibration", "recipes", "pipeline", "constraints", "scripts"):
        shutil.copytree(repo / name, root / name, ignore=ignore)
    (root / "models" / "demo").mkdir(parents=True)
    for name in MODEL_FILES:
        if (repo / "models" / "demo" / name).is_file():
            shutil.copy2(repo / "models" / "demo" / name, root / "models" / "demo" / name)


def files_of(d: Path) -> dict[str, bytes]:
    out = {p.relative_to(d).as_posix(): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}
    assert out, f"{d} is empty"
    return out


def edit_one_pool_record(root: Path) -> str:
    """Rewrite the user text of the first calibration-pool record in its source line."""
    from pipeline.calibration.split import id_key, pseudonym
    from pipeline.config import load_params

    # ids leave the split as keyed-hash pseudonyms: find the pool's first record among the logs'
    # own ids by hashing them alike
    key, _ = id_key(load_params(root / "params.yaml"))
    pool_ids = [json.loads(line)["id"] for line in
                (root / "data" / "pools" / "calibration.jsonl").read_text(encoding="utf-8").splitlines()]
    sources = sorted((root / "calibration" / "sources" / "demo").glob("*.jsonl"))
    raw_ids = {}
    for path in sources:  # the demo's logs hold planted malformed lines: by bytes, leniently
        for line in path.read_bytes().split(b"\n"):
            if line.startswith(b'{"id": "r-0'):
                raw = line[8:line.index(b'"', 8)].decode()
                raw_ids[pseudonym(key, raw)] = raw
    wanted = next(raw_ids[i] for i in pool_ids if i in raw_ids)
    for path in sources:
        lines = path.read_bytes().split(b"\n")
        for k, line in enumerate(lines):
            if line.startswith(f'{{"id": "{wanted}"'.encode()):
                rec = json.loads(line)
                user = [m for m in rec["messages"] if m["role"] == "user"][-1]
                user["content"] += " One more thing: please send the answer in writing as well."
                lines[k] = json.dumps(rec, ensure_ascii=False).encode()
                path.write_bytes(b"\n".join(lines))
                return wanted
    raise AssertionError(f"pool record {wanted} not found in calibration/sources/demo")


def pipeline_env(base: Path, bin_dir: Path) -> dict[str, str]:
    """The environment a project copy under `base` runs its `dvc` and `qpipe` in: the venv's
    tools first, DVC's site, global and system config kept under `base`, offline model hubs."""
    return os.environ | {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "DVC_NO_ANALYTICS": "1",
        "DVC_SITE_CACHE_DIR": str(base / "dvc-site-cache"),
        "DVC_GLOBAL_CONFIG_DIR": str(base / "dvc-global"),
        "DVC_SYSTEM_CONFIG_DIR": str(base / "dvc-system"),
        "GIT_CONFIG_GLOBAL": str(base / "gitconfig"),
        "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false",
    }


@pytest.fixture(scope="module")
def pipeline_run(repo, tmp_path_factory):
    """dvc repro; edit one pool line; status; repro split; status; repro — recording each step."""
    bin_dir = venv_bin(repo)
    base = tmp_path_factory.mktemp("dvc")
    root = base / "project"
    root.mkdir()
    copy_project(repo, root)
    env = pipeline_env(base, bin_dir)

    def run(*cmd: str) -> str:
        # a safety net only (a busy 2-core machine can take several minutes per step)
        done = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=2400)
        if done.returncode != 0:
            pytest.fail(f"{' '.join(cmd)} exited {done.returncode}\n--- stdout\n{done.stdout[-4000:]}"
                        f"\n--- stderr\n{done.stderr[-4000:]}")
        return done.stdout

    def dvc(*args: str) -> str:
        return run(str(bin_dir / "dvc"), *args)

    def status() -> dict:
        out = dvc("status", "--json")
        return json.loads(out[out.index("{"):]) if "{" in out else {}

    run("git", "init", "-q")
    dvc("init", "-q")
    dvc("repro")

    def contents() -> dict[str, str]:
        return {v: json.loads((root / "artifacts" / v / "manifest.json").read_text())["content_sha256"]
                for v in VARIANTS}

    r = SimpleNamespace(root=root, status_clean=status(), artifacts=contents(),
                        evalset=files_of(root / "data" / "evalset"),
                        business=files_of(root / "data" / "calibration" / "business"),
                        general=files_of(root / "data" / "calibration" / "general"))
    r.edited = edit_one_pool_record(root)
    r.status_after_edit = status()
    dvc("repro", "split")
    r.evalset_after_split = files_of(root / "data" / "evalset")
    r.status_after_split = status()
    dvc("repro", "calibration@business", "calibration@general")
    r.status_after_calibration = status()
    r.final_repro_log = dvc("repro")
    r.status_final = status()
    r.artifacts_after = contents()
    r.business_after = files_of(root / "data" / "calibration" / "business")
    r.general_after = files_of(root / "data" / "calibration" / "general")
    r.qpipe = lambda *args: run(str(bin_dir / "qpipe"), *args)
    return r


def test_fresh_repro_leaves_nothing_to_do(pipeline_run):
    assert pipeline_run.status_clean == {}
    assert set(pipeline_run.business) >= {"card.json", "card.md", *DATA_FILES}
    card = json.loads(pipeline_run.business["card.json"])
    assert card["samples"] == 32 and card["overlap_with_evalset"]["by_id"] == 0


def test_editing_a_pool_line_invalidates_split_only(pipeline_run):
    status = pipeline_run.status_after_edit
    assert set(status) == {"split"}, status
    assert "calibration/sources/demo" in json.dumps(status["split"])


def test_split_rerun_keeps_the_evalset_byte_identical(pipeline_run):
    assert pipeline_run.evalset_after_split == pipeline_run.evalset


def test_after_split_only_calibration_sets_are_stale(pipeline_run):
    status = pipeline_run.status_after_split
    assert "calibration@business" in status, status
    assert set(status) <= {"calibration@business", "calibration@general"}, status


def test_final_repro_settles(pipeline_run):
    assert pipeline_run.status_final == {}
    # the business set did change: the edited pool record is in the pool it draws from
    assert pipeline_run.business_after["card.json"] != pipeline_run.business["card.json"]


def test_general_set_data_does_not_depend_on_business_logs(pipeline_run):
    for name in DATA_FILES:
        assert pipeline_run.general_after[name] == pipeline_run.general[name], name


def test_general_set_card_does_not_depend_on_business_logs(pipeline_run):
    assert pipeline_run.general_after["card.json"] == pipeline_run.general["card.json"]


def test_after_calibration_only_business_calibrated_variants_are_stale(pipeline_run):
    """Of the stages reading calibration data, the business-calibrated quantizations — and
    compare and handoff, which read the sets' cards (the calibration effect, the bundle's card),
    and the sensitivity measured on the business set — and nothing else: not the baseline, FP8
    dynamic or the general-set variant."""
    status = pipeline_run.status_after_calibration
    assert set(status) == {f"quantize@{BUSINESS}", "quantize@gguf_q4_k_m_business",
                           "compare", "handoff", "sensitivity"}, status
    for stage in ("compare", "handoff"):
        assert status[stage] == [{"changed deps": {"data/calibration": "modified"}}], status
    assert status["sensitivity"] == [{"changed deps": {"data/calibration/business": "modified"}}], status


def test_final_repro_requantizes_exactly_those(pipeline_run):
    """The business-calibrated variants are quantized again; a variant whose new artifact is
    byte-identical keeps its DVC hash (run facts are the run record's, not the artifact's), so
    its evaluation and divergence are not redone — only changed bytes are evaluated again. The
    run records always change (track and handoff read them)."""
    log = pipeline_run.final_repro_log
    ran = {line.split("'")[1] for line in log.splitlines() if line.startswith("Running stage")}
    requantized = {BUSINESS, "gguf_q4_k_m_business"}
    changed = {v for v in requantized
               if pipeline_run.artifacts[v] != pipeline_run.artifacts_after[v]}
    expected = ({f"quantize@{v}" for v in requantized}
                | {f"{stage}@{v}" for v in changed for stage in ("evaluate", "divergence")}
                | {"compare", "track", "handoff", "sensitivity"} | ({"bench"} if changed else set()))
    assert ran == expected, log
    unchanged = set(VARIANTS) - requantized
    assert all(pipeline_run.artifacts[v] == pipeline_run.artifacts_after[v] for v in unchanged)
    # llama.cpp is deterministic: the same calibration text gives the same GGUF
    if pipeline_run.business["imatrix.txt"] == pipeline_run.business_after["imatrix.txt"]:
        assert "gguf_q4_k_m_business" not in changed


def test_every_variant_is_evaluated_and_compared(pipeline_run):
    report = json.loads((pipeline_run.root / "reports" / "comparison.json").read_text())
    assert set(report["variants"]) == set(VARIANTS) - {"baseline"}
    for name in VARIANTS:
        m = json.loads((pipeline_run.root / "results" / name / "metrics.json").read_text())
        assert m["n"] == 40 and "scenario=faq" in m["slices"], name
    assert report["variants"]["fp8_dynamic"]["engine"]["name"] == "transformers"
    v = report["variants"]
    assert v["gguf_q4_k_m_business"]["reference"] == "gguf_f16" and v[BUSINESS]["reference"] == "baseline"
    for engine, rerun, ref in (("vllm", "baseline_rerun", "baseline"), ("llamacpp", "gguf_f16_rerun", "gguf_f16")):
        floor = report["noise_floor"][engine]
        assert floor["measured"] and (floor["variant"], floor["reference"]) == (rerun, ref), floor
        assert v[rerun]["reference"] == ref and v[rerun]["reference_role"], v[rerun]
    for name in (BUSINESS, "gguf_q4_k_m_business", "fp8_dynamic"):
        d = v[name]["divergence"]
        assert d["measured"] and d["overall"]["tokens"] > 0 and "scenario=faq" in d["slices"], name
        assert v[name]["gate"]["verdict"] in ("pass", "fail", "inconclusive")
    assert set(report["bench"]) == {"baseline", "gguf_q4_k_m_business"}
    # this model's signal limits come from its own gate calibration, made on the same items
    assert report["gate_limits"]["calibrated"] and report["gate_limits"]["items"] == 40
    assert set(report["gate_limits"]["signals"]) == {"kld", "top1_disagreement", "task_disagreement"}
    index = json.loads((pipeline_run.root / "handoff" / "index.json").read_text())
    assert set(index["bundles"]) | set(index["left_out"]) == set(VARIANTS) - {"baseline"}
    for name in index["bundles"]:
        assert (pipeline_run.root / "handoff" / name / "SHA256SUMS").is_file()
    assert (pipeline_run.root / "mlflow.db").is_file()


def test_the_calibration_effect_is_reported_per_slice_with_its_interval(pipeline_run):
    """Same recipe (GPTQ, or W8A8 on an AVX2 host) on the business and the general set: the paired difference on the
    business evaluation set, overall and per slice, in comparison.json, .md and MLflow."""
    root = pipeline_run.root
    report = json.loads((root / "reports" / "comparison.json").read_text())
    [effect] = report["calibration_effect"]
    assert (effect["reference"], effect["other"]) == (BUSINESS, GENERAL)
    assert effect["calibration"] == {BUSINESS: "business", GENERAL: "general"}
    d = effect["delta_other_minus_reference"]
    assert d["n"] == 40 and d["ci_low"] <= d["delta"] <= d["ci_high"] and 0 <= d["p_value"] <= 1
    assert "scenario=tool_call" in effect["slices"] and "difficulty=hard" in effect["slices"]
    md = (root / "reports" / "comparison.md").read_text()
    section = md[md.index("## Calibration data"):md.index("## Pareto")]
    for name, sl in effect["slices"].items():
        assert f"| {name} | {sl['n']} |" in section, name
    from mlflow import MlflowClient

    client = MlflowClient(f"sqlite:///{root / 'mlflow.db'}")
    exp = client.get_experiment_by_name("qpipe-demo-llama")
    parents = client.search_runs([exp.experiment_id], "tags.`qpipe.role` = 'execution'",
                                 order_by=["attributes.start_time DESC"])
    metrics = parents[0].data.metrics
    prefix = f"calibration_effect/{GENERAL}-minus-{BUSINESS}"
    assert metrics[f"{prefix}/delta"] == pytest.approx(d["delta"])
    assert f"{prefix}/slice/scenario/tool_call/ci_high" in metrics
    assert f"{prefix}/slice/scenario/tool_call/p_value" in metrics


def test_the_report_names_the_pareto_front_and_draws_both_plots(pipeline_run):
    root = pipeline_run.root
    report = json.loads((root / "reports" / "comparison.json").read_text())
    front = report["pareto_optimal"]
    assert front and set(front) <= {"baseline", "gguf_q4_k_m_business"}
    md = (root / "reports" / "comparison.md").read_text()
    assert all(f"`{n}`" in md[md.index("## Pareto"):] for n in front)
    for plot in ("tradeoff.png", "slices.png"):
        assert (root / "reports" / plot).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", plot


def test_mlflow_holds_one_run_per_variant_and_track_adds_no_duplicates(pipeline_run):
    from mlflow import MlflowClient

    root = pipeline_run.root
    client = MlflowClient(f"sqlite:///{root / 'mlflow.db'}")
    exp = client.get_experiment_by_name("qpipe-demo-llama")

    def latest_execution() -> tuple[str, list]:
        parent = client.search_runs([exp.experiment_id], "tags.`qpipe.role` = 'execution'",
                                    order_by=["attributes.start_time DESC"])[0]
        children = client.search_runs([exp.experiment_id],
                                      f"tags.`mlflow.parentRunId` = '{parent.info.run_id}'")
        return parent.info.run_id, children

    parent, runs = latest_execution()
    assert sorted(r.data.tags["variant"] for r in runs) == sorted(VARIANTS)
    gptq = next(r for r in runs if r.data.tags["variant"] == BUSINESS)
    assert gptq.info.status == "FINISHED" and "accuracy" in gptq.data.metrics
    assert gptq.data.tags["engine.name"] == "vllm" and gptq.data.params["scheme"] == SCHEME
    m = gptq.data.metrics
    assert m["divergence/kld_mean"] > 0 and 0 < m["divergence/top1_agreement"] <= 1
    assert "divergence/slice/scenario/faq/kld_mean" in m and "gate/inconclusive_criteria" in m
    assert gptq.data.tags["gate.verdict"] in ("pass", "fail", "inconclusive")
    inputs = {d.dataset.name: d.dataset.digest for d in gptq.inputs.dataset_inputs}
    card = json.loads((root / "data" / "calibration" / "business" / "card.json").read_text())
    assert inputs["calibration/business"] == card["content_sha256"][:36]  # MLflow keeps 36
    evalset = json.loads((root / "data" / "evalset" / "card.json").read_text())
    assert inputs["evalset"] == evalset["content_sha256"][:36]
    total = len(client.search_runs([exp.experiment_id], max_results=1000))
    pipeline_run.qpipe("track")
    pipeline_run.qpipe("track")
    assert len(client.search_runs([exp.experiment_id], max_results=1000)) == total
    assert latest_execution()[0] == parent


def test_no_planted_pii_or_raw_id_reaches_any_output_or_the_mlflow_store(pipeline_run):
    """Every value the demo generator planted in the logs (names, addresses, e-mails, phones,
    national ids, cards, IPs, secrets) and every raw record id, searched for in everything the
    pipeline wrote after the split — data, artifacts' text files, results, reports, handoff
    bundles, logs, run records — and in everything the real MLflow store holds (its database and
    its artifact folder), read back after `track` ran."""
    import pyarrow.parquet as pq
    from demo.generator import draft, planted_pii

    root = pipeline_run.root
    demo = yaml.safe_load((root / "params.yaml").read_text())["demo"]
    planted = {value: kind for i in range(demo["logs"]["conversations"])
               for kind, value in planted_pii(draft("logs", demo["seed"], i)[0])}
    assert len(planted) > 1000 and {"PERSON", "EMAIL", "CARD", "SECRET"} <= set(planted.values())
    raw_log = "".join(p.read_text(encoding="utf-8", errors="replace")
                      for p in (root / "calibration" / "sources" / "demo").glob("*.jsonl"))
    assert all(v in raw_log for v in list(planted)[:50])  # the values are the logs' own
    weights = {".safetensors", ".gguf", ".bin", ".png"}
    texts, tables = [], 0
    for top in ("data", "artifacts", "results", "reports", "handoff", "logs", "runs", "mlruns"):
        for p in sorted((root / top).rglob("*")):
            if not p.is_file() or p.suffix in weights:
                continue
            if p.suffix == ".parquet":
                texts.append(json.dumps(pq.read_table(p).to_pylist(), ensure_ascii=False))
                tables += 1
            else:
                texts.append(p.read_bytes().decode("utf-8", errors="replace"))
    texts.append((root / "mlflow.db").read_bytes().decode("utf-8", errors="replace"))
    held = "\n".join(texts)
    # the search reaches what matters: the scrubbed eval set and calibration data, MLflow's copies
    assert tables >= 2 and len(held) > 1_000_000 and "<PERSON_1>" in held
    assert any((root / "mlruns").rglob("samples.jsonl")), "MLflow's artifact folder holds no samples"
    leaked = sorted((planted[v], v) for v in planted if v in held)
    assert leaked == [], f"{len(leaked)} planted PII values left the split: {leaked[:10]}"
    raw_ids = sorted(set(re.findall(r"\b[rc]-(?:\d{7}|dup\d{5})\b", held)))
    assert raw_ids == [], f"raw log record ids left the split: {raw_ids[:10]}"


# Hand-off files that have no contract yet (the list may only shrink: a pattern that matches
# nothing any more fails the test below, so it leaves the list).
def test_every_hand_off_file_is_read_through_its_contract(pipeline_run):
    import fnmatch

    from pipeline.config import load_params
    from pipeline.contract_map import contract_files
    from pipeline.layout import Layout

    root = pipeline_run.root
    read = set()
    for path, reader in contract_files(Layout(root, load_params(root / "params.yaml"))):
        reader(path)  # a ContractError names the file (and line) that fails
        read.add(path.relative_to(root).as_posix())
    written = {p.relative_to(root).as_posix() for d in ("data", "results", "reports", "artifacts", "handoff", "runs")
               for p in (root / d).rglob("*") if p.is_file() and p.suffix in (".json", ".jsonl")}
    # a checkpoint's own files (config.json, tokenizer.json, …) are the model's: its manifest covers them
    model_files = {p for p in written if fnmatch.fnmatch(p, "artifacts/*/*") or fnmatch.fnmatch(p, "handoff/*/model/*")}
    # the load generator's own files beside bench.json (the requests it replayed, each replay's
    # GuideLLM scenario and report): kept for a person to inspect or rerun, read by no stage —
    # bench.json carries what the comparison reads
    loadgen_files = {p for p in written if fnmatch.fnmatch(p, "results/bench/traffic/*")}
    assert loadgen_files, "bench replayed the business's traffic"
    left = sorted(written - read - model_files - loadgen_files)
    assert left == [], f"stage outputs with no contract: {left}"
    assert len(read) > 40


def test_search_tries_proposals_cheapest_first_as_ordinary_variants(pipeline_run):
    """`qpipe search` (last here: it adds variants to the project's params): each proposal tried
    is a variant of params.yaml, built from a copy of the sensitivity stage's recipe, quantized and
    evaluated by DVC like any other; the search stops at the first that passes, and its report
    says why each cheaper one did not."""
    root = pipeline_run.root
    pipeline_run.qpipe("search", "--max-candidates", "2")
    s = json.loads((root / "reports" / "certify" / "search.json").read_text())
    tried = s["tried"]
    assert tried and [t["bits_per_weight"] for t in tried] == sorted(t["bits_per_weight"] for t in tried)
    variants = yaml.safe_load((root / "params.yaml").read_text())["variants"]
    lock = yaml.safe_load((root / "dvc.lock").read_text())["stages"]
    for t in tried:
        spec = variants[t["variant"]]
        assert spec["backend"] == "llamacpp" and spec["reference"] == "gguf_f16"
        assert spec["recipe"] == f"recipes/search/{t['variant']}.yaml"
        assert any(d["path"] == spec["recipe"] for d in lock[f"quantize@{t['variant']}"]["deps"])
        assert f"evaluate@{t['variant']}" in lock and f"divergence@{t['variant']}" in lock
        manifest = json.loads((root / "artifacts" / t["variant"] / "manifest.json").read_text())
        assert manifest["content_sha256"]
        assert t["verdict"] in ("pass", "fail", "inconclusive")
        assert (t["verdict"] == "pass") == (t["why_not"] == [])
    passed = [t["variant"] for t in tried if t["verdict"] == "pass"]
    assert s["certified"] == (passed[0] if passed else None)
    assert passed in ([], [tried[-1]["variant"]])  # it stops at the first pass
    md = (root / "reports" / "certify" / "search.md").read_text()
    assert all(t["variant"] in md for t in tried) and "rank correlation" in md
    status = pipeline_run.qpipe("repro", "--jobs", "1")  # the sensitivity stage's outputs untouched
    assert not re.search(r"^sensitivity\s+ran", status, re.M), status
