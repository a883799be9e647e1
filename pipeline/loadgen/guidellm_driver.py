"""Run one GuideLLM scenario (`python guidellm_driver.py scenario.json`) inside the load
generator's own environment (scripts/setup-guidellm.sh): it imports GuideLLM, never `pipeline`.

The engine's per-run API key comes from the environment (QPIPE_LOADGEN_API_KEY), so that it never
appears on a command line or in the scenario file written beside the results."""

from __future__ import annotations

import asyncio
import json
import os
import sys

from guidellm import entrypoints
from guidellm.schemas.benchmark import BenchmarkScenario


def main(path: str) -> None:
    with open(path, encoding="utf-8") as fh:
        scenario = json.load(fh)
    key = os.environ.pop("QPIPE_LOADGEN_API_KEY", None)
    args = BenchmarkScenario.model_validate(scenario)  # an error here cannot print the key
    if key:
        scenario["spec"]["backend"]["api_key"] = key
        args = BenchmarkScenario.model_validate(scenario)
    asyncio.run(entrypoints.benchmark_generative_text(args=args, progress=False, console=None))


if __name__ == "__main__":
    main(sys.argv[1])
