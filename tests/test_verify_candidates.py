"""The fix verify keeps when a record's own exampleFix does not stop the raise: the offline
explainer's other fixes for the site (pipeline/explainers/offline/candidates.py), run on the
reproducer in the explainer's order, the first that stops it kept as `chosenFix`."""

from __future__ import annotations

import json
import sys
import textwrap

import pytest

from pipeline.dataset.reader import load_dataset
from pipeline.explainers.offline.candidates import _conjuncts
from pipeline.site.pages import verification_note
from pipeline.verify.run import VerifyOptions, verify_dataset
from tests.verify_fixture import mined_fixture

BENCH = textwrap.dedent(
    """
    import argparse


    def make_parser() -> argparse.ArgumentParser:
        parser = argparse.ArgumentParser(prog="bench")
        parser.add_argument("--mode", choices=["fast", "safe"], default="safe")
        parser.add_argument("--workers", type=int, default=8)
        return parser


    def validate_args(args: argparse.Namespace) -> None:
        if args.mode == "fast" and args.workers > 8:
            raise ValueError(f"fast mode takes at most 8 workers, got {args.workers}")
        if args.workers > 64:
            raise ValueError(f"at most 64 workers, got {args.workers}")
    """
).lstrip()
# What a weak model might write for the first check: it parses, and changes nothing that
# matters (the workers stay above 8).
WRONG_FIX = "# before\n--mode fast --workers 16\n# after\n--mode fast --workers 12"


@pytest.fixture(scope="module")
def verified(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("candidates")
    files = {"acme/__init__.py": "", "acme/bench.py": BENCH}
    dataset, installed = mined_fixture(tmp_path, files)
    for path in (dataset / "records").glob("*.json"):
        envelope = json.loads(path.read_text())
        if envelope["record"]["errorMessage"].startswith("fast mode"):
            envelope["record"]["exampleFix"] = WRONG_FIX
            path.write_text(json.dumps(envelope, indent=2) + "\n")
    options = VerifyOptions(python=sys.executable, jobs=1, environ={"PYTHONPATH": str(installed)})
    outcome = verify_dataset(dataset, options)
    records = load_dataset(dataset).records
    by_message = {
        records[item.id].errorMessage[:9]: (records[item.id], item)
        for item in outcome.verifications
    }
    return by_message, outcome


def test_a_fix_that_fails_is_followed_by_the_first_other_fix_that_stops_the_raise(verified):
    by_message, outcome = verified
    record, item = by_message["fast mode"]
    assert (item.outcome, item.fix) == ("verified", "fails")
    assert "fast mode takes at most 8 workers, got 12" in item.fixMessage
    # the offline explainer's fix for the site, run on the reproducer, stops the raise
    assert item.chosenFix is not None and item.chosenFix != WRONG_FIX
    assert outcome.summary.chosenFixes == 1
    note, _ = verification_note(item)
    assert "Its example fix did not stop the raise there; this one does: --" in note


def test_a_fix_that_verifies_is_kept_and_no_other_is_tried(verified):
    by_message, _ = verified
    _, item = by_message["at most 6"]
    assert (item.outcome, item.fix, item.chosenFix) == ("verified", "verified", None)
    assert (
        "Its example fix, applied to this program, stops the raise." in verification_note(item)[0]
    )


@pytest.mark.parametrize(
    ("guard", "parts"),
    [
        ("a > 1 and (b or c)", ["a > 1", "b or c"]),
        ("a or b", ["a or b"]),
        ("not (a and b)", ["not (a and b)"]),
    ],
)
def test_a_guard_is_tried_part_by_part(guard, parts):
    assert _conjuncts(guard) == parts


def _as_if_a_model_wrote(dataset, fix: str) -> None:
    """The `fast mode` record's fix replaced by `fix`, explained by a model (`openai`)."""
    index = dataset / "index.jsonl"
    entries = [json.loads(line) for line in index.read_text().splitlines()]
    for entry in entries:
        if entry["errorMessage"].startswith("fast mode"):
            entry["explainedBy"] = "openai"
            path = dataset / "records" / f"{entry['id']}.json"
            envelope = json.loads(path.read_text())
            envelope["record"]["exampleFix"] = fix
            path.write_text(json.dumps(envelope, indent=2) + "\n")
    index.write_text("".join(json.dumps(entry) + "\n" for entry in entries))


@pytest.mark.parametrize(
    ("second", "retried", "from_model"),
    [
        ("# before\n--mode fast --workers 16\n# after\n--mode fast --workers 8", "verified", True),
        ("# before\n--mode fast --workers 16\n# after\n--mode fast --workers 10", "fails", False),
    ],
)
def test_a_model_fix_that_fails_is_sent_back_once_with_what_it_raised(
    tmp_path, fake_llm, second, retried, from_model
):
    from pipeline.explainers.llm import LLMExplainer
    from pipeline.verify.retry import ModelFixes

    dataset, installed = mined_fixture(tmp_path, {"acme/__init__.py": "", "acme/bench.py": BENCH})
    _as_if_a_model_wrote(dataset, WRONG_FIX)
    fake_llm.fail("given_fix", example_fix=second)
    explainer = LLMExplainer(model="fake", base_url=fake_llm.base_url, api_key="test")
    options = VerifyOptions(
        python=sys.executable,
        jobs=1,
        environ={"PYTHONPATH": str(installed)},
        model=ModelFixes(explainer),
    )
    outcome = verify_dataset(dataset, options)
    records = load_dataset(dataset).records
    (item,) = [i for i in outcome.verifications if records[i.id].errorMessage.startswith("fast")]
    assert (item.fix, item.fixRetry) == ("fails", retried)
    # one request: the site, the model's first answer, and what running its fix showed
    (request,) = fake_llm.requests
    assistant, note = request.messages[-2:]
    assert (
        assistant["role"] == "assistant"
        and json.loads(assistant["content"])["exampleFix"] == WRONG_FIX
    )
    assert "fast mode takes at most 8 workers, got 12" in note["content"]
    # a second fix that fails too leaves the offline explainer's to choose
    assert (item.chosenFix == second) is from_model
    assert item.chosenFix is not None
    assert outcome.summary.byFixRetry == {retried: 1}


def test_a_run_with_no_model_verifies_with_none():
    from pipeline.mine.run import RunOptions
    from pipeline.verify.command import with_model

    options = VerifyOptions()
    assert with_model(options, RunOptions(source="x", llm="offline")) is options
