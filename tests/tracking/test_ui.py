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
from conftest import stage_args

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
    summary = tracking.run(*stage_args(params, root, tracking.log.PARAMS), tracking_uri=uri)
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
    # The distribution-level signals: the metrics grid renders only the rows in view, so it is
    # scrolled until each metric is rendered with its value on its own row (the UI shows three
    # decimals: 0.0123 as 0.012).
    wanted = {"divergence/kld_mean": "0.012", "divergence/top1_agreement": "0.98",
              "divergence/ref_loglik_delta": "-0.01"}
    anchor = page.get_by_role("link", name="accuracy", exact=True).element_handle()
    # The metrics section: two virtualised grids kept in step (names, values).
    box = page.evaluate_handle("""el => { const g = el.closest('.ReactVirtualized__Grid');
        return g && g.parentElement.closest('[class*=collapse-content-box]'); }""", anchor)
    assert box.json_value() is not None, "the metrics grid is not where it was: layout changed"
    on_row = metrics_on_their_rows(page, box, wanted)
    page.screenshot(path=str(shot))
    assert all(on_row.values()), f"not shown on their rows in the compare view: {on_row}"


# A cell's row is its offset in its virtualised grid (style.top), whatever either grid's scroll
# position: the value's cell must share the name's row.
ON_ROW = """([b, name, value]) => {
    const row = e => { while (e && !(e.parentElement && e.parentElement.classList
        .contains('ReactVirtualized__Grid__innerScrollContainer'))) e = e.parentElement;
        return e ? e.style.top : null; };
    const a = [...b.querySelectorAll('a')].find(x => x.textContent.trim() === name);
    if (!a) return false;
    const top = row(a);
    return [...b.querySelectorAll('*')].some(e => e.children.length === 0
        && e.textContent.trim() === value && row(e) === top && !a.contains(e));
}"""
GRIDS = "[...b.querySelectorAll('.ReactVirtualized__Grid')]"
# Every grid has rendered the rows that fill its view at its current scroll position.
RENDERED = f"""b => {GRIDS}.every(g => {{
    const inner = g.querySelector('.ReactVirtualized__Grid__innerScrollContainer');
    if (!inner) return false;
    const cells = [...inner.children];
    const covers = y => cells.some(c => c.offsetTop <= y && y < c.offsetTop + c.offsetHeight);
    const bottom = Math.min(g.scrollTop + g.clientHeight, inner.offsetHeight) - 1;
    return covers(g.scrollTop) && covers(Math.max(g.scrollTop, bottom));
}})"""


def metrics_on_their_rows(page, box, wanted: dict[str, str]) -> dict[str, bool]:
    """Steps both grids (names, values) through the metrics half a view at a time, waits at each
    position until both have rendered the rows in view, and records which metrics showed their
    value on their own row. The grids render only the rows in view, and on a busy machine a
    render lags its scroll: reading before the render misses rows that are there."""
    on_row = {metric: False for metric in wanted}
    span, view = page.evaluate(f"b => [Math.max(...{GRIDS}.map(g => g.scrollHeight)),"
                               f" Math.min(...{GRIDS}.map(g => g.clientHeight))]", box)
    assert view > 0, "the metrics grids have no height: layout changed"
    step = max(1, view // 2)
    for top in range(0, span + step, step):
        page.evaluate(f"([b, top]) => {GRIDS}.forEach(g => {{ g.scrollTop = top; }})", [box, top])
        page.wait_for_function(RENDERED, arg=box)
        for metric, value in wanted.items():
            on_row[metric] = on_row[metric] or page.evaluate(ON_ROW, [box, metric, value])
        if all(on_row.values()):
            break
    return on_row
