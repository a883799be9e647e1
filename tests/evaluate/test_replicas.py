"""One evaluation over several engine replicas (evaluate.replicas): how a node's GPUs or CPU
cores are shared out, and real llama-server and vLLM replicas giving one engine's records."""

import json
import psutil
import pytest

from pipeline.engines.base import EngineError, get_engine
from pipeline.evaluate import stage
from pipeline.evaluate.replicas import replica_environments

from .conftest import kill_when_found, make_params
from conftest import stage_args

Q8 = "gguf_q8_0_business"


# ── sharing out a node ────────────────────────────────────────────────────────────────────


def test_each_replica_gets_its_own_gpus(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "4,5,6,7")  # what Ray gives a task, say
    vllm = get_engine("vllm")
    assert replica_environments(vllm, 2) == [{"CUDA_VISIBLE_DEVICES": "4,5"},
                                             {"CUDA_VISIBLE_DEVICES": "6,7"}]
    assert replica_environments(vllm, 3) == [{"CUDA_VISIBLE_DEVICES": g} for g in "456"]
    with pytest.raises(EngineError, match=r"evaluate.replicas is 5 but this node has 4 GPUs \(4, 5, 6, 7\)"):
        replica_environments(vllm, 5)


def test_on_a_cpu_host_vllm_replicas_bind_disjoint_cores(monkeypatch):
    import pipeline.evaluate.replicas as replicas

    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")  # no accelerator
    monkeypatch.setattr(replicas, "visible_cpus", lambda: [0, 1, 2, 3, 4])
    assert replica_environments(get_engine("vllm"), 2) == [
        {"VLLM_CPU_OMP_THREADS_BIND": "0,1"}, {"VLLM_CPU_OMP_THREADS_BIND": "2,3"}]
    # llama-server's threads are its own setting (engines.llamacpp.threads): nothing to add
    assert replica_environments(get_engine("llamacpp"), 2) == [{}, {}]
    with pytest.raises(EngineError, match="evaluate.replicas is 6 but this node has 5 CPU cores"):
        replica_environments(get_engine("vllm"), 6)


def test_vllm_runs_its_model_in_the_engine_core_unless_it_is_a_replica_or_asked(tmp_path, monkeypatch):
    monkeypatch.delenv("VLLM_ENABLE_V1_MULTIPROCESSING", raising=False)
    vllm = get_engine("vllm")
    monkeypatch.setenv("OMP_NUM_THREADS", "2")  # what a stage beside another is given
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: {0, 1, 2, 3})
    one = vllm(tmp_path, {}, log_path=tmp_path / "e.log")
    assert one.environment()["VLLM_ENABLE_V1_MULTIPROCESSING"] == "0"
    # the worker process's binding would use 3 of 4 cores (one kept for the API server)
    assert one.environment()["OMP_NUM_THREADS"] == "3"
    mine = vllm(tmp_path, {"env": {"OMP_NUM_THREADS": "8"}}, log_path=tmp_path / "e.log")
    assert mine.environment()["OMP_NUM_THREADS"] == "8"
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: {1})  # a stage's one-core share
    assert one.environment()["OMP_NUM_THREADS"] == "1"
    asked = vllm(tmp_path, {"worker_process": True}, log_path=tmp_path / "e.log")
    assert "VLLM_ENABLE_V1_MULTIPROCESSING" not in asked.environment()
    assert asked.environment()["OMP_NUM_THREADS"] == "2"
    replica = vllm(tmp_path, {}, log_path=tmp_path / "e.log")
    replica.extra_env = {"VLLM_CPU_OMP_THREADS_BIND": "0,1"}  # its worker binds its own cores
    assert "VLLM_ENABLE_V1_MULTIPROCESSING" not in replica.environment()


# ── real replicas ─────────────────────────────────────────────────────────────────────────


def _records(path):
    return [json.loads(x) for x in (path / "samples.jsonl").read_text().splitlines()]


def _same_records(a, b):
    keys = ("id", "output", "score", "output_tokens", "finish_reason", "prompt_tokens")
    return [[r[k] for k in keys] for r in a] == [[r[k] for k in keys] for r in b]


@pytest.mark.slow
def test_two_llama_server_replicas_give_one_engines_records_in_order(served, tmp_path):
    served.artifact(Q8)
    one = make_params(served.data, evaluate={"limit": 160})
    two = make_params(served.data, evaluate={"limit": 160, "replicas": 2})
    m1 = stage.evaluate(*stage_args(one, served.root, stage.PARAMS, Q8), Q8, tmp_path / "one")
    m2 = stage.evaluate(*stage_args(two, served.root, stage.PARAMS, Q8), Q8, tmp_path / "two")
    assert _same_records(_records(tmp_path / "one"), _records(tmp_path / "two"))
    assert m1["accuracy"] == m2["accuracy"] and m2["n"] == 160
    run = json.loads((tmp_path / "two" / "run.json").read_text())
    served_by = run["engine"]["details"]["replicas"]["requests_served"]
    assert len(served_by) == 2 and min(served_by) > 0
    # lm-eval's business task asks through the same client (the record cache is off in tests: served again)
    lm_eval = sum((m2.get("lm_eval") or {}).get("n_samples", {}).values())
    assert sum(served_by) == 160 + two.evaluate.warmup + lm_eval
    assert run["settings"]["replicas"] == 2
    assert (tmp_path / "two" / "engine-2.log").is_file()
    assert "replicas" not in json.loads((tmp_path / "one" / "run.json").read_text())["engine"]["details"]


@pytest.mark.slow
def test_a_replica_that_dies_fails_the_evaluation_naming_it(served, tmp_path):
    served.artifact(Q8)
    params = make_params(served.data, evaluate={"replicas": 2, "concurrency": 1,
                                                "out_dir": "replica-kill"})

    def second_replica():  # its own log: engine-2.log, once it has served a few
        logs = list((served.root / "replica-kill").glob(".staging-*/*/engine-2.log"))
        text = logs[0].read_text() if logs else ""
        if text.count("print_timing") <= 10:
            return None
        port = text.splitlines()[0].split("--port ")[1].split()[0]
        return next((p for p in psutil.process_iter(["cmdline"]) if (cmd := p.info["cmdline"] or [])
                     and "llama-server" in cmd[0] and str(served.root) in " ".join(cmd) and "--port" in cmd
                     and cmd[cmd.index("--port") + 1] == port), None)

    killer = kill_when_found(second_replica)
    with pytest.raises(EngineError, match="replica 2 of 2") as err:
        stage.run(*stage_args(params, served.root, stage.PARAMS, Q8), Q8)
    killer.thread.join()
    killed = killer.killed
    assert killed, "the second replica was never seen serving"
    # "exited with code -9", or, when the reset connection is seen before the process is gone
    # (a loaded machine), "request failed": either way the replica, its log and its tail
    assert "engine-2.log" in str(err.value) and "log tail" in str(err.value)
    assert not (served.root / "replica-kill" / Q8 / "metrics.json").exists()


@pytest.mark.slow
def test_an_engine_this_stage_does_not_start_as_a_process_has_no_replicas(served, tmp_path):
    served.artifact("baseline")
    data = json.loads(json.dumps(served.data))
    data["variants"]["baseline"].update(engine="transformers", reason="the in-process reference")
    params = make_params(data, evaluate={"replicas": 2, "limit": 4})
    with pytest.raises(stage.EvaluateError, match="served by transformers.*fix: evaluate.replicas: 1"):
        stage.evaluate(*stage_args(params, served.root, stage.PARAMS, "baseline"), "baseline", tmp_path / "t")


@pytest.mark.slow
def test_two_vllm_replicas_on_their_own_cores_give_one_engines_records(served, tmp_path):
    served.artifact("baseline")
    one = make_params(served.data, evaluate={"limit": 64})
    two = make_params(served.data, evaluate={"limit": 64, "replicas": 2})
    stage.evaluate(*stage_args(one, served.root, stage.PARAMS, "baseline"), "baseline", tmp_path / "one")
    stage.evaluate(*stage_args(two, served.root, stage.PARAMS, "baseline"), "baseline", tmp_path / "two")
    assert _same_records(_records(tmp_path / "one"), _records(tmp_path / "two"))
    logs = [(tmp_path / "two" / f).read_text() for f in ("engine.log", "engine-2.log")]
    binds = [[line for line in log.splitlines() if "VLLM_CPU_OMP_THREADS_BIND=" in line][0] for log in logs]
    assert "VLLM_CPU_OMP_THREADS_BIND='0'" in binds[0] and "VLLM_CPU_OMP_THREADS_BIND='1'" in binds[1]
