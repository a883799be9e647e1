"""Is the harness the bottleneck? Our single-stream throughput against the engine's own figure for
the same requests, in one run (goal: ratio >= 0.95).

- llama.cpp: the server's own per-request timings (prompt + decode ms, reported in each final
  stream event), and llama-bench's decode rate on the same file for reference;
- vLLM: its Prometheus counters (/metrics): generated tokens over summed end-to-end request time.

    python benchmarks/harness_vs_engine.py --variants baseline,gguf_q4_k_m_business --requests 16

Prints one row per variant: harness tok/s, engine tok/s, ratio. Artifacts must exist
(`dvc repro quantize@<variant>`).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pipeline.config import load_params  # noqa: E402
from pipeline.bench.stage import bench_prompts  # noqa: E402
from pipeline.evaluate.harness import run_prompts  # noqa: E402
from pipeline.evaluate.stage import PARAMS, open_engine  # noqa: E402
from pipeline.layout import Layout  # noqa: E402
from pipeline.llamacpp_tools import locate  # noqa: E402
from pipeline.models import load_tokenizer  # noqa: E402


def prom(engine, name: str) -> float:
    text = engine._client.get("/metrics").text  # noqa: SLF001
    return sum(float(m.group(1)) for m in re.finditer(rf"^{re.escape(name)}(?:{{[^}}]*}})? (\S+)$",
                                                      text, re.M))


def llama_bench(gguf: Path, n_in: int, n_out: int) -> float | None:
    out = subprocess.run([locate().tool("llama-bench"), "-m", str(gguf), "-p", str(n_in),
                          "-n", str(n_out), "-t", "1", "-o", "json"], capture_output=True, text=True)
    try:
        rows = json.loads(out.stdout)
    except ValueError:
        return None
    tg = [r["avg_ts"] for r in rows if r.get("n_gen", 0) > 0]
    return tg[0] if tg else None


def measure(params, name: str, prompts, n_out: int, logs: Path) -> dict:
    eng = open_engine(params.for_stage(PARAMS, name), Layout(ROOT, params), name, logs / f"{name}.log")
    with eng:
        run_prompts(eng, prompts[:2], max_tokens=n_out, concurrency=1, ignore_eos=True)  # warm-up
        before = {}
        if eng.name == "vllm":
            before = {k: prom(eng, k) for k in ("vllm:generation_tokens_total",
                                                "vllm:e2e_request_latency_seconds_sum")}
        done, wall = run_prompts(eng, prompts, max_tokens=n_out, concurrency=1, ignore_eos=True)
        tokens = sum(c.output_tokens for c in done)
        row = {"variant": name, "engine": eng.name, "harness_tps": tokens / wall}
        if eng.name == "llamacpp":
            ms = sum(c.engine_timings["prompt_ms"] + c.engine_timings["predicted_ms"] for c in done)
            row["engine_tps"] = sum(c.engine_timings["predicted_n"] for c in done) / (ms / 1000)
            row["engine_source"] = "llama-server timings (prompt + decode)"
            from pipeline.engines.llamacpp import gguf_file
            row["llama_bench_tg_tps"] = llama_bench(gguf_file(eng.artifact), len(prompts[0]), n_out)
        elif eng.name == "vllm":
            gen = prom(eng, "vllm:generation_tokens_total") - before["vllm:generation_tokens_total"]
            lat = (prom(eng, "vllm:e2e_request_latency_seconds_sum")
                   - before["vllm:e2e_request_latency_seconds_sum"])
            row["engine_tps"] = gen / lat if lat else None
            row["engine_source"] = "vLLM /metrics (generated tokens / e2e request seconds)"
        else:
            row["engine_tps"], row["engine_source"] = None, f"{eng.name} reports no figure"
    if row.get("engine_tps"):
        row["ratio"] = row["harness_tps"] / row["engine_tps"]
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--params", default=str(ROOT / "params.yaml"))
    ap.add_argument("--variants", default="baseline,gguf_q4_k_m_business")
    ap.add_argument("--requests", type=int, default=16)
    ap.add_argument("--input-len", type=int, default=128)
    ap.add_argument("--output-len", type=int, default=64)
    args = ap.parse_args()
    params = load_params(args.params)
    tok = load_tokenizer(ROOT / params.model.path)
    prompts = bench_prompts(tok, args.requests, args.input_len)
    logs = ROOT / "logs" / "harness_vs_engine"
    logs.mkdir(parents=True, exist_ok=True)
    print("| variant | engine | harness tok/s | engine tok/s | harness/engine | engine figure | "
          "llama-bench tg tok/s |")
    print("|---|---|---|---|---|---|---|")
    for name in args.variants.split(","):
        r = measure(params, name.strip(), prompts, args.output_len, logs)
        fmt = lambda x: f"{x:.1f}" if isinstance(x, float) else "—"  # noqa: E731
        print(f"| {r['variant']} | {r['engine']} | {fmt(r['harness_tps'])} | {fmt(r.get('engine_tps'))} | "
              f"{r['ratio']:.3f} | {r['engine_source']} | {fmt(r.get('llama_bench_tg_tps'))} |"
              if r.get("ratio") else f"| {r['variant']} | {r['engine']} | {fmt(r['harness_tps'])} | — | — | "
              f"{r['engine_source']} | — |", flush=True)


if __name__ == "__main__":
    main()
