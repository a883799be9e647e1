"""The backend registry and its errors: unknown names, missing optional libraries."""

import pytest

from pipeline.config import BACKENDS as SCHEMES_BY_BACKEND
from pipeline.quantize.base import BACKENDS, MissingDependency, get_backend
from pipeline.names import UnknownNameError


def test_every_configured_backend_with_code_is_registered():
    get_backend("none")  # imports the backend modules
    for name in SCHEMES_BY_BACKEND:
        backend = get_backend(name)
        assert backend.schemes == SCHEMES_BY_BACKEND[name]


def test_unknown_backend_suggests_the_closest():
    with pytest.raises(UnknownNameError, match="did you mean 'llmcompressor'"):
        get_backend("llmcompresor")


def test_missing_library_names_the_extra(monkeypatch):
    import pipeline.quantize.base as base

    backend = get_backend("llmcompressor")
    real = base.importlib.import_module

    def import_module(name, *args):
        if name == "llmcompressor":
            raise ImportError("No module named 'llmcompressor'")
        return real(name, *args)

    monkeypatch.setattr(base.importlib, "import_module", import_module)
    with pytest.raises(MissingDependency) as err:
        backend.require("llmcompressor")
    assert "pip install -e '.[quantize]'" in str(err.value)
    assert "'llmcompressor'" in str(err.value) and "backend 'llmcompressor'" in str(err.value)
    assert "llmcompressor" in BACKENDS
