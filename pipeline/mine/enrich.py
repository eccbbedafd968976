"""Sites -> explanations: the cache first, then the explainer with bounded concurrency,
request/token budgets and clean interruption (finished answers are cached at once).

With a fallback (the offline explainer, when the explainer is an LLM) no site is left
without a record: a site the explainer failed on, or left when a budget ran out or the
explainer was given up on, gets the offline explanation (`offline-fallback`; it is not
cached, so a later run asks the LLM again), and a kept answer's fields that still fail
grounding are replaced by the offline explainer's versions of them."""

from __future__ import annotations

import asyncio
import functools
import signal
from collections import defaultdict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from pipeline.console import Console
from pipeline.dataset.models import Site, now_timestamp
from pipeline.exits import SIGNAL_EXIT
from pipeline.explainers.base import (
    Budget,
    Explainer,
    ExplainRequest,
    ExplainResult,
    Grounding,
    SiteGrounding,
    Usage,
)
from pipeline.explainers.fallback import Fallback, replace_fields
from pipeline.explainers.text import valid_text
from pipeline.keys import explanation_key, record_id
from pipeline.store import CachedExplanation, Store

# Seconds the requests in flight at a first SIGINT/SIGTERM get to finish before they are
# cancelled (they are already paid for); a second signal cancels them at once.
GRACE_SECONDS = 5.0
# Sites failing in a row, with none explained yet, after which the explainer is given up on
# (a wrong URL, key or model): without it a dead server costs every site its full retries.
GIVE_UP_AFTER = 3
FALLBACK = "offline-fallback"  # `explainedBy` of a record the fallback wrote


@dataclass
class EnrichOutcome:
    """What enrichment produced, by record id."""

    explanations: dict[str, CachedExplanation] = field(default_factory=dict)
    explained_by: dict[str, str] = field(default_factory=dict)  # id -> explainer provider
    failures: dict[str, str] = field(default_factory=dict)  # id -> reason (no record)
    fallbacks: dict[str, str] = field(default_factory=dict)  # id -> why the fallback wrote it
    replaced: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # id -> field -> why
    pending: list[str] = field(default_factory=list)  # ids not explained (budget, signal)
    grounding_warnings: dict[str, list[str]] = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)
    cache_hits: int = 0
    repairs: int = 0
    dropped_keys: int = 0
    fixed_values: int = 0
    interrupted_by: int | None = None  # the signal number that stopped the run
    gave_up: str | None = None  # why the explainer was given up on, if it was
    unreachable: bool = False  # given up on at once: its server could not be reached

    @property
    def exit_code_for_signal(self) -> int | None:
        return None if self.interrupted_by is None else SIGNAL_EXIT[self.interrupted_by]


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


def by_key(sites: Sequence[Site], explainer: Explainer) -> dict[str, list[Site]]:
    """The sites by explanation key (sites meaning the same share one explanation)."""
    keyed: dict[str, list[Site]] = defaultdict(list)
    for site in sites:
        keyed[
            explanation_key(
                explainer.model,
                explainer.prompt_version_for(site),
                site,
                whole_function=explainer.reads_whole_function,
            )
        ].append(site)
    return keyed


def plan(
    sites: Sequence[Site], explainer: Explainer, store: Store, grounding: Grounding
) -> EnrichPlan:
    """Count and estimate without calling the explainer (`--dry-run`)."""
    keyed = by_key(sites, explainer)
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
    """Stops requests once `max_requests` HTTP requests (retries and repairs count) or
    `max_tokens` tokens have been used. A site starting is granted its first request; each
    further one asks again through the site's `_SiteBudget`, so the count is exact."""

    def __init__(self, max_requests: int | None, max_tokens: int | None) -> None:
        self.max_requests = max_requests
        self.max_tokens = max_tokens
        self.granted = 0  # requests sent, or held by sites in flight
        self.tokens = 0
        self.exhausted = False

    def spent(self) -> bool:
        if self.max_requests is not None and self.granted >= self.max_requests:
            self.exhausted = True
        if self.max_tokens is not None and self.tokens >= self.max_tokens:
            self.exhausted = True
        return self.exhausted

    def start(self) -> _SiteBudget | None:
        """A site's budget, holding its first request; None when the budget is spent."""
        if self.spent():
            return None
        self.granted += 1
        return _SiteBudget(self)

    def finish(self, site: _SiteBudget, usage: Usage) -> None:
        """Count what a finished site really used instead of what it held."""
        self.granted += usage.requests - site.held
        self.tokens += usage.prompt_tokens + usage.completion_tokens


class _SiteBudget:
    """One site's leave to send requests (the `Budget` of explainers/base.py)."""

    def __init__(self, shared: _Budget) -> None:
        self.shared = shared
        self.held = 1
        self.taken = 0

    def spent(self) -> bool:
        return self.taken >= self.held and self.shared.spent()

    def take(self) -> bool:
        if self.taken < self.held:
            self.taken += 1
            return True
        if self.shared.spent():
            return False
        self.shared.granted += 1
        self.held += 1
        self.taken += 1
        return True


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
    fallback: Fallback | None = None,
    explain_misses: Callable[[Misses], Awaitable[None]] | None = None,
) -> EnrichOutcome:
    """Explain every site: cache hits cost nothing; misses go to the explainer, each answer
    cached as soon as it arrives. SIGINT/SIGTERM stop new requests, let those in flight
    finish for up to `grace` seconds (a second signal cancels them at once); the sites left
    are `pending` and `interrupted_by` says which signal stopped the run. With a `fallback`,
    see the module docstring. `explain_misses` replaces how the misses are explained (the
    Batch API: pipeline/mine/batch.py)."""
    console = console or Console()
    outcome = EnrichOutcome()
    siblings = siblings_of(sites)
    keep = _Keeper(outcome, explainer.provider, grounding, siblings, fallback)
    keyed = by_key(sites, explainer)
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
        if hits:
            try:
                grounding.prefetch([cached.explanation for cached in hits.values()])
            except Exception:
                if outcome.interrupted_by is None:
                    raise
        for key, cached in hits.items():
            # Once interrupted, cached answers are kept unchecked: they cost nothing, and
            # leaving them out would drop their records from a reused output directory.
            warnings: list[str] = []
            if outcome.interrupted_by is None:
                try:
                    # the sites of one key read the same settings (they are part of it)
                    warnings = grounding.check(cached.explanation, keyed[key][0].settings)
                except Exception:
                    if outcome.interrupted_by is None:
                        raise  # not a lookup killed by the same Ctrl-C
            for site in keyed[key]:
                keep.answer(site, cached, warnings)
                outcome.cache_hits += 1
        if misses:
            work = Misses(
                misses,
                siblings,
                explainer,
                store,
                grounding,
                console,
                outcome=outcome,
                keep=keep,
                interruption=interruption,
                budget=_Budget(max_requests, max_tokens),
                total_sites=len(sites),
                cached_sites=outcome.cache_hits,
            )
            explain = explain_misses or functools.partial(_explain_misses, concurrency=concurrency)
            asyncio.run(_explaining(work, explain))
        if fallback is not None:
            keep.fall_back_all([site for group in misses.values() for site in group])
    return outcome


class _Keeper:
    """Puts explanations into the outcome: an LLM answer with its ungrounded fields replaced,
    or the fallback's explanation for a site without one."""

    def __init__(
        self,
        outcome: EnrichOutcome,
        provider: str,
        grounding: Grounding,
        siblings: dict[str, list[Site]],
        fallback: Fallback | None,
    ) -> None:
        self.outcome = outcome
        self.provider = provider
        self.grounding = grounding
        self.siblings = siblings
        self.fallback = fallback

    def answer(self, site: Site, cached: CachedExplanation, warnings: list[str]) -> None:
        rid = record_id(site)
        if warnings and self.fallback is not None:
            offline = self.fallback(site, self.siblings[rid])
            merged, replaced = replace_fields(cached.explanation, offline, warnings)
            if replaced:
                cached = cached.model_copy(update={"explanation": merged})
                warnings = self.grounding.check(merged, site.settings)
                self.outcome.replaced[rid] = replaced
        self.outcome.explanations[rid] = cached
        self.outcome.explained_by[rid] = self.provider
        if warnings:
            self.outcome.grounding_warnings[rid] = list(warnings)

    def fall_back_all(self, sites: list[Site]) -> None:
        """The fallback's explanation for each site that failed or is pending (unless a
        signal stopped the run: it must stop within seconds)."""
        outcome = self.outcome
        pending = set() if outcome.interrupted_by is not None else set(outcome.pending)
        if outcome.unreachable and outcome.gave_up:
            reason_left = outcome.gave_up  # as the sites that failed of it: one reason for all
        elif outcome.gave_up:
            reason_left = f"explainer given up on: {outcome.gave_up}"
        else:
            reason_left = "the budget ran out before this site"
        for site in sites:
            rid = record_id(site)
            if rid in outcome.failures:
                reason = outcome.failures[rid]
            elif rid in pending:
                reason = reason_left
            else:
                continue
            try:
                explanation = self.fallback(site, self.siblings[rid])
            except Exception as exc:  # the site keeps its failure
                outcome.failures[rid] += f"; the offline fallback failed too: {exc}"
                continue
            outcome.failures.pop(rid, None)
            outcome.explanations[rid] = CachedExplanation(
                explanation=explanation, usage=Usage(), analyzed_at=now_timestamp()
            )
            outcome.explained_by[rid] = FALLBACK
            outcome.fallbacks[rid] = reason
            warnings = self.grounding.check(explanation, site.settings)
            if warnings:
                outcome.grounding_warnings[rid] = warnings


class Misses:
    """The sites the cache could not answer (by explanation key), with what explaining them
    needs: what a way of explaining them (request by request here, a Batch API in
    pipeline/mine/batch.py) asks of enrichment and books with it."""

    def __init__(
        self,
        sites: dict[str, list[Site]],
        siblings: dict[str, list[Site]],
        explainer: Explainer,
        store: Store,
        grounding: Grounding,
        console: Console,
        *,
        outcome: EnrichOutcome,
        keep: _Keeper,
        interruption: _Interruption,
        budget: _Budget,
        total_sites: int = 0,
        cached_sites: int = 0,
    ) -> None:
        self.sites = sites
        # for progress: the sites of the run, and those of them the cache answered
        self.total_sites = total_sites or sum(len(group) for group in sites.values())
        self.cached_sites = cached_sites
        self.siblings = siblings
        self.explainer = explainer
        self.store = store
        self.grounding = grounding
        self.console = console
        self._outcome = outcome
        self._keep = keep
        self._interruption = interruption
        self._budget = budget

    @property
    def interrupted(self) -> bool:
        """Whether a signal stopped the run: start nothing more."""
        return self._outcome.interrupted_by is not None

    def request(self, key: str, budget: Budget | None = None) -> ExplainRequest:
        site = self.sites[key][0]
        if budget is None:
            return ExplainRequest(site, self.siblings[record_id(site)], self.grounding)
        return ExplainRequest(site, self.siblings[record_id(site)], self.grounding, budget)

    def site_grounding(self, key: str) -> SiteGrounding:
        """The grounding bound to the settings of a key's sites (they read the same ones)."""
        return SiteGrounding(self.grounding, self.sites[key][0].settings)

    def grant(self) -> bool:
        """Leave from the run's budget for one request; False once it is spent."""
        return self._budget.start() is not None

    def count_tokens(self, tokens: int) -> None:
        """Tokens an answer used, for `--max-tokens`."""
        self._budget.tokens += tokens

    def settle(self, key: str, result: ExplainResult) -> bool:
        """Book a result: an answer is cached and kept, a failure noted; False when the site
        stays pending (stopped by the budget, or most likely by the signal's doing)."""
        outcome = self._outcome
        outcome.usage = outcome.usage + result.usage
        outcome.repairs += result.repairs
        outcome.dropped_keys += result.dropped_keys
        outcome.fixed_values += result.fixed_values
        if result.explanation is None and outcome.interrupted_by is not None:
            return False  # e.g. a subprocess killed by the same Ctrl-C: leave it pending
        if result.out_of_budget:
            return False  # stopped by the budget: pending, as a site that never started
        group = self.sites[key]
        error = result.error or "no explanation"
        cached = None
        if result.explanation is not None:
            cached = CachedExplanation(
                explanation=result.explanation, usage=result.usage, analyzed_at=now_timestamp()
            )
            try:
                self.store.put_explanation(key, cached)
            except ValueError as exc:  # text no file can hold: a bad answer like any other
                why = valid_text(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
                cached, error = None, f"the answer cannot be stored: {why}"
        if cached is None:
            for site in group:
                outcome.failures[record_id(site)] = error
            return True
        for site in group:
            self._keep.answer(site, cached, list(result.grounding_warnings))
        return True

    def leave_pending(self, keys: set[str], usage: Usage | None = None) -> None:
        """The sites of `keys` stay pending (a rerun asks for them); `usage` is what their
        requests cost so far."""
        if usage is not None:
            self._outcome.usage = self._outcome.usage + usage
        for key in self.sites:
            if key in keys:
                self._outcome.pending.extend(record_id(site) for site in self.sites[key])


async def _explaining(work: Misses, explain: Callable[[Misses], Awaitable[None]]) -> None:
    """Explain the misses, then let the explainer release its HTTP client inside the loop
    that created it."""
    try:
        await explain(work)
    finally:
        try:
            await work.explainer.aclose()
        except Exception:  # closing is best effort; the answers are already cached
            pass


async def _explain_misses(work: Misses, concurrency: int = 8) -> None:
    """Each miss through `explainer.explain`, `concurrency` at a time."""
    outcome, budget = work._outcome, work._budget
    semaphore = asyncio.Semaphore(max(1, concurrency))
    unfinished = set(work.sites)
    failed_in_a_row = 0
    explained_any = False

    def record(key: str, result: ExplainResult) -> None:
        nonlocal failed_in_a_row, explained_any
        if not work.settle(key, result):
            return
        unfinished.discard(key)
        if result.explanation is None:
            failed_in_a_row += 1
            if outcome.gave_up:
                return
            if result.unreachable:  # no other site can get through either
                outcome.gave_up, outcome.unreachable = result.error, True
            elif not explained_any and failed_in_a_row >= GIVE_UP_AFTER:
                outcome.gave_up = (
                    f"the first {failed_in_a_row} sites all failed, the last with: "
                    f"{(result.error or 'no explanation').rstrip('.')}"
                )
            return
        failed_in_a_row, explained_any = 0, True

    # The bar counts sites, as the records do: those the cache answered are done already,
    # and the sites of one key (they mean the same) are explained by one answer.
    with work.console.progress("explain", work.total_sites, "tokens") as tracker:
        if work.cached_sites:
            tracker.advance(work.cached_sites, tokens=0)

        async def one(key: str) -> None:
            async with semaphore:
                # The flag, not only the cancellation: an explainer that never yields to the
                # loop (offline) would otherwise run every site before the cancel arrives.
                stopped = outcome.interrupted_by is not None or outcome.gave_up is not None
                allowance = None if stopped else budget.start()
                if allowance is None:
                    return
                try:
                    result = await work.explainer.explain(work.request(key, allowance))
                except Exception as exc:  # an explainer bug must not sink the whole run
                    result = ExplainResult(None, f"{type(exc).__name__}: {exc}")
                except asyncio.CancelledError:
                    budget.finish(allowance, Usage(requests=allowance.taken))
                    raise
                budget.finish(allowance, result.usage)
                record(key, result)
                used = outcome.usage
                tracker.advance(
                    len(work.sites[key]), tokens=used.prompt_tokens + used.completion_tokens
                )

        tasks = [asyncio.ensure_future(one(key)) for key in work.sites]
        work._interruption.watch(tasks)
        try:
            results = await asyncio.gather(*tasks, return_exceptions=True)
        finally:
            work._interruption.watch([])
        # Cancellation is how an interrupt ends a task; anything else (the cache file
        # failing, say) must not pass for a pending site.
        for result in results:
            if isinstance(result, BaseException) and not isinstance(result, asyncio.CancelledError):
                raise result

    work.leave_pending(unfinished)


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
        for signum in SIGNAL_EXIT:
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
