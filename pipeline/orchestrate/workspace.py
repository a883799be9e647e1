"""The workspace an orchestrator runs in: who holds its DVC lock when it is busy, and what to do."""

from __future__ import annotations

from pathlib import Path


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
