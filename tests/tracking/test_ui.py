"""The MLflow UI in headless Chromium (Debian's `chromium`, driven by Playwright; no browser is
downloaded): the experiment's runs view lists every variant run under the execution's parent,
and the compare view shows their metrics."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mlflow import MlflowClient

from pipeline import tracking
from .conftest import VARIANTS, mlflow_server, skip_or_fail

pytestmark = pytest.mark.slow
CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
WAIT_MS = 60_000


@pytest.fixture
def browser():
    try:
        import playwright.sync_api as playwright
    except ImportError:
        skip_or_fail("playwright is not installed: pip install playwright (dev extra)")
    if not CHROMIUM.is_file():
        skip_or_fail(f"{CHROMIUM} is missing: `apt-get install -y chromium` (.ci/run installs it)")
    with playwright.sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


def test_runs_and_compare_views_show_every_variant(evaluated, browser, tmp_path):
    params, root = evaluated
    uri = f"sqlite:///{root / 'mlflow.db'}"
    summary = tracking.run(params, root, tracking_uri=uri)
    exp_id = MlflowClient(uri).get_experiment_by_name("tiny-llama").experiment_id
    shots = tmp_path / "screenshots"  # kept by pytest under its basetemp, to look at
    shots.mkdir()
    artifacts = ["--default-artifact-root", (root / "mlruns").as_uri()]
    with mlflow_server(uri, tmp_path / "server.log", artifacts=artifacts) as (url, _):
        page = browser.new_page(viewport={"width": 1600, "height": 1000})
        page.set_default_timeout(WAIT_MS)
        check_runs_view(page, f"{url}/#/experiments/{exp_id}/runs", shots / "runs.png")
        ids = [summary["runs"][v] for v in VARIANTS]
        compare = f"{url}/#/compare-runs?runs={json.dumps(ids)}&experiments={json.dumps([exp_id])}"
        check_compare_view(page, compare, shots / "compare.png")


def check_runs_view(page, url: str, shot: Path) -> None:
    # MLflow 3 opens an experiment on its GenAI overview; the runs table is its own route.
    page.goto(url)
    parent = page.locator("[role=row]", has_text="pipeline ").first
    parent.wait_for()
    # Variant runs are nested under the execution's parent run, collapsed: open it.
    parent.locator("[col-id*='Run Name'] button").first.click()
    for name in VARIANTS:
        page.get_by_role("link", name=name, exact=True).wait_for()
    page.screenshot(path=str(shot))


def check_compare_view(page, url: str, shot: Path) -> None:
    page.goto(url)
    page.get_by_text("Comparing 6 Runs").wait_for()
    for name in VARIANTS:
        page.get_by_text(name, exact=True).first.wait_for()
    for metric in ("accuracy", "accuracy_delta", "accuracy_delta_ci_low", "compression"):
        page.get_by_text(metric, exact=True).first.wait_for()
    # Names and values sit in two virtualised grids side by side; the values are these numbers
    # only there: baseline 10/12, GPTQ 9/12 and its delta.
    page.get_by_role("link", name="accuracy", exact=True).scroll_into_view_if_needed()
    text = page.inner_text("body")
    for value in ("0.833", "0.75", "-0.083"):
        assert value in text, value
    page.screenshot(path=str(shot))
