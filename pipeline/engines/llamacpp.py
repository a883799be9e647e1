"""llama.cpp's `llama-server` as a serving engine (OpenAI-compatible API on 127.0.0.1).

Start → wait for /health within a deadline → serve → stop; the server's log is captured, and
its tail is put into any error so a failed start says why.
"""

from __future__ import annotations

import json
import logging
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

from pipeline.llamacpp import locate

log = logging.getLogger(__name__)


class EngineError(RuntimeError):
    pass


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LlamaServer:
    """`with LlamaServer(model_file, log_path) as srv: srv.complete(prompt, n)`."""

    def __init__(self, model: Path, log_path: Path, *, threads: int = 1, ctx: int = 2048,
                 ready_timeout: float = 120.0):
        self.model, self.log_path, self.threads, self.ctx = model, log_path, threads, ctx
        self.ready_timeout = ready_timeout
        self.port = free_port()
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log_tail(self, n: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return "(no log)"

    def __enter__(self) -> "LlamaServer":
        tools = locate()
        cmd = [tools.tool("llama-server"), "-m", str(self.model), "--host", "127.0.0.1",
               "--port", str(self.port), "-t", str(self.threads), "-c", str(self.ctx),
               "--no-webui", "-np", "1"]
        self._log = self.log_path.open("w")
        self.proc = subprocess.Popen(cmd, stdout=self._log, stderr=subprocess.STDOUT)
        deadline = time.time() + self.ready_timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                self.__exit__(None, None, None)
                raise EngineError(f"llama-server exited with {self.proc.returncode} while starting; "
                                  f"log tail:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.url}/health", timeout=2) as r:
                    if r.status == 200:
                        return self
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.3)
        self.__exit__(None, None, None)
        raise EngineError(f"llama-server not ready after {self.ready_timeout:.0f} s; log tail:\n"
                          f"{self.log_tail()}")

    def __exit__(self, *exc) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if getattr(self, "_log", None):
            self._log.close()

    def complete(self, prompt: str, n_predict: int) -> dict:
        """Greedy completion of a raw prompt; returns the server's JSON (content, tokens…)."""
        body = json.dumps({"prompt": prompt, "n_predict": n_predict, "temperature": 0,
                           "top_k": 1, "cache_prompt": False, "return_tokens": True}).encode()
        req = urllib.request.Request(f"{self.url}/completion", data=body,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=120) as r:
                return json.loads(r.read())
        except (urllib.error.URLError, ConnectionError) as err:
            raise EngineError(f"llama-server request failed: {err}; log tail:\n{self.log_tail()}") from err
