"""The team set-up, for real: a local PostgreSQL, `mlflow server` on it with proxied artifacts,
and `run()` logging to it over HTTP — then read back through MlflowClient."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import mlflow.artifacts
import pytest
from mlflow import MlflowClient

from pipeline import tracking
from .conftest import CALIB_SHA, FAILED, VARIANTS, free_port, mlflow_server, skip_or_fail
from conftest import stage_args

pytestmark = pytest.mark.slow
APT = ["apt-get", "install", "-y", "-q", "--no-install-recommends", "postgresql"]


def pg_bin() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if found:
        return Path(found[-1]).parent
    which = shutil.which("initdb")
    return Path(which).parent if which else None


def find_or_install() -> Path:
    """PostgreSQL's binaries; installed from Debian's package when missing and we may (as
    `.ci/run` does); a skip that says so otherwise."""
    if pg_bin() is None and os.geteuid() == 0 and shutil.which("apt-get"):
        if subprocess.run(APT, capture_output=True).returncode != 0:
            subprocess.run(["apt-get", "update", "-q"], capture_output=True)
            subprocess.run(APT, capture_output=True)
    found = pg_bin()
    if found is None:
        skip_or_fail("PostgreSQL is not installed and could not be installed here: run "
                     "`apt-get install -y postgresql` (as root), or `bash .ci/run`")
    return found


def as_postgres(cmd: list[str]) -> list[str]:
    # PostgreSQL refuses to run as root: run it as the package's `postgres` user then.
    return ["runuser", "-u", "postgres", "--", *cmd] if os.geteuid() == 0 else cmd


@contextmanager
def postgresql(password: str):
    """A throw-away cluster on a free port; yields (port, seconds from initdb to accepting)."""
    bindir = find_or_install()
    # Not tmp_path: pytest's folders are private to root, and the server runs as `postgres`.
    base = Path(tempfile.mkdtemp(prefix="qpipe-pg-"))
    pwfile = base / "pw"
    pwfile.write_text(password + "\n")
    if os.geteuid() == 0:
        shutil.chown(base, "postgres")
        shutil.chown(pwfile, "postgres")
    port = free_port()
    start = time.monotonic()
    run = lambda *cmd: subprocess.run(as_postgres(list(cmd)), capture_output=True, text=True)  # noqa: E731
    try:
        done = run(str(bindir / "initdb"), "-D", str(base / "data"), "-U", "mlflow", "-E", "UTF8",
                   f"--pwfile={pwfile}", "--auth=scram-sha-256")
        assert done.returncode == 0, done.stdout + done.stderr
        done = run(str(bindir / "pg_ctl"), "-D", str(base / "data"), "-l", str(base / "pg.log"),
                   "-w", "-o", f"-p {port} -k {base} -c listen_addresses=127.0.0.1", "start")
        assert done.returncode == 0, done.stdout + done.stderr + (base / "pg.log").read_text()
        yield port, time.monotonic() - start
    finally:
        run(str(bindir / "pg_ctl"), "-D", str(base / "data"), "-m", "fast", "stop")
        shutil.rmtree(base, ignore_errors=True)


def create_database(port: int, password: str, name: str) -> None:
    import psycopg

    dsn = f"host=127.0.0.1 port={port} user=mlflow password={password} dbname=postgres"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")


def test_log_to_a_tracking_server_on_postgresql(evaluated, tmp_path, capsys, monkeypatch):
    params, root = evaluated
    password = "s3cret-pw"
    with postgresql(password) as (port, pg_seconds):
        create_database(port, password, "mlflow")
        backend = f"postgresql+psycopg://mlflow:{password}@127.0.0.1:{port}/mlflow"
        artifacts = tmp_path / "artifact-store"
        with mlflow_server(backend, tmp_path / "server.log",
                           artifacts=["--artifacts-destination", str(artifacts)]) as (url, took):
            start = time.monotonic()
            summary = tracking.run(*stage_args(params, root, tracking.log.PARAMS), tracking_uri=url)
            first_log = time.monotonic() - start
            again = tracking.run(*stage_args(params, root, tracking.log.PARAMS), tracking_uri=url)
            check_runs(url, summary)
            monkeypatch.setenv("MLFLOW_REGISTRY_URI", url)  # `models:/` URIs resolve through it
            check_registry(params, root, url, tmp_path)
    assert sorted(summary["logged"]) == sorted(VARIANTS) and again["logged"] == []
    assert any(artifacts.rglob("samples.jsonl"))  # uploaded through the server, not written aside
    with capsys.disabled():
        print(f"\n[figures] PostgreSQL initdb+start {pg_seconds:.1f} s; mlflow server on it "
              f"answered /health after {took:.1f} s; first run() {first_log:.1f} s")


def check_runs(url: str, summary: dict) -> None:
    client = MlflowClient(url)
    exp = client.get_experiment_by_name("tiny-llama")
    runs = client.search_runs([exp.experiment_id], "tags.`qpipe.role` = 'variant'")
    assert sorted(r.info.run_name for r in runs) == sorted(VARIANTS)
    by_name = {r.info.run_name: r for r in runs}
    assert by_name[FAILED].info.status == "FAILED"
    gptq = by_name["gptq_w4a16_business"]
    assert gptq.data.tags["mlflow.parentRunId"] == summary["parent_run_id"]
    assert gptq.data.metrics["slice/scenario/faq/accuracy"] == 0.5
    digests = {d.dataset.name: d.dataset.digest for d in gptq.inputs.dataset_inputs}
    assert digests["calibration/business"] == CALIB_SHA[:36]
    assert "results/samples.jsonl" in {a.path for a in client.list_artifacts(gptq.info.run_id, "results")}


def check_registry(params, root: Path, url: str, tmp_path: Path) -> None:
    """Approval against the team server: the bundle goes up through the server's artifact
    proxy and comes back down from `models:/<name>@approved`."""
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / "model.safetensors").write_bytes(b"\x00weights" * 1000)
    (bundle / "SHA256SUMS").write_text("0" * 64 + "  model.safetensors\n")
    out = tracking.register(params, root, "gptq_w4a16_business", bundle, {"approved_by": "ana"},
                            tracking_uri=url)
    client = MlflowClient(url, registry_uri=url)
    assert client.get_model_version_by_alias("tiny-llama", "approved").version == out["version"]
    got = mlflow.artifacts.download_artifacts("models:/tiny-llama@approved",
                                              dst_path=str(tmp_path / "dl"), tracking_uri=url)
    assert (Path(got) / "model.safetensors").read_bytes() == (bundle / "model.safetensors").read_bytes()
