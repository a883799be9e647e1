"""A DVC remote for data and artifacts, as the team set-up uses it, against a local directory:
push a stage's output, lose the cache and the workspace copy, pull it back byte for byte."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import REPO

pytestmark = pytest.mark.slow
DVC = REPO / ".venv/bin/dvc"


def sh(cwd: Path, env: dict, *cmd: str) -> str:
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, f"{' '.join(cmd)} failed in {cwd}:\n{done.stdout}{done.stderr}"
    return done.stdout


def test_push_then_pull_restores_the_same_bytes(tmp_path):
    if not shutil.which("git"):
        pytest.skip("git is not installed: DVC projects live in a git repository")
    project, remote = tmp_path / "project", tmp_path / "remote"
    project.mkdir()
    env = os.environ | {"DVC_NO_ANALYTICS": "1", "DVC_SITE_CACHE_DIR": str(tmp_path / "site-cache"),
                        "GIT_AUTHOR_NAME": "qpipe", "GIT_AUTHOR_EMAIL": "qpipe@example.invalid",
                        "GIT_COMMITTER_NAME": "qpipe", "GIT_COMMITTER_EMAIL": "qpipe@example.invalid"}
    sh(project, env, "git", "init", "-q")
    sh(project, env, str(DVC), "init", "-q")
    # A stage with an output folder, like quantize@<variant> and artifacts/<variant>/.
    make = ("import os, pathlib; d = pathlib.Path('artifacts/v'); d.mkdir(parents=True, exist_ok=True); "
            "(d / 'model.bin').write_bytes(os.urandom(300_000)); (d / 'manifest.json').write_text('{}')")
    sh(project, env, str(DVC), "stage", "add", "-q", "-n", "quantize", "-o", "artifacts/v",
       f'{shlex.quote(sys.executable)} -c "{make}"')
    sh(project, env, str(DVC), "repro", "-q")
    before = {p.name: p.read_bytes() for p in (project / "artifacts/v").iterdir()}
    sh(project, env, str(DVC), "remote", "add", "-d", "local", str(remote))
    sh(project, env, "git", "add", "-A")
    sh(project, env, "git", "commit", "-q", "-m", "stage and remote")
    sh(project, env, str(DVC), "push", "-q")
    assert any(p.is_file() for p in remote.rglob("*"))

    shutil.rmtree(project / ".dvc/cache")
    shutil.rmtree(project / "artifacts")
    sh(project, env, str(DVC), "pull", "-q")
    after = {p.name: p.read_bytes() for p in (project / "artifacts/v").iterdir()}
    assert after == before
    status = sh(project, env, str(DVC), "status", "--json")
    assert status.strip() in ("{}", ""), status
