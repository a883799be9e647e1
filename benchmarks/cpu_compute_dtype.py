"""What computing in float32 instead of the checkpoint's bfloat16 buys on this CPU, as ratios
measured in one run: one matmul, the demo model's forward pass, and (with --calibration) one
llm-compressor quantization made both ways through the real backend.

    python benchmarks/cpu_compute_dtype.py
    python benchmarks/cpu_compute_dtype.py --calibration data/calibration/business \
        --scheme w8a8_int8 --recipe recipes/w8a8_int8.yaml      # after `dvc repro`

On a CPU with oneDNN's bfloat16 kernels (AVX-512, AMX) the pipeline computes in bfloat16 and the
ratios are near 1 or below; on an AVX2-only CPU torch runs scalar code for bfloat16 and the
pipeline computes in float32 (pipeline/models.py `cpu_compute_dtype`). Figures are the best of
`--repeats` runs; the machine's other load shows in them.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def best(fn, repeats: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def matmul(dtype, repeats: int) -> float:
    import torch

    a, b = torch.randn(512, 1024, dtype=dtype), torch.randn(1024, 4096, dtype=dtype)
    return best(lambda: a @ b, repeats)


def forward(model_dir: Path, dtype, repeats: int) -> float:
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=dtype, local_files_only=True).eval()
    ids = torch.randint(5, 1000, (8, 512), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        return best(lambda: model(ids), repeats)


def quantize(model_dir: Path, calibration: Path, scheme: str, recipe: Path, native: bool) -> float:
    import pipeline.models
    from pipeline.quantize.base import QuantizeRequest
    from pipeline.quantize.llmcompressor import LlmCompressorBackend

    saved = pipeline.models.native_cpu_dtype
    pipeline.models.native_cpu_dtype = lambda dtype: native
    try:
        with tempfile.TemporaryDirectory(prefix="qpipe-bench-dtype-") as tmp:
            req = QuantizeRequest(variant="bench", scheme=scheme, model_dir=model_dir,
                                  out_dir=Path(tmp) / "out", recipe=recipe,
                                  calibration_dir=calibration)
            t = time.perf_counter()
            LlmCompressorBackend().quantize(req)
            return time.perf_counter() - t
    finally:
        pipeline.models.native_cpu_dtype = saved


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", type=Path, default=REPO / "models" / "demo")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--calibration", type=Path, help="a calibration set folder (data/calibration/<set>)")
    ap.add_argument("--scheme", default="w4a16_gptq")
    ap.add_argument("--recipe", type=Path, default=REPO / "recipes" / "gptq_w4a16.yaml")
    args = ap.parse_args()

    import torch

    from pipeline.engines.vllm import cpu_name
    from pipeline.models import cpu_compute_dtype, native_cpu_dtype

    print(f"CPU: {cpu_name()}; torch {torch.__version__}, capability "
          f"{torch.backends.cpu.get_cpu_capability()}")
    print(f"native bfloat16 kernels: {native_cpu_dtype('bfloat16')}, float16: "
          f"{native_cpu_dtype('float16')} -> the pipeline computes bfloat16 checkpoints in "
          f"{cpu_compute_dtype('bfloat16')}")
    rows = [("matmul 512x1024 @ 1024x4096", matmul(torch.bfloat16, args.repeats),
             matmul(torch.float32, args.repeats))]
    rows.append(("demo model forward, 8 x 512 tokens", forward(args.model, torch.bfloat16, args.repeats),
                 forward(args.model, torch.float32, args.repeats)))
    if args.calibration:
        rows.append((f"llm-compressor {args.scheme} (one run each)",
                     quantize(args.model, args.calibration, args.scheme, args.recipe, True),
                     quantize(args.model, args.calibration, args.scheme, args.recipe, False)))
    print(f"{'':40s} {'bfloat16 s':>11s} {'float32 s':>10s} {'bf16/fp32':>10s}")
    for what, bf16, fp32 in rows:
        print(f"{what:40s} {bf16:11.3f} {fp32:10.3f} {bf16 / fp32:10.1f}")


if __name__ == "__main__":
    main()
