"""A local OpenAI-compatible chat server with scriptable faults, for tests and the bench.

Answers are deterministic explanations built from the facts in the request's user message.
Faults are scripted per request number or per site (its qualname, or a text its message
contains): 429 with `Retry-After`, 500, a stall past the client's timeout, malformed JSON,
schema-invalid JSON, an answer naming a flag the repository lacks, an answer that obeys
an injected comment; what weak models and other servers do (a `json_schema` format refused
with a 400 or a 500, extra keys, fenced code fields, null or a list where a string belongs,
capitalised enums, code that does not parse, a field 50,000 characters long, an answer cut
off at the output limit, an exampleFix given by the test: `given_fix`, a program in plain
text given by the test: `given_program`); and what
broken or hostile servers do (a body trickled a byte at a time, a huge body, a 200 that is
an HTML page, an answer escaping a lone surrogate and a NUL, a compressed body that inflates
to hundreds of MB: once gzipped, or gzipped twice). Every request is recorded (arrival
time, body, what was served) so tests assert exact counts.

A request with `stream: true` gets its answer as server-sent events, as vLLM and llama.cpp
send them: chat-completion chunks of `stream_chunk_chars` characters, the finish reason,
a last chunk with the token counts when `stream_options.include_usage` asks, then
`data: [DONE]`. Streaming faults: a slow model (a chunk every `trickle_seconds`), silence
in the middle of the stream, a stream that never ends, a server that refuses `stream` or `stream_options` (a 400), one that ignores `stream`
and sends one JSON body, one that sends no token counts, an event that is not JSON.

It also serves the Files and Batch APIs (`/v1/files`, `/v1/batches`): an uploaded JSONL of
chat-completion requests becomes a batch that moves one status on at each retrieve
(validating, in_progress, finalizing, completed), or ends `expired` or `failed`, or is held
`in_progress` until released, as scripted with `plan_batch`; its requests are answered as
above (faults included) into an output and an error file.

Standalone: `python -m tests.llm_server --port 0 --latency-ms 200` prints its base URL,
then serves until SIGINT/SIGTERM; `GET /_stats` returns the request counts.
"""

from __future__ import annotations

import argparse
import email.policy
import gzip
import json
import re
import signal
import sys
import threading
import time
import zlib
from dataclasses import dataclass, field
from email.parser import BytesParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

FaultKind = Literal[
    "rate_limit",
    "server_error",
    "stall",
    "malformed",
    "schema_invalid",
    "ungrounded",
    "hostile",
    "reject_schema_400",
    "reject_schema_500",
    "extra_keys",
    "fenced_code",
    "null_string",
    "list_string",
    "capitalised_enum",
    "unparseable_code",
    "long_field",
    "trickle",
    "huge",
    "not_json",
    "cut_off",
    "surrogate",
    "gzip_bomb",
    "gzip_gzip",
    "slow_stream",
    "silent_mid_stream",
    "endless_stream",
    "reject_stream",
    "reject_stream_options",
    "ignore_stream",
    "no_usage",
    "broken_stream",
    "given_fix",
    "given_program",
]
FAULT_KINDS: tuple[str, ...] = FaultKind.__args__  # type: ignore[attr-defined]

# The flag an `ungrounded` answer names; no fixture repository defines it.
UNGROUNDED_FLAG = "--turbo-mode-unchecked"
HOSTILE_PATH = "../../evil/pwned.json"
# What llama-cpp-python's server says to a json_schema response_format (with status 500).
LLAMA_CPP_FORMAT_ERROR = (
    "1 validation error for CreateChatCompletionRequest\nresponse_format.type\n"
    "  Input should be 'text' or 'json_object' [type=literal_error, input_value='json_schema']"
)
# Faults that refuse the request's shape: they match only requests that ask for json_schema,
# for `stream`, or for `stream_options`.
_FORMAT_FAULTS = ("reject_schema_400", "reject_schema_500")
_STREAM_FAULTS = (
    "reject_stream",
    "slow_stream",
    "silent_mid_stream",
    "endless_stream",
    "ignore_stream",
    "broken_stream",
)
LONG_FIELD_CHARS = 50_000
# What a `surrogate` answer's documentation holds: JSON escapes of a lone surrogate and a NUL.
SURROGATE_TEXT = "bad \ud800 text \u0000 end"
_FACTS = re.compile(r"(`{3,})json\n(.*?)\n\1", re.DOTALL)


@dataclass
class Fault:
    """One scripted misbehaviour, served to the next `times` requests it matches."""

    kind: FaultKind
    # matches the requests of a site: its exact qualname, or a text its message contains
    site: str | None = None
    request: int | None = None  # matches the request with this 1-based number
    times: int = 1
    retry_after: str = "1"  # the `Retry-After` header of a rate_limit answer
    stall_seconds: float = 5.0
    trickle_seconds: float = 0.5  # between two bytes of a trickled answer, or two chunks
    huge_bytes: int = 64 * 1024 * 1024  # the size of a huge answer, or of a bomb inflated
    example_fix: str = ""  # the exampleFix of a `given_fix` answer (a fix that may not work)
    program: str = ""  # the program a `given_program` answer holds, in plain text

    def matches(self, number: int, facts: dict[str, Any], body: dict[str, Any]) -> bool:
        if self.times <= 0:
            return False
        if self.request is not None and self.request != number:
            return False
        if self.kind in _FORMAT_FAULTS and _format_type(body) != "json_schema":
            return False
        if self.kind in _STREAM_FAULTS and body.get("stream") is not True:
            return False
        if self.kind == "reject_stream_options" and "stream_options" not in body:
            return False
        return self.site is None or (
            self.site == facts.get("qualname") or self.site in str(facts.get("errorMessage"))
        )


@dataclass
class ServedRequest:
    """What arrived and what was answered."""

    number: int
    received: float  # time.monotonic() at arrival
    body: dict[str, Any]
    fault: str | None
    status: int = 0  # 0 until the answer is written
    # time.monotonic() when the answer started going out (before the client can have it)
    answered: float | None = None
    scripted: Fault | None = field(default=None, repr=False)
    batch: str | None = None  # the batch it came in, if any
    bytes_sent: int = 0  # of the body, for a trickled or huge answer

    @property
    def response_format(self) -> str | None:
        return _format_type(self.body)

    @property
    def messages(self) -> list[dict[str, str]]:
        return self.body.get("messages", [])

    @property
    def system(self) -> str:
        return next((m["content"] for m in self.messages if m["role"] == "system"), "")

    @property
    def user(self) -> str:
        """The first user message (the site's facts and code)."""
        return next((m["content"] for m in self.messages if m["role"] == "user"), "")

    @property
    def is_repair(self) -> bool:
        return any(m["role"] == "assistant" for m in self.messages)

    @property
    def qualname(self) -> str | None:
        facts = facts_of(self.user)
        return None if facts is None else facts.get("qualname")


def facts_of(user: str) -> dict[str, Any] | None:
    """The facts JSON block of a user message (the first ```json block)."""
    found = _FACTS.search(user)
    if found is None:
        return None
    try:
        facts = json.loads(found.group(2))
    except json.JSONDecodeError:
        return None
    return facts if isinstance(facts, dict) else None


def _format_type(body: dict[str, Any]) -> str | None:
    fmt = body.get("response_format")
    return fmt.get("type") if isinstance(fmt, dict) else None


def explanation_for(facts: dict[str, Any] | None) -> dict[str, Any]:
    """The deterministic, grounded explanation the server gives for a site's facts."""
    facts = facts or {}
    qualname = facts.get("qualname", "the validator")
    message = facts.get("errorMessage", "")
    guards = facts.get("guards") or []
    condition = " and ".join(guards) if guards else "its check fails"
    return {
        "documentation": f"Raised by {qualname} when {condition}: {message}",
        "triggerScenarios": f"Building the configuration with values for which {condition}.",
        "commonSituations": "Reusing a configuration written for another setup.",
        "solutions": [f"Change the input so that `{guard}` no longer holds." for guard in guards]
        or ["Pass a value the validator accepts."],
        "exampleFix": "# before\nconfig = build(values)\n# after\nconfig = build(fixed_values)",
        "handlingStrategy": "validation",
        "validationCode": "def validate(values):\n    return values is not None",
        "typeGuard": "def is_valid(values) -> bool:\n    return values is not None",
        "tryCatchPattern": "try:\n    build(values)\nexcept ValueError as exc:\n    print(exc)",
        "preventionTips": ["Validate the configuration before starting the server."],
        "tags": [str(facts.get("errorClass", "error")).lower(), facts.get("validatorKind", "")],
    }


@dataclass
class Reply:
    """One answer: a JSON body, or raw bytes (sent at once, trickled, or streamed huge)."""

    status: int
    body: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    raw: bytes | None = None
    content_type: str = "application/json"
    trickle_seconds: float | None = None
    stream_bytes: int | None = None
    events: list[bytes] | None = None  # server-sent events, each sent as it is ready
    event_seconds: float = 0.0  # before each event (a slow model)
    silence_after: int | None = None  # events sent before a silence of `silence_seconds`
    silence_seconds: float = 0.0
    endless_seconds: float | None = None  # after the events, a chunk this often, forever


@dataclass
class BatchPlan:
    """How the next batch created goes: `ending` is `completed`, `expired` (only the first
    `done` requests answered, the rest in the error file) or `failed` (nothing answered);
    `hold` keeps it `in_progress` until `FakeLLM.release_batches()`."""

    ending: Literal["completed", "expired", "failed"] = "completed"
    done: int | None = None
    hold: bool = False


@dataclass
class FakeBatch:
    id: str
    input_file_id: str
    endpoint: str
    plan: BatchPlan
    created_at: int
    status: str = "validating"
    output_file_id: str | None = None
    error_file_id: str | None = None
    total: int = 0
    completed: int = 0
    failed: int = 0
    retrieves: int = 0
    errors: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "batch",
            "endpoint": self.endpoint,
            "errors": self.errors,
            "input_file_id": self.input_file_id,
            "completion_window": "24h",
            "status": self.status,
            "output_file_id": self.output_file_id,
            "error_file_id": self.error_file_id,
            "created_at": self.created_at,
            "request_counts": {
                "total": self.total,
                "completed": self.completed,
                "failed": self.failed,
            },
            "metadata": None,
        }


_BATCH_STEPS = ("validating", "in_progress", "finalizing")


class FakeLLM:
    """The server: `start()` it (or use it as a context manager), read `base_url`."""

    def __init__(
        self,
        latency_ms: float = 0.0,
        host: str = "127.0.0.1",
        port: int = 0,
        stream_chunk_chars: int = 256,
        streams: bool = True,
    ) -> None:
        self.latency = latency_ms / 1000.0
        self.stream_chunk_chars = stream_chunk_chars
        self.streams = streams  # False: `stream` is ignored, every answer is one JSON body
        self._bombs: dict[tuple[int, int, bytes], bytes] = {}  # the last one made
        self.faults: list[Fault] = []
        self._requests: list[ServedRequest] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self.files: dict[str, tuple[str, bytes]] = {}  # id -> (purpose, content)
        self.batches: dict[str, FakeBatch] = {}
        self.batch_plans: list[BatchPlan] = []
        self._released = threading.Event()
        self._httpd = _Server((host, port), _Handler)
        self._httpd.fake = self
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> FakeLLM:
        # A short poll interval: `stop()` returns within 50 ms, not the default 500.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # releases stalled and trickled answers
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> FakeLLM:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def fail(self, kind: FaultKind, **how: Any) -> Fault:
        """Script a fault (see `Fault` for `site`, `request`, `times`, ...)."""
        if kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault {kind!r}; one of {', '.join(FAULT_KINDS)}")
        fault = Fault(kind, **how)
        with self._lock:
            self.faults.append(fault)
        return fault

    def plan_batch(self, **how: Any) -> BatchPlan:
        """Script how the next batch created goes (see `BatchPlan`)."""
        plan = BatchPlan(**how)
        with self._lock:
            self.batch_plans.append(plan)
        return plan

    def release_batches(self) -> None:
        """Let held batches move on."""
        self._released.set()

    @property
    def requests(self) -> list[ServedRequest]:
        with self._lock:
            return list(self._requests)

    @property
    def count(self) -> int:
        with self._lock:
            return len(self._requests)

    def stats(self) -> dict[str, int]:
        with self._lock:
            served = sum(1 for request in self._requests if request.status)
            return {
                "received": len(self._requests),
                "answered": served,
                "batches": len(self.batches),
                "retrieves": sum(b.retrieves for b in self.batches.values()),
            }

    def reset(self) -> None:
        with self._lock:
            self._requests.clear()
            self.faults.clear()

    # -- chat completions --------------------------------------------------------------

    def _arrive(self, body: dict[str, Any], batch: str | None = None) -> ServedRequest:
        messages = body.get("messages") or []
        user = next((m.get("content", "") for m in messages if m.get("role") == "user"), "")
        facts = facts_of(user) or {}
        with self._lock:
            number = len(self._requests) + 1
            fault = next((f for f in self.faults if f.matches(number, facts, body)), None)
            if fault is not None:
                fault.times -= 1
            served = ServedRequest(
                number,
                time.monotonic(),
                body,
                fault.kind if fault else None,
                scripted=fault,
                batch=batch,
            )
            self._requests.append(served)
        return served

    def _answer(self, served: ServedRequest) -> Reply:
        """What to send back for a request (after the latency)."""
        fault = served.scripted
        kind = fault.kind if fault is not None else None
        if self.latency:
            self._stopping.wait(self.latency)
        if kind == "rate_limit":
            return Reply(
                429, _error("rate limited", "rate_limit"), {"Retry-After": fault.retry_after}
            )
        if kind == "server_error":
            return Reply(500, _error("internal error", "server_error"))
        if kind == "reject_schema_400":
            return Reply(
                400,
                _error(
                    "response_format of type json_schema is not supported", "invalid_request_error"
                ),
            )
        if kind == "reject_schema_500":
            return Reply(500, _error(LLAMA_CPP_FORMAT_ERROR, "internal_server_error"))
        if kind == "not_json":
            page = b"<html><body><h1>502 Bad Gateway</h1>nginx</body></html>"
            return Reply(200, raw=page, content_type="text/html")
        if kind == "huge":
            return Reply(200, stream_bytes=fault.huge_bytes)
        if kind == "reject_stream":
            return Reply(400, _error("stream is not supported", "invalid_request_error"))
        if kind == "reject_stream_options":
            return Reply(
                400,
                _error(
                    "Unrecognized request argument supplied: stream_options",
                    "invalid_request_error",
                ),
            )
        if kind == "broken_stream":
            return Reply(
                200, raw=b'data: {"id": "x", "choices": [\n\n', content_type="text/event-stream"
            )
        if kind == "stall":
            self._stopping.wait(fault.stall_seconds)
        explanation = self._explanation(kind, facts_of(served.user))
        if kind == "given_fix":
            explanation["exampleFix"] = fault.example_fix
        content = json.dumps(explanation)
        if kind == "given_program":  # a plain-text answer, as to verify's request
            content = f"This should raise it:\n\n```python\n{fault.program}\n```\n"
        if kind == "surrogate":  # json.dumps escapes the backslashes: undo it for these
            content = content.replace(json.dumps(SURROGATE_TEXT)[1:-1], SURROGATE_TEXT)
        finish = "stop"
        if kind in ("malformed", "cut_off"):
            content = content[:60]  # cut mid-string
            finish = "length" if kind == "cut_off" else finish
        prompt_chars = sum(len(m.get("content", "")) for m in served.messages)
        streamed = (
            self.streams
            and served.body.get("stream") is True
            and kind not in ("trickle", "ignore_stream")
        )
        if streamed:
            usage_asked = (served.body.get("stream_options") or {}).get("include_usage")
            events = self._events(served, content, finish, prompt_chars, usage_asked)
            if kind in ("no_usage",):
                events = [event for event in events if b'"usage": {' not in event]
            reply = Reply(200, content_type="text/event-stream", events=events)
            if kind == "slow_stream":
                reply.event_seconds = fault.trickle_seconds
            if kind == "silent_mid_stream":
                reply.silence_after, reply.silence_seconds = len(events) // 2, fault.stall_seconds
            if kind == "endless_stream":
                reply.events = events[:2]
                reply.endless_seconds = fault.trickle_seconds
            if kind in ("gzip_bomb", "gzip_gzip"):  # the padding as a comment line, mid-stream
                layers = 2 if kind == "gzip_gzip" else 1
                head, tail = events[0] + b":", b"\n\n" + b"".join(events[1:])
                return self._bomb(head, fault.huge_bytes, layers, tail)
            return reply
        body = {
            "id": f"chatcmpl-{served.number}",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": served.body.get("model", "fake"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": finish,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_chars // 4,
                "completion_tokens": len(content) // 4,
                "total_tokens": prompt_chars // 4 + len(content) // 4,
            },
        }
        if kind == "no_usage":
            del body["usage"]
        if kind == "trickle":
            return Reply(200, raw=json.dumps(body).encode(), trickle_seconds=fault.trickle_seconds)
        if kind in ("gzip_bomb", "gzip_gzip"):
            payload = json.dumps(body).encode()
            return self._bomb(payload, fault.huge_bytes, 2 if kind == "gzip_gzip" else 1)
        return Reply(200, body)

    def _events(
        self,
        served: ServedRequest,
        content: str,
        finish: str,
        prompt_chars: int,
        usage_asked: bool,
    ) -> list[bytes]:
        """The answer as server-sent events: a chunk with the role, the content in pieces,
        the finish reason, the usage (when asked), then [DONE]."""

        def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
            return {
                "id": f"chatcmpl-{served.number}",
                "object": "chat.completion.chunk",
                "created": 1_700_000_000,
                "model": served.body.get("model", "fake"),
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
            }

        size = max(1, self.stream_chunk_chars)
        chunks = [chunk({"role": "assistant", "content": ""})]
        chunks += [
            chunk({"content": content[at : at + size]}) for at in range(0, len(content), size)
        ]
        chunks.append(chunk({}, finish))
        if usage_asked:
            chunks.append(
                {
                    **chunk({}),
                    "choices": [],
                    "usage": {
                        "prompt_tokens": prompt_chars // 4,
                        "completion_tokens": len(content) // 4,
                        "total_tokens": prompt_chars // 4 + len(content) // 4,
                    },
                }
            )
        return [b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks] + [
            b"data: [DONE]\n\n"
        ]

    def _bomb(self, payload: bytes, inflated: int, layers: int, tail: bytes = b"") -> Reply:
        """`payload`, spaces up to `inflated` bytes (JSON allows them after a value, an event
        stream in a comment line), then `tail`, gzipped `layers` times: a few hundred KB, or
        bytes, that inflate to `inflated`."""
        key = (inflated, layers, payload + tail)
        if key not in self._bombs:
            packer = zlib.compressobj(9, zlib.DEFLATED, 31)
            parts = [packer.compress(payload)]
            block = b" " * (1 << 20)
            for _ in range(max(0, inflated - len(payload)) >> 20):
                parts.append(packer.compress(block))
            data = b"".join(parts) + packer.compress(tail) + packer.flush()
            for _ in range(layers - 1):
                data = gzip.compress(data, 9, mtime=0)
            self._bombs = {key: data}  # one at a time: a bomb is only asked for again
        encoding = ", ".join(["gzip"] * layers)
        kind = "text/event-stream" if payload.startswith(b"data: ") else "application/json"
        return Reply(
            200, raw=self._bombs[key], headers={"Content-Encoding": encoding}, content_type=kind
        )

    @staticmethod
    def _explanation(kind: str | None, facts: dict[str, Any] | None) -> dict[str, Any]:
        explanation = explanation_for(facts)
        if kind == "schema_invalid":
            del explanation["solutions"]
            explanation["confidence"] = "high"
        elif kind == "hostile":
            # What a model that obeyed an injected comment might say: paths, not records.
            explanation["exampleFix"] = f"open({HOSTILE_PATH!r}, 'w').write('pwned')"
            explanation["tags"] = [HOSTILE_PATH]
        elif kind == "ungrounded":
            explanation["exampleFix"] = f"vllm serve my-model {UNGROUNDED_FLAG}"
        elif kind == "extra_keys":
            # What a server without structured output and a weak model add.
            explanation["backgroundTag"] = "validation"
            explanation["filePath"] = "engine/other.py"
        elif kind == "fenced_code":
            for name in ("validationCode", "typeGuard", "tryCatchPattern"):
                explanation[name] = f"```python\n{explanation[name]}\n```"
        elif kind == "null_string":
            explanation["triggerScenarios"] = None
        elif kind == "list_string":
            explanation["commonSituations"] = ["Reusing a configuration.", "Copying a command."]
        elif kind == "capitalised_enum":
            explanation["handlingStrategy"] = "Validation"
            explanation["tryCatchPattern"] = "None"
        elif kind == "unparseable_code":
            explanation["validationCode"] = "Check that the value is positive before the call."
        elif kind == "long_field":
            explanation["documentation"] = "x" * LONG_FIELD_CHARS
        elif kind == "surrogate":
            explanation["documentation"] = SURROGATE_TEXT
        return explanation

    # -- files and batches -------------------------------------------------------------

    def _new_file(self, purpose: str, content: bytes) -> dict[str, Any]:
        with self._lock:
            file_id = f"file-{len(self.files) + 1}"
            self.files[file_id] = (purpose, content)
        return _file_json(file_id, purpose, content)

    def _create_batch(self, body: dict[str, Any]) -> Reply:
        file_id = body.get("input_file_id")
        if file_id not in self.files:
            return Reply(404, _error(f"no file {file_id}", "not_found"))
        lines = [line for line in self.files[file_id][1].decode().split("\n") if line.strip()]
        with self._lock:
            plan = self.batch_plans.pop(0) if self.batch_plans else BatchPlan()
            batch = FakeBatch(
                id=f"batch_{len(self.batches) + 1}",
                input_file_id=file_id,
                endpoint=body.get("endpoint", ""),
                plan=plan,
                created_at=1_700_000_000,
                total=len(lines),
            )
            self.batches[batch.id] = batch
        return Reply(200, batch.to_json())

    def _retrieve_batch(self, batch_id: str) -> Reply:
        with self._lock:
            batch = self.batches.get(batch_id)
        if batch is None:
            return Reply(404, _error(f"no batch {batch_id}", "not_found"))
        batch.retrieves += 1
        held = batch.plan.hold and not self._released.is_set()
        if batch.status in _BATCH_STEPS and not (held and batch.status == "in_progress"):
            following = _BATCH_STEPS.index(batch.status) + 1
            if following < len(_BATCH_STEPS):
                batch.status = _BATCH_STEPS[following]
            else:
                self._finish(batch)
        return Reply(200, batch.to_json())

    def _finish(self, batch: FakeBatch) -> None:
        """Answer the batch's requests into an output and an error file, as planned."""
        plan = batch.plan
        if plan.ending == "failed":
            batch.status = "failed"
            batch.errors = {
                "object": "list",
                "data": [
                    {
                        "code": "invalid_request",
                        "message": "the input file is not valid",
                        "param": None,
                        "line": None,
                    }
                ],
            }
            return
        lines = self.files[batch.input_file_id][1].decode().split("\n")
        requests = [json.loads(line) for line in lines if line.strip()]
        done = len(requests) if plan.ending == "completed" or plan.done is None else plan.done
        output, errors = [], []
        for index, line in enumerate(requests):
            custom_id = line.get("custom_id")
            if index >= done:
                errors.append(
                    {
                        "id": f"batch_req_{index}",
                        "custom_id": custom_id,
                        "response": None,
                        "error": {
                            "code": "batch_expired",
                            "message": "This request could not be executed before the "
                            "completion window expired.",
                        },
                    }
                )
                continue
            served = self._arrive(line.get("body") or {}, batch=batch.id)
            reply = self._answer(served)
            served.status = reply.status
            body = reply.body if reply.body is not None else (reply.raw or b"").decode()
            entry = {
                "id": f"batch_req_{index}",
                "custom_id": custom_id,
                "error": None,
                "response": {
                    "status_code": reply.status,
                    "request_id": f"req_{index}",
                    "body": body,
                },
            }
            (output if reply.status == 200 else errors).append(entry)
        batch.completed = sum(1 for e in output)
        batch.failed = len(errors)
        if output:
            batch.output_file_id = self._new_file("batch_output", _jsonl(output))["id"]
        if errors:
            batch.error_file_id = self._new_file("batch_output", _jsonl(errors))["id"]
        batch.status = "completed" if plan.ending == "completed" else "expired"


def _jsonl(items: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(item) + "\n" for item in items).encode()


def _file_json(file_id: str, purpose: str, content: bytes) -> dict[str, Any]:
    return {
        "id": file_id,
        "object": "file",
        "bytes": len(content),
        "created_at": 1_700_000_000,
        "filename": f"{file_id}.jsonl",
        "purpose": purpose,
        "status": "processed",
    }


def _error(message: str, kind: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


def _multipart(content_type: str, raw: bytes) -> dict[str, bytes]:
    """The fields of a multipart/form-data body, by name."""
    message = BytesParser(policy=email.policy.HTTP).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + raw
    )
    return {
        part.get_param("name", header="content-disposition"): part.get_payload(decode=True)
        for part in message.iter_parts()
    }


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    fake: FakeLLM

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up (a timeout, a body too large) is no error of the server."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as real servers do
    # Headers and body go out in two writes: without this, Nagle's algorithm and delayed
    # ACKs add ~40 ms to every answer on a kept-alive connection.
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
        pass  # quiet: tests read `requests`, not logs

    def do_GET(self) -> None:
        fake = self.server.fake
        path = self.path.split("?", 1)[0].rstrip("/")
        parts = path.split("/")
        if path == "/v1/models":
            self._send(
                Reply(
                    200,
                    {
                        "object": "list",
                        "data": [
                            {
                                "id": "fake",
                                "object": "model",
                                "created": 1_700_000_000,
                                "owned_by": "vmine",
                            }
                        ],
                    },
                )
            )
        elif path == "/_stats":
            self._send(Reply(200, fake.stats()))
        elif len(parts) == 4 and parts[2] == "batches":
            self._send(fake._retrieve_batch(parts[3]))
        elif len(parts) in (4, 5) and parts[2] == "files" and parts[3] in fake.files:
            purpose, content = fake.files[parts[3]]
            if len(parts) == 5 and parts[4] == "content":
                self._send(Reply(200, raw=content, content_type="application/octet-stream"))
            else:
                self._send(Reply(200, _file_json(parts[3], purpose, content)))
        else:
            self._send(Reply(404, _error(f"no route {self.path}", "not_found")))

    def do_POST(self) -> None:
        fake = self.server.fake
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        path = self.path.split("?", 1)[0].rstrip("/")
        if path == "/v1/files":
            fields = _multipart(self.headers.get("Content-Type", ""), raw)
            purpose = (fields.get("purpose") or b"").decode()
            self._send(Reply(200, fake._new_file(purpose, fields.get("file") or b"")))
            return
        if path not in ("/v1/chat/completions", "/v1/batches"):
            self._send(Reply(404, _error(f"no route {self.path}", "not_found")))
            return
        try:
            body = json.loads(raw)
        except json.JSONDecodeError:
            self._send(Reply(400, _error("body is not JSON", "invalid_request_error")))
            return
        if path == "/v1/batches":
            self._send(fake._create_batch(body))
            return
        served = fake._arrive(body)
        reply = fake._answer(served)
        with fake._lock:
            served.answered = time.monotonic()
        if self._send(reply, served):
            with fake._lock:
                served.status = reply.status

    def _send_events(self, reply: Reply, served: ServedRequest | None) -> None:
        """Each event as one HTTP chunk, flushed; a silence or an endless tail as scripted."""
        fake = self.server.fake
        sent = 0

        def write(data: bytes) -> None:
            nonlocal sent
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()
            sent += len(data)
            if served is not None:
                served.bytes_sent = sent

        assert reply.events is not None
        for index, event in enumerate(reply.events):
            if index == reply.silence_after and fake._stopping.wait(reply.silence_seconds):
                return
            if index and reply.event_seconds and fake._stopping.wait(reply.event_seconds):
                return
            write(event)
        if reply.endless_seconds is not None:  # a space at a time: the answer never ends
            tick = json.loads(reply.events[-1][len(b"data: ") :])
            tick["choices"] = [{"index": 0, "delta": {"content": " "}, "finish_reason": None}]
            tick = b"data: " + json.dumps(tick).encode()
            while not fake._stopping.wait(reply.endless_seconds):
                write(tick + b"\n\n")
            return
        self.wfile.write(b"0\r\n\r\n")

    def _send(self, reply: Reply, served: ServedRequest | None = None) -> bool:
        fake = self.server.fake
        data = reply.raw if reply.raw is not None else json.dumps(reply.body).encode("utf-8")
        try:
            self.send_response(reply.status)
            self.send_header("Content-Type", reply.content_type)
            if reply.stream_bytes is not None or reply.events is not None:
                self.send_header("Transfer-Encoding", "chunked")
            else:
                self.send_header("Content-Length", str(len(data)))
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            if reply.events is not None:
                self._send_events(reply, served)
            elif reply.stream_bytes is not None:
                chunk = b'{"pad": "' + b"x" * (64 * 1024 - 9)
                sent = 0
                while sent < reply.stream_bytes and not fake._stopping.is_set():
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    sent += len(chunk)
                    if served is not None:
                        served.bytes_sent = sent
                self.wfile.write(b"0\r\n\r\n")
            elif reply.trickle_seconds is not None:
                for index in range(len(data)):
                    if fake._stopping.wait(reply.trickle_seconds if index else 0):
                        break
                    self.wfile.write(data[index : index + 1])
                    self.wfile.flush()
                    if served is not None:
                        served.bytes_sent = index + 1
            else:
                self.wfile.write(data)
            self.wfile.flush()
        except OSError:  # the client gave up (timeout, interruption, a body too large)
            self.close_connection = True
            return False
        return True


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--latency-ms", type=float, default=0.0)
    parser.add_argument("--no-stream", action="store_true", help="ignore `stream` requests")
    args = parser.parse_args(argv)
    fake = FakeLLM(
        latency_ms=args.latency_ms, host=args.host, port=args.port, streams=not args.no_stream
    ).start()
    print(fake.base_url, flush=True)
    done = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: done.set())
    while not done.wait(0.2):
        pass
    fake.stop()


if __name__ == "__main__":
    main()
