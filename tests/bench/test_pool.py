"""The bench's engine pool: each distinct engine starts once while it stays within the pool, the
least recently used one stops first when another must start, and every engine stops at the end
— also when a measurement fails."""

import sys
import textwrap
from typing import ClassVar

import pytest

from pipeline.bench.pool import EnginePool
from pipeline.engines.base import Completion, Engine, EngineError, EngineInfo, ServerEngine


class Recording(Engine):
    """An in-process engine that records its starts and stops (the pool's logic only; the bench
    stage's own test serves real engines)."""

    name = "recording"
    formats = frozenset({"hf"})
    events: list[tuple[str, str]] = []

    def start(self) -> None:
        self.events.append(("start", self.artifact.name))
        self.alive = True

    def stop(self) -> None:
        self.events.append(("stop", self.artifact.name))
        self.alive = False

    def check_alive(self, when: str) -> None:
        if not self.alive:
            raise EngineError(f"{self.artifact.name} died {when}")

    def complete(self, prompt_ids, max_tokens, *, ignore_eos=False) -> Completion:
        raise NotImplementedError

    def info(self) -> EngineInfo:
        return EngineInfo(self.name, "0", "none")


@pytest.fixture
def opener(tmp_path):
    Recording.events = []
    return lambda name, log: Recording(tmp_path / name, {}, log_path=log)


def test_each_engine_starts_once_within_the_pool(opener, tmp_path):
    plan = ["b", "v1", "v2", "b", "v2", "v1", "b"]  # the bench schedule's shape
    with EnginePool(opener, 3) as pool:
        started = [pool.get(n, tmp_path / f"{k}-{n}.log")[1] is not None for k, n in enumerate(plan)]
        assert pool.starts == 3
    assert started == [True, True, True, False, False, False, False]
    assert sorted(Recording.events) == sorted([("start", n) for n in ("b", "v1", "v2")]
                                              + [("stop", n) for n in ("b", "v1", "v2")])


def test_the_least_recently_used_engine_stops_first(opener, tmp_path):
    with EnginePool(opener, 2) as pool:
        for n in ["b", "v1", "b", "v2", "b", "v1"]:
            pool.get(n, tmp_path / f"{n}.log")
        # v1 was the least recently used when v2 came; then v2 when v1 came back
        assert Recording.events == [("start", "b"), ("start", "v1"), ("stop", "v1"),
                                    ("start", "v2"), ("stop", "v2"), ("start", "v1")]
        assert list(pool.live) == ["b", "v1"] and pool.starts == 4
    assert Recording.events[-2:] == [("stop", "b"), ("stop", "v1")]


def test_one_live_engine_restarts_for_every_measurement(opener, tmp_path):
    with EnginePool(opener, 1) as pool:
        for n in ["b", "v1", "b"]:
            assert pool.get(n, tmp_path / f"{n}.log")[1] is not None
    assert [e for e, _ in Recording.events] == ["start", "stop"] * 3


def test_an_engine_dead_while_idle_fails_and_all_stop(opener, tmp_path):
    with pytest.raises(EngineError, match="v1 died between bench measurements"):
        with EnginePool(opener, 3) as pool:
            pool.get("b", tmp_path / "b.log")
            eng, _ = pool.get("v1", tmp_path / "v1.log")
            eng.alive = False
            pool.get("v1", tmp_path / "v1.log")
    assert ("stop", "b") in Recording.events and Recording.events.count(("stop", "v1")) == 1
    with pytest.raises(ValueError, match="live_engines"):
        EnginePool(lambda n, log: None, 0)


def test_low_memory_stops_idle_engines_first(opener, tmp_path, monkeypatch):
    pool = EnginePool(opener, 6)
    with pool:
        pool.get("b", tmp_path / "b.log")
        pool.get("v1", tmp_path / "v1.log")
        monkeypatch.setattr(EnginePool, "memory_low", lambda self: True)
        pool.get("v2", tmp_path / "v2.log")  # every idle engine stopped before it starts
        assert list(pool.live) == ["v2"]
    assert Recording.events[:4] == [("start", "b"), ("start", "v1"), ("stop", "b"), ("stop", "v1")]


# ── engines started together ─────────────────────────────────────────────────────────────
BARRIER_SERVER = textwrap.dedent("""
    import http.server, pathlib, sys, time
    port, me, sync, want = int(sys.argv[1]), sys.argv[2], pathlib.Path(sys.argv[3]), int(sys.argv[4])
    if me == "broken":
        print("broken: cannot load the model", flush=True)
        sys.exit(5)
    (sync / me).touch()
    deadline = time.time() + 60
    while len(list(sync.iterdir())) < want:  # ready only once every other one has started too
        if time.time() > deadline:
            sys.exit(f"{me}: the others never started beside me")
        time.sleep(0.05)
    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200); self.end_headers(); self.wfile.write(b"ok")
        def log_message(self, *a):
            pass
    http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
""")


class BarrierServer(ServerEngine):
    """A real server process that answers only once `want` of its kind have started: started
    one after another (each waited for before the next), the first would never be ready."""
    name: ClassVar[str] = "barrier-test-server"
    formats: ClassVar[frozenset[str]] = frozenset()
    want = 3

    def command(self) -> list[str]:
        # engines started together run this at once: each writes its own copy (one shared file
        # rewritten while another process reads it gave Python an empty script, exit 0)
        script = self.log_path.parent / f"server-{self.artifact.name}-{self.port}.py"
        script.write_text(BARRIER_SERVER)
        sync = self.log_path.parent / "sync"
        sync.mkdir(exist_ok=True)
        return [sys.executable, str(script), str(self.port), self.artifact.name, str(sync),
                str(self.want)]

    def info(self) -> EngineInfo:
        return EngineInfo(name=self.name)


@pytest.fixture
def servers(tmp_path):
    return lambda name, log: BarrierServer(tmp_path / name, {"startup_timeout": 60}, log_path=log)


def test_engines_start_together_and_serve_their_measurements(servers, tmp_path):
    with EnginePool(servers, 6) as pool:
        wanted = [(n, tmp_path / f"{k:02d}-{n}.log") for k, n in enumerate(["b", "v1", "v2"])]
        assert pool.start_together(wanted + [("b", tmp_path / "03-b.log")]) == ["b", "v1", "v2"]
        procs = [e.proc for e in pool.live.values()]
        assert pool.starts == 3 and all(p.poll() is None for p in procs)
        first = [pool.get(n, tmp_path / "unused.log") for n in ["b", "v1", "v2", "b"]]
        # the first use reports the seconds its engine took to be ready; later ones none
        assert [s is not None and s > 0 for _, s in first] == [True, True, True, False]
        assert first[0][0] is first[3][0] and pool.starts == 3
    assert all(p.poll() is not None for p in procs)  # every one stopped at the end
    assert not (tmp_path / "unused.log").exists()


def test_engines_started_together_are_limited_by_the_pool(servers, tmp_path):
    BarrierServer.want = 2
    try:
        with EnginePool(servers, 2) as pool:
            started = pool.start_together([(n, tmp_path / f"{n}.log") for n in ["b", "v1", "v2"]])
            assert started == ["b", "v1"] and list(pool.live) == ["b", "v1"]
    finally:
        BarrierServer.want = 3


def test_a_failed_start_stops_every_engine_started_with_it(servers, tmp_path):
    pool = EnginePool(servers, 6)
    with pytest.raises(EngineError, match=r"(?s)exited with code 5 while starting.*broken.log.*cannot load the model"):
        pool.start_together([(n, tmp_path / f"{n}.log") for n in ["b", "broken", "v1"]])
    assert pool.live == {}
    assert "others never started" not in (tmp_path / "b.log").read_text()
