"""`vmine explain` on what users really paste: one case table per paste form (text in, message
out), the corpus of pastes through the command, and the property that every record is found
first whatever the values and the wrapping."""

from __future__ import annotations

import json
import random
import string
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from extractors.patterns import runtime_parts
from pipeline.cli import main
from pipeline.lookup.cleaning import clean, clean_lines
from pipeline.lookup.index import IndexedDataset, index_dataset
from pipeline.lookup.match import lookup
from pipeline.lookup.tracebacks import Candidate, candidates
from pipeline.lookup.wrappers import (
    client_prefix,
    exception_prefix,
    json_body,
    pydantic_items,
    quoted_message,
)
from tests.explain_corpus import (
    CORPUS_CASES,
    PASTES,
    SPECULATIVE,
    Paste,
    _hard_wrapped,
    _soft_wrapped,
    write_corpus_dataset,
)

# --- one case table per form: pasted text in, text or message out -------------------------

CLEANING_CASES = [
    (
        "ANSI colours",
        "\x1b[1;31mValueError\x1b[0m: bad \x1b[4mmode\x1b[24m",
        "ValueError: bad mode",
    ),
    (
        "OSC title and clipboard",
        "\x1b]0;title\x07\x1b]52;c;aGk=\x1b\\ValueError: x",
        "ValueError: x",
    ),
    ("colour codes without ESC", "[31mValueError: bad mode[0m", "ValueError: bad mode"),
    (
        "CRLF",
        "Traceback (most recent call last):\r\nValueError: x\r\n",
        "Traceback (most recent call last):\nValueError: x\n",
    ),
    ("lone CR", "line one\rValueError: x", "line one\nValueError: x"),
    (
        "[rank0]:",
        "[rank0]: Traceback (most recent call last):\n[rank0]: ValueError: x",
        "Traceback (most recent call last):\nValueError: x",
    ),
    ("torchrun [default0]:", "[default0]:ValueError: x", "ValueError: x"),
    ("mpirun", "[1,0]<stderr>:ValueError: x", "ValueError: x"),
    ("Ray worker", "(RayWorkerWrapper pid=4242, ip=10.0.0.7) ValueError: x", "ValueError: x"),
    (
        "vLLM process and logger",
        "(EngineCore_DP0 pid=12) ERROR 08-14 12:00:01.123 [core.py:7] ValueError: x",
        "ValueError: x",
    ),
    ("SGLang", "[2026-08-14 12:00:01 TP0] ValueError: x", "ValueError: x"),
    (
        "ISO timestamp with nanoseconds",
        "2026-08-14T12:00:01.123456789Z ValueError: x",
        "ValueError: x",
    ),
    ("logging asctime", "2026-08-14 12:00:01,123 - ValueError: x", "ValueError: x"),
    ("journald", "Aug 14 12:00:01 gpu-node-3 serve[2231]: ValueError: x", "ValueError: x"),
    ("logging default", "ERROR:root:ValueError: x", "ValueError: x"),
    (
        "docker compose (a prefix common to all lines)",
        "serve-1  | Traceback (most recent call last):\nserve-1  | ValueError: x",
        "Traceback (most recent call last):\nValueError: x",
    ),
    (
        "Markdown quote",
        "> Traceback (most recent call last):\n>\n> ValueError: x",
        "Traceback (most recent call last):\n\nValueError: x",
    ),
    ("Markdown code fence", "```python\nValueError: x\n```", "ValueError: x"),
    (
        "several prefixes on one line: container, process, logger",
        "vllm-api-1  | (APIServer pid=1) ERROR 03-02 10:11:12 [serving.py:1262] ValueError: x",
        "ValueError: x",
    ),
    ("docker compose v1", "vllm_1 | ValueError: x", "ValueError: x"),
    (
        "logging's name - level -",
        "2026-03-02 10:11:12,345 - sglang.srt.managers.scheduler - ERROR - ValueError: x",
        "ValueError: x",
    ),
    ("a level and a source file", "ERROR [serving.py:1262] ValueError: x", "ValueError: x"),
    ("a source file alone", "[serving.py:1262] ValueError: x", "ValueError: x"),
    (
        "uvicorn's level",
        'INFO:     127.0.0.1:5000 - "POST / HTTP/1.1" 400',
        '127.0.0.1:5000 - "POST / HTTP/1.1" 400',
    ),
    (
        "words shared by lines are no prefix",
        "policy must be one of\npolicy must be set",
        "policy must be one of\npolicy must be set",
    ),
]


@pytest.mark.parametrize(
    ("text", "expected"), [c[1:] for c in CLEANING_CASES], ids=[c[0] for c in CLEANING_CASES]
)
def test_cleaning_removes_what_wraps_lines(text: str, expected: str) -> None:
    assert clean(text) == expected


RECORD_CASES = [
    ("no logger prefix", "ValueError: x", None),
    ("vLLM's logger", "ERROR 08-14 12:00:01 [core.py:7] ValueError: x", "ERROR [core.py:7]"),
    (
        "an access-log line",
        'INFO:     127.0.0.1:5000 - "POST /v1/completions HTTP/1.1" 400 Bad Request',
        "access",
    ),
    (
        "several prefixes on one line",
        "api-1  | (APIServer pid=1) ERROR 08-14 12:00:01 [serving.py:1262] ValueError: x",
        "ERROR [serving.py:1262]",
    ),
    (
        "logging's name - level -",
        "2026-08-14 12:00:01,123 - vllm.engine - ERROR - ValueError: x",
        "ERROR vllm.engine",
    ),
    ("logging's default", "WARNING:root:slow step", "WARNING root"),
    ("SGLang's", "[2026-08-14 12:00:01 TP0] Scheduler hit an exception:", "log TP0"),
]


@pytest.mark.parametrize(
    ("line", "record"), [c[1:] for c in RECORD_CASES], ids=[c[0] for c in RECORD_CASES]
)
def test_each_line_keeps_its_log_record(line: str, record: str | None) -> None:
    assert clean_lines(line)[0].record == record


TRAILING_CASES = [
    (
        "an access-log line after the error",
        "ValueError: bad size\n"
        'INFO:     127.0.0.1:5000 - "POST /v1/completions HTTP/1.1" 400 Bad Request',
        "bad size",
    ),
    (
        "another logger's line after a logged traceback",
        "ERROR 08-14 12:00:01 [serving.py:12] Traceback (most recent call last):\n"
        'ERROR 08-14 12:00:01 [serving.py:12]   File "a.py", line 1, in f\n'
        "ERROR 08-14 12:00:01 [serving.py:12] ValueError: bad size\n"
        "INFO 08-14 12:00:02 [loggers.py:123] Engine 000: Avg prompt throughput: 0.0 tokens/s",
        "bad size",
    ),
    (
        "SGLang's next record after an unprefixed traceback",
        "[2026-08-14 12:00:01 TP0] Scheduler hit an exception: Traceback (most recent call "
        'last):\n  File "s.py", line 1, in run\nValueError: bad size\n\n'
        "[2026-08-14 12:00:01] Received sigquit from a child process.",
        "bad size",
    ),
    (
        "the logger's own continuation lines stay",
        "ERROR 08-14 12:00:01 [core.py:7] ValueError: Unknown policy 'lifo'.\n"
        "ERROR 08-14 12:00:01 [core.py:7] Choose one of: fcfs",
        "Unknown policy 'lifo'.\nChoose one of: fcfs",
    ),
    (
        "unprefixed continuation lines stay",
        "ERROR 08-14 12:00:01 [core.py:7] ValueError: Unknown policy 'lifo'.\nChoose one of: fcfs",
        "Unknown policy 'lifo'.\nChoose one of: fcfs",
    ),
]


@pytest.mark.parametrize(
    ("text", "message"), [c[1:] for c in TRAILING_CASES], ids=[c[0] for c in TRAILING_CASES]
)
def test_trailing_log_lines_are_no_part_of_the_message(text: str, message: str) -> None:
    assert candidates(text)[0] == Candidate(message, "ValueError")


QUOTED_CASES = [
    (
        "vLLM's worker error",
        "Worker failed with error 'max_len must be positive', please check the stack trace "
        "above for the root cause",
        [("max_len must be positive", None)],
    ),
    (
        "a message quoting values itself",
        "Worker failed with error 'Unknown policy 'lifo'', please check the stack trace above",
        [("Unknown policy 'lifo'", None)],
    ),
    (
        "an exception's repr, escapes undone",
        "RayTaskError(ValueError): ray::execute_method() (pid=7) ValueError('Unknown policy "
        "\\'lifo\\'.\\nChoose one of: fcfs')",
        [("Unknown policy 'lifo'.\nChoose one of: fcfs", "ValueError")],
    ),
    (
        "a repr in double quotes",
        "EngineDeadError: ValueError(\"bad mode 'x'\")",
        [("bad mode 'x'", "ValueError")],
    ),
    (
        "error: with a colon",
        "request failed, error: 'max_len must be positive'",
        [("max_len must be positive", None)],
    ),
    ("a quoted value is no message", "Error: 'fp8'", []),
    ("no quote", "Worker failed with error, see above", []),
]


@pytest.mark.parametrize(
    ("text", "expected"), [c[1:] for c in QUOTED_CASES], ids=[c[0] for c in QUOTED_CASES]
)
def test_quoted_messages(text: str, expected: list) -> None:
    assert quoted_message(text) == expected


PYDANTIC_CASES = [
    (
        "indented, with its tail",
        "1 validation error for EngineConfig\nmax_batch_size\n  Value "
        "error, bad size [type=value_error, input_value=6, input_type=int]",
        [("bad size", "ValueError")],
    ),
    (
        "without its indent",
        "Value error, bad size [type=value_error, input_value=6, input_type=int]",
        [("bad size", "ValueError")],
    ),
    (
        "on the header's line",
        "1 validation error for VllmConfig Value error, bad size "
        "[type=value_error, input_value=ArgsKwargs((), {'n': 6}), input_type=ArgsKwargs]",
        [("bad size", "ValueError")],
    ),
    ("without the [type=...] tail", "Value error, bad size", [("bad size", "ValueError")]),
    (
        "an assertion",
        "  Assertion failed, n > 0 [type=assertion_error, input_value=0, input_type=int]",
        [("n > 0", "AssertionError")],
    ),
    (
        "a message over two lines",
        "  Value error, Unknown policy 'lifo'.\nChoose one of: fcfs "
        "[type=value_error, input_value='lifo', input_type=str]",
        [("Unknown policy 'lifo'.\nChoose one of: fcfs", "ValueError")],
    ),
    (
        "two items, the footer dropped",
        "2 validation errors for C\na\n  Value error, first "
        "[type=value_error, input_value=1, input_type=int]\n    For further information visit "
        "https://errors.pydantic.dev/2.11/v/value_error\nb\n  Value error, second",
        [("first", "ValueError"), ("second", "ValueError")],
    ),
    (
        "a message quoting [type= is kept",
        "Value error, use [type=int] here",
        [("use [type=int] here", "ValueError")],
    ),
    ("no pydantic item", "bad size", []),
]


@pytest.mark.parametrize(
    ("text", "expected"), [c[1:] for c in PYDANTIC_CASES], ids=[c[0] for c in PYDANTIC_CASES]
)
def test_pydantic_items(text: str, expected: list) -> None:
    assert pydantic_items(text) == expected


CLIENT_CASES = [
    ("HTTP reason", "Bad Request: bad size", [("bad size", None)]),
    ("status and reason", "400 Bad Request: bad size", [("bad size", None)]),
    ("HTTP/1.1 status line", "HTTP/1.1 422 Unprocessable Entity: bad size", [("bad size", None)]),
    (
        "the openai client's status error",
        "Error code: 400 - {'error': 'bad'}",
        [("{'error': 'bad'}", None)],
    ),
    ("HTTP status", "HTTP 400: bad size", [("bad size", None)]),
    ("not a client prefix", "Bad size: 3", []),
]


@pytest.mark.parametrize(
    ("text", "expected"), [c[1:] for c in CLIENT_CASES], ids=[c[0] for c in CLIENT_CASES]
)
def test_client_prefixes(text: str, expected: list) -> None:
    assert client_prefix(text) == expected


JSON_CASES = [
    ("detail", '{"detail": "bad size"}', ["bad size"]),
    (
        "error.message",
        '{"error": {"message": "bad size", "type": "BadRequestError", "code": 400}}',
        ["bad size"],
    ),
    (
        "a Python dict (the openai client)",
        "{'error': {'message': 'bad size', 'param': None}}",
        ["bad size"],
    ),
    ("vLLM's older body", '{"object": "error", "message": "bad size", "code": 400}', ["bad size"]),
    (
        "FastAPI's list of errors",
        '{"detail": [{"loc": ["body"], "msg": "Value error, a"}, {"msg": "b"}]}',
        ["Value error, a", "b"],
    ),
    ("an error as a string", '{"error": "bad size"}', ["bad size"]),
    ("no message in it", '{"status": 400}', []),
    ("not JSON", "{bad size}", []),
    ("nested too deep to be a body", "{'a': " * 300 + "1" + "}" * 300, []),
]


@pytest.mark.parametrize(
    ("text", "expected"), [c[1:] for c in JSON_CASES], ids=[c[0] for c in JSON_CASES]
)
def test_json_error_bodies(text: str, expected: list[str]) -> None:
    assert [message for message, _ in json_body(text)] == expected


EXCEPTION_CASES = [
    ("a ValueError", "ValueError: bad size", [("bad size", "ValueError")]),
    (
        "a dotted class",
        "openai.BadRequestError: Error code: 400",
        [("Error code: 400", "BadRequestError")],
    ),
    (
        "a message on the following lines",
        "ValueError: bad size\nuse 8",
        [("bad size\nuse 8", "ValueError")],
    ),
    ("`Error:` names no class", "Error: bad size", [("bad size", None)]),
    ("a sentence with a colon", "max_len: 3 is too big", []),
]


@pytest.mark.parametrize(
    ("text", "expected"), [c[1:] for c in EXCEPTION_CASES], ids=[c[0] for c in EXCEPTION_CASES]
)
def test_exception_prefixes(text: str, expected: list) -> None:
    assert exception_prefix(text) == expected


# --- the corpus, through the command ------------------------------------------------------

# The score `--all` prints for each paste of the corpus (a pattern: the share of literal text).
SCORES = {
    "qualified exception class": 0.971,
    "pydantic, indented": 0.943,
    "pydantic, without its indent": 0.943,
    "pydantic, no [type=...] tail": 0.905,
    "pydantic, a multi-line message": 0.648,
    "openai client error, a Python dict": 0.971,
    "JSON error.message holding pydantic's rendering": 0.943,
    "FastAPI validation detail": 0.971,
    "[rank0]: prefixes": 0.971,
    "SGLang timestamps": 0.905,
    "docker compose": 0.971,
    "hard-wrapped by a terminal, inside words": 0.905,
    "wrapped at spaces by an issue template": 0.905,
    "Markdown code fence": 0.971,
    "older release, the clause the record appends is missing": 0.717,
    "message cut short": 0.875,
    "parts with a value": 0.970,
    "vLLM's worker error quoting the message": 0.905,
    "the openai client's body quoting a worker error": 0.973,
    "the API server's access-log line after the error": 0.971,
    "SGLang's scheduler traceback, then its sigquit line": 0.905,
    "logging's asctime, name and level": 0.971,
}
BY_ID = {case.id: case for case in CORPUS_CASES}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("corpus") / "output"
    write_corpus_dataset(out)
    return out


def test_the_corpus_has_every_form() -> None:
    assert len(PASTES) >= 50
    assert len({paste.name for paste in PASTES}) == len(PASTES)


@pytest.mark.parametrize("paste", PASTES, ids=[p.name for p in PASTES])
def test_each_paste_finds_its_record_first(corpus: Path, paste: Paste) -> None:
    result = CliRunner().invoke(main, ["explain", paste.text, "--dataset", str(corpus), "--all"])
    first = result.output.splitlines()[0]
    if paste.record is None:
        assert (result.exit_code, first) == (1, "No record is close to this message.")
        return
    case = BY_ID[paste.record]
    message = case.errorMessage.split("\n")[0]
    lines = result.output.splitlines()
    if paste.kind == "approximate":  # a note says why, the listing follows
        assert lines[1] == "No record matches this message; these are approximate (similarity):"
        first = lines[2]
    assert (result.exit_code, first) == (
        1 if paste.kind == "approximate" else 0,
        (
            f"{SCORES.get(paste.name, 1.0):.3f}  {paste.kind:<11}  {case.id}  "
            f"acme/serve@c0ffee1234  {case.filePath}:{case.lineNumber}  "
            + (message if len(message) <= 100 else message[:99] + "…")
        ),
    )


def test_json_names_the_kind_of_match_for_a_paste(corpus: Path) -> None:
    paste = next(p for p in PASTES if p.name == "message built from parts")
    result = CliRunner().invoke(main, ["explain", paste.text, "--dataset", str(corpus), "--json"])
    assert result.exit_code == 0
    line = json.loads(result.output)
    assert (line["match"]["kind"], line["match"]["score"], line["envelope"]["record"]["id"]) == (
        "parts",
        1.0,
        SPECULATIVE.id,
    )


# --- the property: every record, any values, any wrapping, is found first -------------------


def _wrap_forms() -> list:
    """Each paste form as a function of the message."""

    def traceback(m: str) -> str:
        return (
            'Traceback (most recent call last):\n  File "/srv/a.py", line 3, in <module>\n'
            f"    main()\nValueError: {m}"
        )

    return [
        lambda m: m,
        lambda m: f"ValueError: {m}",
        traceback,
        lambda m: "\n".join("[rank0]: " + line for line in traceback(m).split("\n")),
        lambda m: "\n".join(
            "(APIServer pid=7) ERROR 08-14 12:00:01 [api.py:9] " + line
            for line in traceback(m).split("\n")
        ),
        lambda m: (
            f"  Value error, {m} [type=value_error, input_value=ArgsKwargs((), {{}}), "
            "input_type=ArgsKwargs]"
        ),
        lambda m: (
            f"pydantic_core._pydantic_core.ValidationError: 1 validation error for "
            f"EngineConfig Value error, {m} [type=value_error, input_value=1, "
            "input_type=int]"
        ),
        lambda m: f"Value error, {m}",
        lambda m: f"Bad Request: {m}",
        lambda m: f'{{"detail": {json.dumps(m)}}}',
        lambda m: (
            "openai.BadRequestError: Error code: 400 - "
            + repr({"error": {"message": m, "type": "BadRequestError", "code": 400}})
        ),
        lambda m: f"\x1b[31mValueError: {m}\x1b[0m",
        lambda m: traceback(m).replace("\n", "\r\n"),
        lambda m: _hard_wrapped(m, 23),
        lambda m: _soft_wrapped(m, 31),
        lambda m: "```\n" + traceback(m) + "\n```",
    ]


FORMS = _wrap_forms()
# Values as a run-time part renders them: numbers, names, quoted names, lists.
VALUES = st.one_of(
    st.integers(-5, 100_000).map(str),
    st.text(string.ascii_lowercase + "_", min_size=1, max_size=12),
    st.text(string.ascii_lowercase, min_size=1, max_size=8).map(repr),
    st.lists(st.integers(0, 9), min_size=1, max_size=3).map(str),
)


def _rendered(case, values: list[str], chosen: list[bool]) -> str:
    if case.messageFragments:  # built from parts: some of the pieces, in order, joined
        pieces = [
            p.replace("got ", f"got {values[0]}")
            for p, keep in zip(case.messageFragments, chosen, strict=False)
            if keep and len(p) > 2
        ]
        return " ".join(pieces or case.messageFragments[:1])
    message = case.errorMessage
    for hole, value in zip(runtime_parts(message), values, strict=False):
        message = message.replace(hole, value, 1)
    return message


@pytest.fixture(scope="module")
def corpus_index(corpus: Path) -> IndexedDataset:
    return index_dataset(next(corpus.glob("*/*/*")))


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    case=st.sampled_from(CORPUS_CASES),
    form=st.sampled_from(range(len(FORMS))),
    values=st.lists(VALUES, min_size=3, max_size=3),
    chosen=st.lists(st.booleans(), min_size=4, max_size=4),
)
def test_every_record_is_found_first_in_every_paste_form(
    corpus_index: IndexedDataset, case, form: int, values: list[str], chosen: list[bool]
) -> None:
    message = _rendered(case, values, chosen)
    found = lookup(FORMS[form](message), [corpus_index])
    assert found.matches and found.matches[0].kind != "approximate", message
    assert found.matches[0].entry.id == case.id, message


def test_nothing_from_another_function_wins_when_its_record_is_missing(
    corpus_index: IndexedDataset,
) -> None:
    """Leave each function out: its messages, pasted, never match another function with
    exit code 0 (a confident wrong answer)."""
    rng = random.Random(5)
    for case in CORPUS_CASES:
        others = IndexedDataset(corpus_index.root, corpus_index.repo, corpus_index.sha)
        others.patterns = [p for p in corpus_index.patterns if p.raw["qualname"] != case.qualname]
        for form in FORMS:
            values = [str(rng.randint(1, 999)) for _ in range(3)]
            found = lookup(form(_rendered(case, values, [True] * 4)), [others])
            assert not found.sure, (case.id, found.matches[0].kind, found.matches[0].entry.id)
