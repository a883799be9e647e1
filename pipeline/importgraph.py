"""The import graph of a package, read statically: every `import` and `from … import`, at module
level and inside functions alike (a lazy import counts as much as one at the top), but not those
under `if TYPE_CHECKING:`, which only a type checker reads.

It says which code a stage runs: the evaluation records carry a hash of exactly that code
(`harness_version`), and the tests check dvc.yaml's code deps and the package map against it."""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path


def unit(module: str, root: Path) -> str:
    """The package (`compare`) or top-level module (`config.py`) a dotted module belongs to."""
    parts = module.split(".")
    if len(parts) >= 2 and (root / parts[1]).is_dir():
        return parts[1]
    return parts[1] + ".py" if len(parts) >= 2 else parts[0]


def _run_time_nodes(tree: ast.AST) -> Iterable[ast.AST]:
    """Every node of ``tree`` but those under `if TYPE_CHECKING:`, which never run (an
    annotation's import: the code a stage runs does not include it)."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
            todo.extend(node.orelse)
        else:
            todo.extend(ast.iter_child_nodes(node))


def imports(root: Path) -> dict[str, set[str]]:
    """module (dotted, under root's package) -> every module of root's package or `demo` it
    imports, resolving `from pkg import submodule` to the submodule."""
    base = root.parent
    out: dict[str, set[str]] = defaultdict(set)
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(base).with_suffix("")
        module = ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
        for node in _run_time_nodes(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = []
                for a in node.names:
                    sub = f"{node.module}.{a.name}"
                    target = base / sub.replace(".", "/")
                    names.append(sub if target.is_dir() or target.with_suffix(".py").is_file()
                                 else node.module)
            else:
                continue
            out[module] |= {n for n in names if n.split(".")[0] in (root.name, "demo")}
    return out


def trivial(path: Path) -> bool:
    """A package's __init__ that holds only its docstring: importing it runs nothing."""
    body = ast.parse(path.read_text(encoding="utf-8")).body
    return path.name == "__init__.py" and all(isinstance(n, ast.Expr) for n in body)


def closure(entry: Iterable[str], root: Path, skip: frozenset[str] = frozenset()) -> list[Path]:
    """The files of `root`'s package that the modules `entry` run: them, everything they import
    transitively (but the modules in `skip`), and the packages above each — the top package only
    where it is imported by name — sorted, so a hash over them is stable; docstring-only
    __init__ files are left out."""
    if isinstance(entry, str):  # one module name, not its characters
        raise TypeError(f"closure() takes a list of module names, not the string {entry!r}")
    graph = imports(root)
    seen, todo = set(), [m for m in entry if m not in skip]
    while todo:
        m = todo.pop()
        if m in seen:
            continue
        seen.add(m)
        parts = m.split(".")
        todo += [".".join(parts[:i]) for i in range(2, len(parts))]
        todo += [t for t in graph.get(m, ()) if t.split(".")[0] == root.name and t not in skip]
    base = root.parent
    files = []
    for m in seen:
        path = base / m.replace(".", "/")
        path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
        if path.is_file() and not trivial(path):
            files.append(path)
    return sorted(files)
