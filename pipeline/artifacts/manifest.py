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
from dataclasses import dataclass
from pathlib import Path

from pipeline.io import file_sha256
from pipeline.errors import QpipeError

MANIFEST = "manifest.json"
SUMS = "SHA256SUMS"
SCHEMA = "qpipe.artifact/v1"
_SELF = {MANIFEST, SUMS}


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and p.relative_to(root).as_posix() not in _SELF)


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


def build_manifest(root: Path, *, lineage: dict, files: list[dict] | None = None) -> dict:
    """Hash every file under ``root`` and write ``manifest.json`` and ``SHA256SUMS`` there.

    ``files`` is a table already computed by ``file_table(root)`` (hashing a multi-GB artifact
    while something else reads it); it must list exactly the files present."""
    if files is None:
        files = file_table(root)
    else:
        present = {p.relative_to(root).as_posix() for p in _files(root)}
        if present != {f["path"] for f in files}:
            raise ValueError(f"{root}: the precomputed file table does not list the files present "
                             f"(missing {sorted(present - {f['path'] for f in files})[:3]})")
    manifest = {"schema": SCHEMA, **lineage, "files": files, "content_sha256": tree_sha256(files),
                "size_bytes": sum(f["size"] for f in files)}
    (root / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True, default=str) + "\n")
    (root / SUMS).write_text("".join(f"{f['sha256']}  {f['path']}\n" for f in files))
    return manifest


@dataclass(frozen=True)
class Mismatch:
    path: str
    problem: str  # "missing", "modified", "size", "extra", "no manifest"

    def __str__(self) -> str:
        return f"{self.path}: {self.problem}"


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
    manifest = json.loads(mpath.read_text())
    listed = {f["path"]: f for f in manifest["files"]}
    out = []
    for path, f in sorted(listed.items()):
        p = root / path
        if not p.is_file():
            out.append(Mismatch(path, "missing"))
        elif p.stat().st_size != f["size"]:
            out.append(Mismatch(path, f"size {p.stat().st_size} != {f['size']}"))
        elif file_sha256(p) != f["sha256"]:
            out.append(Mismatch(path, "modified (sha256 differs)"))
    present = {p.relative_to(root).as_posix() for p in _files(root)}
    out += [Mismatch(p, "extra (not in the manifest)") for p in sorted(present - set(listed))]
    sums = root / SUMS
    if sums.is_file():
        expected = "".join(f"{f['sha256']}  {f['path']}\n" for f in manifest["files"])
        if sums.read_text() != expected:
            out.append(Mismatch(SUMS, "does not match manifest.json"))
    else:
        out.append(Mismatch(SUMS, "missing"))
    return out


def require_verified(root: Path) -> dict:
    """Load a manifest after verifying every file; raise VerificationError otherwise."""
    problems = verify(root)
    if problems:
        raise VerificationError(root, problems)
    return json.loads((root / MANIFEST).read_text())
