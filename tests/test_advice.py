"""The message's own advice: what it tells a user to pass, set or export."""

from __future__ import annotations

import pytest

from pipeline.explainers.advice import Advice, message_advice, sentences
from pipeline.explainers.offline import explain_site
from tests.test_offline_settings import setting, site

F, E = "flag", "env"

# message -> the advice in it, in order (the module's case table, run)
ADVICE = [
    (
        "Speculative decoding for {model_arch} is not compatible with radix cache when using "
        "--mamba-scheduler-strategy no_buffer.To use radix cache with speculative decoding, "
        "please use --mamba-scheduler-strategy extra_buffer and set SGLANG_ENABLE_SPEC_V2=1.",
        [
            Advice(F, "--mamba-scheduler-strategy", "extra_buffer"),
            Advice(E, "SGLANG_ENABLE_SPEC_V2", "1"),
        ],
    ),
    ("Use `--runner pooling` for this model", [Advice(F, "--runner", "pooling")]),
    ("CUDA graphs fail here; pass --enforce-eager", [Advice(F, "--enforce-eager", None)]),
    ("export VLLM_USE_V1=0 to fall back", [Advice(E, "VLLM_USE_V1", "0")]),
    (
        "Please ensure at least two are specified for `--gpu_ids`, or use `--gpu_ids='all'`.",
        [Advice(F, "--gpu_ids", "all")],
    ),
    (
        "--use-replay requires --kernel-backend triton or cuda.",
        [Advice(F, "--kernel-backend", "triton"), Advice(F, "--kernel-backend", "cuda")],
    ),
    ("--kernel-backend triton is slow", []),  # says what fails
    ("not supported with --cache-mode all", []),  # the state, not advice
    ("Got --mode={cfg.mode!r}.", []),
    (
        "You should set `VLLM_ALLOW_LONG_MAX_MODEL_LEN=1`.",
        [Advice(E, "VLLM_ALLOW_LONG_MAX_MODEL_LEN", "1")],
    ),
    ("Set --max-model-len {n} or lower", [Advice(F, "--max-model-len", None)]),  # no value
]


@pytest.mark.parametrize(("message", "advice"), ADVICE)
def test_message_advice(message, advice):
    assert message_advice(message) == advice


def test_a_full_stop_glued_to_a_capitalised_word_ends_a_sentence():
    assert sentences("uses no_buffer.To use it, pass x. See torch.float16 e.g. here") == [
        "uses no_buffer",
        "To use it, pass x",
        "See torch.float16 e.g. here",
    ]


def test_the_message_advice_comes_first_with_its_variable_and_never_the_failing_value():
    strategy = setting(
        "mamba_scheduler_strategy",
        cls="ServerArgs",
        default='"auto"',
        choices=["auto", "no_buffer", "extra_buffer"],
    )
    message = (
        "Speculative decoding is not compatible with radix cache when using "
        "--mamba-scheduler-strategy no_buffer."
        "To use radix cache with speculative decoding, please use --mamba-scheduler-strategy "
        "extra_buffer and set SGLANG_ENABLE_SPEC_V2=1."
    )
    explanation = explain_site(
        site('self.mamba_scheduler_strategy == "no_buffer"', [strategy], message),
        (),
        "python -m sglang.launch_server",
    )
    assert explanation.solutions[:2] == [
        "Pass `--mamba-scheduler-strategy extra_buffer` (accepted: auto, no_buffer, "
        "extra_buffer; default auto).",
        "Run `export SGLANG_ENABLE_SPEC_V2=1` first, as the message says.",
    ]
    assert explanation.exampleFix == (
        "# before\npython -m sglang.launch_server --mamba-scheduler-strategy no_buffer\n"
        "# after\nSGLANG_ENABLE_SPEC_V2=1 python -m sglang.launch_server "
        "--mamba-scheduler-strategy extra_buffer"
    )


def test_a_loop_header_and_a_temporary_never_become_fixes():
    from pipeline.dataset.models import Site, github_url

    source = (
        "def validate_content(content):\n"
        "    for idx, part in enumerate(content):\n"
        "        kind = part.get('type')\n"
        "        if kind not in ('text', 'image'):\n"
        "            raise ValueError(f'bad part {idx}')\n"
    )
    checked = Site(
        repo="acme/engine",
        analyzedSha="a" * 40,
        filePath="engine/chat.py",
        lineNumber=5,
        qualname="validate_content",
        validatorKind="name",
        errorClass="ValueError",
        errorMessage="bad part {idx}",
        messagePattern="bad part (.*?)",
        messageStatus="template",
        guards=["(idx, part) in enumerate(content)", "kind not in ('text', 'image')"],
        sourceCode=source,
        sourceCodeStart=1,
        sourceCodeEnd=5,
        githubUrl=github_url("acme/engine", "a" * 40, "engine/chat.py", 1, 5),
        functionSource=source,
    )
    solutions = explain_site(checked).solutions
    assert not any("enumerate(content)" in s or "Make sure kind" in s for s in solutions)
    # `kind` is computed from `content`, the argument: the call is the fix, not `kind`
    assert solutions == [
        "Call validate_content with `content` such that kind is in ('text', 'image') (kind is "
        "computed from content in validate_content): it is an argument of validate_content, so "
        "the code that calls it decides; follow the traceback to that call."
    ]


def test_an_advised_variable_is_said_once_and_exported_without_a_command():
    from pipeline.dataset.models import Setting

    allow = Setting(
        expr="envs.VLLM_ALLOW_LONG_MAX_MODEL_LEN",
        cls=None,
        field="VLLM_ALLOW_LONG_MAX_MODEL_LEN",
        type="bool",
        default="False",
        choices=None,
        doc=None,
        flags=[],
        surface="env",
    )
    message = "Too long. To allow it, set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1."
    explanation = explain_site(site("not envs.VLLM_ALLOW_LONG_MAX_MODEL_LEN", [allow], message))
    assert explanation.solutions == [
        "Run `export VLLM_ALLOW_LONG_MAX_MODEL_LEN=1` before starting (default False)."
    ]
    assert explanation.exampleFix == (
        "# before\n# (the variables unset)\n# after\nexport VLLM_ALLOW_LONG_MAX_MODEL_LEN=1"
    )
