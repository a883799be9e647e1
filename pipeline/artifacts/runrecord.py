"""A quantization's run record: what differs between two runs that made the same bytes.

Times, peak memory, host, git commit and the run's log are facts about one run, not about the
artifact: they live in ``quantize.runs_dir`` (``<variant>.json``, a DVC metrics file, and
``<variant>.log``), so an artifact folder holds only what its content determines and identical
weights keep their DVC hash — nothing downstream re-runs.

    >>> split_run_facts({"preset": "Q8_0", "quantize_seconds": 3.2, "peak_gpu_bytes": 9})
    ({'preset': 'Q8_0'}, {'quantize_seconds': 3.2, 'peak_gpu_bytes': 9})
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import platform
import socket
import subprocess
from pathlib import Path
from typing import Any, Iterator

from pipeline.io import write_json
from pipeline.contracts.files import QUANTIZE_RUN_SCHEMA
from pipeline.contracts.stage_results import QuantizeRun

SCHEMA = QUANTIZE_RUN_SCHEMA


def is_run_fact(key: str) -> bool:
    """Durations and peak memory: they change from run to run over the same inputs."""
    return key == "seconds" or key.endswith("_seconds") or key.startswith("peak_")


def split_run_facts(details: dict[str, Any] | None) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """``details`` without its run facts, and the run facts (top-level keys)."""
    if details is None:
        return None, {}
    kept = {k: v for k, v in details.items() if not is_run_fact(k)}
    return kept, {k: v for k, v in details.items() if is_run_fact(k)}


def git_state(root: Path) -> dict[str, Any]:
    """The checkout's commit and whether it had uncommitted changes (None outside git)."""
    def git(*args: str) -> str | None:
        try:
            out = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return out.stdout if out.returncode == 0 else None

    commit = (git("rev-parse", "HEAD") or "").strip() or None
    status = git("status", "--porcelain", "--untracked-files=no") if commit else None
    return {"commit": commit, "dirty": None if status is None else bool(status.strip())}


def run_context(root: Path, version: str) -> dict[str, Any]:
    """Where the run happened: the checkout's git state, qpipe's version, the host."""
    return {"git": git_state(root), "qpipe": version,
            "host": {"name": socket.gethostname(), "platform": platform.platform(),
                     "python": platform.python_version(), "cpus": os.cpu_count()}}


def write_run_record(path: Path, record: dict[str, Any]) -> None:
    """Written atomically (a temporary file renamed into place)."""
    tmp = path.with_name(f".{path.name}.tmp")
    write_json(tmp, QuantizeRun.read({"schema": SCHEMA, **record}, path).dump())
    tmp.replace(path)


def read_run_record(path: Path) -> dict[str, Any]:
    """The run record, or {} when there is none (an artifact made before run records)."""
    if not path.is_file():
        return {}
    record = json.loads(path.read_text(encoding="utf-8"))
    if record.get("schema") != SCHEMA:
        raise ValueError(f"{path}: schema {record.get('schema')!r}, expected {SCHEMA!r} — fix: "
                         "re-run its quantize stage (`dvc repro quantize@<variant>`)")
    return QuantizeRun.read(record, path).dump()


@contextlib.contextmanager
def run_log(path: Path) -> Iterator[None]:
    """Everything the pipeline logs during the run also goes to ``path`` (tools append their own
    output to the same file)."""
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.setLevel(logging.INFO)
    root, ours = logging.getLogger(), logging.getLogger("pipeline")
    level = ours.level
    if ours.getEffectiveLevel() > logging.INFO:  # the log says what the stage did, always
        ours.setLevel(logging.INFO)
    root.addHandler(handler)
    try:
        yield
    finally:
        root.removeHandler(handler)
        ours.setLevel(level)
        handler.close()
