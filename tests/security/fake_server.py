"""A minimal OpenAI-style server that behaves like vLLM and llama-server do with an API key: the
key comes from an environment variable, /health is open, /v1/* answer 401 without the key.
Started by tests as an engine process (python fake_server.py PORT)."""

import http.server
import json
import os
import sys

KEY = os.environ.get("FAKE_ENGINE_KEY")


class Handler(http.server.BaseHTTPRequestHandler):
    def _auth(self) -> bool:
        if KEY and self.headers.get("Authorization") != f"Bearer {KEY}":
            self.send_response(401)
            self.end_headers()
            return False
        return True

    def do_GET(self):  # noqa: N802
        if self.path == "/health" or self._auth():
            self.send_response(200)
            self.end_headers()
            self.wfile.write(json.dumps({"data": [{"id": "model"}]}).encode())

    def do_POST(self):  # noqa: N802
        if not self._auth():
            return
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        event = {"choices": [{"text": "genuine", "finish_reason": "stop"}],
                 "usage": {"completion_tokens": 1, "prompt_tokens": 1}}
        self.wfile.write(f"data: {json.dumps(event)}\n\ndata: [DONE]\n\n".encode())

    def log_message(self, *a):
        pass


if __name__ == "__main__":
    print(os.getpid(), flush=True)
    http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
