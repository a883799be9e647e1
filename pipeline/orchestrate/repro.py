"""`qpipe repro --jobs N`: the DVC pipeline with independent stages running side by side.

DVC runs one stage at a time (3.67 has no `repro --jobs`; two `dvc repro` processes in one
workspace fail on each other's locks: docs/ray.md §1). This runner is the one process that
touches DVC. It holds the repository lock for the whole run and uses DVC's own parts for every
decision a serial `dvc repro` makes: its graph and plan order, `stage.changed()` asked once the
stages a stage depends on have finished, the run-cache, removing outputs before a run, and
`save`/`commit`/`dump` of each finished stage. Only the commands run elsewhere — up to `jobs`
at once, through an executor (a local process here; a Ray task with `execution: ray`).

Side by side on this host, each running command has its own share of the CPUs this process may
use (`cpu_shares`: disjoint, one per job slot; Linux CPU affinity, inherited by the engines a
stage starts), with the thread count a serial run would have (`OMP_NUM_THREADS`) and idle
OpenMP threads sleeping: two vLLM evaluations, unpinned, both bound core 0; pinned, the pair
took 110 s against 161 s, every output identical (docs/engines.md).

dvc.lock ends as a serial `dvc repro` leaves it: entries that existed keep their place, updated
in place; new ones follow in DVC's plan order (the order serial runs append them). A failed
stage stops the stages that depend on it and nothing else (`dvc repro --keep-going`), is not
recorded, and the run exits non-zero naming it and its log. A stage whose dvc.yaml `meta` says
`exclusive: true` runs with nothing beside it (bench: it measures speed).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, ClassVar, Protocol

import yaml

from pipeline.errors import QpipeError
from pipeline.orchestrate.dvc_adapter import (Project, Step, atomic_writes, recover_lockfile, reorder_lockfile,
                                              shell_argv)
from pipeline.orchestrate.relay import relay
from pipeline.orchestrate.workspace import busy
from pipeline.processes import affinity, gate_env

log = logging.getLogger(__name__)


@dataclass
class Outcome:
    stage: str
    status: str                # ran | unchanged | restored | failed | not run
    seconds: float = 0.0
    detail: str = ""
    log: str | None = None


class ReproError(QpipeError, RuntimeError):
    def __init__(self, message: str, outcomes: list[Outcome] | None = None):
        super().__init__(message)
        self.outcomes = outcomes or []


@dataclass
class Command:
    """One stage's command as DVC would run it: its shell line(s), folder and environment."""
    stage: str
    lines: list[str]
    cwd: str
    env: dict[str, str]
    log_path: Path
    cpus: list[int] | None = None  # this host's CPUs the command may use (None: all of them)


class Executor(Protocol):
    # True: commands run on this host and Command.cpus is applied; False: they run elsewhere
    # (a Ray node), placed by that system's own resources, and nothing is pinned here.
    pins_cpus: bool

    def run(self, cmd: Command, echo: Callable[[str], None]) -> int: ...

    def cancel(self) -> None: ...


@dataclass
class LocalExecutor:
    """Each command in its own process group on this host, its output in a log file and echoed
    line by line with the stage's name in front."""
    procs: dict[str, subprocess.Popen] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    cancelled: bool = False
    pins_cpus: ClassVar[bool] = True  # runs commands on this host: Command.cpus is applied
    live: bool = field(default_factory=lambda: sys.stdout.isatty())  # redraws echoed (relay)

    def run(self, cmd: Command, echo: Callable[[str], None]) -> int:
        cmd.log_path.parent.mkdir(parents=True, exist_ok=True)
        with cmd.log_path.open("w", encoding="utf-8") as logf:
            for line in cmd.lines:
                echo(f"> {line}")
                with self.lock:
                    if self.cancelled:
                        return -signal.SIGTERM
                    with pinned(cmd.cpus):
                        proc = subprocess.Popen(shell_argv(line), cwd=cmd.cwd,
                                                env=cmd.env, stdout=subprocess.PIPE,
                                                stderr=subprocess.STDOUT,
                                                start_new_session=True, close_fds=True)
                    self.procs[cmd.stage] = proc
                relay(proc.stdout, logf, echo, live=self.live)
                rc = proc.wait()
                with self.lock:
                    self.procs.pop(cmd.stage, None)
                if rc:
                    return rc
        return 0

    def cancel(self) -> None:
        """Ctrl-C: every running command gets SIGTERM (qpipe commands turn it into a clean
        interrupt: nothing half-written stays), then SIGKILL after a grace period."""
        with self.lock:
            self.cancelled = True
            procs = list(self.procs.values())
        for p in procs:
            _signal_group(p, signal.SIGTERM)
        deadline = time.time() + 30
        for p in procs:
            try:
                p.wait(timeout=max(0.1, deadline - time.time()))
            except subprocess.TimeoutExpired:
                _signal_group(p, signal.SIGKILL)


def _signal_group(proc: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        pass


def side_by_side(env: dict[str, str], cpus: list[int] | None = None,
                 threads: int | None = None) -> dict[str, str]:
    """A stage's environment when others run beside it: OpenMP's idle threads sleep instead of
    spinning (`OMP_WAIT_POLICY=PASSIVE`). Two GPTQ quantizations with their 2 spinning threads
    each on 2 cores ran ~25× slower; passive, both finished in 32 s (40 s one after the other),
    byte-identical to the serial artifacts. Thread counts do not change: they change results
    (GPTQ with 1 thread instead of 2 gave other 4-bit weights). Pinned to a share of the CPUs
    (`cpus`), OpenMP would size its pool to the share, so the count a serial run has
    (`threads`: the CPUs this process may use) is stated (`OMP_NUM_THREADS`), unless the
    environment already sets one."""
    env = {**env, "OMP_WAIT_POLICY": env.get("OMP_WAIT_POLICY", "PASSIVE")}
    if cpus is not None and threads and "OMP_NUM_THREADS" not in env:
        env["OMP_NUM_THREADS"] = str(threads)
    return env


def cpu_shares(jobs: int, cpus: list[int] | None) -> list[list[int]] | None:
    """`cpus` split into `jobs` disjoint shares of (nearly) equal size, in order; None — no
    pinning — for one job, or fewer CPUs than jobs (every command then sees all of them)."""
    if jobs < 2 or not cpus or len(cpus) < jobs:
        return None
    size, extra = divmod(len(cpus), jobs)
    shares, at = [], 0
    for k in range(jobs):
        n = size + (k < extra)
        shares.append(cpus[at:at + n])
        at += n
    return shares


@contextlib.contextmanager
def pinned(cpus: list[int] | None):
    """Processes started inside run on `cpus`: the calling thread's CPU affinity is set for the
    duration (Linux keeps affinity per thread and a child inherits its parent thread's), so
    other threads of this process are not touched."""
    if cpus is None or not hasattr(os, "sched_setaffinity"):
        yield
        return
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, cpus)
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)


def _lock_keys(path: Path) -> list[str]:
    if not path.is_file():
        return []
    return list((yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("stages") or {})


def order_lockfile(path: Path, before: list[str], plan: list[str]) -> bool:
    """Put dvc.lock's entries where a serial run leaves them: the ones that were there first, in
    their order, then the new ones in plan order. Returns whether the file changed."""
    if not path.is_file():
        return False
    rank = {k: i for i, k in enumerate(before)}
    rank |= {k: len(before) + i for i, k in enumerate(k for k in plan if k not in rank)}
    keys = _lock_keys(path)
    wanted = sorted(keys, key=lambda k: rank.get(k, len(rank)))
    if keys == wanted:
        return False
    reorder_lockfile(path, wanted)
    return True


def repro(root: Path, targets: list[str] | None = None, *, jobs: int = 2, force: bool = False,
          executor: Executor | None = None, say: Callable[[str], None] = print,
          log_dir: Path | None = None) -> list[Outcome]:
    """Reproduce `targets` (default: the whole dvc.yaml) with up to `jobs` commands at once.
    Returns one outcome per planned stage, in plan order; raises ReproError when a stage failed
    (after every stage not depending on it has run)."""
    if jobs < 1:
        raise ReproError(f"--jobs must be at least 1, got {jobs}")
    root = Path(root).resolve()
    lockfile = root / "dvc.lock"
    # DVC resolves stage paths against the working directory (its CLI runs inside the repo);
    # every dvc.lock write of this run is whole or none (a kill mid-write leaves the old file)
    with (atomic_writes(), Project(root) as project, contextlib.chdir(root),
          project.locked(lambda: ReproError(busy(root)))):
        recovered = recover_lockfile(root)  # one a killed `dvc repro` cut short
        if recovered:
            say(f"warning: {recovered}")
        before = _lock_keys(lockfile)
        steps = project.plan(targets)
        run = _Scheduler(project, jobs, force, executor or LocalExecutor(), say, log_dir or root / "logs" / "repro")
        run.go(steps)
        order_lockfile(lockfile, before, [s.name for s in steps])
    result = [run.outcomes[s.name] for s in steps]
    bad = [o for o in result if o.status == "failed"]
    if bad:
        blocked = [o.stage for o in result if o.status == "not run"]
        raise ReproError("failed to reproduce " + "; ".join(
            f"'{o.stage}': {o.detail} (log: {o.log})" for o in bad)
            + (f" — not run because of it: {', '.join(blocked)}" if blocked else "")
            + "; the other stages are recorded in dvc.lock — fix the failure and run it again",
            outcomes=result)
    return result


class _Scheduler:
    """Starts each planned stage once the stages it depends on have finished, up to `jobs` at
    once; an exclusive stage with nothing beside it (one that prepares beside the last ones
    measures only once it is alone); a failed stage stops what depends on it and nothing else."""

    def __init__(self, project: Project, jobs: int, force: bool, executor: Executor,
                 say: Callable[[str], None], log_dir: Path) -> None:
        self.project, self.jobs, self.force, self.executor = project, jobs, force, executor
        self.say, self.log_dir = say, log_dir
        self.outcomes: dict[str, Outcome] = {}
        self.running: dict[Future, tuple[Step, float, Path, list[int] | None]] = {}
        self.finished: set[str] = set()
        self.failed: set[str] = set()
        self.gates: dict[str, Path] = {}  # stages started early -> the file that lets them measure
        self.cpus = affinity()
        self.free_shares = (cpu_shares(jobs, self.cpus) if executor.pins_cpus else None) or []
        self.echo_lock = threading.Lock()

    def echo_for(self, name: str) -> Callable[[str], None]:
        def echo(line: str) -> None:
            with self.echo_lock:
                self.say(f"[{name}] {line}" if line else "")
        return echo

    def outcome(self, step: Step, status: str, t0: float, detail: str = "", log_path=None) -> None:
        self.outcomes[step.name] = Outcome(step.name, status, round(time.time() - t0, 1), detail,
                                           str(log_path) if log_path else None)

    def ready(self, step: Step) -> bool:
        return all(u in self.finished for u in step.upstream)

    def go(self, steps: list[Step]) -> None:
        pending = list(steps)
        pool = ThreadPoolExecutor(max(1, self.jobs))
        try:
            while pending or self.running:
                self.start(pending, pool)
                if self.running and all(s.name in self.gates for s, *_ in self.running.values()):
                    for s, *_ in self.running.values():  # nothing else runs: they may measure
                        self.gates[s.name].touch()
                if self.running:
                    for fut in wait(list(self.running), return_when=FIRST_COMPLETED)[0]:
                        self.collect(fut)
        except BaseException:
            self.executor.cancel()
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        pool.shutdown(wait=True)

    def start(self, pending: list[Step], pool: ThreadPoolExecutor) -> None:
        alone = any(s.exclusive for s, *_ in self.running.values())
        # an exclusive stage waits while another can start (one drain, at the end)
        others = any(not s.exclusive and self.ready(s) for s in pending)
        for step in list(pending):
            if len(self.running) >= self.jobs or alone:
                return
            blocked = [u for u in step.upstream if u in self.failed]
            if blocked:
                pending.remove(step)
                self.failed.add(step.name)
                self.outcomes[step.name] = Outcome(step.name, "not run",
                                                   detail=f"depends on {', '.join(blocked)}, which failed")
                continue
            if not self.ready(step) or (step.exclusive and others):
                continue
            early = step.prepare_beside and self.executor.pins_cpus and bool(self.running)
            if step.exclusive and self.running and not early:
                return  # it waits for the machine; nothing starts before it
            pending.remove(step)
            t0 = time.time()
            if not self.settled(step, t0):
                self.launch(step, t0, early, pool)
                alone = step.exclusive

    def settled(self, step: Step, t0: float) -> bool:
        """Whether the stage is done without its command: a data source or frozen stage, an
        unchanged one, or one the run-cache restores (its outputs are cleared otherwise)."""
        if not step.runs_command:  # data sources, frozen stages: DVC itself
            self.project.reproduce_in_place(step.name, self.force)
            status = "unchanged"
        elif not self.force and not self.project.changed(step.name):
            self.echo_for(step.name)(f"Stage '{step.name}' didn't change, skipping")
            status = "unchanged"
        else:
            self.project.clear_outputs(step.name)
            if self.force or not self.project.restore(step.name):
                return False
            self.echo_for(step.name)("restored from the run-cache")
            status = "restored"
        self.finished.add(step.name)
        self.outcome(step, status, t0)
        return True

    def launch(self, step: Step, t0: float, early: bool, pool: ThreadPoolExecutor) -> None:
        stage_cmd = self.project.command(step.name)
        share = self.free_shares.pop(0) if self.free_shares and not step.exclusive else None
        env = side_by_side(stage_cmd.env, share, len(self.cpus or [])) if self.jobs > 1 else stage_cmd.env
        log_path = self.log_dir / f"{step.name.replace('@', '-')}.log"
        if early:  # it prepares now and waits at this gate to measure alone
            self.gates[step.name] = log_path.with_name(f".{log_path.stem}.{os.getpid()}.{t0:.0f}.alone")
            self.log_dir.mkdir(parents=True, exist_ok=True)  # this run's own: no stale gate
            env = {**env, **gate_env(self.gates[step.name])}
        cmd = Command(step.name, stage_cmd.lines, stage_cmd.cwd, env, log_path, share)
        echo = self.echo_for(step.name)
        echo(f"Running stage '{step.name}'" +
             (f" on CPU {','.join(map(str, share))}:" if share else
              " (preparing while the running stages finish):" if early else ":"))
        self.running[pool.submit(self.executor.run, cmd, echo)] = (step, t0, log_path, share)

    def collect(self, fut: Future) -> None:
        step, t0, log_path, share = self.running.pop(fut)
        if step.name in self.gates:
            self.gates.pop(step.name).unlink(missing_ok=True)
        if share is not None:
            self.free_shares.append(share)
            self.free_shares.sort()
        try:
            rc = fut.result()
        except Exception as err:  # the executor itself failed (a node died…)
            rc, why = -1, f"{type(err).__name__}: {err}"
        else:
            why = f"its command exited with code {rc}"
        echo = self.echo_for(step.name)
        if rc == 0:
            self.project.record(step.name)
            self.finished.add(step.name)
            self.outcome(step, "ran", t0, log_path=log_path)
            echo(f"done in {time.time() - t0:.1f} s")
        else:
            self.failed.add(step.name)
            self.outcome(step, "failed", t0, why, log_path)
            echo(f"FAILED: {why} (log: {log_path})")


def summary(outcomes: list[Outcome]) -> list[str]:
    width = max((len(o.stage) for o in outcomes), default=10)
    return [f"{o.stage:<{width}}  {o.status:<9}  {o.seconds:>7.1f} s" + (f"  {o.detail}" if o.detail else "")
            for o in outcomes]
