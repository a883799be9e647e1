"""The quantization backend interface: one small class per tool, registered by name.

A backend says which schemes it does and whether they need calibration data, checks a request
*before* any model is loaded (recipe fits the model, layers named in `ignore` exist), and
writes the artifact's model files into an output directory. The stage (`stage.py`) wraps every
backend alike: atomic output directory, manifest and SHA256SUMS, native load check, timing.

GPTQModel, NVIDIA ModelOpt and AutoAWQ each pin a transformers (and a torch) that conflicts with
llm-compressor's, so they run as subprocesses in their own environments (`ExternalBackend`,
made by `scripts/setup-backend-env.sh`): the backend's own module is also its worker,

    <env python> -m pipeline.quantize.<backend> request.json result.json

and imports nothing at module level but the standard library and this module, whose
module-level imports are the standard library and `pipeline.names` only.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import os
import subprocess
import sys
import tempfile
import time
from abc import ABC, abstractmethod
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from pipeline.errors import QpipeError


class BackendError(QpipeError, RuntimeError):
    """A backend cannot run this request; the message says what, where and how to fix."""


class MissingDependency(BackendError):
    pass


@dataclass
class QuantizeRequest:
    variant: str
    scheme: str
    model_dir: Path
    out_dir: Path
    recipe: Path | None = None
    calibration_dir: Path | None = None
    options: dict[str, Any] = field(default_factory=dict)
    dtype: str = "bfloat16"
    trust_remote_code: bool = False
    device: str = "cpu"
    processes: int = 1              # >1: one process per GPU under torchrun (llm-compressor)
    # the load check's chat messages and how many greedy tokens it generates (quantize.load_check)
    load_check: list[dict[str, str]] = field(default_factory=list)
    load_check_tokens: int = 16
    # the run's log (quantize.runs_dir/<variant>.log): tools that write their own output append
    # to it; it lies outside the artifact, whose bytes must not depend on the run
    log_path: Path | None = None


@dataclass
class QuantizeResult:
    format: str                     # compressed-tensors | hf | gguf | …
    tool_versions: dict[str, str]
    details: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # what could not be done here, and why
    # A backend in its own environment reloads its artifact with its own loader there; None:
    # the stage runs the native load check (transformers, llama.cpp) itself.
    load_check: dict[str, Any] | None = None


class Backend(ABC):
    name: ClassVar[str]
    schemes: ClassVar[frozenset[str]]      # the schemes it makes
    format: ClassVar[str]                  # the artifact format it writes (engines.formats' key)
    recipe_format: ClassVar[str]           # llm-compressor | tool | preset | dtype (pipeline.plugins)
    extra: ClassVar[str] = ""       # `pip install qpipe[<extra>]` (or an environment) brings it
    several_gpus: ClassVar[bool] = False  # spreads one run over several GPUs (quantize.gpus)
    needs_llamacpp_tools: ClassVar[bool] = False  # llama.cpp's built tools (scripts/setup-llamacpp.sh)
    transformers_loads: ClassVar[bool] = False  # its artifacts load in transformers (the load check)

    def require(self, module: str):
        try:
            return importlib.import_module(module)
        except ImportError as err:
            raise MissingDependency(
                f"backend {self.name!r} needs the Python package {module!r}, which is not "
                f"installed — fix: `pip install -e '.[{self.extra}]'` (or `bash scripts/setup.sh`)"
            ) from err

    def check(self, req: QuantizeRequest) -> list[str]:
        """Problems found before loading the model (empty: go ahead)."""
        return []

    @abstractmethod
    def quantize(self, req: QuantizeRequest) -> QuantizeResult:
        ...

    def group_size(self, recipe: dict[str, Any]) -> int | None:
        """The group (block) size the recipe quantizes with; None: per-channel or not grouped."""
        return None

    def recipe_key(self, scheme: str) -> tuple[str, Any] | None:
        """The key a variant's recipe must hold for `scheme`, and its value (`qpipe validate`
        checks it before anything runs); None: its recipes have no such key."""
        return None

    def shape_problems(self, variant: str, scheme: str, group: int, families: list[tuple[str, int, list[str]]],
                       recipe_path: str) -> list[tuple[str, str]]:
        """(what, fix) for each family of Linear layers — (dimension, in-features, modules) — whose
        in-features the recipe's `group` size does not divide (`qpipe validate`). This default
        is a tool that quantizes every Linear but lm_head."""
        problems = []
        for dim, value, modules in families:
            hit = [m for m in modules if m != "lm_head"]
            if value % group == 0 or not hit:
                continue
            kinds = sorted({m.rsplit(".", 1)[-1] for m in hit})
            problems.append((f"{dim}={value} is not divisible by {group}, the group size in {recipe_path}: "
                             f"{len(hit)} Linear layers ({', '.join(kinds)}) cannot be quantized",
                             f"use a group size in {recipe_path} that divides {value} (e.g. 32 or 64)"))
        return problems

    def base_model_problems(self, config: dict[str, Any]) -> list[tuple[str, str]]:
        """(what, fix) for each thing of the base model's config.json this backend's artifacts
        could not carry faithfully (`qpipe validate`, before anything runs); none by default."""
        return []

    def load_check(self, out_dir: Path, *, msgs: list[dict[str, str]], model_dir: Path,
                   new_tokens: int) -> dict[str, Any] | None:
        """Reload the artifact with the format's own in-process loader and answer `msgs` with a
        few greedy tokens (quantize.load_check); None: the stage's transformers check applies (or
        none, when transformers does not load the format either)."""
        return None

    def calibration_texts(self, req: QuantizeRequest) -> tuple[list[str], int | None]:
        """The calibration set's rendered rows and its token limit (from its card)."""
        if req.calibration_dir is None:
            return [], None
        import pyarrow.parquet as pq

        from pipeline.contracts import CalibrationCard
        from pipeline.contracts.files import CALIBRATION_DATA, CARD

        texts = pq.read_table(req.calibration_dir / CALIBRATION_DATA, columns=["text"]).column("text").to_pylist()

        card = CalibrationCard.load(req.calibration_dir / CARD)
        return texts, (card.params or {}).get("set", {}).get("max_seq_len")


def get_backend(name: str) -> Backend:
    """The backend registered as `name` (pyproject's `qpipe.backends` entry points); its optional
    libraries load lazily inside."""
    from pipeline.plugins import backend_class

    return backend_class(name)()


# ── backends in their own environment ──────────────────────────────────────────────────

ROOT = Path(__file__).resolve().parents[2]
SETUP = ROOT / "scripts" / "setup-backend-env.sh"


def backend_python(name: str) -> str:
    """The backend environment's interpreter: QPIPE_<NAME>_PYTHON, or the set-up's (made once
    per machine, then found by its lock hash in a second)."""
    var = f"QPIPE_{name.upper()}_PYTHON"
    py = os.environ.get(var)
    if py:
        if not os.access(py, os.X_OK):
            raise MissingDependency(f"{var}={py} is not an executable Python — fix: point it at the "
                                    f"python of an environment with {name}, or unset it and run "
                                    f"`bash scripts/setup-backend-env.sh {name}`")
        return py
    try:
        out = subprocess.run(["bash", str(SETUP), name], capture_output=True, text=True,
                             check=True, timeout=3600)
    except subprocess.CalledProcessError as err:
        raise MissingDependency(
            f"backend {name!r} runs in its own environment, which could not be made — fix: run "
            f"`bash scripts/setup-backend-env.sh {name}` and read its error, or point "
            f"QPIPE_{name.upper()}_PYTHON at a Python that has it:\n{err.stderr[-2000:]}") from err
    return out.stdout.strip().splitlines()[-1]


def linear_in_features(model_dir: Path) -> dict[str, int]:
    """In-features of every 2-D weight inside the decoder layers, from safetensors headers
    (no weight is read)."""
    from safetensors import safe_open

    out: dict[str, int] = {}
    for f in sorted(Path(model_dir).glob("*.safetensors")):
        with safe_open(str(f), framework="np") as st:
            for key in st.keys():
                if ".layers." in key and key.endswith(".weight"):
                    shape = st.get_slice(key).get_shape()
                    if len(shape) == 2:
                        out[key[: -len(".weight")]] = int(shape[1])
    return out


def group_size_problems(req: QuantizeRequest, group_size: int | None) -> list[str]:
    if not group_size or group_size <= 0:
        return []
    bad = {n: k for n, k in linear_in_features(req.model_dir).items() if k % group_size}
    if not bad:
        return []
    names = ", ".join(f"{n} ({k})" for n, k in sorted(bad.items())[:6])
    more = f" and {len(bad) - 6} more" if len(bad) > 6 else ""
    return [f"{req.recipe}: group size {group_size} does not divide the in-features of {names}{more} "
            f"in {req.model_dir} — fix: use a group size that divides every layer's in-features "
            "(e.g. 32 or 64), or a per-channel scheme"]


class ExternalBackend(Backend):
    """A backend run as a subprocess in its own environment (see the module docstring).

    The request carries the base model, the recipe (the tool's own settings, as YAML), the
    calibration texts (the calibration set's rendered rows) and the load-check prompt; the
    worker quantizes into the stage's staging directory, reloads the artifact with the tool's
    own loader, generates a few greedy tokens and writes its result. Checks before loading,
    manifest, hashing and the atomic rename stay the stage's, as for any backend."""

    def recipe(self, req: QuantizeRequest) -> dict[str, Any]:
        import yaml

        if req.recipe is None or not req.recipe.is_file():
            raise BackendError(f"{req.variant}: recipe {req.recipe} not found — fix: point `recipe:` "
                               "at a file under recipes/")
        data = yaml.safe_load(req.recipe.read_text()) or {}
        if not isinstance(data, dict):
            raise BackendError(f"{req.recipe}: a {self.name} recipe is a mapping of the tool's "
                               "settings — fix: see recipes/<backend>_*.yaml and README.md, "
                               "\"Quantization backends\"")
        return data

    def check(self, req: QuantizeRequest) -> list[str]:
        try:
            recipe = self.recipe(req)
        except BackendError as err:
            return [str(err)]
        problems = self.recipe_problems(req, recipe)
        from pipeline.config import SCHEMES

        if SCHEMES.get(req.scheme).needs_calibration and req.calibration_dir is None:
            problems.append(f"{req.variant}: scheme {req.scheme} needs a calibration set")
        return problems

    def recipe_problems(self, req: QuantizeRequest, recipe: dict[str, Any]) -> list[str]:
        return []

    @staticmethod
    def load_check_spec(req: QuantizeRequest) -> dict[str, Any]:
        """The prompt the load check answers in the backend's environment (quantize.load_check)."""
        return {"messages": req.load_check, "new_tokens": req.load_check_tokens}

    def quantize(self, req: QuantizeRequest) -> QuantizeResult:
        texts, max_len = self.calibration_texts(req)
        request = {
            "variant": req.variant, "scheme": req.scheme, "model_dir": str(req.model_dir),
            "out_dir": str(req.out_dir), "recipe": self.recipe(req), "recipe_path": str(req.recipe),
            "calibration": texts,
            "max_seq_length": int(req.options.get("max_seq_length") or max_len or 512),
            "options": dict(req.options), "dtype": req.dtype, "device": req.device,
            "trust_remote_code": req.trust_remote_code, "load_check": self.load_check_spec(req),
        }
        result = self.call(self.name, self.name, request, req)
        return QuantizeResult(format=result["format"], tool_versions=result["tool_versions"],
                              details=result.get("details", {}), notes=result.get("notes", []),
                              load_check=result.get("load_check"))

    def call(self, env: str, module: str, request: dict[str, Any], req: QuantizeRequest) -> dict[str, Any]:
        """Run backend module `module`'s worker with environment `env`'s Python; its result."""
        python = backend_python(env)
        with tempfile.TemporaryDirectory(prefix=f"qpipe-{env}-") as tmp:
            req_path, res_path = Path(tmp) / "request.json", Path(tmp) / "result.json"
            req_path.write_text(json.dumps(request))
            self._run(python, module, req, req_path, res_path)
            if not res_path.is_file():
                raise BackendError(f"{env} worker for variant {req.variant!r} exited without a "
                                   "result — see its output above")
            return json.loads(res_path.read_text())

    def _run(self, python: str, module: str, req: QuantizeRequest, req_path: Path, res_path: Path) -> None:
        run_worker(self.name, [python, "-m", f"pipeline.quantize.{module}", str(req_path),
                               str(res_path)], req)


def worker_env(req: QuantizeRequest) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    env.setdefault("HF_HUB_OFFLINE", "1")
    env.setdefault("TRANSFORMERS_OFFLINE", "1")
    if req.device == "cpu":
        env["CUDA_VISIBLE_DEVICES"] = ""
    return env


def run_worker(name: str, cmd: list[str], req: QuantizeRequest) -> None:
    """Run a backend's worker process; its output goes through to the stage's (DVC's) output as
    it comes, and its tail into the error if it fails."""
    tail: deque[str] = deque(maxlen=60)
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          env=worker_env(req), errors="replace") as proc:
        try:
            for line in proc.stdout:
                sys.stderr.write(f"[{name}] {line}")
                tail.append(line.rstrip())
            proc.wait()
        except BaseException:  # Ctrl-C: the worker goes too
            proc.kill()
            raise
    if proc.returncode != 0:
        raise BackendError(f"{name} failed on variant {req.variant!r} with recipe {req.recipe} "
                           f"(exit {proc.returncode}); its output ends:\n" + "\n".join(tail))


# ── the worker side (runs in the backend's environment) ───────────────────────────────


def read_request() -> tuple[dict[str, Any], Path]:
    if len(sys.argv) != 3:
        sys.exit(f"usage: python -m {sys.argv[0]} request.json result.json")
    return json.loads(Path(sys.argv[1]).read_text()), Path(sys.argv[2])


def write_result(path: Path, result: dict[str, Any]) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(result, indent=2, default=str))
    os.replace(tmp, path)


def versions(*dists: str) -> dict[str, str]:
    out = {}
    for d in dists:
        try:
            out[d] = importlib.metadata.version(d)
        except importlib.metadata.PackageNotFoundError:
            pass
    return out


def log(msg: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} {msg}", flush=True)


def chat_prompt(tokenizer, messages: list[dict]) -> list[int]:
    """The load-check prompt as token ids, rendered with the artifact's own chat template."""
    out = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True)
    if isinstance(out, dict) or hasattr(out, "keys"):
        out = out["input_ids"]
    return list(out)


def generate_check(model, tokenizer, request: dict[str, Any], *, loader: str, device: str = "cpu") -> dict:
    """A few greedy tokens from the reloaded artifact (the load check recorded in the manifest)."""
    import torch

    spec = request["load_check"]
    t0 = time.time()
    ids = chat_prompt(tokenizer, spec["messages"])
    inp = torch.tensor([ids], device=device)
    with torch.no_grad():
        out = model.generate(input_ids=inp, attention_mask=torch.ones_like(inp),
                             max_new_tokens=spec["new_tokens"], do_sample=False,
                             pad_token_id=tokenizer.pad_token_id)
    new = out[0, len(ids):].tolist()
    return {"loader": loader, "ok": True, "tokens": new,
            "text": tokenizer.decode(new, skip_special_tokens=True), "device": device,
            "seconds": round(time.time() - t0, 3)}
