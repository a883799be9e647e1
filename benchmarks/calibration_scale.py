"""How the `split` stage and one `calibration@<set>` build scale with the size of the logs.

    python benchmarks/calibration_scale.py --records 10000 --records 100000
    python benchmarks/calibration_scale.py --records 1000000 --set business

For every size: write that many log lines with the demo generator (distinct conversations,
plus planted duplicates and malformed lines at the demo's shares) to one JSONL file in a
scratch project, then run `split` and one calibration build, each in a fresh child process
so that its peak RSS is its own. Prints wall time, records/s and peak RSS per phase, and,
with several sizes, the cost per record of each size relative to the smallest (1.0 = linear).
`peak RSS` is the stage's own process; `worker MB` the largest of its scrub worker processes
(forked from it, so much of their memory is shared with it). `--split-only` skips the build.

Wall time of a stage is reported twice: `total` (the child process, imports and tokenizer
load included) and `work` (inside `run()` only).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


# ------------------------------------------------------------------------------ generation

DUP_KEYS = ('eval_duplicates', 'calibration_duplicates')


def generate_logs(path: Path, records: int, *, seed: int, days: int = 90, end_date: str = "2026-11-15",
                  malformed_share: float = 0.02, duplicate_share: float = 0.03) -> dict:
    """Stream `records` log lines to `path`: conversation i is the demo generator's conversation
    i (a pure function of seed and i), with a duplicate or a malformed copy planted in between
    at the given shares (the generator's own planting helpers)."""
    from demo import generator as g

    end = dt.datetime.fromisoformat(end_date).replace(tzinfo=dt.timezone.utc)
    plant = random.Random(f"plant:{seed}")
    counts = {"conversations": 0, "duplicates": 0, "malformed": 0}
    kinds = g.MALFORMED_KINDS[:-1]  # line_too_long lines are ~80 KB each: kept out of the volume
    previous = None
    with path.open("wb") as fh:
        for _ in range(records):
            roll = plant.random()
            if previous is not None and roll < duplicate_share:
                line = json.dumps(g._duplicate(previous, plant, counts["duplicates"]), ensure_ascii=False)
                counts["duplicates"] += 1
                fh.write(line.encode() + b"\n")
                continue
            if previous is not None and roll < duplicate_share + malformed_share:
                kind = kinds[counts["malformed"] % len(kinds)]
                fh.write(g._malformed(previous, kind, plant, counts["malformed"]) + b"\n")
                counts["malformed"] += 1
                continue
            previous = _log_record(g, seed, counts["conversations"], end, days)
            counts["conversations"] += 1
            fh.write(json.dumps(previous, ensure_ascii=False).encode() + b"\n")
    return counts


def _log_record(g, seed: int, i: int, end: dt.datetime, days: int) -> dict:
    """One record as `generator.log_records` makes it, without building the whole list."""
    d, rng = g.draft("logs", seed, i)
    rec = g.render(d, "raw")
    when = end - dt.timedelta(seconds=rng.randrange(days * 86400))
    seg_w = {"faq": (6, 3, 1), "ticket": (4, 4, 2), "consultation": (1, 3, 6),
             "multi_turn": (6, 3, 1), "rag": (2, 3, 5), "tool_call": (4, 3, 3)}[d.scenario]
    out = {"id": f"r-{i:07d}", "conversation_id": f"c-{i:07d}",
           "timestamp": when.strftime("%Y-%m-%dT%H:%M:%SZ"), "scenario": rec["scenario"],
           "difficulty": rec["difficulty"], "segment": rng.choices(g.SEGMENTS, weights=seg_w)[0],
           "messages": rec["messages"], "reference": rec["reference"], "rubric": rec["rubric"]}
    if "tools" in rec:
        out["tools"] = rec["tools"]
    return out


def write_params(root: Path, calibration_set: str) -> Path:
    import yaml

    params = yaml.safe_load((REPO / "params.yaml").read_text())
    params["model"]["path"] = str(REPO / params["model"]["path"])
    params["data"]["sources"] = ["logs"]
    params["data"]["general_corpus"] = str(REPO / params["data"]["general_corpus"])
    params["calibration"]["sets"] = {calibration_set: params["calibration"]["sets"][calibration_set]}
    params["variants"] = {k: v for k, v in params["variants"].items()
                          if v.get("calibration") in (None, "none", calibration_set)}
    path = root / "params.yaml"
    path.write_text(yaml.safe_dump(params, sort_keys=False))
    return path


# ------------------------------------------------------------------------------ child phases

def child(phase: str, root: Path, calibration_set: str) -> None:
    """Run one stage in this (fresh) process; print one JSON line with timings and peak RSS."""
    started = time.perf_counter()
    from pipeline.calibration import build, split
    from pipeline.config import load_params
    from pipeline.layout import Layout
    from pipeline.models import load_tokenizer

    params = load_params(root / "params.yaml")
    load_tokenizer(root / params.model.path)  # warm the import, so `work` is the stage alone
    t0 = time.perf_counter()
    if phase == "split":
        report = split.run(params.for_stage(split.PARAMS), Layout(root, params))
        extra = {"ingest": {k: report["ingest"][k] for k in ("records_in", "kept", "rejected")},
                 "split": report["split"]}
    else:
        card = build.run(params.for_stage(build.PARAMS, calibration_set), Layout(root, params), calibration_set)
        extra = {"samples": card["samples"], "length_filter": card["length_filter"]}
    work = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    # CPU seconds of the stage and its worker processes (imports included): less sensitive
    # than wall time to other jobs on the machine.
    cpu = own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime
    print(json.dumps({"work_s": work, "total_s": time.perf_counter() - started, "cpu_s": cpu,
                      "peak_rss_mb": _kb_to_mb(rss), "worker_peak_rss_mb": _kb_to_mb(kids.ru_maxrss),
                      **extra}))


def _kb_to_mb(kb: int) -> float:
    return kb / (1024 * 1024) if sys.platform == "darwin" else kb / 1024  # bytes on macOS


def run_child(phase: str, root: Path, calibration_set: str) -> dict:
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, __file__, "--child", phase, "--root", str(root),
                           "--set", calibration_set], capture_output=True, text=True,
                          env=os.environ | {"HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"})
    if done.returncode != 0:
        raise SystemExit(f"{phase} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["wall_s"] = time.perf_counter() - t0
    return result


# ----------------------------------------------------------------------------------- driver

def bench_size(records: int, workdir: Path, calibration_set: str, seed: int, keep: bool,
               build: bool = True) -> list[dict]:
    root = Path(tempfile.mkdtemp(prefix=f"calib-{records}-", dir=workdir))
    rows = []
    try:
        (root / "logs").mkdir()
        write_params(root, calibration_set)
        t0 = time.perf_counter()
        counts = generate_logs(root / "logs" / "logs.jsonl", records, seed=seed)
        gen_s = time.perf_counter() - t0
        size_mb = (root / "logs" / "logs.jsonl").stat().st_size / 2**20
        rows.append({"records": records, "phase": "generate", "wall_s": gen_s, "work_s": gen_s,
                     "peak_rss_mb": _kb_to_mb(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss),
                     "note": f"{size_mb:.0f} MiB, {counts['duplicates']} dup, {counts['malformed']} bad"})
        s = run_child("split", root, calibration_set)
        rows.append({"records": records, "phase": "split", **s,
                     "note": f"eval {s['split'].get('eval', 0)}, pool {s['split'].get('calibration', 0)}, "
                             f"dups {sum(s['split'].get(k, 0) for k in DUP_KEYS)}, "
                             f"rejected {s['ingest']['rejected']}"})
        if not build:
            return rows
        b = run_child("build", root, calibration_set)
        rows.append({"records": records, "phase": f"build {calibration_set}", **b,
                     "note": f"{b['samples']} samples from {s['split'].get('calibration', 0)} candidates"})
    finally:
        if keep:
            print(f"kept {root}", file=sys.stderr)
        else:
            shutil.rmtree(root, ignore_errors=True)
    return rows


def print_table(rows: list[dict]) -> None:
    head = (f"{'records':>9} {'phase':<16} {'total s':>8} {'work s':>8} {'cpu s':>8} {'records/s':>10} "
            f"{'peak RSS MB':>12} {'worker MB':>10}  note")
    print(head)
    print("-" * len(head))
    for r in rows:
        rate = r["records"] / r["work_s"] if r["work_s"] else float("inf")
        print(f"{r['records']:>9} {r['phase']:<16} {r['wall_s']:>8.1f} {r['work_s']:>8.1f} "
              f"{r.get('cpu_s', r['work_s']):>8.1f} {rate:>10.0f} "
              f"{r['peak_rss_mb']:>12.0f} {r.get('worker_peak_rss_mb', 0):>10.0f}  {r.get('note', '')}")
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(f"\npeak RSS: this process {_kb_to_mb(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss):.0f} MB, "
          f"largest child {_kb_to_mb(children):.0f} MB")
    sizes = sorted({r["records"] for r in rows})
    if len(sizes) > 1:
        print("\ncost per record relative to the smallest size (1.0 = linear):")
        for phase in dict.fromkeys(r["phase"] for r in rows):
            per = {r["records"]: r["work_s"] / r["records"] for r in rows if r["phase"] == phase}
            base = per[sizes[0]]
            print(f"  {phase:<16} " + "  ".join(f"{n}: {per[n] / base:.2f}" for n in sizes))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=int, action="append",
                    help="log lines to generate; repeat for several sizes (default: 10000)")
    ap.add_argument("--set", default="business", help="calibration set to build (from params.yaml)")
    ap.add_argument("--seed", type=int, default=20261129)
    ap.add_argument("--workdir", type=Path, default=None, help="where scratch projects go (default: tmp)")
    ap.add_argument("--keep", action="store_true", help="keep the scratch projects")
    ap.add_argument("--json", type=Path, default=None, help="also write the rows as JSON here")
    ap.add_argument("--split-only", action="store_true", help="skip the calibration build phase")
    ap.add_argument("--child", choices=("split", "build"), help=argparse.SUPPRESS)
    ap.add_argument("--root", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(args.child, args.root, args.set)
        return
    workdir = args.workdir or Path(tempfile.gettempdir())
    workdir.mkdir(parents=True, exist_ok=True)
    rows = []
    for n in sorted(args.records or [10000]):
        rows += bench_size(n, workdir, args.set, args.seed, args.keep, build=not args.split_only)
        print(f"done {n} records", file=sys.stderr, flush=True)
    print_table(rows)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
