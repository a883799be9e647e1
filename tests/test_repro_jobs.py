"""`qpipe repro --jobs N` on a real DVC project: independent stages run at the same time (two
stages that can only finish together prove it), an exclusive stage runs alone, and dvc.lock,
`dvc status` and a failure's consequences are exactly those of a serial `dvc repro`."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.orchestrate.repro import ReproError, order_lockfile, repro

DVC = Path(sys.executable).parent / "dvc"

STEP = '''import os, sys, time, pathlib
name = sys.argv[1]
trace = pathlib.Path("trace"); trace.mkdir(exist_ok=True)
with open(trace / name, "a") as f: f.write(f"start {time.time()}\\n")
(trace / f"{name}.env").write_text(" ".join(os.environ.get(k, "-") for k in ("OMP_NUM_THREADS", "OMP_WAIT_POLICY")))
(trace / f"{name}.cpus").write_text(",".join(map(str, sorted(os.sched_getaffinity(0)))))
if name in os.environ.get("FAIL", "").split(","):
    sys.exit(3)
if os.environ.get("BARRIER") and name in ("a", "b"):  # both gen stages must be running at once, or neither finishes
    sync = pathlib.Path("sync"); sync.mkdir(exist_ok=True)
    (sync / name).touch()
    other = {"a": "b", "b": "a"}[name]
    deadline = time.time() + 60
    while not (sync / other).exists():
        if time.time() > deadline:
            sys.exit(f"{name}: {other} never ran beside me")
        time.sleep(0.05)
    if name == "a":
        time.sleep(0.5)  # b finishes (and is recorded) first
    hold = os.environ.get("HOLD")
    while hold and not os.path.exists(hold):  # held inside the command until released
        time.sleep(0.05)
pathlib.Path("out").mkdir(exist_ok=True)
pathlib.Path(f"out/{name}.txt").write_text(f"{name} {open('input.txt').read()}")
with open(trace / name, "a") as f: f.write(f"end {time.time()}\\n")
'''

DVC_YAML = '''stages:
  gen:
    foreach: [a, b]
    do:
      cmd: python step.py ${item}
      deps: [step.py, input.txt]
      outs:
        - out/${item}.txt
  solo:
    cmd: python step.py solo
    deps: [step.py]
    outs: [out/solo.txt]
    meta: {exclusive: true}
  agg:
    cmd: python step.py agg && cat out/a.txt out/b.txt > out/all.txt
    deps: [out/a.txt, out/b.txt]
    outs: [out/agg.txt, out/all.txt]
'''


def env(tmp: Path) -> dict:
    return {"DVC_NO_ANALYTICS": "1", "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
            "HOME": str(tmp), "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
            "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}


@pytest.fixture
def projects(tmp_path, monkeypatch):
    """Two identical DVC projects: one for a serial `dvc repro`, one for `repro(jobs=…)`."""
    if not DVC.is_file():
        pytest.skip("dvc is not installed next to this Python")
    for k, v in env(tmp_path).items():
        monkeypatch.setenv(k, v)
    roots = []
    for name in ("serial", "parallel"):
        root = tmp_path / name
        root.mkdir()
        (root / "step.py").write_text(STEP)
        (root / "dvc.yaml").write_text(DVC_YAML)
        (root / "input.txt").write_text("1\n")
        (root / ".gitignore").write_text("trace/\nsync/\nlogs/\n")
        for cmd in (["git", "init", "-q"], [str(DVC), "init", "-q"], ["git", "add", "-A"],
                    ["git", "commit", "-qm", "init"]):
            subprocess.run(cmd, cwd=root, check=True, capture_output=True)
        roots.append(root)
    return roots


def dvc(root: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run([str(DVC), *args], cwd=root, capture_output=True, text=True, check=check)


def intervals(root: Path) -> dict[str, tuple[float, float]]:
    out = {}
    for f in (root / "trace").iterdir():
        if f.suffix:
            continue
        times = dict(line.split() for line in f.read_text().splitlines()[-2:])
        out[f.name] = (float(times["start"]), float(times["end"]))
    return out


def test_parallel_stages_leave_what_a_serial_repro_leaves(projects, monkeypatch):
    serial, parallel = projects
    dvc(serial, "repro")
    monkeypatch.setenv("BARRIER", "1")
    lines: list[str] = []
    outcomes = repro(parallel, jobs=3, say=lines.append)
    assert [(o.stage, o.status) for o in outcomes] == [
        ("gen@a", "ran"), ("gen@b", "ran"), ("solo", "ran"), ("agg", "ran")]
    # gen@a and gen@b ran at the same time (each waited for the other); the exclusive stage
    # overlapped nothing
    spans = intervals(parallel)
    assert spans["a"][0] < spans["b"][1] and spans["b"][0] < spans["a"][1]
    for other in ("a", "b", "agg"):
        assert spans["solo"][1] <= spans[other][0] or spans[other][1] <= spans["solo"][0], other
    # ready from the start, it waited while other stages could run (agg among them): the
    # machine is drained for it once, at the end, not once more in the middle
    assert spans["agg"][1] <= spans["solo"][0]
    assert (parallel / "dvc.lock").read_bytes() == (serial / "dvc.lock").read_bytes()
    assert "up to date" in dvc(parallel, "status").stdout or dvc(parallel, "status").stdout.strip() == ""
    assert any(line.startswith("[gen@b] Running stage 'gen@b'") for line in lines)
    # side by side: the thread count as under dvc repro (none imposed unless pinned to a share
    # of the CPUs: then the serial count), idle threads sleeping
    from pipeline.orchestrate.repro import cpu_shares
    from pipeline.processes import affinity

    threads = os.environ.get("OMP_NUM_THREADS") or \
        (str(len(affinity())) if cpu_shares(3, affinity()) else "-")
    assert (parallel / "trace" / "a.env").read_text() == f"{threads} PASSIVE"
    assert (serial / "trace" / "a.env").read_text() == \
        f"{os.environ.get('OMP_NUM_THREADS', '-')} {os.environ.get('OMP_WAIT_POLICY', '-')}"
    assert (parallel / "logs" / "repro" / "gen-a.log").is_file()

    # a change re-runs what it touches, and nothing else, in both
    for root in projects:
        (root / "input.txt").write_text("2\n")
    monkeypatch.delenv("BARRIER")
    dvc(serial, "repro")
    monkeypatch.setenv("BARRIER", "1")
    outcomes = repro(parallel, jobs=3, say=lines.append)
    assert {o.stage: o.status for o in outcomes} == {
        "gen@a": "ran", "gen@b": "ran", "solo": "unchanged", "agg": "ran"}
    assert (parallel / "dvc.lock").read_bytes() == (serial / "dvc.lock").read_bytes()
    assert dvc(parallel, "status", "--json").stdout.strip() in ("{}", "")


PREP = """import os, sys, time, pathlib
name = sys.argv[1]
trace = pathlib.Path("trace"); trace.mkdir(exist_ok=True)
def mark(what):
    with open(trace / name, "a") as f: f.write(f"{what} {time.time()}\\n")
mark("start")
if name == "slow" and os.environ.get("WAIT_FOR_SOLO"):  # runs until solo has started beside it
    deadline = time.time() + 60
    while not (trace / "solo").exists() and time.time() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)
if name == "solo":
    from pipeline.processes import wait_until_alone
    waited = wait_until_alone(0.02)
    mark("alone")
    (trace / "solo.waited").write_text(repr(waited))
pathlib.Path("out").mkdir(exist_ok=True)
pathlib.Path(f"out/{name}.txt").write_text(name)
mark("end")
"""

PREP_YAML = """stages:
  fast: {cmd: python prep.py fast, deps: [prep.py], outs: [out/fast.txt]}
  slow: {cmd: python prep.py slow, deps: [prep.py], outs: [out/slow.txt]}
  solo:
    cmd: python prep.py solo
    deps: [prep.py]
    outs: [out/solo.txt]
    meta: {exclusive: true, prepare_beside: true}
  after: {cmd: python prep.py after, deps: [out/slow.txt, out/solo.txt], outs: [out/after.txt]}
"""


def test_an_exclusive_stage_prepares_beside_the_last_stages_and_measures_alone(projects, monkeypatch):
    serial, parallel = projects
    for root in projects:
        (root / "prep.py").write_text(PREP)
        (root / "dvc.yaml").write_text(PREP_YAML)
    dvc(serial, "repro")
    assert (serial / "trace" / "solo.waited").read_text() == "None"  # dvc repro: alone already
    monkeypatch.setenv("WAIT_FOR_SOLO", "1")
    lines: list[str] = []
    outcomes = repro(parallel, jobs=2, say=lines.append)
    assert all(o.status == "ran" for o in outcomes), outcomes
    marks = {f.name: dict(line.split() for line in f.read_text().splitlines())
             for f in (parallel / "trace").iterdir() if not f.suffix}
    t = {n: {k: float(v) for k, v in m.items()} for n, m in marks.items()}
    # started while slow still ran (slow waited for it), and went past its gate only after
    assert t["solo"]["start"] < t["slow"]["end"] <= t["solo"]["alone"]
    assert float((parallel / "trace" / "solo.waited").read_text()) > 0
    assert t["solo"]["end"] <= t["after"]["start"]  # nothing started beside it meanwhile
    assert any("Running stage 'solo' (preparing while the running stages finish):" in line
               for line in lines)
    assert not list((parallel / "logs" / "repro").glob(".*.alone"))  # the gate is cleaned up
    assert (parallel / "dvc.lock").read_bytes() == (serial / "dvc.lock").read_bytes()
    assert dvc(parallel, "status", "--json").stdout.strip() in ("{}", "")


def test_a_stage_waiting_at_its_gate_stops_when_the_orchestrator_is_gone(tmp_path, monkeypatch):
    """A SIGKILLed `qpipe repro` cannot open the gate or stop the stage it started early (its own
    process group): the stage must not hold its engines forever."""
    import threading

    from pipeline.processes import ALONE_GATE, GATE_OWNER, GateOwnerGone, gate_env, wait_until_alone

    gate = tmp_path / ".bench.alone"
    monkeypatch.setenv(ALONE_GATE, str(gate))
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    monkeypatch.setenv(GATE_OWNER, str(gone.pid))
    with pytest.raises(GateOwnerGone, match=f"pid {gone.pid}"):
        wait_until_alone(0.02)
    # killed but not yet reaped by its parent (a zombie): gone as well
    killed = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    killed.kill()
    monkeypatch.setenv(GATE_OWNER, str(killed.pid))
    try:
        with pytest.raises(GateOwnerGone, match=f"pid {killed.pid}"):
            wait_until_alone(0.02)
    finally:
        killed.wait()
    # the orchestrator alive (this process): it waits until the gate opens
    monkeypatch.setenv(GATE_OWNER, gate_env(gate)[GATE_OWNER])
    threading.Timer(0.3, gate.touch).start()
    assert wait_until_alone(0.02) >= 0.3


def test_a_failed_stage_stops_only_its_dependents(projects, monkeypatch):
    serial, parallel = projects
    monkeypatch.setenv("FAIL", "b")
    assert dvc(serial, "repro", "--keep-going", check=False).returncode != 0
    with pytest.raises(ReproError, match=r"'gen@b': its command exited with code 3") as err:
        repro(parallel, jobs=2, say=lambda line: None)
    assert "not run because of it: agg" in str(err.value)
    assert {o.stage: o.status for o in err.value.outcomes} == {
        "gen@a": "ran", "gen@b": "failed", "solo": "ran", "agg": "not run"}
    assert (parallel / "dvc.lock").read_bytes() == (serial / "dvc.lock").read_bytes()
    status = json.loads(dvc(parallel, "status", "--json").stdout)
    assert set(status) == {"gen@b", "agg"}
    # the failure fixed, a re-run finishes the rest
    monkeypatch.delenv("FAIL")
    outcomes = repro(parallel, jobs=2, say=lambda line: None)
    assert {o.stage: o.status for o in outcomes} == {
        "gen@a": "unchanged", "gen@b": "ran", "solo": "unchanged", "agg": "ran"}
    assert dvc(parallel, "status", "--json").stdout.strip() in ("{}", "")
    dvc(serial, "repro")
    assert (parallel / "dvc.lock").read_bytes() == (serial / "dvc.lock").read_bytes()


def test_new_lock_entries_follow_plan_order(tmp_path):
    lock = tmp_path / "dvc.lock"
    lock.write_text("schema: '2.0'\nstages:\n  old:\n    cmd: x\n  b:\n    cmd: y\n  a:\n    cmd: z\n")
    assert order_lockfile(lock, ["old"], ["a", "old", "b"])
    assert lock.read_text() == "schema: '2.0'\nstages:\n  old:\n    cmd: x\n  a:\n    cmd: z\n  b:\n    cmd: y\n"
    assert not order_lockfile(lock, ["old"], ["a", "old", "b"])  # already in order: untouched


def test_jobs_must_be_positive(projects):
    with pytest.raises(ReproError, match="at least 1"):
        repro(projects[1], jobs=0)
    shutil.rmtree(projects[1] / ".dvc" / "tmp", ignore_errors=True)


def test_side_by_side_stages_keep_their_threads_and_sleep_when_idle():
    from pipeline.orchestrate.repro import side_by_side

    env = side_by_side({"PATH": "/bin"})
    assert env == {"PATH": "/bin", "OMP_WAIT_POLICY": "PASSIVE"}  # no thread count imposed
    assert side_by_side({"OMP_WAIT_POLICY": "ACTIVE"})["OMP_WAIT_POLICY"] == "ACTIVE"
    # pinned to a share: the thread count a serial run has is stated, unless one is set
    assert side_by_side({}, [1], 4) == {"OMP_WAIT_POLICY": "PASSIVE", "OMP_NUM_THREADS": "4"}
    assert side_by_side({"OMP_NUM_THREADS": "3"}, [1], 4)["OMP_NUM_THREADS"] == "3"


def test_cpu_shares_are_disjoint_and_cover_the_cpus():
    from pipeline.orchestrate.repro import cpu_shares

    assert cpu_shares(2, [0, 1]) == [[0], [1]]
    assert cpu_shares(2, [0, 1, 2, 3, 4]) == [[0, 1, 2], [3, 4]]
    assert cpu_shares(3, [4, 5, 6, 7, 8, 9, 10]) == [[4, 5, 6], [7, 8], [9, 10]]
    assert cpu_shares(1, [0, 1]) is None      # one job: nothing to share
    assert cpu_shares(3, [0, 1]) is None      # more jobs than CPUs: every command sees all
    assert cpu_shares(2, None) is None        # no CPU affinity on this OS


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs CPU affinity and two CPUs")
def test_side_by_side_stages_run_on_their_own_cpus(projects, monkeypatch):
    serial, parallel = projects
    cpus = sorted(os.sched_getaffinity(0))
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    dvc(serial, "repro")
    monkeypatch.setenv("BARRIER", "1")
    lines: list[str] = []
    repro(parallel, jobs=2, say=lines.append)
    got = {n: [int(c) for c in (parallel / "trace" / f"{n}.cpus").read_text().split(",")]
           for n in ("a", "b", "solo", "agg")}
    half = len(cpus) // 2 + len(cpus) % 2
    # a and b ran at once, each on its own share; the exclusive stage had every CPU
    assert sorted([got["a"], got["b"]]) == [cpus[:half], cpus[half:]]
    assert got["solo"] == cpus
    assert (parallel / "trace" / "a.env").read_text() == f"{len(cpus)} PASSIVE"   # serial count
    assert (serial / "trace" / "a.cpus").read_text() == ",".join(map(str, cpus))
    assert (parallel / "trace" / "solo.env").read_text().startswith("- ")           # none imposed
    assert any(f"Running stage 'gen@a' on CPU {','.join(map(str, got['a']))}:" in line for line in lines)
    assert (parallel / "dvc.lock").read_bytes() == (serial / "dvc.lock").read_bytes()
    assert os.sched_getaffinity(0) == set(cpus)  # this process's own affinity is untouched


def test_progress_redraws_stay_out_of_the_log_and_off_a_pipe():
    import io

    from pipeline.orchestrate.relay import relay

    out = (b"Loading model\n\r  0%|          | 0/3\r 33%|###       | 1/3\r 67%|######    | 2/3"
           b"\r100%|##########| 3/3\ndone \xe2\x9c\x93\r\n\r  0%|   | 0/2\r")
    for live in (False, True):
        log, echoed, now = io.StringIO(), [], iter([0, 1, 6, 7])
        relay(io.BytesIO(out), log, echoed.append, live=live, every=5.0, clock=now.__next__)
        # The log holds what ended in a newline: the bar's final state, not its redraws.
        assert log.getvalue() == "Loading model\n100%|##########| 3/3\ndone ✓\n"
        finals = ["Loading model", "100%|##########| 3/3", "done ✓"]
        if not live:  # a pipe or a file: what the log holds, nothing more
            assert echoed == finals
        else:  # a terminal also sees redraws, one per 5 s at most (at 0, 1, 6 and 7 s)
            assert echoed == ["Loading model", "0%|          | 0/3", "67%|######    | 2/3",
                              "100%|##########| 3/3", "done ✓"]


def test_ray_echo_keeps_a_progress_bars_last_state(tmp_path):
    from pipeline.orchestrate.ray_executor import _echo_new

    log = tmp_path / "stage.log"
    log.write_bytes(b"start\n\r 10%|#  \r 90%|#########\r100%|##########\nhalf")
    echoed: list[str] = []
    seen = _echo_new(log, 0, echoed.append)
    assert echoed == ["start", "100%|##########"] and seen == log.stat().st_size - len(b"half")
