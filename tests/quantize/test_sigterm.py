"""A SIGTERM during a real quantization (llm-compressor, in process) takes the Ctrl-C path: the
staging folder is removed, no worker outlives the command, nothing half-written is left."""

import signal
import subprocess
import sys
import time

import pytest
import yaml

from pipeline.processes import group_members

pytestmark = pytest.mark.slow


def test_sigterm_during_a_quantization_leaves_no_staging_folder_or_worker(project):
    params = project.root / "params-sigterm.yaml"
    params.write_text(yaml.safe_dump(project.data, sort_keys=False))
    artifacts = project.root / "artifacts"
    proc = subprocess.Popen([sys.executable, "-m", "pipeline.cli", "quantize", "w8a8_int8_business",
                             "--params", str(params)], cwd=project.root, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 180
    while not list(artifacts.glob(".staging-*")):
        assert proc.poll() is None, proc.stderr.read()
        assert time.monotonic() < deadline, "the quantization never staged its output"
        time.sleep(0.2)
    time.sleep(3)  # well inside the work
    assert proc.poll() is None, "finished before the signal: nothing was tested"
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=120)
    assert proc.returncode != 0
    assert list(artifacts.glob(".staging-*")) == [] and list(artifacts.glob(".old-*")) == []
    assert not (artifacts / "w8a8_int8_business").exists()
    assert group_members(proc.pid) == []  # no worker of its process group is left
