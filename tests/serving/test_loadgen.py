"""Reading GuideLLM's report: per-request timings in seconds, in the order sent, and a replay that
did not keep its Poisson schedule (a burst of overdue requests) is named, not measured."""

import numpy as np
import pytest

from pipeline.loadgen.guidellm_runs import achieved_rate, requests_of, schedule_problem


def report(starts, delays, latency=0.05):
    reqs = [{"request_start_time": s, "request_end_time": s + latency, "request_latency": latency,
             "time_to_first_token_ms": 10.0, "time_per_output_token_ms": 2.0, "inter_token_latency_ms": 1.5,
             "prompt_tokens": 80, "output_tokens": 12, "request_dispatch_delay": d}
            for s, d in zip(starts, delays)]
    return {"requests": {"successful": reqs[::-1], "errored": [], "incomplete": []}}


def test_timings_are_seconds_in_the_order_sent():
    got = requests_of(report([0.0, 1.0, 2.0], [0.001] * 3))
    assert [r["start"] for r in got] == [0.0, 1.0, 2.0]
    assert got[0]["ttft_s"] == 0.010 and got[0]["tpot_s"] == 0.002 and got[0]["itl_s"] == 0.0015
    assert achieved_rate(report([0.0, 1.0, 2.0], [0.0] * 3)) == 3 / 2.05


def test_a_replay_on_its_schedule_is_kept_and_a_burst_is_named():
    rng = np.random.default_rng(0)
    rate, n = 20.0, 300
    starts = np.cumsum(rng.exponential(1 / rate, n))
    assert schedule_problem(report(starts, rng.uniform(0, 0.01, n)), rate) is None
    # a clock started late: every request overdue, all sent at once
    burst = schedule_problem(report(np.linspace(0, 0.4, n), np.full(n, 1.8e9)), rate)
    assert burst is not None and "after their scheduled time" in burst
    # small delays, but the requests went out over a fraction of the schedule's span
    squeezed = schedule_problem(report(starts / 4, np.full(n, 0.001)), rate)
    assert squeezed is not None and "sent over" in squeezed


def test_the_load_generator_and_its_workers_end_with_the_call(tmp_path):
    """A replay cut short (here by its timeout; Ctrl-C and SIGTERM take the same path) takes the
    load generator's whole process group with it: nothing keeps sending requests."""
    import os
    import time

    from pipeline.loadgen.guidellm_runs import LoadgenError, run

    fake = tmp_path / "python"
    fake.write_text(f"#!/bin/sh\nsleep 60 &\necho $$ $! > {tmp_path / 'pids'}\nsleep 60\n")
    fake.chmod(0o755)
    spec = {"spec": {"outputs": [{"path": str(tmp_path / "report.json")}]}}
    with pytest.raises(LoadgenError, match="ran past 1 s"):
        run(str(fake), spec, tmp_path, "cut", api_key=None, timeout=1.0)
    assert (tmp_path / "cut.log").is_file()
    pids = [int(p) for p in (tmp_path / "pids").read_text().split()]
    time.sleep(0.2)

    def alive(pid):  # a zombie (not yet reaped by init) is no longer running
        stat = f"/proc/{pid}/stat"
        return os.path.exists(stat) and open(stat).read().rsplit(")", 1)[1].split()[0] != "Z"

    assert len(pids) == 2 and not any(alive(p) for p in pids)


def test_the_driver_sets_the_poisson_offset_before_the_workers_start():
    """In GuideLLM's own environment: when the start event is set (the workers wake and schedule
    from the offset), the offset is already the start time — not the epoch, which sent the first
    requests of a replay at once. Fails against GuideLLM 0.8.1's own order."""
    import subprocess

    from pipeline.loadgen.guidellm_runs import DRIVER, loadgen_python

    try:
        python = loadgen_python(None)
    except Exception as err:  # noqa: BLE001 — no environment here: say so
        pytest.skip(f"GuideLLM's environment is not available: {err}")
    probe = f"""
import multiprocessing, sys
sys.path.insert(0, {str(DRIVER.parent)!r})
import guidellm_driver
from guidellm.scheduler import strategies
seen = []
base = strategies.ThroughputStrategy.init_processes_start
def spy(self, start_time):
    seen.append(self._offset.value)  # what a worker woken now would count from
    base(self, start_time)
strategies.ThroughputStrategy.init_processes_start = spy
s = strategies.AsyncPoissonStrategy(rate=10.0, random_seed=0)
s.init_processes_timings(1, 4, multiprocessing.get_context("spawn"))
s.init_processes_start(1234.5)
print(seen)
"""
    out = subprocess.run([python, "-c", probe], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[1234.5]"


@pytest.mark.slow
def test_constant_and_poisson_arrivals_reach_the_engine_as_configured(served, tmp_path):
    """The same 60 requests from the logs replayed at 10 requests/s against llama-server: with
    `arrivals: constant` they leave at equal gaps (GuideLLM's constant profile), with `poisson` at
    exponential ones — the spread of the gaps tells them apart (coefficient of variation ~0 vs ~1)."""
    from pipeline.evaluate.harness import load_evalset, render
    from pipeline.evaluate.stage import open_engine
    from pipeline.layout import Layout
    from pipeline.loadgen import guidellm_runs as loadgen, traffic
    from pipeline.models import load_tokenizer

    try:
        python = loadgen.loadgen_python(None)
    except Exception as err:  # noqa: BLE001 — no environment here: say so
        pytest.skip(f"GuideLLM's environment is not available: {err}")
    art = "gguf_q4_k_m_business"
    served.artifact(art)
    layout = Layout(served.root, served.params)
    items = load_evalset(layout.evalset).items
    tok = load_tokenizer(layout.model)
    pool = traffic.request_pool(items, render(tok, items), tok, 32)
    drawn, threshold = traffic.draw(pool, 60, None, 0.8, seed=0)
    traffic.write_mix(drawn, tmp_path, "mix", threshold)
    rate, spread = 10.0, {}
    with open_engine(served.params, layout, art, tmp_path / "engine.log") as eng:
        for kind in ("constant", "poisson"):
            spec = loadgen.scenario(f"http://127.0.0.1:{eng.port}", tmp_path / "mix.jsonl", layout.model.resolve(),
                                    {"kind": kind, "rate": [rate]}, 60, tmp_path / f"{kind}.json", seed=0)
            bench = loadgen.run(python, spec, tmp_path, kind, eng.api_key, timeout=300)
            starts = np.array([r["start"] for r in loadgen.requests_of(bench)])
            assert len(starts) == 60 and loadgen.schedule_problem(bench, rate) is None
            gaps = np.diff(starts)
            spread[kind] = float(gaps.std() / gaps.mean())
            assert gaps.mean() == pytest.approx(1 / rate, rel=0.35 if kind == "poisson" else 0.1)
    assert spread["constant"] < 0.25 < 0.6 < spread["poisson"], spread
