"""dvc.yaml declares exactly the code each stage runs: for every stage DVC resolves (foreach and
`${…}` included), the modules its `qpipe` command imports — transitively, lazy imports included —
are all covered by its deps, and every code dep it lists is code it runs. An undeclared module is
one DVC would not re-run the stage for when it changes; a stale one re-runs it for nothing.

A quantization stage runs one backend, the one its variant names (loaded through the backend's
entry point): the other backends' modules are not its code.

Params alike: each stage module declares the params keys its dvc.yaml stage lists (`PARAMS`), and
runs on a view of the params (`Params.for_stage`) that refuses every other key — so the stage
tests prove that a stage reads nothing DVC would not re-run it for.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest
from pipeline.importgraph import closure

REPO = Path(__file__).resolve().parents[1]
CLI = REPO / "pipeline" / "cli.py"


@functools.cache
def command_imports() -> dict[tuple[str, ...], set[str]]:
    """(group, command) of every `qpipe` command -> the pipeline modules its function imports."""
    groups = {"app": (), "calib_app": ("calib",)}
    out = {}
    for node in ast.parse(CLI.read_text(encoding="utf-8")).body:
        if not isinstance(node, ast.FunctionDef):
            continue
        for dec in node.decorator_list:
            if isinstance(dec, ast.Call) and isinstance(dec.func, ast.Attribute) and dec.func.attr == "command":
                group = groups[dec.func.value.id]
                name = dec.args[0].value if dec.args else node.name.rstrip("_").replace("_", "-")
                mods = set()
                for sub in ast.walk(node):
                    if isinstance(sub, ast.ImportFrom) and sub.module and sub.module.startswith("pipeline."):
                        for a in sub.names:
                            full = f"{sub.module}.{a.name}"
                            is_module = (REPO / full.replace(".", "/")).with_suffix(".py").is_file()
                            mods.add(full if is_module else sub.module)
                out[(*group, name)] = mods
    return out


def dvc_stages() -> list[dict]:
    from dvc.dependency.param import ParamsDependency
    from dvc.repo import Repo

    with Repo(str(REPO)) as repo:
        return [{"name": s.addressing, "cmd": s.cmd.split(),
                 "deps": [str(d.def_path) for d in s.deps if not isinstance(d, ParamsDependency)],
                 "params": [k for d in s.deps if isinstance(d, ParamsDependency) for k in d.params],
                 "outs": [str(o.def_path) for o in s.outs]}
                for s in repo.index.stages]


STAGES = dvc_stages()


@functools.cache
def code_of_cmd(cmd: tuple[str, ...]) -> frozenset[str]:
    return frozenset(code_of({"name": " ".join(cmd), "cmd": list(cmd)}))


def code_of(stage: dict) -> set[str]:
    """The pipeline files a stage's command runs."""
    cmd = stage["cmd"]
    assert cmd[0] == "qpipe", f"{stage['name']}: every stage runs one qpipe command, not {cmd[0]!r}"
    commands = command_imports()
    key = tuple(cmd[1:3]) if tuple(cmd[1:3]) in commands else tuple(cmd[1:2])
    assert key in commands, f"{stage['name']}: `{' '.join(cmd)}` is no qpipe command"
    entry = set(commands[key])
    if key == ("quantize",):  # a quantization runs its variant's backend, as registered
        import yaml

        from pipeline.plugins import backends

        variant = yaml.safe_load((REPO / "params.yaml").read_text())["variants"][cmd[2]]
        entry.add(backends()[variant["backend"]].target.partition(":")[0])
    code = {p.relative_to(REPO).as_posix() for p in closure(entry, REPO / "pipeline")}
    return code | {script for module, scripts in SCRIPTS.items() if module in code for script in scripts}


# Modules that run a file of the package as a script in another environment (not an import)
SCRIPTS = {"pipeline/loadgen/guidellm_runs.py": ["pipeline/loadgen/guidellm_driver.py"]}


def covered(path: str, deps: list[str]) -> bool:
    return any(path == d or path.startswith(d.rstrip("/") + "/") for d in deps)


@pytest.mark.parametrize("stage", STAGES, ids=[s["name"] for s in STAGES])
def test_every_module_a_stage_runs_is_a_dep(stage):
    missing = sorted(f for f in code_of_cmd(tuple(stage["cmd"])) if not covered(f, stage["deps"]))
    assert missing == [], f"{stage['name']} runs these but dvc.yaml does not list them"


@pytest.mark.parametrize("stage", STAGES, ids=[s["name"] for s in STAGES])
def test_every_code_dep_is_code_the_stage_runs(stage):
    code = code_of_cmd(tuple(stage["cmd"]))
    stale = [d for d in stage["deps"] if d.startswith("pipeline/")
             and not any(f == d or f.startswith(d.rstrip("/") + "/") for f in code)]
    assert stale == [], f"{stage['name']} lists code it never runs"


def declaring_module(stage: dict):
    """The module of the stage's command that declares its params (`PARAMS`)."""
    import importlib

    cmd = stage["cmd"]
    commands = command_imports()
    key = tuple(cmd[1:3]) if tuple(cmd[1:3]) in commands else tuple(cmd[1:2])
    found = [m for m in map(importlib.import_module, sorted(commands[key])) if hasattr(m, "PARAMS")]
    assert len(found) == 1, f"{stage['name']}: one module of `{' '.join(cmd)}` declares PARAMS, not {found}"
    return found[0]


@pytest.mark.parametrize("stage", STAGES, ids=[s["name"] for s in STAGES])
def test_every_stage_declares_the_params_dvc_yaml_lists(stage):
    """The stage module's PARAMS, its foreach key filled in, are exactly the params keys DVC
    resolves for the stage — the keys its view lets it read."""
    declared = declaring_module(stage).PARAMS
    name, _, key = stage["name"].partition("@")
    assert declared.stage == name
    from pipeline.config import load_params

    params = load_params(REPO / "params.yaml")
    assert sorted(declared.resolved(key or None, params)) == sorted(stage["params"]), \
        f"{stage['name']}: the stage module's PARAMS and dvc.yaml's params differ"


def test_a_stage_reading_an_undeclared_param_fails():
    """The view refuses what the stage does not declare, naming the stage, the key and the fix;
    a foreach stage sees its own entry only, and the helpers read through the same guard."""
    from pipeline.config import load_params
    from pipeline.evaluate.stage import PARAMS
    from pipeline.stage_params import UndeclaredParamError

    params = load_params(REPO / "params.yaml")
    view = params.for_stage(PARAMS, "gguf_f16")
    assert view.evaluate is params.evaluate and view.model is params.model
    assert list(view.variants) == ["gguf_f16"] and "baseline" not in view.variants
    assert view.engine_for("gguf_f16") == params.engine_for("gguf_f16")
    assert view.engine_settings("gguf_f16") == params.engine_settings("gguf_f16")
    for read in (lambda: view.compare.noise_floor, lambda: view.variants["baseline"], lambda: view.baseline):
        with pytest.raises(UndeclaredParamError, match=r"stage 'evaluate@gguf_f16' .* fix: add `(compare\.noise_floor|"
                           r"variants\.baseline|variants)` to the `params:` of stage 'evaluate@gguf_f16' in dvc.yaml"):
            read()
    from pipeline.calibration import build
    from pipeline.quantize import stage as quantize

    calibration = params.for_stage(build.PARAMS, "business")
    assert calibration.split.dedup is params.split.dedup and list(calibration.calibration.sets) == ["business"]
    with pytest.raises(UndeclaredParamError, match="`split.salt`"):
        calibration.split.salt  # noqa: B018
    quant = params.for_stage(quantize.PARAMS, "baseline")
    assert quant.engines.formats is params.engines.formats
    with pytest.raises(UndeclaredParamError, match="`engines.vllm`"):
        quant.engines.vllm  # noqa: B018


def test_the_layout_holds_the_path_keys_and_nothing_else_of_the_params():
    """A stage reads params only through its declared view: the layout it is given keeps the
    values of the keys that name paths — which dvc.yaml interpolates into the stages' deps and
    outs, so a path read through it is a dep or an out — and not the params."""
    from dataclasses import fields

    from pipeline.config import load_params
    from pipeline.layout import PATH_KEYS, Layout

    params = load_params(REPO / "params.yaml")
    layout = Layout(REPO, params)
    assert [f.name for f in fields(layout)] == ["root", "keys"]
    assert [f.name for f in fields(layout.keys)] == list(PATH_KEYS)
    assert all(isinstance(getattr(layout.keys, name), Path) for name in PATH_KEYS)
    pipeline_text = (REPO / "dvc.yaml").read_text(encoding="utf-8")
    assert [key for key in PATH_KEYS.values() if f"${{{key}}}" not in pipeline_text] == []
    assert layout.rooted(Path("/elsewhere")).artifact("x") == Path("/elsewhere") / params.quantize.out_dir / "x"


def test_a_lazy_import_of_an_undeclared_module_is_found(tmp_path):
    """The closure follows imports inside functions and through packages' parents."""
    root = tmp_path / "pipeline"
    (root / "quantize").mkdir(parents=True)
    (root / "quantize" / "__init__.py").write_text("REGISTERED = {}\n")
    (root / "quantize" / "stage.py").write_text("from pipeline.quantize import base\n")
    (root / "quantize" / "base.py").write_text("def f():\n    from pipeline.io import x\n")
    (root / "quantize" / "other.py").write_text("")
    (root / "io.py").write_text("x = 1\n")
    files = {p.relative_to(tmp_path).as_posix() for p in closure(["pipeline.quantize.stage"], root)}
    assert files == {"pipeline/quantize/__init__.py", "pipeline/quantize/stage.py",
                     "pipeline/quantize/base.py", "pipeline/io.py"}
    assert not covered("pipeline/io.py", ["pipeline/quantize", "models/demo"])
    assert covered("pipeline/engines/vllm.py", ["pipeline/engines"])


def test_data_paths_are_the_ones_the_code_uses():
    """The outs DVC resolves from params are the folders the stages write (pipeline.layout), and
    the split reads every source folder params names."""
    from pipeline.config import load_params
    from pipeline.layout import Layout

    params = load_params(REPO / "params.yaml")
    layout = Layout(REPO, params)
    rel = lambda p: p.relative_to(REPO).as_posix()  # noqa: E731
    by_name = {s["name"]: s for s in STAGES}
    for name in params.variants:
        assert by_name[f"quantize@{name}"]["outs"] == [rel(layout.artifact(name)),
                                                       rel(layout.quantize_log(name)),
                                                       rel(layout.quantize_run(name))]
        assert by_name[f"evaluate@{name}"]["outs"] == [rel(layout.result(name))]
    for name in params.calibration.sets:
        assert by_name[f"calibration@{name}"]["outs"] == [rel(layout.calibration_set(name))]
    assert rel(layout.evalset) in by_name["split"]["outs"]
    assert by_name["bench"]["outs"] == [rel(layout.bench)]
    assert by_name["handoff"]["outs"] == [rel(layout.handoff)]
    assert {rel(layout.reports / "comparison.json")} <= set(by_name["compare"]["outs"])
    assert {str(s) for s in params.data.sources} <= set(by_name["split"]["deps"])


def test_every_declared_param_is_written_in_params_yaml():
    """DVC refuses to run a stage whose params key is missing from params.yaml (a model default
    is not enough): every key a stage declares is written there."""
    import yaml
    from dvc.dependency.param import ParamsDependency
    from dvc.repo import Repo

    data = yaml.safe_load((REPO / "params.yaml").read_text())

    def written(key: str) -> bool:
        node = data
        for part in key.split("."):
            if not isinstance(node, dict) or part not in node:
                return False
            node = node[part]
        return True

    with Repo(str(REPO)) as repo:
        missing = sorted({f"{s.addressing}: {k}" for s in repo.index.stages for d in s.deps
                          if isinstance(d, ParamsDependency) for k in d.params if not written(k)})
    assert not missing, f"declared in dvc.yaml, missing from params.yaml: {missing}"


def test_every_params_argument_is_typed():
    """A stage's params argument is annotated `StageView`: to a type checker the validated params
    (each section and field typed), at run time the guarded view of its declared keys. Only the
    code that builds those views takes params of any shape."""
    import ast

    untyped, builders = [], ("pipeline/stage_params.py", "pipeline/layout.py")
    for path in sorted((REPO / "pipeline").rglob("*.py")):
        rel = path.relative_to(REPO).as_posix()
        for fn in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs:
                    typed = a.annotation is not None and ast.unparse(a.annotation) != "Any"
                    if a.arg == "params" and not typed and rel not in builders:
                        untyped.append(f"{rel}:{a.lineno} {fn.name}")
    assert untyped == []


def test_an_import_for_the_type_checker_alone_is_not_code_a_stage_runs(tmp_path):
    root = tmp_path / "pipeline"
    root.mkdir()
    (root / "stage.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                   "    from pipeline.io import x\nelse:\n    from pipeline.names import y\n")
    (root / "io.py").write_text("x = 1\n")
    (root / "names.py").write_text("y = 1\n")
    files = {p.relative_to(tmp_path).as_posix() for p in closure(["pipeline.stage"], root)}
    assert files == {"pipeline/stage.py", "pipeline/names.py"}
