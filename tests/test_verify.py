"""`vmine verify` on the hand-written `acme` package (tests/verify_fixture.py): every kind of
validator is called and raises its own message at its own line; the reproducers run alone;
stale lines, a dataset that is not the installed one, and the written files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli import main
from pipeline.dataset.reader import load_dataset, load_verification
from pipeline.verify.run import VerifyError, VerifyOptions, verify_dataset
from tests.verify_fixture import mined_fixture

# (qualname, the start of the message): every site of the fixture.
SITES = {
    ("ServerSettings.check_port", "port "),
    ("ServerSettings.check_mode", "fast mode takes at most 8 workers"),
    ("CacheSettings.check_block_size", "block_size must be a multiple of 8"),
    ("ParallelSettings.__post_init__", "unknown backend"),
    ("ParallelSettings.__post_init__", "num_heads ("),
    ("ParallelSettings._backend_ready", "tensor parallelism needs ray"),
    ("ModelConfig.__init__", "head size "),
    ("check_args", "--enforce-eager cannot be combined"),
}


@pytest.fixture(scope="module")
def verified(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("verify")
    dataset, installed = mined_fixture(tmp_path)
    options = VerifyOptions(python=sys.executable, jobs=2, environ={"PYTHONPATH": str(installed)})
    return dataset, installed, verify_dataset(dataset, options)


def _by_qualname(dataset: Path, outcome) -> dict[tuple[str, int], object]:
    entries = {entry.id: entry for entry in load_dataset(dataset).entries}
    return {
        (entries[item.id].qualname, entries[item.id].lineNumber): item
        for item in outcome.verifications
    }


def test_every_kind_of_validator_raises_its_own_message(verified):
    dataset, _, outcome = verified
    entries = load_dataset(dataset).entries
    assert {(entry.qualname, entry.validatorKind) for entry in entries} == {
        ("ServerSettings.check_port", "pydantic"),
        ("ServerSettings.check_mode", "pydantic"),
        ("CacheSettings.check_block_size", "pydantic"),
        ("ParallelSettings.__post_init__", "post_init"),
        ("ParallelSettings._backend_ready", "reached"),
        ("ModelConfig.__init__", "init"),
        ("check_args", "name"),
    }
    found = {
        (entry.qualname, start)
        for entry, item in zip(entries, outcome.verifications, strict=True)
        for qualname, start in SITES
        if qualname == entry.qualname and item.message and item.message.startswith(start)
    }
    assert [item.outcome for item in outcome.verifications] == ["verified"] * len(SITES)
    assert found == SITES
    assert outcome.summary.byOutcome == {"verified": len(SITES)}


def test_the_check_that_fires_first_is_got_past(verified):
    # num_heads % tp != 0 needs tp > 1, which the helper refuses first without ray: the
    # second run patches the module's `platform.has_ray`.
    dataset, _, outcome = verified
    item = next(
        item
        for (qualname, _), item in _by_qualname(dataset, outcome).items()
        if item.message and item.message.startswith("num_heads")
    )
    assert item.attempts == 2
    assert "put(mod, 'platform.has_ray()', True)" in item.reproducer
    assert item.message == "num_heads (3) must be divisible by tensor_parallel_size (2)"


def test_a_guard_on_a_local_is_solved_through_its_definition(verified):
    dataset, _, outcome = verified
    item = next(
        item
        for (qualname, _), item in _by_qualname(dataset, outcome).items()
        if qualname == "ModelConfig.__init__"
    )
    assert "hidden_size=" in item.reproducer
    assert item.message.startswith("head size ") and item.message.endswith(" is above 256")


def test_each_reproducer_raises_its_message_when_run_alone(verified):
    _, installed, outcome = verified
    for item in outcome.verifications:
        done = subprocess.run(
            [sys.executable, "-c", item.reproducer],
            capture_output=True,
            text=True,
            env={"PYTHONPATH": str(installed), "PATH": "/usr/bin:/bin"},
        )
        assert done.returncode == 1
        assert done.stderr.rstrip().splitlines()[-1] == f"ValueError: {item.message}"


def test_each_reproducer_states_the_environment_it_ran_in(verified):
    # the workers run with CUDA_VISIBLE_DEVICES empty; a target may read it before its check
    _, _, outcome = verified
    for item in outcome.verifications:
        assert "os.environ.update({" in item.reproducer
        assert "'CUDA_VISIBLE_DEVICES': ''" in item.reproducer


def test_the_outcomes_are_written_beside_the_index_and_counted(verified):
    dataset, _, outcome = verified
    written = load_verification(dataset)
    assert sorted(written) == sorted(entry.id for entry in load_dataset(dataset).entries)
    manifest = json.loads((dataset / "manifest.json").read_text())
    assert manifest["verification"]["byOutcome"] == {"verified": len(SITES)}
    assert manifest["verification"]["byKind"]["pydantic"] == {"verified": 3}
    assert load_dataset(dataset).manifest.verification == outcome.summary


def test_a_changed_raise_line_is_stale(tmp_path):
    dataset, installed = mined_fixture(tmp_path)
    config = installed / "acme" / "config.py"
    config.write_text(
        config.read_text().replace(
            'raise ValueError(f"unknown backend', 'raise TypeError(f"unknown backend'
        )
    )
    options = VerifyOptions(python=sys.executable, jobs=1, environ={"PYTHONPATH": str(installed)})
    outcome = verify_dataset(dataset, options)
    assert [item.outcome for item in outcome.verifications].count("stale") == 1
    assert outcome.summary.byOutcome == {"verified": len(SITES) - 1, "stale": 1}


def test_a_dataset_of_another_release_is_refused_in_one_line(tmp_path):
    dataset, installed = mined_fixture(tmp_path)
    config = installed / "acme" / "config.py"
    config.write_text("\n\n\n" + config.read_text())  # every raise moved three lines down
    options = VerifyOptions(python=sys.executable, jobs=1, environ={"PYTHONPATH": str(installed)})
    with pytest.raises(VerifyError) as refused:
        verify_dataset(dataset, options)
    assert str(refused.value) == (
        f"{dataset}: 8 of 8 raise lines differ from (or are missing in) what "
        f"{sys.executable} has installed (python {sys.version.split()[0]}); it is not the "
        "release the dataset was mined from"
    )
    assert not (dataset / "verification.jsonl").exists()


def test_the_command_verifies_and_prints_the_counts(tmp_path):
    dataset, installed = mined_fixture(tmp_path)
    result = CliRunner().invoke(
        main,
        [
            "verify",
            str(dataset),
            "--python",
            sys.executable,
            "--jobs",
            "1",
            "--env",
            f"PYTHONPATH={installed}",
        ],  # fmt: skip
    )
    assert result.exit_code == 0, result.output
    assert f"verify: 8 sites on python {sys.version.split()[0]}: verified 8" in result.output


def test_the_network_is_refused_in_the_workers(monkeypatch):
    from pipeline.verify.workers import Worker, worker_environment

    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.invalid:1")
    worker = Worker(sys.executable, worker_environment())
    try:
        code = (
            "import os, socket\n"
            "assert os.environ['HF_HUB_OFFLINE'] == '1' and 'HTTPS_PROXY' not in os.environ\n"
            "socket.create_connection(('127.0.0.1', 9))\n"
        )
        answer = worker.ask({"op": "run", "module": None, "code": code, "timeout": 10})
    finally:
        worker.close()
    assert answer["class"] == "PermissionError"
    assert answer["message"].startswith("vmine verify: the network is blocked")


def test_run_verify_uses_the_targets_verify_env(tmp_path):
    from tests.conftest import make_git_repo
    from tests.verify_fixture import FILES

    _, installed = mined_fixture(tmp_path)
    repo = make_git_repo(tmp_path / "pinned", FILES)
    config = tmp_path / "pipeline.toml"
    config.write_text(
        "[targets.acme]\n"
        'repo = "acme/acme"\n'
        f'url = "{repo}"\n'
        'rev = "main"\n'
        f'verify_env = {{ PYTHONPATH = "{installed}" }}\n'
    )
    result = CliRunner().invoke(
        main,
        [
            "run",
            "--config",
            str(config),
            "--llm",
            "offline",
            "-o",
            str(tmp_path / "o"),
            "--cache-dir",
            str(tmp_path / "c"),
            "--verify",
            "--jobs",
            "1",
            "--ci",
        ],  # fmt: skip
    )
    assert result.exit_code == 0, result.output
    assert "verify: 8 sites on python" in result.output
    (dataset,) = [path.parent for path in (tmp_path / "o").rglob("manifest.json")]
    assert set(item.outcome for item in load_verification(dataset).values()) == {"verified"}


def test_pages_and_explain_show_the_outcome_and_the_reproducer(verified, tmp_path):
    dataset, _, outcome = verified
    entries = {entry.qualname: entry for entry in load_dataset(dataset).entries}
    port = entries["ServerSettings.check_port"]
    reproducer = next(item.reproducer for item in outcome.verifications if item.id == port.id)
    python = f"python {sys.version.split()[0]}"
    runner = CliRunner()
    for fmt, page in (("markdown", f"{port.id}.md"), ("html", f"errors/{port.id}.html")):
        done = runner.invoke(
            main, ["render", str(dataset), "--format", fmt, "-o", str(tmp_path / fmt)]
        )
        assert done.exit_code == 0, done.output
        text = (tmp_path / fmt / page).read_text()
        assert f"Verified on {python}: this program raises exactly this message" in text
    markdown = (tmp_path / "markdown" / f"{port.id}.md").read_text()
    assert f"```python\n{reproducer}\n```" in markdown
    found = runner.invoke(
        main,
        [
            "explain",
            "ValueError: port 80 is reserved; pick one above 1023",
            "--dataset",
            str(dataset),
        ],
    )
    assert found.exit_code == 0, found.output
    assert f"Verified\n\n  Verified on {python}: this program raises" in found.output
    assert "  raw(mod.ServerSettings, 'check_port')(cls, value=1023)" in found.output


def test_each_verified_fix_is_run_and_a_fix_that_does_nothing_fails(tmp_path):
    dataset, installed = mined_fixture(tmp_path)
    entries = {entry.qualname: entry for entry in load_dataset(dataset).entries}
    record_file = dataset / "records" / f"{entries['check_args'].id}.json"
    envelope = json.loads(record_file.read_text())
    assert envelope["record"]["exampleFix"] == (
        "# before\n--enforce-eager --mode fast\n# after\n--enforce-eager --mode safe"
    )
    # the after line still sets both (a line that left out --enforce-eager would turn it off)
    envelope["record"]["exampleFix"] = (
        "# before\n--enforce-eager --mode fast\n# after\n--mode fast --enforce-eager"
    )
    record_file.write_text(json.dumps(envelope))
    options = VerifyOptions(python=sys.executable, jobs=1, environ={"PYTHONPATH": str(installed)})
    outcome = verify_dataset(dataset, options)
    fixes = {item.id: item.fix for item in outcome.verifications}
    assert fixes[entries["check_args"].id] == "fails"
    assert fixes[entries["ServerSettings.check_port"].id] == "verified"  # port=1024
    assert fixes[entries["ModelConfig.__init__"].id] == "untested"  # a sentence, no setting
    assert outcome.summary.byFix == {"verified": 4, "fails": 1, "untested": 3}


@pytest.mark.parametrize(
    ("after", "said", "message"),
    [
        ("--enforce-eager --mode safe", "accepted", None),
        ("--mode turbo", "rejected", "argument --mode: invalid choice: 'turbo' (choose from 'fast', 'safe')"),
        # parses, but the switch takes no value: `False` is left over and the switch is on
        ("--enforce-eager False", "differs", "--enforce-eager parsed as True, the fix means False"),
    ],
)  # fmt: skip
def test_the_fix_command_line_is_parsed_by_the_targets_own_parser(tmp_path, after, said, message):
    dataset, installed = mined_fixture(tmp_path)
    entry = next(e for e in load_dataset(dataset).entries if e.qualname == "check_args")
    record_file = dataset / "records" / f"{entry.id}.json"
    envelope = json.loads(record_file.read_text())
    envelope["record"]["exampleFix"] = (
        f"# before\nacme --enforce-eager --mode fast\n# after\nacme {after}"
    )
    record_file.write_text(json.dumps(envelope))
    options = VerifyOptions(python=sys.executable, jobs=1, environ={"PYTHONPATH": str(installed)})
    outcome = verify_dataset(dataset, options)
    item = next(item for item in outcome.verifications if item.id == entry.id)
    assert (item.fixCommand, item.fixCommandMessage) == (said, message)
    assert outcome.summary.parser == "acme.config.make_parser"
    assert outcome.summary.byFixCommand == {said: 1}


def test_a_run_may_start_no_process():
    from pipeline.verify.workers import Worker, worker_environment

    worker = Worker(sys.executable, worker_environment())
    try:
        code = "import subprocess\nsubprocess.run(['sleep', '60'])\n"
        answer = worker.ask({"op": "run", "module": None, "code": code, "timeout": 10})
    finally:
        worker.close()
    assert answer["class"] == "PermissionError"
    assert answer["message"] == "vmine verify: no new processes in a run (subprocess.Popen)"


def test_a_relative_python_is_read_from_the_working_directory(tmp_path, monkeypatch):
    import os

    from pipeline.verify.workers import Worker, worker_environment

    link = tmp_path / "env" / "bin" / "python"
    link.parent.mkdir(parents=True)
    link.symlink_to(sys.executable)
    monkeypatch.chdir(tmp_path)
    worker = Worker(os.path.join("env", "bin", "python"), worker_environment())
    try:
        answer = worker.ask({"op": "survey", "files": [], "distribution": None})
    finally:
        worker.close()
    assert answer["python"] == sys.version.split()[0]
