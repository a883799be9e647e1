"""Helpers of the evaluation tests (the served project itself, `served`, is tests/conftest.py's:
the serving tests use it too)."""

import json
from pathlib import Path
from types import SimpleNamespace



from pipeline.config import Params

REPO = Path(__file__).resolve().parents[2]


def make_params(data: dict, **sections) -> Params:
    data = json.loads(json.dumps(data))
    for key, value in sections.items():
        data.setdefault(key, {}).update(value)
    return Params.model_validate(data)


def kill_when_found(find, *, timeout: float = 120.0):
    """Start a thread that polls `find()` — a psutil.Process to kill, or None — until it returns
    one, kills it and records its pid in the returned list (empty if none was found in time).
    Join the returned thread (`.thread`) after the run it interrupts."""
    import threading
    import time

    killed: list[int] = []

    def loop():
        deadline = time.time() + timeout
        while time.time() < deadline:
            p = find()
            if p is not None:
                p.kill()
                killed.append(p.pid)
                return
            time.sleep(0.05)

    t = threading.Thread(target=loop)
    t.start()
    return SimpleNamespace(killed=killed, thread=t)
