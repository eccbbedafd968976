"""The surfaces a setting lives on besides a flag: environment variables, request fields,
model config keys, and the sites no setting reaches (pipeline/mine/settings/surfaces.py)."""

from __future__ import annotations

import ast
import textwrap

import pytest

from extractors.callers import lines_calling
from extractors.environment import environment_of
from extractors.settings_model import EnvVar
from pipeline.explainers.offline import explain_site
from pipeline.explainers.offline.conditions import fetched_as_read
from tests.test_offline_settings import site
from tests.test_settings_join import resolve_tree

# module source -> the variables it defines
ENVIRONMENT = [
    (
        """
        if TYPE_CHECKING:
            VLLM_ALLOW_LONG_MAX_MODEL_LEN: bool = False
            PATH: str = ""

        environment_variables = {
            # If set, allows a max_model_len longer than the model's. Set it to 1.
            "VLLM_ALLOW_LONG_MAX_MODEL_LEN": lambda: os.environ.get(
                "VLLM_ALLOW_LONG_MAX_MODEL_LEN", "0"
            ) in ("1", "true"),
        }
        """,
        [
            EnvVar(
                name="VLLM_ALLOW_LONG_MAX_MODEL_LEN",
                type="bool",
                default="False",
                doc="If set, allows a max_model_len longer than the model's.",
            )
        ],
    ),
    (
        """
        class Envs:
            # Overlap Spec V2
            SGLANG_ENABLE_SPEC_V2 = EnvBool(False)
            SGLANG_LOG_MS = EnvInt(-1)
            not_a_variable = EnvBool(True)
        """,
        [
            EnvVar(
                name="SGLANG_ENABLE_SPEC_V2", type="bool", default="False", doc="Overlap Spec V2"
            ),
            EnvVar(name="SGLANG_LOG_MS", type="int", default="-1"),
        ],
    ),
    (
        """
        USE_RING = get_bool_env_var("SGLANG_USE_RING", "false")
        PORT = os.environ["ENGINE_PORT"]
        HOME = os.getenv("HOME")
        """,
        [
            EnvVar(name="ENGINE_PORT"),
            EnvVar(name="SGLANG_USE_RING", type="bool", default='"false"'),
        ],
    ),
]


@pytest.mark.parametrize(("source", "variables"), ENVIRONMENT)
def test_environment_of(source, variables):
    text = textwrap.dedent(source)
    assert environment_of(ast.parse(text), text.split("\n")) == variables


ENVS = """
    if TYPE_CHECKING:
        VLLM_ALLOW_LONG_MAX_MODEL_LEN: bool = False

    environment_variables = {
        # Allows a max_model_len longer than the model's.
        "VLLM_ALLOW_LONG_MAX_MODEL_LEN": lambda: os.environ.get("VLLM_ALLOW_LONG_MAX_MODEL_LEN", "0"),
    }
"""
PARSER = """
    def add_cli_args(parser):
        parser.add_argument("--hf-overrides", type=json.loads, default=None)
"""

# (case, files, the site's file, its settings as (expr, surface, field, via))
SURFACES = [
    (
        "envs.X of the module that defines it",
        {
            "pkg/envs.py": ENVS,
            "pkg/model.py": """
            from dataclasses import dataclass
            import pkg.envs as envs

            @dataclass
            class ModelConfig:
                def __post_init__(self):
                    if not envs.VLLM_ALLOW_LONG_MAX_MODEL_LEN:
                        raise ValueError("too long")
            """,
        },
        "pkg/model.py",
        [("envs.VLLM_ALLOW_LONG_MAX_MODEL_LEN", "env", "VLLM_ALLOW_LONG_MAX_MODEL_LEN", None)],
    ),
    (
        "a variable the guard reads itself",
        {
            "pkg/model.py": """
            import os

            def check_ring(size):
                if os.environ.get("ENGINE_USE_RING", "0") == "1" and size > 4:
                    raise ValueError("ring too big")
            """,
        },
        "pkg/model.py",
        [("ENGINE_USE_RING", "env", "ENGINE_USE_RING", None)],
    ),
    (
        "a key of the model's config.json, with the override flag",
        {
            "pkg/cli.py": PARSER,
            "pkg/model.py": """
            from dataclasses import dataclass

            @dataclass
            class ModelConfig:
                def __post_init__(self):
                    if self.hf_text_config.sliding_window is None:
                        raise ValueError("no window")
            """,
        },
        "pkg/model.py",
        [
            (
                "self.hf_text_config.sliding_window",
                "model-config",
                "sliding_window",
                "--hf-overrides",
            )
        ],
    ),
    (
        "a key of config.json fetched by getattr, and a local that holds one",
        {
            "pkg/cli.py": PARSER,
            "pkg/models.py": """
            class AcmeMoeConfig:
                @staticmethod
                def verify_and_update_model_config(model_config: "ModelConfig") -> None:
                    hf_config = model_config.hf_config
                    if getattr(hf_config, "router_score_function", None) != "sigmoid":
                        raise ValueError("Acme requires router_score_function='sigmoid'")
                    pooling = getattr(hf_config, "pooling", None)
                    if pooling is None:
                        raise ValueError("Acme needs a pooling field in its config")
            """,
        },
        "pkg/models.py",
        [
            (
                "hf_config.router_score_function",
                "model-config",
                "router_score_function",
                "--hf-overrides",
            ),
            ("pooling", "model-config", "pooling", "--hf-overrides"),
        ],
    ),
    (
        "an attribute of a PretrainedConfig subclass",
        {
            "pkg/configs.py": """
            from transformers import PretrainedConfig

            class MyModelConfig(PretrainedConfig):
                def __init__(self, num_hidden_layers: int = 2, **kwargs):
                    self.num_hidden_layers = num_hidden_layers
                    if self.num_hidden_layers < 1:
                        raise ValueError("need a layer")
            """,
        },
        "pkg/configs.py",
        [("self.num_hidden_layers", "model-config", "num_hidden_layers", None)],
    ),
    (
        "a field of SamplingParams: the request body",
        {
            "pkg/sampling.py": """
            from dataclasses import dataclass

            @dataclass
            class SamplingParams:
                top_k: int = 0

                def __post_init__(self):
                    if self.top_k < -1:
                        raise ValueError("top_k must be -1 or more")
            """,
        },
        "pkg/sampling.py",
        [("self.top_k", "request", "top_k", None)],
    ),
    (
        "a check of tensors handed in: internal",
        {
            "pkg/ops.py": """
            def _validate_inputs(query, key):
                if query.shape[0] != key.shape[0]:
                    raise ValueError("query and key differ")
            """,
        },
        "pkg/ops.py",
        [("query.shape", "internal", "query.shape", None)],
    ),
]


@pytest.mark.parametrize(
    ("case", "files", "site_file", "expected"), SURFACES, ids=[c[0] for c in SURFACES]
)
def test_surface(case, files, site_file, expected):
    found = [s for settings in resolve_tree(files, site_file, full=True) for s in settings]
    assert [(s.expr, s.surface, s.field, s.via) for s in found] == expected


def test_an_internal_site_says_why_and_what_to_report():
    (found,) = resolve_tree(
        {
            "pkg/ops.py": """
            def _validate_inputs(query, key):
                if query.shape[0] != key.shape[0]:
                    raise ValueError("query and key differ")
            """
        },
        "pkg/ops.py",
        full=True,
    )
    assert found[0].reason == (
        "it checks the shapes or types of the tensors and values passed to _validate_inputs, "
        "which the calling code builds; no setting reaches them"
    )
    explanation = explain_site(site("query.shape[0] != key.shape[0]", found))
    assert explanation.solutions[0] == f"This is not a configuration error: {found[0].reason}."
    assert explanation.exampleFix.startswith("# not a configuration error: it checks")


# (guard, the setting, first solution, example fix)
FIXES = [
    (
        "not envs.VLLM_ALLOW_LONG_MAX_MODEL_LEN",
        dict(surface="env", field="VLLM_ALLOW_LONG_MAX_MODEL_LEN", type="bool", default="False"),
        "Run `export VLLM_ALLOW_LONG_MAX_MODEL_LEN=1` before starting (default False).",
        "# before\nVLLM_ALLOW_LONG_MAX_MODEL_LEN=0 vllm serve MODEL\n"
        "# after\nVLLM_ALLOW_LONG_MAX_MODEL_LEN=1 vllm serve MODEL",
    ),
    (
        "self.top_k < -1",
        dict(surface="request", field="top_k", cls="SamplingParams", type="int", default="0"),
        'Send `"top_k": -1` in the request body, `SamplingParams(top_k=-1)` in Python (or any '
        "value at least -1; default 0).",
        '# before: the request body\n{"top_k": -2}\n# after\n{"top_k": -1}',
    ),
    (
        "not self.model",
        dict(surface="request", field="model", cls="ChatCompletionRequest", type="str"),
        'Send a `"model"` in the request body.',
        None,
    ),
    (
        "self.hf_text_config.sliding_window is None",
        dict(surface="model-config", field="sliding_window", via="--hf-overrides"),
        'Change `"sliding_window"` in the model\'s config.json (or `--hf-overrides`) so that '
        "hf_text_config.sliding_window is not None.",
        None,
    ),
    (
        # a flag whose passing value the code does not name: what must hold of it
        "self.quantization not in supported_quantization",
        dict(cls="ModelConfig", field="quantization", flags=["--quantization"], default="None"),
        "Give `--quantization` a value that passes the check: quantization is in "
        "supported_quantization (default None).",
        None,
    ),
    (
        # a getattr reads as the attribute it fetches
        'getattr(hf_config, "router_score_function", None) != "sigmoid"',
        dict(surface="model-config", field="router_score_function", via="--hf-overrides"),
        'Set `"router_score_function": "sigmoid"` in the model\'s config.json, or pass '
        '`--hf-overrides \'{"router_score_function": "sigmoid"}\'`.',
        "# before\nvllm serve MODEL\n# after\nvllm serve MODEL --hf-overrides "
        '\'{"router_score_function": "sigmoid"}\'',
    ),
    (
        'self.hf_config.model_type == "llama"',
        dict(surface="model-config", field="model_type", via="--hf-overrides"),
        # no value the code names: what must hold of it
        'Change `"model_type"` in the model\'s config.json (or `--hf-overrides`) so that '
        'hf_config.model_type is not "llama".',
        None,
    ),
    (
        "self.hf_config.num_layers > 8",
        dict(surface="model-config", field="num_layers", via="--hf-overrides"),
        'Set `"num_layers": 8` in the model\'s config.json, or pass `--hf-overrides '
        "'{\"num_layers\": 8}'` (or any value at most 8).",
        "# before\nvllm serve MODEL\n# after\nvllm serve MODEL --hf-overrides '{\"num_layers\": 8}'",
    ),
]


@pytest.mark.parametrize(("guard", "fields", "solution", "fix"), FIXES)
def test_a_setting_elsewhere_than_a_flag_says_what_to_change(guard, fields, solution, fix):
    from pipeline.dataset.models import Setting

    expr = fetched_as_read(guard).removeprefix("not ").split(" ")[0]
    setting = Setting(
        **{
            "expr": expr,
            "cls": None,
            "type": None,
            "default": None,
            "choices": None,
            "doc": None,
            "flags": [],
            **fields,
        }
    )
    explanation = explain_site(site(guard, [setting]), (), "vllm serve MODEL")
    if solution is not None:
        assert explanation.solutions[0] == solution
    if fix is not None:
        assert explanation.exampleFix == fix


def test_pages_say_where_a_setting_is_set():
    from pipeline.dataset.models import Setting
    from pipeline.site.pages import where_set

    def made(**fields):
        base = dict(expr="x", cls=None, field="f", type=None, default=None, choices=None)
        return Setting(**{**base, "doc": None, "flags": [], **fields})

    assert where_set(made(flags=["--max-model-len"])) == "--max-model-len"
    assert where_set(made(surface="env", field="VLLM_X")) == "env VLLM_X"
    assert where_set(made(surface="request", field="top_k")) == "request body"
    assert where_set(made(surface="model-config", via="--hf-overrides")) == (
        "config.json (--hf-overrides)"
    )


def test_an_attribute_init_sets_is_a_constructor_argument_with_the_flag_of_its_name():
    files = {
        "pkg/server_args.py": """
        from dataclasses import dataclass

        @dataclass
        class ServerArgs:
            quantization: str | None = None

            @staticmethod
            def add_cli_args(parser):
                parser.add_argument("--quantization", default=ServerArgs.quantization)
        """,
        "pkg/model_config.py": """
        class ModelConfig:
            def __init__(self, quantization: str | None = None, seed: int = 0):
                self.quantization = quantization
                self.seed = seed

            def _verify_quantization(self):
                if self.quantization == "fp4" or self.seed < 0:
                    raise ValueError("no fp4")
        """,
    }
    (found,) = resolve_tree(files, "pkg/model_config.py", full=True)
    assert [(s.expr, s.cls, s.field, s.flags, s.surface) for s in found] == [
        ("self.quantization", "ModelConfig", "quantization", ["--quantization"], "flag"),
        ("self.seed", "ModelConfig", "seed", [], "code"),
    ]


def test_a_plain_parameter_named_as_a_flags_dest_is_that_flag():
    files = {
        "pkg/cli.py": """
        def add_cli_args(parser):
            parser.add_argument("--max-model-len", type=int, default=None, help="Context length.")
        """,
        "pkg/limits.py": """
        def _verify_max_len(max_model_len, derived_max_model_len, block):
            if max_model_len > derived_max_model_len or block < 1:
                raise ValueError("too long")
        """,
    }
    (found,) = resolve_tree(files, "pkg/limits.py", full=True)
    assert [(s.expr, s.field, s.flags, s.doc) for s in found] == [
        ("max_model_len", "max_model_len", ["--max-model-len"], "Context length.")
    ]


# (case, the class, its __init__'s check, the settings as (expr, surface, cls, field, type))
CONSTRUCTOR_ARGUMENTS = [
    (
        "a parameter of a public class's __init__",
        "class MixedConfig:",
        "def __init__(self, block_sizes: list[int], group: int = 1):\n"
        "    if len(block_sizes) > 1 or group < 1:",
        [
            ("block_sizes", "code", "MixedConfig", "block_sizes", "list"),
            ("group", "code", "MixedConfig", "group", "int"),
        ],
    ),
    (
        "a Hugging Face config's parameter: a config.json key",
        "class MyModelConfig(PretrainedConfig):",
        "def __init__(self, num_experts=8, **kwargs):\n    if num_experts < 1:",
        [("num_experts", "model-config", "MyModelConfig", "num_experts", None)],
    ),
    (
        "a tensor handed in is no argument a user chooses",
        "class PackedConfig:",
        "def __init__(self, data: torch.Tensor):\n    if data.ndim != 2 or data is None:",
        [],
    ),
    ("a private class", "class _PackedConfig:", "def __init__(self, size):\n    if size < 1:", []),
    (
        "a private parameter",
        "class PackedConfig:",
        "def __init__(self, _size):\n    if _size < 1:",
        [],
    ),
    (
        "a method other than __init__",
        "class PackedConfig:",
        "def validate(self, size):\n    if size < 1:",
        [],
    ),
]


@pytest.mark.parametrize(
    ("case", "header", "check", "expected"),
    CONSTRUCTOR_ARGUMENTS,
    ids=[c[0] for c in CONSTRUCTOR_ARGUMENTS],
)
def test_a_plain_parameter_of_a_public_constructor_is_its_argument(case, header, check, expected):
    body = textwrap.indent(f'{check}\n        raise ValueError("bad")', "    ")
    source = f"import torch\nfrom transformers import PretrainedConfig\n\n\n{header}\n{body}\n"
    (found,) = resolve_tree({"pkg/configs.py": source}, "pkg/configs.py", full=True)
    got = [(s.expr, s.surface, s.cls, s.field, s.type) for s in found if s.surface != "internal"]
    assert got == expected


CALLER_CONFIG = """
    from dataclasses import dataclass

    @dataclass
    class SchedulerConfig:
        max_num_seqs: int = 128
        chunk: int = 16

        def __post_init__(self):
            _verify_seqs(self.max_num_seqs, limit=self.chunk)
            self._check_chunk(self.chunk)

        def _check_chunk(self, size):
            if size < 1:
                raise ValueError("chunk too small")

        def forward(self, batch):
            _verify_seqs(len(batch), limit=4)

    def _verify_seqs(num_seqs, limit):
        if num_seqs < 1 or limit > 1024:
            raise ValueError("bad number of sequences")
"""


def test_a_parameter_its_callers_pass_a_setting_to_is_that_setting():
    found = resolve_tree({"pkg/scheduler.py": CALLER_CONFIG}, "pkg/scheduler.py", full=True)
    by_site = sorted([(s.expr, s.cls, s.field, s.surface) for s in site] for site in found)
    assert by_site == [
        # `_verify_seqs(len(batch), limit=4)` passes no chain: only the first call counts
        [
            ("num_seqs", "SchedulerConfig", "max_num_seqs", "code"),
            ("limit", "SchedulerConfig", "chunk", "code"),
        ],
        [("size", "SchedulerConfig", "chunk", "code")],  # `self._check_chunk(self.chunk)`
    ]


# source -> the lines on which `_check` or `_verify_len` is called
CALL_LINES = [
    ("_check(x)\n_verify_len (n)\n", [1, 2]),
    ("self._check(x)\ncls._verify_len(\n    n)\n", [1, 2]),  # a method, a call over lines
    ("re_check(x)\n_checker(x)\nmy_verify_len(n)\n", []),  # other names that hold them
    ("ä_check(x)\n\n\nx = _check\n_check(y)\n", [5]),  # a word char before; no call
    ("_check  (a); _check(b)\n# _verify_len(c)\n", [1, 2]),  # comments too: the walk decides
]


@pytest.mark.parametrize(("source", "lines"), CALL_LINES)
def test_the_lines_that_call_a_validator(source, lines):
    assert lines_calling(source, {"_check", "_verify_len"}) == lines


def test_a_parameter_followed_through_two_callers():
    files = {
        "pkg/cli.py": """
        def add_cli_args(parser):
            parser.add_argument("--port", type=int, default=8000)
        """,
        "pkg/serve.py": """
        import argparse

        def run_server(args: argparse.Namespace):
            _bind(args.port)

        def _bind(port):
            _check_port(port)

        def _check_port(number):
            if number < 1:
                raise ValueError("bad port")
        """,
    }
    (found,) = resolve_tree(files, "pkg/serve.py", full=True)
    assert [(s.expr, s.field, s.flags) for s in found] == [("number", "port", ["--port"])]


def test_a_staticmethod_called_by_its_class_name_gets_what_the_caller_passes():
    files = {
        "pkg/spec.py": """
        from dataclasses import dataclass

        @dataclass
        class DraftConfig:
            max_len: int | None = None
            num_tokens: int = 1

            def __post_init__(self):
                self.max_len = DraftConfig._clamp(self.max_len, 4096)
                Other._count(self.num_tokens)

            @staticmethod
            def _clamp(wanted, limit):
                if wanted is not None and wanted > limit:
                    raise ValueError("draft longer than the model")
                return wanted

        class Other:
            @staticmethod
            def _count(n):
                if n < 1:
                    raise ValueError("need a token")
        """,
    }
    clamp, count = resolve_tree(files, "pkg/spec.py", full=True)
    assert [(s.expr, s.cls, s.field) for s in clamp] == [("wanted", "DraftConfig", "max_len")]
    assert [(s.expr, s.cls, s.field) for s in count] == [("n", "DraftConfig", "num_tokens")]


def test_a_check_defined_in_a_method_gets_what_the_method_passes_it():
    source = """
    from dataclasses import dataclass

    @dataclass
    class SamplingParams:
        guidance_scale: float = 1.0
        guidance_rescale: float = 0.0

        def _validate(self):
            def _non_negative(name, value):
                if value < 0.0:
                    raise ValueError(f"{name} must be non-negative")

            _non_negative("guidance_scale", self.guidance_scale)
            _non_negative("guidance_rescale", self.guidance_rescale)
    """
    (found,) = resolve_tree({"pkg/sampling.py": source}, "pkg/sampling.py", full=True)
    assert [(s.expr, s.field) for s in found] == [
        ("value", "guidance_scale"),
        ("value", "guidance_rescale"),
    ]
    explanation = explain_site(site("value < 0.0", found))
    assert explanation.solutions[:2] == [
        'Send `"guidance_scale": 0.0` in the request body, '
        "`SamplingParams(guidance_scale=0.0)` in Python (or any value at least 0.0; default 1.0).",
        'Send `"guidance_rescale": 0.0` in the request body, '
        "`SamplingParams(guidance_rescale=0.0)` in Python (or any value at least 0.0; default "
        "0.0).",
    ]
    # a test that names no value: either setting may be the one passed
    explanation = explain_site(site("not math.isfinite(value)", found))
    assert explanation.solutions[0] == (
        'Change `"guidance_scale"` or `"guidance_rescale"` in the request body (value) so that '
        "math.isfinite(value) returns true."
    )


def test_a_tensor_a_caller_hands_on_stays_internal():
    source = """
    from dataclasses import dataclass
    import torch

    @dataclass
    class BlockMasks:
        counts: torch.Tensor

        def __post_init__(self):
            _check_block(self.counts)

    def _check_block(cnt):
        if cnt.dtype != torch.int32:
            raise ValueError("counts must be int32")
    """
    (found,) = resolve_tree({"pkg/masks.py": source}, "pkg/masks.py", full=True)
    assert [(s.expr, s.surface) for s in found] == [("cnt.dtype", "internal")]


QUANT_FILES = {
    "pkg/quantization/base_config.py": """
    from abc import ABC

    class QuantizationConfig(ABC):
        @staticmethod
        def get_from_keys(config, keys):
            for key in keys:
                if key in config:
                    return config[key]
            raise ValueError(f"Cannot find any of {keys} in the quantization config.")
    """,
    "pkg/quantization/gptq.py": """
    from pkg.quantization.base_config import QuantizationConfig

    class GPTQConfig(QuantizationConfig):
        def __init__(self, weight_bits: int, group_size: int, desc_act: bool) -> None:
            self.weight_bits = weight_bits
            self.group_size = group_size
            if weight_bits not in (2, 4, 8):
                raise ValueError(f"{weight_bits}-bit weights are not supported")

        def verify(self):
            if self.group_size == 0:
                raise ValueError("group_size must not be 0")

        @classmethod
        def from_config(cls, config):
            weight_bits = cls.get_from_keys(config, ["bits", "w_bit"])
            group_size = config.get("group_size", 128)
            desc_act = config["desc_act"]
            desc_act = bool(desc_act)
            return cls(weight_bits, group_size=group_size, desc_act=desc_act)
    """,
}


def test_a_quantization_argument_is_the_key_its_from_config_reads():
    found = resolve_tree(QUANT_FILES, "pkg/quantization/gptq.py", full=True)
    got = sorted((s.expr, s.surface, s.cls, s.field) for site in found for s in site)
    # desc_act is computed from the key, not the key's value: no key for it
    assert got == [
        ("self.group_size", "model-config", "GPTQConfig", "quantization_config.group_size"),
        ("weight_bits", "model-config", "GPTQConfig", "quantization_config.bits"),
    ]
    bits = next(s for site in found for s in site if s.expr == "weight_bits")
    explanation = explain_site(site("weight_bits not in (2, 4, 8)", [bits]))
    assert explanation.solutions[0] == (
        'Set `"bits": 2` in `"quantization_config"` of the model\'s config.json.'
    )
    size = next(s for site in found for s in site if s.expr == "self.group_size")
    explanation = explain_site(site("self.group_size == 0", [size]))
    assert explanation.solutions[0] == (
        'Set `"group_size": 1` in `"quantization_config"` of the model\'s config.json.'
    )
    assert explanation.exampleFix == (
        '# before: "quantization_config" of the model\'s config.json\n{"group_size": 0}\n'
        '# after\n{"group_size": 1}'
    )
    # a test that names no value: the key, and what must hold of it
    explanation = explain_site(site("weight_bits not in TYPE_MAP", [bits]))
    assert explanation.solutions[0] == (
        'Change `"bits"` in `"quantization_config"` of the model\'s config.json so that '
        "weight_bits is in TYPE_MAP."
    )


def test_an_attribute_init_sets_from_a_typed_chain_is_walked_from_where_it_starts():
    files = {
        "pkg/config.py": """
        from dataclasses import dataclass

        @dataclass
        class DraftConfig:
            sample_method: str = "greedy"

        @dataclass
        class EngineConfig:
            max_len: int = 2048
            draft_config: DraftConfig | None = None

            @staticmethod
            def add_cli_args(parser):
                parser.add_argument("--max-len", default=EngineConfig.max_len)
        """,
        "pkg/runner.py": """
        from pkg.config import EngineConfig

        class Runner:
            def __init__(self, engine_config: EngineConfig, width):
                self.draft_config = engine_config.draft_config
                self.limit = self.draft_config
                self.max_len = engine_config.max_len
                self.width = width.size

            def _check(self, n):
                if self.draft_config.sample_method == "random" and n > self.max_len:
                    raise ValueError("too long for a random draft")
                if self.width > 2:
                    raise ValueError("too wide")
        """,
    }
    derived, unresolved = resolve_tree(files, "pkg/runner.py", full=True)
    assert [(s.expr, s.cls, s.field, s.flags) for s in derived] == [
        ("self.draft_config.sample_method", "DraftConfig", "sample_method", []),
        ("self.max_len", "EngineConfig", "max_len", ["--max-len"]),
    ]
    assert unresolved == []  # `self.width = width.size`: no type says what `width` is
