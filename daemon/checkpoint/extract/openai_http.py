"""The HTTP side of the `openai` extractor (openai_compatible.py): one request to an OpenAI-compatible
server, and the quick `GET {base}/models` that says whether one answers and what it serves.

Standard library only (urllib), and no extractor module: the registry's readiness check and the
automatic choice (choose.py) probe a configured server with this before anything heavier is imported
(the answer schema pulls in the Anthropic SDK, over a second to import on a cold start). The SDK's own
client (httpx2) is not used either: 0.2 s to import, for one POST per chunk.
"""

from __future__ import annotations

import ipaddress
import json
import os
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from checkpoint.config import OPENAI_DEFAULT_BASE_URL, Settings
from checkpoint.redact.outside import hide_secrets

KEY_VARIABLE = "OPENAI_API_KEY"


def base_url(settings: Settings) -> str:
    return (settings.openai_base_url or OPENAI_DEFAULT_BASE_URL).rstrip("/")


def is_local(url: str) -> bool:
    """A server on this machine or the local network: a self-hosted model, which costs nothing per token."""
    host = (urlsplit(url).hostname or "").lower()
    if host in ("localhost", "host.docker.internal") or host.endswith((".local", ".localhost")):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local


@dataclass(frozen=True)
class Reply:
    status: int  # 0: no HTTP answer (connection refused, dropped, timed out)
    body: Any  # the parsed JSON, or None
    text: str  # the raw body (or what went wrong), for a cause
    retry_after: float | None = None


def request(url: str, payload: dict[str, Any] | None, timeout: float) -> Reply:
    """One HTTP request (POST with a JSON payload, else GET), never raising for a failure. Proxies of
    the environment apply except to a local server. The key (OPENAI_API_KEY) goes in the header only."""
    headers = {"Accept": "application/json"}
    key = os.environ.get(KEY_VARIABLE)
    if key:
        headers["Authorization"] = f"Bearer {key}"
    data = None
    if payload is not None:
        data = json.dumps(payload, ensure_ascii=False).encode()
        headers["Content-Type"] = "application/json"
    req = urllib.request.Request(url, data=data, headers=headers, method="POST" if data is not None else "GET")
    handlers = [urllib.request.ProxyHandler({})] if is_local(url) else []
    try:
        with urllib.request.build_opener(*handlers).open(req, timeout=timeout) as response:
            raw = response.read()
            status = int(response.status)
            retry_after = None
    except urllib.error.HTTPError as exc:
        raw = exc.read() if exc.fp is not None else b""
        status = int(exc.code)
        retry_after = _seconds(exc.headers.get("retry-after") if exc.headers else None)
    except TimeoutError:
        return Reply(0, None, f"timed out after {timeout:g} s")
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        return Reply(0, None, f"connection failed ({_said(str(reason), key)})")
    text = raw.decode("utf-8", errors="replace")
    try:
        body = json.loads(text) if text.strip() else None
    except ValueError:
        body = None
    return Reply(status, body, _said(text, key), retry_after)


def _said(text: str, key: str | None) -> str:
    """Text from or about the server, as a cause may show it: never the key, never a secret."""
    if key:
        text = text.replace(key, "<OPENAI_API_KEY>")
    return hide_secrets(" ".join(text.split()))


def _seconds(raw: str | None) -> float | None:
    try:
        value = float(raw) if raw else None
    except ValueError:
        return None  # an HTTP date: our own backoff will do
    return value if value is not None and value > 0 else None


def listed_models(url: str, timeout: float) -> tuple[list[str] | None, str]:
    """The ids `GET {url}/models` lists (None when the server does not answer with a list), and what
    went wrong when it did not."""
    reply = request(f"{url}/models", None, timeout)
    data = reply.body.get("data") if isinstance(reply.body, dict) else None
    if reply.status == 200 and isinstance(data, list):
        return [str(m["id"]) for m in data if isinstance(m, dict) and m.get("id")], ""
    if reply.status == 0:
        return None, reply.text
    return None, f"GET /models answered {reply.status}: {reply.text[:160]}"


def server_unavailable(settings: Settings, timeout: float = 1.0) -> tuple[str | None, str]:
    """(why the server cannot be used, as a clause, or None; what it runs as when it can): a quick
    `GET {base}/models`. Used by the registry's readiness check, before a run."""
    url = base_url(settings)
    models, why = listed_models(url, timeout)
    if models is None:
        where = "openai_base_url" if settings.openai_base_url else f"openai_base_url is unset, so Ollama's {url}"
        return (f"the OpenAI-compatible server at {hide_secrets(url)} does not answer ({why}; {where}): start it, "
                "or set openai_base_url"), ""
    if settings.openai_model is None and not models:
        return f"the server at {hide_secrets(url)} lists no model: set openai_model", ""
    if settings.openai_model is None:
        return None, f": model {models[0]} (the first it lists)"
    return None, ""
