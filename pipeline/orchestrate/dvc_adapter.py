"""Everything `qpipe repro` asks of DVC, in one place: the only module of the package that imports
DVC (the tests read DVC's files with its API of their own).

`qpipe repro` makes the decisions a serial `dvc repro` makes with DVC's own parts — its graph
and plan order, `stage.changed()`, the run-cache, removing outputs before a run, saving,
committing and dumping a finished stage — and runs the commands itself, several at once. DVC
has no public API for that (`dvc.api` reads data; `Repo.reproduce` runs every command itself),
so this module uses DVC internals, named in :data:`INTERNALS`. They are checked against the
version the project pins (`dvc==3.67.1`: pyproject.toml and constraints/core.txt) by
tests/test_dvc_adapter.py, which fails, naming the missing or changed part, on any other.

A planned stage is known to the scheduler by its name (DVC's `addressing`: `evaluate@w4`) and
the facts of :class:`Step`; DVC's stage objects stay in here.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

# DVC is imported here, at the top: importing this module is importing DVC (~1 s), which only
# the orchestrator's commands do (`qpipe repro` imports it when it runs, not at CLI start)
from dvc.lock import LockError
from dvc.repo import Repo, lock_repo
from dvc.repo.reproduce import collect_stages, get_active_graph, plan_repro
from dvc.stage.cache import RunCacheNotFoundError
from dvc.stage.run import _enforce_cmd_list, _make_cmd, get_executable, prepare_kwargs
from dvc.schema import COMPILED_LOCKFILE_SCHEMA
from dvc.utils.serialize import _common as dvc_serialize, modify_yaml, parse_yaml

from pipeline.orchestrate.strays import replaced_file

# The DVC internals used here (module, name): what a new DVC version must still provide, as
# this version does, before the pin moves (tests/test_dvc_adapter.py).
INTERNALS = (
    ("dvc.repo.reproduce", "get_active_graph"),   # the pipeline graph without frozen-stage edges cut
    ("dvc.repo.reproduce", "collect_stages"),     # targets -> stages
    ("dvc.repo.reproduce", "plan_repro"),         # the serial run's order
    ("dvc.stage.run", "prepare_kwargs"),          # a command's folder and environment (DVC_STAGE …)
    ("dvc.stage.run", "_enforce_cmd_list"),       # a stage's `cmd`: one line or a list
    ("dvc.stage.run", "_make_cmd"),               # a line -> argv through the user's shell, no rc files
    ("dvc.stage.run", "get_executable"),
    ("dvc.stage.cache", "RunCacheNotFoundError"),
    ("dvc.repo", "lock_repo"),                    # the workspace lock a `dvc repro` takes
    ("dvc.lock", "LockError"),
    ("dvc.utils.serialize", "modify_yaml"),       # dvc.lock rewritten as DVC writes it
    ("dvc.utils.serialize", "parse_yaml"),
    ("dvc.utils.serialize", "_common"),           # its _dump_data: every YAML write of DVC's (made atomic)
    ("dvc.schema", "COMPILED_LOCKFILE_SCHEMA"),   # what a readable dvc.lock is
)
# The last dvc.lock this process wrote whole, kept to stand in for one a killed run cut short.
LAST_GOOD = Path(".dvc", "tmp", "qpipe-last-good-dvc.lock")


@dataclass(frozen=True)
class Step:
    """A planned stage, as the scheduler needs it."""
    name: str                    # DVC's addressing: `split`, `evaluate@w4`
    upstream: tuple[str, ...]    # planned stages it depends on
    runs_command: bool           # False: a data source or a frozen stage (DVC handles it itself)
    exclusive: bool              # dvc.yaml `meta: {exclusive: true}`: nothing beside it
    prepare_beside: bool         # `meta: {…, prepare_beside: true}`: may start early, measures alone


@dataclass(frozen=True)
class StageCommand:
    lines: list[str]
    cwd: str
    env: dict[str, str]


def shell_argv(line: str) -> list[str] | str:
    """A command line as DVC runs it: through the user's shell (`$SHELL`, else /bin/sh), without
    its rc files."""
    return _make_cmd(get_executable(), line)


class Project:
    """One DVC repository, opened for a run; close it (or use it as a context manager)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._repo = Repo(str(self.root))
        self._stages: dict[str, object] = {}
        self._upstream: dict[str, list] = {}

    def __enter__(self) -> Project:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self._repo.close()

    @contextlib.contextmanager
    def locked(self, busy: Callable[[], Exception]) -> Iterator[None]:
        """DVC's repository lock for the whole run; when another process holds it, the error
        `busy()` makes is raised (DVC's own message names neither the holder nor what to do)."""
        with contextlib.ExitStack() as stack:
            try:
                stack.enter_context(lock_repo(self._repo))
            except LockError as err:
                raise busy() from err
            yield

    def plan(self, targets: list[str] | None) -> list[Step]:
        """The stages a `dvc repro` of `targets` (default: the whole dvc.yaml) would visit, in its
        order. Call inside the project's folder: DVC resolves stage paths against it."""
        graph = get_active_graph(self._repo.index.graph)
        chosen = collect_stages(self._repo, targets or [str(self.root / "dvc.yaml")])
        plan = plan_repro(graph, chosen)
        self._stages = {s.addressing: s for s in plan}
        planned = set(plan)
        self._upstream = {s.addressing: [u for u in graph.successors(s) if u in planned] for s in plan}
        return [Step(s.addressing, tuple(u.addressing for u in self._upstream[s.addressing]),
                     bool(s.cmd) and not s.frozen, _exclusive(s),
                     _exclusive(s) and bool(s.meta.get("prepare_beside"))) for s in plan]

    def reproduce_in_place(self, name: str, force: bool) -> None:
        """A data source or a frozen stage: DVC checks (and records) it itself."""
        self._stages[name].reproduce(upstream=self._upstream[name], force=force)

    def changed(self, name: str) -> bool:
        return self._stages[name].changed(False, self._upstream[name])

    def clear_outputs(self, name: str) -> None:
        """The stage's outputs removed before its command runs, as `dvc repro` does."""
        self._stages[name].remove_outs(ignore_remove=False, force=False)

    def restore(self, name: str) -> bool:
        """The outputs from the run-cache when it holds this stage with these dependencies
        (then recorded as if run); False when it does not (the dependencies are saved for the
        run that follows)."""
        stage = self._stages[name]
        try:
            self._repo.stage_cache.restore(stage)
        except RunCacheNotFoundError:
            stage.save_deps()
            return False
        self.record(name)
        return True

    def command(self, name: str) -> StageCommand:
        stage = self._stages[name]
        kw = prepare_kwargs(stage)
        return StageCommand(_enforce_cmd_list(stage.cmd), kw["cwd"], kw["env"])

    def record(self, name: str) -> None:
        """A finished stage into the cache, the run-cache (unless an output is uncached) and
        dvc.lock."""
        stage = self._stages[name]
        no_cache = any(not o.use_cache for o in stage.outs if not (o.is_metric or o.is_plot))
        stage.save(allow_missing=False, run_cache=not no_cache)
        stage.commit(allow_missing=False)
        stage.dump(update_pipeline=False)


def _atomic_dump(path, data, dumper, fs=None, **dumper_args) -> None:
    """DVC's YAML write (dvc.lock, dvc.yaml), whole or not at all: DVC truncates the file and
    writes it in place, so a kill mid-write leaves a cut-off dvc.lock that no later run can read.
    Here the file is written beside and renamed over the old one."""
    target = Path(os.fspath(path))
    with replaced_file(target) as tmp, open(tmp, "w", encoding="utf-8") as fd:
        dumper(data, fd, **dumper_args)
    if target.name == "dvc.lock" and (target.parent / ".dvc").is_dir():
        with replaced_file(target.parent / LAST_GOOD) as tmp:
            shutil.copyfile(target, tmp)


@contextlib.contextmanager
def atomic_writes() -> Iterator[None]:
    """Every dvc.lock / dvc.yaml write of this process's DVC made atomic, inside the block."""
    original = dvc_serialize._dump_data
    dvc_serialize._dump_data = _atomic_dump
    try:
        yield
    finally:
        dvc_serialize._dump_data = original


def lockfile_problem(path: Path) -> str | None:
    """Why DVC could not read dvc.lock (cut short, not YAML, not its schema); None when it can
    or when there is none."""
    if not path.is_file():
        return None
    try:
        data = parse_yaml(path.read_text(encoding="utf-8"), str(path))
        COMPILED_LOCKFILE_SCHEMA(data)
    except Exception as err:  # noqa: BLE001 — a YAML or schema error of any kind
        return f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"
    return None


def recover_lockfile(root: Path) -> str | None:
    """An unreadable dvc.lock (a run killed while DVC wrote it) is set aside in .dvc/tmp and the
    last one written whole here takes its place (or none): DVC then compares what that file
    records with the workspace, so every stage it does not vouch for runs again (or comes from
    the run-cache). Returns what was done, for the terminal; None when dvc.lock was readable."""
    path = root / "dvc.lock"
    problem = lockfile_problem(path)
    if problem is None:
        return None
    aside = root / ".dvc" / "tmp" / f"dvc.lock.unreadable-{time.strftime('%Y%m%dT%H%M%S')}"
    aside.parent.mkdir(parents=True, exist_ok=True)
    os.replace(path, aside)
    good = root / LAST_GOOD
    if good.is_file() and lockfile_problem(good) is None:
        with replaced_file(path) as tmp:
            shutil.copyfile(good, tmp)
        then = f"the last dvc.lock written whole ({LAST_GOOD}) took its place"
    else:
        then = "no whole copy was kept: every stage is checked against the run-cache"
    return (f"dvc.lock could not be read ({problem}): a run was killed while writing it. It was "
            f"moved to {aside.relative_to(root)}; {then}, and the stages it does not vouch for "
            "run again")


def _exclusive(stage) -> bool:
    return bool(isinstance(stage.meta, dict) and stage.meta.get("exclusive"))


def reorder_lockfile(path: Path, keys: list[str]) -> None:
    """dvc.lock's stage entries put in the order `keys` gives, written as DVC writes it."""
    with modify_yaml(path) as data:
        stages = data["stages"]
        items = [(k, stages[k]) for k in keys]
        for k in list(stages):
            del stages[k]
        for k, v in items:
            stages[k] = v
