"""Every path a stage reads or writes, named once from params.yaml's `out_dir`-style keys.

    >>> from pathlib import Path
    >>> from types import SimpleNamespace as NS
    >>> p = NS(quantize=NS(out_dir=Path("artifacts"), runs_dir=Path("runs/quantize")),
    ...        split=NS(out_dir=Path("data")),
    ...        evaluate=NS(out_dir=Path("results"), evalset=Path("data/evalset")),
    ...        bench=NS(out_dir=Path("results/bench")), compare=NS(out_dir=Path("reports")),
    ...        handoff=NS(out_dir=Path("handoff")), model=NS(path=Path("models/demo")),
    ...        serving=NS(out_dir=Path("reports/upgrades")), search=NS(out_dir=Path("reports/search")))
    >>> layout = Layout(Path("/p"), p)
    >>> layout.artifact("baseline").as_posix()
    '/p/artifacts/baseline'
    >>> hasattr(layout, "params")  # the path keys alone: no other param reaches a stage this way
    False

dvc.yaml names the same paths through `${…}` from the same keys, so code and pipeline agree. A
layout holds those keys and nothing else of the params: a stage's other params come through its
own declared view (`pipeline/stage_params.py`), and a path it reads or writes through the layout
is one its dvc.yaml stage lists among its deps or outs (`tests/test_dvc_data_deps.py` checks the
files each stage opens against them).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.contracts.files import COMPARISON, RUN_RECORD


# each path a layout names, and the params key it comes from (dvc.yaml interpolates the same keys)
PATH_KEYS = {"model": "model.path", "split": "split.out_dir", "evalset": "evaluate.evalset",
             "artifacts": "quantize.out_dir", "quantize_runs": "quantize.runs_dir",
             "results": "evaluate.out_dir", "bench": "bench.out_dir", "reports": "compare.out_dir",
             "handoff": "handoff.out_dir", "serving": "serving.out_dir", "search": "search.out_dir"}


@dataclass(frozen=True)
class PathKeys:
    """The values of the params keys that name where things are (relative to the project's root)."""

    model: Path
    split: Path
    evalset: Path
    artifacts: Path
    quantize_runs: Path
    results: Path
    bench: Path
    reports: Path
    handoff: Path
    serving: Path
    search: Path

    @classmethod
    def of(cls, params: Any) -> PathKeys:
        def value(key: str) -> Path:
            node = params
            for part in key.split("."):
                node = getattr(node, part)
            return Path(node)

        return cls(**{name: value(key) for name, key in PATH_KEYS.items()})


@dataclass(frozen=True, init=False)
class Layout:
    root: Path
    keys: PathKeys

    def __init__(self, root: Path, params: Any) -> None:
        """The layout of the project at ``root`` whose params are ``params`` (validated params
        or any object with the same path keys); only the path keys are kept."""
        object.__setattr__(self, "root", Path(root))
        object.__setattr__(self, "keys", PathKeys.of(params))

    def rooted(self, root: Path) -> Layout:
        """The same layout at another root (the resolved path, a copy of the project)."""
        moved = object.__new__(Layout)
        object.__setattr__(moved, "root", Path(root))
        object.__setattr__(moved, "keys", self.keys)
        return moved

    @property
    def model(self) -> Path:
        return self.root / self.keys.model

    @property
    def data(self) -> Path:
        """The split's outputs: evalset/, pools/, split/ and calibration/<set>/."""
        return self.root / self.keys.split

    @property
    def evalset(self) -> Path:
        return self.root / self.keys.evalset

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
        return self.root / self.keys.artifacts

    def artifact(self, variant: str) -> Path:
        return self.artifacts / variant

    @property
    def quantize_runs(self) -> Path:
        return self.root / self.keys.quantize_runs

    def quantize_run(self, variant: str) -> Path:
        """The quantization's run record: times, memory, host, git commit (not the artifact's)."""
        return self.quantize_runs / RUN_RECORD.format(name=variant)

    def quantize_log(self, variant: str) -> Path:
        return self.quantize_runs / f"{variant}.log"

    @property
    def results(self) -> Path:
        return self.root / self.keys.results

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
        return self.root / self.keys.bench

    @property
    def reports(self) -> Path:
        return self.root / self.keys.reports

    @property
    def comparison(self) -> Path:
        return self.reports / COMPARISON

    @property
    def handoff(self) -> Path:
        return self.root / self.keys.handoff

    def upgrade(self, name: str) -> Path:
        """`qpipe upgrade <name>`'s outputs: two serving configurations on one artifact."""
        return self.root / self.keys.serving / name

    def failed_upgrade(self, name: str) -> Path:
        return self.logs / "failed-upgrade" / name

    @property
    def search(self) -> Path:
        """The mixed-precision search's outputs: the sensitivity report (`qpipe sensitivity`)."""
        return self.root / self.keys.search

    @property
    def approvals(self) -> Path:
        return self.root / "approvals"

    @property
    def params_file(self) -> Path:
        return self.root / "params.yaml"
