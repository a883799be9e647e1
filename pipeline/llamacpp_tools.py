"""Where llama.cpp's tools are: an installed llama.cpp on PATH (or ``QPIPE_LLAMACPP_BIN``), else
the build that ``scripts/setup-llamacpp.sh`` caches under ``~/.cache/qpipe/llama.cpp/<version>/``
(``QPIPE_CACHE`` moves it)."""

from __future__ import annotations

import os
import shutil
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

    def tool(self, name: str) -> str:
        path = self.bin_dir / name
        if not path.is_file():
            raise LlamaCppMissing(f"{path} not found — fix: `bash scripts/setup-llamacpp.sh` "
                                  "(or set QPIPE_LLAMACPP_BIN to a folder with llama.cpp's tools)")
        return str(path)


def locate() -> LlamaCpp:
    explicit = os.environ.get("QPIPE_LLAMACPP_BIN")
    conv_env = os.environ.get("QPIPE_LLAMACPP_CONVERTER")
    if explicit:
        return LlamaCpp(Path(explicit), Path(conv_env) if conv_env else None, "external")
    builds = sorted(d for d in CACHE.glob("*") if (d / ".built").is_file())
    if builds:
        d = builds[-1]
        commit = (d / "commit").read_text().strip() if (d / "commit").is_file() else d.name
        return LlamaCpp(d / "bin", d / "convert", f"llama-cpp-python {d.name} ({commit[:12]})")
    on_path = shutil.which("llama-quantize")
    if on_path:
        return LlamaCpp(Path(on_path).parent, Path(conv_env) if conv_env else None, "PATH")
    raise LlamaCppMissing("llama.cpp's tools are not installed — fix: `bash scripts/setup-llamacpp.sh` "
                          "(builds them once, ~20 minutes on 2 cores), or put llama.cpp on PATH")
