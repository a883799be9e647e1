"""Every path a stage reads or writes, named once from params.yaml's `out_dir`-style keys.

    >>> from pathlib import Path
    >>> from types import SimpleNamespace as NS
    >>> p = NS(quantize=NS(out_dir=Path("artifacts"), runs_dir=Path("runs/quantize")),
    ...        split=NS(out_dir=Path("data")),
    ...        evaluate=NS(out_dir=Path("results"), evalset=Path("data/evalset")),
    ...        bench=NS(out_dir=Path("results/bench")), compare=NS(out_dir=Path("reports")),
    ...        handoff=NS(out_dir=Path("handoff")), model=NS(path=Path("models/demo")))
    >>> Layout(Path("/p"), p).artifact("baseline").as_posix()
    '/p/artifacts/baseline'

dvc.yaml names the same paths through `${…}` from the same keys, so code and pipeline agree.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Layout:
    root: Path
    params: Any  # pipeline.config.Params

    @property
    def model(self) -> Path:
        return self.root / self.params.model.path

    @property
    def data(self) -> Path:
        """The split's outputs: evalset/, pools/, split/ and calibration/<set>/."""
        return self.root / self.params.split.out_dir

    @property
    def evalset(self) -> Path:
        return self.root / self.params.evaluate.evalset

    def calibration_set(self, name: str) -> Path:
        return self.data / "calibration" / name

    @property
    def artifacts(self) -> Path:
        return self.root / self.params.quantize.out_dir

    def artifact(self, variant: str) -> Path:
        return self.artifacts / variant

    def quantize_run(self, variant: str) -> Path:
        """The quantization's run record: times, memory, host, git commit (not the artifact's)."""
        return self.root / self.params.quantize.runs_dir / f"{variant}.json"

    def quantize_log(self, variant: str) -> Path:
        return self.root / self.params.quantize.runs_dir / f"{variant}.log"

    @property
    def results(self) -> Path:
        return self.root / self.params.evaluate.out_dir

    def result(self, variant: str) -> Path:
        return self.results / variant

    @property
    def bench(self) -> Path:
        return self.root / self.params.bench.out_dir

    @property
    def reports(self) -> Path:
        return self.root / self.params.compare.out_dir

    @property
    def handoff(self) -> Path:
        return self.root / self.params.handoff.out_dir
