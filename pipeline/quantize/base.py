"""The quantization backend interface: one small class per tool, registered by name.

A backend says which schemes it does and whether they need calibration data, checks a request
*before* any model is loaded (recipe fits the model, layers named in `ignore` exist), and
writes the artifact's model files into an output directory. The stage (`stage.py`) wraps every
backend alike: atomic output directory, manifest and SHA256SUMS, native load check, timing.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from pipeline.registry import Registry


class BackendError(RuntimeError):
    """A backend cannot run this request; the message says what, where and how to fix."""


class MissingDependency(BackendError):
    pass


@dataclass
class QuantizeRequest:
    variant: str
    scheme: str
    model_dir: Path
    out_dir: Path
    recipe: Path | None = None
    calibration_dir: Path | None = None
    options: dict[str, Any] = field(default_factory=dict)
    dtype: str = "bfloat16"
    trust_remote_code: bool = False
    device: str = "cpu"


@dataclass
class QuantizeResult:
    format: str                     # compressed-tensors | hf | gguf | …
    tool_versions: dict[str, str]
    details: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # what could not be done here, and why


class Backend(ABC):
    name: ClassVar[str]
    schemes: ClassVar[frozenset[str]]
    extra: ClassVar[str] = ""       # `pip install qpipe[<extra>]` (or an environment) brings it

    def require(self, module: str):
        try:
            return importlib.import_module(module)
        except ImportError as err:
            raise MissingDependency(
                f"backend {self.name!r} needs the Python package {module!r}, which is not "
                f"installed — fix: `pip install -e '.[{self.extra}]'` (or `bash scripts/setup.sh`)"
            ) from err

    def check(self, req: QuantizeRequest) -> list[str]:
        """Problems found before loading the model (empty: go ahead)."""
        return []

    @abstractmethod
    def quantize(self, req: QuantizeRequest) -> QuantizeResult:
        ...


BACKENDS: Registry[type[Backend]] = Registry("quantization backend")


def get_backend(name: str) -> Backend:
    # Importing the modules registers their classes; optional libraries load lazily inside.
    from pipeline.quantize import llamacpp, llmcompressor, none  # noqa: F401  (named after backends)

    return BACKENDS.get(name)()
