"""One variant evaluated twice with one setting changed (A, then B), back to back, with the
evaluate stage's own code: each wall time and accuracy, and how many per-sample outputs differ.

    # one engine against two replicas of it (evaluate.replicas): the batch-composition noise
    python benchmarks/eval_ab.py --variant baseline --b evaluate.replicas=2
    # MLX's quantized kernel against the same artifact served dequantized (engines.mlx.weights)
    python benchmarks/eval_ab.py --full-matrix --variant mlx_q4 --limit 64 \\
        --a engines.mlx.weights=dequantized --b engines.mlx.weights=quantized

`--a`/`--b` take dotted params keys (repeatable; values parsed as YAML); `--full-matrix` adds
demo/full_matrix.yaml's variants (their artifacts must exist: `qpipe-demo full-matrix`).
Under greedy decoding an output differs only by what the setting changes.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def setting(data: dict, assignment: str) -> None:
    import yaml

    key, _, value = assignment.partition("=")
    *parents, leaf = key.split(".")
    for part in parents:
        data = data.setdefault(part, {})
    data[leaf] = yaml.safe_load(value)


def main() -> int:
    import yaml

    from demo.matrix import full_params
    from pipeline.config import Params
    from pipeline.evaluate.stage import PARAMS, evaluate
    from pipeline.layout import Layout

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--variant", default="baseline")
    ap.add_argument("--limit", type=int, default=400, help="first N items (0: the whole set)")
    ap.add_argument("--a", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--b", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--full-matrix", action="store_true")
    a = ap.parse_args()
    base = full_params(ROOT) if a.full_matrix else yaml.safe_load((ROOT / "params.yaml").read_text())
    base["evaluate"].update(lm_eval={"tasks": []}, limit=a.limit or None)
    runs = {}
    with tempfile.TemporaryDirectory(prefix="qpipe-eval-ab-") as tmp:
        for side, assignments in (("A", a.a), ("B", a.b)):
            data = copy.deepcopy(base)
            for s in assignments:
                setting(data, s)
            params = Params.model_validate(data)
            out = Path(tmp) / side
            out.mkdir()
            m = evaluate(params.for_stage(PARAMS, a.variant), Layout(ROOT, params), a.variant, out)
            records = [json.loads(x) for x in (out / "samples.jsonl").read_text().splitlines()]
            replicas = json.loads((out / "run.json").read_text())["engine"]["details"].get("replicas")
            runs[side] = (m["speed"]["wall_seconds"], records)
            print(f"{side} ({', '.join(assignments) or 'params as they are'}): {a.variant}, {m['n']} "
                  f"items in {m['speed']['wall_seconds']:.1f} s, accuracy {m['accuracy']:.4f} "
                  f"[{m['engine']['kernel']}]" + (f"; requests per replica {replicas['requests_served']}"
                                                  if replicas else ""), flush=True)
    (wa, ra), (wb, rb) = runs["A"], runs["B"]
    differ = [(x, y) for x, y in zip(ra, rb, strict=True) if x["output"] != y["output"]]
    scores = sum(x["score"] != y["score"] for x, y in zip(ra, rb))
    print(f"B vs A: ×{wa / wb:.2f} the rate; {len(differ)} of {len(ra)} outputs differ, {scores} scores")
    for x, y in differ[:5]:
        print(f"    {x['id']}: {x['output']!r} (A) vs {y['output']!r} (B)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
