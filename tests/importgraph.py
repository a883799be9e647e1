"""The import graph of a package, read statically: every `import` and `from … import`, at module
level and inside functions alike (a lazy import counts as much as one at the top)."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path


def unit(module: str, root: Path) -> str:
    """The package (`compare`) or top-level module (`config.py`) a dotted module belongs to."""
    parts = module.split(".")
    if len(parts) >= 2 and (root / parts[1]).is_dir():
        return parts[1]
    return parts[1] + ".py" if len(parts) >= 2 else parts[0]


def imports(root: Path) -> dict[str, set[str]]:
    """module (dotted, under root's package) -> every module of root's package or `demo` it
    imports, resolving `from pkg import submodule` to the submodule."""
    base = root.parent
    out: dict[str, set[str]] = defaultdict(set)
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(base).with_suffix("")
        module = ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
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
