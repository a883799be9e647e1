"""MLflow tracking — the only package that imports mlflow.

- :func:`run` logs one pipeline execution (a parent run, a run per variant), idempotently;
  a tracking server that does not answer leaves `reports/tracking-pending.json` instead of an error.
- :func:`register` registers an approved handoff bundle under the alias `approved`.
- :func:`ui_command` is the `mlflow server` command line for the local store (`qpipe ui`).
"""

# store first: it sets MLflow's environment (no telemetry, short retries) before mlflow loads.
from pipeline.tracking.store import TrackingError, resolve_uri, ui_command
from pipeline.tracking.log import run
from pipeline.tracking.model_registry import register

__all__ = ["TrackingError", "register", "resolve_uri", "run", "ui_command"]
