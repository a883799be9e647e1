"""The `quantize@<variant>` stage: check → quantize → native load check → manifest, atomically.

The artifact is written into a temporary directory beside ``artifacts/<variant>`` and renamed
into place only after its manifest is written: a run killed midway leaves nothing that verifies.
"""

from __future__ import annotations

import json
import logging
import resource
import subprocess
import time
from pathlib import Path

import yaml

from pipeline import __version__
from pipeline.artifacts.manifest import build_manifest, model_identity
from pipeline.config import SCHEMES
from pipeline.io import atomic_dirs, file_sha256
from pipeline.quantize.base import BackendError, QuantizeRequest, get_backend

log = logging.getLogger(__name__)

BITS = {"bf16": 16, "fp16": 16, "w4a16_gptq": 4, "w4a16_awq": 4, "w8a8_int8": 8,
        "fp8_dynamic": 8, "nvfp4": 4}
LOAD_CHECK_PROMPT = [
    {"role": "user", "content": "What is the warranty period of the Vertex laptop?"}]


def _git_commit(root: Path) -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                             timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None


def load_check(out_dir: Path, fmt: str, *, system: str | None, model_dir: Path,
               new_tokens: int = 16) -> dict:
    """Reload the artifact with its native loader and generate a few greedy tokens."""
    msgs = ([{"role": "system", "content": system}] if system else []) + LOAD_CHECK_PROMPT
    if fmt == "gguf":
        return _gguf_load_check(out_dir, msgs, model_dir, new_tokens)
    if fmt not in ("compressed-tensors", "hf"):
        return {"loader": None, "ok": None, "reason": f"no in-process loader for format {fmt}"}
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(out_dir, local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(out_dir, dtype="auto", local_files_only=True)
    enc = tok.apply_chat_template(msgs, add_generation_prompt=True, return_tensors="pt", return_dict=True)
    with torch.no_grad():
        out = model.generate(**enc, max_new_tokens=new_tokens, do_sample=False,
                             pad_token_id=tok.pad_token_id)
    ids = out[0, enc["input_ids"].shape[1]:].tolist()
    return {"loader": f"transformers.AutoModelForCausalLM ({fmt})", "ok": True, "tokens": ids,
            "text": tok.decode(ids, skip_special_tokens=True)}


def _gguf_load_check(out_dir: Path, msgs: list[dict], model_dir: Path, new_tokens: int) -> dict:
    """The GGUF file through the `gguf` reader (done by the backend) and through llama.cpp itself:
    llama-server loads it and completes the prompt, rendered with the base model's template."""
    import tempfile

    from pipeline.engines.llamacpp import LlamaServer
    from pipeline.models import load_tokenizer

    prompt = load_tokenizer(model_dir).apply_chat_template(msgs, tokenize=False, add_generation_prompt=True)
    [gguf] = sorted(out_dir.glob("*.gguf"), key=lambda p: p.name.startswith("imatrix"))[:1]
    with tempfile.TemporaryDirectory() as tmp, LlamaServer(gguf, Path(tmp) / "server.log") as srv:
        out = srv.complete(prompt, new_tokens)
    return {"loader": "llama.cpp llama-server", "ok": True, "tokens": out.get("tokens"),
            "text": out.get("content", "").strip()}


def request_for(params, root: Path, name: str, device: str = "cpu") -> QuantizeRequest:
    v = params.variants[name]
    calib = None
    if v.needs_calibration:
        calib = root / params.split.out_dir / "calibration" / v.calibration
        if not (calib / "card.json").is_file():
            raise BackendError(f"variant {name!r}: calibration set {v.calibration!r} is not built "
                               f"({calib}/card.json missing) — fix: `dvc repro calibration@{v.calibration}`")
    return QuantizeRequest(variant=name, scheme=v.scheme, model_dir=root / params.model.path,
                           out_dir=Path(), recipe=root / v.recipe if v.recipe else None,
                           calibration_dir=calib,
                           options={"gguf_pre_tokenizer": params.model.gguf_pre_tokenizer} | dict(v.options),
                           dtype=params.model.dtype,
                           trust_remote_code=params.model.trust_remote_code, device=device)


def run(params, root: Path, name: str, *, device: str = "cpu") -> dict:
    v = params.variants[name]
    backend = get_backend(v.backend)
    req = request_for(params, root, name, device)
    problems = backend.check(req)
    if problems:  # before any model is loaded
        raise BackendError(f"variant {name!r} cannot be quantized:\n  - " + "\n  - ".join(problems))
    with atomic_dirs(root / "artifacts", [name]) as staged:
        req.out_dir = staged[name]
        t0 = time.time()
        result = backend.quantize(req)
        wall = time.time() - t0
        # The larger of this process and its children (llama.cpp's tools run as subprocesses).
        peak_rss = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                       resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) * 1024
        peak_gpu = _peak_gpu()
        from pipeline.demo.world import SYSTEM_PROMPTS  # the demo's FAQ prompt; harmless elsewhere

        check = load_check(req.out_dir, result.format, system=SYSTEM_PROMPTS["faq"],
                           model_dir=req.model_dir)
        calib_card = json.loads((req.calibration_dir / "card.json").read_text()) if req.calibration_dir else None
        info = SCHEMES.get(v.scheme)
        lineage = {
            "variant": name, "scheme": v.scheme, "bits": BITS.get(v.scheme),
            "group_size": info.group_size, "format": result.format, "engine": v.engine,
            "backend": v.backend, "tool_versions": result.tool_versions | {"qpipe": __version__},
            "base_model": {"name": params.model.name, **model_identity(req.model_dir),
                           "path": str(params.model.path)},
            "recipe": None if req.recipe is None else {
                "path": str(v.recipe), "sha256": file_sha256(req.recipe),
                "resolved": yaml.safe_load(req.recipe.read_text())},
            "calibration": None if calib_card is None else {
                "name": v.calibration, "content_sha256": calib_card["content_sha256"],
                "samples": calib_card["samples"]},
            "options": dict(v.options),
            "quantization": {"wall_seconds": round(wall, 6), "peak_rss_bytes": peak_rss,
                             "peak_gpu_bytes": peak_gpu, "device": device, **result.details},
            "load_check": check, "notes": result.notes, "git_commit": _git_commit(root),
        }
        manifest = build_manifest(req.out_dir, lineage=lineage)
    log.info("artifact %s: %s, %.1f MB, %.1f s", name, result.format,
             manifest["size_bytes"] / 2**20, wall)
    return manifest


def _peak_gpu() -> int | None:
    try:
        import torch
    except ImportError:
        return None
    return int(torch.cuda.max_memory_allocated()) if torch.cuda.is_available() else None
