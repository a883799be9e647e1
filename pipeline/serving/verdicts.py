"""The upgrade's verdicts, each pass / fail / inconclusive from an interval:

- **accuracy** (a noise-floor comparison: one artifact, two configurations): the share of items
  whose output text changed and the share whose task result changed, each at most what the
  engine-difference tier of the profile allows (Wilson intervals), and the paired accuracy change
  non-inferior at the profile's overall margin (Tango's interval);
- **traffic**, per mix: at every rate, the candidate's P99 time to first token and P99 end-to-end
  latency at most (1 + `max_p99_increase`) × the current's (pipeline.stats.latency).

A verdict passes when all its criteria pass (intersection–union: each at α), fails when any fails
(each fail bound at α / its number of criteria, Bonferroni), and is inconclusive otherwise.
"""

from __future__ import annotations

from typing import Any

from pipeline.stats.latency import at_most_increase, summary
from pipeline.stats.noninferiority import at_most, noninferiority

JUDGED = {"ttft_s": "P99 time to first token", "e2e_s": "P99 end-to-end latency"}
MAX_FAILED = 0.01


def combine(verdicts: list[str]) -> str:
    if verdicts and all(v == "pass" for v in verdicts):
        return "pass"
    return "fail" if "fail" in verdicts else "inconclusive"


def accuracy(current: list[dict], candidate: list[dict], tier: dict[str, Any], margin: float,
             alpha: float) -> dict[str, Any]:
    """Pair the two configurations' records by item and judge what changed."""
    by_id = {r["id"]: r for r in candidate}
    pairs = [(a, by_id[a["id"]]) for a in current if a["id"] in by_id]
    n = len(pairs)
    text = sum(a["output"] != b["output"] for a, b in pairs)
    task = sum((a["score"] >= 1.0) != (b["score"] >= 1.0) for a, b in pairs)
    lost = sum(a["score"] >= 1.0 > b["score"] for a, b in pairs)
    gained = sum(b["score"] >= 1.0 > a["score"] for a, b in pairs)
    criteria: dict[str, Any] = {}
    if tier.get("min_exact_match") is not None:
        criteria["outputs_changed"] = at_most(text, n, round(1 - tier["min_exact_match"], 6), alpha)
    criteria["task_results_changed"] = at_most(task, n, round(1 - tier["min_task_agreement"], 6), alpha)
    criteria["accuracy"] = noninferiority(lost, gained, n, margin, alpha)
    return {"items": n, "outputs_changed": text, "task_results_changed": task,
            "accuracy": {"current": _mean([a["score"] for a, _ in pairs]),
                         "candidate": _mean([b["score"] for _, b in pairs])},
            "criteria": criteria, "verdict": combine([c["verdict"] for c in criteria.values()])}


def _mean(v: list[float]) -> float | None:
    return round(sum(v) / len(v), 6) if v else None


def traffic(runs: dict[str, dict[float, dict[str, list[list[dict]]]]], tolerance: float,
            alpha: float, slo: dict[str, float],
            failed: dict[str, dict[float, dict[str, list[int]]]] | None = None) -> dict[str, Any]:
    """`runs[mix][rate][side]`: one list of the successful requests' timings per round;
    `failed[mix][rate][side]`: the requests that failed, per round. Per mix: each rate's figures
    for both sides, its criteria, and the mix's verdict. A failed request has no latency to rank,
    so failures are a criterion of their own: the candidate's share of failed requests at most
    MAX_FAILED (Wilson) — a candidate that drops its slowest requests does not pass on speed."""
    out = {}
    for mix, by_rate in runs.items():
        tests = len(by_rate) * len(JUDGED)
        rates = {}
        for rate, sides in by_rate.items():
            criteria = {}
            for metric, label in JUDGED.items():
                cur = [[r[metric] for r in rnd if r[metric] is not None] for rnd in sides["current"]]
                cand = [[r[metric] for r in rnd if r[metric] is not None] for rnd in sides["candidate"]]
                name = f"p99_{metric.removesuffix('_s')}"
                if not any(cur) or not any(cand):
                    criteria[name] = {"what": label, "verdict": "inconclusive", "ratio": None, "ci_low": None,
                                      "ci_high": None, "why": "no request measured on one side"}
                    continue
                criteria[name] = {"what": label,
                                  **at_most_increase(cur, cand, 0.99, tolerance, alpha=alpha, tests=tests)}
            lost = {side: sum((failed or {}).get(mix, {}).get(rate, {}).get(side, [])) for side in sides}
            served = sum(len(rnd) for rnd in sides["candidate"]) + lost["candidate"]
            criteria["failed_requests"] = {"what": f"share of the candidate's requests that failed (≤ {MAX_FAILED})",
                                           **at_most(lost["candidate"], served, MAX_FAILED, alpha)}
            rates[str(rate)] = {"figures": {side: {**figures(rounds), "goodput": goodput(rounds, slo, alpha),
                                                   "failed": lost[side]}
                                            for side, rounds in sides.items()},
                                "criteria": criteria}
        verdict = combine([c["verdict"] for r in rates.values() for c in r["criteria"].values()])
        out[mix] = {"rates": rates, "verdict": verdict}
    return out


def replay_seconds(rounds: list[list[dict]]) -> float:
    """The replays' measured time, rounds added: each from its first request's start to its last
    request's end."""
    return sum(max(r["end"] for r in rnd) - min(r["start"] for r in rnd) for rnd in rounds if rnd)


def figures(rounds: list[list[dict]]) -> dict[str, Any]:
    """One side's replays at one rate, rounds pooled: TTFT, TPOT, ITL and end-to-end percentiles
    and throughput."""
    reqs = [r for rnd in rounds for r in rnd]
    out: dict[str, Any] = {"requests": len(reqs)}
    for metric in ("ttft_s", "tpot_s", "itl_s", "e2e_s"):
        out[metric] = summary([r[metric] for r in reqs if r[metric] is not None])
    total_span = replay_seconds(rounds) or None
    out["requests_per_s"] = round(len(reqs) / total_span, 4) if total_span else None
    out["output_tokens_per_s"] = (round(sum(r["output_tokens"] or 0 for r in reqs) / total_span, 2)
                                  if total_span else None)
    return out


def goodput(rounds: list[list[dict]], slo: dict[str, float], alpha: float) -> dict[str, Any]:
    """Requests meeting the SLO (TTFT and end-to-end), as a share with its Wilson interval and per
    second of replay."""
    from pipeline.stats.noninferiority import wilson_interval

    reqs = [r for rnd in rounds for r in rnd]
    good = sum(r["ttft_s"] is not None and r["ttft_s"] <= slo["ttft_s"] and r["e2e_s"] <= slo["e2e_s"]
               for r in reqs)
    lo, hi = wilson_interval(good, len(reqs), 1 - alpha)
    span = replay_seconds(rounds)
    return {"good": good, "requests": len(reqs), "attainment": round(good / len(reqs), 4) if reqs else None,
            "ci_low": round(lo, 4), "ci_high": round(hi, 4),
            "goodput_per_s": round(good / span, 4) if span else None}
