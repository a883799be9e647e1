"""Mixed-precision candidates from the parts' sensitivities: for a budget of average bits per
weight, the assignment of one format per part that minimises the predicted KL (the sum of the
parts' own) — a multiple-choice knapsack, solved exactly as an integer program by HiGHS through
scipy.optimize.milp — and the Pareto front of predicted KL against size over a range of budgets.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pipeline.search.sensitivity import UNQUANTIZED, UNQUANTIZED_BITS


class FrontError(ValueError):
    pass


def table(measured: dict[str, Any], formats: list[str]
          ) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Parts, their weight counts, and per part × format the KL, the bits per weight and whether
    the part can take the format (the unquantized format: 16 bits, no KL, always)."""
    names = list(measured["parts"])
    col = {f: j for j, f in enumerate(formats)}
    row = {p: i for i, p in enumerate(names)}
    kl = np.zeros((len(names), len(formats)))
    bits = np.full((len(names), len(formats)), UNQUANTIZED_BITS)
    weights = np.array([float(measured["weights"][p]) for p in names])
    seen = np.zeros((len(names), len(formats)), dtype=bool)
    for r in measured["rows"]:
        if r["format"] in col:
            i, j = row[r["part"]], col[r["format"]]
            kl[i, j], bits[i, j], seen[i, j] = max(r["kl"], 0.0), r["bits_per_weight"], True
    unfit = {(u["part"], u["format"]) for u in measured.get("unfit", [])}
    for j, f in enumerate(formats):
        if f == UNQUANTIZED:
            seen[:, j] = True
            continue
        missing = [names[i] for i in np.flatnonzero(~seen[:, j]) if (names[i], f) not in unfit]
        if missing:
            raise FrontError(f"format {f} was not measured on {', '.join(missing[:3])} — fix: measure it "
                             "(its sensitivity) or leave it out of the formats allowed")
    stuck = [names[i] for i in np.flatnonzero(~seen.any(1))]
    if stuck:
        raise FrontError(f"no allowed format fits {', '.join(stuck[:3])} — fix: allow the unquantized format "
                         "(search.keep_unquantized) or a group size that divides its columns")
    if (weights <= 0).any():
        raise FrontError("a part has no weights")
    return names, weights, kl, bits, seen


def best_under(budget_bits: float, weights: np.ndarray, kl: np.ndarray, bits: np.ndarray,
               allowed: np.ndarray | None = None) -> np.ndarray | None:
    """The format index per part that minimises the summed KL with the weights' average bits ≤
    `budget_bits`, each part among its `allowed` formats; None where no assignment fits."""
    from scipy.optimize import Bounds, LinearConstraint, milp

    n, m = kl.shape
    allowed = np.ones((n, m), dtype=bool) if allowed is None else allowed
    cost = kl.ravel()
    one = np.zeros((n, n * m))
    for i in range(n):
        one[i, i * m:(i + 1) * m] = 1
    size = (weights[:, None] * bits).ravel()[None, :]
    cons = [LinearConstraint(one, 1, 1), LinearConstraint(size, -np.inf, budget_bits * weights.sum())]
    res = milp(cost, constraints=cons, integrality=np.ones(n * m), bounds=Bounds(0, allowed.ravel().astype(float)))
    if res.status != 0 or res.x is None:
        return None
    return np.round(res.x).reshape(n, m).argmax(1)


def front(measured: dict[str, Any], formats: list[str], budgets: list[float]) -> list[dict[str, Any]]:
    """One candidate per budget (the same assignment found twice is kept once): its parts'
    formats, its average bits per weight, its predicted KL."""
    names, weights, kl, bits, allowed = table(measured, formats)
    out, seen = [], set()
    for b in sorted(budgets):
        pick = best_under(b, weights, kl, bits, allowed)
        if pick is None:
            continue
        key = tuple(pick)
        if key in seen:
            continue
        seen.add(key)
        idx = np.arange(len(names))
        avg = float((weights * bits[idx, pick]).sum() / weights.sum())
        out.append({"budget_bits": b, "bits_per_weight": round(avg, 4),
                    "predicted_kl": float(kl[idx, pick].sum()),
                    "assignment": {p: formats[j] for p, j in zip(names, pick)},
                    "formats": {f: int((pick == j).sum()) for j, f in enumerate(formats)}})
    if not out:
        raise FrontError(f"no assignment fits any budget of {budgets} bits per weight — fix: a budget at "
                         f"least the smallest format's bits ({bits.min():.3f})")
    return out


def uniform(measured: dict[str, Any], formats: list[str]) -> list[dict[str, Any]]:
    """Each uniform variant (every part at one format) as a point beside the front — those every
    part can take."""
    names, weights, kl, bits, allowed = table(measured, formats)
    out = []
    for j, f in enumerate(formats):
        if f == UNQUANTIZED or not allowed[:, j].all():
            continue
        out.append({"format": f, "bits_per_weight": round(float((weights * bits[:, j]).sum() / weights.sum()), 4),
                    "predicted_kl": float(kl[:, j].sum()), "measured_kl": measured["uniform_kl"][f]})
    return out
