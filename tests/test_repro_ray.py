"""`qpipe repro` with `execution: ray` on a real local Ray cluster: a head and a worker node,
each its own `ray start` process. Stages run as tasks on the node whose resources they ask
for, two of them at once; dvc.lock is what a serial `dvc repro` leaves; a killed worker node
fails only its own stages, with Ray's error, and a re-run finishes the rest."""

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from pipeline.config.execution import RayConfig
from pipeline.orchestrate.repro import ReproError, repro

from test_repro_jobs import dvc, projects  # noqa: F401  (the fixture: two twin DVC projects)

ray = pytest.importorskip("ray")
pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]
BIN = Path(sys.executable).parent
PORT = 6391


def ray_cmd(*args: str, env: dict) -> None:
    subprocess.run([str(BIN / "ray"), *args], env=env, check=True, capture_output=True, timeout=120)


@pytest.fixture
def cluster(tmp_path_factory):
    """A head (resource `head`) and a worker node (resource `worker`, 2 slots), stopped after."""
    temp = Path(f"/tmp/qrt-{uuid.uuid4().hex[:6]}")  # socket paths must stay short
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "PATH": f"{BIN}:{os.environ['PATH']}"}
    address = f"127.0.0.1:{PORT}"
    ray_cmd("start", "--head", "--node-ip-address=127.0.0.1", f"--port={PORT}", "--num-cpus=2",
            '--resources={"head": 2}', f"--temp-dir={temp}", "--include-dashboard=false", env=env)

    def add_worker() -> None:
        ray_cmd("start", f"--address={address}", "--node-ip-address=127.0.0.1", "--num-cpus=2",
                '--resources={"worker": 2}', env=env)

    add_worker()
    yield {"address": address, "add_worker": add_worker}
    if ray.is_initialized():
        ray.shutdown()
    subprocess.run([str(BIN / "ray"), "stop", "--force"], env=env, capture_output=True, timeout=120)
    shutil.rmtree(temp, ignore_errors=True)


def config(address: str) -> RayConfig:
    # gen stages on the worker node (both at once: half its `worker` resource each), the rest
    # on the head
    # on the head; the test's switches reach the tasks as a setting would (forward_env)
    return RayConfig.model_validate({"address": address, "forward_env": ["BARRIER", "HOLD", "FAIL"],
                                     "stages": {
        "gen": {"num_cpus": 0.5, "resources": {"worker": 1}},
        "default": {"num_cpus": 0.5, "resources": {"head": 1}}}})


def worker_node() -> dict:
    return next(n for n in ray.nodes() if n["Alive"] and "worker" in n["Resources"])


def kill_node(node: dict) -> None:
    """SIGKILL the node's raylet (what a preempted or crashed machine looks like to Ray)."""
    import psutil

    socket_name = node["RayletSocketName"]
    for proc in psutil.process_iter(["cmdline"]):
        cmd = " ".join(proc.info["cmdline"] or [])
        if "raylet" in cmd and socket_name in cmd:
            os.kill(proc.pid, signal.SIGKILL)
            return
    raise AssertionError(f"no raylet process for {socket_name}")


def test_stages_run_as_tasks_on_the_nodes_they_ask_for(cluster, projects, monkeypatch):  # noqa: F811
    from pipeline.orchestrate.ray_executor import RayExecutor

    serial, parallel = projects
    dvc(serial, "repro")
    monkeypatch.setenv("BARRIER", "1")  # gen@a and gen@b can only finish side by side
    executor = RayExecutor(config(cluster["address"]))
    lines: list[str] = []
    outcomes = repro(parallel, jobs=3, executor=executor, say=lines.append)
    assert [o.status for o in outcomes] == ["ran"] * 4
    worker = worker_node()["NodeID"]
    assert executor.nodes["gen@a"] == executor.nodes["gen@b"] == worker
    assert executor.nodes["solo"] != worker and executor.nodes["agg"] != worker
    assert any(line.startswith("[gen@a] ran on Ray node") for line in lines)
    # Ray's own OMP_NUM_THREADS (the task's CPUs) does not reach the command: a thread count
    # changes results, so it is the node's own, as in a local run
    assert (parallel / "trace" / "a.env").read_text() == "- PASSIVE"
    assert (parallel / "dvc.lock").read_bytes() == (serial / "dvc.lock").read_bytes()
    assert dvc(parallel, "status", "--json").stdout.strip() in ("{}", "")


def test_a_killed_node_fails_only_its_stages_and_a_rerun_finishes(cluster, projects, monkeypatch):  # noqa: F811
    from pipeline.orchestrate.ray_executor import RayExecutor

    serial, parallel = projects
    # the serial twin goes through the same history: both gen stages fail, the rest is re-run
    monkeypatch.setenv("FAIL", "a,b")
    assert dvc(serial, "repro", "--keep-going", check=False).returncode != 0
    monkeypatch.delenv("FAIL")
    dvc(serial, "repro")
    monkeypatch.setenv("BARRIER", "1")
    executor = RayExecutor(config(cluster["address"]))
    executor.connect()
    node = worker_node()

    def kill_when_running() -> None:  # both gen stages are inside their command: kill the node
        sync = parallel / "sync"
        deadline = time.time() + 120
        while not ((sync / "a").exists() and (sync / "b").exists()) and time.time() < deadline:
            time.sleep(0.05)
        kill_node(node)

    monkeypatch.setenv("HOLD", str(parallel / "release"))  # gen waits for this file: never comes
    killer = threading.Thread(target=kill_when_running)
    killer.start()
    with pytest.raises(ReproError) as err:
        repro(parallel, jobs=3, executor=executor, say=lambda s: None)
    killer.join()
    status = {o.stage: o.status for o in err.value.outcomes}
    assert status == {"gen@a": "failed", "gen@b": "failed", "solo": "ran", "agg": "not run"}
    details = {o.stage: o.detail for o in err.value.outcomes}
    assert "NodeDiedError" in details["gen@a"] or "WorkerCrashedError" in details["gen@a"], details
    assert "depends on gen@a, gen@b, which failed" in details["agg"] or "which failed" in details["agg"]

    # a new worker node joins; the re-run runs what is left
    cluster["add_worker"]()
    monkeypatch.delenv("HOLD")
    shutil.rmtree(parallel / "sync", ignore_errors=True)
    outcomes = repro(parallel, jobs=3, executor=RayExecutor(config(cluster["address"])), say=lambda s: None)
    assert {o.stage: o.status for o in outcomes} == {
        "gen@a": "ran", "gen@b": "ran", "solo": "unchanged", "agg": "ran"}
    assert (parallel / "dvc.lock").read_bytes() == (serial / "dvc.lock").read_bytes()
    assert dvc(parallel, "status", "--json").stdout.strip() in ("{}", "")
