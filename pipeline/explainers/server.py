"""What an OpenAI-compatible server accepts, learnt from its refusals and remembered per base
URL and model: the `response_format` (a JSON Schema, JSON mode, or none) and the name of the
output limit (`max_completion_tokens`, `max_tokens`, or both for servers of unknown kind).

Each refusal moves one step down and never back, so a refused choice is never sent again:
`json_schema` -> `json_object` (the schema then goes into the prompt) -> no format at all.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict

ResponseFormat = Literal["json_schema", "json_object", "text"]
TokenLimit = Literal["max_completion_tokens", "max_tokens"]
_FORMAT_STEPS: dict[str, ResponseFormat] = {"json_schema": "json_object", "json_object": "text"}
# A server's words for "I do not take that response_format": OpenAI's and vLLM's 400s, and
# llama-cpp-python's 500 "Input should be 'text' or 'json_object'".
_FORMAT_WORDS = re.compile(r"response_format|json_schema|json_object|structured output", re.I)
_LIMIT_WORDS = re.compile(r"\b(max_completion_tokens|max_tokens)\b")
OPENAI_HOSTS = ("api.openai.com",)


class ServerProfile(BaseModel):
    """The request shape a server takes; `settled` once an answer came back with it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    response_format: ResponseFormat = "json_schema"
    token_limits: tuple[TokenLimit, ...] = ("max_completion_tokens", "max_tokens")
    settled: bool = False

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
        if part in ("max_completion_tokens", "max_tokens") and len(self.token_limits) > 1:
            kept = tuple(limit for limit in self.token_limits if limit != part)
            return self.model_copy(update={"token_limits": kept})
        if part == "max_completion_tokens" and self.token_limits == ("max_completion_tokens",):
            return self.model_copy(update={"token_limits": ("max_tokens",)})
        return None

    def limits(self, tokens: int) -> dict[str, int]:
        return {name: tokens for name in self.token_limits}


def refused_part(status: int, detail: str) -> str | None:
    """Which part of a request a refusal names: `response_format` (a 400/422 naming it, or a
    5xx whose body says the format is not accepted), `max_completion_tokens`/`max_tokens`
    (a 400/422 naming one: the first named is the refused one, as in "'max_tokens' is not
    supported, use 'max_completion_tokens'"), else None."""
    if status in (400, 422) or status >= 500:
        if _FORMAT_WORDS.search(detail):
            return "response_format"
    if status in (400, 422):
        named = _LIMIT_WORDS.search(detail)
        if named is not None:
            return named.group(1)
    return None
