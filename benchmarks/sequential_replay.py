"""Where each variant of an evaluated matrix would have stopped under a sequential design, replayed
on its own fixed-sample records — the design's savings and verdicts, measured on real outputs.

Decoding is greedy and the serving order is a seeded permutation (pipeline.evaluate.looks), so a
sequential evaluation serves a prefix of that order and writes, item for item, the records the full
evaluation wrote. Replaying the stopping rule — the project's own `pipeline.compare.stopping`, built
by `stop_rule` from the project's params with the design swapped in — on the full records' prefix
at each look gives the look a sequential run stops at and the verdict it reads there, without
serving anything again. Printed per design and variant: the stop (look, items, why, the conditional
power there), the verdict at the stop against the fixed-sample quality verdict (the same gate read
on every item at α, gain left out), and for the matrix the item-generations of the evaluate stage
(references serve every item) and the serving time, each variant's measured wall time scaled by the
share of its items served.

    python benchmarks/sequential_replay.py --project .                       # the demo's matrix
    python benchmarks/sequential_replay.py --project /tmp/real-project \\
        --designs obrien_fleming obrien_fleming:futility=0.1 pocock:futility=0.1
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pipeline.compare.deltas import load_results  # noqa: E402
from pipeline.compare.stopping import gate_at_look, stop_rule, _metrics_stub  # noqa: E402
from pipeline.config import Params  # noqa: E402
from pipeline.evaluate import stage as evaluate  # noqa: E402
from pipeline.layout import Layout  # noqa: E402
from pipeline.stats.sequential import look_sizes  # noqa: E402

DESIGNS = ("obrien_fleming", "obrien_fleming:futility=0.1", "obrien_fleming:futility=0.2", "pocock",
           "pocock:futility=0.1", "hwang_shih_decani:gamma=-2:futility=0.1")


def design(spec: str, look: int, seed: int) -> dict:
    """`kind[:gamma=G][:futility=F]` → an evaluate.sequential section."""
    kind, *opts = spec.split(":")
    out = {"enabled": True, "look": look, "seed": seed, "spending": kind}
    for o in opts:
        key, value = o.split("=", 1)
        out[key] = float(value)
    return out


def replay(data: dict, root: Path, name: str, spec: str, look: int, seed: int) -> dict:
    data = json.loads(json.dumps(data))
    data["evaluate"]["sequential"] = design(spec, look, seed)
    params = Params.model_validate(data)
    layout = Layout(root, params)
    rule = stop_rule(params.for_stage(evaluate.PARAMS, name), layout, name)
    _, records = load_results(layout.results, name)
    total = len(records)
    order = np.random.default_rng(seed).permutation(total).tolist()
    looks = look_sizes(total, look)
    for k in range(1, len(looks) + 1):
        at = sorted(order[:looks[k - 1]])
        judged = rule([records[i] for i in at], looks[:k], total)
        if judged["settled"] or judged["futile"]:
            break
    why = "futility" if judged["futile"] else "settled" if k < len(looks) else "whole set"
    return {"look": k, "looks": len(looks), "items": looks[k - 1], "total": total, "why": why,
            "verdict": "inconclusive" if judged["futile"] else judged["verdict"],
            "conditional_power": judged.get("conditional_power"), "unsettled": judged.get("unsettled")}


def fixed_verdict(data: dict, root: Path, name: str) -> str:
    params = Params.model_validate(data)
    layout = Layout(root, params)
    ref = params.variants[name].reference
    ref_m, ref_r = load_results(layout.results, ref)
    _, r = load_results(layout.results, name)
    _, gate = gate_at_look(ref_m, ref_r, _metrics_stub(name), r, params.compare, params.gates,
                           looks=[len(r)], total=len(r), judge_gain=False, power=None, with_power=False)
    return gate["verdict"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--project", type=Path, default=ROOT)
    ap.add_argument("--designs", nargs="+", default=list(DESIGNS),
                    help="kind[:gamma=G][:futility=F]; kind: obrien_fleming, pocock, hwang_shih_decani")
    ap.add_argument("--look", type=int, help="items between looks (default: evaluate.sequential.look)")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    root = a.project.resolve()
    data = yaml.safe_load((root / "params.yaml").read_text())
    params = Params.model_validate(data)
    layout = Layout(root, params)
    look = a.look or params.evaluate.sequential.look
    seed = params.evaluate.sequential.seed
    metrics = {}
    for name in params.variants:
        m, _ = load_results(layout.results, name) if (layout.result(name) / "metrics.json").exists() else (None, None)
        if m is not None and m.served:
            if m.sequential:
                sys.exit(f"{name} was evaluated sequentially: the replay needs every variant's full records")
            metrics[name] = m
    quantized = [n for n in metrics
                 if not params.variants[n].is_unquantized and params.variants[n].reference in metrics]
    full = sum(m.n for m in metrics.values())
    wall = {n: m.speed.wall_seconds for n, m in metrics.items()}
    print(f"{root}: {len(metrics)} evaluated variants, {len(quantized)} quantized; looks every {look} items, "
          f"order seed {seed}; fixed-sample: {full} item-generations, {sum(wall.values()):.0f} s serving\n")
    fixed = {n: fixed_verdict(data, root, n) for n in quantized}
    rows = []
    for spec in a.designs:
        t0, got = time.time(), {}
        for n in quantized:
            got[n] = replay(data, root, n, spec, look, seed)
        used = full - sum(metrics[n].n - got[n]["items"] for n in quantized)
        secs = sum(wall.values()) - sum(wall[n] * (1 - got[n]["items"] / metrics[n].n) for n in quantized)
        same = sum(got[n]["verdict"] == fixed[n] for n in quantized)
        print(f"{spec}  ({time.time() - t0:.0f} s to replay)")
        for n in quantized:
            g = got[n]
            cp = f", predictive power {g['conditional_power']:.2f}" if g["conditional_power"] is not None else ""
            print(f"  {n:28s} look {g['look']}/{g['looks']} {g['items']:5d} items ({g['why']}{cp}): "
                  f"{g['verdict']:12s} fixed-sample {fixed[n]}")
        print(f"  matrix: {used} of {full} item-generations ({100 * (1 - used / full):.1f}% fewer), "
              f"serving ~{secs:.0f} of {sum(wall.values()):.0f} s ({100 * (1 - secs / sum(wall.values())):.1f}% "
              f"less); {same}/{len(quantized)} verdicts as the fixed-sample ones\n", flush=True)
        rows.append({"design": spec, "variants": got, "generations": used, "fixed_generations": full,
                     "serving_seconds": round(secs, 1), "fixed_serving_seconds": round(sum(wall.values()), 1),
                     "same_verdicts": same})
    if a.json:
        a.json.write_text(json.dumps({"project": str(root), "look": look, "seed": seed, "fixed": fixed,
                                      "rows": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
