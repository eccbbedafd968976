"""What an OpenAI-compatible server accepts, learnt from its refusals and remembered per base
URL and model: the `response_format` (a JSON Schema, JSON mode, or none), the name of the
output limit (`max_completion_tokens`, `max_tokens`, or both for servers of unknown kind),
and whether it streams the answer (with its token counts at the end, or without them).

Each refusal moves one step down and never back, so a refused choice is never sent again:
`json_schema` -> `json_object` (the schema then goes into the prompt) -> no format at all;
`stream` with `stream_options: include_usage` -> `stream` alone -> no streaming.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

ResponseFormat = Literal["json_schema", "json_object", "text"]
TokenLimit = Literal["max_completion_tokens", "max_tokens"]
# `usage`: stream, and ask for the token counts in a last chunk; `plain`: stream without
# `stream_options`; `off`: one JSON body (the Batch API's requests never stream).
Streaming = Literal["usage", "plain", "off"]
_FORMAT_STEPS: dict[str, ResponseFormat] = {"json_schema": "json_object", "json_object": "text"}
_STREAM_STEPS: dict[str, Streaming] = {"stream_options": "plain", "stream": "off"}
# A server's words for "I do not take that response_format": OpenAI's and vLLM's 400s, and
# llama-cpp-python's 500 "Input should be 'text' or 'json_object'".
_FORMAT_WORDS = re.compile(r"response_format|json_schema|json_object|structured output", re.I)
_LIMIT_WORDS = re.compile(r"\b(max_completion_tokens|max_tokens)\b")
# ... and for "I do not stream" or "I do not take stream_options" (`stream_options` first:
# it names `stream` too).
_STREAM_WORDS = re.compile(r"\b(stream_options|stream(?:ing)?)\b", re.I)
OPENAI_HOSTS = ("api.openai.com",)


class ServerProfile(BaseModel):
    """The request shape a server takes; `settled` once an answer came back with it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    response_format: ResponseFormat = "json_schema"
    token_limits: tuple[TokenLimit, ...] = ("max_completion_tokens", "max_tokens")
    stream: Streaming = "usage"
    settled: bool = False

    @classmethod
    def remembered(cls, text: str) -> ServerProfile:
        """A profile as the store kept it (JSON); ValueError when it is not one. A profile
        remembered before vmine streamed says nothing of streaming, so it is not settled:
        the next first request goes alone and learns it."""
        profile = cls.model_validate_json(text)
        if '"stream"' not in text:
            profile = profile.model_copy(update={"settled": False})
        return profile

    @classmethod
    def first_guess(cls, base_url: str | None) -> ServerProfile:
        """OpenAI refuses `max_tokens` for its newer models; other servers may know only it,
        and ignore a key they do not know, so they get both."""
        if base_url is None or any(host in base_url for host in OPENAI_HOSTS):
            return cls(token_limits=("max_completion_tokens",))
        return cls()

    def after_refusal(self, status: int, detail: str, forced: bool) -> ServerProfile | None:
        """The profile to send next when the server refused this one with `status` and
        `detail`, or None when the refusal is about something else (or `forced` pins the
        format). See `refused_part` for what counts."""
        part = refused_part(status, detail)
        if part == "response_format" and not forced and self.response_format in _FORMAT_STEPS:
            return self.model_copy(update={"response_format": _FORMAT_STEPS[self.response_format]})
        if part in _STREAM_STEPS and self.stream != "off":
            # a server refusing `stream_options` while not sent them refuses streaming
            step = _STREAM_STEPS[part] if self.stream == "usage" else "off"
            return self.model_copy(update={"stream": step})
        if part in ("max_completion_tokens", "max_tokens") and len(self.token_limits) > 1:
            kept = tuple(limit for limit in self.token_limits if limit != part)
            return self.model_copy(update={"token_limits": kept})
        if part == "max_completion_tokens" and self.token_limits == ("max_completion_tokens",):
            return self.model_copy(update={"token_limits": ("max_tokens",)})
        return None

    def limits(self, tokens: int) -> dict[str, int]:
        return {name: tokens for name in self.token_limits}

    def streaming(self) -> dict[str, Any]:
        """What a request adds to its body to have its answer streamed (nothing when off)."""
        if self.stream == "off":
            return {}
        if self.stream == "plain":
            return {"stream": True}
        return {"stream": True, "stream_options": {"include_usage": True}}


def refused_part(status: int, detail: str) -> str | None:
    """Which part of a request a refusal names: `response_format` (a 400/422 naming it, or a
    5xx whose body says the format is not accepted), `stream_options` or `stream` (the
    same), `max_completion_tokens`/`max_tokens` (a 400/422 naming one: the first named is
    the refused one, as in "'max_tokens' is not supported, use 'max_completion_tokens'"),
    else None."""
    if status in (400, 422) or status >= 500:
        if _FORMAT_WORDS.search(detail):
            return "response_format"
        streaming = _STREAM_WORDS.search(detail)
        if streaming is not None:
            return "stream_options" if streaming.group(1).lower() == "stream_options" else "stream"
    if status in (400, 422):
        named = _LIMIT_WORDS.search(detail)
        if named is not None:
            return named.group(1)
    return None
