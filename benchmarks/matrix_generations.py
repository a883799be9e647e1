"""The evaluate stage's item-generations for a whole matrix, two designs side by side in one run,
each measured by serving (not replayed): the fixed-sample design as it ran before the record cache
(every item served, lm-eval's business task generated again, `QPIPE_RECORD_CACHE=off`) and a
sequential design with the record cache (each quantized variant stops at its first settled look;
an engine's reference serves its opening look and its variants the rest of its items they use,
each once; lm-eval's task asks through the cache for the items served).

In a copy of the project (its artifacts, gate calibration and divergence results; never its own
results or cache), every variant of the matrix is evaluated with the real `qpipe eval`, references
first, once per design; then `qpipe compare` reads each design's verdicts. Printed per variant:
items, generations (items served + lm-eval's generations + warm-up), wall time of the command, and
the verdict; for the matrix: generations, wall time and verdicts, with the saving as a ratio.
Divergence's generations (its long-generation probe) do not depend on the design; its teacher-forced
passes follow the items each variant was served (printed as item passes).

    python benchmarks/matrix_generations.py --project . --futility 0.2
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
KEEP = ("gate-calibration", "divergence", "divergence-reference")


def qpipe(copy: Path, args: list[str], env: dict) -> None:
    proc = subprocess.run([sys.executable, "-P", "-c", "from pipeline.cli import app; app()", *args], cwd=copy,
                          env=env, capture_output=True, text=True)
    if proc.returncode:
        raise SystemExit(f"qpipe {' '.join(args)} failed:\n{proc.stderr[-3000:]}")


def order(variants: dict) -> list[str]:
    """References before the variants judged against them."""
    done: list[str] = []
    while len(done) < len(variants):
        for name, v in variants.items():
            if name not in done and (v.get("reference") in (None, "none") or v["reference"] in done):
                done.append(name)
    return done


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--project", type=Path, default=ROOT)
    ap.add_argument("--futility", type=float, default=0.2)
    ap.add_argument("--spending", default="obrien_fleming")
    ap.add_argument("--look", type=int, default=250)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--variants", nargs="+", help="only these variants (their references included)")
    a = ap.parse_args()
    project = a.project.resolve()
    data = yaml.safe_load((project / "params.yaml").read_text())
    results = project / data["evaluate"].get("out_dir", "results")
    copy = Path(tempfile.mkdtemp(prefix="matrix-generations-"))
    for part in ("params.yaml", "dvc.yaml", "models", "data", "artifacts", "recipes", "calibration", "constraints"):
        src = project / part
        if src.is_dir():
            shutil.copytree(src, copy / part, symlinks=False)
        elif src.is_file():
            shutil.copy2(src, copy / part)
    designs = {
        "fixed, no record cache": ({"enabled": False}, "off"),
        f"{a.spending} + futility {a.futility:g}, record cache": (
            {"enabled": True, "look": a.look, "spending": a.spending, "futility": a.futility},
            str(copy / ".cache" / "records")),
    }
    warmup = int(data["evaluate"].get("warmup", 0))
    if a.variants:
        keep = set(a.variants)
        while missing := {data["variants"][n].get("reference") for n in keep} - keep - {None, "none"}:
            keep |= missing
        data["variants"] = {n: v for n, v in data["variants"].items() if n in keep}
    names = [n for n in order(data["variants"]) if (results / n / "metrics.json").is_file()
             and json.loads((results / n / "metrics.json").read_text()).get("served", True)]
    table: dict[str, dict] = {}
    try:
        for d, (design_name, (design, cache)) in enumerate(designs.items()):
            p = json.loads(json.dumps(data))
            p["evaluate"]["out_dir"] = f"results-{d}"
            p["evaluate"]["sequential"] = {**p["evaluate"].get("sequential", {}), **design}
            p["compare"]["out_dir"] = f"reports-{d}"
            params = copy / f"params-{d}.yaml"
            params.write_text(yaml.safe_dump(p, sort_keys=False))
            for keep in KEEP:
                if (results / keep).is_dir():
                    shutil.copytree(results / keep, copy / f"results-{d}" / keep)
            env = dict(os.environ, QPIPE_RECORD_CACHE=cache, PYTHONPATH=str(ROOT))
            rows = table[design_name] = {}
            for name in names:
                print(f"[{design_name}] qpipe eval {name}", flush=True)
                t0 = time.perf_counter()
                qpipe(copy, ["eval", name, "--params", str(params)], env)
                wall = time.perf_counter() - t0
                out = copy / f"results-{d}" / name
                m = json.loads((out / "metrics.json").read_text())
                run = json.loads((out / "run.json").read_text())
                lm = sum((m.get("lm_eval") or {}).get("n_samples", {}).values())
                rc = run.get("record_cache")
                # the reference's items this variant's evaluation served beyond the reference's opening look
                for_ref = (run.get("reference_served") or {}).get("served", 0)
                generations = (rc["served"] + rc.get("lm_eval_served", 0) if rc else m["n"] + lm) + warmup + for_ref
                seq = m.get("sequential") or {}
                rows[name] = {"items": m["n"], "generations": generations, "lm_eval_items": lm,
                              "reference_items_served": for_ref,
                              "wall": round(wall, 1), "stopped_for": seq.get("stopped_for"),
                              "looks": len(seq.get("looks", [])) or None}
            qpipe(copy, ["compare", "--params", str(params)], env)
            comparison = json.loads((copy / f"reports-{d}" / "comparison.json").read_text())
            for name, row in rows.items():
                row["verdict"] = ((comparison.get("variants", {}).get(name) or {}).get("gate") or {}).get("verdict")
    finally:
        shutil.rmtree(copy, ignore_errors=True)
    (fixed_name, fixed), (seq_name, seq) = table.items()
    print(f"\n| variant | {fixed_name}: items, generations, s, verdict | {seq_name}: items, generations, s, verdict |")
    print("|---|---|---|")
    for name in names:
        f, s = fixed[name], seq[name]
        how = f" ({s['stopped_for']} at look {s['looks']})" if s["stopped_for"] else ""
        if s.get("reference_items_served"):
            how += f" (+{s['reference_items_served']} of its reference's items)"
        print(f"| {name} | {f['items']}, {f['generations']}, {f['wall']}, {f['verdict']} | "
              f"{s['items']}{how}, {s['generations']}, {s['wall']}, {s['verdict']} |")
    tot = {k: (sum(r["generations"] for r in t.values()), sum(r["wall"] for r in t.values()),
               sum(r["items"] for r in t.values())) for k, t in table.items()}
    (gf, wf, nf), (gs, ws, ns) = tot.values()
    judged = [n for n in names if fixed[n]["verdict"] is not None]  # the baseline is judged against nothing
    same = sum(fixed[n]["verdict"] == seq[n]["verdict"] for n in judged)
    print(f"| matrix | {gf} generations, {wf:.0f} s, {nf} item passes for divergence | {gs} generations "
          f"({1 - gs / gf:.1%} fewer), {ws:.0f} s ({1 - ws / wf:.1%} less), {ns} item passes "
          f"({1 - ns / nf:.1%} fewer); {same}/{len(judged)} verdicts as the fixed design's |")
    if a.json:
        where = "." if project == ROOT else project.name  # no machine path in a tracked result
        a.json.write_text(json.dumps({"project": where, "designs": table}, indent=2) + "\n")


if __name__ == "__main__":
    main()
