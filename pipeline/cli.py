"""`qpipe`: the command line. Thin: every command validates params, then calls one stage."""

from __future__ import annotations

import json
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from pipeline.errors import QpipeError
from pipeline.orchestrate.command import register as register_orchestrator
from pipeline.processes import stage_dies_with_launcher, terminate_as_interrupt
from pipeline.progress import console  # log lines print above any live progress line

app = typer.Typer(help="LLM quantization pipeline with business calibration management.",
                  no_args_is_help=True, add_completion=False)
calib_app = typer.Typer(help="Business calibration sets: split, build, inspect, diff, freeze.",
                        no_args_is_help=True)
app.add_typer(calib_app, name="calib")
register_orchestrator(app)  # `qpipe repro`, `qpipe search`

ParamsOpt = typer.Option(Path("params.yaml"), "--params", "-p", help="Path to params.yaml.")


@app.callback()
def _main(verbose: bool = typer.Option(False, "--verbose", "-v", help="Debug logging.")) -> None:
    from pipeline.logs import configure

    configure(console, verbose)  # every record with its secrets masked
    # SIGTERM (for a stage, its launcher's death too) takes the Ctrl-C path: the same `finally`s
    terminate_as_interrupt()
    stage_dies_with_launcher()


def _params(path: Path, *, check_files: bool = True, variant: str | None = None):
    """(params, layout of params.yaml's folder): validated (files and recipes unless `check_files`
    is off), exit 1 listing every problem before anything loads; then the variant named, if any."""
    from pipeline.config import ConfigError, load_params
    from pipeline.layout import Layout
    from pipeline.validate import validate_project

    problems = validate_project(path) if check_files else []
    if not problems:
        try:
            p = load_params(path)
        except ConfigError as err:
            problems = err.problems
    if problems:
        _problems(problems)
        raise typer.Exit(1)
    if variant is not None:
        _defined(variant, p.variants, "variant")
    return p, Layout(path.resolve().parent, p)


def _stage(fn, params: Path, *args, declared, check_files: bool = True, variant: str | None = None, **kwargs):
    """The common command: validate params (and `variant`, passed on first), run `fn(the params its
    dvc.yaml stage declares (`declared`: its PARAMS; None: all), layout, …)`, user errors as one red line, exit 1."""
    p, layout = _params(params, check_files=check_files, variant=variant)
    args = args if variant is None else (variant, *args)
    return _guarded(fn, p if declared is None else p.for_stage(declared, variant), layout, *args, **kwargs)


def _problems(problems) -> None:
    """Every problem with its file and line, as validation renders them (no markup: the text
    quotes the user's own keys and paths)."""
    from pipeline.validate import render_problems

    console.print(render_problems(problems), markup=False, highlight=False, soft_wrap=True)


def _defined(name: str, defined, what: str) -> None:
    """Exit 2 on a `what` params.yaml does not define, naming the closest and every one."""
    if name not in defined:
        from pipeline.names import did_you_mean
        console.print(f"[red]unknown {what} {name!r}[/red] {did_you_mean(name, defined)} "
                      f"Available: {', '.join(defined) or '(none)'}")
        raise typer.Exit(2)


def _guarded(fn, *args, **kwargs):
    """Run a stage; a failure meant for the user (a `QpipeError`: engine, verification, gates,
    tracking…) exits 1 with its message in one red line, anything else keeps its traceback."""
    try:
        return fn(*args, **kwargs)
    except QpipeError as err:
        console.print(f"[red]{type(err).__name__}:[/red]", end=" ")
        console.print(str(err), markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(1) from err


def _echo(lines) -> None:  # a stage's summary lines on stdout, where scripts read them
    typer.echo("\n".join(lines))


def _say(line: str) -> None:  # a status line on stderr, as given (paths, URLs are not markup)
    console.print(line, markup=False)


@contextmanager
def _failure_tracked(p, layout, variant: str):
    """A failed evaluation (error, Ctrl-C, SIGTERM) goes to MLflow as FAILED at once (tracking.log_failures)."""
    try:
        yield
    except BaseException:
        if p.tracking.log_failures:
            from pipeline.tracking.log import PARAMS, log_failed

            line, logged = log_failed(p.for_stage(PARAMS), layout, variant)
            console.print(line, markup=False, style=None if logged else "yellow")
        raise


@app.command()
def validate(params: Path = ParamsOpt) -> None:
    """Check params.yaml and the recipes and paths it names, reporting every problem; then the
    environments its variants need (ready, or made at first need) and what this host cannot serve."""
    from pipeline.environments import host_problems, needed
    from pipeline.quantize.mlx import handled_notes
    p = _params(params)[0]  # exits 1 listing every problem
    console.print(f"[green]{params}: OK[/green]")
    host = [f"this host: {x}" for x in host_problems(p).values()]
    for line in [*handled_notes(p, params.parent), *(env.line() for env in needed(p)), *host]:
        console.print(line, markup=False, highlight=False, style="red" if line in host else None)
    if host:
        raise typer.Exit(1)


@calib_app.command("split")
def calib_split(params: Path = ParamsOpt) -> None:
    """Validate, scrub PII, deduplicate and split the logs into calibration pool + eval set."""
    from pipeline.calibration.split import PARAMS, run

    report = _stage(run, params, declared=PARAMS)
    ingest = {k: report["ingest"][k] for k in ("records_in", "kept", "rejected", "rejected_by_reason")}
    typer.echo(json.dumps({"ingest": ingest, "pii": report["pii"], "split": report["split"]}, indent=2))


@calib_app.command("build")
def calib_build(sets: list[str] = typer.Argument(None, help="Set names (default: every set)."),
                params: Path = ParamsOpt) -> None:
    """Build calibration sets: stratified sample, chat template, length filter, card."""
    from pipeline.calibration.build import PARAMS, check_set, run, summary_line

    p, layout = _params(params)
    for name in sets or list(p.calibration.sets):
        _guarded(check_set, p.calibration.sets, name)
        typer.echo(summary_line(name, _guarded(run, p.for_stage(PARAMS, name), layout, name)))


@calib_app.command("none")
def calib_none(params: Path = ParamsOpt) -> None:
    """Write the empty calibration set `none` (named by schemes that use no data)."""
    from pipeline.calibration.empty import PARAMS, run

    typer.echo(f"wrote {_stage(run, params, declared=PARAMS, check_files=False)}")


@calib_app.command("inspect")
def calib_inspect(name: str, params: Path = ParamsOpt) -> None:
    """Composition (scenario × length bucket, hard share) and hash of a built set."""
    from pipeline.calibration.inspect import inspect_set
    for shown in _guarded(inspect_set, _params(params, check_files=False)[1], name):
        Console().print(shown)


@calib_app.command("diff")
def calib_diff(a: str, b: str, params: Path = ParamsOpt) -> None:
    """What changed between two versions of a set (names or directories)."""
    from pipeline.calibration.inspect import diff_sets
    typer.echo(json.dumps(_guarded(diff_sets, _params(params, check_files=False)[1], a, b), indent=2))


@calib_app.command("freeze")
def calib_freeze(name: str, params: Path = ParamsOpt,
                 out: Optional[Path] = typer.Option(None, help="Default: calibration/specs/<set>.ids")) -> None:
    """Write a set's sample ids to a committed file, for `rotation.previous`."""
    from pipeline.calibration.inspect import freeze_set
    typer.echo(_guarded(freeze_set, _params(params, check_files=False)[1], name, out))


@app.command()
def quantize(variant: str = typer.Argument(..., help="Variant name from params.yaml."),
             params: Path = ParamsOpt,
             device: Optional[str] = typer.Option(
                 None, help="cpu | cuda | cuda:N | auto (default: params quantize.device)"),
             gpus: Optional[int] = typer.Option(
                 None, min=1, help="GPUs to spread an llm-compressor run over (default: params quantize.gpus)")
             ) -> None:
    """Quantize one variant into artifacts/<variant> (manifest + SHA256SUMS, atomically)."""
    from pipeline.quantize.stage import PARAMS, run

    p, layout = _params(params, variant=variant)
    m = _guarded(run, p.for_stage(PARAMS, variant), layout, variant, device=device or p.quantize.device,
                 gpus=gpus or p.quantize.gpus)  # its times and memory: quantize.runs_dir
    typer.echo(f"{variant}: {m['format']} {m['size_bytes'] / 2**20:.2f} MB, content "
               f"{m['content_sha256'][:12]}, load check: {m['load_check'].get('text')!r}")


@app.command()
def reproduce(variant: str = typer.Argument(..., help="Variant name from params.yaml."),
              params: Path = ParamsOpt, keep: Optional[Path] = typer.Option(
                  None, help="Keep the rebuilt artifact in this folder (default: a temporary one).")) -> None:
    """Quantize a variant again from the same inputs: exit 1 unless its bytes are the artifact's."""
    from pipeline.quantize.reproduce import reproduce as rebuild, stage

    result = _stage(rebuild, params, declared=stage.PARAMS, variant=variant, keep=keep)
    _echo(result.lines())
    raise typer.Exit(0 if result.matches else 1)


@app.command()
def verify(path: Path = typer.Argument(..., help="An artifact or handoff directory.")) -> None:
    """Check every file against manifest.json / SHA256SUMS, naming each mismatch; a bundle whole: its model's
    manifest and chain of custody too. Symlinks, special files and paths leaving the folder are refused."""
    from pipeline.handoff.custody import verify_path
    lines, ok = _guarded(verify_path, path)
    for line in lines:  # paths printed as they are (no markup: `[x]` is a legal file name)
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    raise typer.Exit(0 if ok else 1)


@app.command("eval")
def eval_(variant: str = typer.Argument(..., help="Variant name from params.yaml."),
          params: Path = ParamsOpt) -> None:
    """Serve one variant with its engine and evaluate it on the business evaluation set → results/<variant>/."""
    from pipeline.compare.stopping import stop_rule  # a sequential evaluation stops by compare's rule
    from pipeline.evaluate.stage import PARAMS, run, summary_line

    p, layout = _params(params, variant=variant)
    with _failure_tracked(p, layout, variant):
        m = _guarded(run, p.for_stage(PARAMS, variant), layout, variant, rules=stop_rule)
    typer.echo(summary_line(variant, m))


@app.command("eval-none")
def eval_none(params: Path = ParamsOpt) -> None:
    """Write the reference `none` (what the baseline is judged against: no records)."""
    from pipeline.evaluate.no_reference import PARAMS, run
    typer.echo(f"wrote {_stage(run, params, declared=PARAMS, check_files=False)}")


@app.command()
def serve(variant: str = typer.Argument(..., help="Variant name from params.yaml."),
          engine: Optional[str] = typer.Option(None, help="Another engine than the variant's."),
          params: Path = ParamsOpt) -> None:
    """Start a variant's engine (verified artifact) and keep it serving until Ctrl-C."""
    from pipeline.evaluate.stage import PARAMS, serve as run

    _stage(run, params, declared=PARAMS, variant=variant, engine=engine, ready=_say)
    console.print("stopped")


@app.command()
def bench(params: Path = ParamsOpt) -> None:
    """Throughput and latency of the baseline and every served variant, alternately, as ratios → bench.out_dir."""
    from pipeline.bench.stage import PARAMS, run, summary_lines

    _echo(summary_lines(_stage(run, params, declared=PARAMS)))


@app.command()
def compare(params: Path = ParamsOpt, baseline: Optional[str] = typer.Option(
        None, help="Another results folder to pair against (default: the baseline variant)."),
            variant: Optional[list[str]] = typer.Option(None, "--variant", help="Only these (repeatable).")) -> None:
    """Paired statistics against the baseline, gates, utility, Pareto front, plots → compare.out_dir/."""
    from pipeline.compare.summary import summary_lines
    from pipeline.compare.stage import PARAMS, run

    _echo(summary_lines(_stage(run, params, declared=PARAMS, baseline=baseline, variants=variant or None)))


@app.command()
def divergence(variant: str = typer.Argument(..., help="Variant name from params.yaml."),
               params: Path = ParamsOpt) -> None:
    """Token KL, top-1 agreement and gold log-likelihood against the reference, teacher-forced → results/divergence/."""
    from pipeline.evaluate.divergence import PARAMS, run, summary_line
    typer.echo(summary_line(variant, _stage(run, params, declared=PARAMS, variant=variant)))


@app.command("divergence-reference")
def divergence_reference(params: Path = ParamsOpt) -> None:
    """The reference's teacher-forced passes, once for every divergence@<variant> → results/divergence-reference/."""
    from pipeline.evaluate.reference_passes import PARAMS, run
    typer.echo(_stage(run, params, declared=PARAMS))


@app.command("gate-calibration")
def gate_calibration(params: Path = ParamsOpt) -> None:
    """Noise ladder on the reference weights: this model's KL and agreement limits → results/gate-calibration/."""
    from pipeline.evaluate.gate_calibration import PARAMS, run, summary_line
    typer.echo(summary_line(_stage(run, params, declared=PARAMS)))


@app.command()
def plan(params: Path = ParamsOpt,
         discordance: Optional[float] = typer.Option(
             None, help="Share of items a variant of equal quality changes (both ways); default: "
             "the measured noise floor, else compare.plan_discordance."),
         profile: Optional[list[str]] = typer.Option(None, "--profile", help="Only these (repeatable)."),
         json_out: Optional[Path] = typer.Option(None, "--json", help="Also write the plan here.")) -> None:
    """Before any compute: per slice the smallest visible drop, the items each profile needs, the profiles supported."""
    from pipeline.compare.plan import render, run
    _echo(render(_stage(run, params, declared=None, discordance=discordance, profiles=profile or None,
                        json_out=json_out)))


@app.command()
def report(params: Path = ParamsOpt) -> None:
    """Redo gates, utility, plots and comparison.md from comparison.json (a new profile or weights; no evaluation)."""
    from pipeline.compare.summary import summary_lines
    from pipeline.compare.stage import PARAMS, report_only
    _echo(summary_lines(_stage(report_only, params, declared=PARAMS)))


@app.command("diff-engines")
def diff_engines(variant: str = typer.Argument(..., help="Variant whose artifact is served."),
                 engines: str = typer.Option(..., help="Two engines, e.g. vllm,transformers."),
                 profile: Optional[str] = typer.Option(None, help="Strictness tier for the verdict "
                                                       "(docs/rationale.md#engine-tiers); default: gates.profile."),
                 params: Path = ParamsOpt) -> None:
    """One artifact on two engines: output consistency, accuracy per slice (docs/rationale.md#engine-tiers)."""
    from pipeline.compare.diff_engines import run, summary_lines
    p, layout = _params(params, variant=variant)
    _echo(summary_lines(_guarded(run, p, layout, variant, engines, profile=profile)))


@app.command()
def upgrade(name: str = typer.Argument(..., help="An upgrade of params serving.upgrades."),
            track_only: bool = typer.Option(False, "--track-only", help="Log existing results to MLflow."),
            params: Path = ParamsOpt) -> None:
    """One artifact, two serving configurations (engine release + settings): paired accuracy, the
    business's traffic replayed by GuideLLM, P99 verdicts → serving.out_dir/<name>/ (docs/upgrades.md)."""
    from pipeline.serving.stage import PARAMS, run, summary_lines, track_only as logged
    p, layout = _params(params)
    _defined(name, p.serving.upgrades, "upgrade")
    _echo(summary_lines(_guarded(logged if track_only else run, p.for_stage(PARAMS, name), layout, name)))


@app.command()
def sensitivity(params: Path = ParamsOpt) -> None:
    """Each part's KL under each candidate weight format on a calibration set, and the mixes proposed
    under params search's size budgets → search.out_dir/sensitivity.{json,md,png} (docs/search.md)."""
    from pipeline.search.stage import PARAMS, run, summary_lines
    _echo(summary_lines(_stage(run, params, declared=PARAMS)))


@app.command()
def handoff(params: Path = ParamsOpt) -> None:
    """Bundle every variant whose gates passed into handoff/<variant>/ (model, model card,
    comparison, manifest + SHA256SUMS); handoff/index.json lists what was left out and why."""
    from pipeline.handoff.stage import PARAMS, run, summary_lines
    _echo(summary_lines(_stage(run, params, declared=PARAMS)))


@app.command()
def approve(variant: str = typer.Argument(..., help="A variant of the comparison."),
            by: str = typer.Option(..., "--by", help="Who approves (recorded)."),
            note: Optional[str] = typer.Option(None, help="A note kept with the approval."),
            override: bool = typer.Option(False, help="Approve despite failed gates (recorded)."),
            reason: Optional[str] = typer.Option(None, help="Why, with --override."),
            params: Path = ParamsOpt) -> None:
    """Sign a variant off: only if its gates passed (or --override --reason), register its bundle
    in the MLflow Model Registry with the alias `approved`, record it in approvals/<variant>.json."""
    from pipeline.handoff.stage import approval_line, approve as run
    typer.echo(approval_line(_stage(run, params, variant, declared=None, by=by, note=note, override=override,
                                    reason=reason)))


@app.command()
def track(params: Path = ParamsOpt,
          tracking_uri: Optional[str] = typer.Option(None, help="Overrides params and "
                                                      "MLFLOW_TRACKING_URI.")) -> None:
    """Log every variant's evaluation (and failed ones, as FAILED) to MLflow, idempotently; if the
    server is down, results stay on disk and are marked for the next call."""
    from pipeline.tracking.log import PARAMS, run, summary_line
    r = _stage(run, params, declared=PARAMS, tracking_uri=tracking_uri)
    if r.get("pending"):
        console.print(f"[yellow]{summary_line(r)}[/yellow]")
    else:
        typer.echo(summary_line(r))


@app.command()
def ui(params: Path = ParamsOpt, port: int = typer.Option(5000, help="Port on 127.0.0.1.")) -> None:
    """Open the MLflow UI on the project's tracking store."""
    from pipeline.tracking.ui import serve_ui
    raise typer.Exit(_stage(serve_ui, params, port, declared=None, check_files=False, ready=_say))


def main() -> None:  # pragma: no cover - console entry
    sys.exit(app())


if __name__ == "__main__":  # pragma: no cover
    main()
