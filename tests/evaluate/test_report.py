"""Report, gates, handoff and approval on real evaluations (llama-server, the demo model's GGUF
variants), each judged against the GGUF F16 baseline on llama.cpp (the engine-matched reference),
the configured bf16 baseline evaluated by the transformers reference: Q4_K_M passes the research
profile, 2-bit Q2_K does not."""

import hashlib
import json
import shutil
import subprocess
import sys

import pytest

from pipeline.artifacts.manifest import verify
from pipeline.evaluate import stage
from pipeline.handoff import stage as handoff
from pipeline.compare import stage as report
from pipeline.handoff.stage import ApprovalError

from .conftest import make_params
from conftest import stage_args

pytestmark = [pytest.mark.slow, pytest.mark.timeout(2400)]
F16, Q4, Q2 = "gguf_f16", "gguf_q4_k_m_business", "gguf_q2_k_business"


@pytest.fixture(scope="module")
def reported(served):
    data = json.loads(json.dumps(served.data))
    data["variants"]["baseline"]["engine"] = "transformers"  # no vLLM needed for the reference
    # Its own results folder (other tests evaluate these variants with other settings); no
    # lm-eval tasks (not what these tests are about).
    params = make_params(data, gates={"profile": "research",
                                      "critical_slices": ["scenario=tool_call"]},
                         compare={"engine_baselines": {"llamacpp": F16}, "noise_floor": {}},
                         evaluate={"out_dir": "results-report", "lm_eval": {"tasks": []}})
    for name in ("baseline", F16, Q4, Q2):
        served.artifact(name)
        stage.run(*stage_args(params, served.root, stage.PARAMS, name), name)
    comparison = report.run(*stage_args(params, served.root, report.PARAMS), variants=[F16, Q4, Q2])
    index = handoff.run(*stage_args(params, served.root, handoff.PARAMS))
    return params, comparison, index


def test_report_has_gates_utility_pareto_and_plots(reported, served):
    _, c, _ = reported
    assert c["variants"][Q4]["gate"]["verdict"] == "pass", c["variants"][Q4]["gate"]
    q2 = c["variants"][Q2]["gate"]
    # 2-bit k-quants lose on tool calls: the critical slice does not pass, and neither does Q2_K
    tool = next(x for x in q2["criteria"] if x["criterion"] == "slice:scenario=tool_call")
    assert q2["verdict"] != "pass" and tool["verdict"] != "pass", q2["criteria"]
    assert tool["ci_low"] < -0.10
    assert isinstance(c["variants"][Q4]["utility"]["score"], float)
    out = served.root / "reports"
    md = (out / "comparison.md").read_text()
    assert Q2 in md and "## Verdicts" in md and "slice:scenario=tool_call" in md
    assert (out / "slices.png").stat().st_size > 10_000
    assert json.loads((out / "comparison.json").read_text())["gate_profile"] == "research"


def test_handoff_bundles_only_passing_variants_and_they_verify(reported, served):
    _, _, index = reported
    assert set(index["bundles"]) == {Q4}
    assert index["left_out"][Q2].startswith(("gates failed", "gates inconclusive"))
    b = served.root / "handoff" / Q4
    assert verify(b) == [] and verify(b / "model") == []
    done = subprocess.run(["sha256sum", "-c", "SHA256SUMS"], cwd=b, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    card = (b / "MODEL_CARD.md").read_text()
    assert "llama-server -m model/model-Q4_K_M.gguf" in card and "PASS" in card
    # the command the evaluation ran, with its settings (threads, slots, KV-cache dtype)
    s = served.params.engines.llamacpp
    assert f"-t {s.threads} -c {s.ctx} -np {s.slots}" in card and "-ctk f16 -ctv f16" in card
    # the report with its plots, and the calibration set's card
    for name in ("comparison.md", "slices.png", "calibration_card.md", "calibration_card.json"):
        assert (b / name).is_file(), name
    assert "hard share" in card and "overlap with the evaluation set: 0 by id" in card


def test_a_corrupted_bundle_file_is_named(reported, served, tmp_path):
    copy = tmp_path / "bundle"
    shutil.copytree(served.root / "handoff" / Q4, copy)
    card = copy / "MODEL_CARD.md"
    card.write_text(card.read_text() + "tampered\n")
    problems = verify(copy)
    assert [p.path for p in problems] == ["MODEL_CARD.md"]
    done = subprocess.run([sys.executable, "-m", "pipeline.cli", "verify", str(copy)],
                          capture_output=True, text=True)
    assert done.returncode == 1 and "MODEL_CARD.md" in done.stdout + done.stderr


def test_approving_a_failing_variant_is_refused_with_its_criteria(reported, served):
    params, _, _ = reported
    with pytest.raises(ApprovalError) as err:
        handoff.approve(*stage_args(params, served.root), Q2, by="qa")
    # failed, or inconclusive (F16 as the reference on ~600 items): either way, not approved
    assert "its gates" in str(err.value) and "scenario=tool_call" in str(err.value)
    with pytest.raises(ApprovalError, match="needs --reason"):
        handoff.approve(*stage_args(params, served.root), Q2, by="qa", override=True)


def test_approving_a_passing_variant_registers_it_with_the_alias(reported, served):
    from mlflow import MlflowClient

    params, _, _ = reported
    rec = handoff.approve(*stage_args(params, served.root), Q4, by="alice", note="edge devices")
    reg = rec["registry"]
    assert reg["alias"] == "approved"
    client = MlflowClient(tracking_uri=f"sqlite:///{served.root / 'mlflow.db'}")
    mv = client.get_model_version_by_alias(reg["name"], "approved")
    assert str(mv.version) == str(reg["version"])
    assert mv.tags["qpipe.approved_by"] == "alice"
    assert mv.tags["qpipe.bundle_sha256"] == rec["bundle_sha256"]
    saved = json.loads((served.root / "approvals" / f"{Q4}.json").read_text())
    assert saved["override"] is False and saved["approved_by"] == "alice"
    manifest = (served.root / "handoff" / Q4 / "model" / "manifest.json").read_bytes()
    assert mv.tags["qpipe.manifest_sha256"] == hashlib.sha256(manifest).hexdigest()
    assert mv.tags["qpipe.override"] == "false" and mv.tags["qpipe.gate_passed"] == "true"
    over = handoff.approve(*stage_args(params, served.root), Q2, by="bob", override=True, reason="pilot only")
    assert over["override"] is True
    mv2 = client.get_model_version_by_alias(reg["name"], "approved")
    assert (mv2.tags["qpipe.override"], mv2.tags["qpipe.override_reason"]) == ("true", "pilot only")
    assert "slice:scenario=tool_call" in mv2.tags["qpipe.gate_failed"] + mv2.tags["qpipe.gate_inconclusive"]
    assert mv2.tags["qpipe.gate_verdict"] in ("fail", "inconclusive")
    assert str(client.get_model_version_by_alias(reg["name"], "approved").version) == str(over["registry"]["version"])
