"""Is the per-part sensitivity a faithful proxy for a mixed-precision search? (pipeline/search)

On one model: each part's KL under W4A16 and W8A16 alone (round-to-nearest, compressed-tensors'
numerics) on calibration conversations; the candidates the integer program picks at a range of
budgets; then every candidate, the uniform variants and random mixes quantized whole and
measured on *other* conversations. Prints the time it took, the predicted (sum of parts) against
the measured KL, their rank correlation (Spearman), and where each candidate sits against the
uniform variants (the front the search would certify from).

    python benchmarks/sensitivity_proxy.py --model models/demo
    python benchmarks/sensitivity_proxy.py --model ~/.cache/qpipe/models/smollm2-135m-instruct --tokens 4096

The real checkpoint comes from scripts/setup-real-model.sh.
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

from demo.generator import log_records  # noqa: E402
from pipeline.search import front, sensitivity  # noqa: E402

FORMATS = ["W4A16", "W8A16"]


def texts(tok, seed: int, n: int) -> list[str]:
    out = []
    for r in log_records(seed=seed, n=n, days=30, end_date="2026-01-01"):
        msgs = [{"role": m["role"], "content": m["content"]} for m in r["messages"]]
        out.append(tok.apply_chat_template(msgs, tokenize=False))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", type=Path, required=True)
    ap.add_argument("--tokens", type=int, default=2048, help="calibration tokens (and as many held out)")
    ap.add_argument("--max-seq-len", type=int, default=256)
    ap.add_argument("--random-mixes", type=int, default=6)
    ap.add_argument("--group-size", type=int, default=None,
                    help="group size of the group-wise formats (default: the preset's, 128)")
    ap.add_argument("--out", type=Path, default=None, help="write the figures as JSON here")
    args = ap.parse_args()

    import torch
    from scipy.stats import spearmanr
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_pretrained(args.model.expanduser(), dtype=torch.float32).eval()
    tok = AutoTokenizer.from_pretrained(args.model.expanduser())
    calib = sensitivity.token_batches(tok, texts(tok, 1, 400), args.tokens, args.max_seq_len)
    held = sensitivity.token_batches(tok, texts(tok, 2, 400), args.tokens, args.max_seq_len)

    started = time.time()
    g = args.group_size
    steps = [0]

    def step(what: str) -> None:
        steps[0] += 1
        if steps[0] % 20 == 0:
            print(f"  {steps[0]} passes, {time.time() - started:.0f} s ({what})", file=sys.stderr, flush=True)

    m = sensitivity.measure(model, calib, FORMATS, group_size=g, on_step=step)
    t_measure = time.time() - started
    allowed = FORMATS + [sensitivity.UNQUANTIZED]
    cands = front.front(m, allowed, [4.25, 4.5, 5.0, 5.5, 6.0, 7.0, 8.2, 10.0, 12.0])
    ref = sensitivity.Reference(model, held)
    rows = []
    started = time.time()
    for c in cands:
        rows.append({"what": f"front @ {c['budget_bits']} bits", "bits": c["bits_per_weight"],
                     "predicted": c["predicted_kl"],
                     "measured": sensitivity.mix_kl(model, held, c["assignment"], ref, g),
                     "formats": c["formats"]})
    names, weights, kl, bits, fits = front.table(m, allowed)
    rng = np.random.default_rng(0)
    for k in range(args.random_mixes):
        pick = np.array([rng.choice(np.flatnonzero(fits[i])) for i in range(len(names))])
        assign = {p: allowed[j] for p, j in zip(names, pick)}
        idx = np.arange(len(names))
        avg = float((weights * bits[idx, pick]).sum() / weights.sum())
        rows.append({"what": f"random mix {k}", "bits": round(avg, 4),
                     "predicted": float(kl[idx, pick].sum()),
                     "measured": sensitivity.mix_kl(model, held, assign, ref, g),
                     "formats": {f: int((pick == j).sum()) for j, f in enumerate(allowed)}})
    for u in front.uniform(m, allowed):
        rows.append({"what": f"uniform {u['format']}", "bits": u["bits_per_weight"], "predicted": u["predicted_kl"],
                     "measured": sensitivity.mix_kl(model, held, dict.fromkeys(names, u["format"]), ref, g),
                     "formats": {u["format"]: len(names)}})
    t_mixes = time.time() - started
    pred = np.array([r["predicted"] for r in rows])
    meas = np.array([r["measured"] for r in rows])
    rho = spearmanr(pred, meas)
    top = sorted(m["rows"], key=lambda r: -r["kl"])[:5]
    result = {"model": str(args.model), "parts": len(names), "group_size": g, "unfit": len(m["unfit"]),
              "calibration_tokens": m["tokens"],
              "held_out_tokens": ref.tokens, "seconds_sensitivity": round(t_measure, 1),
              "seconds_mixes": round(t_mixes, 1), "mixes_measured": len(rows),
              "spearman": round(float(rho.statistic), 4), "spearman_p": float(rho.pvalue),
              "measured_over_predicted_median": round(float(np.median(meas / np.maximum(pred, 1e-12))), 3),
              "most_sensitive": [{k: r[k] for k in ("part", "format", "kl")} for r in top], "rows": rows}
    print(f"{args.model}: {len(names)} parts, {m['tokens']} calibration tokens, {ref.tokens} held out; "
          f"sensitivity {t_measure:.0f} s, {len(rows)} mixes measured in {t_mixes:.0f} s")
    print("| mix | bits/weight | W4 / W8 / BF16 parts | predicted KL (sum of parts) | measured KL (held out) |")
    print("|---|---|---|---|---|")
    for r in rows:
        f = r["formats"]
        print(f"| {r['what']} | {r['bits']:.3f} | {f.get('W4A16', 0)} / {f.get('W8A16', 0)} / {f.get('BF16', 0)} | "
              f"{r['predicted']:.3g} | {r['measured']:.3g} |")
    print(f"Spearman (predicted, measured) over {len(rows)} mixes: {rho.statistic:.3f} (p = {rho.pvalue:.2g}); "
          f"measured / predicted, median: {result['measured_over_predicted_median']}")
    print("most sensitive:", ", ".join(f"{r['part']} {r['format']} {r['kl']:.3g}" for r in top))
    if args.out:
        args.out.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
