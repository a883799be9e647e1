"""Crash consistency: interrupt the real pipeline at seeded random moments, anywhere, and the next
run finishes clean.

A small project (the demo model; the baseline on vLLM, its F16 GGUF on llama.cpp; every stage
kind of dvc.yaml: split, calibration, quantize, evaluate, the divergence reference and a
variant's divergence, the gate calibration, bench, compare, track, handoff) is run once whole.
Then, QPIPE_CRASH_KILLS times (default 20), with a seeded generator: one stage is made to run
again — by `qpipe repro` as if it had never run (its outputs, its dvc.lock entry and DVC's
run-cache removed), or by `dvc repro --force --single-item <stage>` — and at a random moment
inside that stage's measured duration the orchestrator or the stage's own process gets SIGTERM or
SIGKILL. After each kill:

- within 10 s no process of the workspace is left (no stage, no engine);
- the next `qpipe repro` completes, and afterwards no staging folder is left anywhere;
- `dvc status` is clean;
- the outputs of the deterministic stages are byte-for-byte those of the uninterrupted run;
- MLflow holds no run left RUNNING and no variant run marked FINISHED without its metrics.

The table of kill points and outcomes is printed, pass or fail.
"""

import json
import os
import random
import shutil
import signal
import subprocess
import time
from pathlib import Path

import psutil
import pytest
import yaml
from demo.matrix import full_params

from test_dvc_pipeline import pipeline_env, venv_bin, write_project

pytestmark = [pytest.mark.slow, pytest.mark.timeout(3600)]

KILLS = int(os.environ.get("QPIPE_CRASH_KILLS", "20"))
SEED = int(os.environ.get("QPIPE_CRASH_SEED", "20261205"))
# Stages whose outputs depend on their inputs alone: identical bytes after any interruption.
DETERMINISTIC = ("split", "calibration_none", "quantize@baseline", "quantize@gguf_f16",
                 "divergence_reference", "gate_calibration")
# The stages a kill lands in (every kind the pipeline has), with the output removed to make it run.
TARGETS = {
    "split": ["data/evalset", "data/pools", "data/split"],
    "calibration_none": ["data/calibration/none"],
    "quantize@gguf_f16": ["artifacts/gguf_f16"],
    "evaluate@baseline": ["results/baseline"],
    "evaluate@gguf_f16": ["results/gguf_f16"],
    "divergence_reference": ["results/divergence-reference"],
    "divergence@gguf_f16": ["results/divergence/gguf_f16"],
    "gate_calibration": ["results/gate-calibration"],
    "bench": ["results/bench"],
    "compare": ["reports"],
    "track": [],
    "handoff": ["handoff"],
}


def make_project(repo: Path, root: Path) -> None:
    shutil.copy2(repo / "dvc.yaml", root / "dvc.yaml")
    shutil.copy2(repo / ".dvcignore", root / ".dvcignore")
    params = full_params(repo)
    params["variants"] = {k: v for k, v in params["variants"].items() if k in ("baseline", "gguf_f16")}
    params["serving"]["upgrades"] = {}  # the upgrades serve variants left out here
    for spec in params["calibration"]["sets"].values():
        spec["num_samples"] = 16
    params["evaluate"].update(limit=24, warmup=1, max_tokens=16, lm_eval={"tasks": []})
    params["divergence"].update(long_prompts=0)
    params["search"].update(tokens=256, max_seq_len=128)  # the sensitivity in seconds
    params["gate_calibration"].update(items=24, start=0.3, max_steps=2, batch=24)
    params["bench"].update(rounds=1, repeats=1, num_prompts=2, input_len=16, output_len=4,
                           concurrency=[1], stream_requests=1, variants=["baseline", "gguf_f16"],
                           traffic={"requests": 6, "concurrency": [1, 2]})
    params["compare"].update(noise_floor={}, engine_baselines={"llamacpp": "gguf_f16"})
    write_project(repo, root, params)


def deterministic_outs(root: Path) -> dict[str, str]:
    """path → DVC hash of the deterministic stages' outputs (a quantization's run record and
    log under runs/, beside its artifact, hold times and hosts: not compared)."""
    lock = yaml.safe_load((root / "dvc.lock").read_text())["stages"]
    return {o["path"]: o.get("md5") for n in DETERMINISTIC for o in lock[n]["outs"]
            if not o["path"].startswith("runs/")}


def never_ran(root: Path, stage: str) -> None:
    """`stage` as DVC sees a stage that never ran: no outputs, no dvc.lock entry, no run-cache."""
    for rel in TARGETS[stage]:
        shutil.rmtree(root / rel, ignore_errors=True)
    shutil.rmtree(root / ".dvc" / "cache" / "runs", ignore_errors=True)
    data = yaml.safe_load((root / "dvc.lock").read_text())
    data["stages"].pop(stage)  # foreach stages are keyed `name@key` in dvc.lock
    (root / "dvc.lock").write_text(yaml.safe_dump(data, sort_keys=False))


def workspace_processes(root: Path, exclude: set[int]) -> list[str]:
    """Processes whose command line or folder is in the workspace (stages, engines)."""
    mark = str(root)
    found = []
    for p in psutil.process_iter(["pid", "cmdline", "cwd", "status"]):
        try:
            if p.info["pid"] in exclude or p.info["status"] == psutil.STATUS_ZOMBIE:
                continue
            cmd = " ".join(p.info["cmdline"] or [])
            if mark in cmd or (p.info["cwd"] or "").startswith(mark):
                found.append(f"{p.info['pid']} {cmd[:160]}")
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return found


def stage_process(orchestrator: psutil.Process, stage: str) -> psutil.Process | None:
    """The running command of `stage` among the orchestrator's descendants (DVC_STAGE names it)."""
    try:
        kids = orchestrator.children(recursive=True)
    except psutil.NoSuchProcess:
        return None
    for k in kids:  # the command itself, not a shell around it
        try:
            if (k.environ().get("DVC_STAGE") == stage and k.name().startswith(("python", "qpipe"))
                    and "qpipe" in " ".join(k.cmdline()[:2])):
                return k
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return None


def staging_left(root: Path) -> list[str]:
    return [str(p.relative_to(root)) for pat in (".staging-*", ".old-*") for p in root.rglob(pat)
            if ".dvc" not in p.parts and ".git" not in p.parts]


def half_written_runs(root: Path) -> set[str]:
    """MLflow runs a kill left wrong: still RUNNING once a run has completed, or a variant's run
    marked FINISHED without its metrics (`track` marks a run FINISHED only once all is logged)."""
    db = root / "mlflow.db"
    if not db.is_file():
        return set()
    import sqlite3

    con = sqlite3.connect(db)
    try:
        running = con.execute("SELECT run_uuid, name FROM runs WHERE status = 'RUNNING' "
                              "AND lifecycle_stage = 'active'").fetchall()
        empty = con.execute(
            "SELECT r.run_uuid, r.name FROM runs r JOIN tags t ON t.run_uuid = r.run_uuid "
            "AND t.key = 'qpipe.role' AND t.value = 'variant' WHERE r.status = 'FINISHED' "
            "AND r.lifecycle_stage = 'active' AND NOT EXISTS "
            "(SELECT 1 FROM metrics m WHERE m.run_uuid = r.run_uuid)").fetchall()
    finally:
        con.close()
    return {f"RUNNING {u} {n}" for u, n in running} | {f"FINISHED without metrics {u} {n}" for u, n in empty}


@pytest.fixture(scope="module")
def workspace(repo, tmp_path_factory):
    bin_dir = venv_bin(repo)
    base = tmp_path_factory.mktemp("crash")
    root = base / "project"
    root.mkdir()
    make_project(repo, root)
    env = {k: v for k, v in pipeline_env(base, bin_dir).items() if k != "DVC_STAGE"}
    # DVC runs each command through $SHELL -c, else /bin/sh. bash execs a lone command; dash
    # (Debian's /bin/sh, and what a CI job without SHELL gets) stays between DVC and the stage:
    # the harder case for "the stage dies with its launcher", so the campaign runs with it.
    if Path("/bin/sh").exists():
        env["SHELL"] = "/bin/sh"
    subprocess.run(["git", "init", "-q"], cwd=root, check=True, env=env)
    subprocess.run([str(bin_dir / "dvc"), "init", "-q"], cwd=root, check=True, env=env)
    done = subprocess.run([str(bin_dir / "qpipe"), "repro", "--jobs", "1"], cwd=root, env=env,
                          capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    seconds = {}
    for line in done.stdout.splitlines():  # the summary: "<stage>  ran  12.3 s"
        parts = line.split()
        if len(parts) >= 4 and parts[1] == "ran" and parts[3] == "s":
            seconds[parts[0]] = float(parts[2])
    assert half_written_runs(root) == set()
    return root, env, bin_dir, seconds, deterministic_outs(root)


def test_any_interruption_and_the_next_run_finishes_clean(workspace, capsys):
    root, env, bin_dir, seconds, clean_outs = workspace
    rng = random.Random(SEED)
    rows, problems = [], []
    for i in range(KILLS):
        stage = rng.choice(sorted(TARGETS))
        who = rng.choice(["orchestrator", "stage"])
        sig = rng.choice([signal.SIGTERM, signal.SIGKILL])
        runner = rng.choice(["qpipe repro", "dvc repro"])
        at = rng.uniform(0.3, max(0.6, 0.9 * seconds.get(stage, 5.0)))
        if runner == "qpipe repro":
            never_ran(root, stage)
            cmd = [str(bin_dir / "qpipe"), "repro", "--jobs", "1"]
        else:
            cmd = [str(bin_dir / "dvc"), "repro", "--force", "--single-item", stage]
        orch = subprocess.Popen(cmd, cwd=root, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)
        proc = psutil.Process(orch.pid)
        # wait for the stage's own process, then for the moment inside it
        deadline, target = time.time() + 300, None
        while time.time() < deadline and orch.poll() is None:
            target = stage_process(proc, stage)
            if target is not None:
                break
            time.sleep(0.05)
        outcome = {"#": i + 1, "stage": stage, "runner": runner, "killed": who,
                   "signal": signal.Signals(sig).name, "at_s": round(at, 1)}
        if target is None:
            outcome["note"] = "the run ended before the stage started"
        else:
            time.sleep(at)
            victim = orch.pid if who == "orchestrator" else target.pid
            try:
                os.kill(victim, sig)
            except ProcessLookupError:
                outcome["note"] = "the stage had ended"
        try:
            orch.wait(timeout=120)
        except subprocess.TimeoutExpired:
            problems.append(f"#{i + 1}: the orchestrator did not exit 120 s after the kill")
            orch.kill()
            orch.wait()
        t0, left = time.time(), workspace_processes(root, {os.getpid()})
        while left and time.time() - t0 < 10:
            time.sleep(0.2)
            left = workspace_processes(root, {os.getpid()})
        outcome["orphans_after_10s"] = len(left)
        if left:
            problems.append(f"#{i + 1} ({stage}, {who} {outcome['signal']}): left running: {left}")
            for line in left:
                try:
                    os.kill(int(line.split()[0]), signal.SIGKILL)
                except ProcessLookupError:
                    pass
        nxt = subprocess.run([str(bin_dir / "qpipe"), "repro", "--jobs", "1"], cwd=root, env=env,
                             capture_output=True, text=True, timeout=1800)
        outcome["next_run"] = "ok" if nxt.returncode == 0 else f"exit {nxt.returncode}"
        if nxt.returncode:
            problems.append(f"#{i + 1}: the next run failed:\n{nxt.stdout[-3000:]}\n{nxt.stderr[-3000:]}")
            rows.append(outcome)
            break
        status = subprocess.run([str(bin_dir / "dvc"), "status", "--json"], cwd=root, env=env,
                                capture_output=True, text=True).stdout
        dirty = json.loads(status[status.index("{"):]) if "{" in status else {}
        outcome["dvc_status"] = "clean" if not dirty else "CHANGED"
        leftovers = staging_left(root)
        outcome["staging_left"] = len(leftovers)
        now = deterministic_outs(root)
        differ = sorted(k for k in clean_outs.keys() | now.keys() if clean_outs.get(k) != now.get(k))
        outcome["outputs"] = "DIFFERENT" if differ else "identical"
        bad_runs = half_written_runs(root)
        for what, bad in (("dvc status", dirty), ("staging left", leftovers),
                          ("deterministic outputs differ", differ), ("MLflow", bad_runs)):
            if bad:
                problems.append(f"#{i + 1} ({stage}, {who} {outcome['signal']}): {what}: {bad}")
        rows.append(outcome)
    keys = ["#", "stage", "runner", "killed", "signal", "at_s", "orphans_after_10s", "next_run",
            "dvc_status", "staging_left", "outputs"]
    table = ["", "| " + " | ".join(keys) + " | note |", "|" + "---|" * (len(keys) + 1)]
    table += ["| " + " | ".join(str(r.get(k, "")) for k in keys) + f" | {r.get('note', '')} |" for r in rows]
    with capsys.disabled():  # the table, whatever the outcome and however pytest captures
        print("\n".join(table))
    assert not problems, "\n".join(problems)
    assert len(rows) == KILLS and sum("note" not in r for r in rows) >= KILLS // 2
