"""The ``search`` section: mixed-precision search, starting with each part's sensitivity to the
candidate weight formats on a business calibration set (pipeline/search, docs/search.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, model_validator

from pipeline.config.fields import Device, Name, PositiveFloat, PositiveInt, Section
from pipeline.config.problems import fail

# compressed-tensors' weight-only preset schemes (activations stay unquantized, as the proxy
# measures weights alone)
WeightFormat = Literal["W4A16", "W4A16_ASYM", "W8A16"]


class SearchConfig(Section):
    """search: the `sensitivity` stage measures, for each part of the model (q/k/v together, the
    output projection, gate/up together, the down projection of every layer) and each format, the
    KL divergence of the model with that part alone quantized; its report proposes the mixes that
    minimise the summed KL under each size budget."""

    out_dir: Path = Path("reports/search")   # sensitivity.json, sensitivity.md, sensitivity.png
    calibration: Name = "business"           # the calibration set the proxy is measured on
    formats: Annotated[list[WeightFormat], Field(min_length=1)] = Field(default_factory=lambda: ["W4A16", "W8A16"])
    keep_unquantized: bool = True            # a part may also stay in the model's own dtype (BF16)
    # the group-wise formats' group size (null: the preset's, 128); a layer whose columns it does
    # not divide cannot take the format (compressed-tensors refuses it): e.g. 64 for hidden 576
    group_size: PositiveInt | None = None
    tokens: PositiveInt = 2048               # calibration tokens read (the set in its order)
    max_seq_len: PositiveInt = 256           # tokens per calibration text
    # candidates' average stored bits per weight (scales included) over the quantizable layers
    budgets: Annotated[list[PositiveFloat], Field(min_length=1)] = Field(default_factory=lambda: [4.5, 5.0, 6.0])
    device: Device = "cpu"

    @model_validator(mode="after")
    def _distinct(self) -> SearchConfig:
        if len(set(self.formats)) != len(self.formats):
            fail([(("formats",), f"formats {self.formats} repeat a format", "name each format once")])
        if len(set(self.budgets)) != len(self.budgets):
            fail([(("budgets",), f"budgets {self.budgets} repeat a budget", "name each budget once")])
        return self
