"""The validator rules on the command line: `extract` and `run` take pipeline.toml's rule
fields as options (lists added to the defaults), declared once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from extractors.facts import Rules
from pipeline.cli import main
from pipeline.mine.config import ConfigError, command_line_rules
from tests.git_fixtures import commit, make_upstream

# diffusers marks the __init__ of its models' configurations with a decorator of its own
UNET = """\
from ..configuration_utils import ConfigMixin, register_to_config
from .modeling_utils import ModelMixin


class UNet2DModel(ModelMixin, ConfigMixin):
    @register_to_config
    def __init__(self, sample_size=None, down_block_types=("DownBlock2D",), block_out_channels=(224,)):
        super().__init__()
        if len(down_block_types) != len(block_out_channels):
            raise ValueError(
                "Must provide the same number of `block_out_channels` as `down_block_types`."
            )
        self.sample_size = sample_size
"""

FLAGS = {"decorators": "--decorator", "config_suffixes": "--config-suffix"}


def _sites(result) -> set[tuple[str, str]]:
    return {
        (site["qualname"], site["validatorKind"])
        for site in map(json.loads, result.stdout.splitlines())
        if site["filePath"].startswith("src/")
    }


@pytest.fixture
def diffusers(tmp_path: Path) -> Path:
    upstream = make_upstream(tmp_path / "src")
    commit(upstream.path, {"src/diffusers/models/unet_2d.py": UNET}, "unet")
    return upstream.path


def test_a_decorator_named_on_the_command_line_marks_validators(diffusers, tmp_path):
    cache = ["--cache-dir", str(tmp_path / "cache")]
    plain = CliRunner().invoke(main, ["extract", str(diffusers), *cache])
    marked = CliRunner().invoke(
        main, ["extract", str(diffusers), "--decorator", "register_to_config", *cache]
    )
    assert (plain.exit_code, marked.exit_code) == (1, 1)  # the fixture's broken.py is skipped
    assert _sites(plain) == set()
    assert _sites(marked) == {("UNet2DModel.__init__", "pydantic")}


def test_list_options_add_to_the_defaults_and_the_pattern_replaces():
    rules = command_line_rules(
        {"decorators": ["register_to_config"], "config_suffixes": ["Spec"]},
        FLAGS,
        name_pattern=r"^_*sanity_",
        follow_calls=False,
    )
    defaults = Rules()
    assert rules.decorators == (*defaults.decorators, "register_to_config")
    assert rules.config_suffixes == (*defaults.config_suffixes, "Spec")
    assert (rules.name_pattern, rules.follow_calls) == (r"^_*sanity_", False)
    assert rules.error_classes == defaults.error_classes
    assert command_line_rules({"decorators": ["validator"]}, FLAGS) == defaults  # known already


@pytest.mark.parametrize(
    ("added", "pattern", "message"),
    [
        ({"decorators": [""]}, None, "--decorator: expected a Python name, got ''"),
        ({"decorators": ["a.b"]}, None, "--decorator: expected a Python name, got 'a.b'"),
        ({}, "(", "--name-pattern: not a valid regular expression (missing ), unterminated"),
    ],
)
def test_a_bad_rule_option_names_the_option(added, pattern, message):
    with pytest.raises(ConfigError) as caught:
        command_line_rules(added, FLAGS, name_pattern=pattern)
    assert str(caught.value).startswith(message)


def test_a_bad_rule_option_is_one_line_and_exit_2(diffusers, tmp_path):
    result = CliRunner().invoke(
        main, ["extract", str(diffusers), "--decorator", "", "--cache-dir", str(tmp_path)]
    )
    assert (result.exit_code, result.stderr) == (
        2,
        "Error: --decorator: expected a Python name, got ''\n",
    )


def test_rule_options_are_refused_with_config(tmp_path):
    config = tmp_path / "pipeline.toml"
    config.write_text('[targets.diffusers]\nrepo = "huggingface/diffusers"\n', encoding="utf-8")
    result = CliRunner().invoke(
        main, ["run", "--config", str(config), "--decorator", "register_to_config"]
    )
    assert result.exit_code == 2
    assert result.stderr == (
        "Error: the rule options do not apply with --config: each target sets its own in "
        "[targets.NAME.rules]\n"
    )


def test_run_mines_with_the_rule_options(diffusers, tmp_path):
    out = tmp_path / "out"
    result = CliRunner().invoke(
        main,
        [
            "run",
            str(diffusers),
            "--llm",
            "offline",
            "-o",
            str(out),
            "--cache-dir",
            str(tmp_path / "cache"),
            "--decorator",
            "register_to_config",
        ],
    )
    assert result.exit_code == 1, result.output  # the fixture's broken.py is skipped
    (index,) = out.rglob("index.jsonl")
    entries = [json.loads(line) for line in index.read_text(encoding="utf-8").splitlines()]
    assert [e["qualname"] for e in entries if e["filePath"].startswith("src/")] == [
        "UNet2DModel.__init__"
    ]
