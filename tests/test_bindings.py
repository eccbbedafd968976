"""Local message variables on the path to a raise (extractors/bindings.py)."""

import re
import textwrap

import pytest

from extractors.facts import Rules
from extractors.sites import extract_file


def messages_of(source: str) -> list[tuple[str, str]]:
    """(errorMessage, messageStatus) of every site of `source`, in line order."""
    extraction = extract_file("pkg/config.py", textwrap.dedent(source), Rules())
    assert extraction.skipped is None
    return [(site.errorMessage, site.messageStatus) for site in extraction.sites]


# (case name, source, (errorMessage, messageStatus) of each site in line order)
CASES = [
    (
        "a variable assigned before the raise",
        """
        def validate(n):
            msg = f"size must be positive, got {n}"
            raise ValueError(msg)
        """,
        [("size must be positive, got {n}", "template")],
    ),
    (
        "extended with += on the way",
        """
        def validate(n, limit):
            msg = "size out of range"
            msg += f": {n} > {limit}"
            raise ValueError(msg)
        """,
        [("size out of range: {n} > {limit}", "template")],
    ),
    (
        "assignments in blocks that enclose the raise certainly ran",
        """
        def validate(n):
            if n < 0:
                msg = "negative"
                if n < -10:
                    msg += " (far below zero)"
                    raise ValueError(msg)
        """,
        [("negative (far below zero)", "literal")],
    ),
    (
        "a conditional += is a piece that may be absent",
        """
        def validate(n, hint):
            msg = "bad size"
            if hint:
                msg += f" ({hint})"
            raise ValueError(msg)
        """,
        [("bad size{? ({hint})}", "partial")],
    ),
    (
        "a conditional += of unknown text over several lines is one hole, on one line",
        """
        def validate(n, hints):
            msg = "bad size"
            if hints:
                msg += ", ".join(
                    hints,  # the user's
                )
            raise ValueError(msg)
        """,
        [('bad size{?{", ".join(hints)}}', "partial")],
    ),
    (
        "reassigned in a branch: one of the two values",
        """
        def validate(n):
            msg = "too small"
            if n > 8:
                msg = "too large"
            raise ValueError(msg)
        """,
        [("too {?large|small}", "partial")],
    ),
    (
        "a loop that does not enclose the raise ran its += any number of times",
        """
        def validate(names):
            msg = "unknown:"
            for name in names:
                msg += " " + name
            raise ValueError(msg)
        """,
        [("unknown:{* {name}}", "partial")],
    ),
    (
        "a prefix assigned earlier, then + 'tail'",
        """
        def validate(name, n):
            prefix = f"{name}: "
            if n <= 0:
                raise ValueError(prefix + "must be positive")
        """,
        [("{name}: must be positive", "template")],
    ),
    (
        "a parameter is not known text",
        """
        def validate(msg):
            raise ValueError(msg)
        """,
        [("{msg}", "unresolved")],
    ),
    (
        "+= on a variable of unknown value keeps the known tail",
        """
        def validate(cfg):
            msg = cfg.describe()
            msg += " is not supported"
            raise ValueError(msg)
        """,
        [("{msg} is not supported", "partial")],
    ),
    (
        "a non-text value stays its name",
        """
        def validate(shape):
            n = len(shape)
            raise ValueError(f"expected 2 dims, got {n}")
        """,
        [("expected 2 dims, got {n}", "template")],
    ),
    (
        "assignments after the raise do not count",
        """
        def validate(n):
            msg = "first"
            if n:
                raise ValueError(msg)
            msg = "second"
            raise ValueError(msg)
        """,
        [("first", "literal"), ("second", "literal")],
    ),
    (
        "same line, after a semicolon",
        """
        def validate(n):
            msg = "negative"; raise ValueError(msg)
        """,
        [("negative", "literal")],
    ),
    (
        "a handler runs after some of the try body",
        """
        def validate(text):
            msg = "not a number"
            try:
                msg = "out of range"
                if int(text) > 8:
                    raise ValueError(msg)
            except TypeError:
                raise ValueError(msg)
        """,
        [("out of range", "literal"), ("{?not a number|out of range}", "partial")],
    ),
    (
        "a loop's else runs after the loop body ran any number of times",
        """
        def validate(names):
            msg = "no match among:"
            for name in names:
                msg += f" {name}"
                if name.startswith("x"):
                    break
            else:
                raise ValueError(msg)
        """,
        [("no match among:{* {name}}", "partial")],
    ),
    (
        "a for target rebinds the name",
        """
        def validate(messages):
            msg = "none"
            for msg in messages:
                raise ValueError(msg)
        """,
        [("{msg}", "unresolved")],
    ),
]


@pytest.mark.parametrize(
    ("source", "expected"), [case[1:] for case in CASES], ids=[case[0] for case in CASES]
)
def test_local_message_variables(source, expected):
    assert messages_of(source) == expected


# --- messages built in several steps: facts, then what the code really raises -------------
# (case name, source, the function to call, argument tuples that each make it raise, the
# (errorMessage, messagePattern, messageStatus, messageFragments) of each site in line order)
BUILT = [
    (
        "reasons appended under conditions, joined",
        """
        def validate(tp, pp, spec):
            problems = []
            if tp < 1:
                problems.append(f"tensor_parallel_size must be positive, got {tp}")
            if pp > 1 and spec:
                problems.append("speculative decoding does not support pipeline parallelism")
            if problems:
                raise ValueError("; ".join(problems))
        """,
        "validate",
        [(0, 2, True), (0, 1, False), (1, 2, True)],
        [
            (
                "{?tensor_parallel_size must be positive, got {tp}}"
                "{?; speculative decoding does not support pipeline parallelism}",
                # `if problems:`: one of them is there (extractors/parts.py's Some)
                "(?=.*?(?:tensor_parallel_size must be positive, got "
                "|speculative decoding does not support pipeline parallelism))(.*?)",
                "partial",
                [
                    "tensor_parallel_size must be positive, got ",
                    "speculative decoding does not support pipeline parallelism",
                ],
            )
        ],
    ),
    (
        "a first part that is always there, then the reasons",
        """
        def check_lora(rank, max_rank, bias):
            error_msg = ["Invalid LoRA adapter:"]
            if rank > max_rank:
                error_msg.append(f"rank {rank} is greater than max_lora_rank {max_rank}.")
            if bias != "none":
                error_msg.append("bias is not supported.")
            if len(error_msg) > 1:
                raise ValueError(" ".join(error_msg))
        """,
        "check_lora",
        [(16, 8, "none"), (8, 8, "all"), (16, 8, "all")],
        [
            (
                "Invalid LoRA adapter:{? rank {rank} is greater than max_lora_rank {max_rank}.}"
                "{? bias is not supported.}",
                "Invalid LoRA adapter:(.*?)",
                "partial",
                [
                    "Invalid LoRA adapter:",
                    "rank ",
                    " is greater than max_lora_rank ",
                    "bias is not supported.",
                ],
            )
        ],
    ),
    (
        "lines appended in a loop, joined with newlines",
        """
        def validate(names, known):
            errors = ["Unknown names:"]
            for name in names:
                if name not in known:
                    errors.append(f"- {name!r}")
            if len(errors) > 1:
                raise ValueError("\\n".join(errors))
        """,
        "validate",
        [(["a"], []), (["a", "it's", "b"], ["b"])],
        [("Unknown names:{*\n- {name!r}}", "Unknown names:(.*?)", "partial", ["Unknown names:"])],
    ),
    (
        "a list handed to a call may hold items we cannot see",
        """
        def validate(size, mode):
            errors = []
            _check_size(size, errors)
            if mode == "fast":
                errors.append("fast mode needs a GPU")
            if errors:
                raise ValueError(", ".join(errors))

        def _check_size(size, errors):
            if size < 0:
                errors.append(f"size must be positive, got {size}")
        """,
        "validate",
        [(-1, "fast"), (-1, "slow"), (1, "fast")],
        [("{*errors}{?, fast mode needs a GPU}", "(.*?)", "partial", ["fast mode needs a GPU"])],
    ),
    (
        "a tuple of lines held in a variable prints as a tuple",
        """
        def validate_image_pairs(images):
            error_message = (
                "Input images must be one of the following:",
                " - a pair of images,",
                " - a list of pairs of images.",
            )
            if not isinstance(images, list):
                raise ValueError(error_message)
        """,
        "validate_image_pairs",
        [(None,)],
        [
            (
                "('Input images must be one of the following:', ' - a pair of images,', "
                "' - a list of pairs of images.')",
                r"\('Input images must be one of the following:', ' - a pair of images,', "
                r"' - a list of pairs of images\.'\)",
                "literal",
                [],
            )
        ],
    ),
    (
        "a suffix added by a conditional expression",
        """
        def verify_out_indices(out_indices, positive):
            if len(positive) != len(set(positive)):
                msg = f"out_indices must not contain any duplicates, got {out_indices}"
                msg += f" (equivalent to {positive})" if positive != out_indices else ""
                raise ValueError(msg)
        """,
        "verify_out_indices",
        [([1, 1], [1, 1]), ([-1, 1], [1, 1])],
        [
            (
                "out_indices must not contain any duplicates, got {out_indices}"
                "{? (equivalent to {positive})}",
                "out_indices must not contain any duplicates, got (.*?)",
                "partial",
                ["out_indices must not contain any duplicates, got ", " (equivalent to "],
            )
        ],
    ),
    (
        "several branches extend the message",
        """
        def check_target_modules(target, layers, pattern):
            msg = f"Target modules {target} not found in the base model."
            if layers is not None:
                msg += f" Note: you specified 'layers_to_transform': {layers}."
            if pattern is not None:
                msg += f" You also specified 'layers_pattern': {pattern}."
            raise ValueError(msg)
        """,
        "check_target_modules",
        [("q", None, None), ("q", [1], None), ("q", [1], "h.*")],
        [
            (
                "Target modules {target} not found in the base model."
                "{? Note: you specified 'layers_to_transform': {layers}.}"
                "{? You also specified 'layers_pattern': {pattern}.}",
                r"Target modules (.*?) not found in the base model\.(.*?)",
                "partial",
                [
                    "Target modules ",
                    " not found in the base model.",
                    " Note: you specified 'layers_to_transform': ",
                    " You also specified 'layers_pattern': ",
                ],
            )
        ],
    ),
    (
        "each arm assigns the message; an arm that returns never reaches the raise",
        """
        def validate(mode, url):
            if mode == "off":
                msg = "never raised"
                return
            elif mode == "grpc":
                msg = f"grpc mode needs grpc:// URLs, got {url}"
            else:
                msg = f"http mode needs http:// URLs, got {url}"
            raise ValueError(msg)
        """,
        "validate",
        [("grpc", "x"), ("http", "y")],
        [
            (
                "{?grpc mode needs grpc|http mode needs http}:// URLs, got {url}",
                "(.*?):// URLs, got (.*?)",
                "partial",
                ["grpc mode needs grpc", "http mode needs http", ":// URLs, got "],
            )
        ],
    ),
    (
        "assigned in a loop without reading it: the first value or the loop's",
        """
        def validate(options):
            msg = "no options"
            for option in options:
                msg = f"unknown option {option!r}"
            raise ValueError(msg)
        """,
        "validate",
        [([],), (["a", "b"],)],
        [
            (
                "{?no options|unknown option {option!r}}",
                "(.*?)",
                "partial",
                ["no options", "unknown option "],
            )
        ],
    ),
    (
        "a raise inside the loop sees what earlier iterations appended",
        """
        def validate(values):
            seen = []
            for value in values:
                seen.append("bad")
                if len(seen) > 1:
                    raise ValueError(", ".join(seen))
        """,
        "validate",
        [(["a", "b"],)],
        [("{*bad, }bad", "(.*?)bad", "partial", ["bad", "bad"])],
    ),
]


def sites_of(source: str):
    extraction = extract_file("pkg/config.py", textwrap.dedent(source), Rules())
    assert extraction.skipped is None
    return extraction.sites


@pytest.mark.parametrize(
    ("source", "expected"), [(c[1], c[4]) for c in BUILT], ids=[c[0] for c in BUILT]
)
def test_messages_built_in_steps(source, expected):
    assert [
        (s.errorMessage, s.messagePattern, s.messageStatus, s.messageFragments)
        for s in sites_of(source)
    ] == expected


@pytest.mark.parametrize(
    ("source", "function", "calls"), [c[1:4] for c in BUILT], ids=[c[0] for c in BUILT]
)
def test_pattern_matches_what_the_code_raises(source, function, calls):
    code = textwrap.dedent(source)
    namespace: dict = {}
    exec(compile(code, "pkg/config.py", "exec"), namespace)  # trusted: the table above
    patterns = {site.lineNumber: site.messagePattern for site in sites_of(source)}
    for args in calls:
        with pytest.raises(ValueError) as raised:
            namespace[function](*args)
        line = raised.traceback[-1].lineno + 1  # pytest counts lines from 0
        assert re.fullmatch(patterns[line], str(raised.value), re.DOTALL), (args, raised.value)
