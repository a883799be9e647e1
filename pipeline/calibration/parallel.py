"""Order-preserving map over worker processes, with bounded memory.

The calibration stages' costly per-record work (PII scrubbing, dedup keys, chat-template
rendering and tokenization) runs in worker processes; results come back in input order, so the
outputs are byte-identical whatever the number of workers, and at most ``in_flight`` chunks per
worker are pending at any time, so memory does not grow with the input.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import signal
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")


def worker_count(configured: int | None) -> int:
    """The worker processes to use: ``split.workers`` when set, else one per core."""
    return configured or os.cpu_count() or 1


def ordered_map(fn: Callable[[list[T]], list[R]], items: Iterable[T], *, workers: int,
                initializer: Callable[..., None], initargs: tuple[Any, ...] = (),
                chunk: int = 256, in_flight: int = 4) -> Iterator[R]:
    """``fn`` over chunks of ``items``, flattened, in input order. Each worker process runs
    ``initializer(*initargs)`` once; with ``workers <= 1`` everything runs in this process."""
    batches = _chunks(items, chunk)
    if workers <= 1:
        initializer(*initargs)
        for batch in batches:
            yield from fn(batch)
        return
    ctx = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")
    with ctx.Pool(workers, initializer=_init_process, initargs=(initializer, initargs)) as pool:
        pending: deque = deque()
        for batch in batches:
            pending.append(pool.apply_async(fn, (batch,)))
            if len(pending) >= workers * in_flight:
                yield from pending.popleft().get()
        while pending:
            yield from pending.popleft().get()


def _chunks(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """``items`` in lists of ``size`` (the last one shorter), read only as they are asked for."""
    items = iter(items)
    while batch := list(itertools.islice(items, size)):
        yield batch


def _init_process(initializer: Callable[..., None], initargs: tuple[Any, ...]) -> None:
    # A worker dies on the SIGTERM its pool sends when it closes: it must not inherit the CLI's
    # SIGTERM-as-interrupt handler, which can leave it alive and the pool waiting for it forever.
    # Ctrl-C is the parent's to handle.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # The worker processes are the parallelism: a fast tokenizer's own threads would only
    # compete with the other workers for the same cores (measured: ~5 % more CPU).
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    initializer(*initargs)
