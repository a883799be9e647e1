"""`artifacts/<variant>/manifest.json`: every file of a quantized artifact by path, size and SHA256,
and its lineage (base model, recipe, calibration set, scheme, format, engine, backend, tools)."""

from __future__ import annotations

from typing import Any, ClassVar

from pipeline.contracts.contract import Contract, OpenPart, Part
from pipeline.contracts.files import ARTIFACT_SCHEMA, MANIFEST

class FileEntry(Part):
    path: str
    size: int
    sha256: str

class BaseModelRef(Part):
    """The base model the artifact was made from, by its content hash."""

    name: str
    content_sha256: str
    path: str | None = None
    architectures: list[str] | None = None
    files: int | None = None

class RecipeRef(Part):
    path: str
    sha256: str
    resolved: Any = None  # the recipe as the tool reads it, in the tool's own format

class CalibrationRef(Part):
    """The calibration set the quantizer read: its card's content hash, the bytes read."""

    name: str | None = None
    content_sha256: str | None = None
    samples: int | None = None
    files_sha256: dict[str, str] | None = None

class Files(Contract):
    """What a manifest over a folder holds beside its lineage (artifact and handoff bundle)."""

    SCHEMA: ClassVar[str] = ""
    WRITER: ClassVar[str] = ""

    files: list[FileEntry]
    content_sha256: str
    size_bytes: int

class ArtifactManifest(Files):
    SCHEMA: ClassVar[str] = ARTIFACT_SCHEMA
    FILE: ClassVar[str] = MANIFEST  # its name in its stage's folder
    WRITER: ClassVar[str] = "quantize@{name}"

    variant: str
    scheme: str
    format: str
    backend: str
    bits: int | None = None
    group_size: int | None = None
    engine: str | None = None
    tool_versions: dict[str, Any] = {}  # open-ended: each backend's own tools
    base_model: BaseModelRef
    recipe: RecipeRef | None = None
    calibration: CalibrationRef | None = None
    options: dict[str, Any] = {}
    trust_remote_code: bool | None = None
    quantization: OpenPart | None = None  # device, processes, gpu and the backend's own facts
    load_check: OpenPart | None = None
    notes: list[str] = []
