"""The distribution-level gate criteria — mean token KL, top-1 agreement and the share of changed
task results against the reference — each judged against a custom profile's constant where it
states one, else against this model's derived limit (pipeline.compare.limits) where it gates,
else reported as a diagnostic with why (the entry's `not_applicable`)."""

from __future__ import annotations

from typing import Any

from pipeline.compare import limits as limits_mod
from pipeline.config import GateThresholds
from pipeline.stats import noninferiority as ni
from pipeline.stats.gate_limits import judge


def _pts(x: float) -> str:
    return f"{100 * x:+.1f}"


def criterion(name: str, kind: str, r: dict[str, Any], message: str) -> dict[str, Any]:
    """One judged criterion: its verdict, interval, margin and, when inconclusive, the items a
    verdict would need."""
    out = {"criterion": name, "kind": kind, "verdict": r["verdict"], "value": r.get("delta"),
           "ci_low": r.get("ci_low"), "ci_high": r.get("ci_high"),
           "threshold": r.get("margin", r.get("limit")), "n": r.get("n"), "message": message}
    if r["verdict"] == "inconclusive" and "items_needed" in r:
        need = r.get("items_needed")
        out["items_needed"] = need
        out["message"] += (f" — inconclusive: about {need} items would settle it" if need else
                           " — inconclusive: the change is at the margin; no feasible number of "
                           "items settles it")
    return out


def kld(v: dict[str, Any], t: GateThresholds, limits: dict[str, Any] | None,
         not_applicable: list) -> list[dict[str, Any]]:
    """Mean token KL divergence from the reference: judged by the upper bound of its bootstrap
    interval (over items) against a custom profile's constant, or against this model's derived
    limit interval (pass below its lower end, fail above its upper end); else a diagnostic."""
    d = v.get("divergence") or {}
    if not d.get("measured"):
        not_applicable.append({"criterion": "kld", "why": d.get("why") or "divergence@<variant> "
                               "was not run for this variant"})
        return []
    o = d["overall"]
    lo, hi = o["kld_item_mean_ci"]
    text = (f"mean token KL divergence from the reference {o['kld_item_mean']:.4g} nats (95% "
            f"bootstrap CI [{lo:.4g}, {hi:.4g}] over {o['items']} items; top-1 agreement "
            f"{o['top1_agreement']:.2%})")
    base = {"criterion": "kld", "kind": "critical", "value": o["kld_item_mean"], "ci_low": lo,
            "ci_high": hi, "n": o["items"]}
    if t.max_kld_mean is not None:
        limit = t.max_kld_mean
        verdict = "pass" if hi <= limit else "fail" if lo > limit else "inconclusive"
        return [{**base, "verdict": verdict, "threshold": limit, "limit_source": "profile",
                 "message": f"{text}, limit {limit:g} (the profile's constant)"}]
    lim = limits_mod.gating(limits, "kld")
    if lim is None:
        not_applicable.append({"criterion": "kld", "why": limits_mod.why_not(limits, "kld"),
                               "value": o["kld_item_mean"], "ci": [lo, hi]})
        return []
    return [{**base, "verdict": judge(o["kld_item_mean_ci"], lim), "threshold": lim["limit"],
             "threshold_ci": lim["limit_ci"], "limit_source": "gate_calibration",
             "message": f"{text}; this model's limit for a {_pts(-lim['margin'])[1:]}-point loss "
                        f"{lim['limit']:.4g} (95% CI {_ci(lim['limit_ci'])}, from the gate calibration)"}]


def top1(v: dict[str, Any], limits: dict[str, Any] | None, not_applicable: list) -> list[dict[str, Any]]:
    """The share of output positions whose most likely next token differs from the reference's
    (item mean, bootstrap interval), against this model's derived limit; else a diagnostic."""
    o = ((v.get("divergence") or {}).get("overall") or {})
    if not (v.get("divergence") or {}).get("measured") or "top1_disagreement_item_mean" not in o:
        return []  # the KL criterion already says why nothing was measured
    lo, hi = o["top1_disagreement_item_mean_ci"]
    lim = limits_mod.gating(limits, "top1_disagreement")
    if lim is None:
        not_applicable.append({"criterion": "top1_agreement", "value": o["top1_disagreement_item_mean"],
                               "ci": [lo, hi], "why": limits_mod.why_not(limits, "top1_disagreement")})
        return []
    return [{"criterion": "top1_agreement", "kind": "critical", "verdict": judge((lo, hi), lim),
             "value": o["top1_disagreement_item_mean"], "ci_low": lo, "ci_high": hi, "n": o["items"],
             "threshold": lim["limit"], "threshold_ci": lim["limit_ci"], "limit_source": "gate_calibration",
             "message": f"top-1 token differs at {100 * o['top1_disagreement_item_mean']:.2f}% of output "
                        f"positions (item mean, 95% CI [{100 * lo:.2f}, {100 * hi:.2f}]%); this model's "
                        f"limit for a {_pts(-lim['margin'])[1:]}-point loss {100 * lim['limit']:.2f}% "
                        f"(95% CI {_ci(lim['limit_ci'], 100)}%)"}]


def agreement(v: dict[str, Any], t: GateThresholds, limits: dict[str, Any] | None, alpha: float,
               not_applicable: list) -> list[dict[str, Any]]:
    """The share of items whose task result changed against the reference (both ways, Wilson
    interval): against a custom profile's floor, or this model's derived limit; else a diagnostic."""
    d = v.get("disagreement") or {}
    if not d.get("n"):
        return [{"criterion": "task_agreement", "kind": "critical", "verdict": "fail", "value": None,
                 "threshold": t.min_task_agreement, "message": "no sample pairs with the reference: "
                 "task agreement could not be measured — fix: re-run both evaluations on the same "
                 "evaluation set"}]
    k, n = d["results_changed"], d["n"]
    if t.min_task_agreement is not None:
        allowed = 1 - t.min_task_agreement
        r = ni.at_most(k, n, allowed, alpha)
        return [criterion("task_agreement", "critical", {**r, "delta": r["rate"]},
                           f"task result changed on {k} of {n} items ({100 * r['rate']:.1f}%, "
                           f"{100 * (1 - alpha):.0f}% CI [{100 * r['ci_low']:.1f}, "
                           f"{100 * r['ci_high']:.1f}]%), allowed {100 * allowed:.1f}% (the profile's constant)")]
    lo, hi = ni.wilson_interval(k, n, 1 - alpha)
    lim = limits_mod.gating(limits, "task_disagreement")
    if lim is None:
        not_applicable.append({"criterion": "task_agreement",
                               "why": limits_mod.why_not(limits, "task_disagreement"),
                               "value": round(k / n, 4), "ci": [round(lo, 4), round(hi, 4)]})
        return []
    return [{"criterion": "task_agreement", "kind": "critical", "verdict": judge((lo, hi), lim),
             "value": round(k / n, 4), "ci_low": round(lo, 4), "ci_high": round(hi, 4), "n": n,
             "threshold": lim["limit"], "threshold_ci": lim["limit_ci"],
             "limit_source": "gate_calibration",
             "message": f"task result changed on {k} of {n} items ({100 * k / n:.1f}%, "
                        f"{100 * (1 - alpha):.0f}% CI [{100 * lo:.1f}, {100 * hi:.1f}]%); this "
                        f"model's limit for a {_pts(-lim['margin'])[1:]}-point loss "
                        f"{100 * lim['limit']:.1f}% (95% CI {_ci(lim['limit_ci'], 100)}%)"}]


def _ci(ci: list, scale: float = 1.0) -> str:
    lo, hi = ci
    return f"[{lo * scale:.4g}, {'∞' if hi is None else f'{hi * scale:.4g}'}]"
