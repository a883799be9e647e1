"""The `quantize@<variant>` stage: check → quantize → native load check → manifest, atomically.

The artifact is written into a temporary directory beside ``artifacts/<variant>`` and renamed
into place only after its manifest is written: a run killed midway leaves nothing that verifies.

Device (params ``quantize.device``, or ``qpipe quantize --device``): ``cpu``, ``cuda``,
``cuda:N`` or ``auto`` (cuda when torch sees a CUDA device, else cpu); ``quantize.gpus`` (or
``--gpus``) > 1 spreads an llm-compressor run over that many GPUs (one process each, torchrun).
The manifest records the device the run actually used, the GPU's name and the number of
processes; the run record (``quantize.runs_dir/<variant>.json``, not inside the artifact) the
times, peak memory (the largest of any process), host and git commit, so two runs that make the
same bytes make the same artifact — `qpipe reproduce <variant>` checks that they do.
"""

from __future__ import annotations

import logging
import os
import resource
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from pathlib import Path

import yaml

from pipeline import __version__
from pipeline.artifacts.manifest import build_manifest, file_table, model_identity
from pipeline.config import SCHEMES
from pipeline.contracts import ArtifactManifest, CalibrationCard
from pipeline.io import atomic_dirs, file_sha256
from pipeline.quantize.base import BackendError, QuantizeRequest, get_backend
from pipeline.artifacts.runrecord import run_context, run_log, split_run_facts, write_run_record
from pipeline.stage_params import Declared, StageView
from pipeline.layout import Layout
from pipeline.contracts.files import CARD, SAMPLES

log = logging.getLogger(__name__)

# the manifest records the engine serving the variant: its own `engine:`, else engines.formats'
PARAMS = Declared("quantize", "model", "quantize", "variants.${key}", "engines.formats")


def load_check(out_dir: Path, backend, *, msgs: list[dict[str, str]], model_dir: Path,
               new_tokens: int = 16, device: str = "cpu") -> dict:
    """Reload the artifact with its native loader and generate a few greedy tokens in answer to
    `msgs` (quantize.load_check).

    After a GPU run the check runs on that GPU when the model fits there (an 8B model generates
    in seconds there, in minutes on a CPU); a model larger than the GPU is checked on the CPU."""
    own = backend.load_check(out_dir, msgs=msgs, model_dir=model_dir, new_tokens=new_tokens)
    if own is not None:
        return own
    fmt = backend.format
    if not backend.transformers_loads:
        return {"loader": None, "ok": None, "reason": f"no in-process loader for format {fmt}"}
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    t0 = time.time()
    where = device if device != "cpu" and _fits_on_gpu(model_dir) else "cpu"
    tok = AutoTokenizer.from_pretrained(out_dir, local_files_only=True)
    placement = {} if where == "cpu" else {"device_map": where}
    model = AutoModelForCausalLM.from_pretrained(out_dir, dtype="auto", local_files_only=True,
                                                 **placement)
    enc = tok.apply_chat_template(msgs, add_generation_prompt=True, return_tensors="pt",
                                  return_dict=True).to(where)
    with torch.no_grad():
        out = model.generate(**enc, max_new_tokens=new_tokens, do_sample=False,
                             pad_token_id=tok.pad_token_id)
    ids = out[0, enc["input_ids"].shape[1]:].tolist()
    del model  # its GPU memory goes back before the stage returns
    if where != "cpu":
        torch.cuda.empty_cache()
    return {"loader": f"transformers.AutoModelForCausalLM ({fmt})", "ok": True, "tokens": ids,
            "text": tok.decode(ids, skip_special_tokens=True), "device": where,
            "seconds": round(time.time() - t0, 3)}


def _fits_on_gpu(model_dir: Path) -> bool:
    """Whether the artifact, even decompressed, fits in the free memory of the current GPU: the
    base model's weight files bound its dense size; 2 GiB are kept for activations."""
    import torch

    dense = sum(p.stat().st_size for p in Path(model_dir).glob("*.safetensors"))
    torch.cuda.empty_cache()  # what the quantization left cached counts as free here
    free, _ = torch.cuda.mem_get_info()
    return dense + 2 * 2**30 <= free


def _cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def resolve_device(requested: str) -> str:
    """``quantize.device`` → the device this run uses: ``cpu`` or ``cuda:<index>``.

    llm-compressor 0.14 onloads layers to the first GPU this process sees (``cuda:0``; with
    torch.distributed, the rank's). So ``cuda:N`` (N > 0) is honoured by letting this process
    see GPU N alone (``CUDA_VISIBLE_DEVICES``), which must happen before CUDA starts in it.
    """
    if requested == "cpu":
        return "cpu"
    if requested == "auto":
        return "cuda:0" if _cuda_available() else "cpu"
    if requested != "cuda" and not requested.startswith("cuda:"):
        raise BackendError(f"quantize.device {requested!r} is not a device — fix: use cpu, cuda, "
                           "cuda:N or auto in params.yaml (or `qpipe quantize --device`)")
    index = int(requested.partition(":")[2] or 0)
    if index:
        _see_only_gpu(index, requested)
    if not _cuda_available():
        raise BackendError(f"quantize.device is {requested!r} but torch sees no CUDA device here "
                           f"(CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES')!r}) — "
                           "fix: set quantize.device to cpu or auto, pick a GPU that exists "
                           "(`nvidia-smi -L`), or install a CUDA build of torch (see docs/gpu.md)")
    if index:
        import torch

        if torch.cuda.device_count() != 1:  # CUDA had counted the GPUs before the limit was set
            raise BackendError(f"quantize.device {requested!r}: this process already sees "
                               f"{torch.cuda.device_count()} GPUs and cannot be limited to one — "
                               f"fix: start it with CUDA_VISIBLE_DEVICES={index} and "
                               "quantize.device: cuda")
    return requested if index else "cuda:0"


def _see_only_gpu(index: int, requested: str) -> None:
    import torch

    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    ids = [v.strip() for v in visible.split(",")] if visible else None
    if torch.cuda.is_initialized():
        raise BackendError(f"quantize.device {requested!r}: CUDA has already started in this "
                           "process, so it can no longer be limited to that GPU (llm-compressor "
                           "onloads to the first visible one) — fix: start the process with "
                           f"CUDA_VISIBLE_DEVICES={index} and quantize.device: cuda")
    if ids is not None and index >= len(ids):
        raise BackendError(f"quantize.device {requested!r}: CUDA_VISIBLE_DEVICES={visible!r} lists "
                           f"{len(ids)} GPU(s) — fix: use an index below {len(ids)}")
    os.environ["CUDA_VISIBLE_DEVICES"] = ids[index] if ids is not None else str(index)


def _gpu_name(device: str) -> str | None:
    if device == "cpu":
        return None
    import torch

    return torch.cuda.get_device_name(0)  # the run's GPU is the first (or only) one visible


def calibration_files(calib: Path) -> dict[str, str]:
    """The SHA256 of every calibration file a quantizer reads, recomputed; refused when they are
    not the files the calibration card recorded at build time."""
    recorded = CalibrationCard.load(calib / CARD).files_sha256 or {}
    now = {n: file_sha256(calib / n) for n in recorded or (SAMPLES,) if (calib / n).is_file()}
    changed = sorted(n for n, sha in recorded.items() if now.get(n) != sha)
    if changed:
        raise BackendError(f"calibration set {calib.name}: {', '.join(changed)} changed after the set "
                           f"was built (its card records other hashes) — fix: `dvc repro "
                           f"calibration@{calib.name}` (or `dvc checkout {calib}`)")
    return now


def request_for(params: StageView, layout: Layout, name: str, device: str = "cpu", gpus: int = 1) -> QuantizeRequest:
    v = params.variants[name]
    calib = None
    if v.needs_calibration:
        calib = layout.calibration_set(v.calibration)
        if not (calib / CARD).is_file():
            raise BackendError(f"variant {name!r}: calibration set {v.calibration!r} is not built "
                               f"({calib}/card.json missing) — fix: `dvc repro calibration@{v.calibration}`")
        calibration_files(calib)  # the files a quantizer reads are the ones the set was built with
    return QuantizeRequest(variant=name, scheme=v.scheme, model_dir=layout.model,
                           out_dir=Path(), recipe=layout.root / v.recipe if v.recipe else None,
                           calibration_dir=calib,
                           options={"gguf_pre_tokenizer": params.model.gguf_pre_tokenizer} | dict(v.options),
                           dtype=params.model.dtype,
                           trust_remote_code=params.model.trust_remote_code, device=device,
                           processes=gpus, load_check=params.quantize.load_check.messages(),
                           load_check_tokens=params.quantize.load_check.new_tokens)


def resolve_gpus(gpus: int, used: str, backend) -> tuple[int, list[str]]:
    """How many processes (one per GPU) the run gets, and a note when fewer than asked."""
    if gpus == 1:
        return 1, []
    if used == "cpu" or not backend.several_gpus:
        if used == "cpu":
            raise BackendError(f"quantize.gpus is {gpus} but the run is on the CPU — fix: set "
                               "quantize.device to cuda (or auto on a GPU host), or gpus: 1")
        return 1, [f"quantize.gpus is {gpus}, but backend {backend.name!r} runs on one GPU; it used "
                   f"{used}"]
    import torch

    seen = torch.cuda.device_count()
    if seen < gpus:
        raise BackendError(f"quantize.gpus is {gpus} but this process sees {seen} GPU(s) "
                           f"(CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES')!r}) — "
                           f"fix: set gpus to {seen} or fewer, or make more GPUs visible")
    return gpus, []


def run(params: StageView, layout: Layout, name: str, *, device: str = "cpu", gpus: int = 1,
        out_parent: Path | None = None) -> dict:
    """Quantize variant ``name`` into ``<quantize.out_dir>/<name>`` (or ``out_parent/<name>``:
    `qpipe reproduce` rebuilds there) and write its run record beside, not inside, it.
    `params`: the stage's own (PARAMS, for `name`)."""
    v = params.variants[name]
    backend = get_backend(v.backend)
    if gpus > 1 and device.startswith("cuda:"):
        raise BackendError(f"--device {device} with {gpus} GPUs: a run over several GPUs takes the "
                           "first ones visible — fix: use --device cuda and choose the GPUs with "
                           "CUDA_VISIBLE_DEVICES")
    used = resolve_device(device)
    processes, gpu_notes = resolve_gpus(gpus, used, backend)
    record_path, log_path = layout.quantize_run(name), layout.quantize_log(name)
    if out_parent is not None:  # a rebuild keeps its record and log beside its own artifact
        record_path, log_path = out_parent / f"{name}.run.json", out_parent / f"{name}.log"
    # The backends run on the first visible GPU (the only one, after resolve_device for cuda:N);
    # several processes take the first `processes` visible GPUs, one each.
    req = request_for(params, layout, name, "cpu" if used == "cpu" else "cuda:0", processes)
    problems = backend.check(req)
    if problems:  # before any model is loaded
        raise BackendError(f"variant {name!r} cannot be quantized:\n  - " + "\n  - ".join(problems))
    record_path.unlink(missing_ok=True)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log_path.write_text("")
    req.log_path = log_path
    _reset_peak_gpu(used)
    started = datetime.now(timezone.utc)
    # Hashing the base model takes one core and reads every weight file (16 GB for an 8B model):
    # done beside the quantization instead of after it.
    with run_log(log_path), ThreadPoolExecutor(2, thread_name_prefix="qpipe-hash") as pool, \
            atomic_dirs(out_parent or layout.artifacts, [name]) as staged:
        identity = pool.submit(model_identity, req.model_dir)
        req.out_dir = staged[name]
        t0 = time.time()
        log.info("quantize %s: backend %s, scheme %s on %s", name, v.backend, v.scheme, used)
        result = backend.quantize(req)
        wall = time.time() - t0
        # The larger of this process and its children (llama.cpp's tools run as subprocesses).
        peak_rss = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                       resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) * 1024
        # Over several GPUs the work is the processes' (this one waited): the largest of theirs.
        per_process = [b for b in result.details.get("peak_gpu_bytes_per_process") or [] if b is not None]
        peak_gpu = max(per_process) if per_process else _peak_gpu(used)
        # The artifact's files are final: hash them while the load check reads them too.
        files = pool.submit(file_table, req.out_dir)
        log.info("quantize %s: done in %.1f s; load check", name, wall)
        check = result.load_check or load_check(req.out_dir, backend, msgs=req.load_check,
                                                new_tokens=req.load_check_tokens,
                                                model_dir=req.model_dir, device=req.device)
        details, backend_facts = split_run_facts(result.details)
        check, check_facts = split_run_facts(check)
        calib_card = CalibrationCard.load(req.calibration_dir / CARD) if req.calibration_dir else None
        info = SCHEMES.get(v.scheme)
        resolved = yaml.safe_load(req.recipe.read_text()) if req.recipe is not None else None
        # the group size the recipe actually sets (a config_groups entry, the tool's own
        # config), else the scheme's
        group = (backend.group_size(resolved) if isinstance(resolved, dict) else None) or info.group_size
        lineage = {
            "variant": name, "scheme": v.scheme, "bits": info.bits,
            "group_size": group, "format": result.format, "engine": params.engine_for(name),
            "backend": v.backend, "tool_versions": result.tool_versions | {"qpipe": __version__},
            "base_model": {"name": params.model.name, **identity.result(),
                           "path": str(params.model.path)},
            "recipe": None if req.recipe is None else {
                "path": str(v.recipe), "sha256": file_sha256(req.recipe), "resolved": resolved},
            "calibration": None if calib_card is None else {
                "name": v.calibration, "content_sha256": calib_card.content_sha256,
                "samples": calib_card.samples,
                # the bytes the quantizer read (recomputed after it ran: unchanged, or refused)
                "files_sha256": calibration_files(req.calibration_dir)},
            "options": dict(v.options),
            "trust_remote_code": params.model.trust_remote_code,  # the one remote-code switch
            # what made the bytes: the device and its kind take part (GPU kernels round
            # differently); how long it took and on which host do not (the run record says)
            "quantization": {"device": used, "device_requested": device, "processes": processes,
                             "gpu": _gpu_name(used), **details},
            "load_check": check, "notes": gpu_notes + result.notes,
        }
        manifest = build_manifest(req.out_dir, lineage=lineage, files=files.result(),
                                  contract=ArtifactManifest)
    write_run_record(record_path, {
        "variant": name, "status": "ok", "artifact_content_sha256": manifest["content_sha256"],
        "started_at": started.isoformat(timespec="seconds"),
        "finished_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "wall_seconds": round(wall, 3), "peak_rss_bytes": peak_rss, "peak_gpu_bytes": peak_gpu,
        "backend": backend_facts, "load_check": check_facts, "log": log_path.name,
        **run_context(layout.root, __version__)})
    log.info("artifact %s: %s, %.1f MB, %.1f s", name, result.format,
             manifest["size_bytes"] / 2**20, wall)
    return manifest


def _reset_peak_gpu(device: str) -> None:
    if device != "cpu":  # the figure in the manifest is this run's, not an earlier one's
        import torch

        torch.cuda.reset_peak_memory_stats()


def _peak_gpu(device: str) -> int | None:
    if device == "cpu":
        return None
    import torch

    return int(torch.cuda.max_memory_allocated())
