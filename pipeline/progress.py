"""Progress of long steps: a bar with ETA on a terminal, a few log lines elsewhere.

On a terminal (stderr is one, or ``QPIPE_PROGRESS=1``) each step shows a live line — what it is
doing, done of total, elapsed, ETA and a short status (the engine's last log line while it
starts, the running accuracy while it evaluates). Off a terminal (DVC's logs, CI) the same step
writes one log line when it starts, one per quarter done and one when it ends, so logs stay
readable. ``QPIPE_PROGRESS=0`` turns the live line off everywhere.

    >>> with task("scoring", total=4) as t:            # doctest: +SKIP
    ...     for _ in range(4):
    ...         t.advance(status="accuracy 0.750")
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from typing import Iterator

from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

log = logging.getLogger(__name__)
console = Console(stderr=True)  # the command line's log handler writes through the same console


def live() -> bool:
    setting = os.environ.get("QPIPE_PROGRESS", "").strip().lower()
    if setting in ("0", "false", "no", "off"):
        return False
    return setting in ("1", "true", "yes", "on") or console.is_terminal


def last_line(path, window: int = 4096) -> str:
    """The last non-empty line of a log, read from its end (cheap to call twice a second)."""
    try:
        with open(path, "rb") as fh:
            fh.seek(max(0, fh.seek(0, 2) - window))
            lines = [ln.strip() for ln in fh.read().decode(errors="replace").splitlines()]
    except (OSError, TypeError):
        return ""
    return next((ln for ln in reversed(lines) if ln), "")


class Task:
    """One step's progress; ``advance`` and ``status`` are cheap enough to call per request."""

    def __init__(self, description: str, total: int | None, bar: Progress | None):
        self.description, self.total, self.done = description, total, 0
        self.status_text = ""
        self._bar, self._id = bar, None
        self._t0 = time.monotonic()
        self._next_quarter = 1
        if bar is not None:
            self._id = bar.add_task(description, total=total, **self._fields())
        else:
            log.info("%s: started%s", description, f" ({total} to do)" if total else "")

    def eta(self) -> float | None:
        if not self.total or not self.done:
            return None
        return (time.monotonic() - self._t0) * (self.total - self.done) / self.done

    def _fields(self) -> dict[str, str]:
        eta = self.eta()
        return {"count": f"{self.done}/{self.total}" if self.total else "",
                "eta": "" if eta is None else f"ETA {int(eta) // 60}:{int(eta) % 60:02d}",
                "status": self.status_text}

    def status(self, text: str) -> None:
        self.status_text = text[:100]
        if self._bar is not None:
            self._bar.update(self._id, **self._fields())

    def advance(self, n: int = 1, *, status: str | None = None) -> None:
        self.done += n
        if status is not None:
            self.status_text = status[:100]
        if self._bar is not None:
            self._bar.update(self._id, advance=n, **self._fields())
            return
        if self.total and self.done * 4 >= self._next_quarter * self.total and self.done < self.total:
            self._next_quarter = self.done * 4 // self.total + 1
            log.info("%s: %d/%d, %.0f s elapsed, ETA %.0f s%s", self.description, self.done,
                     self.total, time.monotonic() - self._t0, self.eta() or 0,
                     f", {self.status_text}" if self.status_text else "")

    def close(self, ok: bool) -> None:
        """The live line goes; one line stays: what finished (or stopped), in how long."""
        count = f" {self.done}/{self.total}" if self.total else ""
        line = (f"{self.description}: {'done' if ok else 'stopped'}{count} in "
                f"{time.monotonic() - self._t0:.1f} s{f', {self.status_text}' if self.status_text else ''}")
        if self._bar is None:
            log.info("%s", line)
            return
        self._bar.remove_task(self._id)
        self._bar.console.print(("✓ " if ok else "✗ ") + line, markup=False, highlight=False)


_active: Progress | None = None  # one live display at a time: nested steps share it


@contextlib.contextmanager
def task(description: str, total: int | None = None) -> Iterator[Task]:
    """A progress line for one step (``total`` None: a wait, with a spinner and elapsed time);
    a step inside another (an engine starting within bench's schedule) gets a line below it."""
    global _active
    if not live():
        t, ok = Task(description, total, None), False
        try:
            yield t
            ok = True
        finally:
            t.close(ok)
        return
    owner = _active is None
    if owner:
        _active = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                           TextColumn("{task.fields[count]}"), TimeElapsedColumn(),
                           TextColumn("{task.fields[eta]}"), TextColumn("[dim]{task.fields[status]}"),
                           console=console)
        _active.start()
    t, ok = Task(description, total, _active), False
    try:
        yield t
        ok = True
    finally:
        t.close(ok)
        if owner:
            _active.stop()
            _active = None
