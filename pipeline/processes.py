"""Child processes that never outlive their parent: a session of its own that dies with the
parent (engines, the MLflow UI server, quantization workers), its process group signalled and
waited for as a whole, and who listens on a port."""

from __future__ import annotations

import ctypes
import os
import signal
import threading
import time
from pathlib import Path


def affinity() -> list[int] | None:
    """The CPUs this process may run on (None where the OS has no CPU affinity: macOS)."""
    if not hasattr(os, "sched_getaffinity"):
        return None
    return sorted(os.sched_getaffinity(0))


def terminate_as_interrupt() -> None:
    """SIGTERM (a `kill`, a CI timeout, DVC stopping) takes the Ctrl-C path: engines stop, a
    failed evaluation is kept under logs/failed/ and no partial results remain."""
    def handler(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, handler)


def _term_when_parent_dies() -> None:
    """SIGTERM to this process when its parent dies (Linux's PR_SET_PDEATHSIG; a no-op
    elsewhere). Linux sends it when the *thread* that started the child ends: start long-lived
    children from a thread that outlives them."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def die_with_parent() -> None:
    """In the child before exec: a session of its own, and SIGTERM when the parent dies."""
    os.setsid()
    _term_when_parent_dies()


SHELLS = {"sh", "dash", "bash", "zsh", "fish", "ksh", "mksh", "busybox"}


def stage_dies_with_launcher() -> None:
    """A stage command — DVC sets DVC_STAGE in the environment of every command it runs, and
    `qpipe repro` runs them through DVC's own code — gets SIGTERM when the process that started
    it dies (a `dvc repro` or `qpipe repro` killed by a signal), which takes the Ctrl-C path
    (terminate_as_interrupt): its engines stop and its staging folder goes, within seconds,
    instead of an orphan finishing its work into a workspace that a new run may own by then.

    DVC starts the command through `$SHELL -c` (or /bin/sh). bash execs a lone command, but
    dash — Debian's /bin/sh — stays as our parent and outlives the launcher, so the death
    signal would never come: the launcher is then the nearest ancestor that is not a shell,
    watched by a daemon thread. Other commands (`qpipe ui` started from a shell that then
    exits, say) are left alone."""
    if not os.environ.get("DVC_STAGE"):
        return
    _term_when_parent_dies()
    launcher = _launcher()
    if launcher is not None and launcher[0] != os.getppid():
        threading.Thread(target=_watch, args=launcher, name="launcher-watch", daemon=True).start()


def _launcher() -> tuple[int, str] | None:
    """The nearest ancestor that is not a shell, with its start time (so a reused pid is not
    taken for it); None where /proc does not say."""
    pid = os.getppid()
    for _ in range(8):
        stat = _stat_fields(pid)
        if stat is None:
            return None
        name, fields = stat
        if name not in SHELLS:
            return pid, fields[19]
        pid = int(fields[1])
        if pid <= 1:
            return None
    return None


def _stat_fields(pid: int | str) -> tuple[str, list[str]] | None:
    """A process's command name and the /proc stat fields after it (state first; None: gone)."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    head, _, tail = raw.rpartition(")")
    return head.split("(", 1)[-1], tail.split()


def _watch(pid: int, started: str, every: float = 0.25) -> None:
    """SIGTERM to this process once `pid` (started at `started`) has ended."""
    while True:
        stat = _stat_fields(pid)
        if stat is None or stat[1][19] != started or stat[1][0] in ("Z", "X"):
            os.kill(os.getpid(), signal.SIGTERM)
            return
        time.sleep(every)


def listening_pids(port: int) -> set[int] | None:
    """The processes with a socket listening on 127.0.0.1:`port` (None: this system does not say)."""
    try:
        import psutil

        conns = psutil.net_connections(kind="tcp")
    except Exception:  # noqa: BLE001 — no psutil, or psutil.AccessDenied (macOS without root)
        return None
    return {c.pid for c in conns if c.status == "LISTEN" and c.laddr and c.laddr.port == port
            and c.pid is not None}


def signal_group(group: int, sig: int) -> None:
    try:
        os.killpg(group, sig)
    except (ProcessLookupError, PermissionError):
        pass


def group_members(group: int) -> list[int]:
    """Live (non-zombie) processes of a process group, read from /proc where it exists."""
    proc = Path("/proc")
    if not (proc / "self" / "stat").is_file():  # elsewhere: alive while a signal reaches it
        try:
            os.killpg(group, 0)
            return [group]
        except (ProcessLookupError, PermissionError):
            return []
    alive = []
    for stat in proc.glob("[0-9]*/stat"):
        state = _proc_state(stat)
        if state is not None and state[0] not in ("Z", "X") and state[1] == group:
            alive.append(int(stat.parent.name))
    return alive


def _proc_state(stat: Path) -> tuple[str, int] | None:
    """A process's state letter and process group from its /proc stat file (None: gone)."""
    found = _stat_fields(stat.parent.name)
    try:
        return (found[1][0], int(found[1][2])) if found else None
    except (IndexError, ValueError):
        return None


def group_gone(group: int, *, deadline: float) -> bool:
    while group_members(group):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


# `qpipe repro --jobs N` starts an exclusive stage marked `meta: {prepare_beside: true}` while the
# last stages before it finish, with this variable naming a file it creates once nothing else runs
# and the next one its own process id (a gate nobody will open is not waited on forever)
ALONE_GATE = "QPIPE_ALONE_GATE"
GATE_OWNER = "QPIPE_ALONE_GATE_OWNER"


class GateOwnerGone(RuntimeError):
    """The orchestrator that was to say "nothing else runs" is gone (killed): nothing will."""


def gate_env(gate: Path) -> dict[str, str]:
    """What the orchestrator adds to an early-started stage's environment."""
    return {ALONE_GATE: str(gate), GATE_OWNER: str(os.getpid())}


def gated() -> bool:
    """Whether this stage was started early and must wait before it measures."""
    return bool(os.environ.get(ALONE_GATE))


def wait_until_alone(poll_s: float = 0.2) -> float | None:
    """Where an exclusive stage has prepared (engines started) and is about to measure: returns
    once the orchestrator says nothing else runs, with the seconds waited; None when the stage
    was not started early (`dvc repro`, or nothing was running): it is alone already. Raises
    :class:`GateOwnerGone` if the orchestrator dies first (a SIGKILL it could not pass on)."""
    if not gated():
        return None
    gate = os.environ[ALONE_GATE]
    owner = int(os.environ.get(GATE_OWNER) or 0)
    start = time.monotonic()
    while not os.path.exists(gate):
        if owner and not _alive(owner):
            raise GateOwnerGone(
                f"the `qpipe repro` run (pid {owner}) that started this stage early is gone, so "
                "nothing will say when it runs alone; run `qpipe repro` again")
        time.sleep(poll_s)
    return round(time.monotonic() - start, 2)


def _alive(pid: int) -> bool:
    """Running: a zombie (killed, not yet reaped by its parent) counts as gone."""
    stat = Path("/proc") / str(pid) / "stat"
    if Path("/proc/self/stat").is_file():
        state = _proc_state(stat)
        return state is not None and state[0] not in ("Z", "X")
    try:  # elsewhere: alive while a signal reaches it
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, someone else's
    return True
