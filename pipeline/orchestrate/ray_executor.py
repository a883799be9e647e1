"""Stage commands as tasks on a Ray cluster (`execution.backend: ray`).

`qpipe repro` stays the one process that touches DVC (pipeline/orchestrate/repro.py); each stage
command it would run here runs instead as a Ray task on a node with the resources that stage
asks for (`execution.ray.stages`: CPUs, GPUs, a node's custom resources). Nodes read and write
the project through storage every node sees (a shared filesystem mounted at the same path), so
the stage writes its declared outputs atomically as it does locally and the driver records them
in DVC's cache and lock afterwards. A task is never retried by Ray (`max_retries=0`): a stage is
not silently run twice; a node that dies fails its stages with Ray's own error, and `qpipe repro`
run again picks up what is left.

The command's output goes to its log file (on the shared storage); the driver echoes new lines
as they appear. Only the DVC variables and the settings named in `execution.ray.forward_env`
reach the task: no secret leaves the driver's environment; nodes use their own.
"""

from __future__ import annotations

import fnmatch
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, ClassVar

from pipeline.errors import QpipeError
from pipeline.orchestrate.relay import last_state


class ClusterError(QpipeError, RuntimeError):
    pass


def _task(lines: list[str], cwd: str, env: dict[str, str], log_path: str) -> dict:
    """Runs on the node: the stage's command lines, as DVC runs them, output to the log."""
    import socket
    import subprocess

    import ray

    from pipeline.orchestrate.dvc_adapter import shell_argv

    # Ray sets OMP_NUM_THREADS to the task's CPUs in its workers; a thread count changes results
    # (GPTQ's weights, for one), so the command gets the node's own count, as a local run does —
    # unless the driver forwards one on purpose — and idle OpenMP threads sleep (side by side).
    full = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"} | env
    full.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    rc = 0
    with open(log_path, "a", encoding="utf-8") as logf:
        for line in lines:
            logf.write(f"> {line}\n")
            logf.flush()
            rc = subprocess.run(shell_argv(line), cwd=cwd, env=full, stdout=logf,
                                stderr=subprocess.STDOUT, close_fds=True).returncode
            if rc:
                break
    return {"rc": rc, "node": ray.get_runtime_context().get_node_id(), "host": socket.gethostname()}


@dataclass
class RayExecutor:
    """`RayExecutor(cfg.execution.ray)`; connects at first use."""
    pins_cpus: ClassVar[bool] = False  # Ray places each task by its own resources
    cfg: object
    refs: dict[str, object] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    nodes: dict[str, str] = field(default_factory=dict)   # stage -> node id it ran on

    def connect(self) -> None:
        import ray

        with self.lock:  # one connection, whichever stage thread asks first
            if not ray.is_initialized():
                self._init(ray)

    def _init(self, ray) -> None:
        address = self.cfg.address or os.environ.get("RAY_ADDRESS")
        if not address:
            raise ClusterError("execution.backend is ray but no cluster address: set "
                               "execution.ray.address (or RAY_ADDRESS) to the address "
                               "`ray start --head` printed — docs/ray.md")
        try:
            ray.init(address=address, log_to_driver=False, configure_logging=False)
        except Exception as err:
            raise ClusterError(f"cannot reach the Ray cluster at {address}: {err} — fix: start it "
                               "(`ray start --head`) or correct execution.ray.address") from err

    def _env(self, env: dict[str, str]) -> dict[str, str]:
        keep = {k: v for k, v in env.items() if k.startswith("DVC_")}
        for pattern in self.cfg.forward_env:
            keep |= {k: v for k, v in env.items() if fnmatch.fnmatchcase(k, pattern)
                     and not any(s in k.upper() for s in ("KEY", "TOKEN", "SECRET", "PASSWORD"))}
        return keep

    def run(self, cmd, echo: Callable[[str], None]) -> int:
        import ray

        self.connect()
        res = self.cfg.for_stage(cmd.stage)
        cmd.log_path.parent.mkdir(parents=True, exist_ok=True)
        cmd.log_path.write_text("", encoding="utf-8")
        remote = ray.remote(_task).options(num_cpus=res.num_cpus, num_gpus=res.num_gpus,
                                           resources=dict(res.resources) or None, max_retries=0,
                                           name=f"qpipe:{cmd.stage}")
        ref = remote.remote(cmd.lines, cmd.cwd, self._env(cmd.env), str(cmd.log_path))
        with self.lock:
            self.refs[cmd.stage] = ref
        seen = 0
        try:
            while True:
                ready, _ = ray.wait([ref], timeout=1.0)
                seen = _echo_new(cmd.log_path, seen, echo)
                if ready:
                    break
            out = ray.get(ref)  # a dead node raises here (NodeDiedError, WorkerCrashedError…)
        finally:
            with self.lock:
                self.refs.pop(cmd.stage, None)
        _echo_new(cmd.log_path, seen, echo)
        self.nodes[cmd.stage] = out["node"]
        echo(f"ran on Ray node {out['node'][:12]} ({out['host']})")
        return out["rc"]

    def cancel(self) -> None:
        import ray

        with self.lock:
            refs = list(self.refs.values())
        for ref in refs:
            try:
                ray.cancel(ref, force=True)
            except Exception:  # already finished, or its node gone
                pass


def _echo_new(path: Path, seen: int, echo: Callable[[str], None]) -> int:
    try:
        with open(path, "rb") as fh:
            fh.seek(seen)
            chunk = fh.read()
    except OSError:
        return seen
    complete = chunk[: chunk.rfind(b"\n") + 1]
    for line in complete.decode("utf-8", errors="replace").split("\n")[:-1]:
        echo(last_state(line))  # a progress bar's redraws: its final state
    return seen + len(complete)
