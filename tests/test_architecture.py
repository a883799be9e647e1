"""The package map holds: stages import only the stages before them and the kernels below them,
kernels import no stage, the pipeline never imports the demo, and no module keeps growing past
the size a reader can hold.

Imports are read statically (every `import` and `from … import`, module level and inside
functions alike), so a lazy import inside a function counts as much as one at the top.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import pytest
from pipeline.importgraph import imports, unit

REPO = Path(__file__).resolve().parents[1]

# The stages in pipeline order: a stage may import a stage of a lower rank, never of its own or a
# higher one (bench and compare both read evaluate's results and never each other).
STAGES = {"calibration": 0, "quantize": 1, "evaluate": 2, "bench": 3, "compare": 3, "handoff": 4,
          "serving": 4, "search": 5}  # serving reads compare's gate tables; search, every verdict
# Below every stage: they import no stage.
KERNELS = {"artifacts", "contracts", "engines", "stats", "tracking", "config", "errors.py", "io.py",
           "importgraph.py", "layout.py", "models.py", "names.py", "plugins.py", "processes.py",
           "progress.py", "secrets.py", "llamacpp_tools.py", "logs.py", "stage_params.py", "contract_map.py",
           "loadgen"}
# Above every stage: the command line, the whole-project validation and `qpipe repro` (which
# runs the stages' commands) call into stages.
ORCHESTRATION = {"cli.py", "validate.py", "environments.py", "orchestrate"}
# Kernels with a narrower rule of their own.
# manifest + verify depend on nothing but the contracts' file names and schema ids; the contracts
# (typed files between stages) on nothing else
ONLY = {"artifacts": {"errors.py", "io.py", "contracts"}, "contracts": {"errors.py", "io.py"}}

# Modules still over the size limit, each with the line count it may not grow past; a module
# split below its limit leaves this table, and a new one never enters it.
MAX_LINES = 400
OVERSIZED: dict[str, int] = {}
# Data, not logic: vocabularies and pattern tables are as long as the world makes them.
DATA_TABLES = {"pipeline/calibration/pii/vocabulary.py"}


def violations(root: Path) -> list[str]:
    """Every import against the package map, as `importer -> imported (why)`."""
    found = []
    for module, targets in sorted(imports(root).items()):
        src = unit(module, root)
        for target in sorted(targets):
            if target.split(".")[0] == "demo":
                found.append(f"{module} -> {target} (the pipeline never imports the demo)")
                continue
            if target == root.name:
                continue  # the package itself: its version
            dst = unit(target, root)
            if dst == src:
                continue
            if dst in ORCHESTRATION:
                why = "only the command line calls validation" if src != "cli.py" else None
            elif src in ONLY:
                why = None if dst in ONLY[src] else f"{src} may import only {sorted(ONLY[src])}"
            elif src in KERNELS and dst in STAGES:
                why = f"kernel {src} imports stage {dst}"
            elif src in STAGES and dst in STAGES and STAGES[dst] >= STAGES[src]:
                when = "with" if STAGES[dst] == STAGES[src] else "after"
                why = f"stage {src} imports stage {dst}, which runs {when} it"
            elif src not in STAGES | {k: 0 for k in KERNELS} and src not in ORCHESTRATION:
                why = f"{src} is on no layer of the map (add it to STAGES or KERNELS)"
            else:
                why = None
            if why:
                found.append(f"{module} -> {target} ({why})")
    return found


def test_imports_follow_the_stage_order():
    assert violations(REPO / "pipeline") == []


def test_every_package_is_on_the_map():
    units = {p.name for p in (REPO / "pipeline").iterdir()
             if (p.is_dir() and (p / "__init__.py").is_file()) or (p.suffix == ".py" and p.name != "__init__.py")}
    assert units - set(STAGES) - KERNELS - ORCHESTRATION == set()


@pytest.mark.parametrize("importer, imported, expected", [
    ("artifacts/manifest.py", "pipeline.engines.base", "artifacts may import only"),
    ("evaluate/harness.py", "pipeline.compare.gates", "stage evaluate imports stage compare, which runs after it"),
    ("bench/stage.py", "pipeline.compare.paired", "stage bench imports stage compare, which runs with it"),
    ("engines/vllm.py", "pipeline.quantize.base", "kernel engines imports stage quantize"),
    ("quantize/base.py", "demo.world", "the pipeline never imports the demo"),
    ("config.py", "pipeline.validate", "only the command line calls validation"),
])
def test_a_wrong_import_is_caught(tmp_path, importer, imported, expected):
    """The checker on a small package tree of the same shape: each planted import is named."""
    root = tmp_path / "pipeline"
    for unit_path in ("artifacts/manifest.py", "engines/base.py", "engines/vllm.py", "quantize/base.py",
                      "evaluate/harness.py", "compare/gates.py", "compare/paired.py", "bench/stage.py",
                      "config.py", "validate.py", "errors.py"):
        (root / unit_path).parent.mkdir(parents=True, exist_ok=True)
        (root / unit_path).parent.joinpath("__init__.py").touch()
        (root / unit_path).touch()
    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "world.py").touch()
    (root / "quantize" / "stage.py").write_text("from pipeline.engines import base\n")  # allowed
    assert violations(root) == []
    (root / importer).write_text(f"def f():\n    import {imported}\n")
    [found] = violations(root)
    assert expected in found and imported in found


def test_no_module_grows_past_its_limit():
    """No module over MAX_LINES, except the known ones, which may only shrink."""
    too_long = {}
    for path in sorted((REPO / "pipeline").rglob("*.py")):
        rel = path.relative_to(REPO).as_posix()
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if rel not in DATA_TABLES and lines > OVERSIZED.get(rel, MAX_LINES):
            too_long[rel] = lines
    assert too_long == {}, "split these along their concerns (tests/test_architecture.py)"
    shrunk = {rel: n for rel, n in OVERSIZED.items() if (REPO / rel).is_file()
              and len((REPO / rel).read_text(encoding="utf-8").splitlines()) <= MAX_LINES}
    assert shrunk == {}, "these are within the limit now: drop them from OVERSIZED"


def test_no_two_modules_share_a_name_across_packages():
    """`llamacpp.py` three times or two `registry.py` made every traceback ambiguous. Plug-ins,
    one per file named after what they plug in, are the exception: a backend and an engine named
    after one tool (quantize/llamacpp.py, engines/llamacpp.py), a PII detector after its kind."""
    seen = defaultdict(list)
    for path in (REPO / "pipeline").rglob("*.py"):
        if path.name not in ("__init__.py", "stage.py", "config.py"):
            seen[path.name].append(path.relative_to(REPO).as_posix())
    plugin_dirs = {"pipeline/quantize", "pipeline/engines", "pipeline/calibration/pii/detectors"}
    shared = {name: paths for name, paths in seen.items() if len(paths) > 1
              and len({p.rsplit("/", 1)[0] for p in paths} - plugin_dirs) > 1}
    assert shared == {}


def private_imports(root: Path) -> list[str]:
    """Every `from <package module> import _name` in the package (module level or in a function):
    a module's underscore names are its own; what another module needs is public."""
    import ast

    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == root.name:
                found += [f"{path.relative_to(root.parent).as_posix()}: from {node.module} import {a.name}"
                          for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]
            elif isinstance(node, ast.Import):
                found += [f"{path.relative_to(root.parent).as_posix()}: import {a.name}" for a in node.names
                          if a.name.split(".")[0] == root.name
                          and any(p.startswith("_") and not p.startswith("__") for p in a.name.split("."))]
    return found


def test_no_module_imports_another_modules_private_name():
    assert private_imports(REPO / "pipeline") == []


def test_a_private_import_is_caught(tmp_path):
    root = tmp_path / "pipeline"
    (root / "a").mkdir(parents=True)
    (root / "a" / "spans.py").write_text("class _Span: ...\nclass Span: ...\n")
    (root / "a" / "use.py").write_text("from pipeline.a.spans import Span\n")
    assert private_imports(root) == []
    (root / "a" / "use.py").write_text("def f():\n    from pipeline.a.spans import Span, _Span\n")
    assert private_imports(root) == ["pipeline/a/use.py: from pipeline.a.spans import _Span"]


# Logic that branches on a plug-in's name outside the plug-in: each file with how many such
# comparisons it still has. What differs per engine, backend or format belongs to the plug-in (a
# method or attribute); this table may only shrink, and a file leaves it at zero.
NAME_BRANCHES: dict[str, int] = {}
PLUGIN_FILES = re.compile(r"pipeline/(engines/[a-z_]+|quantize/(llamacpp|llmcompressor|mlx|gptqmodel|modelopt|"
                          r"autoawq)[a-z_]*)\.py$")


def plugin_names() -> set[str]:
    from pipeline.engines.base import engine_names, get_engine
    from pipeline.plugins import backend_class, backends

    names = set(engine_names()) | set(backends())
    names |= {f for e in engine_names() for f in get_engine(e).formats}
    names |= {backend_class(b).format for b in backends()}
    return names - {"none", "*"}  # no engine, no backend: not plug-ins


def name_branches(root: Path, names: set[str]) -> dict[str, int]:
    """{file: comparisons of a value with a plug-in's name (==, !=, in, not in)} under `root`."""
    import ast

    def named(node) -> bool:
        if isinstance(node, ast.Constant):
            return node.value in names
        return isinstance(node, (ast.Tuple, ast.List, ast.Set)) and any(named(e) for e in node.elts)

    found: dict[str, int] = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent).as_posix()
        if PLUGIN_FILES.search(rel):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Compare) and any(named(x) for x in [node.left, *node.comparators]):
                found[rel] = found.get(rel, 0) + 1
    return found


def test_only_plugins_branch_on_their_own_names():
    found = name_branches(REPO / "pipeline", plugin_names())
    grown = {f: n for f, n in found.items() if n > NAME_BRANCHES.get(f, 0)}
    assert grown == {}, "a method or attribute of the engine/backend plug-in says this, not its name"
    shrunk = {f: n for f, n in NAME_BRANCHES.items() if found.get(f, 0) < n}
    assert shrunk == {}, "fewer branches on plug-in names now: lower NAME_BRANCHES to match"


def test_a_branch_on_a_plugin_name_is_caught(tmp_path):
    root = tmp_path / "pipeline"
    (root / "engines").mkdir(parents=True)
    (root / "engines" / "vllm.py").write_text("ok = name == 'vllm'\n")  # the plug-in itself
    (root / "bench.py").write_text("def f(e):\n    return e.serving\n")
    assert name_branches(root, {"vllm", "gguf"}) == {}
    (root / "bench.py").write_text("def f(e, fmt):\n    return e == 'vllm' or fmt in ('gguf', 'hf')\n")
    assert name_branches(root, {"vllm", "gguf"}) == {"pipeline/bench.py": 2}


# ── imports inside functions ──────────────────────────────────────────────────────────────────
# An import sits at the top of its module unless a heavy or optional dependency needs laziness:
# importing these costs seconds or needs an extra (pyproject's optional dependencies), and the
# command line, every stage and the tests import the modules that use them.
LAZY_DEPENDENCIES = {
    "torch": "2-4 s, the model extra", "transformers": "the model extra, imports torch",
    "safetensors": "the model extra", "datasets": "the calibration extra, imports pyarrow",
    "pyarrow": "the calibration extra, ~0.5 s", "scipy": "the evaluate extra", "statsmodels": "the evaluate extra",
    "matplotlib": "the evaluate extra, ~1 s", "psutil": "the evaluate extra", "lm_eval": "the evaluate extra",
    "llmcompressor": "the quantize extra, imports torch", "compressed_tensors": "the quantize extra",
    "gguf": "the quantize extra", "ray": "the cluster extra", "mlx_lm": "the backend's own environment",
    "modelopt": "the backend's own environment", "awq": "the backend's own environment",
    "gptqmodel": "the backend's own environment", "conversion": "llama.cpp's converter, on its own path",
}
# Lazy imports of the standard library or the core dependencies that stay: the Ray task imports
# on the node it runs on; quantize/base.py runs in the backends' own environments too, where its
# module level imports the standard library only (tests/quantize/test_external.py). The
# package's own modules may be imported inside a function: the command line's start-up (`qpipe
# --help` imports no stage), or a module that pulls one of the dependencies above in.
STDLIB_LAZY_LEFT = {"pipeline/orchestrate/ray_executor.py": 2, "pipeline/quantize/base.py": 1}


def lazy_imports(root: Path) -> tuple[dict[str, int], dict[str, list[str]]]:
    """Per file: the package's own modules imported inside functions (a count), and the other
    modules imported there that LAZY_DEPENDENCIES does not name."""
    import ast

    own: dict[str, int] = defaultdict(int)
    other: dict[str, list[str]] = defaultdict(list)
    for path in sorted(root.rglob("*.py")):
        rel = f"{root.name}/{path.relative_to(root).as_posix()}"
        for fn in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and not node.level:
                    names = [node.module or ""]
                else:
                    continue
                for name in names:
                    top = name.split(".")[0]
                    if top == root.name:
                        own[rel] += 1
                    elif top not in LAZY_DEPENDENCIES:
                        other[rel].append(name)
    return dict(own), dict(other)


def test_imports_sit_at_the_top_unless_a_heavy_dependency_needs_laziness():
    _, other = lazy_imports(REPO / "pipeline")
    found = {f: len(names) for f, names in other.items()}
    grown = {f: other[f] for f, n in found.items() if n > STDLIB_LAZY_LEFT.get(f, 0)}
    assert grown == {}, "import these at the top of the module (or name the dependency in LAZY_DEPENDENCIES)"
    shrunk = {f: n for f, n in STDLIB_LAZY_LEFT.items() if found.get(f, 0) < n}
    assert shrunk == {}, "fewer lazy imports now: lower STDLIB_LAZY_LEFT to match"


def test_a_lazy_standard_import_is_caught(tmp_path):
    root = tmp_path / "pipeline"
    root.mkdir()
    (root / "a.py").write_text("import json\n\ndef f():\n    import torch\n    from pipeline import b\n    return b\n")
    assert lazy_imports(root) == ({"pipeline/a.py": 1}, {})
    (root / "a.py").write_text("def f():\n    import json\n    return json\n")
    assert lazy_imports(root) == ({}, {"pipeline/a.py": ["json"]})


# ---------------------------------------------------------------- one place per file name and schema id

def spelled_outside_files(root: Path) -> list[str]:
    """Every string in the package equal to a hand-off file's name or shaped like a schema id,
    outside pipeline/contracts/files.py: each must be imported from there."""
    import ast

    from pipeline.contracts import files

    names = {v for k, v in vars(files).items() if k.isupper() and isinstance(v, str)}
    names |= set(files.PLOTS.values())
    schema = re.compile(r"qpipe\.[a-z0-9-]+/v[0-9]+")
    found = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent).as_posix()
        if rel == "pipeline/contracts/files.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and (
                    node.value in names or schema.fullmatch(node.value)):
                found.append(f"{rel}:{node.lineno} {node.value!r}")
    return found


def test_file_names_and_schema_ids_are_spelled_in_one_place():
    found = spelled_outside_files(REPO / "pipeline")
    assert found == [], "import these from pipeline.contracts.files:\n" + "\n".join(found)


def test_a_second_spelling_is_caught(tmp_path):
    root = tmp_path / "pipeline"
    root.mkdir()
    (root / "a.py").write_text('X = "metrics.json"\nY = "qpipe.new-thing/v2"\nZ = "other.json"\n')
    assert spelled_outside_files(root) == ["pipeline/a.py:1 'metrics.json'", "pipeline/a.py:2 'qpipe.new-thing/v2'"]


def test_every_contract_names_its_file_and_schema():
    """Every contract class in every module of pipeline/contracts (those the package exports and
    those imported from their own module, such as the split's), bases with no schema aside."""
    import importlib
    import pkgutil

    from pipeline import contracts
    from pipeline.contracts import files

    classes = set()
    for info in pkgutil.iter_modules(contracts.__path__):
        module = importlib.import_module(f"pipeline.contracts.{info.name}")
        classes |= {c for c in vars(module).values() if isinstance(c, type) and issubclass(c, contracts.Contract)
                    and c.__dict__.get("SCHEMA")}
    assert {c.__name__ for c in classes} >= {"SplitReport", "Metrics", "ArtifactManifest", "CalibrationCard"}
    for c in classes:
        assert c.SCHEMA in vars(files).values() and c.FILE in vars(files).values(), c.__name__


# ---------------------------------------------------------------- hand-off files read through their contracts

NOT_HAND_OFFS = {"ERROR", "TRACKING_PENDING"}  # a failed stage's marker and track's own queue: no stage reads them


def raw_hand_off_reads(root: Path) -> list[str]:
    """Every `json.load(s)` or `open` outside pipeline/contracts/ whose argument is a path built from
    a hand-off file's name (pipeline.contracts.files), directly or through a name assigned from
    one in the same function: such a file must be read through its contract (`X.load`,
    `read_lines`), which names the file, the schema and the stage to re-run when it is wrong."""
    import ast

    from pipeline.contracts import files

    hand_offs = {k for k, v in vars(files).items() if k.isupper() and isinstance(v, str)
                 and v.endswith((".json", ".jsonl")) and k not in NOT_HAND_OFFS}

    def mentions(node, tainted) -> bool:
        return any((isinstance(n, ast.Name) and (n.id in hand_offs or n.id in tainted))
                   or (isinstance(n, ast.Attribute) and n.attr == "FILE") for n in ast.walk(node))

    def is_read(call) -> bool:
        f = call.func
        return (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "json"
                and f.attr in ("load", "loads")) or (isinstance(f, ast.Name) and f.id == "open")

    found = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent).as_posix()
        if rel.startswith("pipeline/contracts/"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for scope in [tree, *(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))]:
            tainted: set[str] = set()
            for node in ast.walk(scope):
                if isinstance(node, ast.Assign) and mentions(node.value, tainted):
                    tainted |= {t.id for t in node.targets if isinstance(t, ast.Name)}
            for node in ast.walk(scope):
                if isinstance(node, ast.Call) and is_read(node) and any(mentions(a, tainted) for a in node.args):
                    found.append(f"{rel}:{node.lineno}")
    return sorted(set(found))


def test_hand_off_files_are_read_through_their_contracts():
    found = raw_hand_off_reads(REPO / "pipeline")
    assert found == [], "read these through their contract (X.load / read_lines):\n" + "\n".join(found)


def test_a_raw_read_is_caught(tmp_path):
    root = tmp_path / "pipeline"
    root.mkdir()
    (root / "a.py").write_text("import json\nfrom pipeline.contracts.files import METRICS\n"
                               "def f(d):\n    p = d / METRICS\n    return json.loads(p.read_text())\n"
                               "def g(d):\n    return json.loads((d / 'other.json').read_text())\n")
    assert raw_hand_off_reads(root) == ["pipeline/a.py:5"]
