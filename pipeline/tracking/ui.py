"""`qpipe ui`: the MLflow UI server on the project's local tracking store, for as long as the
command runs.

The server runs in a process group of its own that dies with its parent: stopping `qpipe ui`
(Ctrl-C, SIGTERM, the terminal closing) stops the server's workers too, so none is left holding
the port. Not imported by the package: the `track` stage does not run engines' process helpers.
"""

from __future__ import annotations

import signal
import subprocess
import time
from typing import Callable

from pipeline.processes import die_with_parent, group_gone, signal_group
from pipeline.tracking.store import ui_command
from pipeline.stage_params import StageView

STOP_SECONDS = 10  # a server still running this long after SIGTERM is killed


def serve_ui(params: StageView, layout, port: int, *, ready: Callable[[str], None] = print) -> int:
    """Run `mlflow server` on 127.0.0.1:<port> until it exits or is interrupted; its exit code.
    `ready` gets the line with the address before the server starts. A remote tracking URI
    raises TrackingError (open that server's address instead). `layout`: the project's
    pipeline.layout.Layout."""
    root = layout.root
    cmd = ui_command(params, root, port)
    ready(f"MLflow UI: http://127.0.0.1:{port}  (Ctrl-C stops it)")
    proc = subprocess.Popen(cmd, cwd=root, preexec_fn=die_with_parent)
    try:
        return proc.wait()
    finally:
        _stop_group(proc)


def _stop_group(proc: subprocess.Popen) -> None:
    """SIGTERM the server's whole group, SIGKILL it if it outlives STOP_SECONDS; reap it."""
    signal_group(proc.pid, signal.SIGTERM)
    if not group_gone(proc.pid, deadline=time.monotonic() + STOP_SECONDS):
        signal_group(proc.pid, signal.SIGKILL)
    proc.wait()
