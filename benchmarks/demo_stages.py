"""Where a `dvc repro` spends its time: each stage's wall time, and the totals by kind.

Runs `dvc repro` (arguments passed through; `--force` re-runs everything) with every output line
time-stamped as it arrives, then prints one row per stage that ran and a total per stage kind
(quantize, evaluate, divergence, …). `--log FILE` reads a log written the same way instead
(`<unix seconds> <line>` per line, as `scripts/demo.sh`'s output piped through a time-stamper).

    python benchmarks/demo_stages.py                 # the pipeline as it stands
    python benchmarks/demo_stages.py -- --force      # everything, from scratch
    python benchmarks/demo_stages.py --log demo.log  # an earlier run's time-stamped log
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

STAGE = re.compile(r"Running stage '([^']+)'")


def stage_times(lines: list[tuple[float, str]], end: float) -> list[tuple[str, float]]:
    """(stage, seconds) for every stage that ran: from its 'Running stage' line to the next one
    (or the end)."""
    starts = [(t, m.group(1)) for t, line in lines if (m := STAGE.search(line))]
    bounds = [t for t, _ in starts[1:]] + [end]
    return [(name, stop - t) for (t, name), stop in zip(starts, bounds)]


def run_repro(args: list[str]) -> tuple[list[tuple[float, str]], float, int]:
    proc = subprocess.Popen(["dvc", "repro", *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, bufsize=1)
    lines = []
    for line in proc.stdout:
        lines.append((time.time(), line.rstrip("\n")))
        sys.stdout.write(line)
    return lines, time.time(), proc.wait()


def read_log(path: Path) -> tuple[list[tuple[float, str]], float]:
    lines = []
    for raw in path.read_text(encoding="utf-8", errors="replace").splitlines():
        stamp, _, rest = raw.partition(" ")
        try:
            lines.append((float(stamp), rest))
        except ValueError:
            continue
    return lines, lines[-1][0]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--log", type=Path, help="a time-stamped log of an earlier run")
    ap.add_argument("repro_args", nargs="*", help="passed to `dvc repro` (after --)")
    a = ap.parse_args()
    if a.log:
        lines, end = read_log(a.log)
        rc = 0
    else:
        lines, end, rc = run_repro(a.repro_args)
    times = stage_times(lines, end)
    if not times:
        print("no stage ran (the pipeline is up to date)")
        return rc
    by_kind: dict[str, list[float]] = defaultdict(list)
    print(f"\n{'stage':44s} {'seconds':>8s}")
    for name, sec in times:
        print(f"{name:44s} {sec:8.0f}")
        by_kind[name.split("@")[0]].append(sec)
    total = end - lines[0][0]
    print(f"\n{'kind':16s} {'stages':>6s} {'seconds':>8s} {'share':>6s}")
    for kind, secs in by_kind.items():
        print(f"{kind:16s} {len(secs):6d} {sum(secs):8.0f} {sum(secs) / total:6.1%}")
    print(f"{'total':16s} {len(times):6d} {total:8.0f}")
    return rc


if __name__ == "__main__":
    sys.exit(main())
