"""The run's model, asked again by `vmine run --llm openai --verify`, through the run's own
explainer (pipeline/explainers/llm.py), one request at a time, at most `requests` in all:

- a fix of its that did not stop the raise is sent back once with what running it showed;
  its second exampleFix is run on the reproducer too, and kept (`chosenFix`) only when it
  stops the raise;
- a site the solver could not trigger is shown with what the solver's runs did, and the
  model writes a program that should raise it; verify runs that program like its own
  reproducers and keeps it only when it verifies (`reproducerKind: model`).
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from typing import TYPE_CHECKING

from pipeline.dataset.models import ErrorRecord, Explanation, Site
from pipeline.explainers.base import ExplainRequest

if TYPE_CHECKING:  # openai is imported by the run that made the explainer, not here
    from pipeline.explainers.llm import LLMExplainer

FIX_RETRY_REQUESTS = 50  # requests the second fixes and programs of one verify send at most
_FENCED = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)\n```", re.DOTALL)


def retry_note(release: str, observed: str) -> str:
    """What the model is told of its fix, run: the error it still raised."""
    return (
        "Your exampleFix (in your answer above) was run: its after half was applied to a "
        f"program that calls the real validator on {release}, and the same error still fired:\n"
        f"{observed}\n"
        "Reply again with the whole JSON object, corrected: an exampleFix (a `# before` / "
        "`# after` pair) whose after half changes the settings so that this check passes."
    )


def program_note(release: str, module: str, observed: str) -> str:
    """What the model is asked for a site the solver could not trigger."""
    return (
        f"vmine verify tried to make this check raise on {release}, calling the real "
        f"validator with inputs solved from its guards, and could not:\n{observed}\n"
        "Write a short, self-contained Python program that, run with that environment's "
        f"python (the module is `{module}`), makes this very raise fire, with exactly this "
        "message. It must not write files outside the working directory, use the network, "
        "or need a GPU. Reply with the program alone, in one ```python block."
    )


def program_of(answer: str) -> str | None:
    """The program in a model's answer: its first fenced block, else the whole answer when
    it parses as Python; None when there is none."""
    found = _FENCED.search(answer)
    text = (found.group(1) if found else answer).strip()
    if not text:
        return None
    try:
        compile(text, "<model>", "exec")
    except (SyntaxError, ValueError):
        return None
    return text + "\n"


class _Counted:
    """A request budget shared by every retry of one verify."""

    def __init__(self, requests: int) -> None:
        self.left = requests
        self.lock = threading.Lock()

    def take(self) -> bool:
        with self.lock:
            if self.left <= 0:
                return False
            self.left -= 1
            return True

    def spent(self) -> bool:
        return self.left <= 0


class ModelFixes:
    """Asks the model that wrote a record for another fix (`fix_again`)."""

    def __init__(self, explainer: LLMExplainer, requests: int = FIX_RETRY_REQUESTS) -> None:
        self.explainer = explainer
        self.budget = _Counted(requests)
        self.lock = threading.Lock()  # the explainer's client belongs to one event loop

    def fix_again(self, site: Site, record: ErrorRecord, release: str, observed: str) -> str | None:
        """The model's second exampleFix for `site`, told that its first (the record's) still
        raised `observed`; None when it gave none, or the same, or the budget is spent."""
        if self.budget.spent():
            return None
        explanation = Explanation.model_validate(
            {name: getattr(record, name) for name in Explanation.model_fields}
        )
        request = ExplainRequest(site, budget=self.budget)
        answer = json.dumps(explanation.model_dump())
        with self.lock:
            result = asyncio.run(self._ask(request, answer, retry_note(release, observed)))
        if result.explanation is None:
            return None
        fix = result.explanation.exampleFix
        return fix if fix != record.exampleFix else None

    def program(self, site: Site, release: str, module: str, observed: str) -> str | None:
        """The model's program that should raise `site`'s message, told what the solver's
        runs did (`observed`); None when it gave none that parses, or the budget is spent."""
        if self.budget.spent():
            return None
        request = ExplainRequest(site, budget=self.budget)
        with self.lock:
            answer = asyncio.run(self._write(request, program_note(release, module, observed)))
        return program_of(answer) if answer else None

    async def _write(self, request: ExplainRequest, note: str) -> str | None:
        try:
            return await self.explainer.write(request, note)
        finally:
            await self.explainer.aclose()

    async def _ask(self, request: ExplainRequest, answer: str, note: str):
        try:
            return await self.explainer.follow_up(request, answer, note)
        finally:
            await self.explainer.aclose()
