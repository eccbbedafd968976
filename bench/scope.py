"""What `--scope all` costs against `--scope validators` on vLLM 0.33.0, and what it finds.

Per scope: the sites by validator kind, a cold `vmine extract` (an empty cache: CPU seconds of
vmine and its workers, and wall seconds), a cold `vmine run --llm offline`, and the LLM tokens
`vmine run --llm openai --dry-run` estimates with an empty cache (no request is sent). The
scopes are run alternately, `--repeat` times each, and the median is printed. Then the share
of the corpus pastes of ValueErrors raised outside validators (tests/explain_corpus.py) whose
record `vmine explain` puts first, with `--scope all` datasets of the tests' repositories.

    .venv/bin/python bench/scope.py [--repeat N] [--only cost|pastes]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.runner import vmine  # noqa: E402
from bench.trees import VLLM_NEW, ensure_trees  # noqa: E402

SCOPES = ("validators", "all")
REPO_NAME = "vllm-project/vllm"
_DRY_RUN = re.compile(
    r"dry run: (\d+) sites, (\d+) cached, (\d+) to request .* \(about (\d+) input \+ (\d+) output"
)


def _tree_args(tree: Path, scope: str) -> list[str]:
    """The arguments every measured command shares: vLLM 0.33.0's tree, in `scope`."""
    return [str(tree), "--rev", f"v{VLLM_NEW}", "--repo-name", REPO_NAME, "--scope", scope]


def _extract(tree: Path, scope: str, scratch: Path) -> tuple[float, float, list[dict]]:
    out = scratch / f"sites-{scope}.jsonl"
    step = vmine(
        "extract",
        *_tree_args(tree, scope),
        "--cache-dir",
        str(scratch / f"cache-extract-{scope}"),
        "-o",
        str(out),
        "--ci",
    )
    sites = [json.loads(line) for line in out.read_text().splitlines()]
    return step.cpu, step.seconds, sites


def _run(tree: Path, scope: str, scratch: Path) -> tuple[float, float]:
    step = vmine(
        "run",
        *_tree_args(tree, scope),
        "--llm",
        "offline",
        "--cache-dir",
        str(scratch / f"cache-run-{scope}"),
        "-o",
        str(scratch / f"out-{scope}"),
        "--ci",
    )
    return step.cpu, step.seconds


def _dry_run(tree: Path, scope: str, scratch: Path) -> tuple[int, int, int]:
    step = vmine(
        "run",
        *_tree_args(tree, scope),
        "--llm",
        "openai",
        "--model",
        "gpt-4o-mini",
        "--dry-run",
        "--cache-dir",
        str(scratch / f"cache-dry-{scope}"),
        "--ci",
    )
    match = _DRY_RUN.search(step.stderr)
    if match is None:
        raise RuntimeError(f"no dry-run line in:\n{step.stderr}")
    _, _, requests, tokens_in, tokens_out = map(int, match.groups())
    return requests, tokens_in, tokens_out


def cost(repeat: int) -> None:
    tree = ensure_trees().vllm
    figures: dict[str, dict[str, list[float]]] = {s: {} for s in SCOPES}
    sites_of: dict[str, list[dict]] = {}
    for _ in range(repeat):
        for scope in SCOPES:  # alternated, so a change of load hits both alike
            with tempfile.TemporaryDirectory(prefix="vmine-bench-scope-") as scratch:
                cpu, wall, sites = _extract(tree, scope, Path(scratch))
                sites_of[scope] = sites
                run_cpu, run_wall = _run(tree, scope, Path(scratch))
                for name, value in (
                    ("extract cpu", cpu),
                    ("extract wall", wall),
                    ("run cpu", run_cpu),
                    ("run wall", run_wall),
                ):
                    figures[scope].setdefault(name, []).append(value)
    print(f"vLLM {VLLM_NEW}, cold (an empty cache each time), median of {repeat}:")
    for scope in SCOPES:
        with tempfile.TemporaryDirectory(prefix="vmine-bench-scope-") as scratch:
            requests, tokens_in, tokens_out = _dry_run(tree, scope, Path(scratch))
        sites = sites_of[scope]
        kinds = Counter(site["validatorKind"] for site in sites)
        median = {name: statistics.median(values) for name, values in figures[scope].items()}
        print(
            f"  --scope {scope}: {len(sites)} sites ("
            + ", ".join(f"{kind} {count}" for kind, count in sorted(kinds.items()))
            + ")\n"
            f"    extract:            {median['extract cpu']:.1f} s CPU, "
            f"{median['extract wall']:.1f} s wall\n"
            f"    run --llm offline:  {median['run cpu']:.1f} s CPU, {median['run wall']:.1f} s wall\n"
            f"    run --dry-run:      {requests} requests, about {tokens_in} input + "
            f"{tokens_out} output tokens",
            flush=True,
        )

    validator_sites = [s for s in sites_of["all"] if s["validatorKind"] != "none"]
    print(
        "  the validator sites of --scope all are those of --scope validators, fact for fact: "
        f"{validator_sites == sites_of['validators']}"
    )


GOAL = 0.9  # issue 19: the share of those pastes whose record explain puts first


def pastes() -> bool:
    """Whether the goal is met."""
    from tests.explain_corpus import OUTSIDE_PASTES
    from tests.outside_repos import finds, make_outside_repos, mine_outside

    with tempfile.TemporaryDirectory(prefix="vmine-bench-pastes-") as scratch:
        root = Path(scratch)
        repos = make_outside_repos(root / "repos")
        out = mine_outside(repos, root / "all", root / "cache")
        missed = [paste.name for paste in OUTSIDE_PASTES if not finds(paste, out)]
    found = len(OUTSIDE_PASTES) - len(missed)
    share = found / len(OUTSIDE_PASTES)
    print(
        f"explain, --scope all datasets: the right record first for {found} of "
        f"{len(OUTSIDE_PASTES)} pastes raised outside validators "
        f"({share:.0%}; goal >= {GOAL:.0%})" + "".join(f"\n  missed: {name}" for name in missed),
        flush=True,
    )
    return share >= GOAL


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", choices=["cost", "pastes"])
    args = parser.parse_args()
    met = pastes() if args.only in (None, "pastes") else True
    if args.only in (None, "cost"):
        cost(args.repeat)
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
