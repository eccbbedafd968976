"""A site the solver could not trigger, given to the run's model (`vmine run --llm openai
--verify`): its program is run like verify's own reproducers and kept only when it raises the
message at the site's line (pipeline/verify/retry.py, run.py). The model is the tests' fake
OpenAI server."""

from __future__ import annotations

import sys
import textwrap

import pytest

from pipeline.site.pages import verification_note
from pipeline.verify.retry import program_of
from pipeline.verify.run import VerifyOptions, verify_dataset
from tests.verify_fixture import mined_fixture

# The cells of a layout are read from its text: no value the solver puts on `layout` makes
# the split give two numbers.
GRID = textwrap.dedent(
    """
    def check_layout(layout: str) -> None:
        rows, _, columns = layout.partition("x")
        if int(rows or 0) * int(columns or 0) > 64:
            raise ValueError(f"layout {layout} has more than 64 cells")
    """
).lstrip()
RAISES = "from acme.grid import check_layout\ncheck_layout('9x9')"
RETURNS = "from acme.grid import check_layout\ncheck_layout('2x2')"


@pytest.mark.parametrize(
    ("program", "outcome", "kind"),
    [(RAISES, "verified", "model"), (RETURNS, None, None)],
)
def test_the_model_writes_a_program_for_a_site_the_solver_could_not_trigger(
    tmp_path, fake_llm, program, outcome, kind
):
    from pipeline.explainers.llm import LLMExplainer
    from pipeline.verify.retry import ModelFixes

    dataset, installed = mined_fixture(tmp_path, {"acme/__init__.py": "", "acme/grid.py": GRID})
    fake_llm.fail("given_program", program=program)
    explainer = LLMExplainer(model="fake", base_url=fake_llm.base_url, api_key="test")
    options = VerifyOptions(
        python=sys.executable,
        jobs=1,
        environ={"PYTHONPATH": str(installed)},
        model=ModelFixes(explainer),
    )
    (item,) = verify_dataset(dataset, options).verifications
    # a program that does not raise it is not kept: the solver's own outcome stays
    assert item.reproducerKind == kind
    assert (item.outcome == "verified") is (outcome == "verified")
    # one plain-text request: the site, then what the solver's runs did
    (request,) = fake_llm.requests
    assert request.response_format is None
    note = request.messages[-1]["content"]
    assert "could not:" in note and "`acme.grid`" in note
    if outcome == "verified":
        assert item.message == "layout 9x9 has more than 64 cells"
        assert item.reproducer.endswith(RAISES + "\n")
        sentence, shown = verification_note(item)
        assert sentence.startswith(f"Verified on {item.release} by a program the model wrote")
        assert shown == item.reproducer


@pytest.mark.parametrize(
    ("answer", "program"),
    [
        (
            "Try this:\n```python\nimport acme\nacme.run(1)\n```\nIt raises.",
            "import acme\nacme.run(1)\n",
        ),
        ("```\nprint(1)\n```", "print(1)\n"),
        ("import acme\nacme.run(1)", "import acme\nacme.run(1)\n"),  # no fence: the answer
        ("It cannot be triggered from outside.", None),  # prose is not a program
        ("```python\ndef broken(:\n```", None),
        ("", None),
    ],
)
def test_the_program_is_read_from_the_answer(answer, program):
    assert program_of(answer) == program
