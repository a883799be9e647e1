"""Point 5 — a SIGTERM during `qpipe calib split` (worker processes scrubbing in parallel) stops
its workers and leaves no staging folder or temporary file behind."""

import signal
import subprocess
import sys
import time

import pytest
import yaml

from demo.generator import write_logs
from pipeline.processes import group_members

from .conftest import REPO

pytestmark = pytest.mark.slow


def test_sigterm_during_the_split_leaves_no_staging_folder_or_worker(tmp_path):
    write_logs(tmp_path / "logs", seed=7, conversations=20000, days=60, end_date="2026-11-15",
               malformed_share=0.01, duplicate_share=0.02)
    import shutil

    shutil.copytree(REPO / "recipes", tmp_path / "recipes")  # the project validates before work
    data = yaml.safe_load((REPO / "params.yaml").read_text())
    data["data"]["general_corpus"] = None
    data["calibration"]["sets"] = {"business": data["calibration"]["sets"]["business"]}
    for name in [n for n, v in data["variants"].items() if v.get("calibration") not in ("business", "none")]:
        del data["variants"][name]
    data["model"]["path"] = str(REPO / "models" / "demo")
    data["data"]["sources"] = ["logs"]
    data["split"]["workers"] = 2
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(data))
    proc = subprocess.Popen([sys.executable, "-m", "pipeline.cli", "calib", "split",
                             "--params", str(tmp_path / "params.yaml")], cwd=tmp_path,
                            start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    deadline = time.monotonic() + 120
    while not list((tmp_path / "data").glob(".staging-*")):
        assert proc.poll() is None, proc.stderr.read()
        assert time.monotonic() < deadline, "the split never staged its output"
        time.sleep(0.1)
    time.sleep(2)  # workers scrubbing
    assert proc.poll() is None, "finished before the signal: nothing was tested"
    assert len(group_members(proc.pid)) > 1  # the worker processes are running
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=60)
    assert proc.returncode != 0
    time.sleep(1)
    assert group_members(proc.pid) == []  # no worker left
    assert list((tmp_path / "data").glob(".staging-*")) == []
    assert not (tmp_path / "data" / "evalset").exists()
    assert [p for p in tmp_path.iterdir() if p.name.startswith("tmp")] == []  # its temp folder
