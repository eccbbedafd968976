"""What a model must answer and how its answer is read: the JSON Schema sent as a structured
output, and a tolerant but exact parse of the answer into an `Explanation`.

Tolerant where a weak model or a lax server slips in ways that lose nothing (unknown keys,
a Markdown fence around a code field, `"Validation"` for `"validation"`, `"None"` for a
null `tryCatchPattern`); exact everywhere else (a missing or mistyped field, a field too
long): those make the answer invalid, and the explainer asks for a repair.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from pipeline.dataset.models import Explanation
from pipeline.explainers.server import ResponseFormat
from pipeline.explainers.text import valid_text

HANDLING_STRATEGIES = ("validation", "configuration", "retry", "fail-fast")
# Fields whose text pages show as code (and grounding parses as Python, but for exampleFix).
CODE_FIELDS = ("exampleFix", "validationCode", "typeGuard", "tryCatchPattern")
# Bounds on one answer: reference explanations run to 2-3k characters in all.
MAX_FIELD_CHARS = 8_000
MAX_LIST_ITEMS = 12
SCHEMA_NAME = "explanation"

_FENCE = re.compile(r"\A(`{3,}|~{3,})[ \t]*[\w+-]*[ \t]*\n(.*?)\n?\1[ \t]*\Z", re.DOTALL)
_NULL_WORDS = frozenset({"", "none", "null", "n/a"})


def answer_schema() -> dict[str, Any]:
    """The Explanation's JSON Schema in the strict form structured outputs want (every key
    required, no others), built by the openai SDK's own helper; handlingStrategy is an enum.
    A fresh copy each call: the request body it goes into is the caller's to change."""
    return copy.deepcopy(_answer_schema())


@functools.cache
def _answer_schema() -> dict[str, Any]:
    """Built once per process (the SDK's helper walks the whole model); never handed out."""
    from openai.lib._pydantic import to_strict_json_schema  # the SDK is slow to import

    schema = to_strict_json_schema(Explanation)
    schema["properties"]["handlingStrategy"] = {
        "type": "string",
        "enum": list(HANDLING_STRATEGIES),
        "title": "Handlingstrategy",
    }
    return schema


def response_format_param(kind: ResponseFormat) -> dict[str, Any] | None:
    """The request's `response_format` for a negotiated kind (None: send none at all)."""
    if kind == "json_schema":
        return {
            "type": "json_schema",
            "json_schema": {"name": SCHEMA_NAME, "schema": answer_schema(), "strict": True},
        }
    if kind == "json_object":
        return {"type": "json_object"}
    return None


@functools.cache
def schema_note() -> str:
    """The schema written into the prompt, for servers that cannot be given it as a format
    (a string: built once, shared safely)."""
    schema = json.dumps(_answer_schema(), indent=1, ensure_ascii=False)
    return f"The JSON Schema your answer must follow:\n\n```json\n{schema}\n```\n"


@dataclass
class ParsedAnswer:
    """An answer read: the explanation (None when invalid, with `problem` saying why for the
    repair) and what had to be fixed on the way, counted for the manifest."""

    explanation: Explanation | None
    problem: str = ""
    dropped_keys: list[str] = field(default_factory=list)
    fixed: list[str] = field(default_factory=list)  # `exampleFix: fence removed`, ...


def parse_answer(answer: str) -> ParsedAnswer:
    """The model's answer text as an Explanation; see the module docstring for the rules."""
    text = unfence(answer.strip())
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        return ParsedAnswer(None, f"not valid JSON: {exc}")
    if not isinstance(data, dict):
        return ParsedAnswer(None, f"not a JSON object but {type(data).__name__}")
    known = Explanation.model_fields
    dropped = sorted(valid_text(str(key)) for key in data if key not in known)
    data = {key: _valid(value) for key, value in data.items() if key in known}
    fixed: list[str] = []
    for name in CODE_FIELDS:
        value = data.get(name)
        if isinstance(value, str) and (inner := _unwrap_fence(value)) is not None:
            data[name] = inner
            fixed.append(f"{name}: Markdown fence removed")
    strategy = data.get("handlingStrategy")
    if isinstance(strategy, str) and strategy not in HANDLING_STRATEGIES:
        normal = normal_strategy(strategy)
        if normal is not None:
            data["handlingStrategy"] = normal
            fixed.append(f"handlingStrategy: {strategy!r} read as {normal!r}")
    catch = data.get("tryCatchPattern")
    if isinstance(catch, str) and catch.strip().lower() in _NULL_WORDS:
        data["tryCatchPattern"] = None
        fixed.append(f"tryCatchPattern: {catch!r} read as null")
    try:
        explanation = Explanation.model_validate(data)
    except ValidationError as exc:
        return ParsedAnswer(None, _schema_problem(exc), dropped, fixed)
    problems = _bounds_problems(explanation)
    if problems:
        return ParsedAnswer(None, "; ".join(problems), dropped, fixed)
    return ParsedAnswer(explanation, "", dropped, fixed)


def _valid(value: Any) -> Any:
    """A field's text (a string, or the strings of a list) made valid Unicode."""
    if isinstance(value, str):
        return valid_text(value)
    if isinstance(value, list):
        return [valid_text(item) if isinstance(item, str) else item for item in value]
    return value


def normal_strategy(value: str) -> str | None:
    """One of the four handling strategies, read ignoring case (and `_`/space for `-`)."""
    word = re.sub(r"[\s_]+", "-", value.strip().lower())
    return word if word in HANDLING_STRATEGIES else None


def unfence(text: str) -> str:
    """The text inside a Markdown fence that wraps all of it (some servers fence JSON)."""
    inner = _unwrap_fence(text)
    return text if inner is None else inner


def _unwrap_fence(text: str) -> str | None:
    found = _FENCE.match(text.strip())
    return None if found is None else found.group(2)


def _bounds_problems(explanation: Explanation) -> list[str]:
    """Fields longer than an answer needs (a runaway model, a hostile server)."""
    problems = []
    for name, value in explanation.model_dump().items():
        if isinstance(value, str) and len(value) > MAX_FIELD_CHARS:
            problems.append(f"{name} is {len(value)} characters long (at most {MAX_FIELD_CHARS})")
        elif isinstance(value, list):
            if len(value) > MAX_LIST_ITEMS:
                problems.append(f"{name} has {len(value)} items (at most {MAX_LIST_ITEMS})")
            longest = max((len(item) for item in value), default=0)
            if longest > MAX_FIELD_CHARS:
                problems.append(
                    f"an item of {name} is {longest} characters long (at most {MAX_FIELD_CHARS})"
                )
    if explanation.handlingStrategy not in HANDLING_STRATEGIES:
        problems.append(
            f"handlingStrategy must be one of {', '.join(HANDLING_STRATEGIES)}, "
            f"got {explanation.handlingStrategy[:40]!r}"
        )
    return problems


def _schema_problem(exc: ValidationError) -> str:
    """Each wrong field in a few words (the repair note quotes this to the model)."""
    parts = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error["loc"]) or "the answer"
        given = error.get("input")
        shown = "" if error["type"] == "missing" else f" (got {_kind(given)})"
        parts.append(f"{where}: {error['msg']}{shown}")
    return "does not match the schema: " + "; ".join(parts)


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, str):
        return "a string"
    return type(value).__name__
