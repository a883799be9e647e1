"""`artifacts/<variant>/manifest.json`: every file of a quantized artifact by path, size and SHA256,
and its lineage (base model, recipe, calibration set, scheme, format, engine, backend, tools)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field, ValidationError

from pipeline.contracts.contract import Contract, ContractError, OpenPart, Part, describe
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


class FileListing(OpenPart):
    """What every manifest over a folder lists, whatever lineage it records beside (an artifact's,
    a handoff bundle's, one a test writes): the files by path, size and SHA256 and the hash over
    them. Integrity checks read this much and no more; the lineage is read through
    :class:`ArtifactManifest` or the bundle's own contract."""

    schema_id: str | None = Field(default=None, alias="schema")
    files: list[FileEntry]
    content_sha256: str | None = None
    size_bytes: int | None = None


def read_listing(path: Path) -> FileListing:
    """The file listing of the manifest at `path`; ContractError when it is missing, not JSON
    or lists no files."""
    try:
        return FileListing.model_validate_json(Path(path).read_bytes())
    except FileNotFoundError:
        raise ContractError(path, "missing", "re-run the stage that writes it") from None
    except (ValidationError, ValueError) as err:
        raise ContractError(path, f"not a manifest: {describe(err)}", "re-run the stage that writes it") from None
