"""The handoff bundle's `manifest.json`: every file of `handoff/<variant>/` by hash, what the bundle
holds (artifact, base model, scheme, calibration, evaluation set, gate verdict, engine, serve
command) and the chain of custody `qpipe verify` checks."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field

from pipeline.contracts.artifact_manifest import BaseModelRef, Files
from pipeline.contracts.contract import Part
from pipeline.contracts.files import CUSTODY_SCHEMA, HANDOFF_SCHEMA, MANIFEST



class CustodyComparison(Part):
    sha256: str
    baseline: str | None = None
    baseline_artifact_sha256: str | None = None
    reference: str | None = None
    reference_artifact_sha256: str | None = None
    evalset_sha256: str | None = None


class CustodyEvaluation(Part):
    artifact_sha256: str | None = None
    metrics_sha256: str | None = None
    samples_sha256: str | None = None


class CustodyGate(Part):
    profile: str | None = None
    verdict: str | None = None


class Chain(Part):
    """The chain of custody: artifact → evaluation → comparison → gate, by hashes."""

    schema_id: str = Field(CUSTODY_SCHEMA, alias="schema")
    variant: str
    artifact_sha256: str
    evaluation: CustodyEvaluation
    comparison: CustodyComparison
    gate: CustodyGate


class BundleIndex(Files):
    SCHEMA: ClassVar[str] = HANDOFF_SCHEMA
    FILE: ClassVar[str] = MANIFEST  # its name in its stage's folder
    WRITER: ClassVar[str] = "handoff"

    variant: str
    artifact_sha256: str
    base_model: BaseModelRef
    scheme: str
    calibration_sha256: str | None = None
    evalset_sha256: str
    gate: dict[str, Any] | None = None  # the comparison's gate verdict, as compare wrote it
    engine: str
    serve: str
    chain: Chain
    pii_scrubbing: bool
    trust_remote_code: bool
