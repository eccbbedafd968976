"""Grounding: an explanation's code must parse and its `--flags` must exist in the repository."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from pipeline.dataset.models import Explanation
from pipeline.explainers.grounding import RepoGrounding, flag_needles, syntax_error

REPOSITORY = """
parser.add_argument("--kernel-backend", choices=["triton", "cuda"])
use_ring_buffer: bool = False
parser.add_argument("--spec-tokens", action=argparse.BooleanOptionalAction)
"""


def explanation(**fields) -> Explanation:
    base = dict(
        documentation="Raised when the ring buffer is on.",
        triggerScenarios="Passing --kernel-backend cuda.",
        commonSituations="A launch script.",
        solutions=["Set --kernel-backend triton."],
        exampleFix="# before\n--kernel-backend cuda\n# after\n--kernel-backend triton",
        handlingStrategy="validation",
        validationCode='if cfg.backend != "triton":\n    raise SystemExit("bad")',
        typeGuard="def ok(cfg) -> bool:\n    return cfg.backend == 'triton'",
        tryCatchPattern=None,
        preventionTips=[],
        tags=["engine"],
    )
    return Explanation(**{**base, **fields})


class Repository:
    """A `contains` that answers from one text and records every call it gets."""

    def __init__(self, text: str = REPOSITORY) -> None:
        self.text = text
        self.calls: list[list[str]] = []

    def __call__(self, needles: Iterable[str]) -> set[str]:
        needles = list(needles)
        self.calls.append(needles)
        return {n for n in needles if n in self.text}


def test_grounded_explanation_has_no_violations():
    assert RepoGrounding(Repository()).check(explanation()) == []


@pytest.mark.parametrize(
    ("field", "code", "expected"),
    [
        ("validationCode", "if cfg.x\n    raise SystemExit(1)", "expected ':' (line 1)"),
        (
            "typeGuard",
            "def ok(cfg) -> bool:\nreturn True",
            "expected an indented block after function definition on line 1 (line 2)",
        ),
        (
            "tryCatchPattern",
            "try:\n    run()\nexcept ValueError as e\n    raise",
            "expected ':' (line 3)",
        ),
    ],
)
def test_code_that_does_not_parse_is_named_with_its_field_and_error(field, code, expected):
    violations = RepoGrounding(Repository()).check(explanation(**{field: code}))
    assert violations == [f"{field}: does not parse as Python: {expected}"]


def test_missing_try_catch_pattern_is_not_a_violation():
    assert RepoGrounding(Repository()).check(explanation(tryCatchPattern=None)) == []


def test_flag_absent_from_the_repository_is_named_with_its_field():
    bad = explanation(
        solutions=["Set --kernel-backend triton.", "Pass --foo-bar."],
        preventionTips=["Never pass --foo-bar with --kernel-backend."],
    )
    assert RepoGrounding(Repository()).check(bad) == [
        "solutions[1]: flag --foo-bar does not occur in the repository",
        "preventionTips[0]: flag --foo-bar does not occur in the repository",
    ]


def test_flag_in_code_fields_is_checked_too():
    code = 'if cfg.x:\n    raise SystemExit("pass --made-up")'
    assert RepoGrounding(Repository()).check(explanation(validationCode=code)) == [
        "validationCode: flag --made-up does not occur in the repository"
    ]


def test_flag_present_only_as_its_snake_case_name_is_grounded():
    assert (
        RepoGrounding(Repository()).check(explanation(solutions=["Drop --use-ring-buffer."])) == []
    )


def test_negated_boolean_flag_is_grounded_by_its_positive_form():
    assert (
        RepoGrounding(Repository()).check(explanation(solutions=["Pass --no-spec-tokens."])) == []
    )
    assert flag_needles("--speculative-config.method") == (
        "--speculative-config.method",
        "--speculative-config",
        "speculative_config",
    )
    assert flag_needles("--no-spec-tokens") == (
        "--no-spec-tokens",
        "no_spec_tokens",
        "--spec-tokens",
        "spec_tokens",
    )


def test_lookups_are_batched_per_explanation_and_cached_across_explanations():
    repository = Repository()
    grounding = RepoGrounding(repository)
    grounding.check(explanation(solutions=["Set --kernel-backend triton.", "Pass --foo-bar."]))
    grounding.check(explanation(solutions=["Pass --foo-bar.", "Pass --kernel-backend cuda."]))
    grounding.check(explanation(solutions=["Pass --other-flag."]))
    # the flags as written in one call; other names only for the flags not found
    assert repository.calls == [
        ["--foo-bar", "--kernel-backend"],
        ["foo_bar"],
        ["--other-flag"],
        ["other_flag"],
    ]


def test_flags_found_as_written_need_no_second_lookup():
    repository = Repository()
    RepoGrounding(repository).check(explanation())
    assert repository.calls == [["--kernel-backend"]]


def test_an_environment_variable_a_fix_sets_must_occur_in_the_repository():
    grounding = RepoGrounding(Repository('os.environ.get("VLLM_USE_RING", "0")'))
    found = explanation(
        solutions=["Run `export VLLM_USE_RING=1` first.", "Run `export VLLM_NO_SUCH=1` first."],
        triggerScenarios="x",
        exampleFix="# before\nserve\n# after\nVLLM_USE_RING=1 serve",
    )
    assert [v for v in grounding.check(found) if "environment" in v] == [
        "solutions[1]: environment variable VLLM_NO_SUCH does not occur in the repository"
    ]


def test_syntax_error_is_none_for_valid_code():
    assert syntax_error("x = 1\n") is None
    assert syntax_error("x = (") == "'(' was never closed (line 1)"


def test_prefetch_looks_up_many_explanations_and_texts_at_once():
    repository = Repository()
    grounding = RepoGrounding(repository)
    grounding.prefetch([explanation(), "a message naming --foo-bar"])
    assert grounding.check(explanation(solutions=["Pass --foo-bar."])) == [
        "solutions[0]: flag --foo-bar does not occur in the repository"
    ]
    assert repository.calls == [["--foo-bar", "--kernel-backend"], ["foo_bar"]]


def test_a_dotted_key_needs_its_flag_and_its_key_in_the_repository():
    grounding = RepoGrounding(Repository('add_argument("--spec-config")\nmethod: str = "ngram"'))
    found = explanation(
        triggerScenarios="x",
        solutions=["Pass `--spec-config.method ngram`.", "Pass `--spec-config.nothing 1`."],
        exampleFix="# before\nserve\n# after\nserve",
    )
    assert [v for v in grounding.check(found) if "spec-config" in v] == [
        "solutions[1]: flag --spec-config.nothing does not occur in the repository"
    ]


def test_a_switch_given_a_value_is_a_violation():
    from pipeline.dataset.models import Setting

    switch = Setting(
        expr="self.enforce_eager",
        cls="ModelConfig",
        field="enforce_eager",
        type="bool",
        default="False",
        choices=None,
        doc=None,
        flags=["--enforce-eager"],
        action="store_true",
    )
    grounding = RepoGrounding(Repository("--enforce-eager --kernel-backend"))
    found = explanation(
        triggerScenarios="x",
        solutions=["Pass `--enforce-eager true`."],
        exampleFix="# before\nserve\n# after\nserve --enforce-eager",
    )
    assert grounding.check(found, [switch]) == [
        "solutions[0]: --enforce-eager takes no value, but is given true"
    ]
