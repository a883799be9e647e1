"""A stage command's output on its way to its log file and the screen: lines as they end, and a
progress bar's in-place redraws (text ended by a carriage return, as tqdm draws) kept out of
logs, which hold each bar's final state only."""

from __future__ import annotations

import io
import time
from typing import Callable


def last_state(line: str) -> str:
    """What a line shows once its redraws are done: the text after its last carriage return."""
    return line.rstrip("\r\n").rsplit("\r", 1)[-1]


def relay(stream, logf, echo: Callable[[str], None], *, live: bool, every: float = 5.0,
          clock: Callable[[], float] = time.monotonic) -> None:
    """A command's output (bytes), line by line, into its log file and the echo. Text ended by a
    carriage return is a progress bar redrawing itself in place (tqdm's): it never goes to the
    log, which keeps the lines that end in a newline (a bar's final state among them), and is
    echoed only on a terminal (`live`), at most once every `every` seconds — a log of a
    two-minute calibration keeps one line for it instead of thousands."""
    text = io.TextIOWrapper(stream, encoding="utf-8", errors="replace", newline="")
    shown = None
    for line in text:
        if line.endswith("\n"):
            out = last_state(line)
            logf.write(out + "\n")
            logf.flush()
            echo(out)
            continue
        out = line.rstrip("\r").strip()
        if live and out:
            now = clock()
            if shown is None or now - shown >= every:
                shown = now
                echo(out)
