"""Run one GuideLLM scenario (`python guidellm_driver.py scenario.json`) inside the load
generator's own environment (scripts/setup-guidellm.sh): it imports GuideLLM, never `pipeline`.

The engine's per-run API key comes from the environment (QPIPE_LOADGEN_API_KEY), so that it never
appears on a command line or in the scenario file written beside the results.

GuideLLM 0.8.1's Poisson strategy sets the event that starts its workers before it sets the
offset its arrival times count from (`AsyncPoissonStrategy.init_processes_start`): a worker woken
in between schedules its first requests from the offset's initial -1.0 — the epoch — so they are
all overdue and leave at once, a burst the traffic never had (seen here: 40 to 96 of 300 requests
sent within a few milliseconds, their dispatch delays ~1.8e9 s). `ordered_poisson_start` sets
the offset first; the replays' schedule check (guidellm_runs.schedule_problem) stays.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys

from guidellm import entrypoints
from guidellm.scheduler import strategies
from guidellm.schemas.benchmark import BenchmarkScenario


def ordered_poisson_start(self, start_time: float) -> None:
    """`AsyncPoissonStrategy.init_processes_start` with the offset set before the workers wake."""
    if self._offset is None:
        raise RuntimeError("_offset is None in init_processes_start; was init_processes_timings not called?")
    with self._offset.get_lock():
        self._offset.value = start_time
    strategies.ThroughputStrategy.init_processes_start(self, start_time)  # sets the start event last


strategies.AsyncPoissonStrategy.init_processes_start = ordered_poisson_start


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
