"""The demo's own params section (`demo:` in params.yaml): the pipeline never reads it."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Annotated, Literal

import yaml
from pydantic import Field

from pipeline.config import PositiveInt, Share, Section


class DemoLogs(Section):
    out_dir: Path
    conversations: PositiveInt = 3000
    days: PositiveInt = 90
    end_date: dt.date
    malformed_share: Share = 0.02
    duplicate_share: Share = 0.03


class DemoGeneralCorpus(Section):
    path: Path
    documents: PositiveInt = 600


class DemoTrain(Section):
    out_dir: Path
    seed: int = 7
    examples: PositiveInt = 120000
    heldout: PositiveInt = 600
    steps: PositiveInt = 3333
    batch_size: PositiveInt = 128
    learning_rate: Annotated[float, Field(gt=0)] = 0.002
    device: Literal["auto", "cpu", "cuda"] = "auto"


class DemoConfig(Section):
    seed: int = 0
    logs: DemoLogs
    general_corpus: DemoGeneralCorpus
    train: DemoTrain


def load_demo(params_path: Path) -> DemoConfig:
    """The `demo:` section of a params file, validated; a clear error when it is missing."""
    data = yaml.safe_load(Path(params_path).read_text(encoding="utf-8")) or {}
    if not data.get("demo"):
        raise SystemExit(f"{params_path}: no `demo:` section — the demo commands need one "
                         "(see the repository's params.yaml)")
    return DemoConfig.model_validate(data["demo"])
