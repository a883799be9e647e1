"""The DVC adapter's contract with the pinned DVC: `qpipe repro` uses DVC internals
(pipeline/orchestrate/dvc_adapter.py), so the pin, their presence and what the scheduler relies
on them to do are checked here, on a small DVC project of its own."""

from __future__ import annotations

import ast
import contextlib
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

dvc = pytest.importorskip("dvc")

from pipeline.orchestrate import dvc_adapter  # noqa: E402
from pipeline.orchestrate.dvc_adapter import INTERNALS, Project  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def test_the_installed_dvc_is_the_pinned_one():
    pyproject = (REPO / "pyproject.toml").read_text()
    pins = re.findall(r'"dvc==([\d.]+)"', pyproject)
    constraint = re.findall(r"^dvc==([\d.]+)$", (REPO / "constraints" / "core.txt").read_text(), re.M)
    assert pins and pins == constraint, "pyproject.toml and constraints/core.txt pin one DVC version"
    assert dvc.__version__ == pins[0], (f"DVC {dvc.__version__} is installed, the adapter is checked "
                                        f"against {pins[0]}: run this file on it before moving the pin")


@pytest.mark.parametrize("module,name", INTERNALS, ids=[f"{m}.{n}" for m, n in INTERNALS])
def test_every_internal_the_adapter_uses_exists(module, name):
    assert hasattr(importlib.import_module(module), name), f"{module}.{name} is gone from DVC {dvc.__version__}"


def test_the_yaml_writer_made_atomic_has_the_shape_the_adapter_replaces_it_with():
    import inspect

    from dvc.utils.serialize import _common

    assert list(inspect.signature(_common._dump_data).parameters)[:4] == ["path", "data", "dumper", "fs"]
    assert "_dump_data(" in inspect.getsource(_common._modify_data)  # the write modify_yaml makes


def test_the_adapter_is_the_only_module_that_imports_dvc():
    importers = []
    for path in sorted((REPO / "pipeline").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if any(n == "dvc" or n.startswith("dvc.") for n in names):
                importers.append(path.relative_to(REPO).as_posix())
    assert set(importers) == {"pipeline/orchestrate/dvc_adapter.py"}
    used = {(m, n) for m, n in INTERNALS}
    tree = ast.parse((REPO / "pipeline/orchestrate/dvc_adapter.py").read_text(encoding="utf-8"))
    imported = {(node.module, a.name) for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                and (node.module or "").startswith("dvc") for a in node.names}
    assert imported - {("dvc.repo", "Repo")} == used, "INTERNALS lists exactly what the adapter imports"


def test_a_command_line_runs_through_the_users_shell_without_its_rc_files(monkeypatch):
    monkeypatch.setenv("SHELL", "/bin/bash")
    assert dvc_adapter.shell_argv("echo hi") == ["/bin/bash", "--noprofile", "--norc", "-c", "echo hi"]
    monkeypatch.delenv("SHELL")
    assert dvc_adapter.shell_argv("echo hi") == ["/bin/sh", "-c", "echo hi"]


@pytest.fixture
def project(tmp_path, monkeypatch):
    """a -> b (b reads a's output), c on its own, and a data source."""
    from dvc.repo import Repo

    Repo.init(str(tmp_path), no_scm=True).close()
    (tmp_path / "src.txt").write_text("x\n")
    (tmp_path / "dvc.yaml").write_text(
        "stages:\n"
        "  a:\n    cmd: cp src.txt a.txt\n    deps: [src.txt]\n    outs: [a.txt]\n"
        "  b:\n    cmd:\n      - cp a.txt b.txt\n      - echo more >> b.txt\n    deps: [a.txt]\n    outs: [b.txt]\n"
        "  c:\n    cmd: echo c > c.txt\n    outs: [c.txt]\n    meta: {exclusive: true, prepare_beside: true}\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run_like_the_scheduler(p: Project, name: str) -> None:
    cmd = p.command(name)
    for line in cmd.lines:
        subprocess.run(dvc_adapter.shell_argv(line), cwd=cmd.cwd, env=cmd.env, check=True)
    p.record(name)


def test_plan_steps_commands_and_records_as_dvc_repro_does(project):
    with Project(project) as p, p.locked(lambda: AssertionError("not busy")):
        steps = {s.name: s for s in p.plan(None)}
        order = list(steps)
        assert set(order) == {"a", "b", "c"} and order.index("a") < order.index("b")
        assert steps["b"].upstream == ("a",) and steps["a"].upstream == () == steps["c"].upstream
        assert steps["c"].exclusive and steps["c"].prepare_beside and not steps["a"].exclusive
        assert all(s.runs_command for s in steps.values())
        assert p.command("b").lines == ["cp a.txt b.txt", "echo more >> b.txt"]
        env = p.command("a").env
        assert env["DVC_STAGE"] == "a" and Path(env["DVC_ROOT"]) == project
        for name in order:
            assert p.changed(name)
            p.clear_outputs(name)
            assert not p.restore(name)  # nothing in the run-cache yet
            run_like_the_scheduler(p, name)
    assert (project / "b.txt").read_text() == "x\nmore\n"
    status = subprocess.run([sys.executable, "-m", "dvc", "status", "-q"], cwd=project, capture_output=True,
                            text=True)
    assert status.returncode == 0, status.stdout + status.stderr  # dvc.lock records every stage
    with Project(project) as p, p.locked(lambda: AssertionError("not busy")):
        p.plan(None)
        assert not any(p.changed(n) for n in ("a", "b", "c"))
        (project / "a.txt").unlink()
        p.clear_outputs("a")
        assert p.restore("a") and (project / "a.txt").read_text() == "x\n"  # from the run-cache


def test_a_held_lock_raises_the_callers_error(project):
    with Project(project) as p, p.locked(lambda: AssertionError("not busy")):
        with Project(project) as q, pytest.raises(RuntimeError, match="busy"):
            with q.locked(lambda: RuntimeError("busy")):
                pass


def test_the_lockfile_is_reordered_as_dvc_writes_it(project):
    with Project(project) as p, p.locked(lambda: AssertionError("not busy")):
        for name in [s.name for s in p.plan(None)]:
            run_like_the_scheduler(p, name)
    lock = project / "dvc.lock"
    before = lock.read_text()
    dvc_adapter.reorder_lockfile(lock, ["c", "b", "a"])
    import yaml

    assert list(yaml.safe_load(lock.read_text())["stages"]) == ["c", "b", "a"]
    assert sorted(lock.read_text().splitlines()) == sorted(before.splitlines())


# A child that rewrites dvc.lock the way DVC does (modify_yaml) and stops half-way through its
# write; the parent kills it there with SIGKILL.
HALF_WRITE = '''
import sys, time
from pathlib import Path
import dvc.utils.serialize._common as common
from dvc.utils.serialize import modify_yaml
from pipeline.orchestrate.dvc_adapter import atomic_writes

def slow(data, fd):
    fd.write("schema: '2.0'\\nstages:\\n  a:\\n    cmd: [cp")
    fd.flush()
    Path("half").touch()
    time.sleep(60)

ctx = atomic_writes() if sys.argv[1] == "atomic" else open(__file__)
with ctx:
    with common._modify_data("dvc.lock", lambda text, path: {"stages": {}}, slow):
        pass
'''


def _kill_half_way(project: Path, mode: str) -> None:
    import os
    import signal
    import time

    (project / "half.py").write_text(HALF_WRITE)
    child = subprocess.Popen([sys.executable, "half.py", mode], cwd=project,
                             env={**os.environ, "PYTHONPATH": str(REPO)})
    deadline = time.time() + 60
    while not (project / "half").exists() and time.time() < deadline and child.poll() is None:
        time.sleep(0.05)
    assert (project / "half").exists(), "the child never reached its write"
    os.kill(child.pid, signal.SIGKILL)
    child.wait()


@pytest.mark.parametrize("mode", ["atomic", "as DVC writes"])
def test_a_kill_in_the_middle_of_writing_dvc_lock(project, mode):
    """DVC truncates dvc.lock and writes it in place: a kill there leaves a file no run can read.
    Inside atomic_writes the old dvc.lock stays whole, and the staging file is cleaned up."""
    from pipeline.io import stale_staging

    with atomic_writes_run(project):
        pass
    lock = project / "dvc.lock"
    before = lock.read_text()
    assert dvc_adapter.lockfile_problem(lock) is None
    _kill_half_way(project, "atomic" if mode == "atomic" else "plain")
    if mode == "atomic":
        assert lock.read_text() == before
        left = stale_staging(project)
        assert [p.name for p in left] and all(p.name.endswith("dvc.lock") for p in left)
    else:  # what the atomic write prevents, shown: the file is cut short and DVC cannot read it
        assert lock.read_text() != before
        assert dvc_adapter.lockfile_problem(lock)


@contextlib.contextmanager
def atomic_writes_run(project: Path):
    """Every stage of `project` run and recorded as the scheduler does, under atomic_writes."""
    with dvc_adapter.atomic_writes(), Project(project) as p, p.locked(lambda: AssertionError("busy")):
        for name in [s.name for s in p.plan(None)]:
            run_like_the_scheduler(p, name)
        yield p


def test_an_unreadable_dvc_lock_gives_way_to_the_last_whole_one(project):
    with atomic_writes_run(project):
        pass
    lock, good = project / "dvc.lock", project / dvc_adapter.LAST_GOOD
    assert good.read_text() == lock.read_text()  # kept at every whole write
    whole = lock.read_text()
    assert dvc_adapter.recover_lockfile(project) is None  # readable: left alone
    lock.write_text(whole[: len(whole) // 2])
    said = dvc_adapter.recover_lockfile(project)
    assert said and "could not be read" in said and str(dvc_adapter.LAST_GOOD) in said
    assert lock.read_text() == whole
    aside = list((project / ".dvc" / "tmp").glob("dvc.lock.unreadable-*"))
    assert len(aside) == 1 and aside[0].read_text() == whole[: len(whole) // 2]  # kept, not lost
    # without a whole copy, dvc.lock goes and DVC checks every stage against the run-cache
    good.unlink()
    lock.write_text("stages:\n  a:\n    cmd: [")
    said = dvc_adapter.recover_lockfile(project)
    assert "run-cache" in said and not lock.exists()
    with Project(project) as p, p.locked(lambda: AssertionError("busy")):
        p.plan(None)
        assert all(p.changed(n) for n in ("a", "b", "c"))
        assert p.restore("a") and p.restore("b")  # from the run-cache (c has no dependencies: not cached)
