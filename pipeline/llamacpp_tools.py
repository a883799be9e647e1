"""Where llama.cpp's tools are: an installed llama.cpp on PATH (or ``QPIPE_LLAMACPP_BIN``), else
the build that ``scripts/setup-llamacpp.sh`` caches under ``~/.cache/qpipe/llama.cpp/<version>/``
(``QPIPE_CACHE`` moves it)."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from pipeline.errors import QpipeError

CACHE = Path(os.environ.get("QPIPE_CACHE", Path.home() / ".cache" / "qpipe")) / "llama.cpp"


class LlamaCppMissing(QpipeError, RuntimeError):
    pass


@dataclass(frozen=True)
class LlamaCpp:
    bin_dir: Path
    converter: Path | None
    version: str

    def supports(self, tool: str, flag: str) -> bool:
        """Whether `tool` of this build takes `flag` (its --help lists it): an older build lacks
        options a newer one has."""
        return flag in _help(self.tool(tool))

    def tool(self, name: str) -> str:
        path = self.bin_dir / name
        if not path.is_file():
            raise LlamaCppMissing(f"{path} not found — fix: `bash scripts/setup-llamacpp.sh` "
                                  "(or set QPIPE_LLAMACPP_BIN to a folder with llama.cpp's tools)")
        return str(path)


@functools.cache
def _help(program: str) -> str:
    got = subprocess.run([program, "--help"], capture_output=True, text=True, timeout=60)
    return got.stdout + got.stderr


PINNED = "0.3.36"  # the set-up's release (scripts/setup-llamacpp.sh: VERSION)
SETUP = Path(__file__).resolve().parents[1] / "scripts" / "setup-llamacpp.sh"


def _release_key(name: str) -> tuple[int, ...]:
    return tuple(int(p) if p.isdigit() else -1 for p in name.split("."))


def _cached(d: Path) -> LlamaCpp:
    commit = (d / "commit").read_text().strip().removeprefix("commit ") if (d / "commit").is_file() else ""
    return LlamaCpp(d / "bin", d / "convert",
                    f"llama-cpp-python {d.name}" + (f" (commit {commit[:12]})" if commit else ""))


def locate(release: str | None = None) -> LlamaCpp:
    """The tools to run: a named `release` (a serving configuration's) is its cached build and
    nothing else; otherwise QPIPE_LLAMACPP_BIN, the pinned cached build (else the newest cached
    one), or llama.cpp on PATH."""
    if release is not None:
        d = CACHE / release
        if not (d / ".built").is_file():
            raise LlamaCppMissing(f"llama.cpp of llama-cpp-python {release} is not built — fix: "
                                  f"`QPIPE_LLAMACPP_PY_VERSION={release} bash scripts/setup-llamacpp.sh` "
                                  "(a few minutes; `qpipe upgrade` builds it when it is missing)")
        return _cached(d)
    explicit = os.environ.get("QPIPE_LLAMACPP_BIN")
    conv_env = os.environ.get("QPIPE_LLAMACPP_CONVERTER")
    if explicit:
        return LlamaCpp(Path(explicit), Path(conv_env) if conv_env else None, "external")
    builds = sorted((d for d in CACHE.glob("*") if (d / ".built").is_file()), key=lambda d: _release_key(d.name))
    pinned = [d for d in builds if d.name == PINNED]
    if pinned or builds:
        return _cached((pinned or builds)[-1])
    on_path = shutil.which("llama-quantize")
    if on_path:
        return LlamaCpp(Path(on_path).parent, Path(conv_env) if conv_env else None, "PATH")
    raise LlamaCppMissing("llama.cpp's tools are not installed — fix: `bash scripts/setup-llamacpp.sh` "
                          "(builds them once, ~20 minutes on 2 cores), or put llama.cpp on PATH")


def ensure(release: str) -> LlamaCpp:
    """`release`'s build, made first when it is missing (scripts/setup-llamacpp.sh)."""
    try:
        return locate(release)
    except LlamaCppMissing:
        pass
    env = {**os.environ, "QPIPE_LLAMACPP_PY_VERSION": release, "QPIPE_LLAMACPP_FORCE_BUILD": "1"}
    got = subprocess.run(["bash", str(SETUP)], env=env, capture_output=True, text=True)
    if got.returncode != 0:
        raise LlamaCppMissing(f"building llama.cpp of llama-cpp-python {release} failed:\n"
                              f"{(got.stdout + got.stderr)[-2000:]}")
    return locate(release)
