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
"""

from __future__ import annotations

from typing import Any

from pipeline.compare.deltas import compare_variant
from pipeline.compare.gates import evaluate_gates
from pipeline.stats.sequential import repeated_alpha


def gate_at_look(ref_m: dict, ref_r: list[dict], m: dict, r: list[dict], compare_cfg, gates_cfg, *,
                 looks: list[int], total: int, bench: dict | None = None, limits: dict | None = None,
                 judge_gain: bool = True, power: float | None = 0.8,
                 with_power: bool = True) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the compared variant, its gate) on the items of `r` — the variant's records after the
    last of `looks` (cumulative item counts out of `total`) — against the reference's records for
    those items, every interval at the repeated level of `looks`. The gate records that level and
    the looks."""
    if len(r) != looks[-1]:
        raise ValueError(f"{len(r)} records but the last look is at {looks[-1]} items")
    served = {x["id"] for x in r}
    level = repeated_alpha(looks, total, compare_cfg.alpha)
    cfg = compare_cfg.model_copy(update={"alpha": level})
    v = compare_variant(ref_m, [x for x in ref_r if x["id"] in served], m, r, cfg, with_power=with_power)
    gate = evaluate_gates(v, bench, gates_cfg, alpha=level, power=power, limits=limits, judge_gain=judge_gain)
    gate["sequential"] = {"looks": list(looks), "total": total, "items": looks[-1],
                          "alpha": compare_cfg.alpha, "repeated_alpha": level}
    return v, gate


def settled(gate: dict[str, Any]) -> bool:
    """Whether a look's gate ends the evaluation: every criterion passed, or one failed."""
    return gate["verdict"] != "inconclusive"
