"""The HTTP edge of the openai explainer: a transport that refuses response bodies past a
size, counted in decoded bytes (a hostile or broken server can send gigabytes, or a few
hundred compressed bytes that inflate to them), the reading of a chat completion out of a
body that may not be one (an HTML error page with status 200), and what tells a server
that cannot be reached at all from one that failed a request."""

from __future__ import annotations

import json
import socket
import zlib
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass

import httpx2
import openai

from pipeline.explainers.text import valid_text

# An answer is a few KB; a generous bound that still keeps a request in flight small.
MAX_RESPONSE_BYTES = 2 * 1024 * 1024
# The most one step of decompression may produce: a bomb never inflates in memory.
_INFLATE_STEP = 64 * 1024
# zlib's window bits for each content coding vmine reads (32 + 15: a gzip or zlib header).
_CODINGS = {"gzip": 32 + zlib.MAX_WBITS, "x-gzip": 32 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}


class BadResponse(openai.OpenAIError):
    """A response body vmine refuses to read. An OpenAIError, so the client passes it through
    as it is instead of taking it for a connection error."""


class ResponseTooLarge(BadResponse):
    """A response body past the size bound, in decoded bytes."""


class UnknownEncoding(BadResponse):
    """A body compressed in a way vmine does not read (it asks for none)."""


class UndecodableBody(BadResponse):
    """A body that does not decode as its Content-Encoding says."""


class NotACompletion(Exception):
    """A 200 whose body is not a chat completion (not JSON, or JSON of another shape)."""


class CappedTransport(httpx2.AsyncBaseTransport):
    """Wraps a transport; a body declared or found to be larger than `max_bytes` raises
    ResponseTooLarge as soon as that is known, and the connection is dropped. A compressed
    body (vmine asks for none, but a proxy may compress anyway) is decoded here, a step at a
    time, and the bound counts what it decodes to."""

    def __init__(self, inner: httpx2.AsyncBaseTransport, max_bytes: int) -> None:
        self._inner = inner
        self.max_bytes = max_bytes

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self._inner.handle_async_request(request)
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_bytes:
            await response.aclose()
            raise ResponseTooLarge(_too_large(self.max_bytes, f"declares {int(declared)} bytes"))
        codings = content_codings(response.headers.get_list("content-encoding"))
        unknown = [coding for coding in codings if coding not in _CODINGS]
        if unknown:
            await response.aclose()
            raise UnknownEncoding(
                f"the response is compressed as {', '.join(unknown)[:40]}, which vmine does "
                "not read (it asks for no compression); dropped"
            )
        headers = response.headers
        if codings:  # decoded here: httpx must not decode it again
            headers = httpx2.Headers(
                [
                    (name, value)
                    for name, value in response.headers.multi_items()
                    if name.lower() not in ("content-encoding", "content-length")
                ]
            )
        return httpx2.Response(
            status_code=response.status_code,
            headers=headers,
            stream=_CappedStream(response.stream, self.max_bytes, codings),
            extensions=response.extensions,
            request=request,
        )

    async def aclose(self) -> None:
        await self._inner.aclose()


def content_codings(values: list[str]) -> list[str]:
    """The codings a body went through, in the order they were applied (`identity` is none)."""
    return [
        coding
        for value in values
        for coding in (part.strip().lower() for part in value.split(","))
        if coding and coding != "identity"
    ]


class _CappedStream(httpx2.AsyncByteStream):
    """The body decoded (last coding first) and counted: past `max_bytes` decoded bytes it
    raises ResponseTooLarge, having decoded at most one step more."""

    def __init__(
        self, inner: httpx2.AsyncByteStream, max_bytes: int, codings: Sequence[str] = ()
    ) -> None:
        self._inner = inner
        self._max = max_bytes
        self._layers = [_Inflater(coding) for coding in reversed(list(codings))]

    async def __aiter__(self) -> AsyncIterator[bytes]:
        seen = 0
        async for chunk in self._inner:
            for piece in _through(self._layers, chunk):
                seen += len(piece)
                if seen > self._max:
                    raise ResponseTooLarge(_too_large(self._max, "goes on past that"))
                yield piece

    async def aclose(self) -> None:
        await self._inner.aclose()


class _Inflater:
    """One content coding undone, at most `_INFLATE_STEP` bytes out of each call."""

    def __init__(self, coding: str) -> None:
        self._wbits = _CODINGS[coding]
        self._zlib = zlib.decompressobj(self._wbits)
        self._started = False

    def inflate(self, data: bytes) -> Iterator[bytes]:
        while True:
            try:
                out = self._zlib.decompress(data, _INFLATE_STEP)
            except zlib.error:
                if self._started or self._wbits != zlib.MAX_WBITS:
                    raise UndecodableBody(
                        "the response does not decompress as its Content-Encoding says"
                    ) from None
                # `deflate` sent raw, without its zlib header (as some servers do)
                self._zlib, self._wbits = zlib.decompressobj(-zlib.MAX_WBITS), -zlib.MAX_WBITS
                continue
            self._started = True
            if out:
                yield out
            tail = self._zlib.unconsumed_tail
            # done: all taken and nothing pending, the end of the stream (bytes after it
            # are ignored), or no progress at all
            if self._zlib.eof or not out and (not tail or tail == data):
                return
            data = tail


def _through(layers: list[_Inflater], data: bytes) -> Iterator[bytes]:
    """`data` through every layer, one bounded piece at a time."""
    if not layers:
        if data:
            yield data
        return
    for piece in layers[0].inflate(data):
        yield from _through(layers[1:], piece)


def _too_large(limit: int, how: str) -> str:
    return f"the response is larger than {limit // 1024} KiB (it {how}); dropped"


def capped_http_client(timeout: float, max_bytes: int = MAX_RESPONSE_BYTES) -> httpx2.AsyncClient:
    """The HTTP client the openai client runs on: the SDK's defaults, bodies bounded (in
    decoded bytes), and no compression asked for."""
    transport = CappedTransport(httpx2.AsyncHTTPTransport(), max_bytes)
    return openai.DefaultAsyncHttpxClient(
        transport=transport, timeout=timeout, headers={"Accept-Encoding": "identity"}
    )


def unreachable(error: BaseException) -> str | None:
    """Why the server cannot be reached at all, when that is what `error` (a connection
    error) comes down to: the connection refused, or a host name that does not resolve.
    None for anything a retry may get past (a reset, a timeout)."""
    seen: set[int] = set()
    cause: BaseException | None = error
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, ConnectionRefusedError):
            return "connection refused"
        if isinstance(cause, socket.gaierror):
            return f"the host name does not resolve ({cause.strerror or cause})"
        cause = cause.__cause__ or cause.__context__
    return None


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
        content=valid_text(content or ""),
        prompt_tokens=token_count(usage.get("prompt_tokens")),
        completion_tokens=token_count(usage.get("completion_tokens")),
        finish_reason=choice.get("finish_reason") if isinstance(choice, dict) else None,
    )


def token_count(value: object) -> int:
    """A token count a server reported, or 0 for anything that is not one."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _preview(body: bytes | str | dict, limit: int = 80) -> str:
    if isinstance(body, bytes):
        body = body[: limit * 4].decode("utf-8", "replace")
    text = valid_text(" ".join(str(body).split()))
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")
