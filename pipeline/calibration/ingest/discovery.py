"""Finding the input files: given files are checked, folders are walked in sorted order, and
every file of a folder that is not read (hidden, compressed, another type) is accounted for."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from pipeline.calibration.ingest.readers import SUFFIXES
from pipeline.calibration.ingest.rejects import IngestError

logger = logging.getLogger(__package__)  # one logger for all of ingest, as log filters name it

PathsLike = str | os.PathLike[str] | Iterable[str | os.PathLike[str]]


COMPRESSED = (".gz", ".bz2", ".xz", ".zst", ".zip", ".7z", ".tgz")


def discover_files(paths: PathsLike, skipped: dict[str, str] | None = None) -> list[tuple[Path, str]]:
    """(path, display name) of every input file; folders are walked in sorted order. Files of a
    folder that are not read are named in `skipped` with why (compressed logs among them: they
    are counted and reported, never dropped in silence)."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    found: list[tuple[Path, str]] = []
    for given in paths:
        root = Path(given)
        if root.is_file():
            if root.suffix.lower() in COMPRESSED:
                raise IngestError(f"{root}: compressed logs are not read — fix: decompress it "
                                  f"(e.g. `gunzip -k {root.name}`) and point data.sources at the result")
            if root.suffix.lower() not in SUFFIXES:
                raise IngestError(
                    f"{root}: unsupported file type {root.suffix!r}; convert it to one of "
                    f"{', '.join(SUFFIXES)}"
                )
            found.append((root, root.as_posix()))
        elif root.is_dir():
            found.extend(_walk(root, skipped if skipped is not None else {}))
        else:
            raise IngestError(f"{root}: no such file or folder; check the sources path in params.yaml")
    return found


def _walk(root: Path, skipped: dict[str, str]) -> Iterator[tuple[Path, str]]:
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        relative = path.relative_to(root)
        display = (root / relative).as_posix()
        if any(part.startswith(".") for part in relative.parts):
            logger.debug("skipping hidden file %s", path)
        elif path.suffix.lower() in SUFFIXES:
            yield path, display
        elif path.suffix.lower() in COMPRESSED:
            skipped[display] = "compressed: not read (decompress it to include its records)"
            logger.warning("NOT READ: %s is compressed — decompress it to include its records", path)
        else:
            skipped[display] = f"not one of {', '.join(SUFFIXES)}"
            logger.warning("ignoring %s: not one of %s", path, ", ".join(SUFFIXES))
