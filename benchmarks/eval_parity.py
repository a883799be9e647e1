"""Evaluation parity between devices: the same artifacts evaluated by the transformers reference
engine on this host's CPU and on a GPU must agree (same greedy outputs, or a stated difference).

    python benchmarks/eval_parity.py --device cpu  --out parity/cpu
    python benchmarks/eval_parity.py --device cuda --out parity/cuda      # on the GPU host
    python benchmarks/eval_parity.py --compare parity/cpu parity/cuda

Each run writes <out>/<variant>/ (samples.jsonl, metrics.json, …) with the evaluate stage's own
code; `--compare` prints accuracy per device, the paired delta and the three consistency levels.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pipeline.config import Params  # noqa: E402


def evaluate(device: str, out: Path, variants: list[str], limit: int | None) -> None:
    import yaml

    from pipeline.evaluate.stage import PARAMS, evaluate as run_eval
    from pipeline.layout import Layout

    data = yaml.safe_load((ROOT / "params.yaml").read_text())
    data["evaluate"].update(lm_eval={"tasks": []}, limit=limit)
    for name in variants:
        data["variants"][name].update(engine="transformers", reason="device parity check",
                                      engine_options={"device": device})
    params = Params.model_validate(data)
    for name in variants:
        (out / name).mkdir(parents=True, exist_ok=True)
        m = run_eval(params.for_stage(PARAMS, name), Layout(ROOT, params), name, out / name)
        print(f"{device} {name}: accuracy {m['accuracy']:.4f} (n={m['n']}), "
              f"{m['speed']['wall_seconds']} s, {m['engine']['kernel']}", flush=True)


def compare(a: Path, b: Path) -> None:
    from pipeline.compare.deltas import load_results
    from pipeline.evaluate.detectors import consistency
    from pipeline.stats.paired import paired_accuracy

    for d in sorted(p for p in a.iterdir() if (p / "metrics.json").is_file()):
        ma, ra = load_results(a, d.name)
        mb, rb = load_results(b, d.name)
        sb = {r["id"]: r["score"] for r in rb}
        pa = paired_accuracy([r["score"] for r in ra], [sb[r["id"]] for r in ra])
        c = consistency(ra, rb)
        print(f"| {d.name} ({pa['n']}) | {pa['base']:.4f} | {pa['variant']:.4f} | {pa['delta']:+.4f} "
              f"[{pa['ci_low']:+.4f}, {pa['ci_high']:+.4f}] p={pa['p_value']:.3g} | "
              f"{c['exact_match_rate']:.4f} | {c['char_similarity']:.4f} | {c['task_agreement']:.4f} |")
        by_id = {r["id"]: r for r in rb}
        diffs = [(x, by_id[x["id"]]) for x in ra if x["output"] != by_id[x["id"]]["output"]]
        for x, y in diffs[:3]:
            print(f"    {x['id']}: {x['output']!r} vs {y['output']!r}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--variants", default="baseline,gptq_w4a16_business")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--compare", nargs=2, type=Path, metavar=("A", "B"))
    args = ap.parse_args()
    if args.compare:
        print("| variant | accuracy A | accuracy B | B − A [95% CI] | same output | char similarity | "
              "same result |\n|---|---|---|---|---|---|---|")
        compare(*args.compare)
    else:
        evaluate(args.device, args.out, args.variants.split(","), args.limit)


if __name__ == "__main__":
    main()
