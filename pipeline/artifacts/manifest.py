"""Artifact manifests: every file's path, size and SHA256, plus the artifact's lineage.

``manifest.json`` holds the lineage (base model and its hash, resolved recipe and its hash,
calibration set hash, scheme, format, engine, backend and tool versions, quantization time and
memory, a native load check); ``SHA256SUMS`` lists the same files in the format ``sha256sum -c``
reads. Nothing downstream uses an artifact whose files do not match.

    >>> m = build_manifest(Path("artifacts/x"), lineage={"variant": "x"})  # doctest: +SKIP
    >>> verify(Path("artifacts/x"))  # [] when every file matches         # doctest: +SKIP
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TypeVar

from pipeline.io import file_sha256
from pipeline.errors import QpipeError
from pipeline.contracts.files import ARTIFACT_SCHEMA, MANIFEST, SHA256SUMS
from pipeline.contracts.artifact_manifest import FileListing, read_listing
from pipeline.contracts.contract import Contract, ContractError

C = TypeVar("C", bound=Contract)

SUMS = SHA256SUMS
SCHEMA = ARTIFACT_SCHEMA
_SELF = {MANIFEST, SUMS}


def _walk(root: Path) -> tuple[list[Path], list[tuple[str, str]]]:
    """Regular files under ``root`` (links never followed), and every entry that is not a plain
    file or folder — a symlink, a socket, a device — with what it is."""
    files, odd = [], []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        here = Path(dirpath)
        for name in [*dirnames, *filenames]:
            p = here / name
            mode = p.lstat().st_mode
            rel = p.relative_to(root).as_posix()
            if stat.S_ISLNK(mode):
                odd.append((rel, f"symlink (to {os.readlink(p)!r}): links are not allowed in an "
                                 "artifact or bundle"))
            elif stat.S_ISREG(mode):
                if rel not in _SELF:
                    files.append(p)
            elif not stat.S_ISDIR(mode):
                odd.append((rel, "special file (not a regular file or folder)"))
        dirnames[:] = [d for d in dirnames if not (here / d).is_symlink()]
    return sorted(files), sorted(odd)


def _files(root: Path) -> list[Path]:
    files, odd = _walk(root)
    if odd:
        raise UnsafeFileError(root, odd)
    return files


def safe_relpath(path: str) -> bool:
    """A manifest path that stays inside its folder: relative, POSIX, no `..`, no empty parts."""
    if not isinstance(path, str) or not path or "\\" in path or "\x00" in path:
        return False
    pp = PurePosixPath(path)
    return not pp.is_absolute() and all(part not in ("", ".", "..") for part in path.split("/"))


def file_table(root: Path) -> list[dict]:
    return [{"path": p.relative_to(root).as_posix(), "size": p.stat().st_size, "sha256": file_sha256(p)}
            for p in _files(root)]


def tree_sha256(files: list[dict]) -> str:
    """One hash for a set of files: SHA256 over the sorted ``sha256  path`` lines."""
    lines = "".join(f"{f['sha256']}  {f['path']}\n" for f in sorted(files, key=lambda f: f["path"]))
    return hashlib.sha256(lines.encode()).hexdigest()


def model_identity(model_dir: Path) -> dict:
    """The base model's identity: its name (config) and a content hash over its files."""
    files = file_table(model_dir)
    cfg = json.loads((model_dir / "config.json").read_text())
    return {"path": str(model_dir), "architectures": cfg.get("architectures"),
            "content_sha256": tree_sha256([f for f in files if not f["path"].endswith(".md")]),
            "files": len(files)}


def build_manifest(root: Path, *, lineage: dict, files: list[dict] | None = None,
                   contract=None) -> dict:
    """Hash every file under ``root`` and write ``manifest.json`` and ``SHA256SUMS`` there.

    ``files`` is a table already computed by ``file_table(root)`` (hashing a multi-GB artifact
    while something else reads it); it must list exactly the files present. ``contract`` (a
    pipeline.contracts model: the artifact's, the handoff bundle's) types the manifest before it is
    written; without one only the file table is checked."""
    if files is None:
        files = file_table(root)
    else:
        present = {p.relative_to(root).as_posix() for p in _files(root)}
        if present != {f["path"] for f in files}:
            raise ValueError(f"{root}: the precomputed file table does not list the files present "
                             f"(missing {sorted(present - {f['path'] for f in files})[:3]})")
    manifest = {"schema": SCHEMA, **lineage, "files": files, "content_sha256": tree_sha256(files),
                "size_bytes": sum(f["size"] for f in files)}
    if contract is not None:
        manifest = contract.read(manifest, root / MANIFEST).dump()  # typed before written
    (root / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True, default=str) + "\n")
    (root / SUMS).write_text("".join(f"{f['sha256']}  {f['path']}\n" for f in files))
    return manifest


@dataclass(frozen=True)
class Mismatch:
    path: str
    problem: str  # "missing", "modified", "size", "extra", "no manifest"

    def __str__(self) -> str:
        return f"{self.path}: {self.problem}"


class UnsafeFileError(QpipeError, ValueError):
    def __init__(self, root: Path, odd: list[tuple[str, str]]):
        self.entries = odd
        super().__init__(f"{root}: " + "; ".join(f"{p}: {why}" for p, why in odd)
                         + " — fix: replace each with a regular file (copy what a link points at)")


class VerificationError(QpipeError, RuntimeError):
    def __init__(self, root: Path, mismatches: list[Mismatch]):
        self.mismatches = mismatches
        super().__init__(f"{root}: artifact does not match its manifest — "
                         + "; ".join(map(str, mismatches))
                         + " — fix: re-run its quantize stage (`dvc repro quantize@<variant>`) "
                         "or restore the files (`dvc checkout`)")


def verify(root: Path) -> list[Mismatch]:
    """Every missing, modified or extra file, by path (empty list: the artifact is intact)."""
    mpath = root / MANIFEST
    if not mpath.is_file():
        return [Mismatch(str(root), "no manifest")]
    if mpath.is_symlink():
        return [Mismatch(MANIFEST, "symlink: links are not allowed in an artifact or bundle")]
    try:
        manifest = read_listing(mpath)
    except ContractError as err:
        return [Mismatch(MANIFEST, f"unreadable ({err.problem})")]
    listed = {f.path: f for f in manifest.files}
    out = [Mismatch(str(path), "unsafe path (absolute, `..` or empty part): refused")
           for path in sorted(map(str, listed)) if not safe_relpath(path)]
    if out:
        return out
    files, odd = _walk(root)
    out += [Mismatch(p, why) for p, why in odd]
    for path, f in sorted(listed.items()):
        p = root / path
        if p.is_symlink() or any(q.is_symlink() for q in p.parents if root in q.parents):
            continue  # reported above; never read through a link
        if not p.is_file():
            out.append(Mismatch(path, "missing"))
        elif p.stat().st_size != f.size:
            out.append(Mismatch(path, f"size {p.stat().st_size} != {f.size}"))
        elif file_sha256(p) != f.sha256:
            out.append(Mismatch(path, "modified (sha256 differs)"))
    present = {p.relative_to(root).as_posix() for p in files}
    out += [Mismatch(p, "extra (not in the manifest)") for p in sorted(present - set(listed))]
    if manifest.content_sha256 != tree_sha256([f.model_dump() for f in manifest.files]):
        out.append(Mismatch(MANIFEST, "content_sha256 is not the hash of the files it lists"))
    sums = root / SUMS
    if sums.is_file():
        expected = "".join(f"{f.sha256}  {f.path}\n" for f in manifest.files)
        if sums.read_text() != expected:
            out.append(Mismatch(SUMS, "does not match manifest.json"))
    else:
        out.append(Mismatch(SUMS, "missing"))
    return out


def require_verified(root: Path, contract: type[C] | None = None) -> FileListing | C:
    """A manifest after verifying every file (VerificationError otherwise): through `contract`
    (pipeline.contracts: the artifact's), or as its file listing, whose lineage (format, scheme, …)
    reads as attributes where the manifest records it."""
    problems = verify(root)
    if problems:
        raise VerificationError(root, problems)
    return contract.load(root / MANIFEST) if contract is not None else read_listing(root / MANIFEST)
