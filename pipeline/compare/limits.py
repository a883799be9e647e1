"""This model's signal limits for a profile: the gate calibration's ladder (results/gate-
calibration/, pipeline.evaluate.gate_calibration) turned into a limit per distribution signal for
the profile's overall accuracy margin (pipeline.stats.gate_limits), or why there is none.

Signals: `kld` (per-item mean token KL along the reference's outputs, whose item mean the
divergence stage reports with a bootstrap interval) and `task_disagreement` (the share of items
whose task result changed, both ways, against the reference). Either gates only where the
calibration was made on the model and evaluation set being compared and pins the limit down;
otherwise it is a diagnostic, and the report says why.
"""

from __future__ import annotations

from typing import Any

from pipeline.contracts import GateCalibration
from pipeline.stats.gate_limits import derive_limit

SIGNALS = {"kld": "mean token KL divergence (nats per token, item mean)",
           "top1_disagreement": "share of output positions whose most likely token differs (item mean)",
           "task_disagreement": "share of items whose task result changed (both ways)"}
# A ladder whose changed results are nearly all losses cannot calibrate a count of changes in
# both directions: its limit restates the accuracy margin, and a variant that churns both ways
# without losing would fail it. Below this share of gains among the ladder's changes, the
# task-disagreement limit is a diagnostic (the accuracy criterion judges the net change).
MIN_GAIN_SHARE = 0.25


def same_evaluation_set(made_on: str, judged_on: str) -> bool:
    """Whether a calibration made on `made_on` holds for a comparison on `judged_on`: the same
    evaluation set, whole or in part — the stage calibrates on a seeded sample of
    `gate_calibration.items` and names the whole set; a calibration made when the reference was
    evaluated on a prefix names that prefix (`<sha>[:400]`), items of the same set all the same."""
    return made_on.split("[:", 1)[0] == judged_on.split("[:", 1)[0]


def derive(layout, comparison: dict[str, Any] | None, margin: float, *, alpha: float,
           n_boot: int = 1000, seed: int = 0) -> dict[str, Any]:
    """The limits for an accuracy `margin` from the calibration in `layout`, checked against
    the comparison's reference artifact and evaluation set (`comparison` None: before any
    comparison, as `qpipe plan` asks — unchecked)."""
    path = layout.gate_calibration / GateCalibration.FILE
    data = GateCalibration.load(path).dump() if path.is_file() else None  # a foreign file: ContractError
    if data is None:
        return {"calibrated": False, "why": "no gate calibration for this model — the signals are "
                "reported, not gated (fix: `dvc repro gate_calibration`)"}
    for key, what in (() if comparison is None else
                      (("artifact_sha256", "reference weights"), ("evalset_sha256", "evaluation set"))):
        want = comparison.get("baseline_" + key if key == "artifact_sha256" else key)
        same = same_evaluation_set if key == "evalset_sha256" else str.__eq__
        if not isinstance(data.get(key), str) or not isinstance(want, str) or not same(data[key], want):
            return {"calibrated": False, "why": f"the gate calibration was made with other "
                    f"{what} ({str(data.get(key))[:12]} ≠ {str(want)[:12]}) — fix: `dvc repro "
                    "gate_calibration`"}
    base = data["base_correct"]
    out: dict[str, Any] = {
        "calibrated": True, "items": len(base), "reference_accuracy": data["base_accuracy"],
        "margin": margin, "method": data["method"], "note": data.get("note"),
        "ladder": [{k: s[k] for k in ("scale", "drop", "lost", "gained", "kld_item_mean",
                                      "top1_agreement", "task_disagreement")} for s in data["steps"]],
        "signals": {}}
    for name in SIGNALS:
        steps = [{"correct": s["correct"], "signal": per_item(name, base, s)} for s in data["steps"]]
        out["signals"][name] = {"what": SIGNALS[name], **derive_limit(
            base, steps, margin=margin, alpha=alpha, n_boot=n_boot, seed=seed)}
    lost = sum(s["lost"] for s in data["steps"])
    gained = sum(s["gained"] for s in data["steps"])
    task = out["signals"]["task_disagreement"]
    if task["status"] == "gating" and gained < MIN_GAIN_SHARE * (lost + gained):
        task |= {"status": "diagnostic", "why": f"the ladder's changed results are losses "
                 f"({lost} lost, {gained} gained): its limit restates the accuracy margin, and a "
                 "variant that changes results both ways without losing would fail it — the "
                 "accuracy criterion judges the net change; flips are reported both ways"}
    return out


def per_item(signal: str, base: list[int], step: dict[str, Any]) -> list[float]:
    if signal == "kld":
        return step["kld"]
    if signal == "top1_disagreement":
        return [1.0 - a / t if t else 0.0 for a, t in zip(step["top1_agree"], step["tokens"])]
    return [float(a != b) for a, b in zip(base, step["correct"])]


def gating(limits: dict[str, Any] | None, signal: str) -> dict[str, Any] | None:
    """The signal's limit where it gates, else None."""
    if not limits or not limits.get("calibrated"):
        return None
    lim = limits["signals"].get(signal)
    return lim if lim and lim["status"] == "gating" else None


def why_not(limits: dict[str, Any] | None, signal: str) -> str:
    """Why a signal is a diagnostic, not a gate criterion, for this model."""
    if not limits:
        return "no gate calibration for this model: reported, not gated"
    if not limits.get("calibrated"):
        return limits["why"]
    return f"diagnostic for this model: {limits['signals'][signal]['why']}"
