"""Engines kept started between bench measurements.

Each variant is measured once per round, bracketed by baseline measurements; starting an engine
for every measurement spent most of the stage waiting for start-ups (a vLLM engine takes ~30 s
on 2 CPU cores, a measurement ~15 s). The pool keeps up to `limit` engines started and stops the
least recently used one when another must start, so the schedule's order — and with it the
drift correction of the bracketing baselines — is unchanged while each distinct artifact starts
about once. Idle engines wait on their sockets (measured: ~0.24 CPU-seconds per 10 s for an
idle vLLM on CPU), so they do not load the engine being measured.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
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

    def get(self, name: str, log_path: Path) -> tuple[Engine, float | None]:
        if name in self.live:
            self.live.move_to_end(name)
            eng = self.live[name]
            if hasattr(eng, "check_alive"):  # died while idle: fail with its log, as at start
                eng.check_alive("between bench measurements")
            return eng, None
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
