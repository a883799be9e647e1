"""The ``execution`` section: how `qpipe repro` runs the stages' commands — here, or as tasks on
a Ray cluster. No stage declares it, so changing it re-runs nothing (`dvc repro` ignores it)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, NonNegativeFloat, PositiveInt

from pipeline.config.fields import Section


class TaskResources(Section):
    """What one stage's task asks of the cluster; Ray places it on a node that has it."""
    num_cpus: NonNegativeFloat = 1
    num_gpus: NonNegativeFloat = 0       # Ray sets CUDA_VISIBLE_DEVICES to the GPUs it grants
    resources: dict[str, float] = Field(default_factory=dict)  # a node's custom resources
                                                               # (`ray start --resources`)


class RayConfig(Section):
    address: str | None = None           # the cluster (`ray start --head` prints it); null: $RAY_ADDRESS
    # by stage name (the part before `@`), `default` for every other stage
    stages: dict[str, TaskResources] = Field(default_factory=lambda: {"default": TaskResources()})
    # whether a task gets the driver's QPIPE_* / MLFLOW_TRACKING_URI settings; secrets (keys,
    # tokens, passwords) are never sent: nodes read their own environment
    forward_env: list[str] = Field(default_factory=lambda: ["QPIPE_*", "MLFLOW_TRACKING_URI",
                                                            "HF_HUB_OFFLINE"])

    def for_stage(self, stage: str) -> TaskResources:
        return self.stages.get(stage.split("@", 1)[0]) or self.stages.get("default") or TaskResources()


class ExecutionConfig(Section):
    backend: Literal["local", "ray"] = "local"
    jobs: PositiveInt = 1                # stage commands at once (`qpipe repro --jobs` overrides)
    ray: RayConfig = Field(default_factory=RayConfig)
