"""The sections past the decision: ``tracking`` (MLflow) and ``handoff`` (the bundles)."""

from __future__ import annotations

from pathlib import Path

from pipeline.config.fields import Section


class TrackingConfig(Section):
    tracking_uri: str = "sqlite:///mlflow.db"  # MLFLOW_TRACKING_URI overrides it
    experiment: str | None = None  # default: the model's name
    registered_model: str | None = None  # Model Registry name (default: the model's name)
    log_failures: bool = True      # `qpipe eval` logs a failed evaluation as FAILED at once


class HandoffConfig(Section):
    out_dir: Path = Path("handoff")
    tarball: bool = False
