"""The `openai` explainer: one site -> a prompt -> an OpenAI-compatible server -> an Explanation.

Retries (with backoff that honours `Retry-After`, bounded per site), the repair of an invalid
or ungrounded answer and the counting of every HTTP request are done here, not by the
client, so that `Usage` is exact and no request is ever sent twice except as the retry of a
failed one. Every request asks leave of the budget first, has its answer streamed with a
limit on silence (`idle_timeout`: a slow model still sending tokens is not stuck) and a total
time limit (a server trickling bytes cannot hold it), and a bound on its response's size and
length; the request's shape (structured output or JSON mode, the output limit's name,
streaming) is negotiated with the server (`server.py`) and the answer is read by `answers.py`.
A server that cannot be reached at all (the connection refused) ends the explainer's work at
once: `ExplainResult.unreachable`.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, Literal

import openai

from extractors.meaning import raise_line
from pipeline.dataset.models import Site
from pipeline.explainers.answers import response_format_param, schema_note
from pipeline.explainers.base import (
    IDLE_TIMEOUT,
    REQUEST_TIMEOUT,
    Budget,
    Explainer,
    ExplainRequest,
    ExplainResult,
    ServerMemory,
    Usage,
    command_prompt_version,
)
from pipeline.explainers.conversation import Conversation
from pipeline.explainers.server import ServerProfile
from pipeline.explainers.streaming import Silent, streamed_completion
from pipeline.explainers.text import valid_text
from pipeline.explainers.transport import (
    MAX_RESPONSE_BYTES,
    BadResponse,
    Completion,
    NotACompletion,
    capped_http_client,
    read_completion,
    unreachable,
)
from pipeline.site.markdown import md_fence
from prompts import Prompt, load_prompt

RETRYABLE_STATUS = frozenset({429, 500, 502, 503, 504})
# The prompt of the sites outside validators (validatorKind `none`, the `all` scope).
OUTSIDE_PROMPT = "explain_outside_v1"
# Statuses whose `Retry-After` header says when to come back.
RETRY_AFTER_STATUS = frozenset({429, 503})
MAX_SOURCE_LINES = 120
MAX_SOURCE_CHARS = 8000
# A typical answer (reference explanations run to 2-3k characters).
OUTPUT_TOKENS_ESTIMATE = 800
# The output limit each request sets: room for the whole schema, not for a rambling model.
MAX_OUTPUT_TOKENS = 2000
# Requests of one site that may time out: a server that serves one request at a time
# (llama.cpp) is still generating the answer that timed out, and a retry queues behind it.
TIMEOUT_ATTEMPTS = 2
_PROBLEM_CHARS = 1500

FormatChoice = Literal["auto", "json_schema", "json_object"]


class _GaveUp(Exception):
    """A request that failed for good (retries exhausted or a status not worth retrying);
    `unreachable`: the server could not be reached at all."""

    def __init__(self, reason: str, unreachable: bool = False) -> None:
        super().__init__(reason)
        self.unreachable = unreachable


@dataclass(frozen=True)
class _Failure:
    """Why one request brought no completion, and what to do about it: `reason` "" means
    the server refused the request's shape and the profile changed (send it again at once);
    `wait` is a `Retry-After` in seconds; `busy`: the request timed out unstreamed, so the
    server may still be generating its answer (a streamed one stops when vmine hangs up)."""

    reason: str
    retryable: bool = True
    timed_out: bool = False
    wait: float | None = None
    unreachable: bool = False
    busy: bool = False


class _OutOfBudget(Exception):
    """The budget refused the next request."""


# -- the explainer -------------------------------------------------------------------------


class LLMExplainer(Explainer):
    """Explains sites with a chat model behind any OpenAI-compatible `base_url`."""

    provider = "openai"
    reads_whole_function = False  # the cache key is what the site means

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        concurrency: int = 8,
        timeout: float = REQUEST_TIMEOUT,
        max_retries: int = 4,
        *,
        idle_timeout: float = IDLE_TIMEOUT,
        backoff: float = 1.0,
        max_backoff: float = 30.0,
        max_wait: float = 120.0,
        response_format: FormatChoice = "auto",
        max_output_tokens: int = MAX_OUTPUT_TOKENS,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
        prompt: str = "explain_v5",
        command: str | None = None,
    ) -> None:
        self.model = model
        self.base_url = base_url
        # Local servers need no key, but the client insists on one.
        self.api_key = api_key or os.environ.get("OPENAI_API_KEY") or "unused"
        self.concurrency = max(1, concurrency)
        self.timeout = timeout  # seconds one request may take in all
        self.idle_timeout = idle_timeout  # ... and go without a token, when streamed
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.max_wait = max_wait  # seconds one site may spend waiting between its retries
        self.forced_format = response_format != "auto"
        self.max_output_tokens = max_output_tokens
        self.max_response_bytes = max_response_bytes
        self.prompt: Prompt = load_prompt(prompt)
        # the sites outside validators (the `all` scope) have their own prompt: such an error
        # need not be a configuration error
        self.outside_prompt: Prompt = load_prompt(OUTSIDE_PROMPT)
        # the entry point the example fixes start with; the answers depend on it, so the
        # prompt version (part of the cache key) names it
        self.command = command
        self.prompt_version = command_prompt_version(self.prompt.version, command)
        profile = ServerProfile.first_guess(base_url)
        if self.forced_format:
            profile = profile.model_copy(update={"response_format": response_format})
        self.profile = profile
        self._memory: ServerMemory | None = None
        self._client: openai.AsyncOpenAI | None = None
        self._slots: asyncio.Semaphore | None = None
        self._probe: asyncio.Lock | None = None
        self._probed = False
        self._loop: asyncio.AbstractEventLoop | None = None
        # why the server cannot be reached, once a connection was refused: no request goes
        # after that (the requests already in flight fail on their own)
        self._unreachable: str | None = None

    @property
    def server_key(self) -> str:
        """The base URL profiles are remembered under."""
        return (self.base_url or "https://api.openai.com/v1").rstrip("/")

    def remember_with(self, memory: ServerMemory) -> None:
        """Start from the profile remembered for this server and model, and remember the one
        negotiated (a forced `--response-format` still wins over the remembered format)."""
        self._memory = memory
        known = memory.get_server_profile(self.server_key, self.model)
        if known is not None:
            if self.forced_format:
                known = known.model_copy(update={"response_format": self.profile.response_format})
            self.profile = known

    # -- prompt ------------------------------------------------------------------------

    def prompt_of(self, site: Site) -> Prompt:
        """The prompt a site is explained with: its own for a site outside validators."""
        return self.outside_prompt if site.validatorKind == "none" else self.prompt

    def prompt_version_for(self, site: Site) -> str:
        return command_prompt_version(self.prompt_of(site).version, self.command)

    def messages(self, request: ExplainRequest) -> list[dict[str, str]]:
        """The system and user messages for one site (the first request of a conversation)."""
        prompt = self.prompt_of(request.site)
        return [
            {"role": "system", "content": prompt.system},
            {"role": "user", "content": render_user_message(prompt, request, self.command)},
        ]

    def request_body(
        self,
        messages: list[dict[str, str]],
        profile: ServerProfile | None = None,
        structured: bool = True,
    ) -> dict[str, Any]:
        """The chat-completions body for a conversation under a server profile (the
        explainer's current one by default): the schema as the response format, or written
        into the system message when the server takes only JSON mode or nothing; a body
        that is not `structured` asks for plain text."""
        profile = profile or self.profile
        fmt = response_format_param(profile.response_format) if structured else None
        if (
            structured
            and profile.response_format != "json_schema"
            and messages[0]["role"] == "system"
        ):
            system = {"role": "system", "content": messages[0]["content"] + "\n" + schema_note()}
            messages = [system, *messages[1:]]
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            **profile.limits(self.max_output_tokens),
        }
        if fmt is not None:
            body["response_format"] = fmt
        return body

    def estimate_tokens(self, request: ExplainRequest) -> tuple[int, int]:
        body = self.request_body(self.messages(request))
        chars = sum(len(message["content"]) for message in body["messages"])
        return chars // 4, OUTPUT_TOKENS_ESTIMATE

    # -- explain -----------------------------------------------------------------------

    async def explain(self, request: ExplainRequest) -> ExplainResult:
        return await self._converse(Conversation(self.messages(request)), request)

    async def follow_up(self, request: ExplainRequest, answer: str, note: str) -> ExplainResult:
        """The site asked again after `answer` (its explanation, as JSON) with `note` (what
        running its fix showed): one more conversation turn, repairs as usual."""
        turn = [{"role": "assistant", "content": answer}, {"role": "user", "content": note}]
        return await self._converse(Conversation([*self.messages(request), *turn]), request)

    async def write(self, request: ExplainRequest, note: str) -> str | None:
        """The model's plain-text answer to `note`, asked after the site's own messages (a
        program for `vmine verify`); None when no answer came (the budget, a failure)."""
        messages = [*self.messages(request), {"role": "user", "content": note}]
        try:
            completion = await self._complete(messages, Usage(), request.budget, structured=False)
        except (_OutOfBudget, _GaveUp):
            return None
        return completion.content

    async def _converse(self, conversation: Conversation, request: ExplainRequest) -> ExplainResult:
        usage = Usage()
        while True:
            try:
                completion = await self._complete(conversation.messages, usage, request.budget)
            except _OutOfBudget:
                outcome = conversation.settle("the request budget ran out")
                return conversation.result(outcome, usage, out_of_budget=True)
            except _GaveUp as exc:
                result = conversation.result(conversation.settle(str(exc)), usage)
                if exc.unreachable:
                    result = replace(result, unreachable=True)
                return result
            conversation, outcome = conversation.advance(
                completion.content, request.site_grounding, cut=completion.finish_reason == "length"
            )
            if outcome is not None:
                return conversation.result(outcome, usage)

    async def aclose(self) -> None:
        """Release the HTTP client (it belongs to the event loop that created it)."""
        client, self._client, self._loop = self._client, None, None
        if client is not None:
            await client.close()

    # -- HTTP --------------------------------------------------------------------------

    def client(self) -> openai.AsyncOpenAI:
        """The openai client of the running event loop (made on first use in each loop)."""
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            self._client = openai.AsyncOpenAI(
                api_key=self.api_key,
                base_url=self.base_url,
                timeout=self.timeout,
                max_retries=0,  # retries are ours, so that every request is counted
                http_client=capped_http_client(self.timeout, self.max_response_bytes),
            )
            self._slots = asyncio.Semaphore(self.concurrency)
            self._probe = asyncio.Lock()
            self._loop = loop
        return self._client

    async def _complete(
        self, messages: list[dict[str, str]], usage: Usage, budget: Budget, structured: bool = True
    ) -> Completion:
        """One chat completion, retrying transient failures: at most `max_retries` retries,
        `TIMEOUT_ATTEMPTS` timeouts and `max_wait` seconds of waiting in all."""
        attempts = timeouts = 0
        waited = 0.0
        while True:
            sent = await self._attempt(messages, usage, budget, structured)
            if isinstance(sent, Completion):
                return sent
            if not sent.retryable:
                raise _GaveUp(sent.reason, sent.unreachable)
            if sent.reason == "":
                continue  # the server refused the request's shape: the next one differs
            attempts += 1
            timeouts += sent.timed_out
            if attempts > self.max_retries or timeouts >= TIMEOUT_ATTEMPTS:
                raise _GaveUp(f"gave up after {attempts} requests: {sent.reason}")
            if budget.spent():
                raise _OutOfBudget  # no retry can go: do not wait for one
            wait = sent.wait
            if wait is not None and waited + wait > self.max_wait:
                raise _GaveUp(
                    f"{sent.reason}; the server asked to wait {wait:g} s, more than the "
                    f"{max(0.0, self.max_wait - waited):g} s this site may still wait"
                )
            if wait is None:
                wait = self._backoff(attempts - 1)
                if sent.busy:  # let the answer that timed out finish first
                    wait = max(wait, min(self.timeout, self.max_backoff))
                wait = min(wait, max(0.0, self.max_wait - waited))
            waited += wait
            await asyncio.sleep(wait)

    async def _attempt(
        self, messages: list[dict[str, str]], usage: Usage, budget: Budget, structured: bool
    ) -> Completion | _Failure:
        """One request: the completion, or why there is none. Until the server's profile is
        known, the first request goes alone (a probe), so that a refused format costs one
        request, not one per request in flight."""
        client = self.client()
        assert self._slots is not None and self._probe is not None
        if not self.profile.settled and not self._probed:
            async with self._probe:
                if not self._probed:
                    try:
                        return await self._send(client, messages, usage, budget, structured)
                    finally:
                        self._probed = True
        return await self._send(client, messages, usage, budget, structured)

    async def _send(
        self,
        client: openai.AsyncOpenAI,
        messages: list[dict[str, str]],
        usage: Usage,
        budget: Budget,
        structured: bool,
    ) -> Completion | _Failure:
        assert self._slots is not None
        async with self._slots:
            if self._unreachable is not None:
                return _Failure(self._unreachable, retryable=False, unreachable=True)
            if not budget.take():
                raise _OutOfBudget
            usage.requests += 1
            profile = self.profile
            body = self.request_body(messages, profile, structured)
            try:
                # The client's own timeout is per read: a server trickling a byte every few
                # seconds never trips it. This one bounds the whole request.
                async with asyncio.timeout(self.timeout):
                    completion, streamed, counted = await self._post(client, body, profile)
            except Silent as exc:
                return _Failure(f"{exc} (--idle-timeout)", timed_out=True)
            except (TimeoutError, openai.APITimeoutError):
                return _Failure(
                    f"not finished after {self.timeout:g} s (--timeout)",
                    timed_out=True,
                    busy=profile.stream == "off",
                )
            except BadResponse as exc:
                return _Failure(str(exc))
            except NotACompletion as exc:
                return _Failure(f"HTTP 200 with {exc}")
            except openai.APIConnectionError as exc:
                why = unreachable(exc)
                if why is not None:
                    self._unreachable = f"cannot connect to {self.server_key}: {why}"
                    return _Failure(self._unreachable, retryable=False, unreachable=True)
                return _Failure(f"connection error: {exc}")
            except openai.APIStatusError as exc:
                detail = _status_detail(exc)
                changed = profile.after_refusal(exc.status_code, detail, self.forced_format)
                if changed is not None:
                    self.adopt(changed, settled=False)
                    return _Failure("")
                failure = f"HTTP {exc.status_code}: {detail}"
                if exc.status_code not in RETRYABLE_STATUS:
                    return _Failure(failure, retryable=False)
                wait = None
                if exc.status_code in RETRY_AFTER_STATUS:
                    wait = retry_after_seconds(exc.response.headers.get("retry-after"))
                return _Failure(failure, wait=wait)
            except openai.APIError as exc:  # an error event in the middle of a stream
                return _Failure(f"the stream broke off: {_short(valid_text(str(exc)))}")
            except openai.OpenAIError as exc:
                return _Failure(f"{type(exc).__name__}: {_short(str(exc))}", retryable=False)
            if counted:
                usage.prompt_tokens += completion.prompt_tokens
                usage.completion_tokens += completion.completion_tokens
            else:  # a server that counts nothing: chars / 4, as the dry run estimates
                usage.prompt_tokens += sum(len(m["content"]) for m in body["messages"]) // 4
                usage.completion_tokens += len(completion.content) // 4
            if not profile.settled:
                self.adopt(profile, settled=True)
            if not streamed and self.profile.stream != "off":  # the server ignores `stream`
                self.adopt(self.profile.model_copy(update={"stream": "off"}), settled=True)
            return completion

    async def _post(
        self, client: openai.AsyncOpenAI, body: dict[str, Any], profile: ServerProfile
    ) -> tuple[Completion, bool, bool]:
        """The completion of one request, whether it came streamed, and whether the server
        counted its tokens."""
        if profile.stream != "off":
            got = await streamed_completion(
                client, {**body, **profile.streaming()}, self.idle_timeout
            )
            return got.completion, got.streamed, got.counted
        raw = await client.chat.completions.with_raw_response.create(**body)
        completion = read_completion(raw.http_response.content)
        return completion, False, bool(completion.prompt_tokens or completion.completion_tokens)

    def adopt(self, profile: ServerProfile, *, settled: bool) -> None:
        """Use `profile` from now on; remember it once an answer has come back with it."""
        self.profile = profile.model_copy(update={"settled": settled})
        if settled and self._memory is not None:
            self._memory.put_server_profile(self.server_key, self.model, self.profile)

    def _backoff(self, attempt: int) -> float:
        """Exponential, with jitter so that parallel requests do not come back together."""
        delay = min(self.max_backoff, self.backoff * 2**attempt)
        return delay * random.uniform(0.5, 1.0)


# -- the user message ----------------------------------------------------------------------


def render_user_message(prompt: Prompt, request: ExplainRequest, command: str | None = None) -> str:
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
    """Where the raise is in the function's lines."""
    return raise_line(lines, site.sourceCode.split("\n"), site.lineNumber - site.sourceCodeStart)


# -- failures ------------------------------------------------------------------------------


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
            return _short(valid_text(detail))
    return _short(valid_text(exc.message))


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _PROBLEM_CHARS else text[: _PROBLEM_CHARS - 3] + "..."
