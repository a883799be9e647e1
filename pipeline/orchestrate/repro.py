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

from pipeline.errors import QpipeError
from pipeline.orchestrate.relay import relay
from pipeline.orchestrate.workspace import workspace_lock
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
        from dvc.stage.run import _make_cmd, get_executable

        cmd.log_path.parent.mkdir(parents=True, exist_ok=True)
        with cmd.log_path.open("w", encoding="utf-8") as logf:
            for line in cmd.lines:
                echo(f"> {line}")
                with self.lock:
                    if self.cancelled:
                        return -signal.SIGTERM
                    with pinned(cmd.cpus):
                        proc = subprocess.Popen(_make_cmd(get_executable(), line), cwd=cmd.cwd,
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


def exclusive(stage) -> bool:
    """dvc.yaml `meta: {exclusive: true}`: the stage runs with nothing beside it."""
    return bool(isinstance(stage.meta, dict) and stage.meta.get("exclusive"))


def prepares_beside(stage) -> bool:
    """`meta: {exclusive: true, prepare_beside: true}`: the stage may start while the last stages
    before it finish; it measures only after `pipeline.processes.wait_until_alone` returns."""
    return exclusive(stage) and bool(stage.meta.get("prepare_beside"))


def _lock_keys(path: Path) -> list[str]:
    import yaml

    if not path.is_file():
        return []
    return list((yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("stages") or {})


def order_lockfile(path: Path, before: list[str], plan: list[str]) -> bool:
    """Put dvc.lock's entries where a serial run leaves them: the ones that were there first, in
    their order, then the new ones in plan order. Returns whether the file changed."""
    from dvc.utils.serialize import modify_yaml

    if not path.is_file():
        return False
    rank = {k: i for i, k in enumerate(before)}
    rank |= {k: len(before) + i for i, k in enumerate(k for k in plan if k not in rank)}
    keys = _lock_keys(path)
    wanted = sorted(keys, key=lambda k: rank.get(k, len(rank)))
    if keys == wanted:
        return False
    with modify_yaml(path) as data:
        stages = data["stages"]
        items = [(k, stages[k]) for k in wanted]
        for k in list(stages):
            del stages[k]
        for k, v in items:
            stages[k] = v
    return True


def repro(root: Path, targets: list[str] | None = None, *, jobs: int = 2, force: bool = False,
          executor: Executor | None = None, say: Callable[[str], None] = print,
          log_dir: Path | None = None) -> list[Outcome]:
    """Reproduce `targets` (default: the whole dvc.yaml) with up to `jobs` commands at once.
    Returns one outcome per planned stage, in plan order; raises ReproError when a stage failed
    (after every stage not depending on it has run)."""
    from dvc.repo import Repo
    from dvc.repo.reproduce import collect_stages, get_active_graph, plan_repro
    from dvc.stage.cache import RunCacheNotFoundError
    from dvc.stage.run import _enforce_cmd_list, prepare_kwargs

    if jobs < 1:
        raise ReproError(f"--jobs must be at least 1, got {jobs}")
    root = Path(root).resolve()
    executor = executor or LocalExecutor()
    log_dir = log_dir or root / "logs" / "repro"
    lockfile = root / "dvc.lock"
    before = _lock_keys(lockfile)
    echo_lock = threading.Lock()

    def echo_for(name: str) -> Callable[[str], None]:
        def echo(line: str) -> None:
            with echo_lock:
                say(f"[{name}] {line}" if line else "")
        return echo

    repo = Repo(str(root))
    outcomes: dict[str, Outcome] = {}
    try:
        # DVC resolves stage paths against the working directory (its CLI runs inside the repo)
        with contextlib.chdir(root), workspace_lock(repo, root, ReproError):
            graph = get_active_graph(repo.index.graph)
            chosen = collect_stages(repo, targets or [str(root / "dvc.yaml")])
            plan = plan_repro(graph, chosen)
            names = {s: s.addressing for s in plan}
            upstream = {s: [u for u in graph.successors(s) if u in names] for s in plan}
            pending = list(plan)
            running: dict[Future, tuple] = {}
            failed: set = set()
            finished: set = set()
            gates: dict = {}  # stages started early -> the file that lets them measure
            pool = ThreadPoolExecutor(max(1, jobs))
            cpus = affinity()
            free_shares = (cpu_shares(jobs, cpus) if executor.pins_cpus else None) or []

            def record(stage, status: str, t0: float, detail: str = "", log_path=None) -> None:
                outcomes[names[stage]] = Outcome(names[stage], status, round(time.time() - t0, 1),
                                                 detail, str(log_path) if log_path else None)

            def finish(stage) -> None:
                no_cache = any(not o.use_cache for o in stage.outs if not (o.is_metric or o.is_plot))
                stage.save(allow_missing=False, run_cache=not no_cache)
                stage.commit(allow_missing=False)
                stage.dump(update_pipeline=False)

            try:
                while pending or running:
                    alone = any(exclusive(s) for s, *_ in running.values())
                    # an exclusive stage waits while another can start (one drain, at the end)
                    others = any(not exclusive(s) and all(u in finished for u in upstream[s])
                                 for s in pending)
                    for stage in list(pending):
                        if len(running) >= jobs or alone:
                            break
                        blocked = [u for u in upstream[stage] if u in failed]
                        if blocked:
                            pending.remove(stage)
                            failed.add(stage)
                            outcomes[names[stage]] = Outcome(
                                names[stage], "not run",
                                detail=f"depends on {', '.join(names[u] for u in blocked)}, which failed")
                            continue
                        if not all(u in finished for u in upstream[stage]):
                            continue
                        if exclusive(stage) and others:
                            continue
                        early = prepares_beside(stage) and executor.pins_cpus and bool(running)
                        if exclusive(stage) and running and not early:
                            alone = True  # it waits for the machine; nothing starts before it
                            break
                        pending.remove(stage)
                        t0 = time.time()
                        if not stage.cmd or stage.frozen:  # data sources, frozen stages: DVC itself
                            stage.reproduce(upstream=upstream[stage], force=force)
                            finished.add(stage)
                            record(stage, "unchanged", t0)
                            continue
                        if not force and not stage.changed(False, upstream[stage]):
                            echo_for(names[stage])(f"Stage '{names[stage]}' didn't change, skipping")
                            finished.add(stage)
                            record(stage, "unchanged", t0)
                            continue
                        stage.remove_outs(ignore_remove=False, force=False)
                        if not force:
                            try:
                                repo.stage_cache.restore(stage)
                            except RunCacheNotFoundError:
                                stage.save_deps()
                            else:
                                echo_for(names[stage])("restored from the run-cache")
                                finish(stage)
                                finished.add(stage)
                                record(stage, "restored", t0)
                                continue
                        kw = prepare_kwargs(stage)
                        share = free_shares.pop(0) if free_shares and not exclusive(stage) else None
                        if jobs > 1:
                            kw["env"] = side_by_side(kw["env"], share, len(cpus or []))
                        log_path = log_dir / f"{names[stage].replace('@', '-')}.log"
                        if early:  # it prepares now and waits at this gate to measure alone
                            gates[stage] = log_path.with_name(f".{log_path.stem}.{os.getpid()}.{t0:.0f}.alone")
                            log_dir.mkdir(parents=True, exist_ok=True)  # this run's own: no stale gate
                            kw["env"] = {**kw["env"], **gate_env(gates[stage])}
                        cmd = Command(names[stage], _enforce_cmd_list(stage.cmd), kw["cwd"], kw["env"], log_path, share)
                        echo = echo_for(names[stage])
                        echo(f"Running stage '{names[stage]}'" +
                             (f" on CPU {','.join(map(str, share))}:" if share else
                              " (preparing while the running stages finish):" if early else ":"))
                        running[pool.submit(executor.run, cmd, echo)] = (stage, t0, cmd.log_path, share)
                        if exclusive(stage):
                            alone = True
                    if running and all(s in gates for s, *_ in running.values()):
                        for s, *_ in running.values():  # nothing else runs: it may measure
                            gates[s].touch()
                    if not running:
                        continue
                    done, _ = wait(list(running), return_when=FIRST_COMPLETED)
                    for fut in done:
                        stage, t0, log_path, share = running.pop(fut)
                        if stage in gates:
                            gates.pop(stage).unlink(missing_ok=True)
                        if share is not None:
                            free_shares.append(share)
                            free_shares.sort()
                        try:
                            rc = fut.result()
                        except Exception as err:  # the executor itself failed (a node died…)
                            rc, why = -1, f"{type(err).__name__}: {err}"
                        else:
                            why = f"its command exited with code {rc}"
                        if rc == 0:
                            finish(stage)
                            finished.add(stage)
                            record(stage, "ran", t0, log_path=log_path)
                            echo_for(names[stage])(f"done in {time.time() - t0:.1f} s")
                        else:
                            failed.add(stage)
                            record(stage, "failed", t0, why, log_path)
                            echo_for(names[stage])(f"FAILED: {why} (log: {log_path})")
            except BaseException:
                executor.cancel()
                pool.shutdown(wait=True, cancel_futures=True)
                raise
            pool.shutdown(wait=True)
    finally:
        repo.close()
    order_lockfile(lockfile, before, [names[s] for s in plan])
    result = [outcomes[names[s]] for s in plan]
    bad = [o for o in result if o.status == "failed"]
    if bad:
        blocked = [o.stage for o in result if o.status == "not run"]
        raise ReproError("failed to reproduce " + "; ".join(
            f"'{o.stage}': {o.detail} (log: {o.log})" for o in bad)
            + (f" — not run because of it: {', '.join(blocked)}" if blocked else "")
            + "; the other stages are recorded in dvc.lock — fix the failure and run it again",
            outcomes=result)
    return result


def summary(outcomes: list[Outcome]) -> list[str]:
    width = max((len(o.stage) for o in outcomes), default=10)
    return [f"{o.stage:<{width}}  {o.status:<9}  {o.seconds:>7.1f} s" + (f"  {o.detail}" if o.detail else "")
            for o in outcomes]
