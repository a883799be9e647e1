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

ROOT = Path(__file__).resolve().parents[1]
log = logging.getLogger(__name__)
# (what it is, the set-up's rough cost here: a warm pip cache / cold, or the build)
ENGINE_ENVS = {"vllm": ("scripts/setup-vllm.sh", "constraints/vllm.txt", "~90 s (6–7 min cold)")}
BACKEND_SETUP = "scripts/setup-backend-env.sh"
BACKEND_COST = "~70 s each"
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


def needed(params) -> list[Environment]:
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
        if engine == "llamacpp" or v.format == "gguf":
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
    return out


# ── what the vLLM environment's CPU build can run on this host ─────────────────────────────────
# vLLM's CPU wheel carries one extension per instruction set and loads the one this CPU can run
# (AVX-512 with BF16, AVX-512, or AVX2). Its 4-bit weight-only kernel (CPUWNA16LinearKernel,
# op cpu_gemm_wna16) is built into the AVX-512 extensions only: on an AVX2 host vLLM still picks
# that kernel, starts, and its engine dies at the first request (AttributeError: '_OpNamespace'
# '_C' object has no attribute 'cpu_gemm_wna16'; seen on an AMD EPYC with AVX2 only). The
# library itself is asked — the extension it loads here and the ops that extension has — and
# the answer is kept per environment and CPU.
KERNEL_OPS = {"cpu_gemm_wna16": "4-bit weight-only (W4A16: GPTQ, AWQ) layers"}
_PROBE = ("import json, torch\n"
          "from vllm.platforms import current_platform\n"
          "current_platform.import_kernels()\n"
          "print(json.dumps({op: hasattr(torch.ops._C, op) for op in %r}))")


def _cpuinfo(field: str) -> str | None:
    """The first value of `field` in /proc/cpuinfo (None off Linux)."""
    try:
        for ln in Path("/proc/cpuinfo").read_text(errors="replace").splitlines():
            if ln.startswith(field):
                return ln.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def cpu_signature() -> str:
    """This CPU's model and instruction-set flags, hashed: the key of a kernel probe's answer."""
    seen = f"{_cpuinfo('model name')}\n{_cpuinfo('flags')}"
    return hashlib.sha256(seen.encode()).hexdigest()[:12]


def cpu_name() -> str:
    return _cpuinfo("model name") or "unknown CPU"


def vllm_cpu_kernels(python: str, env: Path, *, timeout: float = 300) -> dict[str, bool]:
    """{op: present} for KERNEL_OPS in the extension vLLM's CPU build loads on this host, asked
    of the library in its own environment (~15 s, an import of vLLM) and kept in `env` for this
    CPU."""
    import json

    keep = env / f".cpu-kernels-{cpu_signature()}.json"
    if keep.is_file():
        return json.loads(keep.read_text())
    out = subprocess.run([python, "-c", _PROBE % (sorted(KERNEL_OPS),)], capture_output=True,
                         text=True, timeout=timeout, env={**os.environ, "VLLM_NO_USAGE_STATS": "1"})
    if out.returncode != 0:
        raise RuntimeError(f"vLLM's CPU kernels could not be listed with {python}: "
                           f"{out.stderr.strip()[-800:]}")
    found = json.loads(out.stdout.strip().splitlines()[-1])
    tmp = keep.with_suffix(".tmp")
    tmp.write_text(json.dumps(found))
    tmp.replace(keep)
    return found


def made_vllm(given: str | None = None) -> Path | None:
    """The vLLM environment the set-up made on this machine, or None: not made yet, or another
    vLLM given (`engines.vllm.python` / QPIPE_VLLM_PYTHON: a GPU build, say), which is not
    second-guessed."""
    if given or os.environ.get("QPIPE_VLLM_PYTHON"):
        return None
    script, lock, _ = ENGINE_ENVS["vllm"]
    d = env_dir("vllm", script, lock)
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


def host_problems(params, *, kernels: dict[str, bool] | None = None) -> dict[str, str]:
    """{variant: what is wrong and the fix} for the variants the set-up's vLLM (its CPU build)
    cannot serve on this host; asked only once that environment is made (`made_vllm`)."""
    users = [n for n in params.variants if params.engine_for(n) == "vllm"]
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
