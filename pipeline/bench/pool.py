"""Engines kept started between bench measurements.

Each variant is measured once per round, bracketed by baseline measurements; starting an engine
for every measurement spent most of the stage waiting for start-ups (a vLLM engine takes ~30 s
on 2 CPU cores, a measurement ~15 s). The pool keeps up to `limit` engines started and stops the
least recently used one when another must start, so the schedule's order — and with it the
drift correction of the bracketing baselines — is unchanged while each distinct artifact starts
about once. Idle engines wait on their sockets (measured: ~0.24 CPU-seconds per 10 s for an
idle vLLM on CPU), so they do not load the engine being measured.

Before the first measurement, the engines the schedule needs first (up to `limit`) can start
together (`start_together`): launched at once, their start-ups waited for side by side — what
the measurements would otherwise wait for one after another (three vLLM starts on 2 CPU cores:
~150 s one by one). Nothing is measured while they start.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Callable

from pipeline.engines.base import Engine

log = logging.getLogger(__name__)
MIN_AVAILABLE = 0.3  # share of the host's memory kept free before another engine starts


class EnginePool:
    """``with EnginePool(open_engine, limit) as pool: eng, startup = pool.get(name, log)``;
    ``startup`` is the seconds this call spent starting it (None: it was already serving). At
    most ``limit`` engines serve at once, fewer when the host's free memory runs low."""

    def __init__(self, opener: Callable[[str, Path], Engine], limit: int):
        if limit < 1:
            raise ValueError(f"bench.live_engines must be at least 1, got {limit}")
        self.opener, self.limit = opener, limit
        self.live: OrderedDict[str, Engine] = OrderedDict()
        self.starts = 0
        self.ready_in: dict[str, float] = {}  # started together: seconds to ready, until first used

    def get(self, name: str, log_path: Path) -> tuple[Engine, float | None]:
        if name in self.live:
            self.live.move_to_end(name)
            eng = self.live[name]
            if hasattr(eng, "check_alive"):  # died while idle: fail with its log, as at start
                eng.check_alive("between bench measurements")
            return eng, self.ready_in.pop(name, None)
        while self.live and (len(self.live) >= self.limit or self.memory_low()):
            old, eng = self.live.popitem(last=False)
            log.debug("bench: stopping %s (engine pool full)", old)
            eng.__exit__(None, None, None)
        eng = self.opener(name, log_path)
        t0 = time.time()
        eng.__enter__()
        self.starts += 1
        self.live[name] = eng
        return eng, time.time() - t0

    def start_together(self, wanted: list[tuple[str, Path]]) -> list[str]:
        """Start the engines of `wanted` (name, log) at once, up to `limit` and while the host's
        memory allows: each launched from this thread (the one that keeps them: their
        parent-death signal follows it), then waited for side by side. An engine that is not a
        process started here (an external URL) is left to `get`. A failed start stops them all
        and raises its error. Returns the names started."""
        from pipeline.engines.base import ServerEngine

        todo: list[Engine] = []
        names: list[str] = []
        for name, log_path in wanted:
            if name in self.live or name in names or len(self.live) >= self.limit or self.memory_low():
                continue
            eng = self.opener(name, log_path)
            if not isinstance(eng, ServerEngine) or eng.url:
                continue
            self.live[name] = eng  # stopped by close() whatever happens next
            eng.launch()
            todo.append(eng)
            names.append(name)
        if not todo:
            return []
        t0 = time.time()

        def ready(eng: Engine) -> float:
            eng._wait_ready(float(eng.settings.get("startup_timeout", 600)))  # noqa: SLF001
            return round(time.time() - t0, 2)

        with ThreadPoolExecutor(len(todo)) as waiters:
            futures = [waiters.submit(ready, e) for e in todo]
            done, _ = wait(futures, return_when=FIRST_EXCEPTION)
            first = next((f.exception() for f in futures if f in done and f.exception()), None)
            if first is not None:  # the first to fail: the others are stopped, not waited for
                self.close()
                raise first
        self.ready_in |= {n: f.result() for n, f in zip(names, futures)}
        self.starts += len(todo)
        log.info("bench: %d engines started together in %.1f s (%s)", len(todo),
                 time.time() - t0, ", ".join(names))
        return names

    def memory_low(self) -> bool:
        """Less than MIN_AVAILABLE of the host's memory left: another engine would crowd the
        ones serving (a vLLM engine on CPU holds ~3 GB: its KV cache space and runtime)."""
        import psutil

        vm = psutil.virtual_memory()
        return vm.available < MIN_AVAILABLE * vm.total

    def close(self) -> None:
        while self.live:
            _, eng = self.live.popitem(last=False)
            try:
                eng.__exit__(None, None, None)
            except Exception as err:  # stop every engine even when one fails to stop
                log.warning("bench: stopping %s failed: %s", eng, err)

    def __enter__(self) -> EnginePool:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
