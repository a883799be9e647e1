"""Stratified sampling with quotas per scenario × length bucket × difficulty.

Selection inside a cell is by a seeded hash of each sample's id, not by position: adding one
record to the pool changes the selection only if that record ranks inside its cell's quota, so a
small edit of the logs gives a small, explainable change of the calibration set.

    >>> items = [Item(f"r{i}", "faq", "<=128", "hard" if i % 3 == 0 else "easy") for i in range(30)]
    >>> plan = stratify(items, num_samples=10, hard_share_min=0.3, seed=0)
    >>> len(plan.selected), plan.shortfalls
    (10, [])
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Iterable, Sequence


@dataclass(frozen=True)
class Item:
    id: str
    scenario: str
    bucket: str
    difficulty: str | None


@dataclass
class Shortfall:
    cell: str
    wanted: int
    available: int

    @property
    def missing(self) -> int:
        return self.wanted - self.available

    def __str__(self) -> str:
        return f"{self.cell}: wanted {self.wanted}, only {self.available} available (short {self.missing})"


@dataclass
class Plan:
    selected: list[Item]
    quotas: dict[str, int]
    shortfalls: list[Shortfall] = field(default_factory=list)
    filled: dict[str, int] = field(default_factory=dict)  # cell -> extra samples taken
    kept_from_previous: int = 0


class QuotaError(ValueError):
    """A quota cannot be met and the policy is `fail`."""


def rank(seed: int, item_id: str) -> str:
    return hashlib.sha256(f"{seed}\x00{item_id}".encode()).hexdigest()


def apportion(total: int, weights: dict[str, float]) -> dict[str, int]:
    """Largest-remainder apportionment of `total` over `weights` (deterministic ties)."""
    s = sum(weights.values())
    if total <= 0 or s <= 0:
        return {k: 0 for k in weights}
    exact = {k: total * w / s for k, w in weights.items()}
    out = {k: math.floor(v) for k, v in exact.items()}
    for k in sorted(exact, key=lambda k: (out[k] - exact[k], k))[: total - sum(out.values())]:
        out[k] += 1
    return out


def cell_of(item: Item) -> str:
    return f"{item.scenario}|{item.bucket}|{item.difficulty or 'unlabelled'}"


def quotas(items: Sequence[Item], num_samples: int, *, hard_share_min: float,
           scenario_weights: dict[str, float] | None) -> dict[str, int]:
    """Quota per cell: scenarios by weight (uniform by default, so rare scenarios are covered),
    then buckets and difficulties in proportion to the pool, with hard ≥ the floor."""
    by_scenario: dict[str, list[Item]] = defaultdict(list)
    for it in items:
        by_scenario[it.scenario].append(it)
    weights = {s: (scenario_weights or {}).get(s, 1.0 if scenario_weights is None else 0.0)
               for s in sorted(by_scenario)}
    out: dict[str, int] = {}
    for scenario, q in apportion(num_samples, weights).items():
        pool = by_scenario[scenario]
        counts = Counter(cell_of(it) for it in pool)
        hard = {c: n for c, n in counts.items() if c.endswith("|hard")}
        labelled = any(it.difficulty for it in pool)
        n_hard = sum(hard.values())
        want_hard = 0
        if labelled:
            want_hard = max(math.ceil(hard_share_min * q), round(q * n_hard / len(pool)))
            want_hard = min(q, want_hard)
        rest = {c: n for c, n in counts.items() if c not in hard}
        if not rest:  # only hard samples in this scenario
            want_hard = q
        if want_hard and not hard:
            # The floor cannot be met from this scenario at all: a visible, empty cell, so the
            # shortfall is reported (policy fail raises; fill takes the neighbours).
            out[f"{scenario}|*|hard"] = want_hard
        else:
            out |= apportion(want_hard, hard) if hard else {}
        out |= apportion(q - want_hard, rest) if rest else {}
    return {c: n for c, n in sorted(out.items())}


def stratify(items: Iterable[Item], *, num_samples: int, hard_share_min: float = 0.0, seed: int = 0,
             policy: str = "fill", scenario_weights: dict[str, float] | None = None,
             keep: Iterable[str] = ()) -> Plan:
    """Pick `num_samples` items meeting the quotas; `keep` lists ids to retain first (rotation)."""
    items = sorted(items, key=lambda it: rank(seed, it.id))
    cells: dict[str, list[Item]] = defaultdict(list)
    for it in items:
        cells[cell_of(it)].append(it)
    q = quotas(items, num_samples, hard_share_min=hard_share_min, scenario_weights=scenario_weights)
    keep_ids = set(keep)
    chosen: dict[str, list[Item]] = defaultdict(list)
    kept = []
    for it in items:  # retained samples count towards their own cell first, up to its quota
        if it.id in keep_ids and len(chosen[cell_of(it)]) < q.get(cell_of(it), 0):
            chosen[cell_of(it)].append(it)
            kept.append(it)
    shortfalls = []
    for cell, want in q.items():
        have = chosen[cell]
        pool = [it for it in cells.get(cell, []) if it not in have]
        need = max(0, want - len(have))
        have.extend(pool[:need])
        if len(have) < want:
            shortfalls.append(Shortfall(cell, want, len(have)))
    if shortfalls and policy == "fail":
        raise QuotaError("calibration quotas cannot be met: " + "; ".join(map(str, shortfalls))
                         + " — fix: lower num_samples or hard_share_min, add logs for these cells, "
                         "or set quota_policy: fill")
    selected = [it for cell in sorted(chosen) for it in chosen[cell]]
    filled: dict[str, int] = {}
    missing = num_samples - len(selected)
    if missing > 0:
        taken = {it.id for it in selected}
        short_scen = {s.cell.split("|")[0] for s in shortfalls}
        # neighbours first: the same scenario's other cells, then any scenario
        spare = sorted((it for it in items if it.id not in taken),
                       key=lambda it: (it.scenario not in short_scen, rank(seed, it.id)))
        for it in spare[:missing]:
            selected.append(it)
            filled[cell_of(it)] = filled.get(cell_of(it), 0) + 1
    selected.sort(key=lambda it: (cell_of(it), rank(seed, it.id)))
    return Plan(selected, q, shortfalls, filled, kept_from_previous=len(kept))
