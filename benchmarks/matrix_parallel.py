"""The variant matrix's wall time, one stage at a time against N at once, on this machine.

Runs `dvc repro --force` (serial), keeps its dvc.lock, then `qpipe repro --jobs N --force`
(arguments after `--` go to it: `--execution ray` on a cluster whose `execution.ray.stages` pin
quantizations and engines one per GPU, say), and prints both wall times, their ratio, and
whether the two runs left dvc.lock with the same entries in the same order, the same hashes for
every deterministic output (artifacts, data) and a clean `dvc status`. (Run records, metrics
with speed figures and what is made from them differ between any two runs, serial or not.) Both runs are
in the same project, back to back; the machine's drift between them is in the ratio.

    python benchmarks/matrix_parallel.py --jobs 2
    python benchmarks/matrix_parallel.py --jobs 8 -- --execution ray     # a GPU cluster
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path


def deterministic(lock: Path) -> list:
    """The lock's stage order and the hashes of its outputs that the inputs determine."""
    import yaml

    stages = yaml.safe_load(lock.read_text())["stages"]
    return [(name, [(o["path"], o.get("md5")) for o in spec.get("outs", [])
                    if o["path"].startswith(("artifacts/", "data/"))]) for name, spec in stages.items()]


def timed(cmd: list[str], cwd: Path) -> tuple[float, int]:
    t0 = time.time()
    rc = subprocess.run(cmd, cwd=cwd).returncode
    return time.time() - t0, rc


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--root", type=Path, default=Path("."))
    ap.add_argument("extra", nargs="*", help="passed to `qpipe repro` (after --)")
    a = ap.parse_args()
    root = a.root.resolve()
    serial, rc = timed(["dvc", "repro", "--force"], root)
    if rc:
        print(f"dvc repro failed (exit {rc})", file=sys.stderr)
        return rc
    lock = deterministic(root / "dvc.lock")
    parallel, rc = timed(["qpipe", "repro", "--force", "--jobs", str(a.jobs), *a.extra], root)
    if rc:
        print(f"qpipe repro failed (exit {rc})", file=sys.stderr)
        return rc
    same = deterministic(root / "dvc.lock") == lock
    status = subprocess.run(["dvc", "status", "--json"], cwd=root, capture_output=True, text=True).stdout.strip()
    print(f"serial `dvc repro --force`:              {serial:8.1f} s")
    print(f"`qpipe repro --jobs {a.jobs} --force` {' '.join(a.extra):<6} {parallel:8.1f} s "
          f"(x{serial / parallel:.2f} faster)")
    print(f"dvc.lock entries, order and deterministic outputs as the serial run's: {same}; "
          f"dvc status clean: {status in ('', '{}')}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
