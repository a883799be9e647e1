"""An OpenAI-compatible endpoint already running elsewhere (SGLang, TGI, `trtllm-serve`, a vLLM
on a GPU host…), given by URL. Nothing is started or stopped here; the endpoint's own log is
not ours to read, so the kernel is whatever the operator states in the variant's options."""

from __future__ import annotations

import os
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
        from pipeline.secrets import mask_text

        self.log_path.write_text(f"external endpoint {mask_text(self.url)}\n")
        # The key comes from a named environment variable (engine option `api_key_env`), never
        # from params, the URL or a command line; it is sent as a bearer header only.
        headers = {}
        key_env = self.settings.get("api_key_env")
        if key_env:
            if not os.environ.get(str(key_env)):
                raise EngineError(f"engine 'openai': the environment variable {key_env} (the "
                                  "variant's api_key_env) is not set — fix: export it")
            self.api_key = os.environ[str(key_env)]  # every client of this engine sends it
            headers["Authorization"] = f"Bearer {self.api_key}"
        self._client = httpx.Client(base_url=self.base_url, headers=headers,
                                    timeout=self.settings.get("request_timeout", 600))
        try:
            self._client.get("/v1/models", timeout=10).raise_for_status()
        except httpx.HTTPError as err:
            raise EngineError(f"endpoint {mask_text(self.url)} does not answer /v1/models: "
                              f"{mask_text(repr(err))} — "
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
        from pipeline.secrets import mask_text

        return EngineInfo(self.name, version, self.settings.get("kernel", "unknown (remote)"),
                          details={"url": mask_text(self.url or "")})
