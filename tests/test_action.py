"""The composite GitHub Action (action.yml) end to end: its steps run as a runner runs them
(tests/action_runner.py), on a repository whose second release rewords an error and adds
one; then the example workflow is checked to use the action as it declares itself."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml

from tests.action_runner import ActionError, condition, run_action, substitute
from tests.git_fixtures import commit, git
from tests.test_diff_sarif import validate
from tests.test_history import V1, V2

ROOT = Path(__file__).resolve().parent.parent
ACTION = ROOT / "action.yml"
PATH = f"{Path(sys.executable).parent}:/usr/bin:/bin"  # vmine of this venv, git, bash


@pytest.fixture
def repo(tmp_path: Path) -> dict[str, str | Path]:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    git(workspace, "init", "-q", "-b", "main")
    first = commit(workspace, {"engine/config.py": V1}, "v1")
    git(workspace, "tag", "v1")
    second = commit(workspace, {"engine/config.py": V2}, "reword a check, add one")
    return {"workspace": workspace, "v1": first, "head": second}


def _run(repo, root: Path, event_name: str, event: dict, **inputs: str):
    """One job of the action; jobs under one tmp folder share the actions/cache store."""
    return run_action(
        ACTION,
        inputs={"install": "false", "repo-name": "acme/engine", **inputs},
        workspace=repo["workspace"],
        event_name=event_name,
        event=event,
        sha=repo["head"],
        repository="acme/engine",
        root=root,
        env={"PATH": PATH},
        cache_store=root.parent / "cache-store",
    )


def test_a_push_is_diffed_against_the_previous_release_and_fails_on_exit_code(repo, tmp_path):
    run = _run(repo, tmp_path / "job", "push", {"ref": "refs/heads/main"}, **{"exit-code": "true"})
    assert run.outcome == "failure", run.log
    assert [(s.name, s.ran, s.code) for s in run.steps] == [
        ("Install vmine", False, 0),
        ("Restore vmine's cache", True, 0),
        ("Find the base", True, 0),
        ("Mine the commit", True, 0),
        ("Diff against the base", True, 0),
        ("Upload the dataset", True, 0),
        ("Upload the SARIF", True, 0),
        ("Fail on a change", True, 1),
    ]
    workspace = repo["workspace"]
    assert run.step("Find the base").outputs == {"spec": ".@v1"}
    dataset = workspace / "vmine-output" / "acme" / "engine" / repo["head"]
    assert run.outputs["dataset"] == f"vmine-output/acme/engine/{repo['head']}"
    assert run.outputs["differs"] == "true"
    # the dataset and the SARIF as artifacts
    manifest = json.loads((run.artifacts / "vmine-dataset" / "manifest.json").read_text())
    assert manifest["analyzedSha"] == repo["head"] and manifest["llm"]["provider"] == "offline"
    assert (dataset / "manifest.json").is_file()
    sarif = json.loads((run.artifacts / "vmine-sarif" / "vmine.sarif").read_text())
    validate(sarif)
    results = sarif["runs"][0]["results"]
    assert [
        (r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in results
    ] == [
        ("added-error", 15),
        ("reworded-error", 11),
    ]
    # the Markdown diff (and the run's summary) in the job summary; annotations in the log
    assert "### vmine diff: `acme/engine@" in run.summary
    assert "**1 added, 0 removed, 1 reworded, 0 moved, 0 changed, 1 unchanged**" in run.summary
    assert "::warning file=engine/config.py,line=11" in run.log
    assert "::error title=vmine::validation errors changed" in run.log
    # the cache was saved under this commit's key
    assert (tmp_path / "cache-store" / f"vmine-Linux-{repo['head']}" / "store.sqlite").is_file()


def test_a_pull_request_is_diffed_against_its_base_with_the_cache_restored(repo, tmp_path):
    first = _run(repo, tmp_path / "push", "push", {"ref": "refs/heads/main"})
    assert first.outcome == "success", first.log  # a change, but exit-code is off
    event = {"pull_request": {"number": 7, "base": {"sha": repo["v1"]}}}
    second = _run(repo, tmp_path / "pr", "pull_request", event, rev=repo["head"])
    assert second.outcome == "success", second.log
    assert "cache restored from vmine-Linux-" in second.log
    assert second.step("Find the base").outputs["spec"] == f".@{repo['v1']}"
    assert second.outputs["differs"] == "true"
    assert "files: 1 in tree, 0 parsed, 1 reused" in second.log  # the restored cache did it


# raises in a loader, not a validator: only scope "all" mines them
LOADER = """\
def load_weights(name):
    if not name.endswith(".safetensors"):
        raise ValueError(f"unsupported weights file {name}")
"""
LOADER2 = (
    LOADER
    + """\


def load_tokenizer(path):
    if path is None:
        raise ValueError("a tokenizer path is required")
"""
)


@pytest.mark.parametrize(("scope", "added"), [("", []), ("all", ["a tokenizer path is required"])])
def test_the_scope_input_reaches_both_sides_of_the_diff(tmp_path, scope, added):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    git(workspace, "init", "-q", "-b", "main")
    commit(workspace, {"engine/config.py": V1, "engine/loader.py": LOADER}, "v1")
    git(workspace, "tag", "v1")
    head = commit(workspace, {"engine/config.py": V1, "engine/loader.py": LOADER2}, "tokenizer")
    repo = {"workspace": workspace, "head": head}
    run = _run(repo, tmp_path / "job", "push", {"ref": "refs/heads/main"}, scope=scope)
    assert run.outcome == "success", run.log
    manifest = json.loads((run.artifacts / "vmine-dataset" / "manifest.json").read_text())
    assert manifest["scope"] == (scope or "validators")
    sarif = json.loads((run.artifacts / "vmine-sarif" / "vmine.sarif").read_text())
    validate(sarif)
    results = sarif["runs"][0]["results"]
    # the base was mined in the same scope: its loader error is not "added"
    assert [r["ruleId"] for r in results] == ["added-error"] * len(added)
    assert all(a in r["message"]["text"] for r, a in zip(results, added, strict=True))
    assert run.outputs["differs"] == ("true" if added else "false")


def test_without_a_base_it_mines_and_uploads_only_the_dataset(tmp_path):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    git(workspace, "init", "-q", "-b", "main")
    sha = commit(workspace, {"engine/config.py": V1}, "first")
    run = run_action(
        ACTION,
        inputs={"install": "false", "repo-name": "acme/engine", "exit-code": "true"},
        workspace=workspace,
        event_name="push",
        event={},
        sha=sha,
        repository="acme/engine",
        root=tmp_path / "job",
        env={"PATH": PATH},
    )
    assert run.outcome == "success", run.log
    assert run.step("Diff against the base").ran is False
    assert sorted(p.name for p in run.artifacts.iterdir()) == ["vmine-dataset"]
    assert run.outputs == {
        "dataset": f"vmine-output/acme/engine/{sha}",
        "sarif": "",
        "differs": "",
    }


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("inputs.a == 'true'", True),
        ("inputs.a == 'TRUE'", True),  # string comparison ignores case, as on GitHub
        ("inputs.b != ''", False),
        ("inputs.b || 'x'", "x"),
        ("!(inputs.a == 'true') && always()", False),
    ],
)
def test_the_runner_reads_expressions_as_github_does(text, expected):
    contexts = {"inputs": {"a": "true", "b": ""}}
    if isinstance(expected, bool):
        assert condition(text, contexts, job_failed=False) is expected
    else:
        assert substitute("${{ " + text + " }}", contexts) == expected


def test_the_runner_refuses_what_it_does_not_emulate():
    with pytest.raises(ActionError, match="hashFiles"):
        substitute("${{ hashFiles('x') }}", {})
    with pytest.raises(ActionError, match="context 'secrets'"):
        substitute("${{ secrets.KEY }}", {})


def test_the_example_workflow_uses_the_action_with_inputs_it_declares():
    action = yaml.safe_load(ACTION.read_text())
    workflow = yaml.safe_load((ROOT / "examples" / "vmine-action.yml").read_text())
    steps = [step for job in workflow["jobs"].values() for step in job["steps"]]
    ours = [step for step in steps if step.get("uses") in ("./", "./.")]
    assert len(ours) == 1
    assert set(ours[0].get("with", {})) <= set(action["inputs"])
    uploads = [
        step
        for step in steps
        if str(step.get("uses", "")).startswith("github/codeql-action/upload-sarif")
    ]
    assert uploads and "steps.vmine.outputs.sarif" in uploads[0]["with"]["sarif_file"]
    assert ours[0]["id"] == "vmine"
