"""The base of every params section (:class:`Section`: unknown keys are errors) and the field
types the sections share."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


Share = Annotated[float, Field(ge=0.0, le=1.0)]
OpenShare = Annotated[float, Field(gt=0.0, lt=1.0)]  # strictly between 0 and 1
MAX_WORKERS = 256  # worker processes: more is a typo, not a machine
PositiveInt = Annotated[int, Field(gt=0)]
PositiveFloat = Annotated[float, Field(gt=0)]
# Variant and set names become directories and DVC stage names (quantize@<name>).
Name = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]*$")]
Device = Annotated[str, Field(pattern=r"^(cpu|cuda|cuda:\d+|auto)$")]
