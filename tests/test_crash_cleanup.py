"""What a killed run leaves behind, and what the next run does with it: staging folders named
for their owner and ignored by DVC, removed once the owner is gone; a stage command that dies
with whoever started it; a busy workspace that says who holds it."""

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

from pipeline import io
from pipeline.orchestrate.repro import ReproError, repro
from pipeline.orchestrate.strays import stale_staging

REPO = Path(__file__).resolve().parents[1]
DVC = Path(sys.executable).parent / "dvc"


def gone(pid: int, within: float) -> bool:
    deadline = time.time() + within
    while time.time() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.1)
    return False


def killed_writer(parent: Path) -> Path:
    """A process that stages an output in `parent` and is SIGKILLed mid-write."""
    code = textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {str(REPO)!r})
        from pathlib import Path
        from pipeline.io import atomic_dirs
        with atomic_dirs(Path({str(parent)!r}), ["out"]) as d:
            (d["out"] / "half.txt").write_text("half")
            print("staged", flush=True)
            time.sleep(60)
    """)
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "staged"
    p.kill()
    p.wait()
    left = [e for e in parent.iterdir() if e.name.startswith(".staging-")]
    assert len(left) == 1 and (left[0] / "out" / "half.txt").is_file()
    return left[0]


def test_a_killed_writers_staging_is_removed_by_the_next_write_and_nothing_else(tmp_path):
    parent = tmp_path / "results"
    left = killed_writer(parent)
    assert io.stale_staging(parent) == [left]
    mine = parent / f".staging-{io._host()}-{os.getpid()}-livelive"  # a live owner: this process
    other = parent / ".staging-otherhost-1-abcdefgh"               # another host's: never touched
    mine.mkdir()
    other.mkdir()
    with io.atomic_dirs(parent, ["out"]) as d:
        (d["out"] / "whole.txt").write_text("whole")
    assert not left.exists() and mine.exists() and other.exists()
    assert (parent / "out" / "whole.txt").read_text() == "whole"
    # `qpipe repro` sweeps the workspace before it runs anything
    left = killed_writer(parent / "divergence")
    assert stale_staging(tmp_path) == [left]


def test_dvc_ignores_a_staging_folder_left_in_a_dependency(tmp_path):
    """A stage that depends on results/ is not 'changed' by a killed run's staging folder there."""
    ws = tmp_path / "ws"
    ws.mkdir()
    env = {**os.environ, "DVC_NO_ANALYTICS": "1"}
    run = lambda *a: subprocess.run([str(DVC), *a], cwd=ws, env=env, capture_output=True, text=True, check=True)  # noqa: E731
    run("init", "--no-scm", "-q")
    shutil.copy(REPO / ".dvcignore", ws / ".dvcignore")
    (ws / "results").mkdir()
    (ws / "results" / "a.txt").write_text("a")
    (ws / "dvc.yaml").write_text("stages:\n  report:\n    cmd: cat results/a.txt > report.txt\n"
                                 "    deps: [results]\n    outs: [report.txt]\n")
    run("repro", "-q")
    assert "up to date" in run("status").stdout.lower()
    killed_writer(ws / "results")
    assert "up to date" in run("status").stdout.lower(), run("status").stdout
    (ws / "results" / "b.txt").write_text("b")  # the control: a real change is seen
    assert "changed deps" in run("status").stdout


@pytest.mark.parametrize("stage,shell", [(True, None), (True, "/bin/sh"), (True, "/bin/bash"),
                                         (False, None), (False, "/bin/sh")])
def test_a_stage_command_dies_with_the_process_that_started_it(stage, shell):
    """DVC_STAGE set (a command DVC or `qpipe repro` runs): SIGTERM when its launcher is
    SIGKILLed, also when DVC started it through a shell that stays as its parent (dash, Debian's
    /bin/sh, does not exec a lone command). Without it (a command a user started), nothing
    changes."""
    if shell and not Path(shell).exists():
        pytest.skip(f"no {shell} here")
    child = textwrap.dedent(f"""
        import os, sys, time
        sys.path.insert(0, {str(REPO)!r})
        from pipeline.processes import stage_dies_with_launcher
        stage_dies_with_launcher()
        print(os.getpid(), flush=True)
        time.sleep(60)
    """)
    launcher = textwrap.dedent(f"""
        import shlex, subprocess, sys, time
        cmd = [sys.executable, "-c", {child!r}]
        if {shell!r}:
            cmd = [{shell!r}, "-c", shlex.join(cmd)]
        p = subprocess.Popen(cmd, stdout=sys.stdout)
        time.sleep(60)
    """)
    env = {k: v for k, v in os.environ.items() if k != "DVC_STAGE"}
    if stage:
        env["DVC_STAGE"] = "evaluate@baseline"
    lp = subprocess.Popen([sys.executable, "-c", launcher], stdout=subprocess.PIPE, text=True, env=env)
    pid = int(lp.stdout.readline())
    lp.kill()
    lp.wait()
    try:
        assert gone(pid, 10) == stage
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def test_a_second_run_says_which_process_holds_the_workspace(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    subprocess.run([str(DVC), "init", "--no-scm", "-q"], cwd=ws, check=True)
    (ws / "dvc.yaml").write_text("stages:\n  a:\n    cmd: echo a > a.txt\n    outs: [a.txt]\n")
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent("""
        import sys, time, zc.lockfile
        lock = zc.lockfile.LockFile(sys.argv[1])
        print("held", flush=True)
        time.sleep(60)
    """), str(ws / ".dvc" / "tmp" / "lock")], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(ReproError) as err:
            repro(ws, jobs=1, say=lambda line: None)
        msg = str(err.value)
        assert f"process {holder.pid}" in msg and "zc.lockfile" in msg and f"kill {holder.pid}" in msg
        assert not (ws / "a.txt").exists()
    finally:
        holder.kill()
        holder.wait()
    repro(ws, jobs=1, say=lambda line: None)  # the holder gone, the lock went with it
    assert (ws / "a.txt").read_text().strip() == "a"
