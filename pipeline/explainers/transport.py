"""The HTTP edge of the openai explainer: a transport that refuses response bodies past a
size (a hostile or broken server can send gigabytes), and the reading of a chat completion
out of a body that may not be one (an HTML error page with status 200)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass

import httpx2
import openai

# An answer is a few KB; a generous bound that still keeps a request in flight small.
MAX_RESPONSE_BYTES = 2 * 1024 * 1024


class ResponseTooLarge(openai.OpenAIError):
    """A response body past the size bound. An OpenAIError, so the client passes it through
    as it is instead of taking it for a connection error."""


class NotACompletion(Exception):
    """A 200 whose body is not a chat completion (not JSON, or JSON of another shape)."""


class CappedTransport(httpx2.AsyncBaseTransport):
    """Wraps a transport; a body declared or found to be larger than `max_bytes` raises
    ResponseTooLarge as soon as that is known, and the connection is dropped."""

    def __init__(self, inner: httpx2.AsyncBaseTransport, max_bytes: int) -> None:
        self._inner = inner
        self.max_bytes = max_bytes

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self._inner.handle_async_request(request)
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_bytes:
            await response.aclose()
            raise ResponseTooLarge(_too_large(self.max_bytes, f"declares {int(declared)} bytes"))
        return httpx2.Response(
            status_code=response.status_code,
            headers=response.headers,
            stream=_CappedStream(response.stream, self.max_bytes),
            extensions=response.extensions,
            request=request,
        )

    async def aclose(self) -> None:
        await self._inner.aclose()


class _CappedStream(httpx2.AsyncByteStream):
    def __init__(self, inner: httpx2.AsyncByteStream, max_bytes: int) -> None:
        self._inner = inner
        self._max = max_bytes

    async def __aiter__(self) -> AsyncIterator[bytes]:
        seen = 0
        async for chunk in self._inner:
            seen += len(chunk)
            if seen > self._max:
                raise ResponseTooLarge(_too_large(self._max, "goes on past that"))
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


def _too_large(limit: int, how: str) -> str:
    return f"the response is larger than {limit // 1024} KiB (it {how}); dropped"


def capped_http_client(timeout: float, max_bytes: int = MAX_RESPONSE_BYTES) -> httpx2.AsyncClient:
    """The HTTP client the openai client runs on: the SDK's defaults, bodies bounded, and no
    compression (so the bound is on what is decoded, not on a zip bomb's few bytes)."""
    transport = CappedTransport(httpx2.AsyncHTTPTransport(), max_bytes)
    return openai.DefaultAsyncHttpxClient(
        transport=transport, timeout=timeout, headers={"Accept-Encoding": "identity"}
    )


@dataclass(frozen=True)
class Completion:
    """What vmine reads from a chat completion."""

    content: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str | None = None


def read_completion(body: bytes | str | dict) -> Completion:
    """The answer in a chat-completion body (bytes as received, or a batch result's parsed
    `body`); NotACompletion with a one-line reason when it is not one."""
    if isinstance(body, dict):
        data: object = body
    else:
        try:
            data = json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
            raise NotACompletion(f"a body that is not JSON: {_preview(body)}") from None
    choices = data.get("choices") if isinstance(data, dict) else None
    choice = choices[0] if isinstance(choices, list) and choices else None
    message = choice.get("message") if isinstance(choice, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, str | None) or (choices != [] and not isinstance(message, dict)):
        raise NotACompletion(f"JSON that is not a chat completion: {_preview(body)}")
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    return Completion(
        content=content or "",
        prompt_tokens=_count(usage.get("prompt_tokens")),
        completion_tokens=_count(usage.get("completion_tokens")),
        finish_reason=choice.get("finish_reason") if isinstance(choice, dict) else None,
    )


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _preview(body: bytes | str | dict, limit: int = 80) -> str:
    if isinstance(body, bytes):
        body = body[: limit * 4].decode("utf-8", "replace")
    text = " ".join(str(body).split())
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")
