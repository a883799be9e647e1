"""llm-compressor backend: AWQ / GPTQ W4A16, W8A8 INT8 (SmoothQuant + GPTQ), FP8 dynamic, NVFP4.

The recipe is llm-compressor's own YAML (recipes/*.yaml), passed to ``oneshot`` as is; the
calibration set's ``data.parquet`` (text already rendered with the chat template) is tokenized
here with the base model's tokenizer and handed over as a ``datasets.Dataset``. The model is
saved compressed (compressed-tensors), the format vLLM serves natively.

On a GPU the model is loaded into host memory and stays there: llm-compressor's calibration
pipelines (sequential for calibrated schemes, data-free for FP8 dynamic) onload one layer at a
time to the first visible GPU, so a model larger than the GPU is quantized all the same; only
a layer's weights and one batch of activations are on the GPU at a time.

Over several GPUs (``quantize.gpus`` > 1) the run is llm-compressor's distributed oneshot: this
module is started once per GPU by torchrun (``python -m torch.distributed.run --standalone
--nproc-per-node N -m pipeline.quantize.llmcompressor request.json result.json``); the first
process loads the weights and shares them with the others, each calibrates on its own contiguous
share of the samples, GPTQ's Hessians are summed and its layer solves divided among the
processes, and the first one saves the artifact. The stage around it (load check, manifest,
atomic rename) is the same.
"""

from __future__ import annotations

import json
import logging
import re
import shutil
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from pipeline.config import SCHEMES, family
from pipeline.quantize.base import (
    Backend,
    BackendError,
    QuantizeRequest,
    QuantizeResult,
    run_worker,
    write_result,
)
from pipeline.contracts.files import CALIBRATION_DATA, CARD

log = logging.getLogger(__name__)


def _recipe_ignores(recipe: dict) -> list[str]:
    out: list[str] = []

    def walk(obj):
        if isinstance(obj, dict):
            for k, v in obj.items():
                if k == "ignore" and isinstance(v, list):
                    out.extend(str(x) for x in v)
                else:
                    walk(v)
        elif isinstance(obj, list):
            for v in obj:
                walk(v)

    walk(recipe)
    return out


def module_names(model_dir: Path) -> set[str]:
    """Module names from the checkpoint's tensor names, read from safetensors headers only
    (a model with tied embeddings stores no lm_head tensor, yet has the module)."""
    from safetensors import safe_open

    names: set[str] = set()
    cfg = json.loads((model_dir / "config.json").read_text())
    if cfg.get("tie_word_embeddings"):
        names.add("lm_head")
    for f in sorted(model_dir.glob("*.safetensors")):
        with safe_open(str(f), framework="np") as st:
            for key in st.keys():
                parts = key.split(".")
                names.update(".".join(parts[:i]) for i in range(1, len(parts)))
    return names


def _disable_pinning_without_accelerator() -> None:
    """llm-compressor 0.14.0.1's AWQ pins cached activations in host memory for faster
    host-to-device copies; without an accelerator `Tensor.pin_memory()` raises "Cannot access
    accelerator device when none is available". Pinning has no purpose then: make it a no-op."""
    import torch

    if torch.cuda.is_available():
        return
    from llmcompressor.pipelines.cache import IntermediatesCache

    IntermediatesCache.pin_memory = lambda self, batch_index, input_names=None: None


def _onloading_notes(device: str) -> list[str]:
    """What the manifest must say when llm-compressor's own device choice differs from the one
    asked for: it onloads to the first GPU it sees, whatever the request."""
    import torch

    if device != "cpu":
        if torch.device(device).index not in (None, 0):
            raise BackendError(f"device {device!r}: llm-compressor 0.14 onloads to the first visible "
                               "GPU only — fix: use cuda, or cuda:N through the quantize stage "
                               "(which limits the process to that GPU)")
        return []
    if not torch.cuda.is_available():
        return []
    note = ("quantize.device is cpu, but llm-compressor 0.14 calibrated on the visible GPU "
            f"({torch.cuda.get_device_name(0)}) regardless — to stay on the CPU, hide the GPUs "
            "with CUDA_VISIBLE_DEVICES=\"\"; to say so, set quantize.device: cuda")
    log.warning(note)
    return [note]


# The group size of each compressed-tensors preset scheme that groups its weights
# (compressed_tensors.quantization.quant_scheme); the others are per channel.
PRESET_GROUP_SIZE = {"W4A16": 128, "W4A16_ASYM": 128, "NVFP4": 16, "NVFP4A16": 16,
                     "MXFP4": 32, "MXFP4A16": 32}


def group_sizes(fields: Mapping[str, Any]) -> set[int]:
    """The weight group sizes one modifier's fields quantize with: each `config_groups` entry's
    `weights.group_size` (what the recipe says), else the preset scheme's own."""
    out: set[int] = set()
    groups = fields.get("config_groups")
    if isinstance(groups, Mapping):
        for group in groups.values():
            weights = group.get("weights") if isinstance(group, Mapping) else None
            size = weights.get("group_size") if isinstance(weights, Mapping) else None
            if isinstance(size, int) and not isinstance(size, bool) and size > 0:
                out.add(size)
        return out
    scheme = fields.get("scheme")
    presets = [scheme] if isinstance(scheme, str) else list(scheme) if isinstance(scheme, Mapping) else []
    return {PRESET_GROUP_SIZE[str(p).upper()] for p in presets if str(p).upper() in PRESET_GROUP_SIZE}


def recipe_group_size(recipe: Any) -> int | None:
    """The group size a whole recipe quantizes weights with (the largest, where modifiers
    differ: every grouped layer's in-features must divide by it); None: not grouped."""
    found: set[int] = set()

    def walk(obj: Any) -> None:
        if isinstance(obj, Mapping):
            if "config_groups" in obj or "scheme" in obj:
                found.update(group_sizes(obj))
            for value in obj.values():
                walk(value)

    walk(recipe)
    return max(found) if found else None


class LlmCompressorBackend(Backend):
    name = "llmcompressor"
    schemes = family("compressed")
    format = "compressed-tensors"
    recipe_format, extra = "llm-compressor", "quantize"
    several_gpus, transformers_loads = True, True  # torchrun's distributed oneshot; compressed-tensors

    def group_size(self, recipe: dict[str, Any]) -> int | None:
        return recipe_group_size(recipe)

    def check(self, req: QuantizeRequest) -> list[str]:
        problems = []
        if req.recipe is None or not req.recipe.is_file():
            return [f"{req.variant}: recipe {req.recipe} not found — fix: point `recipe:` at a "
                    "file under recipes/"]
        recipe = yaml.safe_load(req.recipe.read_text())
        names = module_names(req.model_dir)
        for pattern in _recipe_ignores(recipe):
            if pattern.startswith("re:"):
                rx = re.compile(pattern[3:])
                if not any(rx.match(n) for n in names):
                    problems.append(f"{req.recipe}: ignore pattern {pattern!r} matches no layer of "
                                    f"{req.model_dir} — fix: correct the regex or drop it")
            elif pattern not in names:
                problems.append(f"{req.recipe}: ignore names layer {pattern!r}, which {req.model_dir} "
                                "does not have — fix: use a module name from the checkpoint "
                                "(e.g. 'lm_head') or a 're:' pattern")
        if SCHEMES.get(req.scheme).needs_calibration and req.calibration_dir is None:
            problems.append(f"{req.variant}: scheme {req.scheme} needs a calibration set")
        if req.processes > 1:
            problems.extend(filter(None, [shared_memory_problem(req.model_dir)]))
        return problems

    def quantize(self, req: QuantizeRequest) -> QuantizeResult:
        if req.processes > 1:
            return self._quantize_distributed(req)
        llmc = self.require("llmcompressor")
        from pipeline.models import (cast_back, compute_dtypes, load_model, load_tokenizer,
                                     upcast_record)

        _disable_pinning_without_accelerator()
        notes = _onloading_notes(req.device)
        tokenizer = load_tokenizer(req.model_dir, trust_remote_code=req.trust_remote_code)
        stored, compute = compute_dtypes(req.model_dir, req.dtype, req.device)
        # Host memory on every device: on a GPU, oneshot onloads layer by layer (see above).
        model = load_model(req.model_dir, dtype=compute, trust_remote_code=req.trust_remote_code,
                           device="cpu")
        max_len = _max_len(req.calibration_dir, req.options)
        ds = _dataset(req.calibration_dir, req.scheme, tokenizer, max_len)
        n = _oneshot(llmc, model, tokenizer, ds, max_len, variant=req.variant, recipe=req.recipe)
        cast_back(model, stored, compute)  # saved in the checkpoint's dtype, whatever it ran in
        model.save_pretrained(req.out_dir, save_compressed=True)
        upcast = upcast_record(stored, compute)
        # A fresh load: the one oneshot used carries its runtime truncation/padding state.
        load_tokenizer(req.model_dir, trust_remote_code=req.trust_remote_code).save_pretrained(req.out_dir)
        return QuantizeResult(
            format="compressed-tensors", tool_versions=_versions(llmc),
            details={"calibration_samples": n, "max_seq_length": max_len if n else None,
                     "processes": 1,
                     "onloading": None if req.device == "cpu" else
                     "host memory, onloaded layer by layer by llm-compressor's pipeline",
                     **upcast[0]},
            notes=notes + upcast[1])

    def _quantize_distributed(self, req: QuantizeRequest) -> QuantizeResult:
        """One process per GPU under torchrun (see the module docstring); this process waits."""
        self.require("llmcompressor")
        request = {"variant": req.variant, "scheme": req.scheme, "model_dir": str(req.model_dir),
                   "out_dir": str(req.out_dir), "recipe": str(req.recipe),
                   "calibration_dir": None if req.calibration_dir is None else str(req.calibration_dir),
                   "options": dict(req.options), "dtype": req.dtype, "device": req.device,
                   "trust_remote_code": req.trust_remote_code}
        with tempfile.TemporaryDirectory(prefix="qpipe-llmcompressor-") as tmp:
            req_path, res_path = Path(tmp) / "request.json", Path(tmp) / "result.json"
            req_path.write_text(json.dumps(request))
            run_worker(self.name, [sys.executable, "-m", "torch.distributed.run", "--standalone",
                                   f"--nproc-per-node={req.processes}", "-m",
                                   "pipeline.quantize.llmcompressor", str(req_path), str(res_path)],
                       req)
            if not res_path.is_file():
                raise BackendError(f"llm-compressor's processes for variant {req.variant!r} exited "
                                   "without a result — see their output above")
            result = json.loads(res_path.read_text())
        return QuantizeResult(format="compressed-tensors", tool_versions=result["tool_versions"],
                              details=result["details"], notes=result["notes"])


# llm-compressor's loading context keeps this much of /dev/shm for other use (its default).
SHM_RESERVE = 5 * 10**9


def shared_memory_problem(model_dir: Path, shm_total: int | None = None) -> str | None:
    """Why a run over several processes cannot share ``model_dir``'s weights, or None.

    In a distributed run the first process loads the weights into shared memory (/dev/shm)
    and the others map them; llm-compressor sizes its host-memory budget from /dev/shm, less
    ``SHM_RESERVE``, and puts whatever does not fit on disk, which transformers then refuses
    without an offload folder. Checked before any process starts."""
    if shm_total is None:
        if not Path("/dev/shm").is_dir():
            return None  # no Linux shared memory to size: llm-compressor uses host memory
        shm_total = shutil.disk_usage("/dev/shm").total
    weights = sum(f.stat().st_size for f in Path(model_dir).glob("*.safetensors"))
    need = weights + SHM_RESERVE
    if shm_total >= need:
        return None
    return (f"{model_dir}: its {weights / 1e9:.1f} GB of weights are shared between the processes "
            f"through /dev/shm, which holds {shm_total / 1e9:.1f} GB ({SHM_RESERVE / 1e9:.0f} GB of "
            f"it kept free by llm-compressor) — fix: enlarge /dev/shm to at least "
            f"{-(-need // 10**9)} GB (`docker run --shm-size=…`, or `mount -o remount,size=…G "
            "/dev/shm` as root), or set quantize.gpus: 1")


def _max_len(calibration_dir: Path | None, options: dict) -> int:
    """The token limit: the variant's option, else the calibration set's own (its samples are
    already cut to it), else 512."""
    from pipeline.contracts import CalibrationCard

    params = None
    if calibration_dir is not None and (calibration_dir / CARD).is_file():
        params = CalibrationCard.load(calibration_dir / CARD).params
    from_card = (params or {}).get("set", {}).get("max_seq_len")
    return int(options.get("max_seq_length") or from_card or 512)


def _dataset(calibration_dir: Path | None, scheme: str, tokenizer, max_len: int,
             share: tuple[int, int] = (0, 1)):
    """The calibration rows tokenized with the base tokenizer (None: the scheme takes no data).
    ``share`` = (index, count): this process's contiguous share of the rows."""
    if calibration_dir is None or not SCHEMES.get(scheme).needs_calibration:
        return None
    from datasets import Dataset

    ds = Dataset.from_parquet(str(calibration_dir / CALIBRATION_DATA))
    index, count = share
    if count > 1:
        if len(ds) < count:
            raise BackendError(f"{calibration_dir}: {len(ds)} calibration sample(s) cannot be "
                               f"shared among {count} processes — fix: use more samples or "
                               "fewer GPUs (quantize.gpus)")
        ds = ds.shard(num_shards=count, index=index, contiguous=True)
    return ds.map(lambda r: tokenizer(r["text"], add_special_tokens=False, truncation=True,
                                      max_length=max_len),
                  remove_columns=ds.column_names)


def _oneshot(llmc, model, tokenizer, ds, max_len: int, *, variant: str, recipe) -> int:
    """llm-compressor's oneshot with the recipe as written; the number of samples it saw."""
    n = 0 if ds is None else len(ds)
    # The calibration order as the set lists it (llm-compressor shuffles it by default): the
    # same set gives the same Hessians and so the same bytes.
    kwargs = {} if ds is None else dict(dataset=ds, num_calibration_samples=n,
                                        max_seq_length=max_len, shuffle_calibration_samples=False)
    try:
        llmc.oneshot(model=model, recipe=str(recipe), processor=tokenizer, **kwargs)
    except Exception as err:  # surface which variant and recipe failed, keep the cause
        raise BackendError(f"llm-compressor failed on variant {variant!r} with recipe "
                           f"{recipe}: {err}") from err
    return n


def _versions(llmc) -> dict[str, str]:
    import compressed_tensors
    import torch
    import transformers

    return {"llmcompressor": llmc.__version__, "compressed-tensors": compressed_tensors.__version__,
            "transformers": transformers.__version__, "torch": torch.__version__}


# ── one process of a distributed run (started by torchrun) ──────────────────────────────────


def _process_main(request: dict, result_path: Path) -> None:
    import llmcompressor as llmc
    import torch
    import torch.distributed as dist
    from llmcompressor.utils import load_context

    from pipeline.models import (cast_back, compute_dtypes, load_model, load_tokenizer,
                                 upcast_record)

    cuda = request["device"] != "cpu"
    if cuda:  # one GPU per process (LOCAL_RANK), NCCL
        from compressed_tensors.offload import init_dist

        init_dist()
    else:     # processes on the CPU talk over gloo (used to test the orchestration without GPUs)
        dist.init_process_group("gloo")
        _disable_pinning_without_accelerator()
    rank, world = dist.get_rank(), dist.get_world_size()
    try:
        model_dir = Path(request["model_dir"])
        tokenizer = load_tokenizer(model_dir, trust_remote_code=request["trust_remote_code"])
        # The first process reads the weights into host memory and shares them; the others
        # start on the meta device (llm-compressor's loading context).
        stored, compute = compute_dtypes(model_dir, request["dtype"], request["device"])
        with load_context():
            model = load_model(model_dir, dtype=compute, device_map="auto_offload",
                               trust_remote_code=request["trust_remote_code"])
        calib = None if request["calibration_dir"] is None else Path(request["calibration_dir"])
        max_len = _max_len(calib, request["options"])
        ds = _dataset(calib, request["scheme"], tokenizer, max_len, share=(rank, world))
        if cuda:
            torch.cuda.reset_peak_memory_stats()
        n = _oneshot(llmc, model, tokenizer, ds, max_len, variant=request["variant"],
                     recipe=request["recipe"])
        # On the CPU llm-compressor hands the quantized weights over through shared memory, with
        # no message: the last layer's modules are still being written by the process that owns
        # them when the others leave oneshot. Every process waits here before anything is saved.
        dist.barrier()
        out = Path(request["out_dir"])
        cast_back(model, stored, compute)
        model.save_pretrained(out, save_compressed=True)  # written by the first process
        peak = int(torch.cuda.max_memory_allocated()) if cuda else None
        gathered: list = [None] * world
        dist.all_gather_object(gathered, {"samples": n, "peak_gpu_bytes": peak,
                                          "device": str(torch.cuda.current_device()) if cuda else "cpu"})
        if rank == 0:  # a fresh load, as in the single-process path
            load_tokenizer(model_dir, trust_remote_code=request["trust_remote_code"]).save_pretrained(out)
            write_result(result_path, {
                "tool_versions": _versions(llmc),
                "details": {"calibration_samples": sum(g["samples"] for g in gathered),
                            "max_seq_length": max_len if n else None, "processes": world,
                            "samples_per_process": [g["samples"] for g in gathered],
                            "peak_gpu_bytes_per_process": [g["peak_gpu_bytes"] for g in gathered],
                            "onloading": "llm-compressor distributed oneshot: weights in host "
                            "memory, shared by the first process; each process onloads layer by "
                            "layer to its own GPU" if cuda else
                            "llm-compressor distributed oneshot over CPU processes (gloo)",
                            **upcast_record(stored, compute)[0]},
                "notes": upcast_record(stored, compute)[1]})
        dist.barrier()
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: torchrun --nproc-per-node N -m pipeline.quantize.llmcompressor "
                 "request.json result.json")
    _process_main(json.loads(Path(sys.argv[1]).read_text()), Path(sys.argv[2]))
