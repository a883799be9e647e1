"""Is the load generator the bottleneck? GuideLLM's replay (the upgrade stage's, pipeline/serving)
against llama-server's own figure for the same requests, one request at a time, in one run
(goal: the replay's throughput ≥ 0.95 of the engine's, and per request the engine's time over the
replay's end-to-end latency ≥ 0.95 at the 2nd percentile).

The engine's figure is what the server logs per request (`print_timing`: prompt evaluation +
decoding ms, the tokens decoded); the replay's is what GuideLLM measured for the same request
(end-to-end latency, output tokens). Two request sets:
- `fixed`: prompts of exactly --input-len tokens, --output-len output tokens (EOS ignored), as
  benchmarks/harness_vs_engine.py measures our own harness;
- `traffic`: the upgrade stage's `logs` mix (evaluation-set prompts, the logged answers' lengths).

    python benchmarks/replay_vs_engine.py --params params.yaml --variant gguf_q4_k_m_business --requests 32

Artifacts must exist (`dvc repro quantize@<variant>`); GuideLLM's environment is made if missing.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pipeline.bench.stage import bench_prompts  # noqa: E402
from pipeline.config import load_params  # noqa: E402
from pipeline.evaluate.harness import load_evalset, render  # noqa: E402
from pipeline.evaluate.stage import PARAMS, open_engine  # noqa: E402
from pipeline.layout import Layout  # noqa: E402
from pipeline.models import load_tokenizer  # noqa: E402
from pipeline.loadgen import guidellm_runs as loadgen, traffic  # noqa: E402

TIMING = re.compile(r"task (\d+) \| prompt eval time =\s*([\d.]+) ms.*?\n.*?eval time =\s*([\d.]+) ms /\s*(\d+) tokens",
                    re.S)


def engine_timings(log: Path) -> list[dict]:
    text = log.read_text(errors="replace") if log.suffix != ".gz" else gzip.open(log, "rt").read()
    return [{"task": int(m.group(1)), "ms": float(m.group(2)) + float(m.group(3)), "decoded": int(m.group(4))}
            for m in TIMING.finditer(text)]


def compare(reqs: list[dict], timings: list[dict]) -> dict:
    timings = timings[-len(reqs):]  # the warm-up's requests come first
    per = np.array([t["ms"] / 1000 / r["e2e_s"] for r, t in zip(reqs, timings)])
    replay_tps = sum(r["output_tokens"] for r in reqs) / sum(r["e2e_s"] for r in reqs)
    engine_tps = sum(t["decoded"] for t in timings) / (sum(t["ms"] for t in timings) / 1000)
    matched = sum(r["output_tokens"] == t["decoded"] for r, t in zip(reqs, timings))
    return {"requests": len(reqs), "matched_tokens": matched,
            "replay_tps": round(replay_tps, 1), "engine_tps": round(engine_tps, 1),
            "throughput_ratio": round(replay_tps / engine_tps, 4),
            "per_request_p2": round(float(np.quantile(per, 0.02)), 4),
            "per_request_p50": round(float(np.quantile(per, 0.5)), 4),
            "overhead_ms_p50": round(float(np.quantile([r["e2e_s"] * 1000 - t["ms"] for r, t in zip(reqs, timings)],
                                                       0.5)), 2),
            "e2e_ms_p50": round(float(np.quantile([r["e2e_s"] * 1000 for r in reqs], 0.5)), 2)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--params", default=str(ROOT / "params.yaml"))
    ap.add_argument("--variant", default="gguf_q4_k_m_business")
    ap.add_argument("--requests", type=int, default=32)
    ap.add_argument("--input-len", type=int, default=128)
    ap.add_argument("--output-len", type=int, default=64)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    params_path = Path(args.params).resolve()
    params = load_params(params_path)
    layout = Layout(params_path.parent, params)
    tok = load_tokenizer(layout.model)
    python = loadgen.loadgen_python(params.serving.loadgen_python)
    folder = Path(tempfile.mkdtemp(prefix="replay-vs-engine-"))
    fixed = folder / "fixed.jsonl"
    with fixed.open("w") as fh:
        for ids in bench_prompts(tok, args.requests, args.input_len):
            fh.write(json.dumps({"prompt": tok.decode(ids), "output_tokens_count": args.output_len}) + "\n")
    evalset = load_evalset(layout.evalset)
    pool = traffic.request_pool(evalset.items, render(tok, evalset.items), tok, 256)
    drawn, threshold = traffic.draw(pool, args.requests, None, 0.8, seed=0)
    traffic.write_mix(drawn, folder, "traffic", threshold)
    rows = {}
    for name, data in (("fixed", fixed), ("traffic", folder / "traffic.jsonl")):
        log = folder / f"{name}-engine.log"
        eng = open_engine(params.for_stage(PARAMS, args.variant), layout, args.variant, log)
        with eng:
            spec = loadgen.scenario(f"http://127.0.0.1:{eng.port}", data, layout.model.resolve(),
                                    {"kind": "synchronous"}, args.requests, folder / f"{name}.json", 0)
            reqs = loadgen.requests_of(loadgen.run(python, spec, folder, name, eng.api_key))
        rows[name] = compare(reqs, engine_timings(log)) | {"engine": eng.info().version}
        r = rows[name]
        print(f"{args.variant} {name}: replay {r['replay_tps']} tok/s, engine {r['engine_tps']} tok/s, "
              f"ratio {r['throughput_ratio']}; per request engine/replay P2 {r['per_request_p2']}, "
              f"P50 {r['per_request_p50']}; overhead P50 {r['overhead_ms_p50']} ms of {r['e2e_ms_p50']} ms; "
              f"{r['matched_tokens']}/{r['requests']} token counts matched ({r['engine']})", flush=True)
    if args.json:
        # where the project lay is this machine's business: the model and the variant say what ran
        args.json.write_text(json.dumps({"variant": args.variant, "model": params.model.name, **rows}, indent=2))


if __name__ == "__main__":
    main()
