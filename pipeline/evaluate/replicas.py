"""One evaluation over several replicas of a variant's engine (data parallel).

`evaluate.replicas: N` starts N copies of the variant's engine on the same verified artifact,
each on its own share of the node's accelerators (CUDA_VISIBLE_DEVICES; under Ray, the GPUs
Ray gave the stage's task) or, on a CPU host, its own cores where the engine pins threads
(vLLM's VLLM_CPU_OMP_THREADS_BIND). `Replicas` is itself an `Engine`: each request goes to the
replica with the most free slots (`evaluate.concurrency` slots each), so a slow replica gets
less work and the harness, its progress and its in-order records stay what they are with one
engine. Greedy decoding makes each record independent of where it was served, up to the
engine's batch-composition noise, which `benchmarks/eval_ab.py` measures against one
engine (docs/ray.md). All replicas start at once and stop together; one that dies fails the
evaluation with its own log, like a single engine's death.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from pipeline.engines.base import Completion, Engine, EngineError, EngineInfo
from pipeline.processes import affinity


def visible_gpus() -> list[str]:
    """The accelerators this process may use: CUDA_VISIBLE_DEVICES when set (Ray sets it for a
    task), else every GPU nvidia-smi lists; none on a CPU host."""
    env = os.environ.get("CUDA_VISIBLE_DEVICES")
    if env is not None:
        return [g.strip() for g in env.split(",") if g.strip() and g.strip() != "-1"]
    if not shutil.which("nvidia-smi"):
        return []
    out = subprocess.run(["nvidia-smi", "--query-gpu=index", "--format=csv,noheader"],
                         capture_output=True, text=True)
    return [line.strip() for line in out.stdout.splitlines() if line.strip()] if out.returncode == 0 else []


def visible_cpus() -> list[int]:
    return affinity() or list(range(os.cpu_count() or 1))  # no CPU affinity (macOS): all


def shares(items: list, count: int, what: str) -> list[list]:
    """`items` cut into `count` equal contiguous shares (the remainder left unused)."""
    per = len(items) // count
    if per == 0:
        raise EngineError(f"evaluate.replicas is {count} but this node has {len(items)} {what} "
                          f"({', '.join(map(str, items)) or 'none'}) — fix: evaluate.replicas "
                          f"≤ {max(len(items), 1)}, or give the stage more {what} "
                          "(execution.ray.stages.evaluate)")
    return [items[i * per:(i + 1) * per] for i in range(count)]


def replica_environments(engine_cls: type[Engine], count: int) -> list[dict[str, str]]:
    """The environment each of `count` replicas starts with (only what differs between them)."""
    gpus = visible_gpus()
    if gpus:
        return [{"CUDA_VISIBLE_DEVICES": ",".join(s)} for s in shares(gpus, count, "GPUs")]
    return [engine_cls.cpu_share_environment(s) for s in shares(visible_cpus(), count, "CPU cores")]


class Replicas(Engine):
    """N started engines behind the one-engine interface the harness uses."""

    def __init__(self, engines: list[Engine], concurrency: int):
        first = engines[0]
        super().__init__(first.artifact, first.settings, log_path=first.log_path,
                         tokenizer_dir=first.tokenizer_dir, url=first.url)
        self.engines, self.concurrency = engines, concurrency
        self.name, self.formats, self.serving = first.name, first.formats, first.serving
        self.speed_note, self.accepts_parallel = first.speed_note, first.accepts_parallel
        self.verified_manifest = getattr(first, "verified_manifest", None)
        self.served = [0] * len(engines)
        self._free = [concurrency] * len(engines)
        self._cond = threading.Condition()

    # ── start and stop: all at once, all together ────────────────────────────────────────
    def start(self) -> None:
        # launched here, in the thread that keeps them (their parent-death signal follows the
        # thread that started them); their start-ups are waited for side by side
        for e in self.engines:
            e.launch()
        timeout = float(self.settings.get("startup_timeout", 600))
        with ThreadPoolExecutor(len(self.engines)) as pool:
            futures = [pool.submit(e._wait_ready, timeout) for e in self.engines]  # noqa: SLF001
            errors = [f.exception() for f in futures]
        failed = [(i, err) for i, err in enumerate(errors) if err is not None]
        if failed:
            i, err = failed[0]
            if isinstance(err, EngineError):
                raise EngineError(f"replica {i + 1} of {len(self.engines)}: {err}") from err
            raise err

    def stop(self) -> None:
        errors = []
        for e in self.engines:
            try:
                e.stop()
            except BaseException as err:  # noqa: BLE001 (stop every replica, then raise)
                errors.append(err)
        if errors:
            raise errors[0]

    # ── serving ──────────────────────────────────────────────────────────────────────────
    def complete(self, prompt_ids: list[int], max_tokens: int, *,
                 ignore_eos: bool = False) -> Completion:
        with self._cond:
            self._cond.wait_for(lambda: max(self._free) > 0)
            r = max(range(len(self.engines)), key=lambda k: (self._free[k], -k))
            self._free[r] -= 1
        try:
            c = self.engines[r].complete(prompt_ids, max_tokens, ignore_eos=ignore_eos)
        except EngineError as err:
            raise EngineError(f"replica {r + 1} of {len(self.engines)} ({self.engines[r].log_path}): "
                              f"{err}") from err
        finally:
            with self._cond:
                self._free[r] += 1
                self._cond.notify()
        with self._cond:
            self.served[r] += 1
        return c

    def check_prompts(self, prompts: list[list[int]], labels: list[str] | None = None) -> None:
        self.engines[0].check_prompts(prompts, labels)

    def info(self) -> EngineInfo:
        info = self.engines[0].info()
        details = dict(info.details or {})
        details["replicas"] = {"count": len(self.engines), "requests_served": list(self.served),
                               "environments": [getattr(e, "extra_env", {}) for e in self.engines]}
        return EngineInfo(info.name, info.version, info.kernel, serving=info.serving, details=details)

    def pids(self) -> list[int]:
        return [p for e in self.engines for p in e.pids()]

    def log_tail(self, n: int = 40) -> str:
        return "\n".join(f"── replica {i + 1} ({e.log_path}) ──\n{e.log_tail(n)}"
                         for i, e in enumerate(self.engines))

    def lm_eval_model(self, tokenizer_dir: Path, concurrency: int) -> tuple[str, dict[str, Any]]:
        return self.engines[0].lm_eval_model(tokenizer_dir, concurrency)  # lm-eval reaches one endpoint

    def __getattr__(self, name: str) -> Any:
        # what only one engine can answer (lm-eval's endpoint: base_url, served_name) is the
        # first replica's
        if name == "engines":
            raise AttributeError(name)
        return getattr(self.engines[0], name)


def replica_log(log_path: Path, index: int) -> Path:
    """engine.log for the first replica (as with one engine), engine-<k>.log for the others."""
    return log_path if index == 0 else log_path.with_name(f"{log_path.stem}-{index + 1}{log_path.suffix}")
