"""comparison.md: the comparison for people — one table, then why each gate failed, the
calibration effect, the Pareto front and the plots."""

from __future__ import annotations

from typing import Any

from pipeline.compare.gates import matched_speed


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
    m = matched_speed(v, bench)
    ratio, ci = m.get("output_tps_ratio"), m.get("speedup_ci")
    speed = (f"×{ratio} vs `{m['against']}`" if ratio else "—") + \
        ("" if sp["serving_engine"] else " (reference engine)")
    if ci:
        speed += f"; paired speed-up 95% CI [{ci[0]}, {ci[1]}]"
    if ratio and m.get("source"):
        speed += f" — {m['source']}"
    if m.get("fixed_shape_ratio"):
        speed += f" (fixed shape: ×{m['fixed_shape_ratio']})"
    cross = m.get("cross_engine") or {}
    if cross.get("output_tps_ratio"):
        speed += f" (across engines, vs the bench baseline: ×{cross['output_tps_ratio']}, not judged)"
    elif b.get("tpot_p50_ratio"):
        speed += f" (TTFT ×{b.get('ttft_p50_ratio')}, TPOT ×{b['tpot_p50_ratio']})"
    c, dv = d["consistency"], d["variant"]
    det = (f"same output {c['exact_match_rate']:.1%}, same result {c['task_agreement']:.1%}, "
           f"JSON valid {_share(dv.get('json_validity'))}, repetition {_share(dv.get('repetition_rate'))}")
    mem = (v.get("memory") or {}).get("engine_peak_rss_bytes")
    gate = v.get("gate", {})
    verdict = _verdict(gate) + (" (reference run)" if v.get("reference_role") else "")
    memory = f"{mem / 2**20:.0f} MB" if mem else "—"
    return (f"| {name} | {v['engine']['name']} {v['engine']['version'] or ''} | {size} | "
            f"{a['variant']:.3f} ({_pts(a['delta'])} pts, CI [{_pts(a['ci_low'])}, {_pts(a['ci_high'])}], "
            f"p={a['p_value']:.2g}) vs `{v.get('reference', '—')}` | {drops or 'none'} | {det} | {speed} | "
            f"{_ms(sp['ttft_p50'])} / {_ms(sp['ttft_p99'])} / {_ms(sp['tpot_p50'])} / "
            f"{_ms(sp['tpot_p99'])} | "
            f"{memory} | {verdict} | {(v.get('utility') or {}).get('score', '—')} |")


def _verdict(gate: dict) -> str:
    if not gate:
        return "—"
    verdict = gate.get("verdict") or ("pass" if gate.get("passed") else "fail")
    counts = {"fail": len(gate.get("failed") or []), "inconclusive": len(gate.get("inconclusive") or [])}
    return verdict.upper() + (f" ({counts[verdict]})" if counts.get(verdict) else "")


def _share(x: float | None) -> str:
    return "—" if x is None else f"{x:.1%}"


def _bench_node(comparison: dict[str, Any]) -> list[str]:
    """The node bench measured every speed ratio on (one node, side by side)."""
    node = comparison.get("bench_node")
    if not comparison.get("bench") or not node:
        return []
    gpus = f"GPUs: {', '.join(node['gpus'])}" if node.get("gpus") else "no GPU"
    return ["", f"Speed ratios were measured side by side on one node, `{node.get('node', '?')}` "
                f"({node.get('cpu', node.get('machine', '?'))}, {node.get('cpus', '?')} CPUs, {gpus}); "
                "speed is never compared across nodes."]


def render(comparison: dict[str, Any]) -> str:
    bench = comparison.get("bench") or {}
    base = comparison["baseline_metrics"]
    out = [f"# Comparison against `{comparison['baseline']}`", "",
           f"Baseline accuracy **{base['accuracy']:.3f}** on {base['n']} samples of the business "
           f"evaluation set (`{comparison['evalset_sha256'][:16]}…`), served by "
           f"{base['engine']['name']} {base['engine']['version']}. Deltas are paired, sample by "
           f"sample, against each variant's reference (its engine's own unquantized baseline where "
           f"one is configured), with {100 * (1 - comparison.get('alpha', 0.05)):.0f}% Tango score "
           f"intervals and exact McNemar p-values. Gates use profile "
           f"**{comparison.get('gate_profile', '—')}**: each criterion is a non-inferiority "
           f"question — PASS when the interval's lower bound is above −margin, FAIL when its upper "
           f"bound is below it, INCONCLUSIVE in between (with the items that would settle it).", "",
           "| variant | engine | size | accuracy (Δ, 95% CI, p) vs reference | significant slice drops (BH) | "
           "detectors | speed vs its own engine's reference (bench, side by side; the business's traffic "
           "where replayed) | "
           "TTFT p50 / p99, TPOT p50 / p99 (ms, "
           "evaluation run) | engine memory | gate | "
           "utility |", "|" + "---|" * 11]
    out += [_row(n, v, bench) for n, v in comparison["variants"].items()]
    out += _bench_node(comparison)
    out += (_noise(comparison) + _engines(comparison) + _divergence(comparison)
            + limits_section(comparison) + flips_section(comparison) + _verdicts(comparison))
    out += _calibration(comparison) + _pareto(comparison) + _power(comparison)
    out += ["", "## Plots", "", "![accuracy vs speed](tradeoff.png)", "",
            "![signal vs accuracy drop: this model's gate calibration](gate_limits.png)", "",
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


def limits_section(comparison: dict[str, Any]) -> list[str]:
    """This model's signal limits (the gate calibration) for the profile's margin, or why none."""
    lim = comparison.get("gate_limits") or {}
    out = ["", "## This model's signal limits (gate calibration)", ""]
    if not lim.get("calibrated"):
        return out + [f"Token KL and task agreement are reported, not gated: {lim.get('why', 'no gate calibration')}."]
    out += [f"The reference's weights perturbed by noise of growing strength ({lim['method']}); on "
            f"{lim['items']} items (reference accuracy {lim['reference_accuracy']:.3f}) each step's "
            f"accuracy drop against the signal. The limit is where the monotone fit reaches the "
            f"profile's margin ({100 * lim['margin']:.1f} pts), with a 95% item-bootstrap interval; a "
            "variant passes below the interval and fails above it.", "",
            "| step | noise × std | accuracy drop (pts) | mean KL (item mean) | top-1 agreement "
            "| task results changed |",
            "|---|---|---|---|---|---|"]
    for k, st in enumerate(lim["ladder"], 1):
        out.append(f"| {k} | {st['scale']:g} | {100 * st['drop']:+.1f} ({st['lost']} lost, {st['gained']} "
                   f"gained) | {st['kld_item_mean']:.4g} | {_share(st['top1_agreement'])} | "
                   f"{_share(st['task_disagreement'])} |")
    out += ["", "| signal | limit | 95% CI | status |", "|---|---|---|---|"]
    for sig in lim["signals"].values():
        ci = sig["limit_ci"]
        status = "gates" if sig["status"] == "gating" else f"diagnostic — {sig['why']}"
        out.append(f"| {sig['what']} | {_num(sig['limit'])} | [{_num(ci[0])}, {_num(ci[1])}] | {status} |")
    if lim.get("note"):
        out += ["", lim["note"]]
    return out


def _num(x: float | None) -> str:
    return "∞" if x is None else f"{x:.4g}"


def flips_section(comparison: dict[str, Any]) -> list[str]:
    """Items switching correct ↔ incorrect each way, and output length against the reference
    (MLPerf's 90–110% band), per variant; slices outside the band named."""
    rows = [(n, v) for n, v in comparison["variants"].items() if v.get("flips")]
    if not rows:
        return []
    out = ["", "## Flips and output length against the reference", "",
           "| variant | correct → incorrect | incorrect → correct | output tokens vs reference [95% CI] "
           "| slices outside 90–110% |", "|---|---|---|---|---|"]
    for name, v in rows:
        f, ol = v["flips"]["overall"], (v.get("output_length") or {}).get("overall") or {}
        outside = [k for k, s in (v.get("output_length") or {}).get("slices", {}).items()
                   if s.get("ratio") is not None and not s["within_band"]]
        ratio = ("—" if ol.get("ratio") is None else
                 f"×{ol['ratio']} [{ol['ci'][0]}, {ol['ci'][1]}]" + ("" if ol["within_band"] else " (outside)"))
        out.append(f"| {name} | {f['correct_to_incorrect']} of {f['n']} | {f['incorrect_to_correct']} | "
                   f"{ratio} | {', '.join(outside[:4]) or 'none'} |")
    return out


def _divergence(comparison: dict[str, Any]) -> list[str]:
    rows = [(n, v["divergence"]) for n, v in comparison["variants"].items() if v.get("divergence")]
    if not rows:
        return ["", "## Distribution-level signals", "", "Not measured: run `dvc repro` "
                "(divergence@<variant>) for token KL divergence, top-1 agreement and the reference "
                "log-likelihood."]
    out = ["", "## Distribution-level signals against the baseline (teacher-forced, exact)", "",
           "Along the baseline's own greedy outputs: mean and p99 token KL divergence (nats) and the "
           "share of positions whose most likely next token is the same; along the gold answers: "
           "the change in log-likelihood per token (95% paired bootstrap interval). Paired and "
           "continuous, these see losses far below what pass/fail accuracy can.", "",
           "| variant | KLD mean | KLD p99 | top-1 agreement | reference log-lik Δ/token [95% CI] "
           "| highest-KLD slice |",
           "|---|---|---|---|---|---|"]
    for name, d in rows:
        if not d.get("measured"):
            out.append(f"| {name} | — | — | — | — | not measured: {d.get('why')} |")
            continue
        o = d["overall"]
        worst = max(d["slices"].items(), key=lambda kv: kv[1].get("kld_mean", 0), default=(None, {}))
        ci = o.get("ref_loglik_delta_ci") or [None, None]
        out.append(f"| {name} | {o.get('kld_mean', 0):.5f} | {o.get('kld_p99', 0):.4f} | "
                   f"{o.get('top1_agreement', 1):.2%} | {o.get('ref_loglik_delta', 0):+.4f} "
                   f"[{ci[0]:+.4f}, {ci[1]:+.4f}] | "
                   + (f"{worst[0]} ({worst[1].get('kld_mean', 0):.5f})" if worst[0] else "—") + " |")
    engine = [(n, d["engine"]) for n, d in rows if (d.get("engine") or {}).get("measured")]
    if engine:
        out += ["", "From the serving engine's own prompt log-probabilities (the kernels it runs in "
                "production; KL over the baseline's top-k tokens per position, a token missing from "
                "the variant's top-k at its smallest returned log-probability):", "",
                "| variant | engine | top-k | KLD mean | KLD p99 | top-1 agreement | baseline mass "
                "outside its top-k |", "|---|---|---|---|---|---|---|"]
        for name, e in engine:
            o = e["overall"]
            out.append(f"| {name} | {e.get('engine')} | {o.get('top_k')} | {o.get('kld_mean', 0):.5f} | "
                       f"{o.get('kld_p99', 0):.4f} | {o.get('top1_agreement', 1):.2%} | "
                       f"{o.get('baseline_tail_mass', 0):.4f} |")
    return out


def _verdicts(comparison: dict[str, Any]) -> list[str]:
    out = ["", "## Verdicts", ""]
    for name, v in comparison["variants"].items():
        gate = v.get("gate")
        if not gate:
            continue
        role = f" — reference run: {v['reference_role']}" if v.get("reference_role") else ""
        out.append(f"**{name}**: {_verdict(gate)}{role}")
        out.append("")
        if v.get("sequential"):
            out += [sequential_line(v["sequential"]), ""]
        for c in gate.get("criteria") or []:
            out.append(f"- {c['verdict'].upper()} `{c['criterion']}` — {c['message']}")
        for x in gate.get("not_applicable") or []:
            out.append(f"- not judged `{x['criterion']}` — {x['why']}")
        out.append("")
    return out


def sequential_line(s: dict[str, Any]) -> str:
    """How a sequential evaluation ended: the items served, the look, the saving and the level."""
    if s.get("role") == "reference":
        own = s.get("opening_items", s["items"])
        read = (f"on those items, a sample fixed in advance, at α = {s['repeated_alpha']:.4g}" if own == s["items"]
                else f"on the {s['items']} of {s['total']} items it was served in all, as far as its longest-running "
                     f"variant went — a stopping time, so every interval above is a repeated confidence interval at "
                     f"level α = {s['repeated_alpha']:.4g} ({len(s['looks'])} looks)")
        return (f"Sequential evaluation, an engine's reference: it served its opening look, {own} of {s['total']} "
                f"items, and each of its variants the rest of its items that variant used (each variant is paired "
                f"with exactly those). It is read against `{s['reference']}` {read}.")
    how = (f"stopped at look {len(s['looks'])} of {s['planned_looks']}" if s["stopped"]
           else f"ran all {s['planned_looks']} looks")
    if s.get("stopped_for") == "futility":
        how += (f" for futility — the chance that the whole set settles its gate was {s['conditional_power']:.2f}, "
                f"under the bound {s['futility']:g}: inconclusive, as the whole set would very likely have left it")
    return (f"Sequential evaluation against `{s['reference']}`: {how}, {s['items']} of {s['total']} items "
            f"({100 * s['saving']:.0f}% not served); every interval above is a repeated confidence interval "
            f"at level α = {s['repeated_alpha']:.4g} ({s['design']}).")


def _noise(comparison: dict[str, Any]) -> list[str]:
    floors = comparison.get("noise_floor") or {}
    out = ["", "## Noise floor (the same weights served again)", ""]
    if not floors:
        return out + ["Not measured: compare.noise_floor names no re-run. Without it, a variant's "
                      "changed outputs cannot be told from the engine's own run-to-run changes."]
    for engine, f in floors.items():
        if not f.get("measured"):
            out.append(f"- {engine}: not measured — {f.get('why')}")
            continue
        out.append(f"- {engine} (`{f['variant']}` against `{f['reference']}`): outputs changed on "
                   f"{f['outputs_changed']} of {f['n']} items ({100 * f['outputs_changed_share']:.1f}%, "
                   f"95% CI [{100 * f['outputs_changed_ci'][0]:.1f}, {100 * f['outputs_changed_ci'][1]:.1f}]%), "
                   f"task results on {f['results_changed']} ({100 * f['results_changed_share']:.1f}%).")
    within = [n for n, v in comparison["variants"].items() if v.get("within_noise_floor")]
    if within:
        out.append("")
        out.append("Within the noise floor (no more changed outputs than serving alone makes): "
                   + ", ".join(f"`{n}`" for n in within) + ".")
    return out


def _engines(comparison: dict[str, Any]) -> list[str]:
    eb = comparison.get("engine_baselines") or {}
    if not eb:
        return []
    out = ["", "## Engine effect and quantization effect", "",
           "Each variant is gated on the quantization effect (against the unquantized model on its "
           "own engine); the engine effect is that baseline against the main one.", "",
           "| variant | reference | quantization effect Δ pts [95% CI] | total vs baseline Δ pts [95% CI] |",
           "|---|---|---|---|"]
    for name, v in comparison["variants"].items():
        if not v.get("served") or v.get("reference") == comparison["baseline"] and name not in eb.values():
            continue
        a = v["accuracy"]
        t = (v.get("against_baseline") or {}).get("accuracy") or a
        out.append(f"| {name} | `{v['reference']}` | {_pts(a['delta'])} [{_pts(a['ci_low'])}, "
                   f"{_pts(a['ci_high'])}] | {_pts(t['delta'])} [{_pts(t['ci_low'])}, {_pts(t['ci_high'])}] |")
    return out


def _pareto(comparison: dict[str, Any]) -> list[str]:
    front = comparison.get("pareto_optimal") or []
    return ["", "## Pareto-optimal (accuracy ↑, speed ↑, size ↓; serving engines only)", "",
            ", ".join(f"`{n}`" for n in front) if front else "No bench figures: run `dvc repro bench`."]


def _power(comparison: dict[str, Any]) -> list[str]:
    out = []
    small = sorted({s for v in comparison["variants"].values() if v.get("served")
                    for s in v.get("underpowered_slices", [])})
    if small:
        out += ["", "## Slices too small to see the configured effect", "",
                f"An exact McNemar test would likely miss a drop of {100 * comparison['min_effect']:.0f} "
                "points on: " + ", ".join(small) + ". Their deltas are reported, but a non-significant "
                "one there is not evidence of safety."]
    if comparison.get("plan"):
        from pipeline.compare.plan import render

        out += ["", "## How many items a verdict needs (`qpipe plan`)", "", *render(comparison["plan"])]
    return out
