"""Point 6 — one switch for remote code: `model.trust_remote_code`; every other route is refused
while it is off, and what runs records it."""

import pytest
import yaml
from pydantic import ValidationError

from pipeline.config import Params
from pipeline.validate import validate_project
from demo.matrix import full_params


def params_with(repo, edit) -> dict:
    data = full_params(repo)
    edit(data)
    return data


@pytest.mark.parametrize("route", [
    lambda d: d["variants"]["baseline"].update(engine_options={"trust_remote_code": True}),
    lambda d: d["engines"]["vllm"].update(extra_args=["--trust-remote-code"]),
    lambda d: d["variants"]["w8a8_int8_business"].update(engine_options={"extra_args": ["--trust-remote-code=1"]}),
    lambda d: d["variants"]["gguf_f16"].update(engine_options={"trust-remote-code": "yes"}),
])
def test_every_other_route_is_refused_while_the_switch_is_off(repo, route):
    data = params_with(repo, route)
    with pytest.raises(ValidationError, match="remote code is off"):
        Params.model_validate(data)
    data["model"]["trust_remote_code"] = True  # the one switch: then it is the user's choice
    Params.model_validate(data)


def test_the_transformers_engine_follows_the_switch_only(repo):
    data = params_with(repo, lambda d: d["variants"]["baseline"].update(engine="transformers"))
    assert Params.model_validate(data).engine_settings("baseline")["trust_remote_code"] is False
    data["model"]["trust_remote_code"] = True
    assert Params.model_validate(data).engine_settings("baseline")["trust_remote_code"] is True


def test_lm_eval_tasks_that_import_python_are_refused(repo, tmp_path):
    import shutil

    for rel in ("params.yaml", "recipes", "models/demo"):
        src = repo / rel
        (shutil.copytree if src.is_dir() else shutil.copy)(src, tmp_path / rel)
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "t.yaml").write_text("task: t\nprocess_results: !function utils.process\n")
    (tasks / "utils.py").write_text("import os\n")
    data = yaml.safe_load((tmp_path / "params.yaml").read_text())
    data["evaluate"]["lm_eval"]["include_path"] = "tasks"
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(data))
    found = [p for p in validate_project(tmp_path / "params.yaml") if "remote code" in p.message]
    assert sorted(p.message.split()[0] for p in found) == ["tasks/t.yaml", "tasks/utils.py"]

