"""A model's fix that did not stop the raise, sent back to the model once with what running it
showed (`vmine run --llm openai --verify`): its second exampleFix is run on the reproducer too,
and kept (`chosenFix`) only when it stops the raise. The model is asked through the run's
own explainer (pipeline/explainers/llm.py), one request at a time, at most `requests` in all.
"""

from __future__ import annotations

import asyncio
import json
import threading
from typing import TYPE_CHECKING

from pipeline.dataset.models import ErrorRecord, Explanation, Site
from pipeline.explainers.base import ExplainRequest

if TYPE_CHECKING:  # openai is imported by the run that made the explainer, not here
    from pipeline.explainers.llm import LLMExplainer

FIX_RETRY_REQUESTS = 50  # requests the second fixes of one verify may send at most


def retry_note(release: str, observed: str) -> str:
    """What the model is told of its fix, run: the error it still raised."""
    return (
        "Your exampleFix (in your answer above) was run: its after half was applied to a "
        f"program that calls the real validator on {release}, and the same error still fired:\n"
        f"{observed}\n"
        "Reply again with the whole JSON object, corrected: an exampleFix (a `# before` / "
        "`# after` pair) whose after half changes the settings so that this check passes."
    )


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

    async def _ask(self, request: ExplainRequest, answer: str, note: str):
        try:
            return await self.explainer.follow_up(request, answer, note)
        finally:
            await self.explainer.aclose()
