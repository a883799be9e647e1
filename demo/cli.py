"""`qpipe-demo` (or `python -m demo`): the embedded demo's own commands — regenerate its business
logs and general corpus, train and score its model. The demo uses the pipeline; the pipeline never
imports the demo."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

app = typer.Typer(help="The embedded demo: business logs, general corpus, demo model.",
                  no_args_is_help=True, add_completion=False)
ParamsOpt = typer.Option(Path("params.yaml"), "--params", "-p", help="Path to params.yaml.")


@app.command("generate")
def generate(params: Path = ParamsOpt) -> None:
    """Regenerate the demo business logs and general corpus (deterministic; committed)."""
    from demo.config import load_demo
    from demo.stage import generate as write

    summary = write(load_demo(params), params.resolve().parent)
    typer.echo(json.dumps(summary, indent=2))


@app.command("train")
def train(params: Path = ParamsOpt,
          device: Optional[str] = typer.Option(None, help="auto | cpu | cuda (default: params)"),
          out: Optional[Path] = typer.Option(None, help="Output directory (default: params)")) -> None:
    """Train the demo model (tokenizer + small Llama) and write it with its held-out score."""
    from demo.config import load_demo
    from demo.train import TrainConfig
    from demo.train import train as run
    from pipeline.config import load_params

    d, p = load_demo(params), load_params(params)
    t, root = d.train, params.resolve().parent
    cfg = TrainConfig(out=str(out or root / t.out_dir), seed=t.seed, logs_seed=d.seed,
                      logs_conversations=d.logs.conversations, examples=t.examples,
                      heldout=t.heldout, steps=t.steps, batch_size=t.batch_size,
                      learning_rate=t.learning_rate, device=device or t.device,
                      near_threshold=p.split.dedup.near_threshold)
    stats = run(cfg)
    typer.echo(json.dumps(stats["heldout"]["by_scenario"] | {"overall": stats["heldout"]["overall"]}))


@app.command("eval")
def evaluate(params: Path = ParamsOpt,
             n: int = typer.Option(600, help="Held-out conversations to score."),
             model: Optional[Path] = typer.Option(None, help="Model directory (default: model.path)")) -> None:
    """Score the demo model on held-out business-log conversations (greedy, project scorer)."""
    from demo.config import load_demo
    from demo.heldout import evaluate_model
    from pipeline.config import load_params

    d, p = load_demo(params), load_params(params)
    root = params.resolve().parent
    result = evaluate_model(model or root / p.model.path, seed=d.seed, n=n)
    typer.echo(json.dumps({k: result[k] for k in ("overall", "n", "by_scenario", "by_difficulty")},
                          indent=2))


QueueOpt = typer.Option(False, help="Queue the experiment (`dvc queue start`).")
DryRunOpt = typer.Option(False, help="Print the dvc command, run nothing.")


def _experiment(path: Path, queue: bool, dry_run: bool) -> None:
    import shlex
    import subprocess

    from demo.matrix import overrides

    cmd = ["dvc", "exp", "run", *(["--queue"] if queue else [])]
    for item in overrides(path):
        cmd += ["-S", item]
    typer.echo(" ".join(shlex.quote(c) for c in cmd))
    if not dry_run:
        raise typer.Exit(subprocess.run(cmd).returncode)


@app.command("full-matrix")
def full_matrix(queue: bool = QueueOpt, dry_run: bool = DryRunOpt) -> None:
    """Run the full variant matrix (every backend and scheme) as a DVC experiment: params.yaml's
    variants plus demo/full_matrix.yaml's, added with `dvc exp run -S`."""
    from demo.matrix import FULL_MATRIX

    _experiment(FULL_MATRIX, queue, dry_run)


if __name__ == "__main__":
    app()
