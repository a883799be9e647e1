"""comparison.md: the comparison for people — one table, then why each gate failed, the
calibration effect, the Pareto front and the plots."""

from __future__ import annotations

from typing import Any


def _pts(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:+.1f}"


def _ms(x: float | None) -> str:
    return "—" if x is None else f"{1000 * x:.1f}"


def _row(name: str, v: dict[str, Any], bench: dict) -> str:
    if not v.get("served"):
        return f"| {name} | — | — | — | — | — | — | — | — | not served here: {v.get('reason')} | — |"
    a, d, sp = v["accuracy"], v["detectors"], v["speed"]
    size = f"{v['size_bytes'] / 2**20:.2f} MB (×{v['compression']})" if v.get("size_bytes") else "—"
    drops = ", ".join(f"{k} {_pts(v['slices'][k]['delta'])}" for k in v["significant_drops"][:3])
    b = bench.get(name, {}) if sp["serving_engine"] else {}
    ratio = b.get("output_tps_ratio")
    speed = (f"×{ratio}" if ratio else "—") + ("" if sp["serving_engine"] else " (reference engine)")
    if b.get("tpot_p50_ratio"):
        speed += f" (TTFT ×{b.get('ttft_p50_ratio')}, TPOT ×{b['tpot_p50_ratio']})"
    c, dv = d["consistency"], d["variant"]
    det = (f"same output {c['exact_match_rate']:.1%}, same result {c['task_agreement']:.1%}, "
           f"JSON valid {_share(dv.get('json_validity'))}, repetition {_share(dv.get('repetition_rate'))}")
    mem = (v.get("memory") or {}).get("engine_peak_rss_bytes")
    gate = v.get("gate", {})
    verdict = "PASS" if gate.get("passed") else f"FAIL ({len(gate.get('failed', []))})" if gate else "—"
    memory = f"{mem / 2**20:.0f} MB" if mem else "—"
    return (f"| {name} | {v['engine']['name']} {v['engine']['version'] or ''} | {size} | "
            f"{a['variant']:.3f} ({_pts(a['delta'])} pts, CI [{_pts(a['ci_low'])}, {_pts(a['ci_high'])}], "
            f"p={a['p_value']:.2g}) | {drops or 'none'} | {det} | {speed} | "
            f"{_ms(sp['ttft_p50'])} / {_ms(sp['ttft_p99'])} / {_ms(sp['tpot_p50'])} / "
            f"{_ms(sp['tpot_p99'])} | "
            f"{memory} | {verdict} | {(v.get('utility') or {}).get('score', '—')} |")


def _share(x: float | None) -> str:
    return "—" if x is None else f"{x:.1%}"


def render(comparison: dict[str, Any]) -> str:
    bench = comparison.get("bench") or {}
    base = comparison["baseline_metrics"]
    out = [f"# Comparison against `{comparison['baseline']}`", "",
           f"Baseline accuracy **{base['accuracy']:.3f}** on {base['n']} samples of the business "
           f"evaluation set (`{comparison['evalset_sha256'][:16]}…`), served by "
           f"{base['engine']['name']} {base['engine']['version']}. Deltas are paired, sample by "
           f"sample, with 95% bootstrap intervals and exact McNemar p-values; gates use profile "
           f"**{comparison.get('gate_profile', '—')}** on the interval's lower bound.", "",
           "| variant | engine | size | accuracy (Δ, 95% CI, p) | significant slice drops | "
           "detectors | speed vs baseline (bench, side by side) | TTFT p50 / p99, TPOT p50 / p99 (ms, "
           "evaluation run) | engine memory | gate | "
           "utility |", "|" + "---|" * 11]
    out += [_row(n, v, bench) for n, v in comparison["variants"].items()]
    out += ["", "## Gate failures", ""]
    fails = [(n, f) for n, v in comparison["variants"].items()
             for f in (v.get("gate") or {}).get("failed", [])]
    out += [f"- **{n}** — {f['message']}" for n, f in fails] or ["None."]
    unjudged = [(n, x) for n, v in comparison["variants"].items()
                for x in (v.get("gate") or {}).get("not_applicable", [])]
    out += [f"- {n}: {x['criterion']} not judged — {x['why']}" for n, x in unjudged]
    out += _calibration(comparison) + _pareto(comparison) + _power(comparison)
    out += ["", "## Plots", "", "![accuracy vs speed](tradeoff.png)", "",
            "![per-slice accuracy change](slices.png)", ""]
    return "\n".join(out)


def _calibration(comparison: dict[str, Any]) -> list[str]:
    out = ["", "## Calibration data: business vs general", ""]
    effects = comparison.get("calibration_effect") or []
    for e in effects:
        d = e["delta_other_minus_reference"]
        sig = ", ".join(f"{k} {_pts(e['slices'][k]['delta'])}" for k in e["significant_slices"]) or "none"
        out.append(f"`{e['other']}` ({e['calibration'][e['other']]}) − `{e['reference']}` "
                   f"({e['calibration'][e['reference']]}), same recipe, paired on the business "
                   f"evaluation set: **{_pts(d['delta'])} pts**, 95% CI "
                   f"[{_pts(d['ci_low'])}, {_pts(d['ci_high'])}], McNemar p={d['p_value']:.2g} "
                   f"({d['lost']} samples lost, {d['gained']} gained); significant slices: {sig}.")
        out += ["", "| slice | n | Δ pts | 95% CI | McNemar p | |", "|---|---|---|---|---|---|"]
        for name, s in e["slices"].items():
            note = "significant" if s["significant"] else (
                "too small to see the configured effect" if s.get("underpowered") else "")
            out.append(f"| {name} | {s['n']} | {_pts(s['delta'])} | [{_pts(s['ci_low'])}, "
                       f"{_pts(s['ci_high'])}] | {s['p_value']:.2g} | {note} |")
        out.append("")
    for skipped in comparison.get("calibration_effect_skipped") or []:
        out.append(f"- `{skipped['pair']}`: not compared — {skipped['reason']}")
    if not effects and not comparison.get("calibration_effect_skipped"):
        out.append("No pair of variants differs only in calibration data.")
    return out


def _pareto(comparison: dict[str, Any]) -> list[str]:
    front = comparison.get("pareto_optimal") or []
    return ["", "## Pareto-optimal (accuracy ↑, speed ↑, size ↓; serving engines only)", "",
            ", ".join(f"`{n}`" for n in front) if front else "No bench figures: run `dvc repro bench`."]


def _power(comparison: dict[str, Any]) -> list[str]:
    small = sorted({s for v in comparison["variants"].values() if v.get("served")
                    for s in v.get("underpowered_slices", [])})
    if not small:
        return []
    return ["", "## Slices too small to see the configured effect", "",
            f"A drop of {100 * comparison['min_effect']:.0f} points would likely go unseen on: "
            + ", ".join(small) + ". Their deltas are reported, but a non-significant one there is "
            "not evidence of safety."]
