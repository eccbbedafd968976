"""How an answer is read (answers.py) and what a server's refusal changes (server.py): the
case tables are the specification."""

from __future__ import annotations

import json

import pytest

from pipeline.explainers.answers import (
    MAX_FIELD_CHARS,
    answer_schema,
    parse_answer,
    response_format_param,
)
from pipeline.explainers.server import ServerProfile, refused_part
from tests.llm_server import LLAMA_CPP_FORMAT_ERROR, explanation_for

GOOD = explanation_for({"qualname": "SchedulerConfig.__post_init__", "guards": ["n <= 0"]})


def answer(**changes: object) -> str:
    return json.dumps({**GOOD, **changes})


# (what the model sent, the fields that differ in the explanation read, what was fixed)
TOLERATED = [
    pytest.param(
        answer(backgroundTag="validation", filePath="x.py"), {}, [], id="unknown-keys-dropped"
    ),
    pytest.param(
        answer(validationCode="```python\nassert n > 0\n```"),
        {"validationCode": "assert n > 0"},
        ["validationCode: Markdown fence removed"],
        id="fenced-code",
    ),
    pytest.param(
        answer(typeGuard="```\ndef ok(n):\n    return n > 0\n```"),
        {"typeGuard": "def ok(n):\n    return n > 0"},
        ["typeGuard: Markdown fence removed"],
        id="fence-without-language",
    ),
    pytest.param(
        answer(exampleFix="~~~bash\nvllm serve m --max-num-seqs 8\n~~~"),
        {"exampleFix": "vllm serve m --max-num-seqs 8"},
        ["exampleFix: Markdown fence removed"],
        id="tilde-fence",
    ),
    pytest.param(
        answer(handlingStrategy="Validation"),
        {},
        ["handlingStrategy: 'Validation' read as 'validation'"],
        id="capitalised-enum",
    ),
    pytest.param(
        answer(handlingStrategy="FAIL_FAST"),
        {"handlingStrategy": "fail-fast"},
        ["handlingStrategy: 'FAIL_FAST' read as 'fail-fast'"],
        id="underscore-enum",
    ),
    pytest.param(
        answer(tryCatchPattern="None"),
        {"tryCatchPattern": None},
        ["tryCatchPattern: 'None' read as null"],
        id="none-string",
    ),
    pytest.param(
        answer(tryCatchPattern=""),
        {"tryCatchPattern": None},
        ["tryCatchPattern: '' read as null"],
        id="empty-string",
    ),
    pytest.param("```json\n" + answer() + "\n```", {}, [], id="fenced-json"),
]


@pytest.mark.parametrize(("text", "differs", "fixed"), TOLERATED)
def test_tolerated_slips_are_fixed_and_counted(text, differs, fixed):
    parsed = parse_answer(text)
    assert parsed.problem == ""
    assert parsed.explanation.model_dump() == {**GOOD, **differs}
    assert parsed.fixed == fixed


def test_unknown_keys_are_listed():
    parsed = parse_answer(answer(backgroundTag="validation", filePath="x.py"))
    assert parsed.dropped_keys == ["backgroundTag", "filePath"]


# (what the model sent, the problem quoted in the repair note)
INVALID = [
    pytest.param(
        answer(triggerScenarios=None),
        "does not match the schema: triggerScenarios: Input should be a valid string (got null)",
        id="null-for-a-string",
    ),
    pytest.param(
        answer(commonSituations=["a", "b"]),
        "does not match the schema: commonSituations: Input should be a valid string (got a list)",
        id="list-for-a-string",
    ),
    pytest.param(
        json.dumps({k: v for k, v in GOOD.items() if k != "tags"}),
        "does not match the schema: tags: Field required",
        id="missing-key",
    ),
    pytest.param(
        answer(handlingStrategy="Validate inputs"),
        "handlingStrategy must be one of validation, configuration, retry, fail-fast, "
        "got 'Validate inputs'",
        id="unknown-enum",
    ),
    pytest.param(
        answer(documentation="x" * (MAX_FIELD_CHARS + 1)),
        f"documentation is {MAX_FIELD_CHARS + 1} characters long (at most {MAX_FIELD_CHARS})",
        id="field-too-long",
    ),
    pytest.param(
        answer(tags=[f"t{n}" for n in range(13)]),
        "tags has 13 items (at most 12)",
        id="too-many-items",
    ),
    pytest.param('"just a string"', "not a JSON object but str", id="not-an-object"),
    pytest.param(
        "[" * 100_000, "not valid JSON: maximum recursion depth exceeded", id="deeply-nested"
    ),
]


@pytest.mark.parametrize(("text", "problem"), INVALID)
def test_invalid_answers_say_what_to_repair(text, problem):
    parsed = parse_answer(text)
    assert parsed.explanation is None
    assert parsed.problem.startswith(problem)


def test_the_schema_is_strict_with_the_four_strategies():
    schema = answer_schema()
    assert schema["additionalProperties"] is False
    assert set(schema["required"]) == set(GOOD)
    assert schema["properties"]["handlingStrategy"]["enum"] == [
        "validation",
        "configuration",
        "retry",
        "fail-fast",
    ]
    assert response_format_param("json_object") == {"type": "json_object"}
    assert response_format_param("text") is None


# (status, the server's message, the part of the request it refuses)
REFUSALS = [
    (400, "response_format of type json_schema is not supported", "response_format"),
    (422, "Unknown field: response_format.json_schema", "response_format"),
    (500, LLAMA_CPP_FORMAT_ERROR, "response_format"),
    (
        400,
        "Unsupported parameter: 'max_tokens' is not supported with this model. Use "
        "'max_completion_tokens' instead.",
        "max_tokens",
    ),
    (422, "Extra inputs are not permitted: body.max_completion_tokens", "max_completion_tokens"),
    (500, "internal error", None),
    (503, "max_tokens is too large for the server", None),  # a 5xx names only a format
    (400, "This model's maximum context length is 8192 tokens", None),
    (429, "rate limited: json_schema requests are limited", None),
]


@pytest.mark.parametrize(("status", "detail", "part"), REFUSALS)
def test_what_a_refusal_refuses(status, detail, part):
    assert refused_part(status, detail) == part


def test_a_refused_format_steps_down_once_and_never_back():
    profile = ServerProfile.first_guess("http://127.0.0.1:8000/v1")
    second = profile.after_refusal(500, LLAMA_CPP_FORMAT_ERROR, forced=False)
    third = second.after_refusal(400, "response_format json_object is not supported", False)
    assert (profile.response_format, second.response_format, third.response_format) == (
        "json_schema",
        "json_object",
        "text",
    )
    assert third.after_refusal(400, "response_format is not supported", False) is None
    assert profile.after_refusal(400, "json_schema is not supported", forced=True) is None


def test_a_refused_token_limit_is_dropped():
    profile = ServerProfile.first_guess("http://127.0.0.1:8000/v1")
    assert profile.limits(2000) == {"max_completion_tokens": 2000, "max_tokens": 2000}
    only = profile.after_refusal(
        422, "Extra inputs are not permitted: max_completion_tokens", False
    )
    assert only.limits(2000) == {"max_tokens": 2000}
    openai = ServerProfile.first_guess(None)
    assert openai.limits(2000) == {"max_completion_tokens": 2000}
