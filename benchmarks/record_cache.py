"""What the per-item record cache saves (pipeline/evaluate/record_cache.py), measured on one variant
of an evaluated project with the real stage command (`qpipe eval`) and its real engine:

0. the evaluation without the cache (`QPIPE_RECORD_CACHE=off`): every item served, and lm-eval's
   business task (with `--lm-eval`) generated again — the cost before the cache;
1. a cold evaluation (empty cache): every item served once, lm-eval's task answered from it;
2. the same evaluation killed (SIGKILL) once a share of its answers has reached the cache;
3. the next run: it serves only the items the killed one had not been answered;
4. a run after a change that re-runs the stage but generates the same answers (here: the
   sequential design switched on, as a gate-profile change would re-run it): nothing served.

Printed per run: the items served and taken from the cache, and the wall time of the whole command
(engine start included), as ratios to the cold run measured in the same invocation; the answers of
runs 3 and 4 are checked against run 1's. Results go to a scratch folder under the project (removed
at the end) and to a scratch cache; the project's own results and cache are not touched.

    python benchmarks/record_cache.py --project . --variant gguf_q4_k_m_business
    python benchmarks/record_cache.py --project /tmp/real-project --variant gguf_q8_0_business --kill-at 0.5
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
SCRATCH = "bench-record-cache"


# `-P`: the stage runs this repository's code, not a copy the project folder may hold
def command(project: Path, variant: str, params: Path, cache: Path | str) -> tuple[list[str], dict]:
    env = dict(os.environ, QPIPE_RECORD_CACHE=str(cache), PYTHONPATH=str(ROOT))
    return [sys.executable, "-P", "-c", "from pipeline.cli import app; app()", "eval", variant,
            "--params", str(params)], env


def run(project: Path, variant: str, params: Path, cache: Path | str, *, kill_at: int | None = None) -> dict:
    """One `qpipe eval`; with `kill_at`, SIGKILL once the cache holds that many answers."""
    cmd, env = command(project, variant, params, cache)
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=project, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    if kill_at is not None:
        while proc.poll() is None:
            files = list(cache.glob("*.jsonl"))
            if files and files[0].read_bytes().count(b"\n") - 1 >= kill_at:
                os.killpg(proc.pid, signal.SIGKILL)  # the stage and its engine, as a crash takes them
                break
            time.sleep(0.2)
        proc.wait()
        return {"wall": time.perf_counter() - t0, "killed": True,
                "answers_kept": max(0, sum(f.read_bytes().count(b"\n") - 1 for f in cache.glob("*.jsonl")))}
    _, err = proc.communicate()
    if proc.returncode:
        raise SystemExit(f"qpipe eval {variant} failed ({proc.returncode}):\n{err[-3000:]}")
    out = project / SCRATCH / variant
    run_json = json.loads((out / "run.json").read_text())
    lm = (json.loads((out / "metrics.json").read_text()).get("lm_eval") or {}).get("n_samples", {})
    outputs = [json.loads(x)["output"] for x in (out / "samples.jsonl").read_text().splitlines()]
    cache_counts = run_json.get("record_cache") or {"served": len(outputs), "from_cache": 0,
                                                     "lm_eval_served": sum(lm.values()), "lm_eval_from_cache": 0}
    return {"wall": time.perf_counter() - t0, "cache": cache_counts, "outputs": outputs}


def data_results(project: Path) -> str:
    return yaml.safe_load((project / "params.yaml").read_text())["evaluate"].get("out_dir", "results")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--project", type=Path, required=True)
    ap.add_argument("--variant", required=True)
    ap.add_argument("--kill-at", type=float, default=0.5, help="share of the items answered before the kill")
    ap.add_argument("--lm-eval", action="store_true", help="run lm-eval's business_exact task too")
    ap.add_argument("--json", type=Path, default=None, help="write the figures here too")
    a = ap.parse_args()
    project = a.project.resolve()
    data = yaml.safe_load((project / "params.yaml").read_text())
    data["evaluate"]["out_dir"] = SCRATCH
    data["evaluate"]["lm_eval"] = {**data["evaluate"].get("lm_eval", {}),
                                   "tasks": ["business_exact"] if a.lm_eval else []}
    fixed = project / "params-record-cache-fixed.yaml"
    fixed.write_text(yaml.safe_dump(data, sort_keys=False))
    seq = json.loads(json.dumps(data))
    seq["evaluate"]["sequential"] = {**seq["evaluate"].get("sequential", {}), "enabled": True}
    sequential = project / "params-record-cache-sequential.yaml"
    sequential.write_text(yaml.safe_dump(seq, sort_keys=False))
    cache = Path(tempfile.mkdtemp(prefix="record-cache-"))
    rows = {}
    # the sequential rule reads the reference's records (and the gate calibration) where the
    # results are: the project's, copied beside the scratch evaluation
    results = project / data_results(project)
    shutil.copytree(results, project / SCRATCH, ignore=shutil.ignore_patterns(a.variant, ".staging-*"))
    try:
        print(f"[0/4] {a.variant} without the cache", flush=True)
        rows["no cache"] = run(project, a.variant, fixed, "off")
        print("[1/4] cold cache", flush=True)
        rows["cold"] = cold = run(project, a.variant, fixed, cache)
        n = len(cold["outputs"])
        shutil.rmtree(cache)
        cache.mkdir()
        print(f"[2/4] killed after {a.kill_at:.0%} of {n} answers", flush=True)
        rows["killed"] = run(project, a.variant, fixed, cache, kill_at=int(a.kill_at * n))
        print("[3/4] the next run", flush=True)
        rows["resumed"] = run(project, a.variant, fixed, cache)
        print("[4/4] re-run with the sequential design switched on", flush=True)
        rows["rerun"] = run(project, a.variant, sequential, cache)
    finally:
        fixed.unlink(missing_ok=True)
        sequential.unlink(missing_ok=True)
        shutil.rmtree(project / SCRATCH, ignore_errors=True)
        shutil.rmtree(cache, ignore_errors=True)
    print(f"\n{a.variant}: {n} items; wall time of the whole command (engine start included), "
          "as a share of the run without the cache")
    print("| run | items served | from the cache | lm-eval generated | lm-eval from the cache | wall s | "
          "share | answers as the cold run's |")
    print("|---|---|---|---|---|---|---|---|")
    base = rows["no cache"]["wall"]
    summary = {"variant": a.variant, "items": n, "runs": {}}
    for name, r in rows.items():
        if r.get("killed"):
            line = (name, f"{r['answers_kept']} kept", "—", "—", "—", r["wall"], "—")
        else:
            c = r["cache"]
            same = sum(x == y for x, y in zip(r["outputs"], cold["outputs"]))
            line = (name, c.get("served"), c.get("from_cache"), c.get("lm_eval_served"), c.get("lm_eval_from_cache"),
                    r["wall"], f"{same}/{len(r['outputs'])}")
        print(f"| {' | '.join(map(str, line[:5]))} | {line[5]:.1f} | {line[5] / base:.2f} | {line[6]} |")
        summary["runs"][name] = {k: v for k, v in r.items() if k != "outputs"}
    if a.json:
        a.json.write_text(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
