"""The `sensitivity` stage on a small demo project: its outputs through their contract, the same
bytes on a rerun (no run facts in them: DVC keeps its hash), every proposed mix within its budget
and cheaper in predicted KL than the uniform variant of its size, and a missing calibration set
refused with the command that builds it."""

import json

import pytest

from conftest import stage_args
from pipeline.config import Params
from pipeline.contracts import SensitivityReport
from pipeline.search import stage

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def ran(served):
    data = json.loads(json.dumps(served.data))
    data["search"].update(tokens=512, max_seq_len=128, budgets=[4.5, 6.0, 8.0])
    params = Params.model_validate(data)
    report = stage.run(*stage_args(params, served.root, stage.PARAMS))
    return served, params, report


def test_outputs_are_written_through_their_contract(ran):
    served, params, r = ran
    out = served.root / "reports" / "search"
    loaded = SensitivityReport.load(out / "sensitivity.json")
    assert loaded.calibration == "business" and loaded.tokens == r["tokens"] <= 512
    assert len(loaded.rows) == len(loaded.parts) * 2  # W4A16 and W8A16 per part
    md = (out / "sensitivity.md").read_text()
    assert "## Proposed mixes" in md and "W4A16" in md
    assert (out / "sensitivity.png").stat().st_size > 10_000


def test_a_rerun_writes_the_same_bytes(ran):
    served, params, _ = ran
    path = served.root / "reports" / "search" / "sensitivity.json"
    before = path.read_bytes()
    stage.run(*stage_args(params, served.root, stage.PARAMS))
    assert path.read_bytes() == before


def test_each_mix_fits_its_budget_and_beats_the_uniform_variant_it_can_afford(ran):
    _, _, r = ran
    uniform = {u["format"]: u for u in r["uniform"]}
    assert uniform["W4A16"]["measured_kl"] > uniform["W8A16"]["measured_kl"] > 0
    for c in r["candidates"]:
        assert c["bits_per_weight"] <= c["budget_bits"] + 1e-9
        assert sum(c["formats"].values()) == len(r["parts"])
        affordable = [u for u in r["uniform"] if u["bits_per_weight"] <= c["budget_bits"]]
        # the program may always choose a uniform variant, so its optimum is never worse
        assert all(c["predicted_kl"] <= u["predicted_kl"] + 1e-12 for u in affordable)


def test_a_missing_calibration_set_is_refused_with_its_fix(served):
    data = json.loads(json.dumps(served.data))
    data["calibration"]["sets"]["unbuilt"] = dict(data["calibration"]["sets"]["business"])
    data["search"]["calibration"] = "unbuilt"
    params = Params.model_validate(data)
    with pytest.raises(stage.SearchError, match=r"qpipe calib build unbuilt"):
        stage.run(*stage_args(params, served.root, stage.PARAMS))
