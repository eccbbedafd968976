"""The extractor's bounds (extractors/limits.py): files too large and expressions too deep for
libcst are skipped with a reason before libcst sees them, and the work per validator grows in
proportion to its length."""

import ast
import textwrap

import pytest

import extractors.bindings
import extractors.guards
from extractors.facts import Rules
from extractors.guards import MAX_GUARDS
from extractors.limits import MAX_DEPTH, MAX_SOURCE_BYTES, depth_problem, size_problem
from extractors.sites import extract_file


def condition_of(terms: int, joiner: str = " and ") -> str:
    return joiner.join(f"cfg.flag_{number}" for number in range(terms))


SIZES = [
    (0, None),
    (MAX_SOURCE_BYTES, None),
    (MAX_SOURCE_BYTES + 1, "too large to analyse: 2.0 MiB (limit 2 MiB)"),
    (38 * 2**20, "too large to analyse: 38.0 MiB (limit 2 MiB)"),
]


@pytest.mark.parametrize(("size", "problem"), SIZES)
def test_size_problem(size, problem):
    assert size_problem(size) == problem


DEPTHS = [
    ("x = a and b", None),
    (f"if {condition_of(300)}:\n    pass", None),
    (
        f"if {condition_of(MAX_DEPTH)}:\n    pass",
        f"expression nested too deep at line 1 (limit {MAX_DEPTH} levels)",
    ),
    (
        f"\n\nok = 1\nif {condition_of(10_000)}:\n    pass",
        f"expression nested too deep at line 4 (limit {MAX_DEPTH} levels)",
    ),
    (
        f"x = {condition_of(10_000, ' or ')}",
        f"expression nested too deep at line 1 (limit {MAX_DEPTH} levels)",
    ),
    (
        f"x = {' + '.join(['n'] * 450)}",
        f"expression nested too deep at line 1 (limit {MAX_DEPTH} levels)",
    ),
    (f"x = [{', '.join(['n'] * 10_000)}]", None),  # wide is fine: libcst keeps lists flat
    (f"x = {' < '.join(['n'] * 10_000)}", None),  # so are comparison chains
]


@pytest.mark.parametrize(("source", "problem"), DEPTHS)
def test_depth_problem_counts_nesting_as_libcst_builds_it(source, problem):
    assert depth_problem(ast.parse(source)) == problem


def test_a_condition_of_ten_thousand_terms_skips_only_its_file():
    # libcst's native parser died with SIGSEGV on this one (140 KB)
    source = (
        "def validate(cfg):\n"
        f"    if {condition_of(10_000)}:\n"
        '        raise ValueError("all flags set")\n'
    )
    extraction = extract_file("pkg/flags.py", source, Rules())
    assert extraction.sites == []
    assert extraction.skipped == (
        f"expression nested too deep at line 2 (limit {MAX_DEPTH} levels)"
    )


def test_a_deep_expression_outside_validators_is_no_problem():
    source = (
        f"TABLE = {condition_of(10_000)}\n"
        "def validate(cfg):\n"
        "    if cfg.size < 0:\n"
        '        raise ValueError("negative size")\n'
    )
    extraction = extract_file("pkg/flags.py", source, Rules())
    assert extraction.skipped is None
    assert [site.errorMessage for site in extraction.sites] == ["negative size"]


def test_a_file_over_the_size_limit_is_skipped_before_decoding():
    source = b"def validate(cfg):\n    raise ValueError('x')\n" + b"#" * MAX_SOURCE_BYTES
    extraction = extract_file("pkg/huge.py", source, Rules())
    assert extraction.skipped == "too large to analyse: 2.0 MiB (limit 2 MiB)"


def many_raises(count: int) -> str:
    checks = "".join(
        f"    if cfg.limit_{number} < 0:\n"
        f'        raise ValueError(f"limit_{number} must be >= 0, got {{cfg.limit_{number}}}")\n'
        for number in range(count)
    )
    return f'def validate(cfg):\n    prefix = "bad: "\n{checks}'


def test_each_statement_of_a_validator_is_read_once_for_all_its_raises(monkeypatch):
    """4,000 raises in one validator took 21 s: every raise replayed the statements before it
    (bindings) and tested each for an early exit or an earlier check (guards)."""
    tested, applied = [], []
    leaving, run = extractors.guards._leaving_paths, extractors.bindings.Bindings.run
    monkeypatch.setattr(
        extractors.guards,
        "_leaving_paths",
        lambda statement: tested.append(statement) or leaving(statement),
    )

    def counting_run(self, statement):
        applied.append(statement)
        return run(self, statement)

    monkeypatch.setattr(extractors.bindings.Bindings, "run", counting_run)
    extraction = extract_file("pkg/limits.py", many_raises(300), Rules())
    assert len(extraction.sites) == 300
    # The body is `prefix = ...` then 300 ifs, the last raise in the last one: the 300
    # statements before it are tested once each (a raise per statement: 45,150 times before).
    assert len(tested) == 300
    # ... and applied once each, the line `prefix = ...` also as its assignment
    assert len(applied) == 300 + 1


def test_a_site_keeps_the_nearest_guards():
    arms = "".join(
        f"    elif cfg.mode == {number}:\n        pass\n" for number in range(MAX_GUARDS + 5)
    )
    source = textwrap.dedent(
        "def validate(cfg):\n"
        "    if cfg is None:\n"
        "        return\n"
        "    if cfg.mode == -1:\n"
        "        pass\n"
        f"{arms}"
        "    else:\n"
        '        raise ValueError("unknown mode")\n'
    )
    (site,) = extract_file("pkg/modes.py", source, Rules()).sites
    # 71 guards: `cfg is not None`, `cfg.mode != -1`, then `cfg.mode != 0` ... `!= 68`
    assert site.guards == [f"cfg.mode != {number}" for number in range(5, MAX_GUARDS + 5)]
