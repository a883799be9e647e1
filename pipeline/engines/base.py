"""The serving-engine interface: start → ready → serve → stop, one small class per engine.

Every engine takes prompts as token ids rendered once by the harness with the base model's
tokenizer and chat template (the same for every variant: docs/rationale.md#same-settings), decodes
greedily and returns a `Completion` with the timing the client saw. An engine records its version
and the kernel it actually chose, parsed from its own log (the chosen kernel decides speed:
docs/rationale.md#throughput-protocol).

    with get_engine("llamacpp")(artifact_dir, settings, log_path=p) as eng:
        eng.complete(ids, max_tokens=64)
"""

from __future__ import annotations

import os
import secrets
import shlex
import signal
import socket
import subprocess
import time
from abc import ABC, abstractmethod
from pathlib import Path
from collections.abc import Mapping
from typing import Any, ClassVar

import httpx

from pipeline import progress
from pipeline.engines.wire import Completion, EngineError, EngineInfo, stream_completion
from pipeline.errors import QpipeError
from pipeline.names import Registry
from pipeline.processes import die_with_parent, group_gone, group_members, listening_pids, signal_group
from pipeline.contracts.files import ENGINE_LOG


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tail(path: Path | None, n: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-n:]) if path else ""
    except OSError:
        return "(no log)"


class Engine(ABC):
    """A started engine serves completions until stopped; use it as a context manager so it
    stops on success, failure and Ctrl-C alike."""

    name: ClassVar[str]
    formats: ClassVar[frozenset[str]]   # artifact formats it can serve
    serving: ClassVar[bool] = True      # a real serving engine (its speed is comparable)
    # why a non-serving engine's speed is kept out of comparisons (bench, reports)
    speed_note: ClassVar[str] = "not a serving engine; kept out of speed comparisons"
    accepts_parallel: ClassVar[bool] = True
    # its own locked environment: (set-up script, lock file, the set-up's rough cost), or None
    setup_env: ClassVar[tuple[str, str, str] | None] = None
    needs_llamacpp_tools: ClassVar[bool] = False  # llama.cpp's built tools (scripts/setup-llamacpp.sh)

    def __init__(self, artifact: Path, settings: dict[str, Any], *, log_path: Path,
                 tokenizer_dir: Path | None = None, url: str | None = None):
        self.artifact, self.settings, self.log_path = Path(artifact), dict(settings), log_path
        self.tokenizer_dir, self.url = tokenizer_dir, url
        # set by whoever starts several replicas: what this one's environment adds (its GPUs)
        self.extra_env: dict[str, str] = {}

    # The teacher-forced passes (divergence) load an artifact in transformers; an engine whose
    # format transformers does not load as written gives a dequantized copy, and says how.
    dequantize_note: ClassVar[str | None] = None

    @classmethod
    def dequantized_copy(cls, artifact: Path, out: Path, settings: dict[str, Any]) -> Path | None:
        """A copy of `artifact` under `out` that transformers loads with the same weights; None:
        transformers loads the artifact itself."""
        return None

    @classmethod
    def cpu_share_environment(cls, cores: list[int]) -> dict[str, str]:
        """The environment that keeps a replica on `cores` of a CPU host (evaluate.replicas);
        an engine that pins its threads itself says how. Default: nothing to add."""
        return {}

    @abstractmethod
    def start(self) -> None: ...

    @abstractmethod
    def stop(self) -> None: ...

    @abstractmethod
    def complete(self, prompt_ids: list[int], max_tokens: int, *,
                 ignore_eos: bool = False) -> Completion: ...

    @abstractmethod
    def info(self) -> EngineInfo: ...

    @classmethod
    def bench_exclusion(cls) -> str | None:
        """Why bench leaves this engine's variants out (None: a serving engine, measured)."""
        return None if cls.serving else f"{cls.name} engine: {cls.speed_note}"

    @classmethod
    def handoff_command(cls, model_dir: Path, settings: dict[str, Any]) -> str:
        """The command a handoff bundle gives for serving its model (at `model_dir`, port 8000)
        with this engine and the settings it was evaluated with; an engine that cannot be
        started from a bundle says where it runs."""
        return f"served elsewhere ({cls.name})"

    @classmethod
    def prepare_release(cls, release: str) -> None:
        """Make `release` of this engine ready to serve (a serving configuration names it); an
        engine whose releases are not built on demand says so."""
        raise EngineError(f"engine {cls.name} has no releases built on demand (release {release!r})")

    @classmethod
    def release_home(cls, release: str) -> tuple[Path, bool, str] | None:
        """Where `release` of this engine is kept, whether it is ready, and the command that makes
        it (None: this engine has no releases made on demand)."""
        return None

    def lm_eval_model(self, tokenizer_dir: Path, concurrency: int) -> tuple[str, dict[str, Any]]:
        """lm-eval's model type and arguments that reach this running engine."""
        raise EngineError(f"engine {self.name} has no HTTP endpoint for lm-eval")

    def check_prompts(self, prompts: list[list[int]], labels: list[str] | None = None) -> None:
        """Before evaluation: refuse prompts this engine could not serve as the harness rendered
        them (an engine that takes text checks its tokenization; see engines/mlx.py). An engine
        that takes token ids serves them as given: nothing to check."""
        return None

    def pids(self) -> list[int]:
        """Processes whose memory is the engine's (for peak-memory sampling)."""
        return [os.getpid()]

    def log_tail(self, n: int = 40) -> str:
        return tail(self.log_path, n)

    def __enter__(self) -> Engine:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


class ServerEngine(Engine):
    """An engine in its own process serving the OpenAI completions API on 127.0.0.1.

    Subclasses give the command line (`command`), the health path and the log parsing."""

    health_path: ClassVar[str] = "/health"
    # The environment variable through which the engine takes its API key (never the command
    # line: the process list shows that). A started engine gets a fresh random key per run and
    # every request carries it; None: the engine takes no key.
    api_key_env: ClassVar[str | None] = None
    # A path the key guards: answered 200 with the key (and 401 without) by our engine only.
    auth_path: ClassVar[str] = "/v1/models"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.api_key = secrets.token_urlsafe(32) if self.api_key_env else None
        self.port = free_port()
        self.proc: subprocess.Popen | None = None
        self._client: httpx.Client | None = None
        self._log = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # An engine started from a command line gives program() + arguments() (vLLM, llama-server);
    # one that is never started here (an external endpoint) or builds its whole command itself
    # overrides command() instead and has no portable command to hand off.
    def program(self) -> list[str]:
        """The engine's executable here (resolved: an environment's python, a built binary)."""
        raise NotImplementedError(f"engine {self.name!r} overrides command(); it has no separate program")

    def portable_program(self) -> list[str]:
        """The same executable as a person types it on another host."""
        raise NotImplementedError(f"engine {self.name!r} has no portable command line to hand off")

    def arguments(self) -> list[str]:
        raise NotImplementedError(f"engine {self.name!r} overrides command(); it has no separate arguments")

    def command(self) -> list[str]:
        """What start() runs: the program and its arguments (or a whole command line)."""
        return [*self.program(), *self.arguments()]

    def environment(self) -> dict[str, str]:
        """The engine's environment: this process's, with what the engine sets itself."""
        return {**os.environ, **self.own_environment(os.environ)}

    def own_environment(self, ambient: Mapping[str, str]) -> dict[str, str]:
        """The variables the engine sets on top of `ambient` (its settings', its defaults where
        `ambient` has none). Called with an empty `ambient`, every variable it may set: what a
        handoff bundle names, whatever the environment of whoever built it."""
        return {}

    def portable_command(self, model_dir: Path, *, as_name: str = "model", port: int = 8000) -> str:
        """The exact command line this engine runs, with the model at `as_name` and a fixed
        port, as one shell line (environment settings first): what a handoff bundle states."""
        saved, self.port = self.port, port
        try:
            args = [a.replace(str(model_dir), as_name) for a in self.arguments()]
        finally:
            self.port = saved
        from pipeline.secrets import mask_args

        # Environment settings by name only: their values (tokens, say) are the user's to supply;
        # which names, a function of the engine and its settings alone (not of who builds it).
        env = [f'{k}="${{{k}}}"' for k in sorted(self.own_environment({}))]
        return " ".join([*env, shlex.join([*self.portable_program(), *mask_args(args)])])

    def request_extras(self, ignore_eos: bool) -> dict[str, Any]:
        """Engine-specific fields of a completion request."""
        return {"ignore_eos": ignore_eos} if ignore_eos else {}

    def prepare(self) -> None:
        """Work an engine does before its process starts (checks, a converted copy)."""

    def start(self) -> None:
        self.launch()
        self._wait_ready(float(self.settings.get("startup_timeout", 600)))

    def launch(self) -> None:
        """Start the process, without waiting for it to serve. Call it from a thread that lives
        as long as the engine: the child's parent-death signal (processes.die_with_parent) is
        tied to the thread that started it, so one started from a short-lived worker thread
        would be told to stop when that thread ends."""
        self.prepare()
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = self.log_path.open("w")
        try:
            from pipeline.secrets import mask_args

            cmd = self.command()
            self._log.write("$ " + " ".join(mask_args(cmd)) + "\n")
            self._log.flush()
            env = self.environment() | self.extra_env
            if self.api_key_env:
                env[self.api_key_env] = self.api_key
            # Its own session: stop() signals the whole process group (vLLM forks workers); and
            # it dies with us (parent-death signal), so a killed qpipe leaves no engine behind.
            self.proc = subprocess.Popen(cmd, stdout=self._log, stderr=subprocess.STDOUT,
                                         env=env, preexec_fn=die_with_parent)
        except (OSError, QpipeError) as err:
            if isinstance(err, EngineError):
                raise
            raise EngineError(f"{self.name} is not installed or cannot be started: {err} — fix: "
                              f"the set-up script of this engine (scripts/setup-*.sh), or "
                              f"engines.{self.name} in params") from err
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        self._client = httpx.Client(base_url=self.base_url, headers=headers,
                                    timeout=self.settings.get("request_timeout", 600))

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        with progress.task(f"{self.name}: starting on {self.artifact.name}") as shown:
            while time.monotonic() < deadline:
                self.check_alive("while starting")
                try:
                    if self._client.get(self.health_path, timeout=2).status_code == 200:
                        self._authenticate()
                        shown.status("ready")
                        return
                except httpx.HTTPError:
                    pass
                shown.status(progress.last_line(self.log_path))
                time.sleep(0.5)
        raise EngineError(f"{self.name} not ready after {timeout:.0f} s "
                          f"(settings engines.{self.name}.startup_timeout); log tail:\n"
                          f"{self.log_tail()}")

    def _authenticate(self) -> None:
        """The server answering is the one we started: the socket listening on our port belongs
        to its process group, and it wants our key. Anything else (a process that took the port
        first) would receive the prompts and could forge the outputs: refuse it."""
        if self.proc is None:
            return
        owner = listening_pids(self.port)
        ours = set(group_members(self.proc.pid)) | {self.proc.pid}
        if owner is not None and not (owner & ours):
            raise EngineError(f"{self.name}: port {self.port} is held by another process "
                              f"(pid {', '.join(map(str, sorted(owner))) or 'unknown'}), not the "
                              f"engine we started (pid {self.proc.pid}); nothing was sent to it — "
                              "fix: stop that process, then run again")
        if self.api_key:
            r = self._client.get(self.auth_path, timeout=5)
            anonymous = httpx.get(self.base_url + self.auth_path, timeout=5)
            if r.status_code != 200 or anonymous.status_code not in (401, 403):
                raise EngineError(f"{self.name}: the server on port {self.port} does not enforce "
                                  f"this run's API key ({self.auth_path}: {r.status_code} with it, "
                                  f"{anonymous.status_code} without) — not the engine we started")

    def check_alive(self, when: str) -> None:
        if self.proc is not None and self.proc.poll() is not None:
            raise EngineError(f"{self.name} exited with code {self.proc.returncode} {when}; "
                              f"log tail ({self.log_path}):\n{self.log_tail()}")

    def stop(self) -> None:
        """Stop the server and every process it forked (vLLM's engine core, its workers).

        The leader exiting is not enough: forked workers share the log's file descriptor and
        write their own shutdown lines; one still alive after the stage has written its
        results would change them behind DVC's back. So the whole process group is waited for,
        and killed if it outlives the deadline."""
        if self._client is not None:
            self._client.close()
        if self.proc is not None:
            group = self.proc.pid
            signal_group(group, signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                pass
            if not group_gone(group, deadline=time.monotonic() + 10):
                signal_group(group, signal.SIGKILL)
                self.proc.wait()
                group_gone(group, deadline=time.monotonic() + 10)
        if self._log is not None and not self._log.closed:
            self._log.close()

    def pids(self) -> list[int]:
        return [self.proc.pid] if self.proc else []

    def complete(self, prompt_ids: list[int], max_tokens: int, *,
                 ignore_eos: bool = False) -> Completion:
        """One greedy completion, streamed, so the first token's arrival is seen."""
        body = {"model": self.served_name(), "prompt": prompt_ids, "max_tokens": max_tokens,
                "temperature": 0.0, "top_p": 1.0, "seed": 0, "stream": True,
                "stream_options": {"include_usage": True}, **self.request_extras(ignore_eos)}
        return stream_completion(self, body)

    def served_name(self) -> str:
        return "model"

    @classmethod
    def exact_command(cls, model_dir: Path, settings: dict[str, Any]) -> str:
        """The portable command line that starts this engine on `model_dir` with `settings`."""
        return cls(model_dir, settings, log_path=model_dir.parent / ENGINE_LOG).portable_command(model_dir)

    def lm_eval_model(self, tokenizer_dir: Path, concurrency: int) -> tuple[str, dict[str, Any]]:
        if not self.base_url:
            return super().lm_eval_model(tokenizer_dir, concurrency)
        args = {"base_url": f"{self.base_url}/v1/completions",
                "model": self.served_name(), "tokenizer": str(tokenizer_dir),
                "tokenizer_backend": "huggingface", "tokenized_requests": False,
                "num_concurrent": concurrency, "max_retries": 1}
        key = getattr(self, "api_key", None)
        if key:  # the engine's per-run key, in a header (never on a command line or in a record)
            args["header"] = {"Authorization": f"Bearer {key}"}
        return "local-completions", args


ENGINES: Registry[type[Engine]] = Registry("engine")


def register(cls: type[Engine]) -> type[Engine]:
    ENGINES.add(cls.name, cls)
    return cls


def engine_names() -> tuple[str, ...]:
    """Every engine, as its class declares itself (importing the modules registers them)."""
    from pipeline.engines import llamacpp, mlx, openai, transformers, vllm  # noqa: F401  (register)

    return tuple(ENGINES)


def get_engine(name: str) -> type[Engine]:
    engine_names()
    return ENGINES.get(name)
