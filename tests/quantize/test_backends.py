"""The backends are plug-ins (pipeline.plugins): each declares itself, validation reads the
declarations; and the errors: unknown names, missing optional libraries, bad declarations."""

import pytest

from pipeline import plugins
from pipeline.config import backend_schemes, load_params
from pipeline.quantize.base import MissingDependency, get_backend

EXPECTED = {"none": "hf", "llmcompressor": "compressed-tensors", "llamacpp": "gguf",
            "gptqmodel": "gptq", "autoawq": "awq", "modelopt": "modelopt", "mlx": "mlx"}


def test_every_backend_is_registered_and_declares_itself():
    found = plugins.backends()
    assert {name: f.format for name, f in found.items()} == EXPECTED
    for name, facts in found.items():
        backend = get_backend(name)
        assert backend.name == name and backend.schemes == facts.schemes == backend_schemes()[name]
    assert found["gptqmodel"].recipe_format == found["modelopt"].recipe_format == "tool"
    assert found["llmcompressor"].recipe_format == "llm-compressor"


def test_unknown_backend_suggests_the_closest():
    with pytest.raises(plugins.PluginError, match="did you mean 'llmcompressor'"):
        get_backend("llmcompresor")


def test_a_backend_registered_elsewhere_is_validated_by_its_own_declaration(tmp_path, monkeypatch, repo):
    """A new backend is one class and one entry point: params validation accepts its scheme and
    format without any table being edited — and refuses a class that does not declare itself."""
    import sys
    import textwrap

    (tmp_path / "qpipe_extra_backend.py").write_text(textwrap.dedent("""
        from pipeline.quantize.base import Backend

        class Extra(Backend):
            name = "extra"
            schemes = frozenset({"w4a16_gptq"})
            format = "gptq"
            recipe_format = "tool"

            def quantize(self, req):
                raise NotImplementedError

        class Undeclared(Backend):
            name = "undeclared"

            def quantize(self, req):
                raise NotImplementedError
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    targets = {**plugins._targets(), "extra": "qpipe_extra_backend:Extra"}
    monkeypatch.setattr(plugins, "_targets", lambda: targets)
    plugins.backends.cache_clear()
    try:
        params = load_params(repo / "params.yaml")
        data = params.model_dump(mode="json")
        data["variants"]["gptq_w4a16_business"] = {
            "backend": "extra", "scheme": "w4a16_gptq", "recipe": "recipes/gptq_w4a16.yaml",
            "calibration": "business", "reference": "baseline"}
        v = type(params).model_validate(data).variants["gptq_w4a16_business"]
        assert v.format == "gptq" and get_backend("extra").name == "extra"
        targets["undeclared"] = "qpipe_extra_backend:Undeclared"
        plugins.backends.cache_clear()
        with pytest.raises(plugins.PluginError, match="must declare"):
            plugins.backends()
    finally:
        plugins.backends.cache_clear()
        sys.modules.pop("qpipe_extra_backend", None)


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


def test_the_load_check_is_the_backends_own_or_transformers_where_it_loads_the_format(tmp_path, monkeypatch):
    """A backend with its own in-process loader answers the load check itself (llama-server for
    GGUF); one whose format transformers does not load, and that has none, gets no check."""
    from pipeline.quantize import stage
    from pipeline.quantize.llamacpp import LlamaCppBackend

    msgs = [{"role": "user", "content": "Hello"}]
    monkeypatch.setattr(LlamaCppBackend, "load_check", lambda self, out, **kw: {"loader": "own", "ok": True})
    assert stage.load_check(tmp_path, get_backend("llamacpp"), msgs=msgs, model_dir=tmp_path) == \
        {"loader": "own", "ok": True}
    check = stage.load_check(tmp_path, get_backend("gptqmodel"), msgs=msgs, model_dir=tmp_path)
    assert check == {"loader": None, "ok": None, "reason": "no in-process loader for format gptq"}
    assert get_backend("llmcompressor").transformers_loads and get_backend("none").transformers_loads
