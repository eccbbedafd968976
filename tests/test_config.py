"""`pipeline.toml` and `vmine run --config`: validation, target selection, release fallback."""

from __future__ import annotations

import io
import json
import subprocess
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from extractors.facts import Rules
from pipeline.cli import main
from pipeline.console import Console
from pipeline.mine.config import ConfigError, load_config, parse_config
from pipeline.mine.run import RunOutcome
from pipeline.mine.targets import run_targets, worst_exit_code
from pipeline.source import SourceError

REPO_ROOT = Path(__file__).resolve().parent.parent

TWO_TARGETS = """\
out = "data"
llm = "offline"
concurrency = 4
timeout = 45.5
idle_timeout = 30
response_format = "json_object"

[targets.engine]
repo = "acme/engine"
url = "{url}"
rev = "main"
release = "engine==1.0"
command = "engine serve MODEL"

[targets.serving]
repo = "acme/serving"
url = "{url}"
rev = "v2"
release = "serving==2.0"
path_prefix = "python/"
include = ["python/**"]

[targets.serving.rules]
error_classes = ["ValueError", "TypeError"]
name_pattern = "^_*ensure_"
"""


# Each case: the file's text (after the [targets.engine] header unless it starts with a
# top-level key) and the one line the user sees.
CONFIG_ERRORS = [
    (
        'repo = "acme/engine"\nrev = 12\n',
        "pipeline.toml: targets.engine.rev: expected a string, got 12",
    ),
    ('rev = "main"\n', "pipeline.toml: targets.engine.repo: required key is missing"),
    ('repo = "engine"\n', "pipeline.toml: targets.engine.repo: expected owner/name, got 'engine'"),
    (
        'repo = "acme/engine"\nbranch = "main"\n',
        "pipeline.toml: targets.engine.branch: unknown key",
    ),
    (
        'repo = "acme/engine"\nrelease = "engine"\n',
        "pipeline.toml: targets.engine.release: expected NAME==VERSION, got 'engine'",
    ),
    (
        'repo = "acme/engine"\nrev = "--upload-pack=x"\n',
        "pipeline.toml: targets.engine.rev: must not be empty or start with '-', got '--upload-pack=x'",
    ),
    (
        'repo = "acme/engine"\nurl = "ext::sh -c touch% /tmp/pwned"\n',
        "pipeline.toml: targets.engine.url: git transport URLs are refused, "
        "got 'ext::sh -c touch% /tmp/pwned'",
    ),
    (
        'repo = "acme/engine"\npath_prefix = "python"\n',
        "pipeline.toml: targets.engine.path_prefix: expected a relative folder ending in '/', got 'python'",
    ),
    (
        'repo = "acme/engine"\ninclude = "engine/**"\n',
        "pipeline.toml: targets.engine.include: expected an array, got 'engine/**'",
    ),
    (
        'repo = "acme/engine"\n[targets.engine.rules]\nname_pattern = "(check"\n',
        "pipeline.toml: targets.engine.rules.name_pattern: not a valid regular expression "
        "(missing ), unterminated subpattern at position 0)",
    ),
    (
        'repo = "acme/engine"\n[targets.engine.rules]\nfollow_calls = "maybe"\n',
        "pipeline.toml: targets.engine.rules.follow_calls: expected true or false, got 'maybe'",
    ),
    (
        'repo = "acme/engine"\n[targets.engine.rules]\nvalidators = []\n',
        "pipeline.toml: targets.engine.rules.validators: unknown key",
    ),
    (
        'repo = "acme/engine"\ncommand = "  "\n',
        "pipeline.toml: targets.engine.command: expected a command on one line, got '  '",
    ),
    (
        'TOP:concurrency = 0\n[targets.engine]\nrepo = "acme/engine"\n',
        "pipeline.toml: concurrency: must be at least 1, got 0",
    ),
    (
        'TOP:llm = "gpt"\n[targets.engine]\nrepo = "acme/engine"\n',
        "pipeline.toml: llm: expected 'auto', 'openai' or 'offline', got 'gpt'",
    ),
    (
        'TOP:timeout = 0\n[targets.engine]\nrepo = "acme/engine"\n',
        "pipeline.toml: timeout: must be more than 0, got 0",
    ),
    (
        'TOP:timeout = "soon"\n[targets.engine]\nrepo = "acme/engine"\n',
        "pipeline.toml: timeout: expected a number, got 'soon'",
    ),
    (
        'TOP:response_format = "xml"\n[targets.engine]\nrepo = "acme/engine"\n',
        "pipeline.toml: response_format: expected 'auto', 'json_schema' or 'json_object', got 'xml'",
    ),
    # a tag format holds literal text and {version}, nothing else, and stays short
    (
        'repo = "acme/engine"\ntag = "{}"\n',
        "pipeline.toml: targets.engine.tag: may hold only {version}, got '{}'",
    ),
    (
        'repo = "acme/engine"\ntag = "{x}"\n',
        "pipeline.toml: targets.engine.tag: may hold only {version}, got '{x}'",
    ),
    (
        'repo = "acme/engine"\ntag = "{"\n',
        "pipeline.toml: targets.engine.tag: Single '{' encountered in format string, got '{'",
    ),
    (
        'repo = "acme/engine"\ntag = "{version:>300000000}"\n',
        "pipeline.toml: targets.engine.tag: may hold only {version}, got '{version:>300000000}'",
    ),
    (
        'repo = "acme/engine"\ntag = "{version!r}"\n',
        "pipeline.toml: targets.engine.tag: may hold only {version}, got '{version!r}'",
    ),
    (
        'repo = "acme/engine"\ntag = "' + "v" * 300 + '{version}"\n',
        "pipeline.toml: targets.engine.tag: longer than 100 characters",
    ),
    (
        'repo = "acme/engine"\nrelease = "engine==1.0"\ntag = "release {version}"\n',
        "pipeline.toml: targets.engine.tag: gives the tag 'release 1.0', not a git tag",
    ),
    (
        'repo = "acme/engine"\ncommand = "serve\\nrm -rf ~"\n',
        "pipeline.toml: targets.engine.command: expected a command on one line, "
        "got 'serve\\nrm -rf ~'",
    ),
    (
        'TOP:timeout = inf\n[targets.engine]\nrepo = "acme/engine"\n',
        "pipeline.toml: timeout: expected a finite number, got inf",
    ),
    (
        'TOP:timeout = nan\n[targets.engine]\nrepo = "acme/engine"\n',
        "pipeline.toml: timeout: expected a finite number, got nan",
    ),
    (
        'TOP:timeout = 1e300\n[targets.engine]\nrepo = "acme/engine"\n',
        "pipeline.toml: timeout: must be at most 86400, got 1e+300",
    ),
    (
        "TOP:x = " + "[" * 5000 + "]" * 5000 + "\n",
        "pipeline.toml: not valid TOML: nested too deep",
    ),
    (
        'repo = "' + "a" * 100_000 + '"\n',
        "pipeline.toml: targets.engine.repo: expected owner/name, got '" + "a" * 60 + "…'",
    ),
    ('TOP:out = "output"\n', "pipeline.toml: targets: required key is missing"),
    ("TOP:targets = {}\n", "pipeline.toml: targets: define at least one [targets.NAME] table"),
    ("TOP:[targets]\nengine = 3\n", "pipeline.toml: targets.engine: expected a table, got 3"),
    (
        "TOP:[targets.engine\n",
        "pipeline.toml: not valid TOML: Expected ']' at the end of a table "
        "declaration (at line 1, column 16)",
    ),
]


def _write(tmp_path: Path, body: str) -> Path:
    text = body.removeprefix("TOP:") if body.startswith("TOP:") else "[targets.engine]\n" + body
    path = tmp_path / "pipeline.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(("body", "message"), CONFIG_ERRORS)
def test_config_error_is_one_line_naming_file_and_key(tmp_path, body, message):
    with pytest.raises(ConfigError) as caught:
        load_config(_write(tmp_path, body))
    assert str(caught.value) == message


def test_cli_prints_the_config_error_and_exits_2(tmp_path):
    path = _write(tmp_path, 'repo = "acme/engine"\nrev = 12\n')
    result = CliRunner().invoke(main, ["run", "--config", str(path)])
    assert result.exit_code == 2
    assert result.stderr == "Error: pipeline.toml: targets.engine.rev: expected a string, got 12\n"


def test_missing_config_file(tmp_path):
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path / "nope.toml")
    assert str(caught.value) == f"{tmp_path}/nope.toml: no such file"


def test_the_repository_pipeline_toml_pins_vllm_and_sglang():
    config = load_config(REPO_ROOT / "pipeline.toml")
    vllm, sglang = config.targets["vllm"], config.targets["sglang"]
    assert list(config.targets) == ["vllm", "sglang"]
    assert (vllm.repo, vllm.rev, vllm.release, vllm.source_url, vllm.release_tag) == (
        "vllm-project/vllm",
        "c794754062d49a8fdb63ab3c5215b488b865030c",
        "vllm==0.28.0",
        "https://github.com/vllm-project/vllm.git",
        "v0.28.0",
    )
    assert (sglang.repo, sglang.rev, sglang.release, sglang.path_prefix, sglang.release_tag) == (
        "sgl-project/sglang",
        "0132848349",
        "sglang==0.5.10.post1",
        "python/",
        "v0.5.10.post1",
    )
    assert config.out == REPO_ROOT / "output"
    assert (vllm.command, sglang.command) == (
        "vllm serve MODEL",
        "python -m sglang.launch_server --model-path MODEL",
    )


def test_rule_overrides_replace_only_the_fields_given():
    config = parse_config(
        {
            "targets": {
                "t": {
                    "repo": "a/b",
                    "rules": {"error_classes": ["ValueError", "TypeError"], "follow_calls": False},
                }
            }
        }
    )
    rules = config.targets["t"].rules.apply(Rules())
    assert rules == Rules(error_classes=("ValueError", "TypeError"), follow_calls=False)


def test_configuration_class_rules_can_be_overridden():
    config = parse_config(
        {
            "targets": {
                "t": {
                    "repo": "a/b",
                    "rules": {
                        "init_methods": [],
                        "config_suffixes": ["Spec"],
                        "config_decorators": ["define"],
                        "config_bases": ["Struct"],
                    },
                }
            }
        }
    )
    rules = config.targets["t"].rules.apply(Rules())
    assert (
        rules.init_methods,
        rules.config_suffixes,
        rules.config_decorators,
        rules.config_bases,
    ) == ((), ("Spec",), ("define",), ("Struct",))


# --- run_targets with a recording runner ------------------------------------------------


class Recorder:
    """Stands in for run_dataset: records the options, fails git sources it is told to."""

    def __init__(self, codes: dict[str, int] | None = None, unreachable: bool = False):
        self.calls = []
        self.codes = codes or {}
        self.unreachable = unreachable

    def __call__(self, options, console):
        self.calls.append(options)
        if self.unreachable and not options.source.startswith("pypi:"):
            raise SourceError(f"cannot reach {options.source}: connection refused")
        return RunOutcome(self.codes.get(options.repo_name, 0), None, None)


def _run(tmp_path, names, url, recorder, overrides=None):
    path = tmp_path / "pipeline.toml"
    path.write_text(TWO_TARGETS.format(url=url))
    stream = io.StringIO()
    code = run_targets(path, names, overrides or {}, Console("plain", stream), runner=recorder)
    return code, stream.getvalue()


def test_targets_run_in_file_order_with_file_defaults(tmp_path):
    recorder = Recorder()
    code, _ = _run(tmp_path, [], "https://example.invalid/x.git", recorder)
    assert code == 0
    engine, serving = recorder.calls
    assert (
        engine.source,
        engine.rev,
        engine.repo_name,
        engine.out_dir,
        engine.llm,
        engine.concurrency,
    ) == ("https://example.invalid/x.git", "main", "acme/engine", tmp_path / "data", "offline", 4)
    assert (serving.rev, serving.include, serving.path_prefix) == ("v2", ["python/**"], None)
    assert (engine.command, serving.command) == ("engine serve MODEL", None)
    assert serving.rules.error_classes == ("ValueError", "TypeError")
    assert serving.rules.name_pattern == "^_*ensure_"
    assert (engine.timeout, engine.idle_timeout, engine.response_format) == (
        45.5,
        30.0,
        "json_object",
    )


def test_named_targets_only_and_command_line_overrides_win(tmp_path):
    recorder = Recorder()
    _run(
        tmp_path,
        ["serving"],
        "https://example.invalid/x.git",
        recorder,
        {"llm": "openai", "out_dir": tmp_path / "elsewhere", "max_requests": 5},
    )
    [serving] = recorder.calls
    assert (serving.repo_name, serving.llm, serving.out_dir, serving.max_requests) == (
        "acme/serving",
        "openai",
        tmp_path / "elsewhere",
        5,
    )


def test_a_command_on_the_command_line_beats_the_targets(tmp_path):
    recorder = Recorder()
    _run(
        tmp_path,
        ["engine"],
        "https://example.invalid/x.git",
        recorder,
        {"command": "python -m engine"},
    )
    [engine] = recorder.calls
    assert engine.command == "python -m engine"


def test_unknown_target_names_the_known_ones(tmp_path):
    with pytest.raises(ConfigError) as caught:
        _run(tmp_path, ["sglang"], "x", Recorder())
    assert str(caught.value) == (
        "pipeline.toml: unknown target 'sglang' (the config defines: engine, serving)"
    )


def test_rev_on_the_command_line_is_refused_with_config(tmp_path):
    with pytest.raises(ConfigError) as caught:
        _run(tmp_path, [], "x", Recorder(), {"rev": "main"})
    assert str(caught.value) == "--rev does not apply with --config: each target pins its own"


@pytest.mark.parametrize(
    ("key", "flag"), [("tag", "--tag-format"), ("path_prefix", "--path-prefix")]
)
def test_release_mapping_flags_are_refused_with_config(tmp_path, key, flag):
    with pytest.raises(ConfigError) as caught:
        _run(tmp_path, [], "x", Recorder(), {key: "v{version}"})
    assert str(caught.value) == f"{flag} does not apply with --config: each target pins its own"


def test_exit_code_is_the_worst_of_the_targets(tmp_path):
    code, output = _run(tmp_path, [], "x", Recorder({"acme/engine": 1, "acme/serving": 3}))
    assert code == 3
    assert output.splitlines()[-1] == "targets: engine exit 1 (x), serving exit 3 (x)"
    assert [worst_exit_code(codes) for codes in ([0, 1], [3, 1], [2, 3], [], [130, 2])] == [
        1,
        3,
        2,
        0,
        130,
    ]


def test_unreachable_remote_falls_back_to_the_release(tmp_path):
    url = str(tmp_path / "no-such-repo")
    recorder = Recorder(unreachable=True)
    code, output = _run(tmp_path, ["serving"], url, recorder)
    assert code == 0
    git, release = recorder.calls
    assert (
        release.source,
        release.rev,
        release.repo_name,
        release.github,
        release.tag,
        release.path_prefix,
        release.include,
    ) == (
        "pypi:serving==2.0",
        None,
        "acme/serving",
        "acme/serving",
        "v2.0",
        "python/",
        ["python/**"],
    )
    assert output.splitlines() == [
        "target serving: acme/serving at v2",
        f"target serving: {url} cannot be reached; mining the release serving==2.0 "
        "(tag v2.0) instead",
        "targets: serving exit 0 (pypi:serving==2.0)",
    ]


def test_reachable_remote_with_a_bad_rev_does_not_fall_back(tmp_path):
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(
        [
            "git",
            "-C",
            str(repo),
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "x",
        ],
        check=True,
    )
    recorder = Recorder(unreachable=True)
    code, output = _run(tmp_path, ["engine"], str(repo), recorder)
    assert code == 2
    assert len(recorder.calls) == 1
    assert output.splitlines()[-2:] == [
        f"target engine: error: cannot reach {repo}: connection refused",
        f"targets: engine exit 2 ({repo})",
    ]


# --- the real fallback: a file URL that does not exist, a release from a local index ----


ENGINE_CONFIG = """\
class CacheConfig:
    def __post_init__(self):
        if self.swap_space < 0:
            raise ValueError("swap_space must be non-negative")
"""


def _wheel(into: Path) -> None:
    """A hand-built wheel `engine-1.0`, the only thing the local package index offers."""
    into.mkdir()
    with zipfile.ZipFile(into / "engine-1.0-py3-none-any.whl", "w") as wheel:
        wheel.writestr("engine/__init__.py", "")
        wheel.writestr("engine/config.py", ENGINE_CONFIG)
        wheel.writestr(
            "engine-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: engine\nVersion: 1.0\n"
        )
        wheel.writestr(
            "engine-1.0.dist-info/WHEEL",
            "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        )
        wheel.writestr("engine-1.0.dist-info/RECORD", "")


@pytest.mark.slow
def test_run_config_mines_the_release_when_the_url_is_unreachable(tmp_path, monkeypatch):
    _wheel(tmp_path / "index")
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path / "index"))
    config = tmp_path / "pipeline.toml"
    config.write_text(
        "[targets.engine]\n"
        'repo = "acme/engine"\n'
        f'url = "file://{tmp_path}/gone.git"\n'
        'rev = "0123456789abcdef0123456789abcdef01234567"\n'
        'release = "engine==1.0"\n'
        'path_prefix = "python/"\n'
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
            str(tmp_path / "out"),
            "--cache-dir",
            str(tmp_path / "cache"),
            "--ci",
        ],
    )
    assert result.exit_code == 0, result.output
    assert (
        f"target engine: file://{tmp_path}/gone.git cannot be reached; mining the release "
        "engine==1.0 (tag v1.0) instead"
    ) in result.stderr.splitlines()
    [dataset] = (tmp_path / "out" / "acme" / "engine").iterdir()
    manifest = json.loads((dataset / "manifest.json").read_text())
    assert manifest["source"] == "pypi:engine==1.0"
    [line] = (dataset / "index.jsonl").read_text().splitlines()
    assert json.loads(line)["filePath"] == "python/engine/config.py"
    [record_file] = (dataset / "records").iterdir()
    record = json.loads(record_file.read_text())["record"]
    assert record["githubUrl"] == (
        "https://github.com/acme/engine/blob/v1.0/python/engine/config.py#L1-L4"
    )


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["--timeout", "inf"], "Error: --timeout: Input should be a finite number (got inf)"),
        (["--timeout", "nan"], "Error: --timeout: Input should be a finite number (got nan)"),
        (
            ["--batch-poll", "1e300"],
            "Error: --batch-poll: Input should be less than or equal to 86400 (got 1e+300)",
        ),
        (
            ["--command", "vllm serve\nrm -rf ~"],
            "Error: --command: expected a command on one line, got 'vllm serve\\nrm -rf ~'",
        ),
    ],
)
def test_run_refuses_the_values_the_config_refuses(tmp_path, args, error):
    result = CliRunner().invoke(main, ["run", str(tmp_path), *args, "-o", str(tmp_path / "o")])
    assert (result.exit_code, result.stderr) == (2, error + "\n")
