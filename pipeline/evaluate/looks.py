"""An evaluation served in looks (`evaluate.sequential`): the items in a seeded random order,
`look` at a time; after each look a stopping rule reads the variant's gate on the items served so
far against its reference's records, and the evaluation ends at the first look where the gate is
settled — every quality criterion passes, or one fails — or, with a futility bound, where the whole
set would very likely leave it inconclusive, or at the whole set.

The rule is the comparison's own (pipeline.compare.stopping), handed in by the command that runs
the stage: this module serves and records, the comparison judges. The order is a function of the
seed and the evaluation set alone, and decoding is greedy, so a rerun with the same inputs stops at
the same look with the same records.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from pipeline.engines.base import Completion, Engine
from pipeline.evaluate.harness import run_prompts
from pipeline.stats.sequential import Spending, look_sizes

def design(spending, futility: float) -> str:
    """The design in words, as the metrics and the report record it."""
    return (f"group-sequential: Lan–DeMets alpha spending, {spending.label}; every criterion read from its "
            "repeated confidence interval" + (f"; non-binding futility below {futility:g} predictive power"
                                              if futility else ""))


class StopRule(Protocol):
    """What the evaluation asks after each look (pipeline.compare.stopping.StopRule; `role`
    "reference" for an engine's reference that serves its opening look only)."""

    reference: str
    role: str

    def check(self, evalset_sha256: str, harness_version: str, protocol: dict) -> None: ...

    def __call__(self, records: list[dict], looks: list[int], total: int) -> dict[str, Any]: ...


@dataclass
class Served:
    """What a sequential evaluation served: completions by evaluation-set position, the look that
    served each, the serving wall time, and the metrics' `sequential` block."""

    completions: dict[int, Completion] = field(default_factory=dict)
    look_of: dict[int, int] = field(default_factory=dict)
    wall: float = 0.0
    block: dict[str, Any] = field(default_factory=dict)

    @property
    def positions(self) -> list[int]:
        return sorted(self.completions)


def serve_in_looks(eng: Engine, prompts: list[list[int]], ev, rule: StopRule, *,
                   score: Callable[[list[int], dict[int, Completion]], list[dict]],
                   on_answer: Callable[[int, Completion], None] | None = None,
                   extend: Callable[[list[int]], None] | None = None) -> Served:
    """Serve `prompts` in looks until `rule` says the gate is settled. `score(positions,
    completions)` turns the served items into records (evaluation-set order) for the rule;
    `on_answer(position, completion)` is called as each answer arrives; `extend(batch)`, after each
    look's items are served and before the rule reads them, gives the rule its reference's records
    for them where the reference served only its opening look (pipeline.evaluate.reference_serving)."""
    total, seq = len(prompts), ev.sequential
    order = np.random.default_rng(seq.seed).permutation(total).tolist()
    looks = look_sizes(total, seq.look)
    out = Served()
    judged: dict[str, Any] = {}
    for k, upto in enumerate(looks, 1):
        batch = order[looks[k - 2] if k > 1 else 0:upto]
        answered = (lambda j, c, batch=batch: on_answer(batch[j], c)) if on_answer else None
        completions, wall = run_prompts(eng, [prompts[i] for i in batch], max_tokens=ev.max_tokens,
                                        concurrency=ev.concurrency * ev.replicas, progress=answered)
        out.wall += wall
        for i, c in zip(batch, completions, strict=True):
            out.completions[i], out.look_of[i] = c, k
        if extend is not None:
            extend(batch)
        judged = rule(score(out.positions, out.completions), looks[:k], total)
        if judged["settled"] or judged.get("futile"):
            break
    stopped, role = k < len(looks), getattr(rule, "role", "variant")
    out.block = {"design": design(Spending(seq.spending, seq.gamma), seq.futility), "reference": rule.reference,
                 "look": seq.look, "seed": seq.seed,
                 "total": total, "looks": looks[:k], "items": looks[k - 1], "planned_looks": len(looks),
                 "stopped": stopped, "verdict_at_stop": judged["verdict"],
                 "unsettled_at_stop": judged.get("unsettled", []),
                 "repeated_alpha": judged["repeated_alpha"],
                 "saving": round(1 - looks[k - 1] / total, 4),
                 "spending": seq.spending, "gamma": seq.gamma, "futility": seq.futility,
                 "stopped_for": None if not stopped else "futility" if judged.get("futile") else
                 "opening look" if role == "reference" else "settled",
                 "conditional_power": judged.get("conditional_power"), "role": role}
    return out
