"""The OpenAI Batch API through the official client, and the JSONL files it (and vLLM's
offline runner, `python -m vllm.entrypoints.openai.run_batch -i requests.jsonl -o
results.jsonl`) reads and writes: one chat-completions request per line in, one result per
line out, matched by `custom_id`."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import openai

from pipeline.explainers.base import BatchError
from pipeline.explainers.transport import (
    MAX_RESPONSE_BYTES,
    Completion,
    NotACompletion,
    capped_http_client,
    read_completion,
)

ENDPOINT = "/v1/chat/completions"
FINISHED = frozenset({"completed", "failed", "expired", "cancelled"})
COMPLETION_WINDOW = "24h"


def request_line(custom_id: str, body: dict[str, Any]) -> str:
    """One line of a batch input file."""
    line = {"custom_id": custom_id, "method": "POST", "url": ENDPOINT, "body": body}
    return json.dumps(line, ensure_ascii=False) + "\n"


def read_results(text: str) -> dict[str, Completion | str]:
    """By custom_id, the completion of each line of an output or error file, or why there is
    none (a non-200 status, an error, a body that is not a chat completion)."""
    results: dict[str, Completion | str] = {}
    for line in text.split("\n"):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except (json.JSONDecodeError, RecursionError):
            continue  # a torn line says nothing about which request it was
        if not isinstance(item, dict) or not isinstance(item.get("custom_id"), str):
            continue
        results[item["custom_id"]] = _result_of(item)
    return results


def _result_of(item: dict[str, Any]) -> Completion | str:
    error = item.get("error")
    response = item.get("response")
    if isinstance(error, dict) and error:
        return f"{error.get('code') or 'error'}: {error.get('message') or 'no message'}"
    if not isinstance(response, dict):
        return "no response in the results"
    status, body = response.get("status_code"), response.get("body")
    if status != 200:
        detail = body.get("error", {}).get("message") if isinstance(body, dict) else body
        return f"HTTP {status}: {str(detail)[:300]}"
    try:
        return read_completion(body if isinstance(body, dict) else str(body))
    except NotACompletion as exc:
        return f"HTTP 200 with {exc}"


@dataclass(frozen=True)
class BatchState:
    """What the server says of a batch."""

    id: str
    status: str
    done: int
    total: int
    output_file_id: str | None
    error_file_id: str | None
    errors: str

    @property
    def finished(self) -> bool:
        return self.status in FINISHED


class BatchAPI:
    """Submit, follow and fetch batches on one server; `client` is the explainer's
    (the same base URL, key and request timeout), made per event loop."""

    def __init__(self, base_url: str | None, api_key: str, timeout: float) -> None:
        self.base_url = base_url
        self.api_key = api_key
        self.timeout = timeout

    def _client(self, max_bytes: int = MAX_RESPONSE_BYTES) -> openai.AsyncOpenAI:
        return openai.AsyncOpenAI(
            api_key=self.api_key,
            base_url=self.base_url,
            timeout=self.timeout,
            max_retries=2,
            http_client=capped_http_client(self.timeout, max_bytes),
        )

    async def submit(self, lines: Iterable[str]) -> str:
        """Upload the requests and start a batch of them; its id."""
        data = "".join(lines).encode("utf-8")
        async with self._client() as client:
            try:
                uploaded = await client.files.create(file=("requests.jsonl", data), purpose="batch")
                batch = await client.batches.create(
                    input_file_id=uploaded.id,
                    endpoint=ENDPOINT,
                    completion_window=COMPLETION_WINDOW,
                )
            except openai.OpenAIError as exc:
                raise BatchError(f"cannot submit a batch: {_why(exc)}") from None
        return batch.id

    async def follow(
        self,
        batch_id: str,
        poll_seconds: float,
        on_progress: Callable[[BatchState], None],
        stopped: Callable[[], bool],
    ) -> BatchState | None:
        """Poll until the batch is finished (its state) or `stopped()` says to stop (None);
        a poll that fails is tried again at the next one."""
        async with self._client() as client:
            while True:
                try:
                    batch = await client.batches.retrieve(batch_id)
                except openai.NotFoundError:
                    raise BatchError(f"the server knows no batch {batch_id}") from None
                except openai.OpenAIError:
                    batch = None  # a transient failure: ask again at the next poll
                if batch is not None:
                    state = _state(batch)
                    on_progress(state)
                    if state.finished:
                        return state
                waited = 0.0
                while waited < poll_seconds:
                    if stopped():
                        return None
                    step = min(0.1, poll_seconds - waited)
                    await asyncio.sleep(step)
                    waited += step

    async def results(self, state: BatchState) -> dict[str, Completion | str]:
        """The results of a finished batch, from its output and error files."""
        found: dict[str, Completion | str] = {}
        # A bound in proportion to what was asked: each answer within an answer's bound.
        max_bytes = MAX_RESPONSE_BYTES + state.total * 64 * 1024
        async with self._client(max_bytes) as client:
            for file_id in (state.error_file_id, state.output_file_id):
                if not file_id:
                    continue
                try:
                    content = await client.files.content(file_id)
                except openai.OpenAIError as exc:
                    raise BatchError(
                        f"cannot fetch the results of {state.id}: {_why(exc)}"
                    ) from None
                found.update(read_results(content.text))
        return found


def _state(batch: Any) -> BatchState:
    counts = batch.request_counts
    done = (counts.completed + counts.failed) if counts is not None else 0
    total = counts.total if counts is not None else 0
    errors = ""
    if batch.errors is not None and batch.errors.data:
        errors = "; ".join(e.message or e.code or "" for e in batch.errors.data)
    return BatchState(
        batch.id, batch.status, done, total, batch.output_file_id, batch.error_file_id, errors
    )


def _why(exc: openai.OpenAIError) -> str:
    if isinstance(exc, openai.APIStatusError):
        return f"HTTP {exc.status_code}: {exc.message}"
    return " ".join(str(exc).split())[:300] or type(exc).__name__
