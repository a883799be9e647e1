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

app = typer.Typer(help="LLM quantization pipeline with business calibration management.",
                  no_args_is_help=True, add_completion=False)
demo_app = typer.Typer(help="The embedded demo: business logs, general corpus, demo model.",
                       no_args_is_help=True)
app.add_typer(demo_app, name="demo")
console = Console(stderr=True)

ParamsOpt = typer.Option(Path("params.yaml"), "--params", "-p", help="Path to params.yaml.")


@app.callback()
def _main(verbose: bool = typer.Option(False, "--verbose", "-v", help="Debug logging.")) -> None:
    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO, format="%(message)s",
                        handlers=[RichHandler(console=console, show_path=False)])


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


@demo_app.command("generate")
def demo_generate(params: Path = ParamsOpt) -> None:
    """Regenerate the demo business logs and general corpus (deterministic; committed)."""
    from pipeline.demo.stage import generate

    p = _params(params, check_files=False)
    summary = generate(p, params.resolve().parent)
    typer.echo(json.dumps(summary, indent=2))


@demo_app.command("train")
def demo_train(params: Path = ParamsOpt,
               device: Optional[str] = typer.Option(None, help="auto | cpu | cuda (default: params)"),
               out: Optional[Path] = typer.Option(None, help="Output directory (default: params)")) -> None:
    """Train the demo model (tokenizer + small Llama) and write it with its held-out score."""
    from pipeline.demo.train import TrainConfig, train

    p = _params(params, check_files=False)
    t, root = p.demo.train, params.resolve().parent
    cfg = TrainConfig(out=str(out or root / t.out_dir), seed=t.seed, logs_seed=p.demo.seed,
                      logs_conversations=p.demo.logs.conversations, examples=t.examples,
                      heldout=t.heldout, steps=t.steps, batch_size=t.batch_size,
                      learning_rate=t.learning_rate, device=device or t.device,
                      near_threshold=p.split.dedup.near_threshold)
    stats = train(cfg)
    typer.echo(json.dumps(stats["heldout"]["by_scenario"] | {"overall": stats["heldout"]["overall"]}))


@demo_app.command("eval")
def demo_eval(params: Path = ParamsOpt,
              n: int = typer.Option(600, help="Held-out conversations to score."),
              model: Optional[Path] = typer.Option(None, help="Model directory (default: model.path)")) -> None:
    """Score the demo model on held-out business-log conversations (greedy, project scorer)."""
    from pipeline.demo.heldout import evaluate_model

    p = _params(params)
    root = params.resolve().parent
    result = evaluate_model(model or root / p.model.path, seed=p.demo.seed, n=n)
    typer.echo(json.dumps({k: result[k] for k in ("overall", "n", "by_scenario", "by_difficulty")},
                          indent=2))


def main() -> None:  # pragma: no cover - console entry
    sys.exit(app())


if __name__ == "__main__":  # pragma: no cover
    main()
