"""Can the distribution-level signals see a 1-point regression that pass/fail accuracy cannot?

A planted regression: Gaussian noise added to every Linear weight of the demo model (embeddings
and norms untouched), each weight tensor getting noise of `scale` × its own standard deviation,
one seed per variant. The noise scale is calibrated until the model loses about one point of
accuracy on the evaluation set; null variants get noise far below that scale (and the scale 0
variant is the baseline re-served).

Per variant, in one process, with the engine held fixed (transformers, float32, greedy, batched):
- accuracy on the evaluation set, scored by the project's own scorers, and the paired change
  against the baseline with its Tango interval (the gate's `overall` criterion);
- teacher-forced along the baseline's greedy outputs: token KL divergence KL(P_base ‖ P_variant),
  its per-item mean with the bootstrap interval the `kld` gate criterion reads, top-1 agreement;
- the paired change in the gold reference's log-likelihood per token, with its bootstrap interval.

"Caught" means the criterion does not pass (fail or inconclusive: both block handoff). The
mean-KL criterion is judged against the limit derived for this model from its gate calibration
(`--calibration`, the gate_calibration stage's output) for each profile's accuracy margin; a null
variant must pass it. Without a calibration the KL is reported, not judged.

    python benchmarks/planted_regression.py --scales 0.02 0.05 0.1 --seeds 1      # calibrate
    python benchmarks/planted_regression.py --scales 0 0.005 0.08 --seeds 8 --json out.json
    python benchmarks/planted_regression.py --device cuda ...                     # on a GPU
    python benchmarks/planted_regression.py --model ~/.cache/qpipe/models/smollm2-135m-instruct \
        --calibration results/gate-calibration/calibration.json ...              # another model
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


def load(device: str, path: Path):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(path, local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(path, local_files_only=True, dtype=torch.float32)
    return tok, model.to(device).eval()


def forced(base, variant, seqs: list[tuple[list[int], list[int]]], batch: int):
    """Per item: token KL along `cont` after `prompt`, top-1 agreement, and both models'
    log-likelihood of `cont` — teacher-forced, batched with right padding."""
    import torch

    dev = next(base.parameters()).device
    rows: list[dict] = [{} for _ in seqs]
    order = sorted(range(len(seqs)), key=lambda i: len(seqs[i][0]) + len(seqs[i][1]))
    for s in range(0, len(order), batch):
        idx = [i for i in order[s:s + batch] if seqs[i][1]]
        if not idx:
            continue
        full = [seqs[i][0] + seqs[i][1] for i in idx]
        width = max(map(len, full))
        ids = torch.zeros((len(idx), width), dtype=torch.long)
        mask = torch.zeros_like(ids)
        for r, f in enumerate(full):
            ids[r, :len(f)] = torch.tensor(f)
            mask[r, :len(f)] = 1
        with torch.no_grad():
            lb = torch.log_softmax(base(ids.to(dev), attention_mask=mask.to(dev)).logits.float(), -1)
            lv = torch.log_softmax(variant(ids.to(dev), attention_mask=mask.to(dev)).logits.float(), -1)
        for r, i in enumerate(idx):
            p, c = seqs[i]
            pos = torch.arange(len(p) - 1, len(p) + len(c) - 1, device=dev)
            pb, pv = lb[r, pos], lv[r, pos]
            kl = (pb.exp() * (pb - pv)).sum(-1).clamp_min(0.0)
            tgt = torch.tensor(c, device=dev)
            rows[i] = {"kl": kl.cpu().tolist(), "top1_agree": int((pb.argmax(-1) == pv.argmax(-1)).sum()),
                       "ll_base": float(pb.gather(1, tgt[:, None]).sum()),
                       "ll_var": float(pv.gather(1, tgt[:, None]).sum()), "tokens": len(c)}
    return rows


def write_json(args, limits, base_acc, n, max_tokens, results) -> None:
    if not args.json:
        return
    args.json.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.json.with_suffix(".tmp")
    tmp.write_text(json.dumps({"model": args.model.name, "kl_limits": limits,
                               "baseline_accuracy": float(base_acc.mean()), "n": n,
                               "max_tokens": max_tokens, "device": args.device,
                               "variants": results}, indent=1) + "\n")
    tmp.replace(args.json)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scales", type=float, nargs="+", default=[0.0, 0.005, 0.08])
    ap.add_argument("--seeds", type=int, default=4, help="seeds per non-zero scale")
    ap.add_argument("--limit", type=int, default=None, help="first N evaluation items only")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--max-tokens", type=int, default=None, help="default: params evaluate.max_tokens")
    ap.add_argument("--evalset", default=str(ROOT / "data" / "evalset"))
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--model", type=Path, default=ROOT / "models" / "demo",
                    help="a Hugging Face checkpoint folder (e.g. the real one setup-real-model.sh makes)")
    ap.add_argument("--calibration", type=Path, default=None,
                    help="a gate calibration of this model (results/gate-calibration/calibration.json): "
                         "the mean KL is judged against its derived limit per profile; without it the "
                         "KL is reported, not judged (built-in profiles state no KL constant)")
    args = ap.parse_args()

    import torch

    from pipeline.stats import noninferiority as ni
    from pipeline.evaluate.divergence import summarize
    from pipeline.evaluate.harness import load_evalset, render
    from pipeline.evaluate.scorers import score
    from pipeline.compare.gates import PROFILES
    from pipeline.evaluate.gate_calibration import generate, perturbed
    from pipeline.stats.gate_limits import derive_limit, judge

    torch.manual_seed(0)
    torch.set_num_threads(max(1, torch.get_num_threads()))
    max_tokens = args.max_tokens
    if max_tokens is None:
        import yaml

        max_tokens = yaml.safe_load((ROOT / "params.yaml").read_text())["evaluate"]["max_tokens"]
    tok, base = load(args.device, args.model)
    limits = {}
    if args.calibration:
        cal = json.loads(args.calibration.read_text())
        for prof, t in PROFILES.items():
            limits[prof] = derive_limit(cal["base_correct"], [{"correct": st["correct"], "signal": st["kld"]}
                                                              for st in cal["steps"]],
                                        margin=t.max_drop_overall, n_boot=1000)
            lim = limits[prof]
            print(f"{prof}: derived KL limit {lim['limit']} 95% CI {lim['limit_ci']} ({lim['status']})")
    items = load_evalset(Path(args.evalset), limit=args.limit).items
    prompts = render(tok, items)
    refs = [tok.encode(i.reference, add_special_tokens=False) if i.reference else [] for i in items]
    t0 = time.time()

    def accuracy_of(outputs):
        return np.array([score(i.rubric, i.reference, tok.decode(o, skip_special_tokens=True)).value >= 1.0
                         for i, o in zip(items, outputs)], float)

    base_out = generate(base, tok, prompts, max_tokens, args.batch)
    base_acc = accuracy_of(base_out)
    print(f"baseline: accuracy {base_acc.mean():.4f} on {len(items)} items ({time.time() - t0:.0f} s, "
          f"{args.device})", flush=True)
    results = []
    # seed-major, so a run cut short still holds every scale; the JSON is rewritten after each variant
    plan = [(scale, seed) for seed in range(0, args.seeds + 1) for scale in args.scales
            if (seed == 0) == (scale == 0)]
    for scale, seed in plan:
        t1 = time.time()
        var = perturbed(base, scale, seed)
        acc = accuracy_of(generate(var, tok, prompts, max_tokens, args.batch))
        n, lost, gained = int(len(acc)), int(((base_acc == 1) & (acc == 0)).sum()), \
            int(((base_acc == 0) & (acc == 1)).sum())
        lo, hi = ni.tango_interval(lost, gained, n, 0.95)
        along = forced(base, var, list(zip(prompts, base_out)), args.batch)
        gold = forced(base, var, list(zip(prompts, refs)), args.batch)
        rows = [{"kl": a.get("kl", []), "top1_agree": a.get("top1_agree", 0),
                 **({"ref_loglik_delta": (g["ll_var"] - g["ll_base"]) / g["tokens"]} if g else {})}
                for a, g in zip(along, gold)]
        sig = summarize(rows, n_boot=2000, seed=seed)
        kld_verdicts = {prof: judge(sig["kld_item_mean_ci"], lim) if lim["status"] == "gating"
                        else "diagnostic" for prof, lim in limits.items()} or \
            {prof: "diagnostic" for prof in PROFILES}
        r = {"scale": scale, "seed": seed, "accuracy": round(float(acc.mean()), 5),
             "delta": round(float(acc.mean() - base_acc.mean()), 5), "lost": lost, "gained": gained,
             "delta_ci": [round(lo, 5), round(hi, 5)], "kld_item_mean": sig["kld_item_mean"],
             "kld_item_mean_ci": sig["kld_item_mean_ci"], "top1_agreement": sig["top1_agreement"],
             "ref_loglik_delta": sig["ref_loglik_delta"], "ref_loglik_delta_ci": sig["ref_loglik_delta_ci"],
             "kld_verdict": kld_verdicts, "seconds": round(time.time() - t1, 1)}
        results.append(r)
        print(f"scale {scale:<7g} seed {seed}: Δacc {100 * r['delta']:+.2f} pt "
              f"[{100 * lo:+.2f}, {100 * hi:+.2f}] ({lost} lost, {gained} gained) · "
              f"KL {r['kld_item_mean']:.2e} [{r['kld_item_mean_ci'][0]:.2e}, "
              f"{r['kld_item_mean_ci'][1]:.2e}] · top-1 {r['top1_agreement']:.4f} · "
              f"Δref-ll {r['ref_loglik_delta']:+.4f} [{r['ref_loglik_delta_ci'][0]:+.4f}, "
              f"{r['ref_loglik_delta_ci'][1]:+.4f}] · KL gate "
              f"{'/'.join(v[0].upper() for v in kld_verdicts.values())} ({r['seconds']:.0f} s)",
              flush=True)
        write_json(args, limits, base_acc, len(items), max_tokens, results)
    print("\nper scale (KL gate: how often the criterion does NOT pass, i.e. blocks; fails in brackets; "
          f"profiles {', '.join(PROFILES)}):")
    for scale in args.scales:
        rs = [r for r in results if r["scale"] == scale]
        deltas = [r["delta"] for r in rs]
        line = f"  scale {scale:<7g} n={len(rs)} mean Δacc {100 * np.mean(deltas):+.2f} pt, " \
               f"accuracy CI excludes 0: {sum(r['delta_ci'][1] < 0 for r in rs)}/{len(rs)}, " \
               f"Δref-ll CI below 0: {sum(r['ref_loglik_delta_ci'][1] < 0 for r in rs)}/{len(rs)}; KL blocks"
        for prof in PROFILES:
            blocked = sum(r["kld_verdict"][prof] not in ("pass", "diagnostic") for r in rs)
            failed = sum(r["kld_verdict"][prof] == "fail" for r in rs)
            line += f" {prof} {blocked}/{len(rs)} ({failed})"
        print(line)


if __name__ == "__main__":
    main()
