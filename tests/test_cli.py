"""The `qpipe` command line: help lists the commands; validate reports every problem at once."""

import shutil

import pytest
import yaml
from typer.testing import CliRunner

from pipeline.cli import app
from demo.matrix import full_params

runner = CliRunner()


def test_help_lists_commands():
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    for cmd in ("validate", "calib", "quantize", "eval", "compare", "handoff"):
        assert cmd in result.output
    assert "demo" not in result.output.split("Commands")[1].split()  # the demo has its own CLI
    calib = runner.invoke(app, ["calib", "--help"])
    for cmd in ("split", "build", "inspect", "diff", "freeze"):
        assert cmd in calib.output


def test_the_demo_has_its_own_command_line():
    from demo.cli import app as demo_app

    result = runner.invoke(demo_app, ["--help"])
    assert result.exit_code == 0
    for cmd in ("generate", "train", "eval"):
        assert cmd in result.output


def test_validate_passes_on_the_repository(repo, monkeypatch):
    from pipeline import environments

    monkeypatch.chdir(repo)
    # an AVX-512 host's answer (tests/test_environments.py covers a host without it)
    monkeypatch.setattr(environments, "vllm_cpu_kernels", lambda *a, **k: {"cpu_gemm_wna16": True})
    result = runner.invoke(app, ["validate"])
    assert result.exit_code == 0, result.output
    assert "OK" in result.output


def test_validate_reports_typo_unknown_scheme_and_missing_file(repo, tmp_path):
    params = full_params(repo)
    params["calibraton"] = params.pop("calibration")            # a typo'd key
    params["variants"]["gptq_w4a16_business"]["scheme"] = "w4a16_gtpq"  # an unknown scheme
    params["variants"]["awq_w4a16_business"]["recipe"] = "recipes/missing.yaml"  # a missing file
    for d in ("calibration", "models", "recipes"):
        shutil.copytree(repo / d, tmp_path / d, ignore=shutil.ignore_patterns("*.safetensors"))
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(params, sort_keys=False))
    result = runner.invoke(app, ["validate", "--params", str(path)])
    assert result.exit_code == 1
    out = result.output
    assert "unknown key 'calibraton'" in out and "did you mean 'calibration'" in out
    assert "w4a16_gtpq" in out and "did you mean 'w4a16_gptq'" in out
    assert "recipes/missing.yaml" in out
    assert out.count("params.yaml:") >= 3  # each problem names the file and line


def test_every_user_facing_error_exits_1_with_its_message_and_others_keep_their_traceback():
    import importlib

    import typer

    from pipeline.cli import _guarded
    from pipeline.errors import QpipeError

    classes = {"pipeline.engines.base": "EngineError", "pipeline.artifacts.manifest": "VerificationError",
               "pipeline.handoff.stage": "ApprovalError", "pipeline.compare.gates": "GateError",
               "pipeline.tracking.store": "TrackingError", "pipeline.evaluate.harness": "EvalSetError",
               "pipeline.llamacpp_tools": "LlamaCppMissing", "pipeline.compare.deltas": "CompareError",
               "pipeline.quantize.base": "BackendError"}
    for module, name in classes.items():
        cls = getattr(importlib.import_module(module), name)
        assert issubclass(cls, QpipeError), name

        def fail(cls=cls):
            err = cls.__new__(cls)  # some take structured arguments; the message is what counts
            Exception.__init__(err, "what failed — fix: how")
            raise err

        with pytest.raises(typer.Exit) as info:
            _guarded(fail)
        assert info.value.exit_code == 1

    def bug():
        raise KeyError("a bug, not a user error")

    with pytest.raises(KeyError):
        _guarded(bug)


def test_an_unknown_variant_exits_2_naming_the_closest(repo, monkeypatch):
    """Every command that takes a variant checks it against params.yaml before any stage runs."""
    monkeypatch.chdir(repo)
    for cmd in ("quantize", "eval", "divergence", "serve"):
        result = runner.invoke(app, [cmd, "basline"])
        assert result.exit_code == 2, (cmd, result.output)
        assert "unknown variant 'basline'" in result.output and "baseline" in result.output


def test_an_unknown_upgrade_exits_2_naming_the_closest(repo, monkeypatch):
    monkeypatch.chdir(repo)
    result = runner.invoke(app, ["upgrade", "llamacpp_releas"])
    assert result.exit_code == 2, result.output
    assert "unknown upgrade 'llamacpp_releas'" in result.output and "llamacpp_release" in result.output
