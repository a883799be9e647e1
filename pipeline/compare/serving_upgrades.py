"""The serving upgrades in comparison.md: each `upgrade@<name>`'s verdict beside the variants' —
one artifact under two serving configurations, its accuracy and per-mix P99 verdicts, read from
`upgrades/<name>/upgrade.json` through its contract (the whole report and its plot stay there)."""

from __future__ import annotations

import os
from typing import Any

from pipeline.contracts.files import UPGRADE, UPGRADE_MD
from pipeline.contracts.stage_results import UpgradeReport
from pipeline.layout import Layout
from pipeline.stage_params import StageView


def summaries(params: StageView, layout: Layout) -> dict[str, dict[str, Any]]:
    """Each upgrade params name: its report (None: not run yet) and its markdown report's path
    relative to comparison.md's folder."""
    out: dict[str, dict[str, Any]] = {}
    for name in params.serving.upgrades:
        path = layout.upgrade(name) / UPGRADE
        out[name] = {"report": UpgradeReport.load(path).dump() if path.is_file() else None,
                     "link": os.path.relpath(layout.upgrade(name) / UPGRADE_MD, layout.reports)}
    return out


def _worst(mix: dict[str, Any]) -> str:
    """The P99 criterion with the highest ratio of a mix, as `metric ×ratio [low, high]`."""
    ratios = [(c["ratio"], k, c) for rate in mix["rates"].values() for k, c in rate["criteria"].items()
              if c.get("ratio") is not None]
    if not ratios:
        return "no P99 measured"
    ratio, key, c = max(ratios, key=lambda x: x[0])
    return f"{key} ×{ratio} [{c.get('ci_low')}, {c.get('ci_high')}]"


def section(upgrades: dict[str, dict[str, Any]]) -> list[str]:
    """The markdown section (empty without upgrades)."""
    if not upgrades:
        return []
    out = ["", "## Serving upgrades (`qpipe upgrade`)", "",
           "One artifact under two serving configurations (an engine release and its settings): its outputs paired "
           "item by item, the business's traffic replayed at Poisson rates, P99 verdicts from distribution-free "
           "intervals (docs/upgrades.md).", "",
           "| upgrade | artifact | current → candidate | accuracy | traffic (worst P99 ratio per mix) | "
           "fixed shape (output tok/s) | verdict |", "|" + "---|" * 7]
    for name, entry in upgrades.items():
        r = entry["report"]
        if r is None:
            out.append(f"| {name} | — | — | — | — | — | not run: `qpipe upgrade {name}` |")
            continue
        c, a = r["configurations"], r["accuracy"]
        sides = " → ".join(f"`{c[s]['name']}` ({c[s]['engine']} {c[s].get('release') or 'pinned'})"
                           for s in ("current", "candidate"))
        mixes = "; ".join(f"{mix}: {m['verdict']}, {_worst(m)}" for mix, m in r["traffic"].items())
        link = f"[{r['verdict'].upper()}]({entry['link']})"
        out.append(f"| {name} | `{r['artifact']}` | {sides} | {a['verdict']} ({a['outputs_changed']} of "
                   f"{a['items']} outputs changed) | {mixes} | ×{r['synthetic']['output_tokens_per_s_ratio']} | "
                   f"{link} |")
    return out

