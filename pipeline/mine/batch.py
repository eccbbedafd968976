"""`vmine run --batch`, `--batch-file`, `--batch-results`: the sites the cache cannot answer,
explained through a Batch API, or through a request file run elsewhere (vLLM's offline
runner on a GPU cluster) and its results file.

Through the API the work goes in rounds, each one batch: the first questions; then, in a
second (and third) batch, the repairs that answers call for and the requests the previous
batch did not answer (failed lines, an expired or failed batch). Every batch submitted is
stored with the conversations it carries before it is followed, so an interrupted run
resumes following it instead of submitting again. What is left after the last round is
settled as the online explainer settles it: a valid answer kept, else the offline fallback.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pipeline.dataset.models import Site
from pipeline.explainers.base import BatchError, ExplainRequest, Grounding, Usage
from pipeline.explainers.batch import BatchAPI, BatchState, read_results, request_line
from pipeline.explainers.conversation import Conversation, Outcome
from pipeline.explainers.llm import LLMExplainer
from pipeline.explainers.transport import Completion
from pipeline.keys import record_id
from pipeline.mine.enrich import Misses, by_key, siblings_of
from pipeline.output import write_atomic
from pipeline.store import Store

MAX_ROUNDS = 3  # the first questions, then up to two rounds of repairs and retries
DEFAULT_POLL_SECONDS = 30.0
_STATUS = re.compile(r"^HTTP (\d+): (.*)$", re.DOTALL)


@dataclass(frozen=True)
class BatchOptions:
    """How misses go out: `api` (the Batch API, polled every `poll_seconds`), or `results`
    (read the answers from `path`, a results file of the request file `--batch-file` wrote)."""

    mode: Literal["api", "results"]
    path: Path | None = None
    poll_seconds: float = DEFAULT_POLL_SECONDS


def custom_id(key: str, round_: int) -> str:
    return f"{key}.{round_}"


def key_of(custom: str) -> str:
    return custom.rsplit(".", 1)[0]


def write_request_file(
    sites: Sequence[Site],
    explainer: LLMExplainer,
    store: Store,
    grounding: Grounding,
    path: Path,
    max_requests: int | None = None,
) -> tuple[int, int]:
    """Write the first-round requests of the sites the cache cannot answer to `path`
    (JSONL, the Batch API's input format); (requests written, sites cached)."""
    keyed = by_key(sites, explainer)
    cached = store.has_explanations(keyed)
    siblings = siblings_of(sites)
    lines = []
    for key, group in keyed.items():
        if key in cached:
            continue
        if max_requests is not None and len(lines) >= max_requests:
            break
        request = ExplainRequest(group[0], siblings[record_id(group[0])], grounding)
        body = explainer.request_body(explainer.messages(request))
        lines.append(request_line(custom_id(key, 1), body))
    write_atomic(Path(path), "".join(lines).encode("utf-8"))
    return len(lines), sum(len(group) for key, group in keyed.items() if key in cached)


def batch_runner(
    options: BatchOptions, explainer: LLMExplainer
) -> Callable[[Misses], Awaitable[None]]:
    """What enrich runs on its misses instead of asking the server request by request;
    `explainer` builds the requests (it is the run's explainer)."""

    async def run(work: Misses) -> None:
        rounds = _Rounds(work, explainer)
        if options.mode == "results":
            assert options.path is not None
            rounds.ingest_file(Path(options.path))
        else:
            await rounds.through_api(options.poll_seconds)
        rounds.settle_left()

    return run


class _Rounds:
    """The conversations of the misses, moved on by the answers of one batch after another."""

    def __init__(self, work: Misses, explainer: LLMExplainer) -> None:
        self.work = work
        self.explainer = explainer
        self.conversations = {
            key: Conversation(explainer.messages(work.request(key))) for key in work.sites
        }
        self.rounds = dict.fromkeys(work.sites, 1)  # the round each key's next request is in
        self.usage = {key: Usage() for key in work.sites}
        self.todo: set[str] = set(work.sites)  # keys with a request to send
        self.last_error: dict[str, str] = {}
        self.sent_with = explainer.profile  # the profile the batch being read was built with

    # -- a results file ----------------------------------------------------------------

    def ingest_file(self, path: Path) -> None:
        try:
            results = read_results(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            raise BatchError(f"{path}: cannot read the results file: {exc}") from None
        by_key_found = {key_of(custom): result for custom, result in results.items()}
        for key in list(self.todo):
            result = by_key_found.get(key)
            self.usage[key].requests += int(result is not None)
            self._take(
                key,
                result if result is not None else f"not in {path.name}",
                no_more="a results file carries no repair",
            )

    # -- the Batch API -----------------------------------------------------------------

    async def through_api(self, poll_seconds: float) -> None:
        explainer, store = self.explainer, self.work.store
        api = BatchAPI(explainer.base_url, explainer.api_key, explainer.timeout)
        resumed = self._resumable()
        while resumed or self.todo:
            if self.work.interrupted:
                break
            if resumed:
                batch_id, carried = resumed.pop(0)
                self.work.console.line(f"batch {batch_id}: resuming, {len(carried)} requests")
            else:
                submitted = self._submit_lines()
                if not submitted:
                    break  # the budget is spent: the rest stays pending
                carried = submitted
                self.sent_with = explainer.profile
                batch_id = await api.submit(
                    request_line(custom, body) for custom, (_, body) in submitted.items()
                )
                store.put_batch(
                    batch_id, explainer.server_key, explainer.model, self._state(carried)
                )
                self.work.console.line(f"batch {batch_id}: submitted {len(carried)} requests")
            state = await self._follow(api, batch_id, len(carried), poll_seconds)
            if state is None:  # interrupted: the batch runs on, and a rerun resumes it
                self.todo |= {key_of(custom) for custom in carried}
                break
            results = {} if state.status == "failed" else await api.results(state)
            store.close_batch(batch_id)
            why = f"batch {batch_id} {state.status}" + (f": {state.errors}" if state.errors else "")
            for custom in carried:
                key = key_of(custom)
                if key not in self.conversations:
                    continue  # explained since, or no longer a site
                self.usage[key].requests += 1
                result = results.get(custom)
                self._take(key, result if result is not None else why)

    def _resumable(self) -> list[tuple[str, dict[str, tuple[str, dict]]]]:
        """Batches a previous run submitted for keys that are still misses, with their
        conversations restored; batches of no use any more are closed."""
        found = []
        for batch_id, text in self.work.store.open_batches(
            self.explainer.server_key, self.explainer.model
        ):
            try:
                items = json.loads(text)["items"]
            except (ValueError, KeyError, TypeError):
                items = {}
            carried = {}
            for custom, item in items.items():
                key = key_of(custom)
                if key in self.todo:
                    self.conversations[key] = Conversation.from_json(item["conversation"])
                    self.rounds[key] = item["round"]
                    self.todo.discard(key)
                    carried[custom] = (key, {})
            if carried:
                found.append((batch_id, carried))
            else:
                self.work.store.close_batch(batch_id)
        return found

    def _submit_lines(self) -> dict[str, tuple[str, dict]]:
        """The requests of the keys with one to send, as far as the budget goes."""
        lines: dict[str, tuple[str, dict]] = {}
        for key in sorted(self.todo):
            if not self.work.grant():
                break
            body = self.explainer.request_body(self.conversations[key].messages)
            lines[custom_id(key, self.rounds[key])] = (key, body)
            self.todo.discard(key)
        return lines

    def _state(self, carried: dict[str, tuple[str, dict]]) -> str:
        return json.dumps(
            {
                "items": {
                    custom: {
                        "round": self.rounds[key],
                        "conversation": self.conversations[key].to_json(),
                    }
                    for custom, (key, _) in carried.items()
                }
            }
        )

    async def _follow(
        self, api: BatchAPI, batch_id: str, total: int, poll_seconds: float
    ) -> BatchState | None:
        with self.work.console.progress(f"batch {batch_id}", total) as tracker:

            def progress(state: BatchState) -> None:
                if state.done > tracker.done:
                    tracker.advance(state.done - tracker.done, status=state.status)

            return await api.follow(batch_id, poll_seconds, progress, lambda: self.work.interrupted)

    # -- answers -----------------------------------------------------------------------

    def _take(self, key: str, result: Completion | str, *, no_more: str | None = None) -> None:
        """Move a key's conversation on with its answer (or note why it has none); with
        `no_more` (why) or in the last round, nothing more is sent for it."""
        if no_more is None and self.rounds[key] >= MAX_ROUNDS:
            no_more = "no batch round is left for the repair"
        last_round = no_more is not None
        conversation = self.conversations[key]
        if isinstance(result, str):
            self._refused(result)
            self.last_error[key] = result
            if last_round:
                self._settle(key, conversation.settle(result), conversation)
            else:
                self.rounds[key] += 1
                self.todo.add(key)
            return
        if not self.explainer.profile.settled and self.explainer.profile == self.sent_with:
            self.explainer.adopt(self.sent_with, settled=True)  # an answer came back with it
        usage = self.usage[key]
        usage.prompt_tokens += result.prompt_tokens
        usage.completion_tokens += result.completion_tokens
        self.work.count_tokens(result.prompt_tokens + result.completion_tokens)
        moved, settled = conversation.advance(
            result.content, self.work.site_grounding(key), cut=result.finish_reason == "length"
        )
        self.conversations[key] = moved
        if settled is not None:
            self._settle(key, settled, moved)
        elif last_round:
            self._settle(key, moved.settle(no_more or ""), moved)
        else:
            self.rounds[key] += 1
            self.todo.add(key)

    def _refused(self, error: str) -> None:
        """A line refused for its shape (a json_schema the server does not take) changes the
        profile the next round's requests are built with."""
        found = _STATUS.match(error)
        if found is None:
            return
        sent = self.sent_with
        changed = sent.after_refusal(int(found[1]), found[2], self.explainer.forced_format)
        if changed is not None and self.explainer.profile == sent:  # once per refused shape
            self.explainer.adopt(changed, settled=False)

    def _settle(self, key: str, settled: Outcome, conversation: Conversation) -> None:
        self.work.settle(key, conversation.result(settled, self.usage[key]))
        del self.conversations[key]
        self.todo.discard(key)

    def settle_left(self) -> None:
        """Keys not settled when the work stops (the budget, a signal) stay pending; what
        their requests cost so far is counted."""
        left = set(self.conversations)
        self.work.leave_pending(left, sum((self.usage[key] for key in left), Usage()))
