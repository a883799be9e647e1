"""`qpipe repro`: the DVC pipeline, independent stages side by side (pipeline/orchestrate/repro.py),
here or as tasks on a Ray cluster (params.yaml's `execution` section)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer


def repro(targets: Optional[list[str]] = typer.Argument(None, help="Stages (default: all of dvc.yaml)."),
          jobs: Optional[int] = typer.Option(None, "--jobs", "-j",
                                             help="Stage commands at once (default: execution.jobs)."),
          force: bool = typer.Option(False, "--force", "-f", help="Run every planned stage."),
          execution: Optional[str] = typer.Option(None, help="local | ray (default: execution.backend)."),
          params: Path = typer.Option(Path("params.yaml"), "--params", "-p", help="Path to params.yaml.")) -> None:
    """`dvc repro` with independent stages at once; dvc.lock ends as a serial `dvc repro` leaves
    it. A failed stage stops what depends on it and nothing else; exit 1 names it."""
    from pipeline.config import ConfigError, load_params
    from pipeline.config.execution import ExecutionConfig
    from pipeline.errors import QpipeError
    from pipeline.orchestrate.repro import ReproError, repro as run, summary
    from pipeline.progress import console

    def say(line: str) -> None:
        console.print(line, markup=False, highlight=False, soft_wrap=True)

    try:
        loaded = load_params(params) if params.is_file() else None
    except ConfigError as err:
        say(str(err))
        raise typer.Exit(1) from err
    cfg = loaded.execution if loaded else ExecutionConfig()
    _remove_stale_staging(params.resolve().parent, say)
    if loaded:
        from pipeline.orchestrate.strays import stray_outputs, warning

        strays = stray_outputs(loaded, params.resolve().parent)
        if strays:
            say(warning(strays, params.resolve().parent))
    backend = execution or cfg.backend
    if backend not in ("local", "ray"):
        say(f"--execution must be local or ray, not {backend!r}")
        raise typer.Exit(2)
    executor = None
    if backend == "ray":
        from pipeline.orchestrate.ray_executor import RayExecutor

        executor = RayExecutor(cfg.ray)
        try:
            executor.connect()
        except QpipeError as err:
            console.print("[red]ClusterError:[/red]", end=" ")
            say(str(err))
            raise typer.Exit(1) from err
    try:
        outcomes = run(params.resolve().parent, targets or None, jobs=jobs or cfg.jobs, force=force,
                       say=say, executor=executor)
    except ReproError as err:
        for line in summary(err.outcomes):
            say(line)
        console.print("[red]ReproError:[/red]", end=" ")
        say(str(err))
        raise typer.Exit(1) from err
    for line in summary(outcomes):
        say(line)


def _remove_stale_staging(root: Path, say) -> None:
    """Staging folders of runs that were killed (no `finally` ran) go before anything runs."""
    from pipeline.orchestrate.strays import remove_path, stale_staging

    for path in stale_staging(root):
        remove_path(path)
        say(f"removed {path.relative_to(root)}: what a run that was killed was staging")


def search(tool: str = typer.Option("gguf", help="Which recipe of each proposal to build: gguf (llama.cpp "
                                    "--tensor-type overrides, llama-server) or llmcompressor (config_groups, vLLM)."),
           max_candidates: int = typer.Option(3, "--max-candidates", min=1,
                                              help="Proposals tried at most, cheapest first."),
           every: bool = typer.Option(False, "--every", help="Try every proposal (the whole front and the "
                                      "proxy's rank correlation over it), not only up to the first pass."),
           jobs: Optional[int] = typer.Option(None, "--jobs", "-j", help="Stage commands at once."),
           params: Path = typer.Option(Path("params.yaml"), "--params", "-p", help="Path to params.yaml.")) -> None:
    """The cheapest mixed-precision variant that passes the gate: the sensitivity stage's
    proposals added as variants, evaluated and judged cheapest first, stopping at the first pass
    (docs/search.md) → <compare.out_dir>/certify/search.md."""
    from pipeline.config import ConfigError, load_params
    from pipeline.errors import QpipeError
    from pipeline.orchestrate.repro import ReproError
    from pipeline.orchestrate.certify import run
    from pipeline.progress import console

    def say(line: str) -> None:
        console.print(line, markup=False, highlight=False, soft_wrap=True)

    try:
        cfg = load_params(params).execution
        run(params, tool=tool, max_candidates=max_candidates, jobs=jobs or cfg.jobs, every=every, say=say)
    except (ConfigError, ReproError, QpipeError) as err:
        console.print(f"[red]{type(err).__name__}:[/red]", end=" ")
        say(str(err))
        raise typer.Exit(1) from err


def register(app: typer.Typer) -> None:
    """The orchestrator's commands on the `qpipe` app."""
    app.command("repro")(repro)
    app.command("search")(search)
