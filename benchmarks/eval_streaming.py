"""What does streaming cost the evaluation? The business evaluation set sent to one started engine
as the harness sends it (streamed server-sent events, so each record has its time to first
token) and as plain responses, alternated in one engine run, with the outputs compared.

    python benchmarks/eval_streaming.py --variant baseline --rounds 2

Prints one line per pass (mode, seconds) and then the ratio of the medians and how many outputs
were identical. The variant's artifact and the evaluation set must exist (`dvc repro
quantize@<variant> split`). Pin it to one CPU (`taskset -c 1`) to see the share a stage gets
under `qpipe repro --jobs 2`.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pipeline.config import load_params  # noqa: E402
from pipeline.engines.base import Completion, EngineError  # noqa: E402
from pipeline.evaluate.harness import load_evalset, render, run_prompts  # noqa: E402
from pipeline.evaluate.stage import PARAMS, open_engine  # noqa: E402
from pipeline.layout import Layout  # noqa: E402
from pipeline.models import load_tokenizer  # noqa: E402


def plain(engine, prompt_ids: list[int], max_tokens: int, *, ignore_eos: bool = False) -> Completion:
    """The harness's request without `stream`: one JSON answer, no time to first token."""
    body = {"model": engine.served_name(), "prompt": prompt_ids, "max_tokens": max_tokens,
            "temperature": 0.0, "top_p": 1.0, "seed": 0, "stream": False,
            **engine.request_extras(ignore_eos)}
    t0 = time.perf_counter()
    resp = engine._client.post("/v1/completions", json=body)  # noqa: SLF001
    if resp.status_code != 200:
        raise EngineError(f"{engine.name} answered HTTP {resp.status_code}: {resp.text[:300]}")
    data = resp.json()
    choice = data["choices"][0]
    return Completion(choice["text"], data["usage"]["completion_tokens"],
                      data["usage"]["prompt_tokens"], time.perf_counter() - t0, None,
                      choice.get("finish_reason"), data.get("timings"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variant", default="baseline")
    ap.add_argument("--rounds", type=int, default=2, help="passes of each mode, alternated")
    ap.add_argument("--params", type=Path, default=ROOT / "params.yaml")
    args = ap.parse_args()

    params = load_params(args.params)
    layout = Layout(ROOT, params)
    ev = params.evaluate
    prompts = render(load_tokenizer(layout.model), load_evalset(layout.evalset).items)
    with tempfile.TemporaryDirectory(prefix="qpipe-eval-streaming-") as tmp:
        eng = open_engine(params.for_stage(PARAMS, args.variant), layout, args.variant,
                          Path(tmp) / "engine.log")
        streamed = eng.complete
        seconds: dict[str, list[float]] = {"streamed": [], "plain": []}
        outputs: dict[str, list[str]] = {}
        with eng:
            run_prompts(eng, prompts[: ev.warmup or 8], max_tokens=ev.max_tokens,
                        concurrency=ev.concurrency)
            for _ in range(args.rounds):
                for mode in ("streamed", "plain"):
                    eng.complete = streamed if mode == "streamed" else plain.__get__(eng)
                    done, wall = run_prompts(eng, prompts, max_tokens=ev.max_tokens,
                                             concurrency=ev.concurrency)
                    seconds[mode].append(wall)
                    outputs.setdefault(mode, [c.text for c in done])
                    print(f"{args.variant} on {eng.name}: {mode} {len(prompts)} requests in "
                          f"{wall:.1f} s", flush=True)
    same = sum(a == b for a, b in zip(outputs["streamed"], outputs["plain"], strict=True))
    ratio = statistics.median(seconds["streamed"]) / statistics.median(seconds["plain"])
    print(f"streamed / plain: ×{ratio:.3f} of the time; {same} of {len(prompts)} outputs identical")


if __name__ == "__main__":
    main()
