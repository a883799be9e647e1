"""What qpipe's quantize stage costs over a plain llm-compressor call, same model and recipe.

    qpipe calib split && qpipe calib build business      # once, from the repository root
    python benchmarks/quantize_overhead.py                # gptq_w4a16_business,fp8_dynamic, 3 repeats
    python benchmarks/quantize_overhead.py --variants fp8_dynamic --repeats 5

For every variant the two ways run ALTERNATED (qpipe, plain, qpipe, plain, …), each in a fresh
child process, so that peak RSS is that run's own and a slow machine moment hits both alike:

- `qpipe`: ``pipeline.quantize.stage.run`` — check, quantize, native load check, manifest and
  SHA256SUMS, atomic rename — into a scratch project (params.yaml's paths made absolute, so the
  repository's own ``artifacts/`` are never touched);
- `plain`: what a user would write by hand — load model and tokenizer, tokenize the calibration
  set's ``data.parquet`` exactly as the backend does, ``oneshot(...)``, ``save_pretrained(
  save_compressed=True)`` (and the tokenizer, so both artifacts hold the same files).

Prints per variant and way the median and the best wall time (the child process; on a shared
machine the best run is the steadier estimate of the cost itself), the median work time (the
child's own code, from the imports of torch / transformers / llm-compressor on), median peak RSS,
artifact size (manifest files excluded), the compression ratio against the baseline variant's
artifact, and qpipe / plain (goal: ≤ 1.05).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

GOAL = 1.05
WAYS = ("qpipe", "plain")
CHILD_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
             "TOKENIZERS_PARALLELISM": "false", "DO_NOT_TRACK": "1"}
MANIFEST_FILES = {"manifest.json", "SHA256SUMS"}


# ------------------------------------------------------------------------------ child runs

def _absolute_params(params_path: Path):
    """The validated params with every project path absolute, so that `stage.run` may write
    into a scratch root while reading the repository's model, recipes and calibration sets."""
    from pipeline.config import load_params

    params = load_params(params_path)
    root = params_path.resolve().parent
    params.model.path = root / params.model.path
    params.split.out_dir = root / params.split.out_dir
    for v in params.variants.values():
        if v.recipe is not None:
            v.recipe = root / v.recipe
    return params


def child_qpipe(spec: dict) -> dict:
    from pipeline.layout import Layout
    from pipeline.quantize import stage

    params = _absolute_params(Path(spec["params"]))
    scratch = Path(spec["out"])
    stage.run(params.for_stage(stage.PARAMS, spec["variant"]), Layout(scratch, params), spec["variant"])
    return {"artifact": str(scratch / "artifacts" / spec["variant"])}


def _no_pinning_without_accelerator() -> None:
    # The same CPU workaround the backend applies (llm-compressor 0.14.0.1's AWQ pins cached
    # activations, which raises without an accelerator); without it plain AWQ fails on CPU.
    import torch

    if not torch.cuda.is_available():
        from llmcompressor.pipelines.cache import IntermediatesCache

        IntermediatesCache.pin_memory = lambda self, batch_index, input_names=None: None


def child_plain(spec: dict) -> dict:
    import torch
    from llmcompressor import oneshot
    from transformers import AutoModelForCausalLM, AutoTokenizer

    out = Path(spec["out"]) / spec["variant"]
    _no_pinning_without_accelerator()
    tok = AutoTokenizer.from_pretrained(spec["model_dir"], local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(spec["model_dir"], dtype=getattr(torch, spec["dtype"]),
                                                 local_files_only=True)
    kwargs = {}
    if spec["calibration_dir"]:
        from datasets import Dataset

        n = spec["max_seq_length"]
        ds = Dataset.from_parquet(str(Path(spec["calibration_dir"]) / "data.parquet"))
        ds = ds.map(lambda r: tok(r["text"], add_special_tokens=False, truncation=True, max_length=n),
                    remove_columns=ds.column_names)
        kwargs = dict(dataset=ds, num_calibration_samples=len(ds), max_seq_length=n)
    oneshot(model=model, recipe=spec["recipe"], processor=tok, **kwargs)
    model.save_pretrained(out, save_compressed=True)
    tok.save_pretrained(out)
    return {"artifact": str(out)}


def child(way: str, spec_path: Path) -> None:
    """`work` starts before either way imports torch, transformers or llm-compressor."""
    t0 = time.perf_counter()
    spec = json.loads(spec_path.read_text())
    result = {"qpipe": child_qpipe, "plain": child_plain}[way](spec)
    Path(spec["result"]).write_text(json.dumps(result | {"work_s": time.perf_counter() - t0}))


# ------------------------------------------------------------------------------ driver

def artifact_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and p.name not in MANIFEST_FILES)


def run_child(way: str, spec: dict, run_dir: Path) -> dict:
    """One run in a fresh process: wall time around it, its own peak RSS from wait4."""
    run_dir.mkdir(parents=True)
    spec = spec | {"out": str(run_dir), "result": str(run_dir / "result.json")}
    (run_dir / "spec.json").write_text(json.dumps(spec))
    log = run_dir / "child.log"
    t0 = time.perf_counter()
    with log.open("wb") as fh:
        proc = subprocess.Popen([sys.executable, __file__, "--child", way, str(run_dir / "spec.json")],
                                stdout=fh, stderr=subprocess.STDOUT, env=os.environ | CHILD_ENV)
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped by wait4 already
    if proc.returncode != 0:
        tail = log.read_text(errors="replace")[-4000:]
        raise SystemExit(f"{way} {spec['variant']} failed (exit {proc.returncode}); log {log}:\n{tail}")
    result = json.loads((run_dir / "result.json").read_text())
    rss_kb = usage.ru_maxrss if sys.platform != "darwin" else usage.ru_maxrss / 1024  # bytes on macOS
    return {"way": way, "variant": spec["variant"], "wall_s": wall, "work_s": result["work_s"],
            "peak_rss_mb": rss_kb / 1024, "size": artifact_bytes(Path(result["artifact"]))}


def specs_for(params_path: Path, variants: list[str]) -> tuple[dict[str, dict], str]:
    """Resolve every variant once, before anything runs: unknown names, a non-llm-compressor
    variant or a calibration set that is not built fail here, with the fix."""
    from pipeline.config import load_params
    from pipeline.quantize.base import BackendError
    from pipeline.layout import Layout
    from pipeline.quantize.stage import PARAMS, request_for
    from pipeline.names import did_you_mean

    params = load_params(params_path)
    root = params_path.resolve().parent
    specs = {}
    for name in variants:
        if name not in params.variants:
            raise SystemExit(f"unknown variant {name!r} {did_you_mean(name, params.variants)} "
                             f"Available: {', '.join(params.variants)}")
        if params.variants[name].backend != "llmcompressor":
            raise SystemExit(f"variant {name!r} uses backend {params.variants[name].backend!r}; "
                             "this benchmark compares qpipe with plain llm-compressor only")
        try:
            req = request_for(params.for_stage(PARAMS, name), Layout(root, params), name)
        except BackendError as err:
            raise SystemExit(str(err)) from err
        calibrated = req.calibration_dir is not None and req.scheme != "fp8_dynamic"  # as the backend
        specs[name] = {"params": str(params_path.resolve()), "variant": name, "scheme": req.scheme,
                       "model_dir": str(req.model_dir), "recipe": str(req.recipe), "dtype": req.dtype,
                       "calibration_dir": str(req.calibration_dir) if calibrated else None,
                       "max_seq_length": int(req.options.get("max_seq_length", 512))}
    return specs, params.baseline


def summarize(runs: list[dict], baseline_size: int, specs: dict[str, dict]) -> list[dict]:
    rows = []
    for variant in specs:
        by_way = {}
        for way in WAYS:
            mine = [r for r in runs if r["variant"] == variant and r["way"] == way]
            by_way[way] = {"variant": variant, "scheme": specs[variant]["scheme"], "way": way,
                           "runs": len(mine),
                           "wall_s": statistics.median(r["wall_s"] for r in mine),
                           "best_s": min(r["wall_s"] for r in mine),
                           "work_s": statistics.median(r["work_s"] for r in mine),
                           "peak_rss_mb": statistics.median(r["peak_rss_mb"] for r in mine),
                           "size": statistics.median(r["size"] for r in mine)}
            by_way[way]["compression"] = baseline_size / by_way[way]["size"]
        q, p = by_way["qpipe"], by_way["plain"]
        q["ratio_wall"], q["ratio_best"] = q["wall_s"] / p["wall_s"], q["best_s"] / p["best_s"]
        q["ratio_rss"] = q["peak_rss_mb"] / p["peak_rss_mb"]
        rows += [q, p]
    return rows


def print_table(rows: list[dict], baseline: str, baseline_size: int, repeats: int) -> None:
    print(f"baseline {baseline}: {baseline_size / 2**20:.2f} MiB; {repeats} alternated run(s) per way; "
          f"medians; ratio = qpipe / plain (goal ≤ {GOAL})\n")
    print("| variant | scheme | way | wall s | best s | work s | peak RSS MiB | artifact MiB | vs baseline "
          "| ratio wall | ratio best | ratio RSS |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        ratios = (" | ".join(f"{r[k]:.3f}" + (" ✓" if r[k] <= GOAL else " ✗")
                             for k in ("ratio_wall", "ratio_best", "ratio_rss"))
                  if r["way"] == "qpipe" else " | ".join("" for _ in range(3)))
        print(f"| {r['variant']} | {r['scheme']} | {r['way']} | {r['wall_s']:.1f} | {r['best_s']:.1f} | "
              f"{r['work_s']:.1f} | "
              f"{r['peak_rss_mb']:.0f} | {r['size'] / 2**20:.2f} | {r['compression']:.2f}× | {ratios} |")
    print("\nwall: the whole child process (median); best: its fastest run, the steadier figure on a "
          "busy machine; work: the child's own code, heavy imports included (median) — qpipe's adds "
          "the native load check, hashing and the manifest.")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variants", default="gptq_w4a16_business,fp8_dynamic",
                    help="comma-separated llm-compressor variants from params.yaml")
    ap.add_argument("--params", type=Path, default=Path("params.yaml"), help="path to params.yaml")
    ap.add_argument("--repeats", type=int, default=3, help="runs per variant and way (alternated)")
    ap.add_argument("--workdir", type=Path, default=None, help="scratch folder (default: tmp)")
    ap.add_argument("--keep", action="store_true", help="keep the scratch artifacts and logs")
    ap.add_argument("--json", type=Path, default=None, help="also write every run and the summary here")
    ap.add_argument("--child", nargs=2, metavar=("WAY", "SPEC"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(args.child[0], Path(args.child[1]))
        return
    if args.repeats < 1:
        ap.error("--repeats must be at least 1")
    specs, baseline = specs_for(args.params, [v.strip() for v in args.variants.split(",") if v.strip()])
    scratch = Path(tempfile.mkdtemp(prefix="qpipe-overhead-", dir=args.workdir))
    try:
        base = run_child("qpipe", {"params": str(args.params.resolve()), "variant": baseline},
                         scratch / "baseline")
        runs = []
        for i in range(args.repeats):
            for variant, spec in specs.items():
                for way in WAYS:  # A B A B …: both ways share whatever the machine is doing
                    r = run_child(way, spec, scratch / f"{variant}-{i}-{way}")
                    runs.append(r)
                    print(f"[{i + 1}/{args.repeats}] {variant:<24} {way:<5} wall {r['wall_s']:7.1f} s  "
                          f"work {r['work_s']:7.1f} s  RSS {r['peak_rss_mb']:6.0f} MiB", file=sys.stderr,
                          flush=True)
        rows = summarize(runs, base["size"], specs)
        print_table(rows, baseline, base["size"], args.repeats)
        if args.json:
            args.json.write_text(json.dumps({"runs": runs, "summary": rows, "baseline": base}, indent=2) + "\n")
    finally:
        if args.keep:
            print(f"kept {scratch}", file=sys.stderr)
        else:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
