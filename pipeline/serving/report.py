"""An upgrade's report for people: `upgrade.md` (verdicts with their intervals, the traffic, the
figures per rate), `latency_vs_rate.png` (P50 and P99 against the arrival rate, per configuration
and mix), and its MLflow runs (pipeline.tracking.upgrades)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from pipeline.layout import Layout
from pipeline.stage_params import StageView

log = logging.getLogger(__name__)
# how a replay's requests arrived (serving.traffic.arrivals); reports before the choice were Poisson
ARRIVALS = {"poisson": "Poisson", "constant": "constant-rate"}


def _ci(c: dict[str, Any]) -> str:
    hi = "∞" if c.get("ci_high") is None else f"{c['ci_high']}"
    return f"[{c.get('ci_low')}, {hi}]"


def write_markdown(r: dict[str, Any], path: Path) -> None:
    cur, cand = r["configurations"]["current"], r["configurations"]["candidate"]
    a, arrivals = r["accuracy"], ARRIVALS[r.get("arrivals", "poisson")]
    lines = [f"# Upgrade {r['upgrade']}: {cur['name']} → {cand['name']}", "",
             f"**Verdict: {r['verdict'].upper()}** — one artifact (`{r['artifact']}`, content "
             f"{r['artifact_sha256'][:16]}…) served by both configurations; accuracy tier "
             f"`{r['profile']}`, α = {r['alpha']}, the candidate's P99 may be at most "
             f"{r['max_p99_increase']:.0%} above the current's. Load generator: {r['loadgen']}.", "",
             "| configuration | engine | release | engine version | settings changed |", "|---|---|---|---|---|"]
    changed = sorted(k for k in set(cur["settings"]) | set(cand["settings"])
                     if cur["settings"].get(k) != cand["settings"].get(k))
    for c in (cur, cand):
        diff = ", ".join(f"{k}={c['settings'].get(k)}" for k in changed) or "—"
        lines.append(f"| {c['name']} | {c['engine']} | {c['release'] or 'as set up'} | "
                     f"{c['engine_info'].get('version')} | {diff} |")
    lines += ["", f"## Accuracy ({a['items']} items, paired): {a['verdict']}", "",
              f"Outputs changed: {a['outputs_changed']}; task results changed: {a['task_results_changed']}; "
              f"accuracy {a['accuracy']['current']} → {a['accuracy']['candidate']}.", "",
              "| criterion | observed | interval | limit | verdict |", "|---|---|---|---|---|"]
    for name, c in a["criteria"].items():
        if name == "accuracy":
            lines.append(f"| accuracy change | {c['delta']:+.4f} | {_ci(c)} | ≥ −{c['margin']} | {c['verdict']} |")
        else:
            need = f"; needs ~{c['items_needed']} items" if c.get("items_needed") else ""
            lines.append(f"| share of {name.replace('_', ' ')} | {c['rate']} | {_ci(c)} | ≤ {c['limit']} | "
                         f"{c['verdict']}{need} |")
    for mix, m in r["traffic"].items():
        t = m["traffic"]
        lines += ["", f"## Traffic `{mix}`: {m['verdict']}", "",
                  f"{t['requests']} requests per replay from the evaluation set's conversations "
                  f"({', '.join(f'{k} {v}' for k, v in t['scenarios'].items())}); long (prompt > "
                  f"{t['long_threshold_tokens']:.0f} tokens): {t['long_share']:.0%}; prompt tokens P50/P99 "
                  f"{t['prompt_tokens']['p50']:.0f}/{t['prompt_tokens']['p99']:.0f}, output tokens P50/P99 "
                  f"{t['output_tokens']['p50']:.0f}/{t['output_tokens']['p99']:.0f}. Saturation (GuideLLM "
                  f"throughput profile): {m['saturation_rps']} requests/s; {arrivals} arrivals at each rate.", "",
                  "| rate (req/s) | configuration | TTFT P50 / P99 (s) | TPOT P50 (s) | E2E P50 / P99 (s) | "
                  "output tok/s | SLO met | goodput (req/s) | failed |", "|---|---|---|---|---|---|---|---|---|"]
        for rate, res in m["rates"].items():
            for side, f in res["figures"].items():
                g = f["goodput"]
                lines.append(f"| {rate} | {r['configurations'][side]['name']} | {f['ttft_s']['p50']} / "
                             f"{f['ttft_s']['p99']} | {f['tpot_s']['p50']} | {f['e2e_s']['p50']} / "
                             f"{f['e2e_s']['p99']} | {f['output_tokens_per_s']} | {g['attainment']} {_ci(g)} | "
                             f"{g['goodput_per_s']} | {f['failed']} |")
        lines += ["", "| rate (req/s) | criterion | candidate / current | interval | verdict |",
                  "|---|---|---|---|---|"]
        for rate, res in m["rates"].items():
            for c in res["criteria"].values():
                note = f" ({c['why']})" if c.get("why") else ""
                seen = f"×{c['ratio']}" if "ratio" in c else f"{c['count']} of {c['n']}"
                lines.append(f"| {rate} | {c['what']} | {seen} | {_ci(c)} | {c['verdict']}{note} |")
    if r.get("replays_redone"):
        lines += ["", "Replays measured again because GuideLLM did not send them on their schedule: "
                  + "; ".join(f"{x['replay']} ({x['why']})" for x in r["replays_redone"]) + "."]
    s = r["synthetic"]
    lines += ["", "## The synthetic fixed-shape figure", "",
              f"{s['shape']['prompt_tokens']}-token prompts → {s['shape']['output_tokens']} tokens, one request "
              f"at a time ({s['shape']['requests']} requests): output tok/s ×{s['output_tokens_per_s_ratio']}, "
              f"P50 latency ×{s['e2e_p50_ratio']} (candidate / current). This is what a staging benchmark "
              "with synthetic prompts shows; the verdicts above come from the business's own traffic.", ""]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def plot(r: dict[str, Any], path: Path) -> None:
    """P50 and P99 end-to-end latency against the arrival rate, one panel per mix."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    mixes = list(r["traffic"])
    fig, axes = plt.subplots(1, len(mixes), figsize=(5.5 * len(mixes), 4), squeeze=False)
    for ax, mix in zip(axes[0], mixes):
        rates = r["traffic"][mix]["rates"]
        xs = [float(x) for x in rates]
        for side, style in (("current", "-"), ("candidate", "--")):
            name = r["configurations"][side]["name"]
            for q, marker in (("p50", "o"), ("p99", "^")):
                ax.plot(xs, [rates[x]["figures"][side]["e2e_s"][q] for x in rates], style, marker=marker,
                        label=f"{name} {q.upper()}")
        ax.set_title(f"{mix}: {r['traffic'][mix]['verdict']}")
        ax.set_xlabel(f"arrival rate (requests/s, {ARRIVALS[r.get('arrivals', 'poisson')]})")
        ax.set_ylabel("end-to-end latency (s)")
        ax.set_yscale("log")
        ax.legend(fontsize=7)
    fig.suptitle(f"upgrade {r['upgrade']} on {r['artifact']}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def track(params: StageView, layout: Layout, name: str, report: dict[str, Any]) -> dict[str, Any]:
    """Log the upgrade to MLflow; a store that does not answer leaves the results on disk and says
    how to log them later."""
    from pipeline.tracking.upgrade_runs import log_upgrade

    return log_upgrade(params, layout, name, report)
