"""Batch mode: plain lines instead of progress bars, and under GitHub Actions `::warning`
annotations and a Markdown job summary, for `vmine run` (one SOURCE or --config) and
`vmine diff`."""

from __future__ import annotations

import io
import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli import main
from pipeline.console import Console, detect_mode
from pipeline.explainers.base import Explainer
from tests.conftest import make_git_repo
from tests.test_diff import NEW_SHA, NEW_SITES, OLD_SHA, OLD_SITES, write_fixture_dataset

VERSION = "2026-01-01T00:00:00.000Z"

FILES = {
    "engine/cache.py": (
        "class CacheConfig:\n"
        "    def __post_init__(self):\n"
        "        if self.swap_space < 0:\n"
        '            raise ValueError("swap_space must be non-negative")\n'
    ),
    # A validator file that does not parse: skipped, with a warning.
    "engine/broken.py": 'def check_limits(:\n    raise ValueError("limits")\n',
}


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def clean_env(monkeypatch):
    for name in ("CI", "GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


@pytest.mark.parametrize(
    ("env", "ci_flag", "mode"),
    [
        ({}, None, "tty"),
        ({}, True, "plain"),
        ({"CI": "true"}, None, "plain"),
        ({"CI": "true", "GITHUB_ACTIONS": "true"}, None, "github"),
        ({"GITHUB_ACTIONS": "true"}, True, "github"),
    ],
)
def test_batch_mode_comes_from_ci_env_or_flag(clean_env, env, ci_flag, mode):
    for name, value in env.items():
        clean_env.setenv(name, value)
    assert detect_mode(ci_flag, stream=FakeTTY()) == mode


def _head(repo: Path) -> str:
    return subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()


def _run(tmp_path: Path, *extra: str):
    repo = make_git_repo(tmp_path / "engine", FILES)
    result = CliRunner().invoke(
        main,
        [
            "run",
            str(repo),
            "--repo-name",
            "acme/engine",
            "--llm",
            "offline",
            "-o",
            str(tmp_path / "out"),
            "--cache-dir",
            str(tmp_path / "cache"),
            "--dataset-version",
            VERSION,
            *extra,
        ],
    )
    return result, _head(repo)


def test_run_under_github_actions_annotates_and_writes_the_job_summary(clean_env, tmp_path):
    summary = tmp_path / "summary.md"
    clean_env.setenv("CI", "true")
    clean_env.setenv("GITHUB_ACTIONS", "true")
    clean_env.setenv("GITHUB_STEP_SUMMARY", str(summary))
    result, sha = _run(tmp_path)
    assert result.exit_code == 1
    # the annotation is pinned to the line the reason names; stdout stays empty (data only)
    assert result.stdout == ""
    assert (
        "::warning file=engine/broken.py,line=1::skipped: syntax error at line 1: invalid syntax"
        in result.stderr.splitlines()
    )
    root = tmp_path / "out" / "acme" / "engine" / sha
    lines = [
        f"records: 1 written to {root} (literal 1, template 0, partial 0, unresolved 0)",
        "explainer: offline/offline (offline-13): 0 requests, 0 cache hits, 0 prompt + "
        "0 completion tokens",
        "files: 2 in tree, 2 parsed, 0 reused, 1 skipped; sites: 0 failed, 0 pending, "
        "0 with grounding warnings",
    ]
    # One line per event on stderr, no progress bar, then the summary lines.
    assert "warning: engine/broken.py:1: skipped: syntax error at line 1: invalid syntax" in (
        result.stderr.splitlines()
    )
    assert result.stderr.splitlines()[-3:] == lines
    assert "\r" not in result.stderr and "━" not in result.stderr
    assert summary.read_text() == (
        f"### vmine: acme/engine@{sha[:12]}\n\n"
        + "".join(f"- {line}\n" for line in lines)
        + "\nSkipped files:\n\n- `engine/broken.py`: syntax error at line 1: invalid syntax\n"
    )


def test_extract_under_github_actions_annotates_on_stderr_and_writes_the_summary(
    clean_env, tmp_path
):
    summary = tmp_path / "summary.md"
    clean_env.setenv("GITHUB_ACTIONS", "true")
    clean_env.setenv("GITHUB_STEP_SUMMARY", str(summary))
    repo = make_git_repo(tmp_path / "engine", FILES)
    result = CliRunner().invoke(
        main,
        [
            "extract",
            str(repo),
            "--repo-name",
            "acme/engine",
            "--cache-dir",
            str(tmp_path / "cache"),
            "--ci",
        ],
    )
    assert result.exit_code == 1
    assert [json.loads(line)["filePath"] for line in result.stdout.splitlines()] == [
        "engine/cache.py"
    ]  # stdout stays pure JSON Lines
    assert (
        "::warning file=engine/broken.py,line=1::skipped: syntax error at line 1: invalid syntax"
        in result.stderr.splitlines()
    )
    closing = result.stderr.splitlines()[-1]
    assert summary.read_text() == (
        f"### vmine extract: {repo}\n\n- {closing}\n\nSkipped files:\n\n"
        "- `engine/broken.py`: syntax error at line 1: invalid syntax\n"
    )


def test_plain_ci_has_no_annotations_and_no_summary(clean_env, tmp_path):
    summary = tmp_path / "summary.md"
    clean_env.setenv("CI", "true")
    clean_env.setenv("GITHUB_STEP_SUMMARY", str(summary))
    result, _ = _run(tmp_path)
    assert result.exit_code == 1
    assert result.stdout == ""
    assert "warning: engine/broken.py:1: skipped: syntax error at line 1: invalid syntax" in (
        result.stderr.splitlines()
    )
    assert not summary.exists()


def test_diff_under_github_actions(clean_env, tmp_path):
    summary = tmp_path / "summary.md"
    clean_env.setenv("GITHUB_ACTIONS", "true")
    clean_env.setenv("GITHUB_STEP_SUMMARY", str(summary))
    old = write_fixture_dataset(tmp_path / "old", OLD_SHA, OLD_SITES)
    new = write_fixture_dataset(tmp_path / "new", NEW_SHA, NEW_SITES)
    result = CliRunner().invoke(main, ["diff", str(old), str(new), "--ci", "--format", "json"])
    assert result.exit_code == 0
    assert json.loads(result.stdout)["counts"]["moved"] == 2  # stdout stays pure JSON
    # Every change but the moves pins an annotation to its line.
    assert result.stderr.splitlines() == [
        "::notice file=engine/config.py,line=30,title=vmine diff%3A added::"
        'SpecConfig.__post_init__: "num_speculative_tokens must be set"',
        "::warning file=engine/config.py,line=80,title=vmine diff%3A removed::"
        'LoRAConfig.validate_rank: "rank must be at most 64"',
        "::warning file=engine/config.py,line=64,title=vmine diff%3A reworded::"
        'ParallelConfig.check_world: "world size {ws} exceeds the device count" -> '
        '"world size {ws} exceeds the number of devices" (was engine/config.py:60)',
        "::warning file=engine/config.py,line=44,title=vmine diff%3A changed::"
        'SchedulerConfig._verify_args: "max_num_seqs must be positive" '
        '(guards ["self.max_num_seqs <= 0"] -> ["self.max_num_seqs < 1"]; '
        "was engine/config.py:40)",
    ]
    # The job summary is the Markdown report (the same as --format markdown).
    written = summary.read_text()
    markdown = CliRunner().invoke(main, ["diff", str(old), str(new), "--format", "markdown"])
    assert written == markdown.stdout
    assert markdown.stdout.startswith(
        "### vmine diff: `acme/engine@aaaaaaaaaaaa` → `acme/engine@bbbbbbbbbbbb`\n\n"
        "**1 added, 1 removed, 1 reworded, 2 moved, 1 changed, 1 unchanged**\n"
    )


def test_run_config_summarises_the_targets(clean_env, tmp_path):
    summary = tmp_path / "summary.md"
    clean_env.setenv("CI", "true")
    clean_env.setenv("GITHUB_ACTIONS", "true")
    clean_env.setenv("GITHUB_STEP_SUMMARY", str(summary))
    repo = make_git_repo(tmp_path / "engine", {"engine/cache.py": FILES["engine/cache.py"]})
    config = tmp_path / "pipeline.toml"
    config.write_text(
        f'llm = "offline"\n\n[targets.engine]\nrepo = "acme/engine"\nurl = "{repo}"\nrev = "main"\n'
    )
    result = CliRunner().invoke(
        main,
        [
            "run",
            "--config",
            str(config),
            "-o",
            str(tmp_path / "out"),
            "--cache-dir",
            str(tmp_path / "cache"),
            "--dataset-version",
            VERSION,
        ],
    )
    assert result.exit_code == 0, result.output
    sha = _head(repo)
    assert result.stderr.splitlines()[0] == "target engine: acme/engine at main"
    assert result.stderr.splitlines()[-1] == f"targets: engine exit 0 ({repo})"
    assert summary.read_text().endswith(
        "### vmine targets\n\n| target | mined from | exit | dataset |\n|---|---|---|---|\n"
        f"| engine | `{repo}` | 0 | `{tmp_path}/out/acme/engine/{sha}` |\n"
    )


def test_example_workflow_schedules_caches_uploads_and_comments_the_diff():
    yaml = pytest.importorskip("yaml")
    workflow = yaml.safe_load(
        (Path(__file__).parent.parent / "examples" / "github-actions.yml").read_text()
    )
    triggers = workflow[True]  # YAML 1.1 reads the key `on` as true
    assert triggers["schedule"] == [{"cron": "17 4 * * 1"}]
    assert "pull_request" in triggers
    steps = workflow["jobs"]["dataset"]["steps"]
    uses = [step.get("uses", "") for step in steps]
    assert "actions/cache@v4" in uses and "actions/upload-artifact@v4" in uses
    cache = steps[uses.index("actions/cache@v4")]["with"]["path"]
    assert workflow["jobs"]["dataset"]["env"]["VMINE_CACHE_DIR"].endswith("/" + cache)
    scripts = "\n".join(step.get("run", "") for step in steps)
    assert "vmine run --config pipeline.toml -o dataset" in scripts
    assert 'vmine diff "previous/$repo" "dataset/$repo" --format markdown' in scripts
    assert "gh pr comment" in scripts


class ScriptedExplainer(Explainer):
    """Fails the swap_space site; explains the others with a grounding warning."""

    provider, model, prompt_version = "scripted", "scripted", "scripted-1"
    reads_whole_function = False

    async def explain(self, request):
        from pipeline.dataset.models import Explanation
        from pipeline.explainers.base import ExplainResult

        if "swap_space" in request.site.errorMessage:
            return ExplainResult(explanation=None, error="the model gave up")
        explanation = Explanation(
            documentation="d",
            triggerScenarios="t",
            commonSituations="c",
            solutions=["s"],
            exampleFix="e",
            handlingStrategy="validation",
            validationCode="v",
            typeGuard="g",
            tryCatchPattern=None,
            preventionTips=[],
            tags=[],
        )
        return ExplainResult(
            explanation=explanation,
            grounding_warnings=["--block-sz is not a flag of this repository"],
        )

    def estimate_tokens(self, request):
        return (0, 0)


def test_fallbacks_and_grounding_warnings_are_annotated(clean_env, tmp_path, capsys):
    from pipeline.mine.run import RunOptions, run_dataset

    files = {
        "engine/cache.py": FILES["engine/cache.py"]
        + (
            "\n    def check_block(self):\n"
            "        if self.block_size % 16:\n"
            '            raise ValueError("block_size must be a multiple of 16")\n'
        )
    }
    repo = make_git_repo(tmp_path / "engine", files)
    stream = io.StringIO()
    outcome = run_dataset(
        RunOptions(
            source=str(repo),
            repo_name="acme/engine",
            out_dir=tmp_path / "out",
            cache_dir=tmp_path / "cache",
            dataset_version=VERSION,
        ),
        Console("github", stream),
        explainer=ScriptedExplainer(),
    )
    assert outcome.exit_code == 1
    assert capsys.readouterr().out == ""  # annotations share the console's stream
    assert [line for line in stream.getvalue().splitlines() if line.startswith("::")] == [
        "::warning file=engine/cache.py,line=4::offline fallback: the model gave up",
        "::warning file=engine/cache.py,line=8::grounding: --block-sz is not a flag of this "
        "repository",
    ]
