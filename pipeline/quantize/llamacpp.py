"""llama.cpp backend: GGUF presets (Q4_K_M, Q5_K_M, Q8_0, …) with an importance matrix computed
from the business calibration set.

convert (llama.cpp's own converter, f16) → ``llama-imatrix`` over the calibration set's
``imatrix.txt`` (texts already in the model's chat template) → ``llama-quantize --imatrix``.
The artifact holds the quantized ``.gguf`` and the importance matrix it was made with.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from pipeline import progress
from pipeline.config import family
from pipeline.llamacpp_tools import LlamaCppMissing, locate
from pipeline.quantize.base import (Backend, BackendError, MissingDependency,
                                    QuantizeRequest, QuantizeResult)

log = logging.getLogger(__name__)
K_QUANT_ROW = 256  # K-quant super-block width


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

    return {"tensors": len(r.tensors), "architecture": field("general.architecture"),
            "file_type": field("general.file_type"), "pre_tokenizer": field("tokenizer.ggml.pre"),
            "has_chat_template": "tokenizer.chat_template" in r.fields}


class LlamaCppBackend(Backend):
    name = "llamacpp"
    schemes = family("gguf")
    format = "gguf"
    recipe_format = "preset"
    extra = "quantize"

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
        import json

        cfg = json.loads((req.model_dir / "config.json").read_text())
        if "_K" in preset.upper():
            bad = {k: cfg[k] for k in ("hidden_size", "intermediate_size") if cfg.get(k, 0) % K_QUANT_ROW}
            if bad:  # llama.cpp falls back to other types for such rows: say so up front
                problems.append(f"{preset} needs rows divisible by {K_QUANT_ROW}; {req.model_dir} has "
                                f"{bad} — fix: choose Q8_0/Q4_0 or accept llama.cpp's fallbacks "
                                "with `options: {allow_fallback: true}`")
        return problems

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
                imatrix_out = req.out_dir / "imatrix.gguf"
                _run([tools.tool("llama-imatrix"), "-m", str(f16),
                      "-f", "imatrix.txt", "-o", str(imatrix_out),
                      "-c", str(imx.get("ctx", 512)), "--chunks", str(imx.get("chunks", 256)),
                      "-t", threads, "--no-ppl"],
                     "llama-imatrix", log_path, cwd=req.calibration_dir)
                quant_cmd += ["--imatrix", imatrix_out.name]
            gguf = req.out_dir / f"model-{preset}.gguf"
            _run([*quant_cmd, str(f16), gguf.name, preset, threads], "llama-quantize", log_path,
                 cwd=req.out_dir)
        from importlib.metadata import version

        return QuantizeResult(
            format="gguf",
            tool_versions={"llama.cpp": tools.version, "gguf-py (converter)": "vendored with llama.cpp",
                           "gguf (reader)": version("gguf")},
            details={"preset": preset, "gguf_file": gguf.name, "imatrix": imatrix_out is not None,
                     "imatrix_ctx": imx.get("ctx", 512), "imatrix_chunks": imx.get("chunks", 256),
                     "declared_pre_tokenizer": pre, "reader": gguf_summary(gguf)})
