"""Where runs go: the tracking URI (resolved against the project), a client, a reachability
check, and the command line that opens the store in the MLflow UI.

Precedence of the URI: an explicit argument, then ``MLFLOW_TRACKING_URI``, then
``tracking.tracking_uri`` in params (default ``sqlite:///mlflow.db`` inside the project).
"""

from __future__ import annotations

import os
import ssl
import sys
import urllib.error
import urllib.request
from pathlib import Path

# Set before mlflow is imported anywhere in this package: no usage reports leave the machine,
# no progress bars in stage logs, and a dead server costs seconds, not the client's default
# minutes of retries. A value the user exported wins.
for _key, _value in {"MLFLOW_DISABLE_TELEMETRY": "true", "DO_NOT_TRACK": "true",
                     "MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR": "false",
                     "MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT": "true",
                     "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "2",
                     "MLFLOW_HTTP_REQUEST_TIMEOUT": "60"}.items():
    os.environ.setdefault(_key, _value)

from mlflow import MlflowClient  # noqa: E402
from mlflow.entities import Experiment  # noqa: E402
from mlflow.exceptions import MlflowException  # noqa: E402

from pipeline.errors import QpipeError  # noqa: E402
from pipeline.stage_params import StageView  # noqa: E402


class TrackingError(QpipeError, RuntimeError):
    """The tracking store cannot do what was asked; the message says how to fix it."""


def resolve_uri(params: StageView, root: Path, tracking_uri: str | None = None) -> str:
    uri = tracking_uri or os.environ.get("MLFLOW_TRACKING_URI") or params.tracking.tracking_uri
    return absolute_sqlite(uri, root)


def absolute_sqlite(uri: str, root: Path) -> str:
    """`sqlite:///mlflow.db` is relative to the current directory for SQLAlchemy; anchor it at the
    project root so the CLI, `dvc repro` and `qpipe ui` all open the same file."""
    prefix = "sqlite:///"
    if not uri.startswith(prefix) or uri.startswith(prefix + "/") or uri == prefix + ":memory:":
        return uri
    return prefix + str((root / uri[len(prefix):]).resolve())


def is_remote(uri: str) -> bool:
    return uri.startswith(("http://", "https://"))


def redact(uri: str) -> str:
    """The URI without a password or token (userinfo, query string), for logs and markers."""
    from pipeline.secrets import mask_text

    return mask_text(uri)


def artifact_root(root: Path) -> str:
    return (root / "mlruns").resolve().as_uri()


def client(uri: str) -> MlflowClient:
    return MlflowClient(tracking_uri=uri, registry_uri=uri)


def unreachable(uri: str, timeout: float = 5.0) -> str | None:
    """Why a tracking server does not answer, or None when it does (local stores always do)."""
    if not is_remote(uri):
        return None
    url = uri.rstrip("/") + "/health"
    context = None
    if os.environ.get("MLFLOW_TRACKING_INSECURE_TLS", "").lower() in ("1", "true"):
        context = ssl._create_unverified_context()  # the same choice MLflow's own client makes
    try:
        with urllib.request.urlopen(url, timeout=timeout, context=context) as response:
            if response.status == 200:
                return None
            return f"{redact(url)} answered HTTP {response.status}"
    except urllib.error.HTTPError as err:  # something answers, but not an MLflow server
        return f"{redact(url)} answered HTTP {err.code} {err.reason}; is this an MLflow server?"
    except (urllib.error.URLError, OSError) as err:
        return f"{redact(url)} did not answer: {getattr(err, 'reason', err)}"


def experiment(mlflow: MlflowClient, name: str, uri: str, root: Path) -> Experiment:
    """Get or create the experiment. A local store keeps its artifacts in <project>/mlruns (the
    default would be ./mlruns of whatever directory the command ran in); a server decides its own."""
    found = mlflow.get_experiment_by_name(name)
    if found is not None:
        if found.lifecycle_stage == "deleted":
            raise TrackingError(f"experiment {name!r} at {redact(uri)} is deleted; restore it "
                                f"(`mlflow experiments restore --experiment-id {found.experiment_id}`)"
                                " or set tracking.experiment in params.yaml to another name")
        return found
    location = None if is_remote(uri) else artifact_root(root)
    try:
        return mlflow.get_experiment(mlflow.create_experiment(name, artifact_location=location))
    except MlflowException:
        found = mlflow.get_experiment_by_name(name)  # created meanwhile by another process
        if found is None:
            raise
        return found


def experiment_name(params: StageView) -> str:
    return params.tracking.experiment or params.model.name


def registered_model_name(params: StageView) -> str:
    return params.tracking.registered_model or params.model.name


def ui_command(params: StageView, root: Path, port: int, *, tracking_uri: str | None = None) -> list[str]:
    """`mlflow server` on the configured local store, on 127.0.0.1:<port>.

    >>> ui_command(params, Path("."), 5000)                   # doctest: +SKIP
    ['.venv/bin/mlflow', 'server', '--backend-store-uri', 'sqlite:////…/mlflow.db', …]
    """
    uri = resolve_uri(params, root, tracking_uri)
    if is_remote(uri):
        raise TrackingError(f"the tracking store is the server at {redact(uri)}: open that address "
                            "in a browser (unset MLFLOW_TRACKING_URI to open the local store)")
    exe = Path(sys.executable).with_name("mlflow")
    return [str(exe) if exe.is_file() else "mlflow", "server", "--backend-store-uri", uri,
            "--default-artifact-root", artifact_root(root), "--host", "127.0.0.1",
            "--port", str(port), "--workers", "1"]
