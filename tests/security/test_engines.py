"""Point 5 — engines that cannot be impersonated or orphaned: a per-run key, the listening socket
checked to belong to the process we started, death with the parent, and SIGTERM taking the
clean-up path in every qpipe command."""

import http.server
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import ClassVar

import httpx
import pytest

from pipeline.engines.base import EngineError, EngineInfo, ServerEngine

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


class FakeEngine(ServerEngine):
    """The fake server as an engine (its own process, a key through the environment)."""

    name: ClassVar[str] = "fake"
    formats: ClassVar[frozenset[str]] = frozenset({"*"})
    api_key_env: ClassVar[str | None] = "FAKE_ENGINE_KEY"

    def program(self):
        return [sys.executable, str(HERE / "fake_server.py")]

    def arguments(self):
        return [str(self.port)]

    def info(self):
        return EngineInfo(self.name)


def test_every_request_carries_the_runs_key_and_the_key_is_not_on_the_command_line(tmp_path):
    with FakeEngine(tmp_path, {"startup_timeout": 30}, log_path=tmp_path / "e.log") as eng:
        assert eng.api_key and len(eng.api_key) >= 32
        assert eng.complete([1, 2], 4).text == "genuine"
        assert httpx.get(eng.base_url + "/v1/models").status_code == 401  # anyone else: refused
        cmdline = Path(f"/proc/{eng.proc.pid}/cmdline").read_bytes().decode()
        assert eng.api_key not in cmdline and eng.api_key not in (tmp_path / "e.log").read_text()
    assert FakeEngine(tmp_path, {}, log_path=tmp_path / "x.log").api_key != eng.api_key


def test_a_process_that_takes_the_port_first_gets_no_prompt(tmp_path):
    prompts = []

    class Squatter(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 — says yes to everything, health included
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b'{"data": []}')

        def do_POST(self):  # noqa: N802
            prompts.append(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *a):
            pass

    eng = FakeEngine(tmp_path, {"startup_timeout": 30}, log_path=tmp_path / "e.log")
    squatter = http.server.HTTPServer(("127.0.0.1", eng.port), Squatter)  # takes the port first
    threading.Thread(target=squatter.serve_forever, daemon=True).start()
    try:
        with pytest.raises(EngineError, match="held by another process|exited"):
            with eng:
                eng.complete([1, 2], 4)
    finally:
        squatter.shutdown()
        squatter.server_close()
    assert prompts == []


def test_an_engine_dies_with_a_killed_parent(tmp_path):
    script = textwrap.dedent(f"""
        import sys, time
        sys.path[:0] = [{str(REPO)!r}, {str(HERE)!r}]
        from test_engines import FakeEngine
        from pathlib import Path
        eng = FakeEngine(Path({str(tmp_path)!r}), {{"startup_timeout": 30}},
                         log_path=Path({str(tmp_path / 'e.log')!r}))
        eng.start()
        print(eng.proc.pid, flush=True)
        time.sleep(600)
    """)
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    engine_pid = int(parent.stdout.readline())
    os.kill(engine_pid, 0)  # running
    parent.kill()  # SIGKILL: no finally block runs in the parent
    parent.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{engine_pid}/stat") as fh:
                if fh.read().rsplit(")", 1)[1].split()[0] == "Z":
                    break
        except FileNotFoundError:
            break
        time.sleep(0.1)
    else:
        os.kill(engine_pid, signal.SIGKILL)
        pytest.fail("the engine outlived its killed parent")


def test_sigterm_to_a_qpipe_command_removes_its_staging_folders(tmp_path):
    """Any qpipe command installs the handler (the CLI's callback): a SIGTERM unwinds like Ctrl-C,
    so atomic outputs leave no .staging-* folder behind."""
    script = textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {str(REPO)!r})
        from pathlib import Path
        from typer.testing import CliRunner
        import typer
        from pipeline import cli
        from pipeline.io import atomic_dirs

        @cli.app.command("sleep-in-staging")
        def _sleep() -> None:
            with atomic_dirs(Path({str(tmp_path)!r}), ["out"]) as dirs:
                (dirs["out"] / "partial.bin").write_bytes(b"x" * 10)
                print("staged", flush=True)
                time.sleep(600)

        cli.app(["sleep-in-staging"])
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "staged"
    assert list(tmp_path.glob(".staging-*"))
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=30)
    assert proc.returncode != 0
    assert not list(tmp_path.glob(".staging-*")) and not (tmp_path / "out").exists()
