"""`vmine run --config`: mine each target of `pipeline.toml`, falling back to its PyPI release
when the git remote cannot be reached."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from extractors.facts import Rules
from pipeline.console import Console
from pipeline.dataset.writer import DatasetBusy
from pipeline.exits import Exit
from pipeline.mine.config import ConfigError, PipelineConfig, Target, load_config
from pipeline.source import SourceError
from pipeline.source.git import git_env, run_git
from pipeline.store import StoreError

if TYPE_CHECKING:
    from pipeline.verify.run import VerifyOptions

# Exit codes from best to worst: a target that could not be mined at all (2) is worse than
# one whose budget ran out (3), which is worse than one with skipped files (1).
_SEVERITY = {Exit.OK: 0, Exit.PROBLEMS: 1, Exit.BUDGET: 2, Exit.INPUT: 3}

# Config keys that are `RunOptions` fields under another name.
_OPTION_NAMES = {"out": "out_dir"}
_DEFAULT_KEYS = (
    "out",
    "llm",
    "model",
    "base_url",
    "concurrency",
    "max_requests",
    "max_tokens",
    "timeout",
    "idle_timeout",
    "response_format",
    "cache_dir",
    "scope",
)


def worst_exit_code(codes: Sequence[int]) -> int:
    return max(codes, key=lambda code: _SEVERITY.get(code, 4), default=0)


def remote_reachable(url: str, timeout: float = 60.0) -> bool:
    """Whether `git ls-remote` can talk to `url` (a local path counts when it is a repo)."""
    env = git_env(GIT_ALLOW_PROTOCOL="file:git:http:https:ssh")
    try:
        done = run_git(None, "ls-remote", url, "HEAD", timeout=timeout, env=env)
    except (OSError, SourceError):  # no git, or it took longer than `timeout`
        return False
    return done.returncode == 0


def _defaults(
    config: PipelineConfig, overrides: Mapping[str, Any], target: Target | None = None
) -> dict[str, Any]:
    """The run options of the file's top level, then the target's own (its scope), then the
    command line's, each beating the one before."""
    options = {
        _OPTION_NAMES.get(key, key): getattr(config, key)
        for key in _DEFAULT_KEYS
        if getattr(config, key) is not None
    }
    if target is not None and target.scope is not None:
        options["scope"] = target.scope
    options.update({key: value for key, value in overrides.items() if value is not None})
    return options


def git_options(target: Target, defaults: Mapping[str, Any]) -> dict[str, Any]:
    """`RunOptions` fields that mine `target` from its git remote at `rev` (a `--command`
    given on the command line beats the target's)."""
    return {
        **({"command": target.command} if target.command else {}),
        **defaults,
        "source": target.source_url,
        "rev": target.rev,
        "repo_name": target.repo,
        "include": list(target.include),
        "exclude": list(target.exclude),
        "rules": target.rules.apply(Rules()),
    }


def release_options(target: Target, defaults: Mapping[str, Any]) -> dict[str, Any]:
    """`RunOptions` fields that mine `target`'s PyPI release, mapped onto the GitHub tree
    at the release tag so filePath and githubUrl match what git would have given."""
    return {
        **git_options(target, defaults),
        "source": f"pypi:{target.release}",
        "rev": None,
        "github": target.repo,
        "tag": target.release_tag,
        "path_prefix": target.path_prefix,
    }


@dataclass(frozen=True)
class TargetResult:
    """How one target went: its exit code and what was mined (the git URL or the release)."""

    name: str
    exit_code: int
    source: str
    dataset_dir: Path | None = None


def run_target(
    name: str,
    target: Target,
    defaults: Mapping[str, Any],
    console: Console,
    runner: Callable | None = None,
) -> TargetResult:
    """Mine one target; exit code 2 (Exit.INPUT) with one line when it cannot be mined at all."""
    from pipeline.mine.run import RunOptions, run_dataset

    runner = runner or run_dataset
    console.line(f"target {name}: {target.repo} at {target.rev or 'the default branch'}")
    try:
        outcome = runner(RunOptions(**git_options(target, defaults)), console)
        return TargetResult(name, outcome.exit_code, target.source_url, outcome.dataset_dir)
    except (DatasetBusy, StoreError) as error:
        console.line(f"target {name}: error: {error}")
        return TargetResult(name, Exit.INPUT, target.source_url)
    except SourceError as error:
        if target.release is None or remote_reachable(target.source_url):
            console.line(f"target {name}: error: {error}")
            return TargetResult(name, Exit.INPUT, target.source_url)
    console.line(
        f"target {name}: {target.source_url} cannot be reached; "
        f"mining the release {target.release} (tag {target.release_tag}) instead"
    )
    release = f"pypi:{target.release}"
    try:
        outcome = runner(RunOptions(**release_options(target, defaults)), console)
        return TargetResult(name, outcome.exit_code, release, outcome.dataset_dir)
    except (SourceError, DatasetBusy, StoreError) as error:
        console.line(f"target {name}: error: {error}")
        return TargetResult(name, Exit.INPUT, release)


def summary_markdown(results: Sequence[TargetResult]) -> str:
    rows = [
        f"| {r.name} | `{r.source}` | {r.exit_code} | "
        f"{f'`{r.dataset_dir}`' if r.dataset_dir else ''} |"
        for r in results
    ]
    return (
        "\n".join(
            [
                "### vmine targets",
                "",
                "| target | mined from | exit | dataset |",
                "|---|---|---|---|",
                *rows,
            ]
        )
        + "\n"
    )


def run_targets(
    config_path: Path,
    names: Sequence[str],
    overrides: Mapping[str, Any],
    console: Console,
    *,
    runner: Callable | None = None,
    verify: VerifyOptions | None = None,
) -> int:
    """Mine the named targets (all when none) in order; the exit code is the worst of them.

    `overrides` are `RunOptions` fields given on the command line (None means unset);
    they win over the file's top-level defaults. Raises `ConfigError` for a bad file or name.
    """
    config_path = Path(config_path)
    pinned = [
        flag
        for key, flag in (
            ("rev", "--rev"),
            ("repo_name", "--repo-name"),
            ("tag", "--tag-format"),
            ("path_prefix", "--path-prefix"),
        )
        if overrides.get(key) is not None
    ]
    if pinned:
        raise ConfigError(f"{pinned[0]} does not apply with --config: each target pins its own")
    config = load_config(config_path)
    try:
        selected = config.select(list(names))
    except ConfigError as error:
        raise ConfigError(f"{config_path.name}: {error}") from None
    results = []
    for name, target in selected.items():
        defaults = _defaults(config, overrides, target)
        result = run_target(name, target, defaults, console, runner)
        if verify is not None and result.dataset_dir is not None:
            from pipeline.verify.command import run_verify

            environ = {**target.verify_env, **verify.environ}  # the command line wins
            run_verify(result.dataset_dir, replace(verify, environ=environ), console)
        results.append(result)
    console.line(
        "targets: " + ", ".join(f"{r.name} exit {r.exit_code} ({r.source})" for r in results)
    )
    console.step_summary(summary_markdown(results))
    return worst_exit_code([r.exit_code for r in results])
