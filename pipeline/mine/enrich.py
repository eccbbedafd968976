"""Sites -> explanations: the cache first, then the explainer with bounded concurrency,
request/token budgets and clean interruption (finished answers are cached at once)."""

from __future__ import annotations

import asyncio
import signal
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from pipeline.console import Console
from pipeline.dataset.models import Site, now_timestamp
from pipeline.explainers.base import (
    Explainer,
    ExplainRequest,
    ExplainResult,
    Grounding,
    Usage,
)
from pipeline.keys import explanation_key, record_id
from pipeline.store import CachedExplanation, Store

_SIGNAL_EXIT = {signal.SIGINT: 130, signal.SIGTERM: 143}
# Seconds the requests in flight at a first SIGINT/SIGTERM get to finish before they are
# cancelled (they are already paid for); a second signal cancels them at once.
GRACE_SECONDS = 5.0
# Sites failing in a row, with none explained yet, after which the explainer is given up on
# (a wrong URL, key or model): without it a dead server costs every site its full retries.
GIVE_UP_AFTER = 3


@dataclass
class EnrichOutcome:
    """What enrichment produced, by record id."""

    explanations: dict[str, CachedExplanation] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)  # id -> reason
    pending: list[str] = field(default_factory=list)  # ids not explained (budget, signal)
    grounding_warnings: dict[str, list[str]] = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)
    cache_hits: int = 0
    interrupted_by: int | None = None  # the signal number that stopped the run
    gave_up: str | None = None  # why the explainer was given up on, if it was

    @property
    def exit_code_for_signal(self) -> int | None:
        return None if self.interrupted_by is None else _SIGNAL_EXIT[self.interrupted_by]


@dataclass(frozen=True)
class EnrichPlan:
    """What a `--dry-run` would cost: sites in total, answered by the cache, to request."""

    sites: int
    cached: int
    to_request: int
    input_tokens: int
    output_tokens: int


def siblings_of(sites: Sequence[Site]) -> dict[str, list[Site]]:
    """By record id: the other sites of the same function (context for the explainer)."""
    groups: dict[tuple[str, str], list[Site]] = defaultdict(list)
    for site in sites:
        groups[(site.filePath, site.qualname)].append(site)
    return {
        record_id(site): [
            other for other in groups[(site.filePath, site.qualname)] if other is not site
        ]
        for site in sites
    }


def _by_key(sites: Sequence[Site], explainer: Explainer) -> dict[str, list[Site]]:
    keyed: dict[str, list[Site]] = defaultdict(list)
    for site in sites:
        keyed[explanation_key(explainer.model, explainer.prompt_version, site)].append(site)
    return keyed


def plan(
    sites: Sequence[Site], explainer: Explainer, store: Store, grounding: Grounding
) -> EnrichPlan:
    """Count and estimate without calling the explainer (`--dry-run`)."""
    keyed = _by_key(sites, explainer)
    cached_keys = store.has_explanations(keyed)
    siblings = siblings_of(sites)
    input_tokens = output_tokens = 0
    for key, group in keyed.items():
        if key in cached_keys:
            continue
        request = ExplainRequest(group[0], siblings[record_id(group[0])], grounding)
        tokens_in, tokens_out = explainer.estimate_tokens(request)
        input_tokens += tokens_in
        output_tokens += tokens_out
    return EnrichPlan(
        sites=len(sites),
        cached=sum(len(group) for key, group in keyed.items() if key in cached_keys),
        to_request=sum(1 for key in keyed if key not in cached_keys),
        input_tokens=input_tokens,
        output_tokens=output_tokens,
    )


class _Budget:
    """Stops new requests once `max_requests` HTTP requests (retries and repairs count)
    or `max_tokens` tokens have been used; in-flight calls count as one request each."""

    def __init__(self, max_requests: int | None, max_tokens: int | None) -> None:
        self.max_requests = max_requests
        self.max_tokens = max_tokens
        self.used = Usage()
        self.in_flight = 0
        self.exhausted = False

    def allows_start(self) -> bool:
        if (
            self.max_requests is not None
            and self.used.requests + self.in_flight >= self.max_requests
        ):
            self.exhausted = True
        tokens = self.used.prompt_tokens + self.used.completion_tokens
        if self.max_tokens is not None and tokens >= self.max_tokens:
            self.exhausted = True
        return not self.exhausted


def enrich(
    sites: Sequence[Site],
    explainer: Explainer,
    store: Store,
    grounding: Grounding,
    *,
    concurrency: int = 8,
    max_requests: int | None = None,
    max_tokens: int | None = None,
    console: Console | None = None,
    grace: float = GRACE_SECONDS,
) -> EnrichOutcome:
    """Explain every site: cache hits cost nothing; misses go to the explainer, each answer
    cached as soon as it arrives. SIGINT/SIGTERM stop new requests, let those in flight
    finish for up to `grace` seconds (a second signal cancels them at once); the sites left
    are `pending` and `interrupted_by` says which signal stopped the run."""
    console = console or Console()
    outcome = EnrichOutcome()
    siblings = siblings_of(sites)
    keyed = _by_key(sites, explainer)
    misses: dict[str, list[Site]] = {}
    hits: dict[str, CachedExplanation] = {}
    for key, group in keyed.items():
        cached = store.get_explanation(key)
        if cached is None:
            misses[key] = group
        else:
            hits[key] = cached
    with _Interruption(outcome, grace) as interruption:
        # Cached answers are checked again: an explanation may not hold in a newer commit.
        # A grounding may look up what all of them need in one go (not one lookup each).
        prefetch = getattr(grounding, "prefetch", None)
        if prefetch is not None and hits:
            try:
                prefetch([cached.explanation for cached in hits.values()])
            except Exception:
                if outcome.interrupted_by is None:
                    raise
        for key, cached in hits.items():
            # Once interrupted, cached answers are kept unchecked: they cost nothing, and
            # leaving them out would drop their records from a reused output directory.
            warnings: list[str] = []
            if outcome.interrupted_by is None:
                try:
                    warnings = grounding.check(cached.explanation)
                except Exception:
                    if outcome.interrupted_by is None:
                        raise  # not a lookup killed by the same Ctrl-C
            for site in keyed[key]:
                rid = record_id(site)
                outcome.explanations[rid] = cached
                outcome.cache_hits += 1
                if warnings:
                    outcome.grounding_warnings[rid] = list(warnings)
        if misses:
            asyncio.run(
                _explain_misses(
                    misses,
                    siblings,
                    explainer,
                    store,
                    grounding,
                    outcome,
                    max(1, concurrency),
                    _Budget(max_requests, max_tokens),
                    console,
                    interruption,
                )
            )
    return outcome


async def _explain_misses(
    misses: dict[str, list[Site]],
    siblings: dict[str, list[Site]],
    explainer: Explainer,
    store: Store,
    grounding: Grounding,
    outcome: EnrichOutcome,
    concurrency: int,
    budget: _Budget,
    console: Console,
    interruption: _Interruption,
) -> None:
    semaphore = asyncio.Semaphore(concurrency)
    unfinished = set(misses)
    failed_in_a_row = 0
    explained_any = False

    def record(key: str, result: ExplainResult) -> None:
        nonlocal failed_in_a_row, explained_any
        budget.used = budget.used + result.usage
        outcome.usage = outcome.usage + result.usage
        if result.explanation is None and outcome.interrupted_by is not None:
            return  # most likely the signal's doing (a killed subprocess): leave it pending
        unfinished.discard(key)
        group = misses[key]
        if result.explanation is None:
            for site in group:
                outcome.failures[record_id(site)] = result.error or "no explanation"
            failed_in_a_row += 1
            if not explained_any and failed_in_a_row >= GIVE_UP_AFTER and not outcome.gave_up:
                outcome.gave_up = (
                    f"the first {failed_in_a_row} sites all failed, the last with: "
                    f"{(result.error or 'no explanation').rstrip('.')}"
                )
            return
        failed_in_a_row, explained_any = 0, True
        cached = CachedExplanation(
            explanation=result.explanation, usage=result.usage, analyzed_at=now_timestamp()
        )
        store.put_explanation(key, cached)
        for site in group:
            outcome.explanations[record_id(site)] = cached
            if result.grounding_warnings:
                outcome.grounding_warnings[record_id(site)] = list(result.grounding_warnings)

    with console.progress("explain", len(misses), "tokens") as tracker:

        async def one(key: str) -> None:
            async with semaphore:
                # The flag, not only the cancellation: an explainer that never yields to the
                # loop (offline) would otherwise run every site before the cancel arrives.
                stopped = outcome.interrupted_by is not None or outcome.gave_up is not None
                if stopped or not budget.allows_start():
                    return
                site = misses[key][0]
                request = ExplainRequest(site, siblings[record_id(site)], grounding)
                budget.in_flight += 1
                try:
                    result = await explainer.explain(request)
                except Exception as exc:  # an explainer bug must not sink the whole run
                    result = ExplainResult(None, f"{type(exc).__name__}: {exc}")
                finally:
                    budget.in_flight -= 1
                record(key, result)
                used = outcome.usage
                tracker.advance(1, tokens=used.prompt_tokens + used.completion_tokens)

        tasks = [asyncio.ensure_future(one(key)) for key in misses]
        interruption.watch(tasks)
        try:
            results = await asyncio.gather(*tasks, return_exceptions=True)
        finally:
            interruption.watch([])
            await _close(explainer)
        # Cancellation is how an interrupt ends a task; anything else (the cache file
        # failing, say) must not pass for a pending site.
        for result in results:
            if isinstance(result, BaseException) and not isinstance(result, asyncio.CancelledError):
                raise result

    for key in misses:
        if key in unfinished:
            outcome.pending.extend(record_id(site) for site in misses[key])


class _Interruption:
    """SIGINT/SIGTERM while enriching. The first signal stops new requests at once and gives
    those in flight `grace` seconds to finish (they are paid for: keep their answers); a
    second signal, or the end of the grace, cancels them.

    Plain `signal.signal` handlers (not the loop's) so the flag is set immediately, even
    while an explainer blocks the loop in a subprocess that the same signal kills: its error
    then leaves the site pending instead of failed. Handlers can only be set in the main
    thread; elsewhere signals keep their usual effect."""

    def __init__(self, outcome: EnrichOutcome, grace: float) -> None:
        self.outcome = outcome
        self.grace = grace
        self._tasks: list[asyncio.Future] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._previous: dict[int, object] = {}

    def __enter__(self) -> _Interruption:
        for signum in _SIGNAL_EXIT:
            try:
                self._previous[signum] = signal.signal(signum, self._handle)
            except ValueError:  # not the main thread
                pass
        return self

    def __exit__(self, *exc: object) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)

    def watch(self, tasks: list[asyncio.Future]) -> None:
        self._tasks = tasks
        self._loop = asyncio.get_running_loop() if tasks else None
        if tasks and self.outcome.interrupted_by is not None:
            self._cancel()

    def _handle(self, signum: int, frame: object) -> None:
        again = self.outcome.interrupted_by is not None
        self.outcome.interrupted_by = self.outcome.interrupted_by or signum
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._cancel if again else self._start_grace)

    def _start_grace(self) -> None:
        if self._loop is not None:
            self._loop.call_later(self.grace, self._cancel)

    def _cancel(self) -> None:
        for task in self._tasks:
            task.cancel()


async def _close(explainer: Explainer) -> None:
    """Let an explainer release its HTTP client inside the loop that created it."""
    close = getattr(explainer, "aclose", None)
    if close is not None:
        try:
            await close()
        except Exception:  # closing is best effort; the answers are already cached
            pass
