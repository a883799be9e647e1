"""Silent-regression detectors (docs/rationale.md#silent-regressions).

Per variant: the output-length distribution and the share that ran into max tokens (long-output
degradation shows as outputs that stop short or never stop), the repetition rate, and JSON
validity where a JSON answer is expected. Against the baseline: consistency at three levels —
exact output match, character similarity, and task-result agreement (same pass/fail).

    >>> repeats("a b c d a b c d a b c d", 4)
    True
"""

from __future__ import annotations

import difflib
from collections import Counter
from typing import Any, Sequence

import numpy as np


def repeats(text: str, n: int = 4, times: int = 3) -> bool:
    """True when some word n-gram occurs `times` times or more: the looping of a damaged model."""
    words = text.split()
    grams = Counter(tuple(words[i:i + n]) for i in range(len(words) - n + 1))
    return bool(grams) and max(grams.values()) >= times


def _dist(values: Sequence[float]) -> dict[str, float]:
    if not values:
        return {"n": 0}
    a = np.asarray(values, dtype=float)
    return {"n": int(a.size), "mean": round(float(a.mean()), 3),
            "p50": float(np.percentile(a, 50)), "p90": float(np.percentile(a, 90)),
            "p99": float(np.percentile(a, 99)), "max": float(a.max())}


def variant_detectors(records: list[dict], *, max_tokens: int) -> dict[str, Any]:
    lengths = [r["output_tokens"] for r in records]
    json_rows = [r for r in records if r.get("json_valid") is not None]
    return {
        "output_tokens": _dist(lengths),
        "hit_max_tokens_share": _share(sum(n >= max_tokens for n in lengths), len(lengths)),
        "empty_output_share": _share(sum(not r["output"].strip() for r in records), len(records)),
        "repetition_rate": _share(sum(bool(r.get("repetition")) for r in records), len(records)),
        "json_validity": _share(sum(r["json_valid"] for r in json_rows), len(json_rows)),
        "json_samples": len(json_rows),
    }


def consistency(base: list[dict], other: list[dict]) -> dict[str, Any]:
    """Three levels of agreement between two runs over the same samples (paired by id)."""
    by_id = {r["id"]: r for r in other}
    pairs = [(b, by_id[b["id"]]) for b in base if b["id"] in by_id]
    if not pairs:
        return {"n": 0}
    exact = sum(a["output"] == b["output"] for a, b in pairs)
    sim = [difflib.SequenceMatcher(None, a["output"], b["output"], autojunk=False).ratio()
           for a, b in pairs]
    agree = sum((a["score"] >= 1.0) == (b["score"] >= 1.0) for a, b in pairs)
    base_len = np.mean([a["output_tokens"] for a, _ in pairs]) or 1.0
    return {"n": len(pairs), "exact_match_rate": round(exact / len(pairs), 4),
            "char_similarity": round(float(np.mean(sim)), 4),
            "task_agreement": round(agree / len(pairs), 4),
            "output_length_ratio": round(float(np.mean([b["output_tokens"] for _, b in pairs])
                                               / base_len), 4)}


def _share(k: int, n: int) -> float | None:
    return round(k / n, 4) if n else None
