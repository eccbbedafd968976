"""A local OpenAI-compatible chat server with scriptable faults, for tests and the bench.

Answers are deterministic explanations built from the facts in the request's user message.
Faults are scripted per request number or per site (its qualname, or a text its message
contains): 429 with `Retry-After`, 500, a stall past the client's timeout, malformed JSON,
schema-invalid JSON, an answer naming a flag the repository lacks, an answer that obeys
an injected comment. Every request is
recorded (arrival time, body, what was served) so tests assert exact counts.

Standalone: `python -m tests.llm_server --port 0 --latency-ms 200` prints its base URL,
then serves until SIGINT/SIGTERM; `GET /_stats` returns the request counts.
"""

from __future__ import annotations

import argparse
import json
import re
import signal
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

FaultKind = Literal[
    "rate_limit", "server_error", "stall", "malformed", "schema_invalid", "ungrounded", "hostile"
]
FAULT_KINDS: tuple[str, ...] = FaultKind.__args__  # type: ignore[attr-defined]

# The flag an `ungrounded` answer names; no fixture repository defines it.
UNGROUNDED_FLAG = "--turbo-mode-unchecked"
HOSTILE_PATH = "../../evil/pwned.json"
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

    def matches(self, number: int, facts: dict[str, Any]) -> bool:
        if self.times <= 0:
            return False
        if self.request is not None and self.request != number:
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


class FakeLLM:
    """The server: `start()` it (or use it as a context manager), read `base_url`."""

    def __init__(self, latency_ms: float = 0.0, host: str = "127.0.0.1", port: int = 0) -> None:
        self.latency = latency_ms / 1000.0
        self.faults: list[Fault] = []
        self._requests: list[ServedRequest] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
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
        self._stopping.set()  # releases stalled answers
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
            return {"received": len(self._requests), "answered": served}

    def reset(self) -> None:
        with self._lock:
            self._requests.clear()
            self.faults.clear()

    # -- called by the handler ---------------------------------------------------------

    def _arrive(self, body: dict[str, Any]) -> ServedRequest:
        messages = body.get("messages") or []
        user = next((m.get("content", "") for m in messages if m.get("role") == "user"), "")
        facts = facts_of(user) or {}
        with self._lock:
            number = len(self._requests) + 1
            fault = next((f for f in self.faults if f.matches(number, facts)), None)
            if fault is not None:
                fault.times -= 1
            served = ServedRequest(
                number, time.monotonic(), body, fault.kind if fault else None, scripted=fault
            )
            self._requests.append(served)
        return served

    def _answer(self, served: ServedRequest) -> tuple[int, dict[str, str], dict[str, Any]]:
        """Status, extra headers and JSON body for a request (after the latency)."""
        fault = served.scripted
        if self.latency:
            self._stopping.wait(self.latency)
        if fault is not None and fault.kind == "rate_limit":
            return 429, {"Retry-After": fault.retry_after}, _error("rate limited", "rate_limit")
        if fault is not None and fault.kind == "server_error":
            return 500, {}, _error("internal error", "server_error")
        if fault is not None and fault.kind == "stall":
            self._stopping.wait(fault.stall_seconds)
        explanation = explanation_for(facts_of(served.user))
        if fault is not None and fault.kind == "malformed":
            content = json.dumps(explanation)[:60]  # cut mid-string
        elif fault is not None and fault.kind == "schema_invalid":
            del explanation["solutions"]
            explanation["confidence"] = "high"
            content = json.dumps(explanation)
        elif fault is not None and fault.kind == "hostile":
            # What a model that obeyed an injected comment might say: paths, not records.
            explanation["exampleFix"] = f"open({HOSTILE_PATH!r}, 'w').write('pwned')"
            explanation["tags"] = [HOSTILE_PATH]
            content = json.dumps(explanation)
        elif fault is not None and fault.kind == "ungrounded":
            explanation["exampleFix"] = f"vllm serve my-model {UNGROUNDED_FLAG}"
            content = json.dumps(explanation)
        else:
            content = json.dumps(explanation)
        prompt_chars = sum(len(m.get("content", "")) for m in served.messages)
        return 200, {}, {
            "id": f"chatcmpl-{served.number}",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": served.body.get("model", "fake"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt_chars // 4,
                "completion_tokens": len(content) // 4,
                "total_tokens": prompt_chars // 4 + len(content) // 4,
            },
        }


def _error(message: str, kind: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    fake: FakeLLM


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as real servers do
    # Headers and body go out in two writes: without this, Nagle's algorithm and delayed
    # ACKs add ~40 ms to every answer on a kept-alive connection.
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
        pass  # quiet: tests read `requests`, not logs

    def do_GET(self) -> None:
        if self.path.rstrip("/") == "/v1/models":
            self._send(200, {}, {"object": "list", "data": [
                {"id": "fake", "object": "model", "created": 1_700_000_000, "owned_by": "vmine"}
            ]})
        elif self.path == "/_stats":
            self._send(200, {}, self.server.fake.stats())
        else:
            self._send(404, {}, _error(f"no route {self.path}", "not_found"))

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._send(404, {}, _error(f"no route {self.path}", "not_found"))
            return
        try:
            body = json.loads(raw)
        except json.JSONDecodeError:
            self._send(400, {}, _error("body is not JSON", "invalid_request_error"))
            return
        fake = self.server.fake
        served = fake._arrive(body)
        status, headers, answer = fake._answer(served)
        with fake._lock:
            served.answered = time.monotonic()
        if self._send(status, headers, answer):
            with fake._lock:
                served.status = status

    def _send(self, status: int, headers: dict[str, str], body: dict[str, Any]) -> bool:
        data = json.dumps(body).encode("utf-8")
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
        except OSError:  # the client gave up (timeout, interruption)
            self.close_connection = True
            return False
        return True


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--latency-ms", type=float, default=0.0)
    args = parser.parse_args(argv)
    fake = FakeLLM(latency_ms=args.latency_ms, host=args.host, port=args.port).start()
    print(fake.base_url, flush=True)
    done = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: done.set())
    while not done.wait(0.2):
        pass
    fake.stop()


if __name__ == "__main__":
    main()
