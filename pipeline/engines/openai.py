"""An OpenAI-compatible endpoint already running elsewhere (SGLang, TGI, `trtllm-serve`, a vLLM
on a GPU host…), given by URL. Nothing is started or stopped here; the endpoint's own log is
not ours to read, so the kernel is whatever the operator states in the variant's options."""

from __future__ import annotations

from typing import ClassVar

import httpx

from pipeline.engines.base import EngineError, EngineInfo, ServerEngine, register


@register
class OpenAIEndpoint(ServerEngine):
    name: ClassVar[str] = "openai"
    formats: ClassVar[frozenset[str]] = frozenset({"*"})

    @property
    def base_url(self) -> str:
        return self.url.rstrip("/").removesuffix("/v1")

    def command(self) -> list[str]:  # pragma: no cover - never started
        return []

    def start(self) -> None:
        if not self.url:
            raise EngineError("engine 'openai' needs the variant's `url:`")
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self.log_path.write_text(f"external endpoint {self.url}\n")
        self._client = httpx.Client(base_url=self.base_url,
                                    timeout=self.settings.get("request_timeout", 600))
        try:
            self._client.get("/v1/models", timeout=10).raise_for_status()
        except httpx.HTTPError as err:
            raise EngineError(f"endpoint {self.url} does not answer /v1/models: {err!r} — "
                              "fix: start the server there, or correct the variant's url") from err

    def stop(self) -> None:
        if self._client is not None:
            self._client.close()

    def served_name(self) -> str:
        return str(self.settings.get("model", "model"))

    def pids(self) -> list[int]:
        return []

    def info(self) -> EngineInfo:
        version = None
        try:
            version = self._client.get("/version", timeout=5).json().get("version")
        except (httpx.HTTPError, ValueError, AttributeError):
            pass
        return EngineInfo(self.name, version, self.settings.get("kernel", "unknown (remote)"),
                          details={"url": self.url})
