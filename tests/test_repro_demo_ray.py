"""The demo pipeline (a small matrix: both engines, every stage) run twice from the same inputs:
serially by `dvc repro`, and by `qpipe repro --execution ray --jobs 2` on a real local Ray
cluster (a head and a worker node, separate processes). The artifacts are byte for byte the
same, every evaluation output is the same, `dvc status` is clean, and MLflow holds the same
runs with the same accuracies."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from test_dvc_pipeline import copy_project, venv_bin
from test_repro_ray import BIN, ray_cmd

pytest.importorskip("ray")
pytestmark = [pytest.mark.slow, pytest.mark.timeout(2400)]
VARIANTS = ("baseline", "gguf_f16", "gguf_q4_k_m_business")
PORT = 6393


def small_project(repo: Path, root: Path) -> None:
    root.mkdir(parents=True)
    copy_project(repo, root)
    params = yaml.safe_load((root / "params.yaml").read_text())
    params["variants"] = {k: v for k, v in params["variants"].items() if k in VARIANTS}
    params["serving"]["upgrades"] = {}  # the upgrades serve variants left out here
    params["compare"]["noise_floor"] = {}
    (root / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))


def mlflow_runs(root: Path) -> dict[str, tuple]:
    """Each variant's run (status, accuracy) and how many pipeline runs hold them (a pipeline
    run is named by its execution's id, a hash of its inputs: params.yaml differs here by its
    `execution` section)."""
    import mlflow

    client = mlflow.MlflowClient(tracking_uri=f"sqlite:///{root / 'mlflow.db'}")
    runs = [r for e in client.search_experiments() for r in client.search_runs([e.experiment_id])]
    out = {r.data.tags["variant"]: (r.info.status, r.data.metrics.get("accuracy"))
           for r in runs if r.data.tags.get("qpipe.role") == "variant"}
    out["pipeline runs"] = sum(r.info.run_name.startswith("pipeline ") for r in runs)
    return out


def test_the_demo_on_ray_matches_the_serial_run(repo, tmp_path):
    bin_dir = venv_bin(repo)
    serial, parallel = tmp_path / "serial", tmp_path / "parallel"
    for root in (serial, parallel):
        small_project(repo, root)
    env = os.environ | {"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
                        "DVC_NO_ANALYTICS": "1", "RAY_USAGE_STATS_ENABLED": "0",
                        "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                        "TOKENIZERS_PARALLELISM": "false", "GIT_CONFIG_GLOBAL": str(tmp_path / "gitconfig")}

    def run(root: Path, *cmd: str) -> str:
        done = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=2000)
        assert done.returncode == 0, f"{' '.join(cmd)}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        return done.stdout + done.stderr

    for root in (serial, parallel):
        run(root, "git", "init", "-q")
        run(root, str(bin_dir / "dvc"), "init", "-q")
    run(serial, str(bin_dir / "dvc"), "repro")

    temp = Path(f"/tmp/qrd-{os.getpid()}")
    address = f"127.0.0.1:{PORT}"
    ray_cmd("start", "--head", "--node-ip-address=127.0.0.1", f"--port={PORT}", "--num-cpus=1",
            f"--temp-dir={temp}", "--include-dashboard=false", env=env)
    try:
        ray_cmd("start", f"--address={address}", "--node-ip-address=127.0.0.1", "--num-cpus=1", env=env)
        params = yaml.safe_load((parallel / "params.yaml").read_text())
        params["execution"] = {"backend": "ray", "jobs": 2, "ray": {
            "address": address, "stages": {"default": {"num_cpus": 1}},
            "forward_env": ["HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "TOKENIZERS_PARALLELISM"]}}
        (parallel / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
        out = run(parallel, str(bin_dir / "qpipe"), "repro")
    finally:
        subprocess.run([str(BIN / "ray"), "stop", "--force"], env=env, capture_output=True, timeout=120)
        shutil.rmtree(temp, ignore_errors=True)

    assert "ran on Ray node" in out
    # both nodes ran stages (one CPU each, two stages at once)
    assert len({line.split("ran on Ray node ")[1].split()[0] for line in out.splitlines()
                if "ran on Ray node " in line}) == 2
    status = run(parallel, str(bin_dir / "dvc"), "status", "--json")
    assert status.strip().splitlines()[-1] in ("{}", "")
    locks = [yaml.safe_load((r / "dvc.lock").read_text())["stages"] for r in (serial, parallel)]
    assert list(locks[0]) == list(locks[1])  # the same entries, in the same order
    for name, spec in locks[0].items():
        for out_s, out_p in zip(spec.get("outs", []), locks[1][name].get("outs", [])):
            if out_s["path"].startswith(("artifacts/", "data/")):
                assert out_s["md5"] == out_p["md5"], out_s["path"]  # byte for byte
    for v in VARIANTS:
        a, b = ([json.loads(x)["output"] for x in (r / "results" / v / "samples.jsonl").read_text().splitlines()]
                for r in (serial, parallel))
        assert a == b and len(a) == 40, v
    runs = mlflow_runs(serial)
    assert runs == mlflow_runs(parallel)
    assert set(runs) == {*VARIANTS, "pipeline runs"} and runs["pipeline runs"] == 1
    assert all(status == "FINISHED" and acc > 0.5 for status, acc in (runs[v] for v in VARIANTS))
