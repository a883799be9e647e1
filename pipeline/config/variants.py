"""The quantization sections: each entry of ``variants`` (backend, scheme, recipe, calibration
set, engine and their rules) and ``quantize`` (where it runs, and the load check)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field, model_validator

from pipeline.config.fields import Device, PositiveInt, Section
from pipeline.config.problems import Issue, fail, known
from pipeline.config.serving import engine_settings_class
from pipeline.config.scheme_tables import (
    backend_format,
    backend_schemes,
    recipe_format,
    BASELINE_SCHEMES,
    engine_names,
    NO_CALIBRATION,
    NO_REFERENCE,
    SCHEMES,
    SchemeInfo,
    UNQUANTIZED_SCHEMES,
)


class Variant(Section):
    """One quantized (or baseline) model: how it is made and which engine serves it."""

    backend: str
    scheme: str
    recipe: Path | None = None
    calibration: str | None = None
    # the variant it is judged against — the baseline, or its engine's own unquantized baseline
    # (compare.engine_baselines) — or `none` for the baseline itself; dvc.yaml runs the
    # reference's evaluation first (a sequential evaluation stops against its records)
    reference: str | None = None
    engine: str | None = None  # default: engines.formats[<the artifact's format>]
    url: str | None = None  # engine openai: the endpoint already serving this variant
    reason: str | None = None  # engine none / transformers: why it is not on a serving engine
    options: dict[str, Any] = Field(default_factory=dict)  # backend extras
    engine_options: dict[str, Any] = Field(default_factory=dict)  # over engines.<engine>

    @property
    def format(self) -> str:
        """The artifact format its backend writes (the key of the engines.formats table)."""
        return backend_format(self.backend)

    @property
    def info(self) -> SchemeInfo:
        return SCHEMES.get(self.scheme)

    @property
    def is_unquantized(self) -> bool:
        """The model's own weights in some format: a reference for others, never a candidate."""
        return self.scheme in UNQUANTIZED_SCHEMES

    @property
    def needs_calibration(self) -> bool:
        return self.info.needs_calibration

    @property
    def is_baseline(self) -> bool:
        return self.scheme in BASELINE_SCHEMES

    @model_validator(mode="after")
    def _check(self) -> Variant:
        issues = self._scheme_issues()
        if not any(loc == ("backend",) for loc, _, _ in issues):
            issues += self._recipe_issues()  # which recipe fits depends on a valid backend
        issues += self._engine_issues()
        if issues:
            fail(issues)
        return self

    def _scheme_issues(self) -> list[Issue]:
        issues: list[Issue] = []
        if self.scheme not in SCHEMES:
            issues.append((("scheme",), f"unknown scheme '{self.scheme}'",
                           known(self.scheme, SCHEMES)))
        backends = backend_schemes()
        if self.backend not in backends:
            issues.append((("backend",), f"unknown backend '{self.backend}'",
                           known(self.backend, backends)))
        if self.scheme not in SCHEMES:
            return issues
        if self.backend in backends and self.scheme not in backends[self.backend]:
            doers = [b for b, schemes in backends.items() if self.scheme in schemes]
            what = ("is an unquantized baseline and needs" if self.is_baseline
                    else "is done by")
            issues.append((("backend",),
                           f"backend '{self.backend}' does not do scheme '{self.scheme}'",
                           f"scheme '{self.scheme}' {what} backend {' or '.join(doers)}"))
        if self.needs_calibration and self.calibration in (None, NO_CALIBRATION):
            issues.append((("calibration",),
                           f"scheme '{self.scheme}' needs a calibration set",
                           "add `calibration: <name>` naming one of calibration.sets"))
        if self.reference is None:
            issues.append((("reference",), "variant names no reference",
                           f"add `reference: <variant>` (the unquantized variant it is judged against: "
                           f"the baseline, or its engine's own baseline), or `reference: {NO_REFERENCE}` "
                           "for the baseline itself"))
        if not self.needs_calibration and self.calibration != NO_CALIBRATION:
            issues.append((("calibration",),
                           f"scheme '{self.scheme}' uses no calibration data",
                           f"write `calibration: {NO_CALIBRATION}` (the empty set: DVC then never "
                           "requantizes this variant when calibration data changes)"))
        return issues

    def _recipe_issues(self) -> list[Issue]:
        if self.recipe is None:
            kind = {"llm-compressor": "an llm-compressor recipe", "preset": "a GGUF preset file",
                    "dtype": "recipes/baseline.yaml"}.get(recipe_format(self.backend) or "",
                                                          "the backend's recipe")
            return [(("recipe",), f"variant has no recipe (backend '{self.backend}')",
                     f"add `recipe: recipes/<file>.yaml` ({kind}); every variant names one, "
                     "so DVC tracks exactly what made it")]
        return []

    def _engine_issues(self) -> list[Issue]:
        if self.engine is None:
            return []  # resolved from engines.formats (checked across sections)
        if self.engine not in engine_names():
            return [(("engine",), f"unknown engine '{self.engine}'", known(self.engine, engine_names()))]
        issues: list[Issue] = []
        if self.engine == "none" and not self.reason:
            issues.append((("reason",), "engine 'none' needs a reason",
                           "add `reason: <why this variant is not served>`"))
        me = engine_settings_class(self.engine)
        url_engines = [e for e in engine_names() if getattr(engine_settings_class(e), "takes_url", False)]
        if me is not None and me.reference_only and not self.is_baseline and not self.reason:
            issues.append((("reason",), f"engine '{self.engine}' (the in-process reference) needs "
                           "a reason", "add `reason: <why no serving engine runs it here>`; its "
                           "speed is kept out of comparisons, so say why"))
        if me is not None and me.takes_url and not self.url:
            issues.append((("url",), f"engine '{self.engine}' needs a url",
                           "add `url: http://host:port/v1` (the endpoint serving it)"))
        if self.url and self.engine not in url_engines:
            named = "', '".join(url_engines)
            issues.append((("url",), f"url is only used by engine '{named}', not "
                           f"'{self.engine}'", f"remove `url:` or set `engine: {url_engines[0]}`"))
        if me is not None and me.schemes_prefix and not self.scheme.startswith(me.schemes_prefix):
            issues.append((("engine",), f"engine '{self.engine}' cannot serve scheme "
                           f"'{self.scheme}'", me.schemes_fix))
        for e in engine_names():
            own = engine_settings_class(e)
            if own is not None and own.exclusive_to and self.scheme.startswith(own.schemes_prefix) \
                    and self.engine not in (e, "none", *url_engines):
                issues.append((("engine",), f"engine '{self.engine}' cannot serve scheme '{self.scheme}' "
                               f"({own.exclusive_to})", f"set `engine: {e}`"))
        return issues


class LoadCheckConfig(Section):
    """The prompt every artifact's load check answers with a few greedy tokens (recorded in its
    manifest): a question in the model's own domain shows at a glance that the weights still work."""

    system: str | None = None
    prompt: str = "Reply with one short sentence."
    new_tokens: PositiveInt = 16

    def messages(self) -> list[dict[str, str]]:
        return ([{"role": "system", "content": self.system}] if self.system else []) + \
            [{"role": "user", "content": self.prompt}]


class QuantizeConfig(Section):
    """Where quantization runs. On a GPU the model stays in host memory and llm-compressor's
    sequential pipeline onloads one layer at a time, so a model larger than the GPU fits."""

    device: Device = "cpu"  # cpu | cuda | cuda:N | auto (cuda when one is present)
    # GPUs one llm-compressor run is spread over (torchrun, one process per GPU): each process
    # calibrates on its share of the samples, GPTQ's layer solves are divided among them.
    gpus: PositiveInt = 1
    load_check: LoadCheckConfig = Field(default_factory=LoadCheckConfig)
    out_dir: Path = Path("artifacts")  # one folder per variant: model files + manifest.json
    # <variant>.json (times, memory, host, git commit: what differs between two runs that made
    # the same bytes) and <variant>.log, outside the artifact so its DVC hash is its content's
    runs_dir: Path = Path("runs/quantize")

    @model_validator(mode="after")
    def _gpus_need_cuda(self) -> QuantizeConfig:
        if self.gpus > 1 and (self.device == "cpu" or self.device.startswith("cuda:")):
            fail([(("gpus",), f"gpus: {self.gpus} spreads quantization over the first {self.gpus} "
                    f"visible GPUs, which device {self.device!r} does not allow",
                    "set device: cuda (or auto), and choose the GPUs with CUDA_VISIBLE_DEVICES; "
                    "or set gpus: 1")])
        return self
