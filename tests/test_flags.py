"""Finding command-line flags, and the values a message asks for, in text and source."""

from __future__ import annotations

import pytest

from pipeline.explainers.flags import find_flags, flag_for, flag_values, snake_name, string_literals

# text -> the flags in it, in order
FLAGS = [
    ("--use-replay requires --kernel-backend triton", ["--use-replay", "--kernel-backend"]),
    ("Got --mode=fast.", ["--mode"]),
    ("set `--kv-dtype` to fp8", ["--kv-dtype"]),
    ("use --compile_config.level=3", ["--compile_config.level"]),
    ("see --limit-per-request.Allowed values follow", ["--limit-per-request"]),
    ("a--b, ---x, -- y, --1, x--", []),
    ("--a-b and --a-b again", ["--a-b"]),
]


@pytest.mark.parametrize(("text", "flags"), FLAGS)
def test_find_flags(text, flags):
    assert find_flags(text) == flags


# message -> the values it gives its flags
VALUES = [
    ("--use-replay requires --kernel-backend triton", {"--kernel-backend": ["triton"]}),
    ("requires --kernel-backend triton or cuda.", {"--kernel-backend": ["triton", "cuda"]}),
    ("not supported; pass --cache-mode align", {"--cache-mode": ["align"]}),
    ("Use `--runner pooling` for this model", {"--runner": ["pooling"]}),
    ("Use --device=cpu, or drop it", {"--device": ["cpu"]}),
    ("Got --mode={cfg.mode!r}.", {}),  # a placeholder is not a value
    ("--use-replay requires --enable-cache to be set", {}),  # prose, not a value
    ("--kernel-backend triton is slow", {}),  # no directive word in front
]


@pytest.mark.parametrize(("text", "values"), VALUES)
def test_flag_values(text, values):
    assert flag_values(text) == values


def test_snake_and_kebab_names_map_both_ways():
    assert snake_name("--kernel-backend") == "kernel_backend"
    assert flag_for("kernel_backend") == "--kernel-backend"
    assert flag_for("_private_name") == "--private-name"


def test_string_literals_leave_comments_out():
    source = '    x = "--in-string"  # --in-comment\n    y = f"{x} --in-fstring"\n'
    assert string_literals(source) == ['"--in-string"', 'f"{x} --in-fstring"']
    assert string_literals('x = "unterminated\n') == []
