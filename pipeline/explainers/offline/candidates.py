"""The example fixes the offline explainer can offer for one site, its own choice first: the
fix it writes for the site as it is, then the fix it writes for each guard alone (each part
of an `and` apart; the innermost first: the test that singles out this error). `vmine verify` runs them on a
verified site's reproducer and keeps the first that stops the raise, so a fix that fails is
not the one offered first and one that verified is (pipeline/verify/run.py). Only a hook:
how each fix is written stays the explainer's (explain_site)."""

from __future__ import annotations

import ast

from pipeline.dataset.models import Site
from pipeline.explainers.offline.explainer import explain_site

MAX_CANDIDATES = 4


def _conjuncts(guard: str) -> list[str]:
    """`a and (b or c)`: `a`, `b or c`; a guard that is no `and` is itself."""
    try:
        node = ast.parse(guard, mode="eval").body
    except SyntaxError:
        return [guard]
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
        return [ast.unparse(value) for value in node.values]
    return [guard]


def fix_candidates(site: Site, command: str | None = None) -> list[str]:
    """The distinct example fixes for `site`, the explainer's own first (at most
    MAX_CANDIDATES); `command` starts their command lines (`vllm serve MODEL`)."""
    found = [explain_site(site, (), command).exampleFix]
    tests = [part for guard in site.guards for part in _conjuncts(guard)]
    for guard in reversed(tests if len(tests) > 1 else []):
        alone = site.model_copy(update={"guards": [guard]})
        fix = explain_site(alone, (), command).exampleFix
        if fix not in found:
            found.append(fix)
        if len(found) >= MAX_CANDIDATES:
            break
    return found
