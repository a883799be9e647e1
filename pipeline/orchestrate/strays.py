"""Folders and files in the shared output folders that no variant in params writes.

bench, compare, track and handoff depend on whole folders (the artifacts, the results, the
quantize run records), since the variant list is params'. Whatever else lies there — the
outputs of variants since dropped from params, or of the full matrix run in this workspace — is
hashed into those stages' dependencies: dvc.lock then names files a fresh clone does not have,
and there those stages run again. `qpipe repro` says so before it runs.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path
from pipeline.config.scheme_tables import NO_REFERENCE
from pipeline.stage_params import StageView


def stray_outputs(params: StageView, root: Path) -> list[Path]:
    """Entries of the shared output folders that belong to no variant in `params`."""
    from pipeline.layout import Layout

    names = set(params.variants)
    layout = Layout(root, params)
    results, divergence = layout.results, layout.divergence
    own = {results: {divergence.name, layout.divergence_reference.name, layout.gate_calibration.name,
                     Path(params.bench.out_dir).name, NO_REFERENCE}}  # NO_REFERENCE: evaluate_none's
    found = []
    for folder in (root / params.quantize.out_dir, results, divergence):
        if not folder.is_dir():
            continue
        for entry in sorted(folder.iterdir()):
            if (entry.name in names or entry.name == ".gitignore" or entry.name in own.get(folder, ())
                    or entry.name.startswith((".staging-", ".old-"))):  # a run's, ignored by DVC
                continue
            found.append(entry)
    runs = root / params.quantize.runs_dir
    if runs.is_dir():
        found += [f for f in sorted(runs.iterdir())
                  if f.name != ".gitignore" and not (f.suffix in (".json", ".log") and f.stem in names)]
    return found


@contextlib.contextmanager
def replaced_file(path: Path) -> Iterator[Path]:
    """A file written whole or not at all: the block writes the yielded path (a staging file
    beside `path`, named for its owner as pipeline.io names staging folders); on success it is
    flushed to disk and renamed over `path`. A kill mid-write leaves `path` as it was, and a
    staging file that the next `qpipe repro` removes (stale_staging)."""

    path = Path(path)
    host = re.sub(r"[^A-Za-z0-9_]", "_", socket.gethostname())[:40] or "host"  # as pipeline.io's
    tmp = path.with_name(f".staging-{host}-{os.getpid()}-{path.name}")
    try:
        yield tmp
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def remove_path(path: Path) -> None:
    """A staging folder or file, gone."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def stale_staging(root: Path, depth: int = 3) -> list[Path]:
    """Staging folders left by killed runs (pipeline.io.stale_staging) in the workspace's output
    folders, down to `depth` levels (hidden top-level folders — .git, .dvc, .venv — skipped)."""
    from pipeline.io import stale_staging as stale_in

    found: list[Path] = stale_in(root)  # dvc.lock's, when a run was killed while writing it
    level = [d for d in root.iterdir() if d.is_dir() and not d.name.startswith(".")]
    for _ in range(depth):
        found += [p for d in level for p in stale_in(d)]
        level = [c for d in level for c in d.iterdir()
                 if c.is_dir() and not c.is_symlink() and not c.name.startswith(".")]
    return found


def warning(strays: list[Path], root: Path) -> str:
    shown = [str(p.relative_to(root)) for p in strays]
    more = f" and {len(shown) - 8} more" if len(shown) > 8 else ""
    return (f"warning: {', '.join(shown[:8])}{more} belong to no variant in params: bench, compare, "
            "track and handoff hash these whole folders, so dvc.lock would name them and a fresh "
            "clone, which lacks them, would run those stages again — fix: remove them (their DVC "
            "cache copies stay), or run other matrices as DVC experiments (`qpipe-demo full-matrix`)")
