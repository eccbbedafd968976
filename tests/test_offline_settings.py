"""Explanations that say what to type: the offline explainer's solutions, example fixes and
documentation for checks whose subject is a setting, and the grounding of a flag's value."""

from __future__ import annotations

import tempfile
import textwrap
from pathlib import Path

import pytest

from pipeline.dataset.models import Explanation, Setting, Site, github_url
from pipeline.explainers.grounding import RepoGrounding, choice_violations
from pipeline.explainers.offline import explain_site
from pipeline.explainers.offline.conditions import parse_guards
from pipeline.explainers.offline.settings import holds_with
from pipeline.mine.extract import extract_source
from tests.settings_fixture import make_settings_repo

SHA = "0123456789abcdef0123456789abcdef01234567"


def setting(
    field: str,
    *,
    cls: str | None = "CacheConfig",
    type_: str = "str",
    default: str | None = None,
    choices: list[str] | None = None,
    flags: list[str] | None = None,
    expr: str | None = None,
    doc: str | None = None,
    action: str | None = None,
) -> Setting:
    return Setting(
        expr=expr or f"self.{field}",
        cls=cls,
        field=field,
        type=type_,
        default=default,
        choices=choices,
        doc=doc,
        flags=flags if flags is not None else [f"--{field.replace('_', '-')}"],
        action=action,
    )


def site(
    guard: str,
    settings: list[Setting],
    message: str = "rejected",
    qualname: str = "CacheConfig.__post_init__",
) -> Site:
    path = "engine/config/cache.py"
    return Site(
        repo="acme/engine",
        analyzedSha=SHA,
        filePath=path,
        lineNumber=40,
        qualname=qualname,
        validatorKind="post_init",
        errorClass="ValueError",
        errorMessage=message,
        messagePattern=message,
        messageStatus="literal",
        guards=[guard],
        sourceCode="",
        sourceCodeStart=22,
        sourceCodeEnd=58,
        githubUrl=github_url("acme/engine", SHA, path, 22, 58),
        settings=settings,
        functionSource=textwrap.dedent(f"""
            def __post_init__(self):
                if {guard}:
                    raise ValueError({message!r})
        """),
    )


MODE = setting(
    "mamba_cache_mode", type_="MambaCacheMode", default='"none"', choices=["none", "all", "align"]
)
BLOCK = setting("block_size", type_="int", default="16")
PREFIX = setting("enable_prefix_caching", type_="bool", default="False")
CHUNKED = setting("enable_chunked_prefill", type_="bool", default="True")
KV = setting(
    "kv_transfer_config", cls="EngineConfig", type_="KVTransferConfig | None", default="None"
)
DTYPE = setting(
    "cache_dtype",
    type_="CacheDType",
    default='"auto"',
    choices=["auto", "fp8", "fp8_e5m2"],
    flags=["--kv-cache-dtype"],
)
ROLE = setting(
    "kv_role",
    cls="KVTransferConfig",
    type_="KVRole | None",
    default="None",
    choices=["kv_producer", "kv_consumer"],
    flags=[],
)
ROLE_CARRIER = setting(
    "kv_transfer_config",
    cls="EngineConfig",
    expr="self",
    type_="KVTransferConfig | None",
    default="None",
)

# flags that take no value (the action their add_argument call gives)
OVERWRITE = setting("overwrite", type_=None, expr="args.overwrite", action="store_true")
TOGGLE = setting(
    "enable_chunked_prefill", type_="bool", default="True", action="BooleanOptionalAction"
)
NO_CACHE = setting(
    "cache", type_=None, expr="args.cache", flags=["--no-cache"], action="store_false"
)

# (case, guard, settings, message, first solution, example fix (before, after))
WHAT_TO_TYPE = [
    (
        "a store_true switch is passed, never given a value",
        "not args.overwrite",
        [OVERWRITE],
        "rejected",
        "Pass `--overwrite`.",
        ("# (without --overwrite)", "--overwrite"),
    ),
    (
        "a store_true switch that must be off is left out",
        "args.overwrite",
        [OVERWRITE],
        "rejected",
        "Leave out `--overwrite`.",
        ("--overwrite", "# (without --overwrite)"),
    ),
    (
        "a switch tested against None is passed",
        "args.overwrite is None",
        [OVERWRITE],
        "rejected",
        "Pass `--overwrite`.",
        ("# (without --overwrite)", "--overwrite"),
    ),
    (
        "a BooleanOptionalAction turned off by its --no- form",
        "self.enable_chunked_prefill",
        [TOGGLE],
        "rejected",
        "Pass `--no-enable-chunked-prefill` (default True).",
        ("--enable-chunked-prefill", "--no-enable-chunked-prefill"),
    ),
    (
        "a store_false flag turns its field off when passed",
        "args.cache",
        [NO_CACHE],
        "rejected",
        "Pass `--no-cache`.",
        ("# (without --no-cache)", "--no-cache"),
    ),
    (
        "another accepted value than the failing one, the default last",
        'self.mamba_cache_mode == "all"',
        [MODE],
        "rejected",
        "Pass `--mamba-cache-mode align` (accepted: none, all, align; default none).",
        ("--mamba-cache-mode all", "--mamba-cache-mode align"),
    ),
    (
        "the value the message asks for",
        'self.mamba_cache_mode == "all"',
        [MODE],
        "use --mamba-cache-mode align instead",
        "Pass `--mamba-cache-mode align` (accepted: none, all, align; default none).",
        ("--mamba-cache-mode all", "--mamba-cache-mode align"),
    ),
    (
        "not one of the listed values",
        'self.cache_dtype not in ("fp8", "fp8_e5m2")',
        [DTYPE],
        "rejected",
        "Pass `--kv-cache-dtype fp8` (accepted: auto, fp8, fp8_e5m2; default auto).",
        ("--kv-cache-dtype <value>", "--kv-cache-dtype fp8"),
    ),
    (
        "one of the listed values fails: a choice outside them",
        'self.mamba_cache_mode in ("all", "align")',
        [MODE],
        "rejected",
        "Pass `--mamba-cache-mode none` (accepted: none, all, align; default none).",
        ("--mamba-cache-mode all", "--mamba-cache-mode none"),
    ),
    (
        "not one of the values of its own Literal",
        "self.kv_role not in get_args(KVRole)",
        [ROLE.model_copy(update={"flags": ["--kv-role"]})],
        "rejected",
        "Pass `--kv-role kv_producer` (accepted: kv_producer, kv_consumer; default None).",
        ("--kv-role <value>", "--kv-role kv_producer"),
    ),
    (
        "set when it must not be",
        "self.kv_transfer_config is not None",
        [KV],
        "rejected",
        "Remove `--kv-transfer-config` (default None).",
        ("--kv-transfer-config <value>", "# (without --kv-transfer-config)"),
    ),
    (
        "a numeric comparison: its boundary",
        "self.block_size <= 0",
        [BLOCK],
        "rejected",
        "Pass `--block-size 1` (or any value greater than 0; default 16).",
        ("--block-size 0", "--block-size 1"),
    ),
    (
        "a switch that must be on",
        "not self.enable_prefix_caching",
        [PREFIX],
        "rejected",
        "Pass `--enable-prefix-caching` (default False).",
        ("# (without --enable-prefix-caching)", "--enable-prefix-caching"),
    ),
    (
        "a switch that must be off, on by default",
        "self.enable_chunked_prefill",
        [CHUNKED],
        "rejected",
        "Turn off `--enable-chunked-prefill` (default True).",
        ("--enable-chunked-prefill", "# (without --enable-chunked-prefill)"),
    ),
    (
        "a setting in one part of an `or`",
        "not isinstance(self.block_size, int) or self.block_size <= 0",
        [BLOCK],
        "rejected",
        "Pass `--block-size 1` (or any value greater than 0; default 16).",
        ("--block-size 0", "--block-size 1"),
    ),
    (
        "a field of a config passed as one JSON flag",
        "self.kv_role is None",
        [ROLE, ROLE_CARRIER],
        "rejected",
        'Pass `--kv-transfer-config \'{"kv_role": "kv_producer"}\'` '
        "(accepted: kv_producer, kv_consumer; default None).",
        ("--kv-transfer-config '{}'", '--kv-transfer-config \'{"kv_role": "kv_producer"}\''),
    ),
]


@pytest.mark.parametrize(
    ("case", "guard", "settings", "message", "solution", "fix"),
    WHAT_TO_TYPE,
    ids=[c[0] for c in WHAT_TO_TYPE],
)
def test_solution_and_example_fix_say_what_to_type(case, guard, settings, message, solution, fix):
    explanation = explain_site(site(guard, settings, message))
    assert explanation.solutions[0] == solution
    assert explanation.exampleFix == f"# before\n{fix[0]}\n# after\n{fix[1]}"


def test_example_fix_starts_with_the_targets_command():
    explanation = explain_site(
        site('self.mamba_cache_mode == "all"', [MODE]), (), "vllm serve MODEL"
    )
    assert explanation.exampleFix == (
        "# before\nvllm serve MODEL --mamba-cache-mode all\n"
        "# after\nvllm serve MODEL --mamba-cache-mode align"
    )


def test_removing_the_only_flag_leaves_the_bare_command():
    explanation = explain_site(
        site("self.kv_transfer_config is not None", [KV]), (), "vllm serve MODEL"
    )
    assert explanation.exampleFix == (
        "# before\nvllm serve MODEL --kv-transfer-config <value>\n# after\nvllm serve MODEL"
    )


def test_a_setting_without_flags_gets_a_constructor_call():
    no_flag = setting("block_size", type_="int", default="16", flags=[])
    explanation = explain_site(site("self.block_size <= 0", [no_flag]))
    assert explanation.solutions[0] == (
        "Set `CacheConfig(block_size=1)` (or any value greater than 0; default 16)."
    )
    assert explanation.exampleFix == (
        "# before\nCacheConfig(block_size=0)\n# after\nCacheConfig(block_size=1)"
    )


def test_documentation_quotes_the_settings_doc():
    documented = MODE.model_copy(update={"doc": "The cache strategy for Mamba layers."})
    explanation = explain_site(site('self.mamba_cache_mode == "all"', [documented]))
    assert explanation.documentation.endswith(
        "The setting `--mamba-cache-mode` (CacheConfig.mamba_cache_mode) is documented as: "
        '"The cache strategy for Mamba layers."'
    )


# --- the fixture repository, both parser idioms ---------------------------------------------


@pytest.fixture(scope="module")
def fixture_sites() -> dict[tuple[str, int], Site]:
    root = Path(tempfile.mkdtemp(prefix="vmine-settings-"))
    repo, _ = make_settings_repo(root / "engine")
    extraction = extract_source(str(repo), repo_name="acme/engine", cache_dir=root / "cache")
    return {(s.filePath, s.lineNumber): s for s in extraction.sites}


FIXTURE_FIXES = [
    (
        ("engine/config/cache.py", 33),
        "vllm serve MODEL",
        [
            "Pass `--mamba-cache-mode align` (accepted: none, all, align; default none).",
            # a BooleanOptionalAction (the splat of a bool field): --no-x turns it off
            "Pass `--no-enable-prefix-caching` (default False).",
        ],
        "# before\nvllm serve MODEL --enable-prefix-caching --mamba-cache-mode all\n"
        "# after\nvllm serve MODEL --enable-prefix-caching --mamba-cache-mode align",
    ),
    (
        ("engine/config/kv_transfer.py", 19),
        "vllm serve MODEL",
        [
            'Pass `--kv-transfer-config \'{"kv_role": "kv_producer"}\'` (accepted: kv_producer, '
            "kv_consumer, kv_both; default None).",
            "Leave kv_connector out of `--kv-transfer-config` (default None).",
        ],
        "# before\nvllm serve MODEL --kv-transfer-config '{}'\n"
        '# after\nvllm serve MODEL --kv-transfer-config \'{"kv_role": "kv_producer"}\'',
    ),
    (
        ("engine/config/engine.py", 31),
        "vllm serve MODEL",
        [
            "Pass `--speculative-config '{\"num_speculative_tokens\": 8}'` (or any value at most 8; "
            "default 0)."
        ],
        "# before\nvllm serve MODEL --speculative-config '{\"num_speculative_tokens\": 9}'\n"
        "# after\nvllm serve MODEL --speculative-config '{\"num_speculative_tokens\": 8}'",
    ),
    (
        ("server/server_args.py", 21),
        "python -m sglang.launch_server --model-path MODEL",
        [
            "Pass `--tp-size 2` (or any value at least 2; default 1).",
            "Leave out `--enable-dp-attention` (default False).",
        ],
        "# before\npython -m sglang.launch_server --model-path MODEL --enable-dp-attention "
        "--tp-size 1\n"
        "# after\npython -m sglang.launch_server --model-path MODEL --enable-dp-attention "
        "--tp-size 2",
    ),
    (
        ("server/server_args.py", 25),
        "python -m sglang.launch_server --model-path MODEL",
        [
            "Pass `--attention-backend flashinfer` (accepted: triton, flashinfer, fa3; default "
            "None).",
            "Pass `--disaggregation-mode prefill` (accepted: null, prefill, decode; default null).",
        ],
        "# before\npython -m sglang.launch_server --model-path MODEL --disaggregation-mode decode "
        "--attention-backend triton\n"
        "# after\npython -m sglang.launch_server --model-path MODEL --disaggregation-mode decode "
        "--attention-backend flashinfer",
    ),
]


@pytest.mark.parametrize(
    ("where", "command", "solutions", "fix"),
    FIXTURE_FIXES,
    ids=[f"{w[0]}:{w[1]}" for w, *_ in FIXTURE_FIXES],
)
def test_fixture_sites_get_commands_to_type(fixture_sites, where, command, solutions, fix):
    explanation = explain_site(fixture_sites[where], (), command)
    assert explanation.solutions[: len(solutions)] == solutions
    assert explanation.exampleFix == fix


def test_fixture_explanations_are_grounded(fixture_sites):
    grounding = RepoGrounding(lambda needles: set(needles))  # every flag exists
    for fixture_site in fixture_sites.values():
        explanation = explain_site(fixture_site, (), "vllm serve MODEL")
        assert grounding.check(explanation, fixture_site.settings) == [], fixture_site.qualname


# --- grounding: a flag paired with a value outside its choices ------------------------------


def explanation(solutions: list[str], fix: str = "", code: str = "") -> Explanation:
    return Explanation(
        documentation="",
        triggerScenarios="",
        commonSituations="",
        solutions=solutions,
        exampleFix=fix,
        handlingStrategy="validation",
        validationCode=code,
        typeGuard="",
        tryCatchPattern=None,
        preventionTips=[],
        tags=[],
    )


CHOICE_CHECKS = [
    (
        "a value outside the choices in a code span",
        explanation(["Pass `--mamba-cache-mode fast`."]),
        ["solutions[0]: --mamba-cache-mode fast is not one of its choices (none, all, align)"],
    ),
    (
        "a value with =, in prose",
        explanation(["Use --mamba-cache-mode=fast."]),
        ["solutions[0]: --mamba-cache-mode fast is not one of its choices (none, all, align)"],
    ),
    (
        "a command line of the example fix",
        explanation([], "# before\nvllm serve M --mamba-cache-mode fast"),
        ["exampleFix: --mamba-cache-mode fast is not one of its choices (none, all, align)"],
    ),
    (
        "accepted values, two of them joined",
        explanation(["Pass `--mamba-cache-mode all/align`"]),
        [],
    ),
    ("prose after a flag is no value", explanation(["--mamba-cache-mode requires a cache."]), []),
    (
        "a comment line and Python strings are no commands",
        explanation(
            [],
            "# the error needs: --mamba-cache-mode fast",
            'if "--mamba-cache-mode fast" in str(e):\n    pass',
        ),
        [],
    ),
    ("a metavar", explanation(["Pass `--mamba-cache-mode MODE`."]), []),
]


@pytest.mark.parametrize(
    ("case", "answer", "violations"), CHOICE_CHECKS, ids=[c[0] for c in CHOICE_CHECKS]
)
def test_grounding_warns_of_a_value_outside_the_choices(case, answer, violations):
    assert choice_violations(answer, [MODE]) == violations


# (guard, a value the subject takes, whether the guard still holds then)
HOLDS_WITH = [
    ('self.mode == "no_buffer"', "no_buffer", True),
    ('self.mode == "no_buffer"', "extra_buffer", False),
    ('self.mode != "auto"', "auto", False),
    ('self.mode in ("a", "b")', "b", True),
    ('self.mode not in ("a", "b")', "c", True),
    ("self.mode == Mode.NO_BUFFER", "no_buffer", True),  # a member by its name
    ("self.block_size <= 0", "0", True),
    ("self.block_size <= 0", "1", False),
    ("self.enable_x", "True", True),
    ("not self.enable_x", "True", False),
    ("self.mode == other.mode", "a", None),  # the code does not tell
]


@pytest.mark.parametrize(("guard", "value", "holds"), HOLDS_WITH)
def test_a_value_is_tested_on_the_guard_itself(guard, value, holds):
    (condition,) = parse_guards([guard])
    assert holds_with(condition, value) is holds


def test_the_failing_value_the_message_names_is_never_proposed():
    explanation = explain_site(
        site('self.mamba_cache_mode == "all"', [MODE], "use --mamba-cache-mode all instead")
    )
    assert "`--mamba-cache-mode all`" not in " ".join(explanation.solutions)
    assert explanation.solutions[0].startswith("Pass `--mamba-cache-mode align`")


# (guard, the setting, the first solution): a range test gets a value inside its bounds,
# and a value a user cannot see (the empty string of a list of accepted ones) is never proposed
VALUES_INSIDE = [
    (
        "not 0.0 < self.top_p <= 1.0",
        setting("top_p", type_="float", default="1.0", flags=["--top-p"]),
        "Pass `--top-p 1.0` (default 1.0).",
    ),
    (
        "not 0 < self.port < 65536",
        setting("port", type_="int", flags=["--port"]),
        "Pass `--port 1`.",
    ),
    (
        "not -1.0 <= self.bias < 1.0",
        setting("bias", type_="float", flags=["--bias"]),
        "Pass `--bias -1.0`.",
    ),
    (
        "not 0.0 < self.ratio < 1.0",
        setting("ratio", type_="float", flags=["--ratio"]),
        "Pass `--ratio 0.5`.",
    ),
    (
        'self.backend not in ["", "eager", "inductor"]',
        setting("backend", default='""', flags=["--backend"]),
        'Pass `--backend eager` (default "").',
    ),
]


@pytest.mark.parametrize(("guard", "item", "solution"), VALUES_INSIDE)
def test_a_value_inside_the_bounds_and_never_an_empty_one(guard, item, solution):
    explanation = explain_site(
        site(guard, [item.model_copy(update={"expr": "self." + item.field})])
    )
    assert explanation.solutions[0].startswith(solution)
    assert "''" not in explanation.exampleFix


def test_a_constructor_argument_left_unset_is_shown_as_none():
    item = setting(
        "dst_mesh_dims", cls="TrainerInfo", type_="list[int] | None", default="None", flags=[]
    ).model_copy(update={"surface": "code"})
    explanation = explain_site(
        site("self.dst_mesh_dims is not None", [item], qualname="TrainerInfo.__post_init__")
    )
    assert explanation.solutions[0] == (
        "Leave dst_mesh_dims of TrainerInfo unset: `TrainerInfo(dst_mesh_dims=None)` (default None)."
    )


# --- settings read inside a test that names no value -----------------------------------------

TOKENS = setting("token_ids", cls="Oracle", type_="list[int]", flags=[]).model_copy(
    update={"surface": "code"}
)
HEADS = setting("num_heads", cls="ModelShape", type_="int", flags=[]).model_copy(
    update={"surface": "model-config", "via": "--hf-overrides"}
)
TP = setting("tensor_parallel_size", cls="ParallelConfig", type_="int", default="1")
STOP = setting("stop", cls="SamplingParams", type_="list[str]", flags=[]).model_copy(
    update={"surface": "request"}
)
LOCAL = setting("data_parallel_size_local", cls="ParallelConfig", type_="int", expr="local_size")
DOWNCAST = setting(
    "SGLANG_ALLOW_DOWNCAST", cls=None, type_="bool", default="False", flags=[]
).model_copy(update={"surface": "env", "expr": "envs.SGLANG_ALLOW_DOWNCAST"})
SHARED = setting("shared_cache", type_="bool", flags=[], expr="self").model_copy(
    update={"surface": "code"}
)

# (case, guard, settings, first solution, example fix)
READ_INSIDE = [
    (
        "an environment variable read through .get() is exported",
        "not envs.SGLANG_ALLOW_DOWNCAST.get()",
        [DOWNCAST],
        "Run `export SGLANG_ALLOW_DOWNCAST=1` before starting (default False).",
        "# before\nSGLANG_ALLOW_DOWNCAST=0 engine serve MODEL\n"
        "# after\nSGLANG_ALLOW_DOWNCAST=1 engine serve MODEL",
    ),
    (
        "a constructor argument inside len()",
        "len(self.token_ids) != 1",
        [TOKENS],
        "Change `Oracle(token_ids=...)` so that len(token_ids) is 1.",
        "# before\nOracle(token_ids=...)  # len(token_ids) is not 1\n"
        "# after\nOracle(token_ids=...)  # len(token_ids) is 1",
    ),
    (
        "a config.json key and a flag in one remainder",
        "self.hf_config.num_heads % self.tensor_parallel_size != 0",
        [
            HEADS.model_copy(update={"expr": "self.hf_config.num_heads"}),
            TP.model_copy(update={"expr": "self.tensor_parallel_size"}),
        ],
        'Change `"num_heads"` in the model\'s config.json (or `--hf-overrides`) and '
        "`--tensor-parallel-size` so that hf_config.num_heads % tensor_parallel_size is 0.",
        "# before: hf_config.num_heads % tensor_parallel_size is not 0\n"
        "engine serve MODEL --tensor-parallel-size <value>\n"
        "# after: hf_config.num_heads % tensor_parallel_size is 0\n"
        "engine serve MODEL --tensor-parallel-size <value>",
    ),
    (
        "two config.json keys: where they are said once",
        "len(self.hf_config.layer_types) != self.hf_config.num_heads",
        [
            HEADS.model_copy(update={"expr": "self.hf_config.layer_types", "field": "layer_types"}),
            HEADS.model_copy(update={"expr": "self.hf_config.num_heads"}),
        ],
        'Change `"layer_types"` and `"num_heads"` in the model\'s config.json (or '
        "`--hf-overrides`) so that len(hf_config.layer_types) equals hf_config.num_heads.",
        "# before: in the model's config.json (or --hf-overrides), len(hf_config.layer_types) "
        'differs from hf_config.num_heads\n{"layer_types": <value>, "num_heads": <value>}\n'
        "# after: len(hf_config.layer_types) equals hf_config.num_heads\n"
        '{"layer_types": <value>, "num_heads": <value>}',
    ),
    (
        "a request field, by its JSON name",
        "len(self.stop) > 4",
        [STOP],
        'Change `"stop"` in the request body so that len(stop) is at most 4.',
        None,
    ),
    (
        "a local the setting is read into says which flag it is",
        "start_rank + local_size > 8",
        [LOCAL],
        "Change `--data-parallel-size-local` (local_size) so that start_rank + local_size is "
        "at most 8.",
        None,
    ),
]


@pytest.mark.parametrize(
    ("case", "guard", "settings", "solution", "fix"), READ_INSIDE, ids=[c[0] for c in READ_INSIDE]
)
def test_settings_read_inside_a_test_are_named_where_they_change(
    case, guard, settings, solution, fix
):
    explanation = explain_site(site(guard, settings), (), "engine serve MODEL")
    assert explanation.solutions[0] == solution
    if fix is not None:
        assert explanation.exampleFix == fix


def test_a_bare_receiver_or_a_loop_header_is_never_named():
    # `self` resolving to a whole config names no field; a tuple is no test
    shared_field = SHARED.model_copy(update={"expr": "self.shared_cache"})
    for guard, settings in (
        ("len(self.items) > 2", [SHARED]),
        ("(kind, size) in (1, self.shared_cache), (2, 3)", [shared_field]),
    ):
        explanation = explain_site(site(guard, settings))
        assert not any("Change " in s for s in explanation.solutions)
    named = explain_site(site("len(self.shared_cache) > 2", [shared_field]))
    assert named.solutions[0].startswith("Change `CacheConfig(shared_cache=...)`")


def test_a_test_of_module_state_comes_after_the_setting_that_leads_to_it():
    prefix = PREFIX.model_copy(update={"action": "BooleanOptionalAction"})
    explanation = explain_site(
        site("self.enable_prefix_caching and not current_platform.is_cuda()", [prefix])
    )
    assert explanation.solutions == [
        "Pass `--no-enable-prefix-caching` (default False).",
        "Make sure current_platform.is_cuda() returns true.",
    ]


def test_a_test_of_a_loops_item_names_the_setting_the_loop_walks():
    limits = setting("per_kind_limits", type_="dict[str, int]", flags=["--per-kind-limits"])
    explanation = explain_site(
        site(
            "(kind, limit) in self.per_kind_limits.items() and limit <= 0",
            [limits],
            qualname="CacheConfig._check_limits",
        ).model_copy(
            update={
                "functionSource": textwrap.dedent("""
                    def _check_limits(self):
                        for kind, limit in self.per_kind_limits.items():
                            if limit <= 0:
                                raise ValueError("rejected")
                """)
            }
        )
    )
    assert explanation.solutions[0] == (
        "Change `--per-kind-limits` so that limit is greater than 0 for every (kind, limit) in "
        "per_kind_limits.items()."
    )


def test_an_index_loop_hands_on_no_setting():
    count = setting("batch_size", type_="int", flags=["--batch-size"], expr="batch_size")
    explanation = explain_site(
        site("i in range(batch_size) and items[i] is not None", [count]).model_copy(
            update={
                "functionSource": textwrap.dedent("""
                    def __post_init__(self, batch_size, items):
                        for i in range(batch_size):
                            if items[i] is not None:
                                raise ValueError("rejected")
                """)
            }
        )
    )
    # the index names no setting; the arguments decide it
    assert explanation.solutions[0] == (
        "Call CacheConfig with `batch_size` and `items` such that items[i] is None (i comes "
        "from batch_size in __post_init__): they are arguments of __post_init__, so the code "
        "that calls it decides; follow the traceback to that call."
    )


TOP_K = setting("top_k", cls="SamplingParams", type_="int", flags=[]).model_copy(
    update={"surface": "request"}
)
TEMPERATURE = setting("temperature", cls="SamplingParams", type_="float", flags=[]).model_copy(
    update={"surface": "request"}
)

# (guard, settings, solutions): the values proposed pass the whole test
WHOLE_TEST = [
    # `0` passes `== -1` but not `< 1`: only the value that passes both is proposed
    (
        "self.top_k < 1 or self.top_k == -1",
        [TOP_K],
        [
            'Send `"top_k": 1` in the request body, `SamplingParams(top_k=1)` in Python (or any '
            "value at least 1)."
        ],
    ),
    # a float boundary: the boundary itself passes a strict test
    (
        "self.temperature < 0.0",
        [TEMPERATURE],
        [
            'Send `"temperature": 0.0` in the request body, `SamplingParams(temperature=0.0)` in '
            "Python (or any value at least 0.0)."
        ],
    ),
    # a constant on the left reads as it would on the right: `0 > x` is `x < 0`
    (
        "0 > self.min_new_tokens",
        [setting("min_new_tokens", type_="int", flags=["--min-new-tokens"])],
        ["Pass `--min-new-tokens 0` (or any value at least 0)."],
    ),
    # a comparison under `not` reads as the one it means (`!=`): the value it names passes
    (
        'not self.mamba_cache_mode == "all"',
        [MODE],
        ["Pass `--mamba-cache-mode all` (accepted: none, all, align; default none)."],
    ),
]


@pytest.mark.parametrize(("guard", "settings", "solutions"), WHOLE_TEST)
def test_a_value_proposed_passes_the_whole_test(guard, settings, solutions):
    assert explain_site(site(guard, settings)).solutions == solutions


def test_leaving_out_a_setting_with_a_default_is_no_fix_for_a_test_that_it_is_set():
    # an early return skips the check unless `value is not None or not allow_none`: leaving
    # `--guidance-scale` out keeps its default 1.0, which is not None, so that part still holds
    scale = setting("guidance_scale", cls="SamplingParams", type_="float", default="1.0")
    checked = site("float(value) < 0.0", [scale.model_copy(update={"expr": "value"})])
    checked = checked.model_copy(
        update={"guards": ["value is not None or not allow_none", "float(value) < 0.0"]}
    )
    explanation = explain_site(checked, (), "engine serve MODEL")
    assert not any(s.startswith("Remove") for s in explanation.solutions)
    assert "(without --guidance-scale)" not in explanation.exampleFix
    assert explanation.solutions == [
        "Change `--guidance-scale` (value) so that float(value) is at least 0.0 (default 1.0)."
    ]


# (guard, setting, example fix): a request field or config.json key is shown where a user
# changes it, even with no value the code names; never as `cfg.x = ...`
ON_THEIR_SURFACE = [
    (
        "self.stop is not None",
        STOP.model_copy(update={"expr": "self.stop"}),
        '# before: the request body\n{"stop": <value>}\n# after: without "stop"\n{}',
    ),
    (
        "self.stop not in ALLOWED",
        STOP.model_copy(update={"expr": "self.stop"}),
        '# before: the request body, stop is not in ALLOWED\n{"stop": <value>}\n'
        '# after: stop is in ALLOWED\n{"stop": <value>}',
    ),
    (
        "self.weight_bits not in SUPPORTED_BITS",
        HEADS.model_copy(
            update={"expr": "self.weight_bits", "field": "quantization_config.bits", "via": None}
        ),
        '# before: in "quantization_config" of the model\'s config.json, weight_bits is not in '
        'SUPPORTED_BITS\n{"bits": <value>}\n# after: weight_bits is in SUPPORTED_BITS\n'
        '{"bits": <value>}',
    ),
]


@pytest.mark.parametrize(("guard", "field", "fix"), ON_THEIR_SURFACE)
def test_a_field_with_no_value_named_is_shown_on_its_surface(guard, field, fix):
    assert explain_site(site(guard, [field]), (), "engine serve MODEL").exampleFix == fix


def test_a_value_computed_from_a_parameter_that_is_a_setting_names_that_setting():
    # `needed` comes from `max_len`, which the callers pass `--max-model-len`: the setting to
    # change, not the call
    max_len = setting("max_model_len", cls="ModelConfig", type_="int", expr="max_len")
    checked = site("needed > budget", [max_len]).model_copy(
        update={
            "qualname": "check_fit",
            "validatorKind": "name",
            "functionSource": textwrap.dedent("""
                def check_fit(max_len, budget):
                    needed = max_len * 2
                    if needed > budget:
                        raise ValueError("does not fit")
            """),
        }
    )
    explanation = explain_site(checked, (), "engine serve MODEL")
    assert explanation.solutions == [
        "Change `--max-model-len` (max_len) so that needed is at most budget."
    ]
    assert explanation.exampleFix == (
        "# before: needed is greater than budget\nengine serve MODEL --max-model-len <value>\n"
        "# after: needed is at most budget\nengine serve MODEL --max-model-len <value>"
    )
