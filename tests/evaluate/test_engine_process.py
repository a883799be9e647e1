"""A server engine's stop() waits for every process the server forked, not only the leader.

vLLM forks an engine-core process that shares the log's file descriptor and writes its own
shutdown lines; when stop() returned as soon as the leader exited, those lines landed in the
results after the stage had finished and DVC saw its own output change. The server here is a
small real HTTP server that forks a worker which takes a moment to shut down."""

import os
import sys
import textwrap
from pathlib import Path
from typing import ClassVar

import pytest

from pipeline.engines.base import EngineInfo, ServerEngine
from pipeline.processes import group_members

SERVER = textwrap.dedent("""
    import http.server, os, signal, sys, time
    port = int(sys.argv[1])
    if os.fork() == 0:  # the worker: slow to shut down, logs on its way out
        def bye(*_):
            time.sleep(1.5)
            print("worker shut down", flush=True)
            os._exit(0)
        signal.signal(signal.SIGTERM, bye)
        print("worker up", flush=True)
        while True:
            time.sleep(0.1)
    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200); self.end_headers(); self.wfile.write(b"ok")
        def log_message(self, *a):
            pass
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
""")


class ForkingServer(ServerEngine):
    name: ClassVar[str] = "forking-test-server"
    formats: ClassVar[frozenset[str]] = frozenset()

    def command(self) -> list[str]:
        script = self.log_path.parent / "server.py"
        script.write_text(SERVER)
        return [sys.executable, str(script), str(self.port)]

    def info(self) -> EngineInfo:
        return EngineInfo(name=self.name)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_stop_waits_for_forked_workers_so_the_log_is_final(tmp_path: Path):
    log = tmp_path / "engine.log"
    eng = ForkingServer(tmp_path, {"startup_timeout": 30}, log_path=log)
    with eng:
        group = eng.proc.pid
        assert group_members(group), "the server's process group should be alive while serving"
    final = log.read_text()
    assert "worker shut down" in final, final
    assert group_members(group) == []
