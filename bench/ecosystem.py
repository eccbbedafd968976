"""Beyond vLLM and SGLang: packages nobody here wrote, extracted as `pypi:` sources.

Per package: sites by validator kind and by message status, the cold extract's wall time
and peak RSS (vmine and its workers), and where its first site links on GitHub. For
transformers, the cold extract is timed against semgrep on the same tree (goal: at most
0.10x semgrep's wall time), and the issue's counts are taken again: how many `raise
ValueError` in `__init__` of configuration classes (PretrainedConfig's subclasses among
them) are sites now. No package may need --repo-name (lmdeploy's metadata names no GitHub
repository: it is audited, not checked for that). Then the packages of issue 22's coverage
audit (deepspeed, lmdeploy, diffusers, accelerate, datasets, outlines): how many of the
validation errors vmine missed there are sites now, and how many of its false positives
are left.

    .venv/bin/python bench/ecosystem.py

Releases are downloaded once with pip into bench/.cache/ecosystem/; each timed run starts
from an empty store (the release repositories are copied into a fresh cache directory).
transformers' time is the median of three cold runs (the machine is shared).
"""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import get_args

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench import export_tree, measure, run_semgrep, semgrep  # noqa: E402
from bench.runner import VMINE  # noqa: E402
from bench.trees import CACHE  # noqa: E402
from extractors.facts import MessageStatus, ValidatorKind  # noqa: E402

RELEASES = CACHE / "ecosystem"
MAX_RATIO = 0.10


@dataclass(frozen=True)
class Package:
    name: str
    version: str
    tag_format: str = "v{version}"
    repo_name: str | None = None  # only for a release whose metadata names no GitHub repo
    # sites a reader of the code counts as validation errors (filePath, lineNumber), and
    # sites that are none (a test helper)
    expected: tuple[tuple[str, int], ...] = ()
    not_expected: tuple[tuple[str, int], ...] = ()

    @property
    def spec(self) -> str:
        return f"pypi:{self.name}=={self.version}"


PACKAGES = (
    Package("transformers", "4.57.1"),
    Package("peft", "0.17.1"),
    Package("trl", "0.24.0"),
    Package("langchain-core", "1.0.0", "langchain-core=={version}"),
    Package("pydantic-settings", "2.11.0"),
    Package("fastapi", "0.120.0", "{version}"),
)

# The packages of issue 22's coverage audit, with the validation errors vmine missed there
# (names `_validated_*`, `_require_*`, `ensure_*`; helpers in another file reached through
# imports) and the test helper it reported: recall and false positives, counted.
_FOLDING = "deepspeed/module_inject/auto_ep_folding.py"
AUDITED = (
    Package(
        "deepspeed",
        "0.19.8",
        expected=(
            ("accelerator/abstract_accelerator.py", 313),
            ("accelerator/abstract_accelerator.py", 315),
            ("deepspeed/accelerator/abstract_accelerator.py", 313),
            ("deepspeed/accelerator/abstract_accelerator.py", 315),
            (_FOLDING, 78),
            ("deepspeed/moe/ep_repack.py", 346),
            ("deepspeed/moe/ep_repack.py", 360),
            (_FOLDING, 101),
            (_FOLDING, 106),
            (_FOLDING, 112),
            ("deepspeed/module_inject/auto_ep_presets/base.py", 20),
            ("deepspeed/checkpoint/autoep_affine.py", 98),
        ),
    ),
    Package(
        "lmdeploy",
        "0.18.0",
        repo_name="InternLM/lmdeploy",
        expected=(
            ("lmdeploy/_guided_decoding.py", 88),
            ("lmdeploy/serve/processors/multimodal.py", 158),
        ),
    ),
    Package(
        "diffusers",
        "0.42.1",
        expected=(
            ("src/diffusers/pipelines/cosmos/mixed_precision.py", 388),
            ("src/diffusers/pipelines/cosmos/mixed_precision.py", 395),
            ("src/diffusers/utils/versions.py", 73),
            ("src/diffusers/utils/versions.py", 83),
            ("src/diffusers/utils/versions.py", 90),
        ),
        not_expected=(
            ("src/diffusers/utils/testing_utils.py", 1488),
            ("src/diffusers/utils/testing_utils.py", 1538),
        ),
    ),
    Package(
        "accelerate",
        "1.16.0",
        expected=(
            ("src/accelerate/utils/environment.py", 71),
            ("src/accelerate/utils/versions.py", 39),
        ),
    ),
    Package(
        "datasets", "5.2.0", expected=(("src/datasets/packaged_modules/tsfile/tsfile.py", 747),)
    ),
    Package("outlines", "1.3.3"),
)


@dataclass
class Outcome:
    package: Package
    seconds: float
    peak_rss: int
    sites: list[dict]
    error: str = ""
    all_seconds: list[float] = field(default_factory=list)  # of every run, fastest first


def _extract(package: Package, cache: Path, out: Path):
    cmd = [
        str(VMINE),
        "extract",
        package.spec,
        "--tag-format",
        package.tag_format,
        "--cache-dir",
        str(cache),
        "-o",
        str(out),
        "--ci",
        *(["--repo-name", package.repo_name] if package.repo_name else []),
    ]
    return measure(cmd)


def _download(package: Package) -> str:
    """Build the release's repository in bench/.cache/ecosystem (once); '' or the error."""
    with tempfile.TemporaryDirectory(prefix="vmine-eco-") as tmp:
        run = _extract(package, RELEASES, Path(tmp) / "sites.jsonl")
    if run.returncode not in (0, 1):
        lines = [ln for ln in run.stderr.splitlines() if ln.strip()]
        return lines[-1] if lines else f"exit {run.returncode}"
    return ""


def cold_extract(package: Package, runs: int = 1) -> Outcome:
    """The release's cold extract: its repository copied into an empty cache directory; with
    several `runs`, the one of median wall time (the machine is shared: one run can meet a
    burst of other work)."""
    error = _download(package)
    if error:
        return Outcome(package, 0.0, 0, [], error)
    outcomes = sorted((_cold_run(package) for _ in range(runs)), key=lambda o: o.seconds)
    outcome = outcomes[len(outcomes) // 2]
    outcome.all_seconds = [o.seconds for o in outcomes]
    return outcome


def _cold_run(package: Package) -> Outcome:
    with tempfile.TemporaryDirectory(prefix="vmine-eco-") as tmp:
        cache = Path(tmp) / "cache"
        shutil.copytree(RELEASES / "releases", cache / "releases")
        out = Path(tmp) / "sites.jsonl"
        run = _extract(package, cache, out)
        if run.returncode not in (0, 1):
            lines = [ln for ln in run.stderr.splitlines() if ln.strip()]
            return Outcome(
                package,
                run.seconds,
                run.peak_rss,
                [],
                lines[-1] if lines else f"exit {run.returncode}",
            )
        sites = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    return Outcome(package, run.seconds, run.peak_rss, sites)


def _counts(sites: list[dict], field: str, names: tuple[str, ...]) -> str:
    found = Counter(site[field] for site in sites)
    return " ".join(f"{name}={found[name]}" for name in names)


def report(outcome: Outcome) -> None:
    label = f"{outcome.package.name} {outcome.package.version}"
    if outcome.error:
        print(f"  {label}: FAILED: {outcome.error}", flush=True)
        return
    sites = outcome.sites
    print(
        f"  {label}: {len(sites)} sites, {outcome.seconds:.2f} s cold, "
        f"peak RSS {outcome.peak_rss / 2**20:.0f} MiB",
        flush=True,
    )
    print(f"    by kind:   {_counts(sites, 'validatorKind', get_args(ValidatorKind))}")
    print(f"    by status: {_counts(sites, 'messageStatus', get_args(MessageStatus))}")
    subclasses = Counter(s["errorClass"] for s in sites if s["errorClass"] != "ValueError")
    with_prior = sum(1 for s in sites if s.get("priorChecks"))
    print(
        f"    ValueError subclasses raised: {dict(sorted(subclasses.items())) or 'none'}; "
        f"sites with priorChecks: {with_prior}"
    )
    if sites:
        print(f"    first link: {sites[0]['githubUrl']}", flush=True)


# -- transformers: the counts, and semgrep on the same tree ------------------------


def _init_raises(tree: Path) -> dict[tuple[str, int], str]:
    """(path, line) -> class name of every `raise ValueError` in an `__init__` (its own
    scope), over the tree, with the classes' bases for the subclass test."""
    found: dict[tuple[str, int], str] = {}
    for path in sorted(tree.rglob("*.py")):
        try:
            module = ast.parse(path.read_bytes())
        except (SyntaxError, ValueError):
            continue
        relative = path.relative_to(tree).as_posix()
        for node in ast.walk(module):
            if not isinstance(node, ast.ClassDef):
                continue
            for item in node.body:
                if not (isinstance(item, ast.FunctionDef) and item.name == "__init__"):
                    continue
                for inner in ast.walk(item):
                    exc = inner.exc if isinstance(inner, ast.Raise) else None
                    exc = exc.func if isinstance(exc, ast.Call) else exc
                    if isinstance(exc, ast.Name) and exc.id == "ValueError":
                        found[(relative, inner.lineno)] = node.name
    return found


def _bases(tree: Path) -> dict[str, set[str]]:
    bases: dict[str, set[str]] = {}
    for path in sorted(tree.rglob("*.py")):
        try:
            module = ast.parse(path.read_bytes())
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(module):
            if isinstance(node, ast.ClassDef):
                names = {
                    b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases
                }
                bases.setdefault(node.name, set()).update(names)
    return bases


def _derived(bases: dict[str, set[str]], root: str) -> set[str]:
    found, grew = {root}, True
    while grew:
        grew = False
        for name, parents in bases.items():
            if name not in found and parents & found:
                found.add(name)
                grew = True
    return found


def transformers_figures(outcome: Outcome) -> list[str]:
    """The issue's counts and the semgrep comparison; returns the failed checks."""
    package = outcome.package
    git_dir = RELEASES / "releases" / f"{package.name}.git"
    rev = f"refs/tags/{package.name}=={package.version}"
    tree = export_tree(git_dir, rev, f"{package.name}-{package.version}")
    sites = {(s["filePath"].removeprefix("src/"), s["lineNumber"]) for s in outcome.sites}
    raises = _init_raises(tree)
    configs = _derived(_bases(tree), "PretrainedConfig")
    in_configs = {key for key, cls in raises.items() if cls in configs}
    kinds = Counter(s["validatorKind"] for s in outcome.sites)
    print(
        f"  transformers: `raise ValueError` in __init__: {len(raises)}; in PretrainedConfig "
        f"subclasses: {len(in_configs)}, of which sites: {len(in_configs & sites)}; "
        f"sites of kind init: {kinds['init']}",
        flush=True,
    )
    failed = []
    try:
        exe = semgrep()
    except (OSError, subprocess.CalledProcessError) as exc:
        print(f"  semgrep: not installed ({exc})")
        return ["semgrep installed"]
    run, matches = run_semgrep(exe, tree)
    if run.returncode != 0:
        print(f"  semgrep: exit {run.returncode}")
        return ["semgrep exit code"]
    ratio = outcome.seconds / run.seconds
    verdict = "ok" if ratio <= MAX_RATIO else "FAIL"
    runs = ", ".join(f"{seconds:.2f}" for seconds in outcome.all_seconds)
    print(
        f"  transformers: semgrep {run.seconds:.2f} s (peak RSS {run.peak_rss / 2**20:.0f} "
        f"MiB, {len(matches)} matches of any raise ValueError); vmine cold "
        f"{outcome.seconds:.2f} s (median of {runs}); ratio {ratio:.3f} (<= {MAX_RATIO}) "
        f"{verdict}",
        flush=True,
    )
    if ratio > MAX_RATIO:
        failed.append("transformers vmine/semgrep ratio")
    return failed


def audit(outcomes: list[Outcome]) -> list[str]:
    """The audited packages' misses found now and false positives left; the failed checks."""
    expected = found = wrong = left = 0
    for outcome in outcomes:
        sites = {(site["filePath"], site["lineNumber"]) for site in outcome.sites}
        package = outcome.package
        missed = [where for where in package.expected if where not in sites]
        kept = [where for where in package.not_expected if where in sites]
        expected, found = (
            expected + len(package.expected),
            found + len(package.expected) - len(missed),
        )
        wrong, left = wrong + len(package.not_expected), left + len(kept)
        for path, line in missed + kept:
            print(
                f"    {package.name}: {'missed' if (path, line) in missed else 'reported'}: {path}:{line}"
            )
    print(
        f"  issue 22 audit: validation errors found {found}/{expected}; "
        f"false positives left {left}/{wrong}",
        flush=True,
    )
    return [] if found == expected and left == 0 else ["issue 22 audit"]


def main() -> int:
    RELEASES.mkdir(parents=True, exist_ok=True)
    failed: list[str] = []
    outcomes = []
    for package in PACKAGES:
        # transformers is timed against semgrep: the median of three runs
        outcome = cold_extract(package, runs=3 if package is PACKAGES[0] else 1)
        report(outcome)
        outcomes.append(outcome)
        if outcome.error:
            failed.append(package.name)
        elif outcome.sites and outcome.sites[0]["repo"] is None:
            failed.append(f"{package.name} repo")
    transformers = outcomes[0]
    if not transformers.error:
        failed += transformers_figures(transformers)
    audited = []
    for package in AUDITED:
        outcome = cold_extract(package)
        report(outcome)
        audited.append(outcome)
        if outcome.error:
            failed.append(package.name)
    failed += audit(audited)
    print(f"  ecosystem checks failed: {', '.join(failed) or 'none'}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
