"""`qpipe reproduce <variant>`: quantize a variant again, into a temporary folder, from the same
inputs, and say whether the bytes are the ones in ``artifacts/<variant>``.

Same inputs (base model, recipe, calibration files, tool versions, device) must give the same
files: the manifest holds no run facts (they are in the run record), so an identical rebuild has
an identical manifest too and DVC sees the same artifact. A file that differs is named with its
size and hashes on both sides; the verdict is a fact about this backend on this host, which the
README's reproducibility table records.

    >>> compare_files([{"path": "a", "sha256": "1", "size": 1}], [{"path": "a", "sha256": "1", "size": 1}])
    []
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.artifacts.manifest import MANIFEST, verify
from pipeline.contracts.artifact_manifest import read_listing
from pipeline.errors import QpipeError
from pipeline.layout import Layout
from pipeline.quantize import stage
from pipeline.stage_params import StageView


class ReproduceError(QpipeError, RuntimeError):
    pass


@dataclass
class Reproduction:
    variant: str
    recorded_sha256: str
    rebuilt_sha256: str
    differences: list[str] = field(default_factory=list)  # one line per differing file
    manifest_identical: bool = False
    kept: Path | None = None

    @property
    def matches(self) -> bool:
        return self.recorded_sha256 == self.rebuilt_sha256 and not self.differences

    def lines(self) -> list[str]:
        head = (f"{self.variant}: rebuilt artifact matches artifacts/{self.variant} "
                f"(content {self.rebuilt_sha256[:16]}…, manifest "
                f"{'byte-identical' if self.manifest_identical else 'differs outside the files'})"
                if self.matches else
                f"{self.variant}: rebuilt artifact DIFFERS from artifacts/{self.variant} "
                f"(recorded {self.recorded_sha256[:16]}…, rebuilt {self.rebuilt_sha256[:16]}…)")
        tail = [f"  {d}" for d in self.differences]
        if self.kept:
            tail.append(f"  rebuilt copy kept in {self.kept}")
        return [head, *tail]


def compare_files(recorded: list[dict], rebuilt: list[dict]) -> list[str]:
    """Per file: missing on one side, or different bytes (with sizes and hash prefixes)."""
    a = {f["path"]: f for f in recorded}
    b = {f["path"]: f for f in rebuilt}
    out = []
    for path in sorted(a.keys() | b.keys()):
        if path not in b:
            out.append(f"{path}: only in the recorded artifact")
        elif path not in a:
            out.append(f"{path}: only in the rebuild")
        elif a[path]["sha256"] != b[path]["sha256"]:
            out.append(f"{path}: {a[path]['size']} B sha256 {a[path]['sha256'][:12]}… recorded, "
                       f"{b[path]['size']} B sha256 {b[path]['sha256'][:12]}… rebuilt")
    return out


def reproduce(params: StageView, layout: Layout, name: str, *, keep: Path | None = None) -> Reproduction:
    """On the device and GPUs params.yaml names (quantize.device, quantize.gpus); `params`: the
    quantize stage's own (stage.PARAMS, for `name`)."""
    art = layout.artifact(name)
    problems = verify(art)
    if problems:
        raise ReproduceError(f"{art} does not verify ({'; '.join(map(str, problems[:3]))}) — "
                             f"nothing to compare a rebuild with; fix: `dvc repro quantize@{name}` "
                             "or `dvc checkout`")
    recorded_bytes = (art / MANIFEST).read_bytes()
    recorded = read_listing(art / MANIFEST)
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f"qpipe-reproduce-{name}-") as tmp:
        parent = keep if keep is not None else Path(tmp)
        rebuilt = stage.run(params, layout, name, device=params.quantize.device,
                            gpus=params.quantize.gpus, out_parent=parent)
        rebuilt_bytes = (parent / name / MANIFEST).read_bytes()
    return Reproduction(name, recorded.content_sha256, rebuilt["content_sha256"],
                        differences=compare_files([f.model_dump() for f in recorded.files], rebuilt["files"]),
                        manifest_identical=recorded_bytes == rebuilt_bytes,
                        kept=parent / name if keep is not None else None)
