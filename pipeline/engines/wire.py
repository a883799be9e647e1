"""What an engine answers and how it fails: a `Completion` with the timing the client saw, the
`EngineInfo` it reports about itself, `EngineError`; and the reader of an OpenAI-style streamed
completion (POST /v1/completions, server-sent events) that every HTTP engine shares."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

import httpx

from pipeline.errors import QpipeError


class EngineError(QpipeError, RuntimeError):
    """An engine is missing, died, or did not answer; the message carries its log tail."""


@dataclass(frozen=True)
class Completion:
    text: str
    output_tokens: int
    prompt_tokens: int
    latency: float               # seconds, request sent → last token received
    ttft: float | None = None    # seconds, request sent → first token received
    finish_reason: str | None = None
    engine_timings: dict[str, Any] | None = None  # what the engine says about itself


@dataclass
class EngineInfo:
    name: str
    version: str | None = None
    kernel: str | None = None        # the linear/matmul kernel the engine chose, from its log
    serving: bool = True             # False: a reference engine, kept out of speed comparisons
    details: dict[str, Any] = field(default_factory=dict)



def stream_completion(engine: Any, body: dict[str, Any]) -> Completion:
    """POST /v1/completions with stream=True; parse server-sent events into a Completion."""
    client: httpx.Client = engine._client  # noqa: SLF001 (the engine's own connection)
    text, ttft, usage, finish, timings, chunks = [], None, None, None, None, 0
    t0 = time.perf_counter()
    try:
        with client.stream("POST", "/v1/completions", json=body) as resp:
            if resp.status_code != 200:
                resp.read()
                check_alive(engine, "mid-run")
                raise EngineError(f"{engine.name} answered HTTP {resp.status_code}: "
                                  f"{resp.text[:500]}; log tail:\n{engine.log_tail()}")
            for line in resp.iter_lines():
                if not line.startswith("data:"):
                    continue
                data = line[5:].strip()
                if data == "[DONE]":
                    break
                try:
                    event = json.loads(data)
                except ValueError as err:
                    raise EngineError(f"{engine.name} sent a stream event that is not JSON "
                                      f"({err}): {data[:200]!r}; log tail:\n"
                                      f"{engine.log_tail()}") from err
                for choice in event.get("choices") or []:
                    if choice.get("text"):
                        if ttft is None:
                            ttft = time.perf_counter() - t0
                        text.append(choice["text"])
                        chunks += 1
                    finish = choice.get("finish_reason") or finish
                usage = event.get("usage") or usage
                timings = event.get("timings") or timings
    except httpx.HTTPError as err:
        check_alive(engine, "mid-run")
        raise EngineError(f"{engine.name} request failed: {err!r}; log tail:\n"
                          f"{engine.log_tail()}") from err
    latency = time.perf_counter() - t0
    out_tokens = (usage or {}).get("completion_tokens", chunks)
    return Completion("".join(text), int(out_tokens), int((usage or {}).get("prompt_tokens", len(
        body["prompt"]))), latency, ttft, finish, timings)


def check_alive(engine: Any, when: str) -> None:
    """An engine that died says so with its exit code (more useful than the HTTP error)."""
    check = getattr(engine, "check_alive", None)
    if check:
        check(when)
