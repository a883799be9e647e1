"""The harness version is a hash of the code that decides what a record says: it covers the
evaluation stage's whole import closure, and changes when any of that code changes."""

import hashlib
import shutil

from pipeline.evaluate import harness
from pipeline.importgraph import closure

from .conftest import REPO


def test_the_version_hashes_the_evaluation_code():
    files = {p.relative_to(REPO).as_posix() for p in closure(["pipeline.evaluate.stage"], harness.PACKAGE)}
    assert {"pipeline/evaluate/stage.py", "pipeline/evaluate/harness.py",
            "pipeline/evaluate/scorers.py", "pipeline/engines/base.py"} <= files
    assert harness.harness_version() != hashlib.sha256(b"").hexdigest()[:16]  # not a hash of nothing


def test_a_change_to_the_scorer_changes_the_version(tmp_path, monkeypatch):
    pkg = tmp_path / "pipeline"
    shutil.copytree(harness.PACKAGE, pkg, ignore=shutil.ignore_patterns("__pycache__"))
    harness.harness_version.cache_clear()
    monkeypatch.setattr(harness, "PACKAGE", pkg)
    before = harness.harness_version()
    with (pkg / "evaluate" / "scorers.py").open("a") as fh:
        fh.write("\n# a changed scoring rule\n")
    harness.harness_version.cache_clear()
    assert harness.harness_version() != before
    harness.harness_version.cache_clear()
