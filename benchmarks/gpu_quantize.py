"""Quantize an 8B-class Llama on a GPU through qpipe's quantize stage and through a plain
llm-compressor ``oneshot`` call, alternated, each in a fresh process.

    python benchmarks/gpu_quantize.py --schemes fp8,nvfp4 --samples 128 --seq-len 2048 --repeats 1
    python benchmarks/gpu_quantize.py --schemes gptq --json results.json
    python benchmarks/gpu_quantize.py --schemes gptq --gpus 2,1 --json gpus.json   # 2 GPUs vs 1, through qpipe
    python benchmarks/gpu_quantize.py --config tiny.json --device cpu --samples 4 --seq-len 128  # smoke test

On one H200 (benchmarks/RESULTS.md) the model is built and saved in ~35 s, and one pair (qpipe +
raw) at 128 × 2048 takes ~85 s for fp8, ~230 s for nvfp4 and ~490 s for gptq; AWQ takes ~100 s a
side already at 8 samples. Plan device calls around those figures.

Schemes: gptq (W4A16), awq (W4A16), w8a8 (INT8, SmoothQuant + GPTQ), fp8 (dynamic), nvfp4. Each
runs the recipe of the first llm-compressor variant of that scheme in params.yaml.

What it builds, once per work directory (default /tmp/qpipe-gpu-bench, the GPU host's local disk):

- **model** — the Llama-3-8B architecture of ``benchmarks/llama-8b-config.json`` (hidden 4096,
  intermediate 14336, 32 layers, 32 heads, 8 KV heads, vocab 128256; 8.0B parameters) with random
  bf16 weights (transformers' own initialisation, normal std 0.02, seed ``--seed``), made on the
  GPU and saved as a Hugging Face checkpoint (16 GB). No download. The tokenizer is the demo
  model's (``models/demo``, 4,096 tokens, ChatML template): only the first 4,096 of the 128,256
  embedding rows are ever looked up, which changes no cost that is measured here.
- **calibration set** — ``--samples`` rows in the calibration stage's format
  (``data/calibration/<set>/data.parquet`` with a ``text`` column, and ``card.json``): each text
  is random token ids of the demo tokenizer (special tokens excluded, seed ``--seed``) decoded to
  text, long enough that it re-tokenizes to at least ``--seq-len`` tokens; both ways tokenize it
  the same way and truncate to ``--seq-len``, so every sample is exactly that long.

The two ways, per scheme, in turn (the order flips on every repeat):

- ``qpipe`` — ``pipeline.quantize.stage.run`` (what ``qpipe quantize`` runs) with params.yaml's
  variant pointed at the model and set above and ``--device`` (default cuda): load in host
  memory, llm-compressor's sequential onloading, save, native load check on the GPU, manifest and
  SHA256SUMS, atomic rename. Its manifest is verified afterwards (outside the timing).
- ``raw`` — what a user writes by hand: load model and tokenizer (host memory, as llm-compressor
  recommends for its sequential pipeline), tokenize the same parquet the same way, ``oneshot``
  with the same recipe, ``save_pretrained(save_compressed=True)`` and the tokenizer.

Prints per scheme the wall time of each child process (python start and imports included), peak
GPU memory (``torch.cuda.max_memory_allocated`` after saving), artifact size (manifest files
excluded) and qpipe / raw (goal ≤ 1.05). Artifacts are deleted after each run (disk).

With ``--gpus 2,1`` the ways are instead qpipe over 2 GPUs (``quantize.gpus: 2``: torchrun, one
process per GPU, llm-compressor's distributed oneshot) and qpipe on 1 GPU, alternated the same
way; the table gives each one's time, the largest per-process peak GPU memory, and the speed-up
over one GPU. The JSON file is rewritten after every run, so a run cut short keeps what it did.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _shown(value) -> str:
    """An argument as recorded: paths inside the repository relative to it."""
    if isinstance(value, Path) and value.resolve().is_relative_to(REPO):
        return value.resolve().relative_to(REPO).as_posix()
    return str(value)
sys.path.insert(0, str(REPO))

CONFIG = REPO / "benchmarks" / "llama-8b-config.json"
TOKENIZER = REPO / "models" / "demo"
GOAL = 1.05
WAYS = ("qpipe", "raw")
SCHEMES = {"gptq": "w4a16_gptq", "awq": "w4a16_awq", "w8a8": "w8a8_int8", "fp8": "fp8_dynamic",
           "nvfp4": "nvfp4"}
CHILD_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
             "TOKENIZERS_PARALLELISM": "false", "DO_NOT_TRACK": "1"}
MANIFEST_FILES = {"manifest.json", "SHA256SUMS"}
VERSIONS = ("torch", "transformers", "llmcompressor", "compressed-tensors", "datasets", "qpipe")


# ------------------------------------------------------------------------------ child runs

def child_build(spec: dict) -> dict:
    """The random-weight model, made on the GPU (seconds) and saved with the demo tokenizer."""
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    out = Path(spec["model_dir"])
    torch.manual_seed(spec["seed"])
    torch.set_default_dtype(torch.bfloat16)
    with torch.device("cuda" if torch.cuda.is_available() else "cpu"):
        model = LlamaForCausalLM(LlamaConfig(**json.loads(Path(spec["config"]).read_text())))
    model.save_pretrained(out, max_shard_size="5GB")
    AutoTokenizer.from_pretrained(TOKENIZER, local_files_only=True).save_pretrained(out)
    return {"parameters": sum(p.numel() for p in model.parameters())}


def child_qpipe(spec: dict) -> dict:
    from pipeline.config import load_params
    from pipeline.layout import Layout
    from pipeline.quantize import stage

    params = load_params(REPO / "params.yaml")
    params.model.path = Path(spec["model_dir"])        # absolute: stays as is under root
    params.split.out_dir = Path(spec["data_dir"])
    params.variants[spec["variant"]].recipe = Path(spec["recipe"])
    root = Path(spec["out"])
    m = stage.run(params.for_stage(stage.PARAMS, spec["variant"]), Layout(root, params), spec["variant"],
                  device=spec["device"], gpus=spec.get("gpus", 1))
    q = m["quantization"]
    return {"artifact": str(root / "artifacts" / spec["variant"]), "peak_gpu_bytes": q["peak_gpu_bytes"],
            "processes": q["processes"], "peak_gpu_bytes_per_process": q.get("peak_gpu_bytes_per_process"),
            "quantize_s": q["wall_seconds"], "device": q["device"], "gpu": q["gpu"],
            "load_check_s": m["load_check"].get("seconds"), "load_check_device": m["load_check"].get("device"),
            "tool_versions": m["tool_versions"]}


def child_raw(spec: dict) -> dict:
    import torch
    from llmcompressor import oneshot
    from transformers import AutoModelForCausalLM, AutoTokenizer

    out = Path(spec["out"]) / spec["variant"]
    tok = AutoTokenizer.from_pretrained(spec["model_dir"], local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(spec["model_dir"], dtype=torch.bfloat16,
                                                 local_files_only=True)
    kwargs = {}
    if spec["calibration_dir"]:
        from datasets import Dataset

        n = spec["seq_len"]
        ds = Dataset.from_parquet(str(Path(spec["calibration_dir"]) / "data.parquet"))
        ds = ds.map(lambda r: tok(r["text"], add_special_tokens=False, truncation=True, max_length=n),
                    remove_columns=ds.column_names)
        kwargs = dict(dataset=ds, num_calibration_samples=len(ds), max_seq_length=n)
    oneshot(model=model, recipe=spec["recipe"], processor=tok, **kwargs)
    model.save_pretrained(out, save_compressed=True)
    tok.save_pretrained(out)
    peak = int(torch.cuda.max_memory_allocated()) if torch.cuda.is_available() else None
    return {"artifact": str(out), "peak_gpu_bytes": peak}


def child(way: str, spec_path: Path) -> None:
    t0 = time.perf_counter()
    spec = json.loads(spec_path.read_text())
    result = {"build": child_build, "qpipe": child_qpipe, "raw": child_raw}[way.split("@")[0]](spec)
    Path(spec["result"]).write_text(json.dumps(result | {"work_s": time.perf_counter() - t0}))


def run_child(way: str, spec: dict, run_dir: Path) -> dict:
    """One run in a fresh process; its wall time from outside, python start and imports included."""
    run_dir.mkdir(parents=True, exist_ok=True)
    spec = spec | {"out": str(run_dir), "result": str(run_dir / "result.json")}
    (run_dir / "spec.json").write_text(json.dumps(spec))
    log = run_dir / "child.log"
    t0 = time.perf_counter()
    with log.open("wb") as fh:
        done = subprocess.run([sys.executable, __file__, "--child", way, str(run_dir / "spec.json")],
                              stdout=fh, stderr=subprocess.STDOUT, env=os.environ | CHILD_ENV)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        tail = log.read_text(errors="replace")[-3000:]
        raise RuntimeError(f"{way} {spec.get('variant', '')} failed (exit {done.returncode}); "
                           f"log {log}:\n{tail}")
    return json.loads((run_dir / "result.json").read_text()) | {"wall_s": wall}


# ------------------------------------------------------------------------------ inputs

def build_model(work: Path, config: Path, seed: int) -> Path:
    """The checkpoint, made once per work directory and config (a stamp says which)."""
    model_dir = work / "model"
    stamp = {"config_sha256": hashlib.sha256(config.read_bytes()).hexdigest(), "seed": seed}
    stamp_path = work / "model.stamp.json"
    if stamp_path.is_file() and json.loads(stamp_path.read_text()).get("key") == stamp:
        return model_dir
    shutil.rmtree(model_dir, ignore_errors=True)
    r = run_child("build", {"model_dir": str(model_dir), "config": str(config), "seed": seed},
                  work / "build")
    stamp_path.write_text(json.dumps({"key": stamp, **r}))
    log(f"model: {r['parameters'] / 1e9:.2f}B parameters, built and saved in {r['wall_s']:.0f} s "
        f"({dir_bytes(model_dir) / 2**30:.1f} GiB)")
    return model_dir


def random_texts(tok, samples: int, seq_len: int, seed: int) -> list[tuple[str, int]]:
    """Texts of random demo-tokenizer tokens that re-tokenize to at least seq_len tokens."""
    import numpy as np

    special = set(tok.all_special_ids) | set(tok.added_tokens_decoder)
    vocab = np.array([i for i in range(len(tok)) if i not in special])
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(samples):
        ids: list[int] = []
        n = 0
        while n < seq_len:
            ids += rng.choice(vocab, size=seq_len - n + 64).tolist()
            text = tok.decode(ids)
            n = len(tok(text, add_special_tokens=False)["input_ids"])
        out.append((text, n))
    return out


def build_calibration(data_dir: Path, set_name: str, samples: int, seq_len: int, seed: int) -> Path:
    """A calibration set in the calibration stage's layout: data.parquet + card.json."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from transformers import AutoTokenizer

    d = data_dir / "calibration" / set_name
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    tok = AutoTokenizer.from_pretrained(TOKENIZER, local_files_only=True)
    rows = random_texts(tok, samples, seq_len, seed)
    pq.write_table(pa.table({
        "id": [f"random-{i:05d}" for i in range(samples)], "source": ["synthetic"] * samples,
        "scenario": ["random_tokens"] * samples, "length_bucket": [f">={seq_len}"] * samples,
        "difficulty": [None] * samples, "n_tokens": [n for _, n in rows], "text": [t for t, _ in rows],
    }), d / "data.parquet", compression="zstd")
    card = {"name": set_name, "samples": samples,
            "content_sha256": hashlib.sha256((d / "data.parquet").read_bytes()).hexdigest(),
            "params": {"set": {"num_samples": samples, "max_seq_len": seq_len, "seed": seed}},
            "source": "synthetic: random token ids of the demo tokenizer (special tokens excluded), "
                      "decoded to text; truncated to max_seq_len tokens when quantizing"}
    (d / "card.json").write_text(json.dumps(card, indent=2) + "\n")
    return d


def specs_for(schemes: list[str], model_dir: Path, data_dir: Path, args) -> dict[str, dict]:
    """Scheme → the variant of params.yaml that runs it; calibration sets built as needed."""
    from pipeline.config import load_params

    params = load_params(REPO / "params.yaml")
    specs, built = {}, {}
    for short in schemes:
        scheme = SCHEMES[short]
        found = [n for n, v in params.variants.items() if v.backend == "llmcompressor" and v.scheme == scheme]
        if not found:
            raise SystemExit(f"params.yaml has no llm-compressor variant of scheme {scheme!r} — fix: add "
                             "one (see README, 'Using your own model and logs')")
        v = params.variants[found[0]]
        calibrated = v.needs_calibration and scheme != "fp8_dynamic"  # as the backend decides
        if v.needs_calibration and v.calibration not in built:
            built[v.calibration] = build_calibration(data_dir, v.calibration, args.samples, args.seq_len,
                                                     args.seed)
        specs[short] = {"variant": found[0], "scheme": scheme, "recipe": str((REPO / v.recipe).resolve()),
                        "model_dir": str(model_dir), "data_dir": str(data_dir), "device": args.device,
                        "seq_len": args.seq_len,
                        "calibration_dir": str(built[v.calibration]) if calibrated else None}
    return specs


# ------------------------------------------------------------------------------ driver

def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def gib(n: int | None) -> str:
    return "-" if n is None else f"{n / 2**30:6.2f}"


def dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and p.name not in MANIFEST_FILES)


def one_run(way: str, short: str, spec: dict, run_dir: Path) -> dict:
    from pipeline.artifacts.manifest import verify

    gpus = int(way.split("@")[1]) if "@" in way else 1
    r = run_child(way, spec | {"gpus": gpus}, run_dir)
    artifact = Path(r.pop("artifact"))
    r |= {"way": way, "scheme": short, "size": dir_bytes(artifact)}
    if way.startswith("qpipe"):
        problems = verify(artifact)
        r["manifest_ok"] = problems == []
        r["manifest_problems"] = [str(p) for p in problems]
    logs = run_dir.parent.parent / "logs"  # the child's whole output outlives its artifact
    logs.mkdir(exist_ok=True)
    shutil.copy(run_dir / "child.log", logs / f"{run_dir.name}.log")
    shutil.rmtree(run_dir, ignore_errors=True)  # 5-9 GB each: the disk holds few
    log(f"{short:<6} {way:<5} wall {r['wall_s']:7.1f} s  peak GPU {gib(r['peak_gpu_bytes'])} GiB  "
        f"size {r['size'] / 2**30:6.2f} GiB" + (f"  quantize {r['quantize_s']:.1f} s  load check "
        f"{r['load_check_s']} s on {r['load_check_device']}  manifest "
        f"{'verified' if r['manifest_ok'] else r['manifest_problems']}" if way.startswith("qpipe") else ""))
    return r


def summarize_gpus(runs: list[dict], schemes: list[str], ways: list[str]) -> list[dict]:
    """Per scheme and GPU count: median wall and quantize time, peak GPU, size, speed-up."""
    rows = []
    for short in schemes:
        row = {"scheme": short}
        for way in ways:
            mine = [r for r in runs if r["scheme"] == short and r["way"] == way]
            if mine:
                row[way] = {"runs": len(mine), "wall_s": statistics.median(r["wall_s"] for r in mine),
                            "quantize_s": statistics.median(r["quantize_s"] for r in mine),
                            "peak_gpu_gib": max((r["peak_gpu_bytes"] or 0) for r in mine) / 2**30,
                            "size_gib": statistics.median(r["size"] for r in mine) / 2**30,
                            "manifest_ok": all(r["manifest_ok"] for r in mine)}
        one = row.get("qpipe@1")
        for way in ways:
            if one and way in row and way != "qpipe@1":
                row[way]["speedup_wall"] = one["wall_s"] / row[way]["wall_s"]
                row[way]["speedup_quantize"] = one["quantize_s"] / row[way]["quantize_s"]
        rows.append(row)
    return rows


def print_gpus_table(rows: list[dict], ways: list[str], args, env: dict) -> None:
    print(f"\n{env['gpu']}; " + ", ".join(f"{k} {v}" for k, v in env["versions"].items()))
    print(f"{args.samples} samples × {args.seq_len} tokens; {args.repeats} alternated run(s) per way "
          "(median); all through qpipe\n")
    print("| scheme | GPUs | wall s | quantize s | speed-up vs 1 GPU (wall, quantize) | peak GPU GiB "
          "(largest process) | size GiB | manifest |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        for way in ways:
            if way not in r:
                continue
            w = r[way]
            up = (f"{w['speedup_wall']:.2f}×, {w['speedup_quantize']:.2f}×" if "speedup_wall" in w else "—")
            print(f"| {r['scheme']} | {way.split('@')[1]} | {w['wall_s']:.1f} | {w['quantize_s']:.1f} | {up} "
                  f"| {w['peak_gpu_gib']:.2f} | {w['size_gib']:.2f} | "
                  f"{'verified' if w['manifest_ok'] else 'MISMATCH'} |")


def summarize(runs: list[dict], schemes: list[str]) -> list[dict]:
    rows = []
    for short in schemes:
        row = {"scheme": short}
        for way in WAYS:
            mine = [r for r in runs if r["scheme"] == short and r["way"] == way]
            if not mine:
                break
            row[way] = {"runs": len(mine), "wall_s": statistics.median(r["wall_s"] for r in mine),
                        "peak_gpu_gib": max((r["peak_gpu_bytes"] or 0) for r in mine) / 2**30,
                        "size_gib": statistics.median(r["size"] for r in mine) / 2**30}
        else:
            q = [r for r in runs if r["scheme"] == short and r["way"] == "qpipe"]
            row["qpipe"] |= {"quantize_s": statistics.median(r["quantize_s"] for r in q),
                             "load_check_s": statistics.median(r["load_check_s"] or 0 for r in q),
                             "manifest_ok": all(r["manifest_ok"] for r in q)}
            row["ratio"] = row["qpipe"]["wall_s"] / row["raw"]["wall_s"]
            rows.append(row)
    return rows


def print_table(rows: list[dict], args, env: dict) -> None:
    print(f"\n{env['gpu']}; " + ", ".join(f"{k} {v}" for k, v in env["versions"].items()))
    print(f"{args.samples} samples × {args.seq_len} tokens; {args.repeats} alternated run(s) per way "
          f"(median); qpipe / raw goal ≤ {GOAL}\n")
    print("| scheme | qpipe s | raw s | qpipe/raw | peak GPU GiB qpipe / raw | size GiB qpipe / raw "
          "| qpipe: quantize s, load check s | manifest |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        q, w = r["qpipe"], r["raw"]
        print(f"| {r['scheme']} | {q['wall_s']:.1f} | {w['wall_s']:.1f} | {r['ratio']:.3f}"
              f"{' ✓' if r['ratio'] <= GOAL else ' ✗'} | {q['peak_gpu_gib']:.2f} / {w['peak_gpu_gib']:.2f} "
              f"| {q['size_gib']:.2f} / {w['size_gib']:.2f} | {q['quantize_s']:.1f}, {q['load_check_s']:.1f} "
              f"| {'verified' if q['manifest_ok'] else 'MISMATCH'} |")
    print("\nwall: the whole child process, python start and imports included. qpipe's quantize "
          "(model load + oneshot + save) is inside it; so are its load check, base-model and "
          "artifact hashing and manifest.")


def environment() -> dict:
    versions = {}
    for name in VERSIONS:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = "not installed" if name != "qpipe" else __import__("pipeline").__version__
    try:
        gpu = subprocess.run(["nvidia-smi", "--query-gpu=name,memory.total,driver_version",
                              "--format=csv,noheader"], capture_output=True, text=True, timeout=30
                             ).stdout.strip().replace("\n", " | ")
    except (OSError, subprocess.TimeoutExpired):
        gpu = "no nvidia-smi"
    return {"gpu": gpu, "versions": versions, "python": sys.version.split()[0]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--schemes", default="gptq,fp8", help=f"comma-separated, of {', '.join(SCHEMES)}")
    ap.add_argument("--samples", type=int, default=128, help="calibration samples")
    ap.add_argument("--seq-len", type=int, default=2048, help="tokens per calibration sample")
    ap.add_argument("--repeats", type=int, default=1, help="runs per scheme and way (alternated)")
    ap.add_argument("--device", default="cuda", help="qpipe's quantize.device for its runs")
    ap.add_argument("--seed", type=int, default=0, help="weights and calibration texts")
    ap.add_argument("--config", type=Path, default=CONFIG,
                    help="model architecture (a smaller one makes a quick smoke test)")
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/qpipe-gpu-bench"),
                    help="model, calibration set and scratch artifacts (needs ~40 GB free)")
    ap.add_argument("--json", type=Path, default=None, help="also write every run and the summary here")
    ap.add_argument("--ways", default=",".join(WAYS), help="qpipe,raw (default), or one of them: "
                    "the two sides of a pair in separate calls when one call cannot hold both")
    ap.add_argument("--gpus", default=None, help="e.g. 2,1: compare qpipe over that many GPUs "
                    "(quantize.gpus) instead of qpipe with raw")
    ap.add_argument("--child", nargs=2, metavar=("WAY", "SPEC"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(args.child[0], Path(args.child[1]))
        return 0
    schemes = [s.strip() for s in args.schemes.split(",") if s.strip()]
    unknown = [s for s in schemes if s not in SCHEMES]
    if unknown or args.repeats < 1 or args.samples < 1 or args.seq_len < 1:
        ap.error(f"unknown scheme(s) {unknown}; choose from {', '.join(SCHEMES)}" if unknown
                 else "--repeats, --samples and --seq-len must be positive")

    env = environment()
    log(f"{env['gpu']}; {env['versions']}")
    args.workdir = args.workdir.resolve()  # children run elsewhere
    args.workdir.mkdir(parents=True, exist_ok=True)
    model_dir = build_model(args.workdir, args.config.resolve(), args.seed)
    t0 = time.perf_counter()
    specs = specs_for(schemes, model_dir, args.workdir / "data", args)
    log(f"calibration set: {args.samples} × {args.seq_len} tokens in {time.perf_counter() - t0:.0f} s")
    ways = tuple(w.strip() for w in args.ways.split(",") if w.strip())
    if not ways or set(ways) - set(WAYS):
        ap.error(f"--ways takes {', '.join(WAYS)} (one or both)")
    if args.gpus:
        counts = [int(g) for g in args.gpus.split(",") if g.strip()]
        if not counts or min(counts) < 1:
            ap.error("--gpus takes positive GPU counts, e.g. 2,1")
        ways = tuple(f"qpipe@{g}" for g in counts)
    runs, failed = [], []

    def record(rows=None) -> None:
        if args.json:  # after every run: a call cut short keeps what it measured
            args.json.write_text(json.dumps({"environment": env, "args": {k: _shown(v) for k, v in vars(args).items()},
                                             "runs": runs, "summary": rows, "failed": failed}, indent=2) + "\n")

    for i in range(args.repeats):
        for short in schemes:
            for way in (ways if i % 2 == 0 else ways[::-1]):  # A B, then B A: neither always first
                try:
                    runs.append(one_run(way, short, specs[short], args.workdir / "runs" / f"{short}-{i}-{way}"))
                except RuntimeError as err:
                    failed.append(f"{short} {way}: {err}")
                    log(f"FAILED {short} {way}: {err}")
                record()
    if args.gpus:
        rows = summarize_gpus(runs, schemes, list(ways))
        print_gpus_table(rows, list(ways), args, env)
        ok = all(w.get("manifest_ok", True) for r in rows for w in r.values() if isinstance(w, dict))
    else:
        rows = summarize(runs, schemes)
        print_table(rows, args, env)
        ok = all(r["qpipe"]["manifest_ok"] for r in rows)
    record(rows)
    if failed:
        print("\nfailed:\n" + "\n".join(failed), file=sys.stderr)
    return 1 if failed or not ok else 0

if __name__ == "__main__":
    sys.exit(main())
