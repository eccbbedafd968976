"""The interface every explainer implements: a site in, an explanation (or a reason) out."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from pipeline.dataset.models import Explanation, Setting, Site

__all__ = [
    "ExplainRequest",
    "ExplainResult",
    "Explainer",
    "Grounding",
    "NoGrounding",
    "Usage",
]


class Usage(BaseModel):
    """Tokens and HTTP requests one explanation cost."""

    model_config = ConfigDict(extra="forbid")

    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            requests=self.requests + other.requests,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
        )


@runtime_checkable
class Grounding(Protocol):
    """Checks an explanation against the repository it talks about. An implementation may
    also define `prefetch(explanations: list[Explanation]) -> None`, which enrichment calls
    with every cached explanation before checking them, so repository lookups are batched."""

    def check(self, explanation: Explanation, settings: Sequence[Setting] = ()) -> list[str]:
        """Violations, one line each (code that does not parse, a `--flag` the repository
        does not have, a flag given a value outside the choices of the site's `settings`);
        empty when the explanation is grounded."""
        ...


class NoGrounding:
    """A grounding that finds nothing wrong (tests, dry runs)."""

    def check(self, explanation: Explanation, settings: Sequence[Setting] = ()) -> list[str]:
        return []


@dataclass(frozen=True)
class ExplainRequest:
    """One site to explain, with the other sites of its function for context."""

    site: Site
    siblings: list[Site] = field(default_factory=list)
    grounding: Grounding = field(default_factory=NoGrounding)


@dataclass(frozen=True)
class ExplainResult:
    """What one `explain` call produced. Exactly one of `explanation` and `error` is set;
    `usage` counts every HTTP request made for it, retries and repairs included."""

    explanation: Explanation | None
    error: str | None = None
    usage: Usage = field(default_factory=Usage)
    grounding_warnings: list[str] = field(default_factory=list)


@runtime_checkable
class Explainer(Protocol):
    provider: str  # 'offline' | 'openai'
    model: str  # 'offline' for the offline explainer
    prompt_version: str  # 'offline-1', 'explain-v1', ... (part of the cache key)

    async def explain(self, request: ExplainRequest) -> ExplainResult:
        """Explain one site. Never raises for a per-site problem: returns `error` instead."""
        ...

    def estimate_tokens(self, request: ExplainRequest) -> tuple[int, int]:
        """(input, output) tokens one request would cost, for `--dry-run` (chars / 4 of the
        prompt; the offline explainer returns (0, 0))."""
        ...
