"""A plain-text summary of comparison.json for the terminal and comparison.md."""

from __future__ import annotations

from typing import Any


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:+.1f}"


def summary_lines(r: dict[str, Any]) -> list[str]:
    base = r["baseline_metrics"]
    lines = [f"baseline {r['baseline']}: accuracy {base['accuracy']:.3f} (n={base['n']}) on "
             f"{base['engine']['name']} {base['engine']['version']}"]
    for name, v in r["variants"].items():
        if not v["served"]:
            lines.append(f"{name}: {v['reason']}")
            continue
        a = v["accuracy"]
        verdict = "SIGNIFICANT DROP" if a["significant"] and a["delta"] < 0 else (
            "significant gain" if a["significant"] else "no significant difference")
        worst = ", ".join(f"{k} {_pct(v['slices'][k]['delta'])}" for k in v["significant_drops"][:3])
        c = v["detectors"]["consistency"]
        speed = (r.get("bench") or {}).get(name, {}).get("output_tps_ratio")
        lines.append(
            f"{name}: {a['variant']:.3f} ({_pct(a['delta'])} pts, 95% CI [{_pct(a['ci_low'])}, "
            f"{_pct(a['ci_high'])}], McNemar p={a['p_value']:.3g}) — {verdict}"
            + (f"; worst slices: {worst}" if worst else "")
            + f"; same output {c['exact_match_rate']:.1%}, same result {c['task_agreement']:.1%}"
            + (f"; speed ×{speed}" if speed else "")
            + ("" if v["speed"]["serving_engine"] else " [reference engine]")
            + (f" — gate {(v['gate'].get('verdict') or ('pass' if v['gate']['passed'] else 'fail')).upper()}"
               + "".join(f"; {c['criterion']} needs ~{c['items_needed']} items"
                         for c in v["gate"].get("inconclusive") or [] if c.get("items_needed"))
               if v.get("gate") else "")
            + (f" [reference run: {v['reference_role']}]" if v.get("reference_role") else ""))
    return lines
