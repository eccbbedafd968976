"""Command-line triggers (pipeline/verify/commandline.py): the target's own parser and
configuration path found beside each other, the flags of a way through the guards, and a site
verified from `acme`'s command line with a tiny model folder (tests/verify_fixture.py)."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap

import pytest

from pipeline.dataset.models import Setting
from pipeline.dataset.reader import load_dataset
from pipeline.site.pages import verification_note
from pipeline.verify.commandline import (
    BEYOND,
    MODEL_FOLDER,
    Entry,
    arguments,
    changed,
    command_arguments,
    find_entry,
)
from pipeline.verify.fixes import Change
from pipeline.verify.parsers import Builder
from pipeline.verify.run import VerifyOptions, verify_dataset
from pipeline.verify.solve import solutions
from tests.verify_fixture import LAUNCH, WITH_LAUNCH, mined_fixture

BUILDER = Builder("acme.launch", ("LaunchArgs",), "add_cli_args", True, 3)

# A launcher whose parser is a module function, and whose arguments class is elsewhere in
# the module; the config method is the one that makes the most of the settings' classes.
FUNCTION_BUILDER = textwrap.dedent(
    """
    import argparse

    def make_parser():
        parser = argparse.ArgumentParser()
        parser.add_argument("--model-path")
        parser.add_argument("--port", type=int)
        return parser

    class ServeArgs:
        def __init__(self, port):
            self.port = port

        @classmethod
        def from_namespace(cls, namespace):
            return cls(namespace.port)

        def describe(self):
            return f"port {self.port}"

        def cache_config(self):
            return CacheConfig()

        def build_config(self, strict=True):
            return ServerConfig(self.port), self.cache_config()
    """
)

# The namespace's classmethod must make the class; a method that needs an argument is no
# entry point.
NOT_ENTRIES = textwrap.dedent(
    """
    class Loader:
        @classmethod
        def from_file(cls, path):
            return open(path)

        def build_config(self):
            return ServerConfig()

    class Options:
        @classmethod
        def from_namespace(cls, namespace):
            return cls(namespace.port)

        def build_config(self, port):
            return ServerConfig(port)
    """
)


@pytest.mark.parametrize(
    ("files", "builder", "expected"),
    [
        (
            {"acme.launch": LAUNCH},
            BUILDER,
            Entry("acme.launch", "LaunchArgs", "from_cli_args", "create_config", "--model"),
        ),
        (
            {"serve.cli": FUNCTION_BUILDER},
            Builder("serve.cli", (), "make_parser", False, 2),
            Entry("serve.cli", "ServeArgs", "from_namespace", "build_config", "--model-path"),
        ),
        ({"serve.cli": NOT_ENTRIES}, Builder("serve.cli", (), "make_parser", False, 2), None),
    ],
    ids=["builder-class", "module-function", "none"],
)
def test_the_entry_point_is_found_beside_the_parser(files, builder, expected):
    classes = {"ServerConfig", "CacheConfig", "ServerSettings"}
    assert find_entry(files, builder, classes) == expected


def _setting(expr: str, flag: str, **more) -> Setting:
    fields = {"type": None, "default": None, "choices": None, "doc": None, **more}
    return Setting.model_validate(
        {"expr": expr, "class": "Args", "field": expr.rsplit(".", 1)[-1], "flags": [flag], **fields}
    )


SETTINGS = [
    _setting("self.eager", "--eager", action="store_true"),
    _setting("self.compile", "--compile", action="BooleanOptionalAction"),
    _setting("self.color", "--no-color", action="store_false"),
    _setting("self.tp", "--tp", type="int"),
    _setting("self.mode", "--mode", choices=["fast", "safe"]),
    _setting("self.sizes", "--sizes", nargs="+"),
    _setting("self.extra", "--extra"),
    _setting("self.backend", "--backend"),
    _setting("self.token", "--token", surface="env"),
]


@pytest.mark.parametrize(
    ("test", "expected"),
    [
        ("self.eager", {"self.eager": ["--eager"]}),
        ("not self.eager", {"self.eager": []}),
        ("not self.compile", {"self.compile": ["--no-compile"]}),
        ("not self.color", {"self.color": ["--no-color"]}),
        ("self.color", {"self.color": []}),
        ("self.tp > 4", {"self.tp": ["--tp", "5"]}),
        ("self.mode != 'safe'", {"self.mode": ["--mode", "fast"]}),
        ("self.sizes == [1, 2]", {"self.sizes": ["--sizes", "1", "2"]}),
        ("self.extra == {'k': 1}", {"self.extra": ["--extra", '{"k": 1}']}),
        # above what the tiny model sets, which no flag does
        ("self.tp > self.hf_config.num_attention_heads", {"self.tp": ["--tp", str(BEYOND)]}),
        ("self.tp > 2 and self.tp < self.limit", {"self.tp": ["--tp", "3"]}),
        ("self.backend == Backend.RAY", {}),  # an expression: no command line writes it
        ("self.token is None", {}),  # an environment variable's: not a flag
    ],
)
def test_a_way_through_the_guards_becomes_flags(test, expected):
    (way, *_) = solutions([test])
    assert arguments(way, SETTINGS) == expected


def test_a_setting_read_through_a_local_and_a_draft_model_folder():
    dcp = _setting("dcp", "--dcp", type="int")
    draft = _setting("self.draft.model", "--draft-model", type="str | None")
    definitions = {"dcp": ast.parse("self.parallel.dcp_size", mode="eval").body}
    (way, *_) = solutions(["dcp > 1", "self.draft.model is not None"], definitions)
    assert arguments(way, [dcp, draft], definitions, "model") == {
        "dcp": ["--dcp", "2"],
        "self.draft.model": ["--draft-model", MODEL_FOLDER],
    }


def test_a_fix_replaces_the_flags_it_changes():
    words = {"self.tp": ["--tp", "5"], "self.eager": ["--eager"]}
    fixed = changed(words, [Change("self.tp", "4"), Change("self.eager", "False")], SETTINGS)
    assert fixed == {"self.tp": ["--tp", "4"], "self.eager": []}
    assert changed(words, [Change("self.token", "'x'")], SETTINGS) is None
    assert changed(words, [Change("self.tp", "limit()")], SETTINGS) is None
    entry = Entry("m", "C", "make", "build", "--model")
    assert command_arguments(entry, fixed) == ["--model", MODEL_FOLDER, "--tp", "4"]


@pytest.fixture(scope="module")
def launched(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("verify-commandline")
    dataset, installed = mined_fixture(tmp_path, WITH_LAUNCH)
    options = VerifyOptions(python=sys.executable, jobs=2, environ={"PYTHONPATH": str(installed)})
    return dataset, installed, verify_dataset(dataset, options)


def _items(dataset, outcome, qualname):
    entries = {entry.id: entry for entry in load_dataset(dataset).entries}
    return [item for item in outcome.verifications if entries[item.id].qualname == qualname]


def test_a_check_of_the_model_folder_is_verified_from_the_command_line(launched, tmp_path):
    # The direct call cannot read a model folder (the path is a stand-in); acme's own parser
    # and LaunchArgs.create_config, given a tiny model folder, raise the message. The value
    # is above the folder's size, and no higher than the function's earlier check (a site
    # of its own, whose settings it shares) allows without --allow-long.
    dataset, installed, outcome = launched
    first, item = _items(dataset, outcome, "ContextSettings.__init__")
    assert (first.outcome, first.reproducerKind) == ("verified", "command-line")
    assert first.commandLine == f"--model {MODEL_FOLDER} --max-model-len 65537"
    assert item.outcome == "verified"
    assert item.reproducerKind == "command-line"
    assert item.commandLine == f"--model {MODEL_FOLDER} --max-model-len 65536"
    assert item.message == "max_model_len (65536) is above the model's maximum (2048)"
    assert item.fix == "verified"  # `# (without --max-model-len)`: the line without it passes
    assert outcome.summary.commandLines == 2
    assert outcome.summary.parser == "acme.launch.LaunchArgs.add_cli_args"
    done = subprocess.run(
        [sys.executable, "-c", item.reproducer],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PYTHONPATH": str(installed), "PATH": "/usr/bin:/bin"},
    )
    assert done.stderr.rstrip().splitlines()[-1] == f"ValueError: {item.message}"
    assert f"command line: {item.commandLine}" in item.reproducer.splitlines()[1]


def test_a_site_the_configuration_path_does_not_reach_is_called_directly(launched):
    # check_args has flags, but create_config never calls it: its command line raises
    # nothing, and the direct call verifies it as before.
    dataset, _, outcome = launched
    (item,) = _items(dataset, outcome, "check_args")
    assert (item.outcome, item.reproducerKind, item.commandLine) == ("verified", "call", None)
    assert outcome.summary.byOutcome == {"verified": 10}


def test_the_page_says_the_command_line(launched):
    dataset, _, outcome = launched
    _, item = _items(dataset, outcome, "ContextSettings.__init__")
    note, program_text = verification_note(item)
    assert note.startswith(
        f"Verified on {item.release} from the command line `{item.commandLine}` "
        "(with a tiny model folder, no weights)"
    )
    assert program_text == item.reproducer
