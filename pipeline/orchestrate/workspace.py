"""The workspace an orchestrator runs in: DVC's repository lock, and who holds it when it is busy."""

from __future__ import annotations

import contextlib
from pathlib import Path


@contextlib.contextmanager
def workspace_lock(repo, root: Path, error: type[Exception]):
    """DVC's repository lock for the whole run; when another process holds it, `error` with a
    message that names that process and what to do (DVC's own message names neither)."""
    from dvc.lock import LockError
    from dvc.repo import lock_repo

    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(lock_repo(repo))
        except LockError as err:
            raise error(busy(root)) from err
        yield


def busy(root: Path) -> str:
    """Who holds the workspace's DVC lock (.dvc/tmp/lock records its holder's pid), and what to
    do about it. The holder's command line is shown with its secrets masked."""
    lock = root / ".dvc" / "tmp" / "lock"
    try:
        pid = int(lock.read_text(encoding="utf-8", errors="replace").split()[0])
    except (OSError, ValueError, IndexError):
        return (f"the workspace {root} is busy: another DVC process holds its lock ({lock}; "
                "its pid is not recorded) — wait for it to finish, then run again")
    try:
        import psutil

        from pipeline.secrets import mask_args

        proc = psutil.Process(pid)
        what = " ".join(mask_args(proc.cmdline()))[:300] or proc.name()
    except Exception:  # noqa: BLE001 — gone, or not ours to inspect (psutil.AccessDenied)
        return (f"the workspace {root} was busy: process {pid} held its lock ({lock}) and is no "
                "longer running here — run again (the lock is the system's: it goes with its holder)")
    return (f"the workspace {root} is busy: process {pid} ({what}) holds its DVC lock ({lock}) — "
            f"wait for it to finish, or stop it (`kill {pid}`: a qpipe stage or `qpipe repro` cleans "
            "up and exits), then run again")
