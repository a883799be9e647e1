"""The committed dvc.lock still describes the committed code: every code, config or data file a
stage names that lives in git (the pipeline's modules, the locked constraints, set-up scripts,
recipes, the demo's model and logs, params.yaml's sections) hashes as the lock recorded. A change
to any of them without `dvc repro` (and the new dvc.lock committed) fails here — otherwise a fresh
clone would redo work the lock claims is done, and results would name code they were not made by.

Outputs (artifacts, results) are not in git and not checked here: a fresh clone has none."""

import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def git_tracked() -> set[str]:
    out = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True)
    if out.returncode != 0:
        pytest.skip("not a git checkout")
    return set(out.stdout.splitlines())


def stale_entries(status: dict, tracked: set[str]) -> list[str]:
    """What `dvc status` reports against the lock for files in git (and params, commands)."""
    def in_git(path: str) -> bool:
        return path in tracked or any(t.startswith(path.rstrip("/") + "/") for t in tracked)

    stale = []
    for stage, changes in status.items():
        for change in changes:
            if isinstance(change, str):  # "changed command", "always changed", …
                stale.append(f"{stage}: {change}")
                continue
            for path, what in (change.get("changed deps") or {}).items():
                if path.endswith("params.yaml") or (what in ("modified", "new") and in_git(path)):
                    stale.append(f"{stage}: {path} {what}")
    return stale


def test_the_committed_lock_matches_the_code_it_names():
    from dvc.repo import Repo

    with Repo(str(REPO)) as repo:
        status = repo.status()
    stale = stale_entries(status, git_tracked())
    assert stale == [], ("dvc.lock does not match the committed code — run `dvc repro` (or "
                         "`bash scripts/demo.sh`) and commit dvc.lock:\n  " + "\n  ".join(stale[:20]))


def test_stale_entries_names_code_params_and_commands_but_not_outputs():
    status = {"quantize@a": [{"changed deps": {"pipeline/quantize": "modified",
                                               "data/calibration/business": "deleted",
                                               "params.yaml": {"modified": "variants.a"}},
                              "changed outs": {"artifacts/a": "deleted"}}],
              "split": ["changed command"]}
    tracked = {"pipeline/quantize/stage.py", "params.yaml"}
    assert stale_entries(status, tracked) == ["quantize@a: pipeline/quantize modified",
                                              "quantize@a: params.yaml {'modified': 'variants.a'}",
                                              "split: changed command"]
