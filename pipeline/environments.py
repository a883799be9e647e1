"""Which tool environments a project's variants need, and which of them this machine has.

Tools whose pins conflict with the core environment live in their own locked environments,
made once per machine under ``${QPIPE_CACHE:-~/.cache/qpipe}/envs/<name>-<hash>`` the first time
a stage needs them (the vLLM engine by scripts/setup-vllm.sh; the GPTQModel, ModelOpt and
AutoAWQ backends by scripts/setup-backend-env.sh), and llama.cpp's tools are built once by
scripts/setup-llamacpp.sh. `qpipe validate` lists them so a user knows what the first run will
make, and the one command that makes each now. Nothing here makes an environment.

The hash is the set-up script's own: SHA256 over the lock file then the script, 12 hex digits
(``cat lock script | sha256sum | cut -c1-12``); tests/test_environments.py checks it against the
scripts.
"""

from __future__ import annotations

import hashlib
import logging
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from pipeline.engines.base import engine_names, get_engine
from pipeline.engines.vllm import KERNEL_OPS, VllmEngine, cpu_name, vllm_cpu_kernels
from pipeline.stage_params import StageView

ROOT = Path(__file__).resolve().parents[1]
log = logging.getLogger(__name__)
# (what it is, the set-up's rough cost here: a warm pip cache / cold, or the build)
ENGINE_ENVS = {e: get_engine(e).setup_env for e in engine_names() if get_engine(e).setup_env}
BACKEND_SETUP = "scripts/setup-backend-env.sh"
BACKEND_COST = "~70 s each"
LOADGEN = ("scripts/setup-guidellm.sh", "constraints/guidellm.txt", "~1 min (5 cold): GuideLLM, 1.5 GB")
LLAMACPP = ("scripts/setup-llamacpp.sh", "~10 min: a build from source on 2 cores")


@dataclass(frozen=True)
class Environment:
    name: str            # vllm, gptqmodel, …, llama.cpp
    needed_by: tuple[str, ...]
    ready: bool
    where: str           # the folder (or the override that replaces it)
    command: str         # the one command that makes it
    cost: str

    def line(self) -> str:
        users = ", ".join(self.needed_by)
        if self.ready:
            return f"{self.name}: ready ({self.where}) — for {users}"
        return (f"{self.name}: not made yet — the first stage that needs it makes it ({self.cost}); "
                f"now: `{self.command}` — for {users}")


def cache() -> Path:
    return Path(os.environ.get("QPIPE_CACHE") or Path.home() / ".cache" / "qpipe")


def env_dir(name: str, script: str, lock: str, root: Path = ROOT) -> Path:
    """Where the set-up script makes environment `name` for this lock file and script."""
    key = hashlib.sha256((root / lock).read_bytes() + (root / script).read_bytes()).hexdigest()[:12]
    return cache() / "envs" / f"{name}-{key}"


def _locked(name: str, script: str, lock: str, override: str | None, needed_by: list[str],
            cost: str, command: str) -> Environment:
    if override:
        return Environment(name, tuple(needed_by), True, f"given: {override}", command, cost)
    d = env_dir(name, script, lock)
    return Environment(name, tuple(needed_by), (d / ".ready").is_file(), str(d), command, cost)


def needed(params: StageView) -> list[Environment]:
    """Every environment the variants of `params` (validated Params) need, with its state."""
    from pipeline.llamacpp_tools import LlamaCppMissing, locate
    from pipeline.plugins import backend_class
    from pipeline.quantize.base import ExternalBackend

    engines: dict[str, list[str]] = {}
    backends: dict[str, list[str]] = {}
    llama: list[str] = []
    for name, v in params.variants.items():
        engine = params.engine_for(name)
        if engine in ENGINE_ENVS:
            engines.setdefault(engine, []).append(name)
        if (engine in engine_names() and get_engine(engine).needs_llamacpp_tools) \
                or backend_class(v.backend).needs_llamacpp_tools:
            llama.append(name)
        if issubclass(backend_class(v.backend), ExternalBackend):
            backends.setdefault(v.backend, []).append(name)
    out = []
    for engine, users in sorted(engines.items()):
        script, lock, cost = ENGINE_ENVS[engine]
        given = getattr(params.engines, engine).model_dump().get("python") \
            or os.environ.get(f"QPIPE_{engine.upper()}_PYTHON")
        out.append(_locked(engine, script, lock, given, users, cost, f"bash {script}"))
    for backend, users in sorted(backends.items()):
        out.append(_locked(backend, BACKEND_SETUP, f"constraints/{backend}.txt",
                           os.environ.get(f"QPIPE_{backend.upper()}_PYTHON"), users, BACKEND_COST,
                           f"bash {BACKEND_SETUP} {backend}"))
    if llama:
        try:
            where, ready = str(locate().bin_dir), True
        except LlamaCppMissing:
            where, ready = str(cache() / "llama.cpp"), False
        out.append(Environment("llama.cpp", tuple(llama), ready, where, f"bash {LLAMACPP[0]}",
                               LLAMACPP[1]))
    return out + upgrade_environments(params)


def upgrade_environments(params: StageView) -> list[Environment]:
    """The load generator bench and the upgrades replay the business's traffic with, and each
    release the upgrades' serving configurations name (made at first need)."""
    serving = params.serving
    users = (["bench"] if params.bench.traffic.enabled else []) + list(serving.upgrades)
    if not users:
        return []
    given = serving.loadgen_python or os.environ.get("QPIPE_GUIDELLM_PYTHON")
    out = [_locked("guidellm", LOADGEN[0], LOADGEN[1], given, users, LOADGEN[2], f"bash {LOADGEN[0]}")]
    users: dict[tuple[str, str], list[str]] = {}
    for name, up in serving.upgrades.items():
        for side in (up.current, up.candidate):
            spec = serving.configs[side]
            if spec.release:
                users.setdefault((spec.engine, spec.release), []).append(name)
    for (engine, release), names in sorted(users.items()):
        home = get_engine(engine).release_home(release)
        if home is None:
            continue
        where, ready, command = home
        out.append(Environment(f"{engine} {release}", tuple(dict.fromkeys(names)), ready, str(where), command,
                               "minutes: made or built on first need"))
    return out


# ── what the vLLM environment's CPU build can run on this host (asked by the engine itself:
# pipeline/engines/vllm.py) ──────────────────────────────────────────────────────────────────
def made_vllm(given: str | None = None) -> Path | None:
    """The vLLM environment the set-up made on this machine, or None: not made yet, or another
    vLLM given (`engines.vllm.python` / QPIPE_VLLM_PYTHON: a GPU build, say), which is not
    second-guessed."""
    if given or os.environ.get("QPIPE_VLLM_PYTHON"):
        return None
    script, lock, _ = VllmEngine.setup_env
    d = env_dir(VllmEngine.name, script, lock)
    return d if (d / ".ready").is_file() else None


def w4a16_kernel_missing(env: Path) -> bool:
    """Whether vLLM's CPU build in `env` lacks its W4A16 kernel on this CPU. A probe that cannot
    answer is not a problem (a logged warning): the engine's own start reports a broken
    environment."""
    try:
        return not vllm_cpu_kernels(str(env / "bin" / "python"), env).get("cpu_gemm_wna16", True)
    except (RuntimeError, OSError, ValueError, subprocess.TimeoutExpired) as err:
        log.warning("vLLM's CPU kernels were not checked: %s", err)
        return False


def host_problems(params: StageView, *, kernels: dict[str, bool] | None = None) -> dict[str, str]:
    """{variant: what is wrong and the fix} for the variants the set-up's vLLM (its CPU build)
    cannot serve on this host; asked only once that environment is made (`made_vllm`)."""
    users = [n for n in params.variants if params.engine_for(n) == VllmEngine.name]
    w4a16 = [n for n in users if params.variants[n].scheme in ("w4a16_gptq", "w4a16_awq")]
    if not w4a16:
        return {}
    if kernels is not None:
        missing = not kernels.get("cpu_gemm_wna16", True)
    else:
        env = made_vllm(params.engines.vllm.model_dump().get("python"))
        missing = env is not None and w4a16_kernel_missing(env)
    if not missing:
        return {}
    return {n: f"variant {n!r} (scheme {params.variants[n].scheme}): vLLM's CPU build has no "
               f"kernel for {KERNEL_OPS['cpu_gemm_wna16']} on this CPU ({cpu_name()}: its "
               "cpu_gemm_wna16 is built for AVX-512 only) — its engine would start and die at "
               "the first request. fix: evaluate on a host with AVX-512 (or a GPU), or serve it "
               f"with the reference engine: set `engine: transformers` and a `reason:` under variants.{n}"
            for n in w4a16}
