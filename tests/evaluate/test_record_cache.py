"""The per-item record cache: what it keeps, what it refuses, and what a kill leaves of it.
(The stage served by a real engine through it: tests/evaluate/test_stage.py.)"""

import json
import threading

from pipeline.engines.wire import Completion
from pipeline.evaluate.harness import run_prompts
from pipeline.evaluate.record_cache import Cached, RecordCache, folder

IDENTITY = {"variant": "q8", "artifact_sha256": "ab" * 32, "engine": "llamacpp", "engine_version": "b1",
            "settings": {"threads": 1}, "url": None, "max_tokens": 16, "concurrency": 4,
            "code": "h1"}


class Counting:
    """An engine that answers each prompt with its own ids, counting what it was asked."""

    accepts_parallel = True

    def __init__(self):
        self.asked, self._lock = [], threading.Lock()

    def complete(self, prompt_ids, max_tokens, *, ignore_eos=False):
        with self._lock:
            self.asked.append(tuple(prompt_ids))
        return Completion(text=" ".join(map(str, prompt_ids)), output_tokens=len(prompt_ids),
                          prompt_tokens=len(prompt_ids), latency=0.01, ttft=0.005, finish_reason="stop")


PROMPTS = [[i, i + 1, i + 2] for i in range(40)]


def serve(where, prompts=PROMPTS, identity=IDENTITY):
    engine = Counting()
    cached = Cached(engine, RecordCache(where, identity))
    out, _ = run_prompts(cached, prompts, max_tokens=identity["max_tokens"], concurrency=8)
    cached.cache.close()
    return engine, cached, out


def test_a_second_serving_asks_the_engine_nothing_and_gets_the_same_answers(tmp_path):
    first, c1, out1 = serve(tmp_path)
    second, c2, out2 = serve(tmp_path)
    assert len(first.asked) == 40 and c1.take()[1] == {"from_cache": 0, "served": 40}
    hits, counts = c2.take()
    assert second.asked == [] and counts == {"from_cache": 40, "served": 0} and len(hits) == 40
    assert c2.take()[1] == {"from_cache": 0, "served": 0}  # counted once
    assert out1 == out2


def test_anything_that_decides_an_answer_starts_another_file(tmp_path):
    serve(tmp_path)
    for change in ({"artifact_sha256": "cd" * 32}, {"engine_version": "b2"}, {"settings": {"threads": 2}},
                   {"max_tokens": 32}, {"code": "h2"}, {"variant": "q8_rerun"}):
        engine, _, _ = serve(tmp_path, identity=IDENTITY | change)
        assert len(engine.asked) == 40, change
    assert len(list(tmp_path.glob("*.jsonl"))) == 7


def test_a_torn_last_line_is_dropped_and_only_the_rest_is_served_again(tmp_path):
    serve(tmp_path)
    path = next(tmp_path.glob("*.jsonl"))
    lines = path.read_bytes().split(b"\n")
    path.write_bytes(b"\n".join(lines[:11]) + b"\n" + lines[11][:25])  # header, 10 answers, a torn one
    engine, cached, out = serve(tmp_path)
    assert cached.cache.dropped == 1 and cached.take()[1]["from_cache"] == 10 and len(engine.asked) == 30
    reread = RecordCache(tmp_path, IDENTITY)
    assert reread.dropped == 0 and len(reread.entries) == 40  # the torn tail was cut before appending
    assert [c.text for c in out] == [" ".join(map(str, p)) for p in PROMPTS]


def test_a_file_of_another_identity_is_not_read(tmp_path):
    serve(tmp_path)
    path = next(tmp_path.glob("*.jsonl"))
    lines = path.read_text().splitlines()
    lines[0] = json.dumps({"identity": IDENTITY | {"engine_version": "other"}})
    path.write_text("\n".join(lines) + "\n")
    before = path.read_bytes()
    engine, cached, _ = serve(tmp_path)
    assert cached.cache.trusted is False and cached.take()[0] == set() and len(engine.asked) == 40
    assert path.read_bytes() == before  # nothing added to a file that is not this identity's


def test_requests_of_another_kind_are_never_answered_from_the_cache(tmp_path):
    engine = Counting()
    cached = Cached(engine, RecordCache(tmp_path, IDENTITY))
    cached.complete([1, 2], 16)
    cached.complete([1, 2], 16, ignore_eos=True)
    cached.complete([1, 2], 8)  # another max tokens: another answer
    cached.complete([1, 2], 16)
    assert len(engine.asked) == 3 and len(cached.cache.entries) == 1


def test_the_cache_folder_is_the_projects_unless_the_environment_says(tmp_path, monkeypatch):
    monkeypatch.delenv("QPIPE_RECORD_CACHE", raising=False)
    assert folder(tmp_path) == tmp_path / ".cache" / "records"
    monkeypatch.setenv("QPIPE_RECORD_CACHE", str(tmp_path / "elsewhere"))
    assert folder(tmp_path) == tmp_path / "elsewhere"
    monkeypatch.setenv("QPIPE_RECORD_CACHE", "off")
    assert folder(tmp_path) is None


def test_the_code_in_the_identity_is_what_talks_to_the_engine_not_what_scores():
    from pipeline.evaluate.record_cache import PACKAGE, code_version
    from pipeline.importgraph import closure

    files = {p.relative_to(PACKAGE).as_posix()
             for p in closure(["pipeline.engines.llamacpp", "pipeline.evaluate.record_cache"], PACKAGE)}
    assert {"engines/llamacpp.py", "engines/base.py", "engines/wire.py", "evaluate/record_cache.py"} <= files
    assert not files & {"evaluate/scorers.py", "evaluate/stage.py", "compare/stopping.py", "evaluate/looks.py"}
    assert len(code_version("pipeline.engines.llamacpp")) == 16
