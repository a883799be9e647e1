"""Replaying traffic through GuideLLM (the vLLM project's load generator), run from its own locked
environment (scripts/setup-guidellm.sh) as a subprocess: one scenario per replay, its JSON report
read back as per-request timings.

The engine's API key reaches GuideLLM through the subprocess's environment, never its command
line or the scenario file; the scenario and the report are kept beside the results.
"""

from __future__ import annotations

import functools
import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

from pipeline.errors import QpipeError
from pipeline.io import write_json
from pipeline.processes import die_with_parent, signal_group

ROOT = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).with_name("guidellm_driver.py")


class LoadgenError(QpipeError, RuntimeError):
    pass


def loadgen_python(configured: str | None) -> str:
    """GuideLLM's interpreter: params (serving.loadgen_python), QPIPE_GUIDELLM_PYTHON, or the
    set-up's (made if missing)."""
    return configured or os.environ.get("QPIPE_GUIDELLM_PYTHON") or _setup_python()


@functools.cache
def _setup_python() -> str:
    script = ROOT / "scripts" / "setup-guidellm.sh"
    try:
        out = subprocess.run(["bash", str(script)], capture_output=True, text=True, check=True, timeout=3600)
    except subprocess.CalledProcessError as err:
        raise LoadgenError(f"GuideLLM's environment could not be made ({script}):\n{err.stderr[-2000:]}") from err
    return out.stdout.strip().splitlines()[-1]


def scenario(target: str, data: Path | dict[str, Any], tokenizer_dir: Path, profile: dict[str, Any], requests: int,
             report: Path, seed: int) -> dict[str, Any]:
    """The GuideLLM scenario of one replay: raw text completions (the prompt already carries the
    chat template, so both configurations get byte-identical requests), greedy, no prompt cache,
    each request's output length forced to its logged answer's (GuideLLM sends ignore_eos)."""
    return {"spec": {
        "backend": {"kind": "openai_http", "target": target, "model": "model",
                    "request_format": "/v1/completions", "http2": False,
                    "extras": {"body": {"temperature": 0, "top_k": 1, "cache_prompt": False}}},
        "profile": profile,
        # a file of requests, or a generator's spec (synthetic text)
        "data": [data if isinstance(data, dict) else {"kind": "json_file", "path": str(data)}],
        "tokenizer": {"kind": "hf_auto", "model": str(tokenizer_dir)},
        "constraints": [{"kind": "max_requests", "count": requests}],
        "seed": {"kind": "static", "value": seed},
        "outputs": [{"kind": "json", "path": str(report)}]}}


def run(python: str, spec: dict[str, Any], folder: Path, name: str, api_key: str | None,
        timeout: float = 1800) -> dict[str, Any]:
    """Run one scenario (kept as `<name>.scenario.json`; the report as `<name>.json`) and return
    its first benchmark from the report."""
    return run_all(python, spec, folder, name, api_key, timeout)[0]


def run_all(python: str, spec: dict[str, Any], folder: Path, name: str, api_key: str | None,
            timeout: float = 1800) -> list[dict[str, Any]]:
    """Run one scenario and return every benchmark of its report (one per rate or concurrency
    level of its profile), in the profile's order."""
    path = folder / f"{name}.scenario.json"
    write_json(path, spec)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "GUIDELLM__LOGGING__CONSOLE_LOG_LEVEL": "WARNING"}
    if api_key:
        env["QPIPE_LOADGEN_API_KEY"] = api_key
    # a session of its own that dies with this process; its worker processes with it, whatever ends
    # the call (its end, a timeout, Ctrl-C, SIGTERM): nothing keeps sending requests afterwards
    proc = subprocess.Popen([python, str(DRIVER), str(path)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, preexec_fn=die_with_parent)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        signal_group(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        (folder / f"{name}.log").write_text(out or "", encoding="utf-8")
        raise LoadgenError(f"GuideLLM's replay {name} ran past {timeout:.0f} s and was stopped; its log: "
                           f"{folder / (name + '.log')}") from None
    finally:
        signal_group(proc.pid, signal.SIGKILL)
        proc.wait()
    (folder / f"{name}.log").write_text(out or "", encoding="utf-8")
    report = Path(spec["spec"]["outputs"][0]["path"])
    if proc.returncode != 0 or not report.is_file():
        raise LoadgenError(f"GuideLLM's replay {name} failed (exit {proc.returncode}); its log: "
                           f"{folder / (name + '.log')}:\n{out[-1500:]}")
    benchmarks = json.loads(report.read_text(encoding="utf-8"))["benchmarks"]
    if not benchmarks:
        raise LoadgenError(f"GuideLLM's replay {name} reported no benchmark; its log: {folder / (name + '.log')}")
    return benchmarks


def version(python: str) -> str:
    """GuideLLM's version in the environment of `python`, as reports state it."""
    got = subprocess.run([python, "-c", "from importlib.metadata import version; print(version('guidellm'))"],
                         capture_output=True, text=True)
    return f"guidellm {got.stdout.strip()}" if got.returncode == 0 else "guidellm (version unknown)"


def requests_of(benchmark: dict[str, Any]) -> list[dict[str, Any]]:
    """Each successful request's timings in seconds, in the order they were sent."""
    out = []
    for r in benchmark["requests"]["successful"]:
        out.append({"start": r["request_start_time"], "end": r["request_end_time"],
                    "e2e_s": r["request_latency"], "ttft_s": _seconds(r.get("time_to_first_token_ms")),
                    "tpot_s": _seconds(r.get("time_per_output_token_ms")),
                    "itl_s": _seconds(r.get("inter_token_latency_ms")),
                    "prompt_tokens": r.get("prompt_tokens"), "output_tokens": r.get("output_tokens"),
                    "dispatch_delay_s": r.get("request_dispatch_delay")})
    return sorted(out, key=lambda r: r["start"])


def schedule_problem(benchmark: dict[str, Any], rate: float) -> str | None:
    """Why a Poisson replay did not send its requests on their schedule, or None. An open-loop
    generator that falls behind (or starts its clock late) sends the overdue requests at once: a
    burst the traffic never had, which would be measured as the engine's long tail."""
    reqs = requests_of(benchmark)
    delays = sorted(r["dispatch_delay_s"] for r in reqs if r["dispatch_delay_s"] is not None)
    if delays and (delays[len(delays) // 2] > 0.05 or delays[-1] > max(1.0, 2 / rate)):
        return (f"requests left up to {delays[-1]:.3g} s after their scheduled time "
                f"(median {delays[len(delays) // 2]:.3g} s)")
    span = max(r["start"] for r in reqs) - min(r["start"] for r in reqs) if len(reqs) > 1 else 0.0
    expected = (len(reqs) - 1) / rate
    if span < 0.5 * expected:
        return f"{len(reqs)} requests sent over {span:.2f} s where the schedule spans about {expected:.1f} s"
    return None


def _seconds(ms: float | None) -> float | None:
    return None if ms is None else ms / 1000


def failed_count(benchmark: dict[str, Any]) -> int:
    reqs = benchmark["requests"]
    return len(reqs.get("errored") or []) + len(reqs.get("incomplete") or [])


def achieved_rate(benchmark: dict[str, Any]) -> float:
    """Requests completed per second over the benchmark's measured window."""
    reqs = requests_of(benchmark)
    if len(reqs) < 2:
        raise LoadgenError("a saturation run completed fewer than two requests")
    span = max(r["end"] for r in reqs) - min(r["start"] for r in reqs)
    if span <= 0:
        raise LoadgenError("a saturation run's requests took no measurable time")
    return len(reqs) / span
