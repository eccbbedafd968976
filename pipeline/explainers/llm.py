"""The `openai` explainer: one site -> a prompt -> an OpenAI-compatible server -> an Explanation.

Retries (with backoff that honours `Retry-After`), the repair of an invalid or ungrounded
answer and the counting of every HTTP request are done here, not by the client, so that
`Usage` is exact and no request is ever sent twice except as the retry of a failed one.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import openai
from pydantic import ValidationError

from pipeline.dataset.models import Explanation, Site
from pipeline.explainers.base import ExplainRequest, ExplainResult, Usage
from pipeline.site.markdown import md_fence
from prompts import Prompt, load_prompt

RETRYABLE_STATUS = frozenset({429, 500, 502, 503, 504})
# Statuses whose `Retry-After` header says when to come back.
RETRY_AFTER_STATUS = frozenset({429, 503})
MAX_SOURCE_LINES = 120
MAX_SOURCE_CHARS = 8000
# A typical answer (reference explanations run to 2-3k characters).
OUTPUT_TOKENS_ESTIMATE = 800
_PROBLEM_CHARS = 1500


class _GaveUp(Exception):
    """A request that failed for good (retries exhausted or a status not worth retrying)."""


class LLMExplainer:
    """Explains sites with a chat model behind any OpenAI-compatible `base_url`."""

    provider = "openai"

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        concurrency: int = 8,
        timeout: float = 60.0,
        max_retries: int = 4,
        *,
        backoff: float = 1.0,
        max_backoff: float = 30.0,
        max_retry_after: float = 120.0,
        prompt: str = "explain_v2",
        command: str | None = None,
    ) -> None:
        self.model = model
        self.base_url = base_url
        # Local servers need no key, but the client insists on one.
        self.api_key = api_key or os.environ.get("OPENAI_API_KEY") or "unused"
        self.concurrency = max(1, concurrency)
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.max_retry_after = max_retry_after
        self.prompt: Prompt = load_prompt(prompt)
        # the entry point the example fixes start with; the answers depend on it, so the
        # prompt version (part of the cache key) names it
        self.command = command
        self.prompt_version = (
            f"{self.prompt.version}; command: {command}" if command else self.prompt.version
        )
        self._client: openai.AsyncOpenAI | None = None
        self._slots: asyncio.Semaphore | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    # -- prompt ------------------------------------------------------------------------

    def messages(self, request: ExplainRequest) -> list[dict[str, str]]:
        """The system and user messages for one site (the first request of a conversation)."""
        return [
            {"role": "system", "content": self.prompt.system},
            {"role": "user", "content": render_user_message(self.prompt, request,
                                                            self.command)},
        ]

    def estimate_tokens(self, request: ExplainRequest) -> tuple[int, int]:
        chars = sum(len(message["content"]) for message in self.messages(request))
        return chars // 4, OUTPUT_TOKENS_ESTIMATE

    # -- explain -----------------------------------------------------------------------

    async def explain(self, request: ExplainRequest) -> ExplainResult:
        usage = Usage()
        conversation = self.messages(request)
        try:
            answer = await self._complete(conversation, usage)
        except _GaveUp as exc:
            return ExplainResult(None, str(exc), usage)

        explanation, problem = parse_explanation(answer)
        if explanation is None:
            conversation = [*conversation, *_repair_turn(answer, _invalid_note(problem))]
            try:
                answer = await self._complete(conversation, usage)
            except _GaveUp as exc:
                return ExplainResult(None, f"invalid answer ({problem}); repair: {exc}", usage)
            explanation, problem = parse_explanation(answer)
            if explanation is None:
                return ExplainResult(None, f"invalid answer after a repair: {problem}", usage)

        violations = request.grounding.check(explanation, request.site.settings)
        if not violations:
            return ExplainResult(explanation, None, usage)
        conversation = [*conversation, *_repair_turn(answer, _ungrounded_note(violations))]
        try:
            answer = await self._complete(conversation, usage)
        except _GaveUp:
            # The first answer is valid: keep it, with what is wrong with it.
            return ExplainResult(explanation, None, usage, violations)
        repaired, _ = parse_explanation(answer)
        if repaired is None:
            return ExplainResult(explanation, None, usage, violations)
        return ExplainResult(repaired, None, usage,
                             request.grounding.check(repaired, request.site.settings))

    async def aclose(self) -> None:
        """Release the HTTP client (it belongs to the event loop that created it)."""
        client, self._client, self._loop = self._client, None, None
        if client is not None:
            await client.close()

    # -- HTTP --------------------------------------------------------------------------

    def _bind_loop(self) -> openai.AsyncOpenAI:
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            self._client = openai.AsyncOpenAI(
                api_key=self.api_key,
                base_url=self.base_url,
                timeout=self.timeout,
                max_retries=0,  # retries are ours, so that every request is counted
            )
            self._slots = asyncio.Semaphore(self.concurrency)
            self._loop = loop
        return self._client

    async def _complete(self, messages: list[dict[str, str]], usage: Usage) -> str:
        """The content of one chat completion, retrying transient failures."""
        client = self._bind_loop()
        assert self._slots is not None
        for attempt in range(self.max_retries + 1):
            async with self._slots:
                usage.requests += 1
                try:
                    response = await client.chat.completions.create(
                        model=self.model,
                        messages=messages,
                        response_format={"type": "json_object"},
                    )
                except openai.APITimeoutError:
                    failure, wait = f"timed out after {self.timeout:g} s", None
                except openai.APIConnectionError as exc:
                    failure, wait = f"connection error: {exc}", None
                except openai.APIStatusError as exc:
                    failure = f"HTTP {exc.status_code}: {_status_detail(exc)}"
                    if exc.status_code not in RETRYABLE_STATUS:
                        raise _GaveUp(failure) from None
                    wait = None
                    if exc.status_code in RETRY_AFTER_STATUS:
                        wait = retry_after_seconds(exc.response.headers.get("retry-after"))
                except openai.OpenAIError as exc:
                    raise _GaveUp(f"{type(exc).__name__}: {_short(str(exc))}") from None
                else:
                    if response.usage is not None:
                        usage.prompt_tokens += response.usage.prompt_tokens or 0
                        usage.completion_tokens += response.usage.completion_tokens or 0
                    if not response.choices:
                        return ""
                    return response.choices[0].message.content or ""
            if attempt == self.max_retries:
                break
            if wait is None:
                wait = self._backoff(attempt)
            await asyncio.sleep(min(wait, self.max_retry_after))
        raise _GaveUp(f"gave up after {self.max_retries + 1} requests: {failure}")

    def _backoff(self, attempt: int) -> float:
        """Exponential, with jitter so that parallel requests do not come back together."""
        delay = min(self.max_backoff, self.backoff * 2**attempt)
        return delay * random.uniform(0.5, 1.0)


# -- the user message ----------------------------------------------------------------------


def render_user_message(prompt: Prompt, request: ExplainRequest,
                        command: str | None = None) -> str:
    site = request.site
    facts: dict[str, object] = {
        "qualname": site.qualname,
        "validatorKind": site.validatorKind,
        "filePath": site.filePath,
        "errorClass": site.errorClass,
        "errorMessage": site.errorMessage,
        "messagePattern": site.messagePattern,
        "messageStatus": site.messageStatus,
        "guards": site.guards,
    }
    if site.settings:  # what the guards read: field, type, default, choices, doc, flags
        facts["settings"] = [setting.model_dump() for setting in site.settings]
    if command:
        facts["command"] = command
    source, note = bounded_source(site)
    siblings = [other.errorMessage for other in request.siblings]
    return prompt.render_user(
        facts_block=md_fence(json.dumps(facts, indent=2, ensure_ascii=False), "json"),
        qualname=site.qualname,
        file_path=site.filePath,
        source_note=note,
        source_block=md_fence(source, "python"),
        siblings_block=md_fence(json.dumps(siblings, indent=2, ensure_ascii=False), "json"),
    )


def bounded_source(site: Site) -> tuple[str, str]:
    """The function's source, cut to a window around the raise when it is long."""
    source = site.functionSource or site.sourceCode
    lines = source.split("\n")
    if len(lines) <= MAX_SOURCE_LINES and len(source) <= MAX_SOURCE_CHARS:
        return source, "the whole function"
    at = _raise_index(lines, site)
    start = max(0, min(at - MAX_SOURCE_LINES // 2, len(lines) - MAX_SOURCE_LINES))
    window = lines[start : start + MAX_SOURCE_LINES]
    # Then drop lines from the far end until the character budget holds.
    while len("\n".join(window)) > MAX_SOURCE_CHARS and len(window) > 1:
        if at - start > start + len(window) - 1 - at:
            window.pop(0)
            start += 1
        else:
            window.pop()
    return "\n".join(window), f"cut to {len(window)} of its {len(lines)} lines around the raise"


def _raise_index(lines: list[str], site: Site) -> int:
    """Where the raise is in the function's lines: the place whose neighbours best match
    the site's source window (the function's own first line number is not a site fact)."""
    window = site.sourceCode.split("\n")
    offset = site.lineNumber - site.sourceCodeStart
    if not 0 <= offset < len(window):
        return 0
    best, best_score = 0, -1
    target = window[offset].strip()
    for index, line in enumerate(lines):
        if line.strip() != target:
            continue
        score = sum(
            1
            for delta in range(-offset, len(window) - offset)
            if 0 <= index + delta < len(lines)
            and lines[index + delta].strip() == window[offset + delta].strip()
        )
        if score > best_score:
            best, best_score = index, score
    return best


# -- answers -------------------------------------------------------------------------------


def parse_explanation(answer: str) -> tuple[Explanation | None, str]:
    """The answer as an Explanation, or None and what is wrong with it (for the repair)."""
    text = _strip_fence(answer.strip())
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return None, f"not valid JSON: {exc}"
    try:
        return Explanation.model_validate(data), ""
    except ValidationError as exc:
        return None, _short(f"does not match the schema: {exc}")


def _strip_fence(text: str) -> str:
    # Some servers wrap JSON mode output in a Markdown fence anyway.
    if text.startswith("```") and text.endswith("```"):
        body = text.strip("`")
        return body.split("\n", 1)[1] if "\n" in body else body
    return text


def _repair_turn(answer: str, note: str) -> list[dict[str, str]]:
    return [{"role": "assistant", "content": answer}, {"role": "user", "content": note}]


def _invalid_note(problem: str) -> str:
    return (
        f"Your previous answer (quoted above) is invalid: {problem}\n"
        "Reply again with ONE JSON object with exactly the keys listed in the system "
        "message, and nothing else."
    )


def _ungrounded_note(violations: list[str]) -> str:
    listed = "\n".join(f"- {violation}" for violation in violations)
    return (
        "Your previous answer (quoted above) is not grounded in the repository:\n"
        f"{listed}\n"
        "Reply again with the whole JSON object, corrected: use only flags and names that "
        "appear in the code or the facts, and valid Python in code fields."
    )


def retry_after_seconds(value: str | None) -> float | None:
    """`Retry-After` as seconds to wait: a number of seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        moment = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return max(0.0, (moment - datetime.now(UTC)).total_seconds())


def _status_detail(exc: openai.APIStatusError) -> str:
    """The server's own error message (`{"error": {"message": ...}}`) when it sent one."""
    body = exc.body
    if isinstance(body, dict):
        detail = body.get("message") or (body.get("error") or {}).get("message")
        if isinstance(detail, str) and detail:
            return _short(detail)
    return _short(exc.message)


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _PROBLEM_CHARS else text[: _PROBLEM_CHARS - 3] + "..."
