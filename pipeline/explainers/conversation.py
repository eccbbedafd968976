"""One site's conversation with a model, as pure data: the first question, the repair of
an invalid answer, the repair of an ungrounded one, and how it ends. An answer moves it on
(`advance`); the online explainer (llm.py) and the batch rounds (mine/batch.py) share it."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal

from pipeline.dataset.models import Explanation
from pipeline.explainers.answers import parse_answer
from pipeline.explainers.base import ExplainResult, Grounding, Usage


@dataclass(frozen=True)
class Outcome:
    """How a site's conversation ended: an explanation with what is still wrong with it, or
    none and why."""

    explanation: Explanation | None
    violations: list[str] = field(default_factory=list)
    error: str | None = None


@dataclass(frozen=True)
class Conversation:
    """A site's conversation with the model and where it stands: the first question, the
    repair of an invalid answer, or the repair of an ungrounded one (`kept` is the valid
    answer to fall back on). One answer moves it on with `advance`; the online explainer and
    the batch runner share it."""

    messages: list[dict[str, str]]
    stage: Literal["first", "repair_invalid", "repair_ungrounded"] = "first"
    problem: str = ""  # what was wrong with the answer being repaired
    kept: Explanation | None = None
    kept_violations: list[str] = field(default_factory=list)
    repairs: int = 0
    dropped_keys: int = 0
    fixed_values: int = 0

    def advance(
        self, answer: str, grounding: Grounding, *, cut: bool = False
    ) -> tuple[Conversation, Outcome | None]:
        """After `answer` (`cut`: stopped by the output limit): the conversation with its
        next question (a repair) and None, or the conversation (its counts updated) and the
        outcome."""
        parsed = parse_answer(answer)
        if parsed.explanation is None and cut:
            parsed.problem = (
                "it stopped at the output limit before it was complete, so keep "
                f"every field short; {parsed.problem}"
            )
        seen = replace(
            self,
            dropped_keys=self.dropped_keys + len(parsed.dropped_keys),
            fixed_values=self.fixed_values + len(parsed.fixed),
        )
        explanation = parsed.explanation
        if explanation is None:
            if self.stage == "first":
                return seen._repair(
                    answer, _invalid_note(parsed.problem), "repair_invalid", problem=parsed.problem
                ), None
            if self.stage == "repair_invalid":
                return seen, Outcome(None, error=f"invalid answer after a repair: {parsed.problem}")
            return seen, Outcome(self.kept, list(self.kept_violations))
        violations = grounding.check(explanation)
        if not violations or self.stage == "repair_ungrounded":
            return seen, Outcome(explanation, violations)
        return seen._repair(
            answer,
            _ungrounded_note(violations),
            "repair_ungrounded",
            kept=explanation,
            kept_violations=violations,
        ), None

    def settle(self, reason: str) -> Outcome:
        """The outcome when no further request can be sent: the valid answer kept, if any."""
        if self.kept is not None:
            return Outcome(self.kept, list(self.kept_violations))
        if self.stage == "repair_invalid":
            return Outcome(None, error=f"invalid answer ({self.problem}); repair: {reason}")
        return Outcome(None, error=reason)

    def result(self, outcome: Outcome, usage: Usage, out_of_budget: bool = False) -> ExplainResult:
        return ExplainResult(
            outcome.explanation,
            outcome.error,
            usage,
            list(outcome.violations),
            repairs=self.repairs,
            dropped_keys=self.dropped_keys,
            fixed_values=self.fixed_values,
            out_of_budget=out_of_budget and outcome.explanation is None,
        )

    def to_json(self) -> dict[str, Any]:
        """The conversation as JSON data (a batch's state in the store)."""
        data = {name: getattr(self, name) for name in self.__dataclass_fields__}
        data["kept"] = None if self.kept is None else self.kept.model_dump()
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Conversation:
        kept = data.get("kept")
        return cls(**{**data, "kept": None if kept is None else Explanation.model_validate(kept)})

    def _repair(self, answer: str, note: str, stage: str, **changes: Any) -> Conversation:
        return replace(
            self,
            messages=[*self.messages, *_repair_turn(answer, note)],
            stage=stage,
            repairs=self.repairs + 1,
            **changes,
        )


def _repair_turn(answer: str, note: str) -> list[dict[str, str]]:
    return [{"role": "assistant", "content": answer}, {"role": "user", "content": note}]


def _invalid_note(problem: str) -> str:
    return (
        f"Your previous answer (quoted above) is invalid: {problem}\n"
        "Reply again with ONE JSON object with exactly the keys listed in the system "
        "message, and nothing else."
    )


def _ungrounded_note(violations: list[str]) -> str:
    listed = "\n".join(f"- {violation}" for violation in violations)
    return (
        "Your previous answer (quoted above) is not grounded in the repository:\n"
        f"{listed}\n"
        "Reply again with the whole JSON object, corrected: use only flags and names that "
        "appear in the code or the facts, and valid Python in code fields."
    )
