"""`vmine explain`: pasted text -> candidate messages -> ranked records -> a page or JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from extractors.patterns import pattern_fragments
from pipeline.cli import main
from pipeline.lookup.classes import class_agrees
from pipeline.lookup.cleaning import strip_line_prefixes
from pipeline.lookup.index import index_dataset
from pipeline.lookup.match import doubt, lookup, on_word_edges
from pipeline.lookup.tracebacks import Candidate, candidates
from pipeline.lookup.wording import opens_with_comparison
from tests.datasets import CASES, SHA, Case, write_fixture_dataset

# --- finding the messages in pasted text --------------------------------------------------

CHAINED = """\
Traceback (most recent call last):
  File "/srv/app/launch.py", line 40, in build
    config = EngineConfig(**args)
  File "/srv/app/config.py", line 12, in __init__
    raise ValueError("--use-fast-decode requires --decode-backend flash")
ValueError: --use-fast-decode requires --decode-backend flash

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "/srv/app/launch.py", line 44, in build
    report(exc)
KeyError: 'report'

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/srv/app/launch.py", line 60, in <module>
    main()
RuntimeError: engine failed to start"""

PYDANTIC = """\
Traceback (most recent call last):
  File "/srv/app/launch.py", line 8, in <module>
    EngineConfig(max_batch_size=6)
pydantic_core._pydantic_core.ValidationError: 1 validation error for EngineConfig
max_batch_size
  Value error, max_batch_size must be a power of 2, got 6 [type=value_error, input_value=6, input_type=int]
    For further information visit https://errors.pydantic.dev/2.11/v/value_error"""

MULTILINE_PYDANTIC = """\
pydantic_core._pydantic_core.ValidationError: 1 validation error for SchedulerConfig
  Value error, Unknown scheduler policy 'lifo'.
Choose one of: fcfs, priority [type=value_error, input_value=ArgsKwargs((), {'policy': 'lifo'}), input_type=ArgsKwargs]
    For further information visit https://errors.pydantic.dev/2.11/v/value_error"""


# Two processes log their tracebacks one after the other, with no chaining line between.
TWO_PROCESSES = """\
Traceback (most recent call last):
  File "/srv/app/engine.py", line 90, in start
    raise ValueError("queue_depth (0) must be positive")
ValueError: queue_depth (0) must be positive
Traceback (most recent call last):
  File "/srv/app/server.py", line 12, in main
    wait_for_engine()
RuntimeError: engine failed to start, see the error above"""


def _prefixed(text: str, prefix: str) -> str:
    return "\n".join(prefix + line for line in text.split("\n"))


CANDIDATE_CASES = [
    ("a plain message", "max_len must be positive", [Candidate("max_len must be positive")]),
    (
        "a message with a colon is kept whole",
        "max_len: 3 is too big",
        [Candidate("max_len: 3 is too big")],
    ),
    (
        "an exception line",
        "ValueError: max_len must be positive",
        [
            Candidate("max_len must be positive", "ValueError"),
            Candidate("ValueError: max_len must be positive", "ValueError"),
        ],
    ),
    (
        "a builtins-qualified class",
        "builtins.ValueError: bad mode 'x'",
        [
            Candidate("bad mode 'x'", "ValueError"),
            Candidate("builtins.ValueError: bad mode 'x'", "ValueError"),
        ],
    ),
    (
        "another exception class",
        "acme.errors.ConfigError: bad mode",
        [
            Candidate("bad mode", "ConfigError"),
            Candidate("acme.errors.ConfigError: bad mode", "ConfigError"),
        ],
    ),
    (
        "a CLI's `Error:` names no class",
        "Error: max_len must be positive",
        [Candidate("max_len must be positive"), Candidate("Error: max_len must be positive")],
    ),
    (
        "chained exceptions: every exception line, the last raised first",
        CHAINED,
        [
            Candidate("engine failed to start", "RuntimeError"),
            Candidate("'report'", "KeyError"),
            Candidate("--use-fast-decode requires --decode-backend flash", "ValueError"),
        ],
    ),
    (
        "two tracebacks in a row: each ends its own message",
        TWO_PROCESSES,
        [
            Candidate("engine failed to start, see the error above", "RuntimeError"),
            Candidate("queue_depth (0) must be positive", "ValueError"),
        ],
    ),
    (
        "pydantic's wrapping of a ValueError",
        PYDANTIC,
        [
            Candidate("max_batch_size must be a power of 2, got 6", "ValueError"),
            Candidate(
                "1 validation error for EngineConfig\nmax_batch_size\n  Value error, "
                "max_batch_size must be a power of 2, got 6 [type=value_error, "
                "input_value=6, input_type=int]",
                "ValidationError",
            ),
        ],
    ),
    (
        "a multi-line message inside pydantic's wrapping",
        MULTILINE_PYDANTIC,
        [
            Candidate(
                "Unknown scheduler policy 'lifo'.\nChoose one of: fcfs, priority", "ValueError"
            ),
            Candidate(
                "1 validation error for SchedulerConfig\n  Value error, Unknown scheduler "
                "policy 'lifo'.\nChoose one of: fcfs, priority [type=value_error, "
                "input_value=ArgsKwargs((), {'policy': 'lifo'}), input_type=ArgsKwargs]",
                "ValidationError",
            ),
            Candidate(MULTILINE_PYDANTIC, "ValidationError"),
        ],
    ),
]


@pytest.mark.parametrize(
    ("text", "expected"), [c[1:] for c in CANDIDATE_CASES], ids=[c[0] for c in CANDIDATE_CASES]
)
def test_candidates_found_in_pasted_text(text: str, expected: list[Candidate]) -> None:
    assert candidates(text) == expected


PREFIX_CASES = [
    ("vLLM process prefix", "(APIServer pid=2994609) ", "ValueError: x"),
    ("vLLM logger prefix", "ERROR 08-14 12:00:01 [core.py:700] ", "ValueError: x"),
    ("both", "(EngineCore_DP0 pid=12) ERROR 08-14 12:00:01.123 [core.py:7] ", "ValueError: x"),
    ("SGLang timestamp", "[2026-08-14 12:00:01 TP0] ", "ValueError: x"),
    ("docker compose prefix", "serve-1  | ", "ValueError: x"),
]


@pytest.mark.parametrize(
    ("prefix", "line"), [c[1:] for c in PREFIX_CASES], ids=[c[0] for c in PREFIX_CASES]
)
def test_log_line_prefixes_are_stripped(prefix: str, line: str) -> None:
    text = _prefixed(f'Traceback (most recent call last):\n  File "a.py", line 1\n{line}', prefix)
    assert strip_line_prefixes(text) == (
        f'Traceback (most recent call last):\n  File "a.py", line 1\n{line}'
    )


def test_lines_sharing_words_are_not_taken_for_a_prefix() -> None:
    text = "policy must be one of\npolicy must be set"
    assert strip_line_prefixes(text) == text


PATTERN_CASES = [
    (
        "--use-fast-decode requires --decode-backend flash",
        ("--use-fast-decode requires --decode-backend flash",),
    ),
    (
        "max_batch_size must be a power of 2, got (.*?)",
        ("max_batch_size must be a power of 2, got ", ""),
    ),
    ("Unknown policy (.*?)\\. Choose one of: (.*?)", ("Unknown policy ", ". Choose one of: ", "")),
    ("\\(P/D disaggregation\\) \\\\(.*?)", ("(P/D disaggregation) \\", "")),
    ("a+ b", None),  # regex syntax outside the contract
]


@pytest.mark.parametrize(("pattern", "fragments"), PATTERN_CASES)
def test_pattern_fragments(pattern: str, fragments: tuple[str, ...] | None) -> None:
    assert pattern_fragments(pattern) == fragments


# --- ranking ------------------------------------------------------------------------------


def test_exact_literal_match_ranks_before_pattern_matches(tmp_path: Path) -> None:
    catch_all = Case(
        id="bbbb000000000001",
        slug="requires",
        filePath="serve/config/engine.py",
        lineNumber=120,
        qualname="EngineConfig.check_flags",
        validatorKind="name",
        errorMessage="{flag} requires --decode-backend flash",
        messagePattern="(.*?) requires --decode-backend flash",
        messageStatus="template",
        guards=[],
        source=CASES[0].source,
        sourceStart=101,
        explanation=CASES[0].explanation,
    )
    root = write_fixture_dataset(tmp_path, [*CASES, catch_all])
    found = lookup("--use-fast-decode requires --decode-backend flash", [index_dataset(root)])
    assert [(m.entry.id, m.kind, round(m.score, 3)) for m in found.matches] == [
        ("aaaa000000000002", "exact", 1.0),
        ("bbbb000000000001", "pattern", 0.63),
    ]


# --- the command --------------------------------------------------------------------------


@pytest.fixture()
def output(tmp_path: Path) -> Path:
    write_fixture_dataset(tmp_path / "output")
    return tmp_path / "output"


def _explain(output: Path, *args: str, stdin: str | None = None):
    result = CliRunner().invoke(main, ["explain", *args, "--dataset", str(output)], input=stdin)
    dataset = output / "acme" / "serve" / SHA
    return result.exit_code, result.output.replace(str(dataset), "DATASET")


LITERAL_PAGE = """\
Match: exact message.

acme/serve · error · ValueError

--use-fast-decode requires --decode-backend flash

Error message

  --use-fast-decode requires --decode-backend flash

What it means

  Raised when fast decode runs on a backend other than flash.

When it is raised

  EngineConfig.check_decode raises it when all of these hold:
  - self.use_fast_decode
  - self.decode_backend != "flash"

Source

  Thrown at serve/config/engine.py:108

    101 |     @model_validator(mode="after")
    102 |     def check_decode(self) -> "EngineConfig":
    103 |         if not self.use_fast_decode:
    104 |             return self
    105 |         if self.speculative_tokens > 0:
    106 |             raise ValueError("--use-fast-decode does not support speculative decoding")
    107 |         if self.decode_backend != "flash":
  > 108 |             raise ValueError("--use-fast-decode requires --decode-backend flash")
    109 |         return self
    110 |
    111 |     @field_validator("max_batch_size")
    112 |     @classmethod
    113 |     def validate_batching(cls, value: int) -> int:
    114 |         if value & (value - 1):
    115 |             raise ValueError(f"max_batch_size must be a power of 2, got {value}")
    116 |         return value

Solutions

  1. Pass --decode-backend flash.
  2. Drop --use-fast-decode.

Example fix

  # before
  serve --use-fast-decode
  # after
  serve

View on GitHub

  https://github.com/acme/serve/blob/c0ffee1234555555555555555555555555555555/serve/config/engine.py#L101-L116
  (pinned to c0ffee1234)

Record aaaa000000000002: DATASET/records/aaaa000000000002.json
"""


def test_literal_message_prints_the_record_page(output: Path) -> None:
    assert _explain(output, "--use-fast-decode requires --decode-backend flash") == (
        0,
        LITERAL_PAGE,
    )


def test_message_read_from_stdin(output: Path) -> None:
    code, text = _explain(output, "-", stdin="--use-fast-decode requires --decode-backend flash\n")
    assert (code, text) == (0, LITERAL_PAGE)


def test_fstring_message_with_value_filled_in(output: Path) -> None:
    code, text = _explain(output, "max_batch_size must be a power of 2, got 6", "--all")
    assert (code, text) == (
        0,
        (
            "0.971  pattern      aaaa000000000003  acme/serve@c0ffee1234  "
            "serve/config/engine.py:115  max_batch_size must be a power of 2, got {value}\n"
        ),
    )


def test_page_of_a_template_shows_the_values_in_the_pasted_message(output: Path) -> None:
    code, text = _explain(output, "ValueError: max_batch_size must be a power of 2, got 6")
    assert code == 0
    lines = text.splitlines()
    start = lines.index("In your message")
    assert lines[start - 2 : start + 5] == [
        "  max_batch_size must be a power of 2, got {value}",
        "",
        "In your message",
        "",
        "  {value} = 6",
        "",
        "What it means",
    ]
    guards = lines.index("When it is raised")
    assert lines[guards + 2 : guards + 4] == [
        "  EngineConfig.validate_batching raises it when this holds:",
        "  - value & (value - 1)",
    ]


def test_traceback_with_chained_exceptions_finds_the_value_error(output: Path) -> None:
    code, text = _explain(output, CHAINED)
    assert code == 0
    assert text.splitlines()[:5] == [
        "Match: exact message.",
        "",
        "acme/serve · error · ValueError",
        "",
        "--use-fast-decode requires --decode-backend flash",
    ]


def test_pydantic_validation_error_with_log_prefixes(output: Path) -> None:
    pasted = _prefixed(
        MULTILINE_PYDANTIC, "(APIServer pid=2994609) ERROR 08-14 12:00:01 [api_server.py:91] "
    )
    code, text = _explain(output, pasted, "--all")
    assert (code, text) == (
        0,
        (
            "0.648  pattern      aaaa000000000004  acme/serve@c0ffee1234  "
            "serve/config/scheduler.py:12  Unknown scheduler policy {self.policy!r}.\n"
        ),
    )


def test_message_raised_as_another_exception_class_is_only_approximate(
    output: Path,
) -> None:
    code, text = _explain(output, "RuntimeError: --use-fast-decode requires --decode-backend flash")
    assert code == 1
    assert text.splitlines()[:2] == [
        "Note: the closest record is no sure match: it raises ValueError, and the paste names "
        "RuntimeError.",
        "No record matches this message exactly. The closest records (approximate, by text "
        "similarity):",
    ]


def test_a_wrapper_of_the_records_class_is_a_match(output: Path) -> None:
    code, text = _explain(
        output,
        "fastapi.exceptions.RequestValidationError: --use-fast-decode requires "
        "--decode-backend flash",
    )
    assert (code, text.splitlines()[0]) == (0, "Match: exact message.")


def test_no_match_falls_back_to_approximate_and_says_so(output: Path) -> None:
    code, text = _explain(output, "--use-fast-decode needs the flash decode backend")
    assert code == 1
    # a few lines and a short list: no page of a record that is not the one pasted
    assert text == (
        "No record matches this message. The nearest records (text similarity):\n"
        "  0.32  --use-fast-decode requires --decode-backend flash  (serve/config/engine.py:108)\n"
        "Paste the whole message (the traceback's last line) to match it; --all lists\n"
        "every candidate, --json gives the nearest records whole.\n"
    )


def test_all_on_no_match_lists_approximate_scores(output: Path) -> None:
    assert _explain(output, "--use-fast-decode needs the flash decode backend", "--all") == (
        1,
        "No record matches this message; these are approximate (similarity):\n"
        "0.321  approximate  aaaa000000000002  acme/serve@c0ffee1234  serve/config/engine.py:108"
        "  --use-fast-decode requires --decode-backend flash\n",
    )


def test_nothing_close_says_so(output: Path) -> None:
    assert _explain(output, "zzz qqq") == (
        1,
        "No record matches this message, and none is close to it.\nSearched for: zzz qqq\n",
    )


def test_json_prints_the_matching_envelopes(output: Path) -> None:
    code, text = _explain(
        output, "ValueError: max_batch_size must be a power of 2, got 12", "--json"
    )
    assert code == 0
    lines = text.splitlines()
    assert len(lines) == 1
    on_disk = output / "acme" / "serve" / SHA / "records" / "aaaa000000000003.json"
    line = json.loads(lines[0])
    assert line["envelope"] == json.loads(on_disk.read_text())
    assert line["match"] == {
        "kind": "pattern",
        "score": 0.943,
        "message": "max_batch_size must be a power of 2, got 12",
        "values": [{"part": "{value}", "text": "12"}],
        "wording": None,
        "releases": [
            {
                "release": "acme/serve@c0ffee1234",
                "repo": "acme/serve",
                "analyzedSha": SHA,
                "dataset": "DATASET",
                "shown": True,
            }
        ],
        "history": None,  # one release searched: no history to tell
    }


def test_datasets_default_to_output_folder(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    write_fixture_dataset(Path("output"))
    result = CliRunner().invoke(
        main, ["explain", "--use-fast-decode requires --decode-backend flash", "--all"]
    )
    assert (result.exit_code, result.output) == (
        0,
        (
            "1.000  exact        aaaa000000000002  acme/serve@c0ffee1234  serve/config/engine.py:108"
            "  --use-fast-decode requires --decode-backend flash\n"
        ),
    )


@pytest.mark.parametrize(("message", "stdin"), [("", None), ("-", " \n")])
def test_empty_message_is_an_input_error(output: Path, message: str, stdin: str | None) -> None:
    assert _explain(output, message, stdin=stdin) == (
        2,
        "Error: MESSAGE is empty: pass the error message, or - and paste it on stdin\n",
    )


def test_no_dataset_is_an_input_error(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    result = CliRunner().invoke(main, ["explain", "x", "--dataset", str(tmp_path / "empty")])
    assert result.exit_code == 2
    assert result.output == (
        f"Error: {tmp_path / 'empty'}: no dataset (manifest.json) under this folder; write one "
        "with `vmine run`\n"
    )


# --- end to end on a dataset written by `vmine run` ---------------------------------------

ENGINE_PY = """\
from dataclasses import dataclass


@dataclass
class CacheConfig:
    block_size: int = 16
    swap_space: float = 4.0

    def __post_init__(self) -> None:
        if self.block_size not in (8, 16, 32):
            raise ValueError(
                f"block_size must be one of 8, 16 or 32 (got {self.block_size}). "
                "Pass --block-size with a supported value."
            )
        if self.swap_space < 0:
            raise ValueError("swap_space must not be negative")
"""


@pytest.mark.slow
def test_explain_and_render_a_dataset_written_by_run(tmp_path: Path) -> None:
    from tests.conftest import make_git_repo

    repo = make_git_repo(tmp_path / "engine", {"engine/cache.py": ENGINE_PY})
    runner = CliRunner()
    ran = runner.invoke(
        main,
        [
            "run",
            str(repo),
            "--repo-name",
            "acme/engine",
            "-o",
            str(tmp_path / "out"),
            "--cache-dir",
            str(tmp_path / "cache"),
            "--llm",
            "offline",
            "--ci",
        ],
    )
    assert ran.exit_code == 0, ran.output
    traceback = (
        "Traceback (most recent call last):\n"
        '  File "serve.py", line 3, in <module>\n'
        "    CacheConfig(block_size=12)\n"
        "ValueError: block_size must be one of 8, 16 or 32 (got 12). Pass --block-size with a "
        "supported value."
    )
    found = runner.invoke(main, ["explain", traceback, "--dataset", str(tmp_path / "out"), "--all"])
    assert found.exit_code == 0, found.output
    assert found.output.split("  ")[1:2] == ["pattern"]
    assert found.output.rstrip().endswith(
        "engine/cache.py:11  block_size must be one of 8, 16 or 32 (got {self.block_size}). "
        "Pass --block-size with a supported v…"  # --all cuts messages at 100 characters
    )
    for fmt, page in (("markdown", "index.md"), ("html", "index.html")):
        rendered = runner.invoke(
            main, ["render", str(tmp_path / "out"), "--format", fmt, "-o", str(tmp_path / fmt)]
        )
        assert rendered.exit_code == 0, rendered.output
        assert "swap_space must not be negative" in (tmp_path / fmt / page).read_text()


def test_one_word_is_close_to_nothing(output: Path) -> None:
    assert _explain(output, "decoding", "--all") == (1, "No record is close to this message.\n")


def _case(
    id: str, qualname: str, message: str, pattern: str, status: str, fragments: tuple[str, ...] = ()
) -> Case:
    return Case(
        id=id,
        slug=id,
        filePath="serve/spec/checks.py",
        lineNumber=40,
        qualname=qualname,
        validatorKind="name",
        errorMessage=message,
        messagePattern=pattern,
        messageStatus=status,
        guards=[],
        source=CASES[0].source,
        sourceStart=21,
        explanation=CASES[0].explanation,
        messageFragments=list(fragments),
    )


# Another function's message in nearly the same words: never a match (exit 0).
PIPELINE = _case(
    "cccc000000000001",
    "verify_pipeline_support",
    "{type(model).__name__} does not support {method} with pipeline parallelism",
    "(.*?) does not support (.*?) with pipeline parallelism",
    "template",
)
BUILT = _case(
    "cccc000000000002",
    "describe_marlin",
    "{?Marlin does not support weight_bits = {bits}.|None}",
    "(?:Marlin does not support weight_bits = (.*?)\\.|None)",
    "partial",
    ("Marlin does not support weight_bits = ", ".", "None"),
)


@pytest.mark.parametrize(
    ("paste", "kind"),
    [
        # the record always renders its {method} between 'support' and 'with': the paste has none
        ("HiSparse does not support pipeline parallelism.", "approximate"),
        ("Llama does not support eagle with pipeline parallelism yet.", "reworded"),
        ("Llama does not support eagle with pipeline", "reworded"),  # cut short
        # a release that had no value there yet
        ("Llama does not support with pipeline parallelism yet", "reworded"),
        # a piece as short as `None` says nothing about where a message comes from
        ("TP None", None),
        ("Marlin does not support weight_bits = 3", "parts"),
    ],
)
def test_a_message_of_another_function_in_near_words_is_no_match(
    tmp_path: Path, paste: str, kind: str | None
) -> None:
    root = write_fixture_dataset(tmp_path, [*CASES, PIPELINE, BUILT])
    found = lookup(paste, [index_dataset(root)])
    assert (found.matches[0].kind if found.matches else None) == kind


# --- never confident on weak evidence (match.doubt, classes.class_agrees) -------------------

DOUBT_CASES = [
    ("most of the paste is the record's", 40, 48, True, False, None),
    ("short: found in many messages", 15, 15, True, False, "short"),
    ("a third of the message is enough", 16, 48, True, False, None),
    ("sparse: most of the paste is not the record's", 20, 90, True, False, "sparse"),
    ("sparse: the value that starts it is most of it", 18, 42, True, True, "sparse"),
    ("more than half a leading-value message", 18, 30, True, True, None),
    ("another exception class", 40, 48, False, False, "class"),
]


@pytest.mark.parametrize(
    ("literal", "message", "agrees", "leading", "expected"),
    [c[1:] for c in DOUBT_CASES],
    ids=[c[0] for c in DOUBT_CASES],
)
def test_doubt(
    literal: int, message: int, agrees: bool, leading: bool, expected: str | None
) -> None:
    assert doubt(literal, message, agrees, leading) == expected


CLASS_CASES = [
    ("none named", None, "ValueError", True),
    ("the same class", "ValueError", "ValueError", True),
    ("a dotted name", "errors.ConfigError", "ConfigError", True),
    ("pydantic's wrapper", "ValidationError", "ValueError", True),
    ("FastAPI's wrapper", "RequestValidationError", "ValueError", True),
    ("an assertion", "AssertionError", "ValueError", False),
    ("another error", "TypeError", "ValueError", False),
]


@pytest.mark.parametrize(
    ("named", "raised", "expected"),
    [c[1:] for c in CLASS_CASES],
    ids=[c[0] for c in CLASS_CASES],
)
def test_class_agrees(named: str | None, raised: str, expected: bool) -> None:
    assert class_agrees(named, raised) is expected


# A catch-all pattern (SGLang's `check_all_params_loaded`: `{name}: {error}`) and a short one.
CATCH_ALL = _case(
    "dddd000000000001",
    "check_all_params_loaded",
    "{name}: {error}",
    "(.*?): (.*?)",
    "template",
)
SHORT = _case("dddd000000000002", "check_dtype", "Invalid dtype", "Invalid dtype", "literal")
MODE = _case(
    "dddd000000000003",
    "check_mode",
    "Unknown decode mode {mode}, choose auto or eager",
    "Unknown decode mode (.*?), choose auto or eager",
    "template",
)


@pytest.mark.parametrize(
    ("paste", "record", "kind"),
    [
        ("ValueError: weights: lm_head.weight was not loaded", "dddd000000000001", "approximate"),
        ("Invalid dtype", "dddd000000000002", "approximate"),
        # an assertion with the record's words is another raise
        ("AssertionError: Unknown decode mode x, choose auto or eager", None, "approximate"),
        ("Unknown decode mode 'x', choose auto or eager", "dddd000000000003", "pattern"),
    ],
)
def test_weak_evidence_is_at_most_approximate(
    tmp_path: Path, paste: str, record: str | None, kind: str
) -> None:
    root = write_fixture_dataset(tmp_path, [*CASES, CATCH_ALL, SHORT, MODE])
    found = lookup(paste, [index_dataset(root)])
    top = found.matches[0]
    assert top.kind == kind
    if record is not None:
        assert top.entry.id == record


WORD_EDGE_CASES = [
    ("a value between spaces", "Unknown mode (.*?), use auto", "Unknown mode x, use auto", True),
    ("glued to the word before", "Unknown mode (.*?), use auto", "Unknown modes, use auto", False),
    ("glued to the word after", "(.*?) must be set", "max_lenmust be set", False),
    ("a unit the record glues on", "got (.*?)MB", "got 512MB", True),
    ("wrapped by a terminal", "Unknown mode (.*?), use auto", "Unknown mo\nde x, use auto", True),
    ("an empty value", "got (.*?)\\.", "got .", True),
    (
        "a value that starts with a comparison",
        "length must be (.*?), got",
        "length must be >= 4, got",
        False,
    ),
    ("a comparison inside the value", "expected (.*?), got", "expected x >= 4, got", True),
]


@pytest.mark.parametrize(
    ("pattern", "message", "expected"),
    [c[1:] for c in WORD_EDGE_CASES],
    ids=[c[0] for c in WORD_EDGE_CASES],
)
def test_holes_start_and_end_on_word_edges(pattern: str, message: str, expected: bool) -> None:
    assert on_word_edges(pattern, message) is expected


COMPARISON_CASES = [
    (">= 4", True),
    ("!= 'auto'", True),
    ("  < 0.5", True),
    ("<class 'int'>", False),  # a repr: its `<` is glued to it
    ("x >= 4", False),  # a value that holds an expression
    (">=4", False),
    ("4", False),
]


@pytest.mark.parametrize(("value", "expected"), COMPARISON_CASES)
def test_a_value_never_starts_with_a_comparison(value: str, expected: bool) -> None:
    assert opens_with_comparison(value) is expected


# --- start-up: explain loads only what it uses ----------------------------------------------

_LOADED = """\
import sys
from pipeline.cli import main
sys.argv = ["vmine", "explain", *sys.argv[1:]]
try:
    main()
except SystemExit as exit:
    loaded = sorted({name.split(".")[0] for name in sys.modules})
    print(exit.code, " ".join(loaded), sep="\\n")
"""


@pytest.mark.parametrize(
    "paste",
    ["--use-fast-decode requires --decode-backend flash", "nothing like any record at all"],
    ids=["a match", "no match"],
)
def test_explain_imports_no_libcst_rich_or_openai(output: Path, paste: str) -> None:
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-c", _LOADED, paste, "--dataset", str(output)],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[1],
    )
    code, loaded = result.stdout.splitlines()[-2:]
    assert code in ("0", "1")
    assert not {"libcst", "rich", "openai", "httpx", "sqlite3"} & set(loaded.split())


# --- which function ran (match.settled, tracebacks.Frame) ------------------------------------


def _site(id: str, file_path: str, qualname: str, message: str, pattern: str) -> Case:
    return Case(
        id=id,
        slug=id,
        filePath=file_path,
        lineNumber=30,
        qualname=qualname,
        validatorKind="name",
        errorMessage=message,
        messagePattern=pattern,
        messageStatus="literal" if pattern == message else "template",
        guards=[],
        source=CASES[0].source,
        sourceStart=11,
        explanation=CASES[0].explanation,
    )


DEVICE = "seq_lens must be on the same device as q"
DECODE = _site(
    "eeee000000000001", "serve/kernels/decode.py", "_validate_decode_inputs", DEVICE, DEVICE
)
PREFILL = _site(
    "eeee000000000002", "serve/kernels/prefill.py", "_validate_prefill_inputs", DEVICE, DEVICE
)
# a helper that many kernels call with the tensor's name
SAME_DEVICE = _site(
    "eeee000000000003",
    "serve/kernels/checks.py",
    "_require_same_device",
    "{name} must be on the same device as q",
    "(.*?) must be on the same device as q",
)
_PKG = "/usr/lib/python3.12/site-packages/"


def _raised(message: str, *frames: tuple[str, str]) -> str:
    """A traceback through `frames` (file under the package folder, function), innermost last."""
    return (
        "Traceback (most recent call last):\n"
        + "".join(
            f'  File "{_PKG}{path}", line 7, in {function}\n    check()\n'
            for path, function in frames
        )
        + f"ValueError: {message}"
    )


SETTLED = [
    (
        "two functions raise the same text: ambiguous",
        DEVICE,
        ["ambiguous", "ambiguous", "pattern"],
        "eeee000000000001",
    ),
    (
        "the traceback names one of them: that one, a match",
        _raised(
            DEVICE,
            ("serve/engine.py", "step"),
            ("serve/kernels/prefill.py", "_validate_prefill_inputs"),
        ),
        ["exact"],
        "eeee000000000002",
    ),
    (
        "the helper runs in the deepest frame: the helper, although it scores less",
        _raised(
            DEVICE,
            ("serve/kernels/decode.py", "_validate_decode_inputs"),
            ("serve/kernels/checks.py", "_require_same_device"),
        ),
        ["pattern"],
        "eeee000000000003",
    ),
    (
        "a helper's text that other functions raise: ambiguous",
        "block_table must be on the same device as q",
        ["ambiguous"],
        "eeee000000000003",
    ),
    (
        "the traceback names the helper: a match",
        _raised(
            "block_table must be on the same device as q",
            ("serve/kernels/checks.py", "_require_same_device"),
        ),
        ["pattern"],
        "eeee000000000003",
    ),
    (
        "a traceback through other code only: still ambiguous",
        _raised(DEVICE, ("serve/engine.py", "step")),
        ["ambiguous", "ambiguous", "pattern"],
        "eeee000000000001",
    ),
    (
        "raised in a file of the dataset by a function no matching record is: approximate",
        _raised(
            "block_table must be on the same device as q",
            ("serve/kernels/decode.py", "_validate_decode_inputs"),
        ),
        ["approximate"],
        "eeee000000000003",
    ),
    (
        "the same, raised as another class: the class says so first",
        _raised(
            "block_table must be on the same device as q",
            ("serve/kernels/decode.py", "_validate_decode_inputs"),
        ).replace("ValueError:", "AssertionError:"),
        ["approximate"],
        "eeee000000000003",
    ),
]


@pytest.mark.parametrize(
    ("paste", "kinds", "first"), [c[1:] for c in SETTLED], ids=[c[0] for c in SETTLED]
)
def test_which_function_ran(tmp_path: Path, paste: str, kinds: list[str], first: str) -> None:
    root = write_fixture_dataset(tmp_path, [*CASES, DECODE, PREFILL, SAME_DEVICE])
    found = lookup(paste, [index_dataset(root)])
    assert [m.kind for m in found.matches][: len(kinds)] == kinds
    assert found.matches[0].entry.id == first
    assert found.sure is (kinds[0] not in ("ambiguous", "approximate"))


def test_an_ambiguous_paste_lists_the_records_and_exits_1(tmp_path: Path) -> None:
    root = write_fixture_dataset(tmp_path, [*CASES, DECODE, PREFILL, SAME_DEVICE])
    result = CliRunner().invoke(main, ["explain", DEVICE, "--dataset", str(root)])
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert lines[0].startswith("Note: No sure match: 2 functions raise this same text")
    assert lines[1:5] == [
        "Records that match this message (the paste does not say which one raised it):",
        f"  _validate_decode_inputs  {DEVICE}  (serve/kernels/decode.py:30)",
        f"  _validate_prefill_inputs  {DEVICE}  (serve/kernels/prefill.py:30)",
        "Paste the whole traceback: its frames name the function that raised it.",
    ]
    listed = CliRunner().invoke(main, ["explain", DEVICE, "--dataset", str(root), "--all"])
    assert [line.split()[1] for line in listed.output.splitlines()[2:5]] == [
        "ambiguous",
        "ambiguous",
        "pattern",
    ]


def test_a_function_moved_between_releases_is_one_function(tmp_path: Path) -> None:
    moved = _site(
        "eeee000000000009", "serve/ops/decode.py", "_validate_decode_inputs", DEVICE, DEVICE
    )
    old = write_fixture_dataset(
        tmp_path / "old", [*CASES, moved], sha="0" * 40, source="pypi:serve==0.1.0"
    )
    new = write_fixture_dataset(tmp_path / "new", [*CASES, DECODE], source="pypi:serve==0.2.0")
    found = lookup(DEVICE, [index_dataset(old), index_dataset(new)])
    assert [m.kind for m in found.matches] == ["exact", "exact"]


FRAMES = [
    (
        "/usr/lib/py/serve/config.py",
        "__post_init__",
        "serve/config.py",
        "Config.__post_init__",
        True,
    ),
    ("C:\\py\\serve\\config.py", "__post_init__", "serve/config.py", "Config.__post_init__", True),
    ("/srv/myserve/config.py", "__post_init__", "serve/config.py", "Config.__post_init__", False),
    ("/usr/lib/py/serve/config.py", "validate", "serve/config.py", "Config.__post_init__", False),
    ("/usr/lib/py/serve/config.py", "inner", "serve/config.py", "check.<locals>.inner", True),
]


@pytest.mark.parametrize(("path", "function", "file_path", "qualname", "runs"), FRAMES)
def test_a_frame_runs_a_records_function(
    path: str, function: str, file_path: str, qualname: str, runs: bool
) -> None:
    from pipeline.lookup.tracebacks import Frame

    assert Frame(path, function).runs(file_path, qualname) is runs


def test_each_exception_keeps_the_frames_of_its_own_traceback() -> None:
    from pipeline.lookup.tracebacks import Frame

    found = candidates(CHAINED)
    assert [(c.errorClass, c.frames[-1:]) for c in found] == [
        ("RuntimeError", (Frame("/srv/app/launch.py", "<module>"),)),
        ("KeyError", (Frame("/srv/app/launch.py", "build"),)),
        ("ValueError", (Frame("/srv/app/config.py", "__init__"),)),
    ]


# A `parts` match needs the text the record writes whichever pieces appear.
FALLBACK = _site(
    "eeee000000000004",
    "serve/attention/selector.py",
    "_validate_selection",
    "Attention backend {requested!r} was requested for {target}, but it {?also }selected "
    "{', '.join(chosen)} without an allowed fallback",
    "Attention backend (.*?) was requested for (.*?), but it (.*?)selected (.*?) without an "
    "allowed fallback",
)
FALLBACK.messageStatus = "partial"
FALLBACK.messageFragments = [
    "Attention backend ",
    " was requested for ",
    ", but it ",
    "also ",
    "selected ",
    " without an allowed fallback",
]


@pytest.mark.parametrize(
    ("paste", "kind"),
    [
        (
            "Attention backend 'fa3' was requested for the decoder, but it also selected "
            "sdpa without an allowed fallback",
            "parts",
        ),
        (
            "Attention backend 'fa3' was requested for component 'vae', but it selected "
            "sdpa instead",
            None,
        ),
    ],
)
def test_parts_need_the_text_every_rendering_has(tmp_path: Path, paste: str, kind) -> None:
    root = write_fixture_dataset(tmp_path, [*CASES, FALLBACK])
    found = lookup(paste, [index_dataset(root)])
    sure = [m.kind for m in found.matches if m.kind not in ("approximate", "ambiguous")]
    assert sure == ([kind] if kind else [])


def test_a_reworded_match_rests_on_the_words_the_paste_has(tmp_path: Path) -> None:
    dtype = _site(
        "eeee000000000005",
        "serve/config/quant.py",
        "QuantConfig._check_dtype",
        "{dtype} is not supported for quantization method {method}. Supported dtypes: {supported}",
        "(.*?) is not supported for quantization method (.*?)\\. Supported dtypes: (.*?)",
    )
    root = write_fixture_dataset(tmp_path, [*CASES, dtype])
    found = lookup(
        "draft_lm_head_quantization is not supported for method auto.", [index_dataset(root)]
    )
    assert (found.matches[0].entry.id, found.matches[0].kind, found.matches[0].doubt) == (
        "eeee000000000005",
        "approximate",
        "sparse",
    )


def test_an_ambiguous_page_lists_ten_records_and_counts_the_rest(tmp_path: Path) -> None:
    kernels = [
        _site(f"eeee0000000001{n:02d}", f"serve/kernels/k{n:02d}.py", "_check", DEVICE, DEVICE)
        for n in range(12)
    ]
    root = write_fixture_dataset(tmp_path, [*CASES, *kernels])
    result = CliRunner().invoke(main, ["explain", DEVICE, "--dataset", str(root)])
    lines = result.output.splitlines()
    assert (result.exit_code, lines[11], lines[12]) == (
        1,
        f"  _check  {DEVICE}  (serve/kernels/k09.py:30)",
        "  and 2 more (see --all)",
    )


ROPE_TWO = _site(
    "eeee000000000006",
    "serve/configs/alpha.py",
    "AlphaConfig._rope_scaling_validation",
    "`rope_scaling` must be a dictionary with two fields, `type` and `factor`, got "
    "{self.rope_scaling}",
    "`rope_scaling` must be a dictionary with two fields, `type` and `factor`, got (.*?)",
)
ROPE_ANY = _site(
    "eeee000000000007",
    "serve/configs/beta.py",
    "BetaConfig._rope_scaling_validation",
    "`rope_scaling` must be a dictionary, got {self.rope_scaling}",
    "`rope_scaling` must be a dictionary, got (.*?)",
)
ROPE_PASTE = (
    "`rope_scaling` must be a dictionary with with two fields, `type` and `factor`, got None"
)


@pytest.mark.parametrize(
    ("cases", "kind"), [([ROPE_TWO], "reworded"), ([ROPE_TWO, ROPE_ANY], "ambiguous")]
)
def test_a_rewording_of_words_another_function_nearly_says_is_ambiguous(
    tmp_path: Path, cases: list[Case], kind: str
) -> None:
    root = write_fixture_dataset(tmp_path, [*CASES, *cases])
    found = lookup(ROPE_PASTE, [index_dataset(root)])
    assert (found.matches[0].entry.id, found.matches[0].kind) == ("eeee000000000006", kind)


# Two checks of one helper family, told apart by a comparison alone.
LENGTH = _site(
    "eeee000000000008",
    "serve/plan/shapes.py",
    "_require_length",
    "plan: {name} length must be {expected} slots for each request of the batch, got {actual}",
    "plan: (.*?) length must be (.*?) slots for each request of the batch, got (.*?)",
)
MIN_LENGTH = _site(
    "eeee000000000009",
    "serve/plan/shapes.py",
    "_require_min_length",
    "plan: {name} length must be >= {minimum} slots for each request of the batch, got {actual}",
    "plan: (.*?) length must be >= (.*?) slots for each request of the batch, got (.*?)",
)


PLAN = "plan: block_table length must be {} slots for each request of the batch, got 2"


@pytest.mark.parametrize(
    ("cases", "paste", "expected"),
    [
        ([LENGTH, MIN_LENGTH], PLAN.format(">= 4"), ("eeee000000000009", "pattern")),
        ([LENGTH, MIN_LENGTH], PLAN.format("4"), ("eeee000000000008", "pattern")),
        # the check that compares is not in the datasets: `must be {expected}` is no match,
        # by its pattern or by its words (all of them explained but the comparison's)
        ([LENGTH], PLAN.format(">= 4"), ("eeee000000000008", "approximate")),
        ([LENGTH], PLAN.format(">= None"), ("eeee000000000008", "approximate")),
        ([LENGTH], PLAN.format("4").replace(" each", ""), ("eeee000000000008", "reworded")),
    ],
)
def test_a_comparison_in_the_paste_is_no_value_of_the_record(
    tmp_path: Path, cases: list[Case], paste: str, expected: tuple[str, str]
) -> None:
    root = write_fixture_dataset(tmp_path, [*CASES, *cases])
    found = lookup(paste, [index_dataset(root)])
    assert (found.matches[0].entry.id, found.matches[0].kind) == expected


# Two functions check one setting in the same words: one writes the brackets of its list,
# the other renders them with `{list(...)}`.
MODES_BRACKETED = _site(
    "eeee000000000010",
    "serve/config/modes.py",
    "normalize_mode",
    "mode must be one of [{*MODES}{*ALIASES}], got {mode!r}",
    "mode must be one of \\[(.*?)(.*?)\\], got (.*?)",
)
MODES_LISTED = _site(
    "eeee000000000011",
    "serve/config/modes.py",
    "ServeConfig._validate",
    "mode must be one of {list(MODES)}, got {self.mode!r}",
    "mode must be one of (.*?), got (.*?)",
)


@pytest.mark.parametrize(
    ("paste", "kinds"),
    [
        # what either renders: the brackets are no evidence for the one that writes them
        ("mode must be one of ['eager', 'graph'], got 'fast'", ["ambiguous", "ambiguous"]),
        # no brackets: only the listed one renders this
        ("mode must be one of eager, graph, got 'fast'", ["pattern"]),
    ],
)
def test_two_functions_that_say_the_same_words_are_ambiguous(
    tmp_path: Path, paste: str, kinds: list[str]
) -> None:
    root = write_fixture_dataset(tmp_path, [*CASES, MODES_BRACKETED, MODES_LISTED])
    found = lookup(paste, [index_dataset(root)])
    assert [m.kind for m in found.matches][: len(kinds)] == kinds
    assert found.matches[0].entry.id == (
        "eeee000000000010" if len(kinds) == 2 else "eeee000000000011"
    )
