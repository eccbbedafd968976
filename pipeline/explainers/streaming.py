"""A chat completion streamed, so that a slow model that is still sending tokens is told apart
from a stuck one: the answer is read chunk by chunk (the SDK's streaming API and its
`ChatCompletionStreamState`), and `idle` seconds without a chunk end it (`Silent`), while the
caller's total time limit still holds. A server that ignores `stream` and sends one JSON body
is read as it is (`Streamed.streamed` is False)."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

import openai

from pipeline.explainers.text import valid_text
from pipeline.explainers.transport import (
    Completion,
    NotACompletion,
    read_completion,
    token_count,
)


class Silent(Exception):
    """No chunk came for `seconds` seconds (before the first token, or between two)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"no token for {seconds:g} s")
        self.seconds = seconds


@dataclass(frozen=True)
class Streamed:
    """A completion, whether it came as a stream, and whether the server counted its tokens."""

    completion: Completion
    streamed: bool
    counted: bool


async def streamed_completion(
    client: openai.AsyncOpenAI, body: dict[str, Any], idle: float
) -> Streamed:
    """POST `body` (with `stream: true`) and read the answer as it comes. Raises Silent, the
    SDK's errors, or NotACompletion for a stream that is not one of chat-completion chunks."""
    loop = asyncio.get_running_loop()
    silence = asyncio.timeout(idle)
    try:
        async with silence:
            stream = await client.chat.completions.create(**body)
            async with stream:
                kind = stream.response.headers.get("content-type", "")
                if not kind.startswith("text/event-stream"):
                    silence.reschedule(None)  # one body: only the total time limit holds
                    completion = read_completion(await stream.response.aread())
                    return Streamed(completion, False, _counted(completion))
                return await _read_chunks(stream, lambda: silence.reschedule(loop.time() + idle))
    except TimeoutError:
        if silence.expired():
            raise Silent(idle) from None
        raise


async def _read_chunks(stream: openai.AsyncStream, heard: Any) -> Streamed:
    from openai.lib.streaming.chat import ChatCompletionStreamState

    state: ChatCompletionStreamState = ChatCompletionStreamState()
    usage = None
    chunks = 0
    try:
        async for chunk in stream:
            heard()
            if getattr(chunk, "object", "chat.completion.chunk") != "chat.completion.chunk":
                continue  # not a chunk of this answer (an Azure content-filter event)
            state.handle_chunk(chunk)
            chunks += 1
            usage = getattr(chunk, "usage", None) or usage
        if not chunks:
            raise NotACompletion("a stream without a single chat-completion chunk")
        snapshot = state.current_completion_snapshot
        choice = snapshot.choices[0] if snapshot.choices else None
        content = choice.message.content if choice is not None else None
        finish = choice.finish_reason if choice is not None else None
    except json.JSONDecodeError as exc:
        raise NotACompletion(f"a stream event that is not JSON ({exc.msg})") from None
    except (AttributeError, IndexError, KeyError, TypeError, ValueError) as exc:
        raise NotACompletion(
            f"a stream that is not one of chat-completion chunks ({type(exc).__name__})"
        ) from None
    if not isinstance(content, str | None):
        raise NotACompletion("a stream whose content is not text")
    completion = Completion(
        content=valid_text(content or ""),
        prompt_tokens=token_count(getattr(usage, "prompt_tokens", 0)),
        completion_tokens=token_count(getattr(usage, "completion_tokens", 0)),
        finish_reason=finish if isinstance(finish, str) else None,
    )
    return Streamed(completion, True, _counted(completion))


def _counted(completion: Completion) -> bool:
    return bool(completion.prompt_tokens or completion.completion_tokens)
