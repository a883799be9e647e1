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
from pipeline.contracts.files import COMPARISON, RUN_RECORD


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

    @property
    def calibration_sets(self) -> Path:
        return self.data / "calibration"

    @property
    def pools(self) -> Path:
        """The split's calibration pool (and where more pools would go)."""
        return self.data / "pools"

    @property
    def split_accounts(self) -> Path:
        """The split's accounting: its report, rejects and duplicates."""
        return self.data / "split"

    def calibration_set(self, name: str) -> Path:
        return self.calibration_sets / name

    def calibration_spec(self, name: str) -> Path:
        """A set's frozen sample ids (`qpipe calib freeze`), committed for `rotation.previous`."""
        return self.root / "calibration" / "specs" / f"{name}.ids"

    @property
    def artifacts(self) -> Path:
        return self.root / self.params.quantize.out_dir

    def artifact(self, variant: str) -> Path:
        return self.artifacts / variant

    @property
    def quantize_runs(self) -> Path:
        return self.root / self.params.quantize.runs_dir

    def quantize_run(self, variant: str) -> Path:
        """The quantization's run record: times, memory, host, git commit (not the artifact's)."""
        return self.quantize_runs / RUN_RECORD.format(name=variant)

    def quantize_log(self, variant: str) -> Path:
        return self.quantize_runs / f"{variant}.log"

    @property
    def results(self) -> Path:
        return self.root / self.params.evaluate.out_dir

    def result(self, variant: str) -> Path:
        return self.results / variant

    @property
    def divergence(self) -> Path:
        return self.results / "divergence"

    @property
    def divergence_reference(self) -> Path:
        """The reference's teacher-forced passes, computed once for every divergence@."""
        return self.results / "divergence-reference"

    @property
    def logs(self) -> Path:
        """Engines' and failed runs' logs: outside every stage's outputs."""
        return self.root / "logs"

    def failed(self, variant: str) -> Path:
        """A failed evaluation, kept outside results/ (which `compare` depends on)."""
        return self.logs / "failed" / variant

    @property
    def failed_bench(self) -> Path:
        """A failed bench's engine logs and error, kept outside its outs."""
        return self.logs / "failed-bench"

    def serve_log(self, variant: str) -> Path:
        return self.logs / f"serve-{variant}.log"

    @property
    def gate_calibration(self) -> Path:
        """The perturbation ladder `compare` derives this model's signal limits from."""
        return self.results / "gate-calibration"

    @property
    def divergence_logs(self) -> Path:
        return self.logs / "divergence"

    @property
    def bench(self) -> Path:
        return self.root / self.params.bench.out_dir

    @property
    def reports(self) -> Path:
        return self.root / self.params.compare.out_dir

    @property
    def comparison(self) -> Path:
        return self.reports / COMPARISON

    @property
    def handoff(self) -> Path:
        return self.root / self.params.handoff.out_dir

    @property
    def approvals(self) -> Path:
        return self.root / "approvals"

    @property
    def params_file(self) -> Path:
        return self.root / "params.yaml"
