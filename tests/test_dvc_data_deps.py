"""Every data file a stage reads is one its dvc.yaml stage declares: stages run in a small demo
project under an audit hook that records each file the process opens, and every read under the
project (code aside: tests/test_dvc_stages.py checks imports) must lie inside a declared dep, a
declared out of the same stage (reading back what it wrote), or be params.yaml (DVC tracks the
declared keys). An undeclared read is a stage DVC would not re-run when that file changes.

What runs in a child process (llama.cpp's tools, an engine server) is not seen by the hook; the
stage's own reads — tokenizer, manifests, calibration cards, the evaluation set — are.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest
import yaml

from conftest import REPO, stage_args

pytestmark = pytest.mark.slow

_RECORDING: list[tuple[str, bool]] | None = None


def _hook(event: str, args: tuple) -> None:
    if _RECORDING is not None and event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)):
        mode, flags = (args[1] if len(args) > 1 else None), (args[2] if len(args) > 2 else 0)
        writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or \
            (isinstance(flags, int) and bool(flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT)))
        _RECORDING.append((os.fsdecode(args[0]), bool(writes)))


sys.addaudithook(_hook)


def reads(fn, *args) -> set[str]:
    """The files `fn(*args)` opened for reading, but those it wrote first (its own scratch and
    outputs, read back) and the folders holding them."""
    global _RECORDING
    _RECORDING = []
    try:
        fn(*args)
    finally:
        seen, _RECORDING = _RECORDING, None
    written = [Path(os.path.realpath(p)) for p, w in seen if w]
    out = set()
    for p in {os.path.realpath(p) for p, w in seen if not w}:
        if not any(w == Path(p) or w.is_relative_to(p) for w in written):
            out.add(p)
    return out


def declared(stage: str) -> tuple[list[str], list[str]]:
    from dvc.dependency.param import ParamsDependency
    from dvc.repo import Repo

    with Repo(str(REPO)) as repo:
        (s,) = [s for s in repo.index.stages if s.addressing == stage]
        return ([str(d.def_path) for d in s.deps if not isinstance(d, ParamsDependency)],
                [str(o.def_path) for o in s.outs])


def undeclared(root: Path, stage: str, opened: set[str]) -> list[str]:
    deps, outs = declared(stage)
    root = Path(os.path.realpath(root))
    covered = [root / p for p in deps + outs]
    bad = []
    for path in sorted(opened):
        p = Path(path)
        if not p.is_relative_to(root) or p.suffix in (".py", ".pyc") or p.name == "params.yaml":
            continue
        rel = p.relative_to(root)
        if any(part.startswith(".staging") for part in rel.parts):
            continue  # the stage's own outputs before they are moved into place
        if not any(p == c or p.is_relative_to(c) for c in covered):
            bad.append(rel.as_posix())
    return bad


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    from demo.matrix import full_params
    from pipeline.config import Params

    root = tmp_path_factory.mktemp("audited-project")
    data = full_params(REPO)
    for spec in data["calibration"]["sets"].values():
        spec.update(num_samples=16, max_seq_len=256)
    data["split"]["eval_share"] = 0.2
    data["evaluate"].update(limit=24, warmup=1)
    data["evaluate"]["lm_eval"]["tasks"] = []
    data["search"].update(tokens=128, max_seq_len=64)
    (root / "params.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    for rel in ("recipes", "models/demo", "calibration"):
        shutil.copytree(REPO / rel, root / rel)
    return root, Params.model_validate(data)


def test_each_stage_reads_only_what_it_declares(project):
    from pipeline.calibration import build, split
    from pipeline.evaluate import stage as evaluate
    from pipeline.quantize import stage as quantize
    from pipeline.search import stage as sensitivity

    root, params = project
    runs = [("split", split.run, stage_args(params, root, split.PARAMS), ()),
            ("calibration@business", build.run, stage_args(params, root, build.PARAMS, "business"),
             ("business",)),
            ("sensitivity", sensitivity.run, stage_args(params, root, sensitivity.PARAMS), ())]
    for v in ("baseline", "gguf_q4_k_m_business"):
        runs.append((f"quantize@{v}", quantize.run, stage_args(params, root, quantize.PARAMS, v), (v,)))
    runs.append(("evaluate@gguf_q4_k_m_business", evaluate.run,
                 stage_args(params, root, evaluate.PARAMS, "gguf_q4_k_m_business"), ("gguf_q4_k_m_business",)))
    found = {}
    for stage, fn, args, extra in runs:
        opened = reads(fn, *args, *extra)
        assert opened, f"{stage}: the audit hook saw no file opened"
        bad = undeclared(root, stage, opened)
        if bad:
            found[stage] = bad
    assert not found, f"stages read files their dvc.yaml stage does not declare: {found}"


def test_an_undeclared_read_is_caught(project, tmp_path):
    root, _ = project
    secret = root / "models" / "demo" / "README.md"
    opened = reads(lambda: secret.read_text())
    assert opened
    assert undeclared(root, "evaluate@baseline", opened) == ["models/demo/README.md"]
