"""A tracking server that does not answer never fails the stage: the call leaves a marker, and
the next call that reaches a store logs everything and removes it."""

import json
import time

from mlflow import MlflowClient

from pipeline import tracking
from .conftest import FAILED, VARIANTS, free_port
from conftest import stage_args


def test_server_down_then_back(evaluated):
    params, root = evaluated
    down = f"http://user:secret@127.0.0.1:{free_port()}"  # nothing listens there
    start = time.monotonic()
    summary = tracking.run(*stage_args(params, root, tracking.log.PARAMS), tracking_uri=down)
    took = time.monotonic() - start
    assert summary["pending"] is True and summary["logged"] == [] and took < 30
    marker = root / "reports/tracking-pending.json"
    saved = json.loads(marker.read_text())
    assert sorted(saved["variants"]) == sorted(VARIANTS) and "did not answer" in saved["reason"]
    assert "secret" not in marker.read_text() and "qpipe track" in saved["fix"]

    # still down: same marker, first time kept
    again = tracking.run(*stage_args(params, root, tracking.log.PARAMS), tracking_uri=down)
    assert again["pending"] and json.loads(marker.read_text())["since"] == saved["since"]

    uri = f"sqlite:///{root / 'mlflow.db'}"
    back = tracking.run(*stage_args(params, root, tracking.log.PARAMS), tracking_uri=uri)
    assert back["pending"] is False and sorted(back["logged"]) == sorted(VARIANTS)
    assert not marker.exists()
    assert MlflowClient(uri).get_run(back["runs"][FAILED]).info.status == "FAILED"


def test_the_marker_is_not_logged_as_a_report(evaluated):
    params, root = evaluated
    tracking.run(*stage_args(params, root, tracking.log.PARAMS), tracking_uri=f"http://127.0.0.1:{free_port()}")
    uri = f"sqlite:///{root / 'mlflow.db'}"
    summary = tracking.run(*stage_args(params, root, tracking.log.PARAMS), tracking_uri=uri)
    reports = MlflowClient(uri).list_artifacts(summary["parent_run_id"], "reports")
    assert {a.path for a in reports} == {"reports/comparison.json", "reports/comparison.md"}
