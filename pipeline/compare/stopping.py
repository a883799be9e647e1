"""A variant's gate read at a look of a sequential evaluation: on the items served so far, every
interval at the repeated-confidence level of the looks taken (pipeline.stats.sequential).

The evaluation set is served in a seeded random order, `look` items at a time. After each look the
variant's records are paired with its reference's records for the same items and the whole gate
is read — overall accuracy, the critical slices, the any-slice drop after Benjamini–Hochberg, JSON
validity, output length, the signals with this model's limits — exactly as `compare` reads it,
except that every interval and test is taken at the repeated level α_k instead of α. Repeated
confidence intervals cover the truth at every look at once with probability ≥ 1 − α, so stopping
at the first look where the gate is settled (every criterion passes, or one fails) keeps each
criterion's error rates, and the verdict read at that look is the one `compare` reports. A variant
that never settles runs the whole set, where the level is the design's last (slightly under α:
the price of the looks). The speed and size gain is not part of the stopping rule: bench measures
it, on other requests.

Per-slice criteria and Benjamini–Hochberg: a slice's items arrive in the same random order as the
set's, so its information at look k is the same share of its whole (up to sampling); each slice's
interval at α_k is a repeated confidence interval of its own, and BH runs over the slices' tests at
α_k. That the combined rule keeps the gate's error rates on real records is checked by simulation
(`benchmarks/sequential_validity.py --gate`), not assumed.

Futility (`evaluate.sequential.futility`, off at 0): an evaluation also stops, inconclusive, once
the chance that the whole set settles its gate is below the bound — the predictive power of every
unsettled criterion (pipeline.stats.sequential.settle_chances: the present evidence with its
uncertainty, not the estimate taken as the truth), combined as
min P(pass) + Σ P(fail), an upper bound on P(the gate passes or fails at the last look). The bound
is non-binding: stopping for futility only ever turns a would-be pass or fail into inconclusive, so
it cannot raise either error rate (Jennison & Turnbull 2000, §10.6); what it can cost is a pass
that the whole set would have shown, which the simulations measure. It is judged only where every
unsettled criterion is an interval against a margin (accuracy, critical slices, JSON validity) or a
band (output length); a signal against this model's limits or a pending any-slice drop keeps the
evaluation going.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pipeline.compare.deltas import (
    CompareError, at_looks, compare_variant, load_results, protocol_of, served_part,
)
from pipeline.compare.gates import evaluate_gates
from pipeline.contracts.eval_metrics import Detectors, EngineInfo, Metrics, Speed
from pipeline.stage_params import StageView
from pipeline.stats.sequential import OBRIEN_FLEMING, Spending, look_sizes, repeated_alpha, settle_chances

MARGINED = ("accuracy_overall", "json_validity")  # criteria read as an interval against −margin


def gate_at_look(ref_m: Metrics, ref_r: list[dict], m: Metrics, r: list[dict], compare_cfg, gates_cfg, *,
                 looks: list[int], total: int, bench: dict | None = None, limits: dict | None = None,
                 judge_gain: bool = True, power: float | None = 0.8, with_power: bool = True,
                 spending: Spending = OBRIEN_FLEMING) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the compared variant, its gate) on the items of `r` — the variant's records after the
    last of `looks` (cumulative item counts out of `total`) — against the reference's records for
    those items, every interval at the repeated level of `looks`. The gate records that level and
    the looks."""
    if len(r) != looks[-1]:
        raise ValueError(f"{len(r)} records but the last look is at {looks[-1]} items")
    cfg, level = at_looks(compare_cfg, looks, total, spending)
    v = compare_variant(ref_m, served_part(ref_r, r), m, r, cfg, with_power=with_power)
    gate = evaluate_gates(v, bench, gates_cfg, alpha=level, power=power, limits=limits, judge_gain=judge_gain)
    gate["sequential"] = {"looks": list(looks), "total": total, "items": looks[-1],
                          "alpha": compare_cfg.alpha, "repeated_alpha": level}
    return v, gate


def settled(gate: dict[str, Any], v: dict[str, Any] | None = None, *, final: bool = True) -> bool:
    """Whether a look's gate (of the compared variant `v`) ends the evaluation: every criterion
    passed, or one failed. Before the last look a fail resting on the any-slice criterion alone —
    a significant drop whose point estimate is beyond the margin, no interval against the margin —
    ends it only where a flagged slice's repeated interval lies wholly beyond the margin: over many
    looks a point estimate crosses a margin by chance far more often than at one."""
    if gate["verdict"] == "inconclusive":
        return False
    if gate["verdict"] == "pass" or final or v is None:
        return True
    return any(c["criterion"] != "any_slice"
               or any(v["slices"][s]["ci_high"] < -c["threshold"] for s in c.get("slices", []))
               for c in gate["failed"])


def conditional_power(gate: dict[str, Any], looks: list[int], total: int, final_level: float) -> float | None:
    """An upper bound on the chance that the last look (at `final_level`) settles the gate read at
    `looks`: min over the criteria of P(pass) + Σ P(fail), each a predictive probability; None where
    an unsettled criterion is not an interval against a margin or band (no futility judged)."""
    seen, level = looks[-1] / total, gate["alpha"]
    passing, failing = [1.0], 0.0
    for c in gate["criteria"]:
        if c["verdict"] == "pass":
            continue
        name = c["criterion"]
        if c["verdict"] != "inconclusive" or c.get("ci_low") is None or c.get("value") is None:
            return None
        ci = (c["ci_low"], c["ci_high"])
        if name in MARGINED or name.startswith("slice:"):
            p, f = settle_chances(c["value"], ci, level, final_level, seen, margin=c["threshold"])
        elif name == "output_length":
            p, f = settle_chances(c["value"], ci, level, final_level, seen, band=tuple(c["threshold"]))
        else:
            return None
        passing.append(p)
        failing += f
    return min(1.0, min(passing) + failing)


def decide(gate: dict[str, Any], v: dict[str, Any], looks: list[int], total: int, *, look: int, alpha: float,
           spending: Spending = OBRIEN_FLEMING, futility: float = 0.0) -> dict[str, Any]:
    """What a look's gate means for the evaluation: `settled` (it stops with this verdict), `futile`
    (it stops inconclusive: the whole set would very likely leave it so), or neither (it goes on)."""
    final = looks[-1] == total
    out = {"settled": settled(gate, v, final=final), "verdict": gate["verdict"],
           "repeated_alpha": gate["sequential"]["repeated_alpha"],
           "unsettled": [c["criterion"] for c in gate["inconclusive"]], "futile": False}
    if futility and not out["settled"] and not final:
        cp = conditional_power(gate, looks, total, repeated_alpha(look_sizes(total, look), total, alpha, spending))
        if cp is not None:
            out.update(conditional_power=round(cp, 4), futile=cp < futility)
    return out


class StopRule:
    """The stopping rule of one variant's sequential evaluation: its gate, quality criteria only,
    read after each look against the records of `reference` (which served every item). Built by
    :func:`stop_rule`; the evaluate stage calls :meth:`check` before it serves and the rule after
    each look."""

    role = "variant"

    def __init__(self, reference: str, ref_m: Metrics, ref_r: list[dict], compare_cfg, gates_cfg,
                 name: str, *, look: int, spending: Spending = OBRIEN_FLEMING, futility: float = 0.0) -> None:
        self.reference, self.name = reference, name
        self._ref_m, self._ref_r = ref_m, list(ref_r)
        self._compare, self._gates = compare_cfg, gates_cfg
        self.look, self.spending, self.futility = look, spending, futility

    def check(self, evalset_sha256: str, harness_version: str, protocol: dict) -> None:
        """Refuse to stop against records made another way than this evaluation's."""
        m, problems = self._ref_m, []
        if not m.served:
            problems.append(f"it is not served here ({m.reason})")
        for got, want, what in ((m.evalset_sha256, evalset_sha256, "evaluation set"),
                                (m.harness_version, harness_version, "evaluation harness")):
            if got != want:
                problems.append(f"its {what} is {got}, this evaluation's {want}")
        for key in ("prompts_sha256", "max_tokens", "decoding"):
            if protocol_of(m).get(key) != protocol.get(key):
                problems.append(f"its {key} differs from this evaluation's")
        if m.sequential and m.sequential.role != "reference":
            problems.append("it stopped early itself: a reference serves every item its variants use")
        elif m.sequential and m.sequential.look != self.look:
            problems.append(f"its opening look was {m.sequential.look} items, this evaluation's looks are "
                            f"{self.look}")
        if problems:
            raise CompareError(f"{self.name} cannot stop against {self.reference}'s records: "
                               + "; ".join(problems) + f" — fix: `dvc repro evaluate@{self.reference}`")

    def extend(self, records: list[dict]) -> None:
        """The reference's records for items beyond those it served itself (its opening look),
        served by this evaluation (pipeline.evaluate.reference_serving)."""
        have = {r["id"] for r in self._ref_r}
        self._ref_r += [r for r in records if r["id"] not in have]

    def __call__(self, records: list[dict], looks: list[int], total: int) -> dict[str, Any]:
        v, gate = gate_at_look(self._ref_m, self._ref_r, _metrics_stub(self.name), records, self._compare,
                               self._gates, looks=looks, total=total, judge_gain=False, power=None,
                               with_power=False, spending=self.spending)
        return decide(gate, v, looks, total, look=self.look, alpha=self._compare.alpha, spending=self.spending,
                      futility=self.futility)


def _metrics_stub(name: str) -> Metrics:
    """What compare_variant reads of a variant's metrics that a look cannot know yet: its speed
    and size are bench's and the manifest's, not the gate's quality criteria. Built without
    validation: a look has no accuracy or evaluation-set hash of its own to record."""
    speed = Speed(serving_engine=False, note="not measured at a look", **dict.fromkeys(
        ("output_tokens_per_second", "ttft_p50", "ttft_p99", "tpot_p50", "tpot_p99", "latency_p50", "latency_p99")))
    return Metrics.model_construct(variant=name, served=True, engine=EngineInfo(name="?"), size_bytes=None,
                                   detectors=Detectors(), speed=speed)


class OpeningLook:
    """The rule of an engine's unquantized reference (compare.engine_baselines) under a sequential
    design: it serves its opening look — the first `look` items of the seeded order — and stops;
    each of its variants serves the reference's items it goes on to use
    (pipeline.evaluate.reference_serving), so in all the reference serves as many items as its
    longest-running variant uses. Its own gate is not read at the look: its comparison with the
    baseline is on a sample fixed in advance, read at α."""

    role = "reference"

    def __init__(self, reference: str, alpha: float) -> None:
        self.reference, self.alpha = reference, alpha

    def check(self, evalset_sha256: str, harness_version: str, protocol: dict) -> None:
        return None

    def __call__(self, records: list[dict], looks: list[int], total: int) -> dict[str, Any]:
        return {"settled": True, "verdict": "not judged", "repeated_alpha": self.alpha, "unsettled": [],
                "futile": False}


def stop_rule(params: StageView, layout, name: str) -> StopRule | OpeningLook | None:
    """The stopping rule of `name`'s evaluation, or None where it serves every item: sequential
    evaluation off (evaluate.sequential.enabled), the baseline (other stages read its records
    whole) or another unquantized variant; an engine's own reference serves its opening look
    (OpeningLook). `params`: the evaluate stage's own."""
    variant = params.variants[name]
    if not params.evaluate.sequential.enabled:
        return None
    if variant.is_unquantized:
        engine_reference = (name in params.compare.engine_baselines.values()
                            and variant.reference not in (None, "none"))
        return OpeningLook(variant.reference, params.compare.alpha) if engine_reference else None
    ref = variant.reference
    ref_m, ref_r = load_results(layout.results, ref)
    settings = PairingSettings(alpha=params.compare.alpha, seed=params.compare.seed)
    seq = params.evaluate.sequential
    return StopRule(ref, ref_m, ref_r, settings, params.gates, name, look=seq.look,
                    spending=Spending(seq.spending, seq.gamma), futility=seq.futility)


@dataclass(frozen=True)
class PairingSettings:
    """What pairing at a look reads of compare's settings — the keys the evaluate stage declares
    (no power analysis at a look: `min_effect` and `power` are not read)."""

    alpha: float
    seed: int
    min_effect: float = 0.05
    power: float | None = None

