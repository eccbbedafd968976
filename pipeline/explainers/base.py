"""The interface every explainer implements: a site in, an explanation (or a reason) out."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from pipeline.dataset.models import Explanation, Setting, Site
from pipeline.explainers.server import ServerProfile

__all__ = [
    "BatchError",
    "Budget",
    "ExplainRequest",
    "ExplainResult",
    "Explainer",
    "Grounding",
    "IDLE_TIMEOUT",
    "NoGrounding",
    "REQUEST_TIMEOUT",
    "ServerMemory",
    "Usage",
    "command_prompt_version",
]


# The time limits of one LLM request: in all, and without a token of a streamed answer (a
# small model on a busy CPU takes 120-175 s for an answer, but is never silent for long).
REQUEST_TIMEOUT = 600.0
IDLE_TIMEOUT = 120.0


class BatchError(Exception):
    """A batch that cannot be submitted, followed or read (one line for the user)."""


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
    """Checks an explanation against the repository it talks about. A class that subclasses
    it gets the default `prefetch` (nothing to look up ahead)."""

    def check(self, explanation: Explanation, settings: Sequence[Setting] = ()) -> list[str]:
        """Violations, one line each (code that does not parse, a `--flag` the repository
        does not have, a flag given a value outside the choices of the site's `settings`);
        empty when the explanation is grounded."""
        ...

    def prefetch(self, items: Iterable[Explanation | str]) -> None:
        """Look up at once what checking these explanations (or texts) will need, so that
        the `check`s that follow find it cached: enrichment calls it with every cached
        explanation before checking them, so repository lookups are batched."""
        return None


class NoGrounding(Grounding):
    """A grounding that finds nothing wrong (tests, dry runs)."""

    def check(self, explanation: Explanation, settings: Sequence[Setting] = ()) -> list[str]:
        return []


class Budget(Protocol):
    """Where an explainer asks leave before each HTTP request (retries and repairs too), so
    that `--max-requests` is exact."""

    def take(self) -> bool:
        """True: send one request; False: the budget is spent, send nothing more."""
        ...

    def spent(self) -> bool:
        """Whether `take` would say no (so a retry need not wait for its backoff first)."""
        ...


class Unlimited:
    """A budget that always says yes."""

    def take(self) -> bool:
        return True

    def spent(self) -> bool:
        return False


@dataclass(frozen=True)
class ExplainRequest:
    """One site to explain, with the other sites of its function for context."""

    site: Site
    siblings: list[Site] = field(default_factory=list)
    grounding: Grounding = field(default_factory=NoGrounding)
    budget: Budget = field(default_factory=Unlimited)

    @property
    def site_grounding(self) -> SiteGrounding:
        """The grounding with this site's settings in its checks."""
        return SiteGrounding(self.grounding, self.site.settings)


@dataclass(frozen=True)
class SiteGrounding(Grounding):
    """A grounding bound to one site: its checks also look at the values given to the
    site's flags (`settings`), for callers that pass only an explanation."""

    grounding: Grounding
    settings: Sequence[Setting]

    def check(self, explanation: Explanation, settings: Sequence[Setting] = ()) -> list[str]:
        return self.grounding.check(explanation, settings or self.settings)

    def prefetch(self, items: Iterable[Explanation | str]) -> None:
        self.grounding.prefetch(items)


@dataclass(frozen=True)
class ExplainResult:
    """What one `explain` call produced. Exactly one of `explanation` and `error` is set;
    `usage` counts every HTTP request made for it, retries and repairs included.
    `grounding_warnings` are what is still wrong with the explanation (enrichment replaces
    those fields by the offline explainer's); `out_of_budget` says the budget stopped it;
    `unreachable` says the server could not be reached at all (the connection refused, a
    host name that does not resolve), so no other site can be explained either."""

    explanation: Explanation | None
    error: str | None = None
    usage: Usage = field(default_factory=Usage)
    grounding_warnings: list[str] = field(default_factory=list)
    repairs: int = 0
    dropped_keys: int = 0  # unknown keys dropped from the answers
    fixed_values: int = 0  # fences unwrapped, enums and nulls normalised
    out_of_budget: bool = False
    unreachable: bool = False


def command_prompt_version(version: str, command: str | None) -> str:
    """An explainer's prompt version (part of the cache key) with the target's entry point
    in it when one is given: the example fixes start their command lines with it."""
    return f"{version}; command: {command}" if command else version


class ServerMemory(Protocol):
    """Where what an explainer learnt of its server is kept between runs (the Store)."""

    def get_server_profile(self, base_url: str, model: str) -> ServerProfile | None: ...

    def put_server_profile(self, base_url: str, model: str, profile: ServerProfile) -> None: ...


@runtime_checkable
class Explainer(Protocol):
    """What enrichment and the run call on an explainer. A class that subclasses it gets
    the defaults of an explainer that talks to no server: no profile, nothing to remember
    and nothing to close."""

    provider: str  # 'offline' | 'openai'
    model: str  # 'offline' for the offline explainer
    prompt_version: str  # 'offline-13', 'explain-v5', ... (part of the cache key)
    # Whether an explanation depends on the whole function (the offline explainer counts its
    # other checks), not only on what the site means: it decides the cache key.
    reads_whole_function: bool
    # The request shape negotiated with the server (response format, output limits,
    # streaming), which the manifest reports; None for an explainer without a server.
    profile: ServerProfile | None = None

    async def explain(self, request: ExplainRequest) -> ExplainResult:
        """Explain one site. Never raises for a per-site problem: returns `error` instead."""
        ...

    def estimate_tokens(self, request: ExplainRequest) -> tuple[int, int]:
        """(input, output) tokens one request would cost, for `--dry-run` (chars / 4 of the
        prompt; the offline explainer returns (0, 0))."""
        ...

    def prompt_version_for(self, site: Site) -> str:
        """The prompt version a site's explanation is made and cached under: the explainer's,
        unless it explains the sites outside validators (`none`) in other words."""
        return self.prompt_version

    def remember_with(self, memory: ServerMemory) -> None:
        """Start from what `memory` remembers of the server, and remember there what is
        learnt of it (called once, before the first `explain`)."""
        return None

    async def aclose(self) -> None:
        """Release what the explainer holds (an HTTP client), inside the event loop that
        used it (called once the sites are explained)."""
        return None
