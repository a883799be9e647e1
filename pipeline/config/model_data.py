"""The input sections, in pipeline order: ``model``, ``data``, ``split`` (with its PII and
dedup settings) and ``calibration`` (its sets and their rotation)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from pipeline.config.fields import MAX_WORKERS, Name, OpenShare, PositiveInt, Share, Section
from pipeline.config.problems import fail


class ModelConfig(Section):
    name: str
    path: Path
    dtype: Literal["auto", "bfloat16", "float16", "float32"] = "bfloat16"
    trust_remote_code: bool = False
    # llama.cpp's converter recognises a tokenizer's pre-tokenizer by a hash of its output; a
    # tokenizer trained in-house is unknown to it and must be declared (e.g. qwen2, llama-bpe).
    gguf_pre_tokenizer: str | None = None


class DataConfig(Section):
    sources: Annotated[list[Path], Field(min_length=1)]
    general_corpus: Path | None = None
    # the CSV reader's field limit is set to it: within what a C long and memory allow
    max_line_bytes: Annotated[int, Field(ge=1, le=1 << 30)] = 65536


class PiiConfig(Section):
    enabled: bool = True
    dictionary: Path | None = None
    # Type prefixes of this business's own system keys ("ACC" of ACC-101747), kept as written: an
    # identifier written as a typed key is otherwise scrubbed when a label or its type introduces it.
    business_keys: tuple[Annotated[str, Field(pattern=r"^[A-Z]{2,6}$")], ...] = ()
    # Record and conversation ids leave the split as keyed-hash pseudonyms (a conversation id is
    # often a phone number): HMAC-SHA256 with the key in this environment variable; unset, the
    # split's public salt is the key (stable, but not secret: the split report says so).
    pseudonymize_ids: bool = True
    id_key_env: str = "QPIPE_PII_KEY"


class DedupConfig(Section):
    near_threshold: Share = 0.8
    num_perm: PositiveInt = 128


class SplitConfig(Section):
    by: Literal["conversation_id", "date"] = "conversation_id"
    eval_share: OpenShare = 0.2   # 0 leaves nothing to evaluate, 1 nothing to calibrate on
    eval_recent_days: PositiveInt | None = None
    salt: str = "qpipe-split-v1"
    # worker processes of split and calibration builds (default: one per core)
    workers: Annotated[int, Field(ge=1, le=MAX_WORKERS)] | None = None
    pii: PiiConfig = Field(default_factory=PiiConfig)
    dedup: DedupConfig = Field(default_factory=DedupConfig)
    out_dir: Path = Path("data")

    @model_validator(mode="after")
    def _date_split_needs_days(self) -> SplitConfig:
        if self.by == "date" and self.eval_recent_days is None:
            fail([(("eval_recent_days",), "split by date needs eval_recent_days",
                    "set eval_recent_days: N (the last N days go to the evaluation pool)")])
        return self


class Rotation(Section):
    """Keep (1 - refresh) of a previous set (its frozen id list) and draw the rest anew."""

    previous: Path  # written by `qpipe calib freeze <set>`; committed, since a stage cannot read its own output
    refresh: Share = 0.25


class CalibrationSet(Section):
    source: Literal["business", "general"]
    num_samples: PositiveInt
    max_seq_len: PositiveInt
    overlength: Literal["drop", "truncate"] = "drop"
    hard_share_min: Share = 0.0
    quota_policy: Literal["fail", "fill"] = "fill"
    general_ratio: Share = 0.0
    scenario_weights: dict[str, Annotated[float, Field(ge=0)]] | None = None  # default: uniform
    rotation: Rotation | None = None
    seed: int = 0


class CalibrationConfig(Section):
    length_buckets: Annotated[list[PositiveInt], Field(min_length=1)] = [128, 256, 512]
    sets: dict[Name, CalibrationSet] = Field(default_factory=dict)

    @field_validator("length_buckets")
    @classmethod
    def _buckets_increase(cls, edges: list[int]) -> list[int]:
        bad = [i for i in range(1, len(edges)) if edges[i] <= edges[i - 1]]
        if bad:
            i = bad[0]
            fail([((i,), f"length bucket edges must be strictly increasing: {edges[i - 1]} "
                    f"then {edges[i]}", f"sort them, without repeats: {sorted(set(edges))}")])
        return edges
