"""`qpipe`: the command line. Thin: every command validates params, then calls one stage."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.logging import RichHandler

from pipeline.errors import QpipeError

app = typer.Typer(help="LLM quantization pipeline with business calibration management.",
                  no_args_is_help=True, add_completion=False)
calib_app = typer.Typer(help="Business calibration sets: split, build, inspect, diff, freeze.",
                        no_args_is_help=True)
app.add_typer(calib_app, name="calib")
console = Console(stderr=True)

ParamsOpt = typer.Option(Path("params.yaml"), "--params", "-p", help="Path to params.yaml.")


@app.callback()
def _main(verbose: bool = typer.Option(False, "--verbose", "-v", help="Debug logging.")) -> None:
    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO, format="%(message)s",
                        handlers=[RichHandler(console=console, show_path=False)])
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per request otherwise
    # Every command: SIGTERM takes the Ctrl-C path, so engines, workers, staging folders and temp
    # files are cleaned up by the same `finally` blocks as an interrupt.
    _terminate_as_interrupt()


def _params(path: Path, *, check_files: bool = True):
    """Validate first (schema; and files and recipes unless the command creates them), exit 1
    listing every problem — before any model or data is loaded."""
    from pipeline.config import ConfigError, load_params
    from pipeline.validate import render_problems, validate_project

    problems = validate_project(path) if check_files else []
    if not problems:
        try:
            return load_params(path)
        except ConfigError as err:
            problems = err.problems
    console.print(render_problems(problems), markup=False, highlight=False, soft_wrap=True)
    raise typer.Exit(1)


@app.command()
def validate(params: Path = ParamsOpt) -> None:
    """Check params.yaml, the recipes it names and the paths it uses; report every problem."""
    from pipeline.validate import render_problems, validate_project

    problems = validate_project(params)
    if problems:
        console.print(render_problems(problems), markup=False, highlight=False, soft_wrap=True)
        console.print(f"[red]{len(problems)} problem(s) in {params}[/red]")
        raise typer.Exit(1)
    console.print(f"[green]{params}: OK[/green]")


@calib_app.command("split")
def calib_split(params: Path = ParamsOpt) -> None:
    """Validate, scrub PII, deduplicate and split the logs into calibration pool + eval set."""
    from pipeline.calibration.split import run

    p = _params(params)
    report = run(p, params.resolve().parent)
    typer.echo(json.dumps({"ingest": {k: report["ingest"][k] for k in ("records_in", "kept", "rejected",
                                                                       "rejected_by_reason")},
                           "pii": report["pii"], "split": report["split"]}, indent=2))


@calib_app.command("build")
def calib_build(sets: list[str] = typer.Argument(None, help="Set names (default: every set)."),
                params: Path = ParamsOpt) -> None:
    """Build calibration sets: stratified sample, chat template, length filter, card."""
    from pipeline.calibration.build import run

    p = _params(params)
    for name in sets or list(p.calibration.sets):
        card = run(p, params.resolve().parent, name)
        typer.echo(f"{name}: {card['samples']} samples, sha256 {card['content_sha256']}")


@calib_app.command("none")
def calib_none(params: Path = ParamsOpt) -> None:
    """Write the empty calibration set `none` (named by schemes that use no data)."""
    from pipeline.calibration.empty import write_empty_set

    p = _params(params, check_files=False)
    typer.echo(f"wrote {write_empty_set(params.resolve().parent / p.split.out_dir / 'calibration')}")


@calib_app.command("inspect")
def calib_inspect(name: str, params: Path = ParamsOpt) -> None:
    """Composition (scenario × length bucket, hard share) and hash of a built set."""
    from pipeline.calibration.inspect import inspect_table, set_dir

    p = _params(params, check_files=False)
    card, table = inspect_table(set_dir(params.resolve().parent / p.split.out_dir, name))
    Console().print(table)
    for src, short in card["shortfalls"].items():
        for s in short:
            Console().print(f"[yellow]shortfall ({src}):[/yellow] {s}")
    Console().print(f"overlap with eval set: {card['overlap_with_evalset']}")


@calib_app.command("diff")
def calib_diff(a: str, b: str, params: Path = ParamsOpt) -> None:
    """What changed between two versions of a set (names or directories)."""
    from pipeline.calibration.inspect import diff, set_dir

    p = _params(params, check_files=False)
    data = params.resolve().parent / p.split.out_dir
    typer.echo(json.dumps(diff(set_dir(data, a), set_dir(data, b)), indent=2))


@calib_app.command("freeze")
def calib_freeze(name: str, params: Path = ParamsOpt,
                 out: Optional[Path] = typer.Option(None, help="Default: calibration/specs/<set>.ids")) -> None:
    """Write a set's sample ids to a committed file, for `rotation.previous`."""
    from pipeline.calibration.inspect import freeze, set_dir

    p = _params(params, check_files=False)
    root = params.resolve().parent
    target = out or root / "calibration" / "specs" / f"{name}.ids"
    n = freeze(set_dir(root / p.split.out_dir, name), target)
    typer.echo(f"froze {n} ids of {name} into {target}")


@app.command()
def quantize(variant: str = typer.Argument(..., help="Variant name from params.yaml."),
             params: Path = ParamsOpt,
             device: Optional[str] = typer.Option(None, help="cpu | cuda | cuda:N | auto "
                                                  "(default: params quantize.device)"),
             gpus: Optional[int] = typer.Option(None, min=1, help="GPUs to spread an "
                                                "llm-compressor run over (default: params "
                                                "quantize.gpus)")) -> None:
    """Quantize one variant into artifacts/<variant> (manifest + SHA256SUMS, atomically)."""
    from pipeline.quantize.base import BackendError
    from pipeline.quantize.stage import run

    p = _params(params)
    if variant not in p.variants:
        from pipeline.names import did_you_mean
        console.print(f"[red]unknown variant {variant!r}[/red] {did_you_mean(variant, p.variants)} "
                      f"Available: {', '.join(p.variants)}")
        raise typer.Exit(2)
    try:
        m = run(p, params.resolve().parent, variant, device=device or p.quantize.device,
                gpus=gpus or p.quantize.gpus)
    except BackendError as err:
        console.print(f"[red]{err}[/red]", markup=False, soft_wrap=True)
        raise typer.Exit(1) from err
    typer.echo(f"{variant}: {m['format']} {m['size_bytes'] / 2**20:.2f} MB, "
               f"{m['quantization']['wall_seconds']} s, load check: {m['load_check'].get('text')!r}")


@app.command()
def verify(path: Path = typer.Argument(..., help="An artifact or handoff directory.")) -> None:
    """Check every file against manifest.json / SHA256SUMS; name each mismatch. A handoff bundle
    is checked whole: its files, its model's own manifest, and its chain of custody (artifact →
    evaluation → comparison → gates). Symlinks, special files and paths that leave the folder
    are refused."""
    import json as _json

    from pipeline.handoff.bundle import SCHEMA as BUNDLE
    from pipeline.artifacts.manifest import verify as verify_dir
    from pipeline.handoff.custody import verify_bundle

    try:
        is_bundle = _json.loads((path / "manifest.json").read_text()).get("schema") == BUNDLE
    except (OSError, ValueError, AttributeError):
        is_bundle = False
    problems = verify_bundle(path) if is_bundle else verify_dir(path)
    if problems:
        for p in problems:  # paths printed as they are (no markup: `[x]` is a legal file name)
            console.print(f"MISMATCH {path}/{p}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(1)
    console.print(f"{path}: every file matches its manifest"
                  + (", and its chain of custody holds" if is_bundle else ""),
                  markup=False, highlight=False)


def _variant(p, variant: str) -> None:
    if variant not in p.variants:
        from pipeline.names import did_you_mean
        console.print(f"[red]unknown variant {variant!r}[/red] {did_you_mean(variant, p.variants)} "
                      f"Available: {', '.join(p.variants)}")
        raise typer.Exit(2)


def _guarded(fn, *args, **kwargs):
    """Run a stage; a failure meant for the user (a `QpipeError`: engine, verification, gates,
    tracking…) exits 1 with its message, anything else keeps its traceback."""
    try:
        return fn(*args, **kwargs)
    except QpipeError as err:
        _user_failure(err)


def _user_failure(err: Exception) -> None:
    console.print(f"[red]{type(err).__name__}:[/red]", end=" ")
    console.print(str(err), markup=False, highlight=False, soft_wrap=True)
    raise typer.Exit(1) from err


def _terminate_as_interrupt() -> None:
    """SIGTERM (a `kill`, a CI timeout, DVC stopping) takes the Ctrl-C path: engines stop, a
    failed evaluation is kept under logs/failed/ and no partial results remain."""
    import signal

    def handler(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, handler)


def _track_failure(p, root: Path, variant: str) -> None:
    """Log a failed evaluation to MLflow as FAILED right away (the pipeline stops here, before
    its `track` stage); a tracking server that does not answer only marks it for `qpipe track`."""
    try:
        from pipeline.tracking import run as track

        r = track(p, root)
    except Exception as err:  # noqa: BLE001 - the evaluation's own error is what the user needs
        console.print(f"[yellow]the failed run of {variant} was not logged to MLflow ({err}); "
                      "`qpipe track` logs it from logs/failed/[/yellow]")
        return
    where = "marked for `qpipe track`" if r.get("pending") else f"run {r['runs'].get(variant)}"
    console.print(f"{variant}: logged to MLflow as FAILED ({where})", markup=False)


@app.command("eval")
def eval_(variant: str = typer.Argument(..., help="Variant name from params.yaml."),
          params: Path = ParamsOpt) -> None:
    """Serve one variant with its engine and evaluate it on the business evaluation set
    into results/<variant>/ (samples.jsonl, metrics.json, run.json, engine.log)."""
    from pipeline.evaluate.stage import run

    p = _params(params)
    _variant(p, variant)
    root = params.resolve().parent
    _terminate_as_interrupt()
    try:
        m = run(p, root, variant)
    except BaseException as err:
        if p.tracking.log_failures:
            _track_failure(p, root, variant)
        if isinstance(err, QpipeError):
            _user_failure(err)
        raise
    if not m.get("served", True):
        typer.echo(f"{variant}: {m['reason']}")
        return
    sp = m["speed"]
    typer.echo(f"{variant}: accuracy {m['accuracy']:.3f} (n={m['n']}) on {m['engine']['name']} "
               f"{m['engine']['version']} [{m['engine']['kernel']}]; {sp['output_tokens_per_second']}"
               f" output tok/s{'' if sp['serving_engine'] else ' (reference engine)'}")


@app.command()
def serve(variant: str = typer.Argument(..., help="Variant name from params.yaml."),
          engine: Optional[str] = typer.Option(None, help="Another engine than the variant's."),
          params: Path = ParamsOpt) -> None:
    """Start a variant's engine (verified artifact) and keep it serving until Ctrl-C."""
    import time

    from pipeline.evaluate.stage import open_engine

    p = _params(params)
    _variant(p, variant)
    root = params.resolve().parent
    log_path = root / "logs" / f"serve-{variant}.log"
    _terminate_as_interrupt()
    try:
        with open_engine(p, root, variant, log_path, engine=engine) as eng:
            where = getattr(eng, "base_url", "in process")
            console.print(f"{variant} served by {eng.name} at {where} (log: {log_path}); Ctrl-C stops it",
                          markup=False)
            while True:
                if hasattr(eng, "check_alive"):
                    eng.check_alive("while serving")
                time.sleep(1)
    except KeyboardInterrupt:
        console.print("stopped")
    except QpipeError as err:
        _user_failure(err)


@app.command()
def bench(params: Path = ParamsOpt) -> None:
    """Throughput and latency of the baseline and every served variant, alternately, in one
    run (speed is only comparable as ratios taken side by side) → bench.out."""
    from pipeline.bench.stage import run

    p = _params(params)
    _terminate_as_interrupt()
    r = _guarded(run, p, params.resolve().parent)
    for name, x in r["ratios"].items():
        typer.echo(f"{name}: output tok/s ×{x['output_tps_ratio']} vs {r['baseline']} "
                   f"(rounds {x['output_tps_ratio_per_round']}), roofline {x['roofline_fraction']}")
    for name, why in r["left_out"].items():
        typer.echo(f"{name}: {why}")


@app.command()
def compare(params: Path = ParamsOpt,
            baseline: Optional[str] = typer.Option(None, help="Another results folder to pair "
                                                   "against (default: the baseline variant)."),
            variant: Optional[list[str]] = typer.Option(None, "--variant",
                                                        help="Only these (repeatable).")) -> None:
    """Paired statistics of every variant against the baseline, gates, utility, Pareto front,
    calibration effect and plots → compare.out_dir/ (comparison.json, comparison.md, PNGs)."""
    from pipeline.compare.summary import summary_lines
    from pipeline.compare.stage import run

    p = _params(params)
    r = _guarded(run, p, params.resolve().parent, baseline=baseline, variants=variant or None)
    for line in summary_lines(r):
        typer.echo(line)


@app.command()
def divergence(variant: str = typer.Argument(..., help="Variant name from params.yaml."),
               params: Path = ParamsOpt) -> None:
    """Token-level KL divergence and top-1 agreement along the baseline's greedy outputs, and the
    change in the gold reference's log-likelihood, per sample and per slice (teacher-forced, exact
    in the transformers reference) → results/divergence/<variant>/."""
    from pipeline.evaluate.divergence import run

    p = _params(params)
    _variant(p, variant)
    _terminate_as_interrupt()
    r = _guarded(run, p, params.resolve().parent, variant)
    if not r.get("measured"):
        typer.echo(f"{variant}: not measured — {r['why']}")
        return
    o = r["overall"]
    typer.echo(f"{variant}: KLD mean {o.get('kld_mean', 0):.5f} (p99 {o.get('kld_p99', 0):.5f}) over "
               f"{o['tokens']} tokens, top-1 agreement {o.get('top1_agreement', 1):.4f}, reference "
               f"log-likelihood {o.get('ref_loglik_delta', 0):+.5f}/token vs {r['reference']} "
               f"({r['seconds']} s)")


@app.command()
def plan(params: Path = ParamsOpt,
         discordance: Optional[float] = typer.Option(
             None, help="Share of items a variant of equal quality changes (both ways); default: "
             "the measured noise floor, else compare.plan_discordance."),
         profile: Optional[list[str]] = typer.Option(None, "--profile", help="Only these (repeatable)."),
         json_out: Optional[Path] = typer.Option(None, "--json", help="Also write the plan here.")) -> None:
    """Before spending compute: per slice, the smallest drop the evaluation set can see and the
    items each gate profile's margins need; which profiles the evaluation set supports."""
    from pipeline.compare.plan import plan as make_plan, render
    from pipeline.io import write_json

    p = _params(params)
    r = _guarded(make_plan, p, params.resolve().parent, discordance=discordance,
                 profiles=profile or None)
    for line in render(r):
        typer.echo(line)
    if json_out:
        write_json(json_out, r)


@app.command()
def report(params: Path = ParamsOpt) -> None:
    """Redo gates, utility, plots and comparison.md from the existing comparison.json (after a
    change of gate profile or utility weights; no re-evaluation)."""
    from pipeline.compare.summary import summary_lines
    from pipeline.compare.stage import report_only

    p = _params(params)
    r = _guarded(report_only, p, params.resolve().parent)
    for line in summary_lines(r):
        typer.echo(line)


@app.command("diff-engines")
def diff_engines(variant: str = typer.Argument(..., help="Variant whose artifact is served."),
                 engines: str = typer.Option(..., help="Two engines, e.g. vllm,transformers."),
                 profile: Optional[str] = typer.Option(
                     None, help="Strictness tier for the verdict (seed 000 §7.5): "
                     "compliance_audit, finance_medical, general_saas, research; "
                     "default: gates.profile."),
                 params: Path = ParamsOpt) -> None:
    """Serve one artifact on two engines; report output consistency (exact, character, task
    result) and accuracy per slice — the engine as the only variable (seed 000 ch. 7)."""
    from pipeline.compare.diff_engines import run

    p = _params(params)
    _variant(p, variant)
    pair = [e.strip() for e in engines.split(",") if e.strip()]
    if len(pair) != 2:
        console.print("--engines takes exactly two engine names, e.g. vllm,transformers")
        raise typer.Exit(2)
    _terminate_as_interrupt()
    r = _guarded(run, p, params.resolve().parent, variant, pair, profile=profile)
    c = r["consistency"]
    typer.echo(f"{variant}: {pair[0]} vs {pair[1]} — exact {c['exact_match_rate']:.3f}, "
               f"char similarity {c['char_similarity']:.3f}, task agreement "
               f"{c['task_agreement']:.3f}; accuracy {r['accuracy'][pair[0]]:.3f} vs "
               f"{r['accuracy'][pair[1]]:.3f} (delta {r['paired']['delta']:+.3f}, CI "
               f"[{r['paired']['ci_low']:+.3f}, {r['paired']['ci_high']:+.3f}]) → {r['out']}")
    v = r["verdict"]
    typer.echo(f"verdict ({v['profile']}): {'PASS' if v['passed'] else 'FAIL'}")
    for c in v["criteria"]:
        typer.echo(f"  {'ok  ' if c['passed'] else ('n/a ' if c['passed'] is None else 'FAIL')} "
                   f"{c['name']}: {c['detail']}")


@app.command()
def handoff(params: Path = ParamsOpt) -> None:
    """Bundle every variant whose gates passed into handoff/<variant>/ (model, model card,
    comparison, manifest + SHA256SUMS); handoff/index.json lists what was left out and why."""
    from pipeline.handoff.stage import run

    p = _params(params)
    index = _guarded(run, p, params.resolve().parent)
    for name, b in index["bundles"].items():
        typer.echo(f"{name}: {b['path']} (sha256 {b['content_sha256'][:16]}…)")
    for name, why in index["left_out"].items():
        typer.echo(f"{name}: left out — {why}")


@app.command()
def approve(variant: str = typer.Argument(..., help="A variant of the comparison."),
            by: str = typer.Option(..., "--by", help="Who approves (recorded)."),
            note: Optional[str] = typer.Option(None, help="A note kept with the approval."),
            override: bool = typer.Option(False, help="Approve despite failed gates (recorded)."),
            reason: Optional[str] = typer.Option(None, help="Why, with --override."),
            params: Path = ParamsOpt) -> None:
    """Sign a variant off: only if its gates passed (or --override --reason), register its bundle
    in the MLflow Model Registry with the alias `approved`, record it in approvals/<variant>.json."""
    from pipeline.handoff.stage import approve as run

    p = _params(params)
    r = _guarded(run, p, params.resolve().parent, variant, by=by, note=note, override=override, reason=reason)
    reg = r["registry"]
    typer.echo(f"{variant}: approved by {by}{' (OVERRIDE: ' + reason + ')' if r['override'] else ''}; "
               f"registered {reg.get('name')} v{reg.get('version')} @{reg.get('alias')}; bundle "
               f"{r['bundle']} sha256 {r['bundle_sha256'][:16]}…")


@app.command()
def track(params: Path = ParamsOpt,
          tracking_uri: Optional[str] = typer.Option(None, help="Overrides params and "
                                                      "MLFLOW_TRACKING_URI.")) -> None:
    """Log every variant's evaluation (and failed ones, as FAILED) to MLflow, idempotently; if the
    server is down, results stay on disk and are marked for the next call."""
    from pipeline.tracking import run

    p = _params(params)
    r = _guarded(run, p, params.resolve().parent, tracking_uri=tracking_uri)
    if r.get("pending"):
        console.print(f"[yellow]tracking server unavailable: results kept, marked for `qpipe track` "
                      f"({r.get('reason', '')})[/yellow]")
        return
    typer.echo(f"experiment {r.get('experiment')}: logged {len(r.get('logged', []))}, "
               f"already there {len(r.get('skipped', []))}, failed runs {len(r.get('failed', []))}")


@app.command()
def ui(params: Path = ParamsOpt, port: int = typer.Option(5000, help="Port on 127.0.0.1.")) -> None:
    """Open the MLflow UI on the project's tracking store."""
    import subprocess

    from pipeline.tracking import ui_command

    p = _params(params, check_files=False)
    cmd = ui_command(p, params.resolve().parent, port)
    console.print(f"MLflow UI: http://127.0.0.1:{port}  (Ctrl-C stops it)", markup=False)
    from pipeline.engines.base import _group_gone, _session_dying_with_parent, _signal_group
    import signal as _signal
    import time as _time

    # Its own process group, dying with us: stopping `qpipe ui` stops the server's workers too,
    # so none is left holding the port.
    proc = subprocess.Popen(cmd, cwd=params.resolve().parent, preexec_fn=_session_dying_with_parent)
    try:
        code = proc.wait()
    finally:
        _signal_group(proc.pid, _signal.SIGTERM)
        if not _group_gone(proc.pid, deadline=_time.monotonic() + 10):
            _signal_group(proc.pid, _signal.SIGKILL)
        proc.wait()
    raise typer.Exit(code)


def main() -> None:  # pragma: no cover - console entry
    sys.exit(app())


if __name__ == "__main__":  # pragma: no cover
    main()
