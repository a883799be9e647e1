import pytest

from pipeline.names import Registry, UnknownNameError, closest, did_you_mean


@pytest.fixture
def engines() -> Registry[type]:
    registry: Registry[type] = Registry("engine")

    @registry.register("vllm")
    class Vllm: ...

    @registry.register("llamacpp")
    class LlamaCpp: ...

    registry.add("transformers", object)
    return registry


def test_register_returns_the_object_and_get_finds_it(engines):
    class Sglang: ...

    assert engines.register("sglang")(Sglang) is Sglang
    assert engines.get("sglang") is Sglang
    assert engines.names() == ["vllm", "llamacpp", "transformers", "sglang"]
    assert "vllm" in engines and "tgi" not in engines and len(engines) == 4


def test_unknown_name_suggests_closest_and_lists_all(engines):
    with pytest.raises(UnknownNameError) as info:
        engines.get("vlm")
    assert str(info.value) == (
        "unknown engine 'vlm' — did you mean 'vllm'? Available: llamacpp, transformers, vllm"
    )
    assert isinstance(info.value, LookupError)
    assert info.value.name == "vlm" and info.value.kind == "engine"


def test_unknown_name_without_close_match_only_lists(engines):
    with pytest.raises(UnknownNameError) as info:
        engines.get("zzz")
    assert "did you mean" not in str(info.value)
    assert str(info.value).endswith("Available: llamacpp, transformers, vllm")


def test_duplicate_registration_is_an_error(engines):
    with pytest.raises(ValueError, match="engine 'vllm' is already registered"):
        engines.add("vllm", int)


def test_did_you_mean():
    assert did_you_mean("calibraton", ["calibration", "variants"]) == "did you mean 'calibration'?"
    assert did_you_mean("w4a16_gtpq", ["w4a16_gptq", "w8a8_int8"]) == "did you mean 'w4a16_gptq'?"
    assert did_you_mean("qqq", ["calibration"]) == ""
    assert closest("GPTQModifer", ["GPTQModifier", "AWQModifier"]) == "GPTQModifier"
    assert closest("x", []) is None
