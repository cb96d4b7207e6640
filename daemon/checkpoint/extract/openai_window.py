"""The context window of an OpenAI-compatible server, as the server says it: which window the `openai`
extractor measures each request against, and why.

`openai_context_tokens`, when set, wins: the user knows their server. Unset, the server is asked, in
the conventions of the servers people run (each a GET or POST that any other server answers 404):

    vLLM       GET  {base}/models          data[].max_model_len             the engine's window
    llama.cpp  GET  {root}/props           default_generation_settings.n_ctx  a slot's window
    Ollama     GET  {root}/api/ps          models[].context_length          the loaded model's window
               POST {root}/api/show        parameters "num_ctx N"           the Modelfile's window
                                           model_info "<arch>.context_length" what the model was trained for
    LM Studio  GET  {root}/api/v0/models   data[].loaded_context_length     the loaded model's window
                                           data[].max_context_length        what the model allows
    OpenRouter GET  {base}/models          data[].context_length            the hosted model's window

(`root` is the base URL without its trailing /v1.) What a model allows is not what a server runs it
with: Ollama runs an unloaded model at its own default (4,096 tokens unless OLLAMA_CONTEXT_LENGTH
says more) and drops what does not fit without an error, LM Studio loads one at the length its app
is set to. So a model's maximum alone counts only up to the safe default, and says so. A server that
says nothing gets the safe default (OPENAI_CONTEXT_TOKENS), and that is said too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from checkpoint.config import OPENAI_CONTEXT_TOKENS, Settings
from checkpoint.extract.openai_http import base_url, request

PROBE_TIMEOUT = 3.0  # seconds per probe: a server that answers does so at once; these run before a run
_NUM_CTX = re.compile(r"^\s*num_ctx\s+(\d+)\s*$", re.MULTILINE)


@dataclass(frozen=True)
class ServerWindow:
    tokens: int
    why: str  # said after "<n>-token window": "from openai_context_tokens", "from llama.cpp's /props n_ctx", ...


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _root(base: str) -> str:
    return base[:-3] if base.endswith("/v1") else base


def _entry(data: Any, model: str | None) -> dict[str, Any] | None:
    """The listing's entry for `model` (by id), else its first entry."""
    if not isinstance(data, list):
        return None
    entries = [d for d in data if isinstance(d, dict)]
    for entry in entries:
        if model is not None and entry.get("id") == model:
            return entry
    return entries[0] if entries and model is None else None


def _capped(maximum: int, what: str) -> ServerWindow:
    """A model's maximum, as far as a server that runs it at its default surely takes it."""
    if maximum <= OPENAI_CONTEXT_TOKENS:
        return ServerWindow(maximum, f"from {what}")
    return ServerWindow(OPENAI_CONTEXT_TOKENS, f"assumed: {what} says the model allows {maximum:,}, but the server "
                                               "runs it at its own default unless told more (set "
                                               "openai_context_tokens to the real window)")


def _vllm_or_hosted(base: str, model: str | None, timeout: float) -> ServerWindow | None:
    reply = request(f"{base}/models", None, timeout)
    entry = _entry(reply.body.get("data") if isinstance(reply.body, dict) else None, model)
    if reply.status != 200 or entry is None:
        return None
    if tokens := _count(entry.get("max_model_len")):
        return ServerWindow(tokens, "from vLLM's /v1/models max_model_len")
    if tokens := _count(entry.get("context_length")):
        return ServerWindow(tokens, "from the server's /models context_length")
    return None


def _llama_cpp(root: str, timeout: float) -> ServerWindow | None:
    reply = request(f"{root}/props", None, timeout)
    settings = reply.body.get("default_generation_settings") if isinstance(reply.body, dict) else None
    tokens = _count(settings.get("n_ctx")) if isinstance(settings, dict) else None
    if reply.status == 200 and tokens:
        return ServerWindow(tokens, "from llama.cpp's /props n_ctx")
    return None


def _ollama(root: str, model: str | None, timeout: float) -> ServerWindow | None:
    if model is None:
        return None
    short = model.removesuffix(":latest")
    running = request(f"{root}/api/ps", None, timeout)
    models = running.body.get("models") if isinstance(running.body, dict) else None
    for loaded in models if running.status == 200 and isinstance(models, list) else []:
        if isinstance(loaded, dict) and str(loaded.get("name") or loaded.get("model") or "").removesuffix(
                ":latest") == short and (tokens := _count(loaded.get("context_length"))):
            return ServerWindow(tokens, "from Ollama's /api/ps context_length of the loaded model")
    shown = request(f"{root}/api/show", {"model": model}, timeout)
    if shown.status != 200 or not isinstance(shown.body, dict):
        return None
    parameters = shown.body.get("parameters")
    if isinstance(parameters, str) and (match := _NUM_CTX.search(parameters)) and int(match.group(1)) > 0:
        return ServerWindow(int(match.group(1)), "from Ollama's /api/show num_ctx")
    info = shown.body.get("model_info")
    if isinstance(info, dict):
        for key, value in info.items():
            if str(key).endswith(".context_length") and (tokens := _count(value)):
                return _capped(tokens, "Ollama's /api/show model_info context_length")
    return None


def _lm_studio(root: str, model: str | None, timeout: float) -> ServerWindow | None:
    reply = request(f"{root}/api/v0/models", None, timeout)
    entry = _entry(reply.body.get("data") if isinstance(reply.body, dict) else None, model)
    if reply.status != 200 or entry is None:
        return None
    if tokens := _count(entry.get("loaded_context_length")):
        return ServerWindow(tokens, "from LM Studio's /api/v0/models loaded_context_length")
    if tokens := _count(entry.get("max_context_length")):
        return _capped(tokens, "LM Studio's /api/v0/models max_context_length")
    return None


def server_window(settings: Settings, model: str | None, timeout: float = PROBE_TIMEOUT) -> ServerWindow:
    """The window to measure requests against: the setting, else what the server says, else the safe default."""
    if settings.openai_context_tokens is not None:
        return ServerWindow(settings.openai_context_tokens, "from openai_context_tokens")
    base = base_url(settings)
    root = _root(base)
    timeout = min(timeout, settings.request_timeout)
    found = (_vllm_or_hosted(base, model, timeout) or _llama_cpp(root, timeout) or _ollama(root, model, timeout)
             or _lm_studio(root, model, timeout))
    if found is not None:
        return found
    return ServerWindow(OPENAI_CONTEXT_TOKENS, "assumed: the server does not say its window (set "
                                               "openai_context_tokens to the real one)")
