"""Progress lines: live on a terminal, a few log lines elsewhere; nested steps share one display."""

import io
import logging

import pytest
from rich.console import Console

from pipeline import progress


def test_off_a_terminal_a_step_logs_its_start_each_quarter_and_its_end(monkeypatch, caplog):
    monkeypatch.setenv("QPIPE_PROGRESS", "0")
    caplog.set_level(logging.INFO, logger="pipeline.progress")
    with progress.task("eval v", total=8) as t:
        for i in range(8):
            t.advance(status=f"accuracy {(i + 1) / 8:.3f}")
    lines = [r.getMessage() for r in caplog.records]
    assert lines[0] == "eval v: started (8 to do)"
    assert [ln.split(",")[0] for ln in lines[1:-1]] == ["eval v: 2/8", "eval v: 4/8", "eval v: 6/8"]
    assert all("ETA" in ln for ln in lines[1:-1])
    assert lines[-1].startswith("eval v: done 8/8 in ") and lines[-1].endswith("accuracy 1.000")


def test_a_failed_step_says_it_stopped(monkeypatch, caplog):
    monkeypatch.setenv("QPIPE_PROGRESS", "0")
    caplog.set_level(logging.INFO, logger="pipeline.progress")
    with pytest.raises(RuntimeError), progress.task("bench", total=4) as t:
        t.advance()
        raise RuntimeError("engine died")
    assert caplog.records[-1].getMessage().startswith("bench: stopped 1/4 in ")


def test_on_a_terminal_nested_steps_share_one_live_display(monkeypatch):
    out = io.StringIO()
    monkeypatch.setattr(progress, "console", Console(file=out, force_terminal=True, width=160))
    monkeypatch.setenv("QPIPE_PROGRESS", "1")
    with progress.task("bench", total=2) as outer:
        with progress.task("vllm: starting on baseline") as inner:  # a second Live would raise
            inner.status("INFO: Started server process")
        outer.advance(status="round 1: baseline")
        outer.advance(status="round 1: gptq")
    assert progress._active is None
    text = out.getvalue()
    assert "✓ vllm: starting on baseline: done in " in text  # each finished step leaves a line
    assert "INFO: Started server process" in text
    assert "✓ bench: done 2/2 in " in text and "round 1: gptq" in text


def test_last_line_reads_the_end_of_a_log(tmp_path):
    log = tmp_path / "engine.log"
    log.write_text("x" * 10000 + "\nloading weights\n\nINFO ready on :8000\n\n")
    assert progress.last_line(log) == "INFO ready on :8000"
    assert progress.last_line(tmp_path / "missing.log") == ""
    assert progress.last_line(None) == ""


def test_evaluation_reports_each_answer_in_order(monkeypatch):
    """run_prompts hands each completion to the progress callback in prompt order, so a running
    accuracy is the accuracy of the first i answers."""
    from pipeline.engines.base import Completion
    from pipeline.evaluate.harness import run_prompts

    class Echo:
        accepts_parallel = True

        def complete(self, prompt, max_tokens, ignore_eos=False):
            return Completion(text=str(prompt[0]), output_tokens=1, prompt_tokens=1, latency=0.0)

    seen = []
    out, _ = run_prompts(Echo(), [[i] for i in range(20)], max_tokens=4, concurrency=4,
                         progress=lambda i, c: seen.append((i, c.text)))
    assert seen == [(i, str(i)) for i in range(20)] and [c.text for c in out] == [s for _, s in seen]
