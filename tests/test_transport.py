"""Reading what a server sent: a chat completion or not (transport.py), and the lines of a
batch's output and error files (batch.py)."""

from __future__ import annotations

import json

import pytest

from pipeline.explainers.batch import read_results, request_line
from pipeline.explainers.transport import Completion, NotACompletion, read_completion


def completion(content: object = "{}", **more: object) -> dict:
    return {
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        **more,
    }


# (body, what is read)
COMPLETIONS = [
    (
        completion("{}", usage={"prompt_tokens": 12, "completion_tokens": 3}),
        Completion("{}", 12, 3, "stop"),
    ),
    (completion(None), Completion("", 0, 0, "stop")),  # a refusal carries no content
    ({"choices": []}, Completion("", 0, 0, None)),
    (
        completion("x", usage={"prompt_tokens": "12", "completion_tokens": -1}),
        Completion("x", 0, 0, "stop"),
    ),  # counts that are not counts count nothing
]


@pytest.mark.parametrize(("body", "read"), COMPLETIONS)
def test_what_a_completion_says(body, read):
    assert read_completion(json.dumps(body).encode()) == read
    assert read_completion(body) == read


# (body, the one-line reason)
NOT_COMPLETIONS = [
    (
        b"<html><body>502 Bad Gateway</body></html>",
        "a body that is not JSON: '<html><body>502 Bad Gateway</body></html>'",
    ),
    (b"\xff\xfe", "a body that is not JSON: '\ufffd\ufffd'"),
    (b"[1, 2]", "JSON that is not a chat completion: '[1, 2]'"),
    (b'{"error": "overloaded"}', 'JSON that is not a chat completion: \'{"error": "overloaded"}\''),
    (json.dumps(completion(["a"])).encode(), "JSON that is not a chat completion: "),
    (b"[" * 100_000, "a body that is not JSON: "),
]


@pytest.mark.parametrize(("body", "reason"), NOT_COMPLETIONS)
def test_a_body_that_is_not_a_completion_says_why_in_one_line(body, reason):
    with pytest.raises(NotACompletion) as caught:
        read_completion(body)
    assert str(caught.value).startswith(reason)
    assert "\n" not in str(caught.value)


def test_batch_result_lines_by_custom_id():
    lines = [
        {
            "custom_id": "a.1",
            "response": {"status_code": 200, "body": completion("{}")},
            "error": None,
        },
        {
            "custom_id": "b.1",
            "response": None,
            "error": {"code": "batch_expired", "message": "not run in time"},
        },
        {
            "custom_id": "c.1",
            "response": {
                "status_code": 400,
                "body": {"error": {"message": "response_format json_schema is not supported"}},
            },
            "error": None,
        },
        {"custom_id": "d.1", "response": {"status_code": 200, "body": "<html>"}, "error": None},
        {"no": "custom id"},
    ]
    text = "\n".join(json.dumps(line) for line in lines) + "\n{torn line\n"
    assert read_results(text) == {
        "a.1": Completion("{}", 0, 0, "stop"),
        "b.1": "batch_expired: not run in time",
        "c.1": "HTTP 400: response_format json_schema is not supported",
        "d.1": "HTTP 200 with a body that is not JSON: '<html>'",
    }


def test_a_request_line_is_the_batch_apis_shape():
    assert json.loads(request_line("k.1", {"model": "m"})) == {
        "custom_id": "k.1",
        "method": "POST",
        "url": "/v1/chat/completions",
        "body": {"model": "m"},
    }
