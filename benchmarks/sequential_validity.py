"""Sequential against fixed-sample verdicts on real records: how often each design passes, fails
or stays inconclusive, and how many items the sequential one uses.

Variants are planted on the baseline's own per-sample records as benchmarks/gate_validity.py
plants them (a null at a discordance, a loss of R points on top of it). Each replicate serves the
items in a seeded random order and looks every `--look` items: the sequential verdict
(pipeline.stats.sequential: alpha spending over Tango's statistic) stops at the first look whose
boundary it crosses; the fixed-sample verdict reads the whole set. The criterion is overall
accuracy against `--margin` (the default profile's 3 points).

With `--gate`, the whole gate of every profile instead (pipeline.compare.stopping): after each
look the project's own compare and gate code read every criterion — overall, critical slices,
any-slice drops after Benjamini–Hochberg, JSON validity, output length — at the repeated-confidence
level of the looks taken, and each profile's evaluation stops at its first settled look. Printed
per scenario and profile: pass / fail / inconclusive against the fixed-sample gate on the whole
set, and the share of the items the sequential design served.

    python benchmarks/sequential_validity.py --records results/baseline/samples.jsonl
    python benchmarks/sequential_validity.py --records <real project>/results/baseline/samples.jsonl --reps 400
    python benchmarks/sequential_validity.py --gate --reps 200 --json gate.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from gate_validity import simulate as plant  # noqa: E402
import gate_sequential  # noqa: E402

from pipeline.stats.noninferiority import noninferiority  # noqa: E402
from pipeline.stats.sequential import SPENDING_KINDS, Spending, sequential_verdict  # noqa: E402


def replicate(records: list[dict], rng, *, discordance: float, loss: float, look: int, margin: float,
              alpha: float, spending: Spending = Spending()) -> tuple[str, str, int]:
    base = np.array([r["score"] >= 1.0 for r in records])
    new = plant(records, rng, discordance=discordance, extra_loss=loss) >= 1.0
    order = rng.permutation(len(records))
    lost = np.cumsum(base[order] & ~new[order])
    gained = np.cumsum(~base[order] & new[order])
    total = len(records)
    ns = list(range(look, total, look)) + [total]
    seq = sequential_verdict([(n, int(lost[n - 1]), int(gained[n - 1])) for n in ns], total, margin, alpha, spending)
    fixed = noninferiority(int(lost[-1]), int(gained[-1]), total, margin, alpha, power=None)["verdict"]
    return seq["verdict"], fixed, seq["n"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=Path, default=ROOT / "results" / "baseline" / "samples.jsonl")
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--look", type=int, default=250, help="items between looks")
    ap.add_argument("--margin", type=float, default=0.03)
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--gate", action="store_true", help="the whole gate of every profile (see above)")
    ap.add_argument("--params", type=Path, default=ROOT / "params.yaml", help="with --gate: the project's params")
    ap.add_argument("--workers", type=int, default=2, help="with --gate: processes")
    ap.add_argument("--only", nargs="+", help="with --gate: the scenarios whose names hold one of these")
    ap.add_argument("--spending", default="obrien_fleming", choices=SPENDING_KINDS, help="the alpha-spending function")
    ap.add_argument("--gamma", type=float, help="with --spending hwang_shih_decani: its γ")
    ap.add_argument("--futility", type=float, default=0.0,
                    help="with --gate: stop, inconclusive, below this predictive power (0: never)")
    a = ap.parse_args()
    if a.gate:
        gate_sequential.main(a)
        return
    records = [json.loads(x) for x in a.records.read_text(encoding="utf-8").splitlines() if x.strip()]
    acc = float(np.mean([r["score"] >= 1.0 for r in records]))
    print(f"{a.records.name}: {len(records)} items, accuracy {acc:.3f}; looks every {a.look}, margin "
          f"{100 * a.margin:g} pts, {a.reps} replicates per scenario\n")
    print(f"{'scenario':28s} {'sequential pass/fail/inc':26s} {'fixed pass/fail/inc':22s} {'items used':>11s}")
    rows = []
    for name, d, loss in (("null d=0.5%", 0.005, 0.0), ("null d=2%", 0.02, 0.0), ("null d=5%", 0.05, 0.0),
                          ("at the margin, d=2%", 0.02, a.margin), ("-5 pts, d=2%", 0.02, 0.05)):
        rng = np.random.default_rng(len(rows) + 1)  # seeded per scenario
        t0 = time.time()
        got = [replicate(records, rng, discordance=d, loss=loss, look=a.look, margin=a.margin, alpha=a.alpha,
                         spending=Spending(a.spending, a.gamma))
               for _ in range(a.reps)]
        share = {design: {v: sum(g[i] == v for g in got) / a.reps for v in ("pass", "fail", "inconclusive")}
                 for i, design in enumerate(("sequential", "fixed"))}
        items = float(np.mean([g[2] for g in got]))
        rows.append({"scenario": name, "discordance": d, "loss": loss, **share, "mean_items": items,
                     "items": len(records), "seconds": round(time.time() - t0, 1)})
        seq, fixed = ("/".join(f"{100 * share[design][v]:.1f}" for v in ("pass", "fail", "inconclusive"))
                      for design in ("sequential", "fixed"))
        print(f"{name:28s} {seq:26s} {fixed:22s} {items:8.0f} ({100 * items / len(records):.0f}%)")
    if a.json:
        a.json.write_text(json.dumps({"records": a.records.name, "look": a.look, "margin": a.margin,
                                      "reps": a.reps, "rows": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
