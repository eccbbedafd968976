"""The paste's values put into its record's fixes (pipeline/lookup/filled.py)."""

from __future__ import annotations

from pipeline.dataset.models import Setting
from pipeline.lookup.filled import filled_fix, filled_solutions, pasted_values

LEN = Setting(
    expr="self.max_model_len",
    cls="ModelConfig",
    field="max_model_len",
    type="int",
    default="None",
    choices=None,
    doc=None,
    flags=["--max-model-len"],
)
PASTED = [
    ("max_model_len", "8192"),
    ("max_len_key", "max_position_embeddings"),
    ("derived_max_model_len", "4096"),
]


def test_the_failing_value_and_the_reported_limit_are_told_apart():
    assert pasted_values([LEN], PASTED) == {"--max-model-len": ("8192", "4096")}


def test_a_fix_that_leaves_the_value_open_gets_the_limit_the_message_reports():
    found = pasted_values([LEN], PASTED)
    assert filled_solutions(
        [
            "Run `export VLLM_ALLOW_LONG_MAX_MODEL_LEN=1` before starting (default False).",
            "Give `--max-model-len` a value that passes the check (default None).",
        ],
        found,
    ) == [
        "Run `export VLLM_ALLOW_LONG_MAX_MODEL_LEN=1` before starting (default False).",
        "Pass `--max-model-len 4096` (the limit your message reports) (default None).",
    ]
    assert filled_fix(
        "# before\nvllm serve MODEL --max-model-len <value>\n"
        "# after\nvllm serve MODEL --max-model-len <other value>",
        found,
    ) == (
        "# before\nvllm serve MODEL --max-model-len 8192\n"
        "# after\nvllm serve MODEL --max-model-len 4096"
    )


def test_values_that_name_no_setting_change_nothing():
    found = pasted_values([LEN], [("model", "facebook/opt-125m")])
    assert found == {}
    assert filled_solutions(["Give `--max-model-len` a value that passes the check."], found) == [
        "Give `--max-model-len` a value that passes the check."
    ]
