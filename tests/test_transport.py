"""Reading what a server sent: a chat completion or not (transport.py), and the lines of a
batch's output and error files (batch.py)."""

from __future__ import annotations

import asyncio
import gzip
import json
import zlib

import httpx2
import pytest

from pipeline.explainers.batch import read_results, request_line
from pipeline.explainers.transport import (
    BadResponse,
    CappedTransport,
    Completion,
    NotACompletion,
    _CappedStream,
    content_codings,
    read_completion,
)


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


# -- compressed bodies: the bound counts decoded bytes (issue 17) ------------------------------


def gzipped(data: bytes, layers: int = 1) -> bytes:
    for _ in range(layers):
        data = gzip.compress(data, 9, mtime=0)  # the same bytes in every test process
    return data


def bomb(inflated: int, layers: int) -> bytes:
    """Spaces that inflate to `inflated` bytes, gzipped `layers` times, made a MiB at a time."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    data = b"".join(packer.compress(b" " * 2**20) for _ in range(inflated >> 20)) + packer.flush()
    return gzipped(data, layers - 1)


class Chunks(httpx2.AsyncByteStream):
    def __init__(self, data: bytes, size: int = 4096) -> None:
        self.data, self.size, self.read = data, size, 0

    async def __aiter__(self):
        for at in range(0, len(self.data), self.size):
            self.read = at + self.size
            yield self.data[at : at + self.size]


def decoded_pieces(data: bytes, codings: list[str], limit: int) -> tuple[list[int], str | None]:
    """The sizes of the pieces a capped stream yields, and why it stopped (None: the end)."""

    async def run() -> tuple[list[int], str | None]:
        pieces: list[int] = []
        try:
            async for piece in _CappedStream(Chunks(data), limit, codings):
                pieces.append(len(piece))
        except BadResponse as exc:
            return pieces, str(exc)
        return pieces, None

    return asyncio.run(run())


@pytest.mark.parametrize("layers", [1, 2])
def test_a_zip_bomb_stops_decoding_at_the_bound(layers):
    # 64 MiB of spaces: about 64 KB gzipped once, a few hundred bytes twice.
    data = bomb(64 * 2**20, layers)
    pieces, stopped = decoded_pieces(data, ["gzip"] * layers, 2 * 2**20)
    assert stopped == "the response is larger than 2048 KiB (it goes on past that); dropped"
    assert sum(pieces) <= 2 * 2**20  # decoded up to the bound, a step at a time
    assert max(pieces) <= 64 * 1024


# (what the server sent, its Content-Encoding)
ENCODED = [
    (gzipped(b'{"ok": true}'), ["gzip"]),
    (gzipped(b'{"ok": true}', 2), ["gzip, gzip"]),
    (gzipped(b'{"ok": true}', 2), ["gzip", "x-gzip"]),
    (zlib.compress(b'{"ok": true}'), ["deflate"]),
    (zlib.compress(b'{"ok": true}')[2:-4], ["deflate"]),  # raw deflate, no zlib header
    (b'{"ok": true}', ["identity"]),
]


@pytest.mark.parametrize(
    ("body", "codings"), ENCODED, ids=["gzip", "gzip,gzip", "gzip+x-gzip", "deflate", "raw", "id"]
)
def test_a_compressed_answer_is_decoded_once(body, codings):
    pieces, stopped = decoded_pieces(body, content_codings(codings), 2**20)
    assert stopped is None and sum(pieces) == len(b'{"ok": true}')


def transport_response(headers: dict[str, str], body: bytes) -> httpx2.Response | str:
    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers=headers, stream=Chunks(body))

    async def run() -> httpx2.Response | str:
        transport = CappedTransport(httpx2.MockTransport(handler), 2**20)
        request = httpx2.Request("POST", "http://127.0.0.1/v1/chat/completions")
        try:
            response = await transport.handle_async_request(request)
        except BadResponse as exc:
            return str(exc)
        await response.aread()
        return response

    return asyncio.run(run())


def test_the_transport_hands_on_a_decoded_body_without_its_encoding():
    response = transport_response(
        {"Content-Encoding": "gzip, gzip", "Content-Length": "40"}, gzipped(b'{"a": 1}', 2)
    )
    assert response.content == b'{"a": 1}'
    assert "content-encoding" not in response.headers  # httpx must not decode it again


@pytest.mark.parametrize(
    ("encoding", "why"),
    [
        ("br", "compressed as br, which vmine does not read"),
        ("gzip, zstd", "compressed as zstd, which vmine does not read"),
    ],
)
def test_a_body_in_an_encoding_vmine_does_not_read_is_refused_in_one_line(encoding, why):
    answer = transport_response({"Content-Encoding": encoding}, b"\x00\x01")
    assert isinstance(answer, str) and why in answer and "\n" not in answer


def test_a_body_that_does_not_decompress_is_refused():
    pieces, stopped = decoded_pieces(b"not gzip at all", ["gzip"], 2**20)
    assert stopped == "the response does not decompress as its Content-Encoding says"
