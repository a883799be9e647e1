"""Which served variants bench measures: one per distinct computation. Two variants served by the
same engine with the same settings from artifacts whose served files hold the same tensors —
names, storage types and shapes — and the same everything else run the same kernels on the same
shapes: their speed is one (the CPU and GPU kernels here do not branch on weight values, and bench
forces every output's length). So a re-served baseline, or the same preset quantized with two
calibration sets (only the weights' values and the importance matrix's provenance differ), is
measured once; the others take its figures, marked with why."""

from __future__ import annotations

import hashlib
import json
import struct
from pathlib import Path
from typing import Any

from pipeline.layout import Layout
from pipeline.contracts.files import MANIFEST, SHA256SUMS
from pipeline.stage_params import StageView

# files of an artifact that no engine reads: the manifest, its checksums, the importance matrix
NOT_SERVED = (MANIFEST, SHA256SUMS)
# GGUF metadata that records where an importance matrix came from, not what is computed
PROVENANCE_KEYS = ("quantize.imatrix.",)


def _gguf_layout(path: Path, h) -> None:
    from gguf import GGUFReader

    r = GGUFReader(str(path))
    for name, f in sorted(r.fields.items()):
        if name.startswith(PROVENANCE_KEYS):
            continue
        h.update(name.encode() + b"\0")
        for part in f.parts:
            h.update(bytes(part))
    for t in r.tensors:
        h.update(f"{t.name}:{t.tensor_type.name}:{list(map(int, t.shape))}\n".encode())


def _safetensors_layout(path: Path, h) -> None:
    with path.open("rb") as fh:
        n = struct.unpack("<Q", fh.read(8))[0]
        header = json.loads(fh.read(n))
    header.pop("__metadata__", None)
    h.update(json.dumps({k: [v["dtype"], v["shape"]] for k, v in header.items()},
                        sort_keys=True).encode())


def compute_signature(artifact: Path) -> str:
    """A hash of what an engine computes with from this artifact: for weight files (GGUF,
    safetensors) their tensors' names, types and shapes (and a GGUF's metadata, less an
    importance matrix's provenance); every other served file by its bytes."""
    h = hashlib.sha256()
    for path in sorted(p for p in artifact.rglob("*") if p.is_file() and not p.is_symlink()):
        rel = path.relative_to(artifact).as_posix()
        if rel in NOT_SERVED or (path.suffix == ".gguf" and path.name.startswith("imatrix")):
            continue
        h.update(rel.encode() + b"\0")
        layout = {".gguf": _gguf_layout, ".safetensors": _safetensors_layout}.get(path.suffix)
        try:
            if layout is None:
                raise ValueError("not a weight file")
            part = hashlib.sha256()
            layout(path, part)
        except (ValueError, KeyError, OSError, struct.error):  # unread: its bytes decide
            part = hashlib.sha256(b"bytes:" + path.read_bytes())
        h.update(part.digest())
    return h.hexdigest()


def distinct_computations(params: StageView, layout: Layout,
                          names: list[str]) -> tuple[list[str], dict[str, dict[str, Any]]]:
    """The variants to measure — one per distinct (computation, engine, engine settings) — and
    each other variant's twin: {variant: {"as": the one measured, "why": "same bytes" or "same
    tensor types and shapes"}}."""
    from pipeline.contracts import ArtifactManifest

    first: dict[str, str] = {}
    sha: dict[str, str] = {}
    keep, twins = [], {}
    for n in names:
        sha[n] = ArtifactManifest.load(layout.artifact(n) / MANIFEST).content_sha256
        how = json.dumps([params.engine_for(n), params.engine_settings(n)], sort_keys=True, default=str)
        key = compute_signature(layout.artifact(n)) + hashlib.sha256(how.encode()).hexdigest()
        if key in first:
            same = first[key]
            twins[n] = {"as": same, "why": "the same bytes served alike" if sha[n] == sha[same]
                        else "the same tensor types and shapes served alike (other weight values)"}
        else:
            first[key] = n
            keep.append(n)
    return keep, twins
