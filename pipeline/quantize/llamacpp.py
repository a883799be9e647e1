"""llama.cpp backend: GGUF presets (Q4_K_M, Q5_K_M, Q8_0, …) with an importance matrix computed
from the business calibration set.

convert (llama.cpp's own converter, f16) → ``llama-imatrix`` over the calibration set's
``imatrix.txt`` (texts already in the model's chat template) → ``llama-quantize --imatrix``.
The artifact holds the quantized ``.gguf`` and the importance matrix it was made with.
"""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path
from typing import Any

import yaml

from pipeline import progress
from pipeline.config import family
from pipeline.engines.llamacpp import LlamaServer
from pipeline.llamacpp_tools import LlamaCppMissing, locate
from pipeline.models import load_tokenizer
from pipeline.quantize.base import (Backend, BackendError, MissingDependency,
                                    QuantizeRequest, QuantizeResult)
from pipeline.contracts.files import IMATRIX

log = logging.getLogger(__name__)


def _run(cmd: list[str], what: str, log_path: Path, env: dict | None = None,
         cwd: Path | None = None) -> None:
    """Run one llama.cpp step, its output appended to the run's log; on a terminal a live line
    shows the step and the tool's last log line."""
    with log_path.open("a") as fh, progress.task(what) as shown:
        fh.write(f"$ {' '.join(cmd)}\n")
        fh.flush()
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, env=env, cwd=cwd)
        try:
            while proc.poll() is None:
                shown.status(progress.last_line(log_path))
                time.sleep(0.5)
        finally:
            if proc.poll() is None:  # Ctrl-C: the tool stops with us
                proc.kill()
                proc.wait()
    if proc.returncode != 0:
        tail = "\n".join(log_path.read_text(errors="replace").splitlines()[-25:])
        raise BackendError(f"{what} failed (exit {proc.returncode}); log tail:\n{tail}")


_FALLBACK = re.compile(r"warning: (?P<tensor>\S+)\s+- ncols\s+(?P<cols>\d+) not divisible by\s+"
                       r"(?P<block>\d+) \(required for type\s+(?P<type>\S+)\).*?-> falling back to\s+"
                       r"(?P<fallback>\S+)")


def fallback_tensors(log_text: str) -> list[dict]:
    """The tensors llama-quantize gave another type because the preset's blocks do not divide
    their rows, from its own warnings (llama-quant.cpp, tensor_type_fallback).

    >>> fallback_tensors("warning: blk.0.ffn_down.weight           - ncols   1536 not divisible by "
    ...                  "256 (required for type    q4_K) -> falling back to    q5_0\\n")
    [{'tensor': 'blk.0.ffn_down.weight', 'cols': 1536, 'block': 256, 'type': 'q4_K', 'fallback': 'q5_0'}]
    """
    return [{"tensor": m["tensor"], "cols": int(m["cols"]), "block": int(m["block"]),
             "type": m["type"], "fallback": m["fallback"]} for m in _FALLBACK.finditer(log_text)]


def gguf_summary(path: Path) -> dict:
    """Read the file back with the `gguf` reader: tensor count, file type, pre-tokenizer."""
    from gguf import GGUFReader

    r = GGUFReader(str(path))

    def field(name):
        f = r.fields.get(name)
        if f is None:
            return None
        v = f.parts[f.data[0]]
        return bytes(v).decode() if v.dtype.kind == "u" and v.dtype.itemsize == 1 else v.tolist()[0]

    types: dict[str, int] = {}
    for t in r.tensors:
        types[t.tensor_type.name] = types.get(t.tensor_type.name, 0) + 1
    return {"tensors": len(r.tensors), "tensor_types": dict(sorted(types.items())),
            "architecture": field("general.architecture"),
            "file_type": field("general.file_type"), "pre_tokenizer": field("tokenizer.ggml.pre"),
            "has_chat_template": "tokenizer.chat_template" in r.fields}


def tokenization_mismatch(req: QuantizeRequest, hf, index: int, text: str, want: list[int],
                          got: list[int]) -> str:
    """Where the two tokenizations part, with the pieces around it, and what to change."""
    at = next((k for k, (a, b) in enumerate(zip(want, got)) if a != b), min(len(want), len(got)))
    pieces = lambda ids: hf.convert_ids_to_tokens(ids[max(0, at - 2):at + 4])  # noqa: E731
    pre = req.options.get("pre_tokenizer") or req.options.get("gguf_pre_tokenizer")
    return (f"variant {req.variant!r}: the converted GGUF tokenizes calibration text {index} "
            f"otherwise than the Hugging Face tokenizer of {req.model_dir} ({len(want)} vs "
            f"{len(got)} tokens; first difference at token {at}: Hugging Face {pieces(want)}, "
            f"GGUF {pieces(got)}; text {text[:80]!r}…) — an importance matrix and every answer "
            f"would be computed on other tokens. Fix: set model.gguf_pre_tokenizer (now {pre!r}) "
            "to the pre-tokenizer this tokenizer's regex matches (llama.cpp's names: llama3, "
            "qwen2, gpt-2, …), and check tokenizer.json: a BPE model with `byte_fallback: true` "
            "over ByteLevel pre-tokenization makes the converter write an SPM vocabulary")


class LlamaCppBackend(Backend):
    name = "llamacpp"
    schemes = family("gguf")
    format = "gguf"
    needs_llamacpp_tools = True
    recipe_format = "preset"
    extra = "quantize"

    def recipe_key(self, scheme: str) -> tuple[str, str]:
        """A recipe names llama.cpp's preset, the scheme's own (`gguf_q4_k_m`: Q4_K_M)."""
        return "preset", scheme.removeprefix("gguf_").upper()

    def load_check(self, out_dir: Path, *, msgs: list[dict[str, str]], model_dir: Path,
                   new_tokens: int) -> dict[str, Any]:
        """The GGUF file through the `gguf` reader (done in quantize) and through llama.cpp
        itself: llama-server loads it and completes the prompt, rendered with the base model's
        template."""
        prompt = load_tokenizer(model_dir).apply_chat_template(msgs, tokenize=False, add_generation_prompt=True)
        [gguf] = sorted(out_dir.glob("*.gguf"), key=lambda p: p.name.startswith("imatrix"))[:1]
        with tempfile.TemporaryDirectory() as tmp, LlamaServer(gguf, Path(tmp) / "server.log") as srv:
            out = srv.complete(prompt, new_tokens)
        return {"loader": "llama.cpp llama-server", "ok": True, "tokens": out.get("tokens"),
                "text": out.get("content", "").strip()}

    def check(self, req: QuantizeRequest) -> list[str]:
        problems = []
        try:
            tools = locate()
            for t in ("llama-quantize", "llama-imatrix"):
                tools.tool(t)
            if tools.converter is None or not (tools.converter / "convert_hf_to_gguf.py").is_file():
                problems.append("llama.cpp's converter (convert_hf_to_gguf.py) not found — fix: "
                                "`bash scripts/setup-llamacpp.sh` or set QPIPE_LLAMACPP_CONVERTER")
        except LlamaCppMissing as err:
            problems.append(str(err))
        recipe = yaml.safe_load(req.recipe.read_text()) if req.recipe and req.recipe.is_file() else {}
        preset = str(recipe.get("preset", ""))
        if preset.upper() != req.scheme.removeprefix("gguf_").upper():
            problems.append(f"{req.recipe}: preset {preset!r} does not match scheme {req.scheme}")
        for i, override in enumerate(recipe.get("tensor_types") or []):
            if not isinstance(override, str) or not re.fullmatch(r"[^=\s]+=[A-Za-z0-9_]+", override):
                problems.append(f"{req.recipe}: tensor_types[{i}] {override!r} is not `<tensor-name regex>=<ggml "
                                "type>` (llama-quantize --tensor-type; e.g. blk\\.0\\.attn_q\\.weight=q8_0)")
        return problems

    def check_tokenization(self, req: QuantizeRequest, gguf: Path, work: Path, samples: int = 8) -> None:
        """The converted GGUF's vocabulary must tokenize calibration texts exactly as the Hugging
        Face tokenizer does; a wrong pre-tokenizer, or a vocabulary the converter wrote as SPM
        where the model is byte-level BPE, shows up here instead of in the results."""
        texts = [t[:2000] for t in self.calibration_texts(req)[0][:samples]]
        hf = load_tokenizer(req.model_dir, trust_remote_code=req.trust_remote_code)
        with LlamaServer(gguf, work / "tokenize.log", ctx=512) as srv:
            for i, text in enumerate(texts):
                want = hf(text, add_special_tokens=False)["input_ids"]
                got = srv.tokenize(text)
                if got != want:
                    raise BackendError(tokenization_mismatch(req, hf, i, text, want, got))
        log.info("%s: the GGUF tokenizes %d calibration texts as the Hugging Face tokenizer does",
                 req.variant, len(texts))

    def quantize(self, req: QuantizeRequest) -> QuantizeResult:
        try:
            tools = locate()
        except LlamaCppMissing as err:
            raise MissingDependency(str(err)) from err
        recipe = yaml.safe_load(req.recipe.read_text())
        preset = str(recipe["preset"]).upper()
        imx = recipe.get("imatrix") or {}
        threads = str(req.options.get("threads", os.cpu_count() or 1))
        # The tools' output goes to the run's log, never into the artifact (it names times
        # and paths: identical weights would hash differently).
        log_path = req.log_path or req.out_dir.parent / f".{req.variant}.llamacpp.log"
        with tempfile.TemporaryDirectory(prefix="gguf-", dir=req.out_dir.parent) as work_s:
            work = Path(work_s)
            f16 = work / "model-f16.gguf"
            pre = req.options.get("pre_tokenizer") or req.options.get("gguf_pre_tokenizer")
            cmd = [sys.executable, "-m", "pipeline.quantize.gguf_convert", "--converter",
                   str(tools.converter)]
            if pre:
                cmd += ["--pre", str(pre)]
            cmd += ["--", str(req.model_dir), "--outfile", str(f16),
                    "--outtype", str(recipe.get("outtype", "f16"))]
            _run(cmd, "GGUF conversion (convert_hf_to_gguf.py)", log_path)
            quant_cmd = [tools.tool("llama-quantize")]
            imatrix_out = None
            # Both tools write the paths they are given into the GGUF metadata
            # (imatrix.datasets, quantize.imatrix.file / .dataset): they run where those files
            # lie and get bare names, so the artifact does not depend on where the project or
            # its staging folder is.
            if req.calibration_dir is not None:
                # An importance matrix over text the GGUF splits otherwise than the model was
                # trained to would weigh the wrong tokens (or crash llama-imatrix): check first.
                self.check_tokenization(req, f16, work)
                imatrix_out = req.out_dir / "imatrix.gguf"
                _run([tools.tool("llama-imatrix"), "-m", str(f16),
                      "-f", IMATRIX, "-o", str(imatrix_out),
                      "-c", str(imx.get("ctx", 512)), "--chunks", str(imx.get("chunks", 256)),
                      "-t", threads, "--no-ppl"],
                     "llama-imatrix", log_path, cwd=req.calibration_dir)
                quant_cmd += ["--imatrix", imatrix_out.name]
            for override in recipe.get("tensor_types") or []:  # a mixed recipe: llama.cpp's own overrides
                quant_cmd += ["--tensor-type", str(override)]
            gguf = req.out_dir / f"model-{preset}.gguf"
            start = log_path.stat().st_size
            _run([*quant_cmd, str(f16), gguf.name, preset, threads], "llama-quantize", log_path,
                 cwd=req.out_dir)
        with log_path.open("rb") as fh:
            fh.seek(start)
            fallbacks = fallback_tensors(fh.read().decode(errors="replace"))
        notes = []
        if fallbacks:
            moves = sorted({f"{f['type']} -> {f['fallback']}" for f in fallbacks})
            notes.append(f"{len(fallbacks)} tensors have rows that {preset}'s blocks do not divide; "
                         f"llama.cpp quantized them with a fallback type ({', '.join(moves)}), as "
                         "published GGUFs of such models are (manifest: quantization.fallbacks)")
            log.warning("%s: %s", req.variant, notes[-1])
        return QuantizeResult(notes=notes,
            format="gguf",
            tool_versions={"llama.cpp": tools.version, "gguf-py (converter)": "vendored with llama.cpp",
                           "gguf (reader)": version("gguf")},
            details={"preset": preset, "tensor_types": list(recipe.get("tensor_types") or []),
                     "gguf_file": gguf.name, "imatrix": imatrix_out is not None,
                     "imatrix_ctx": imx.get("ctx", 512), "imatrix_chunks": imx.get("chunks", 256),
                     "declared_pre_tokenizer": pre, "reader": gguf_summary(gguf),
                     "fallbacks": fallbacks})
