"""One file in, its validator raise sites out (extractors/sites.py, the extract entry point)."""

import textwrap

import pytest

from extractors.facts import Rules
from extractors.sites import extract_file


def extract(source: str, rules: Rules | None = None):
    rules = rules or Rules()
    extraction = extract_file("pkg/config.py", textwrap.dedent(source).lstrip("\n"), rules)
    assert extraction.skipped is None
    return extraction.sites


# (case name, source, (lineNumber, qualname, errorClass, errorMessage) of each site)
CASES = [
    (
        "raise forms: called, bare, from, builtins.",
        """
        import builtins

        def validate(cfg):
            if cfg.a:
                raise ValueError("a is set")
            if cfg.b:
                raise ValueError
            try:
                int(cfg.c)
            except TypeError as exc:
                raise ValueError("c is not a number") from exc
            if cfg.d:
                raise builtins.ValueError("d is set")
            if cfg.e:
                raise ValueError()
        """,
        [
            (5, "validate", "ValueError", "a is set"),
            (7, "validate", "ValueError", ""),
            (11, "validate", "ValueError", "c is not a number"),
            (13, "validate", "ValueError", "d is set"),
            (15, "validate", "ValueError", ""),
        ],
    ),
    (
        "other classes and raised variables are not sites",
        """
        def validate(cfg, err):
            if cfg.a:
                raise TypeError("wrong type")
            if cfg.b:
                raise err
            if cfg.c:
                raise other.ValueError("not the builtin")
            raise
        """,
        [],
    ),
    (
        "a raise outside any validator is not a site",
        """
        def load(path):
            raise ValueError("cannot load")

        class Loader:
            def run(self):
                raise ValueError("cannot run")
        """,
        [],
    ),
    (
        "a nested def is its own scope: a site only if it is a validator itself",
        """
        def validate_all(items):
            def render(item):
                raise ValueError("in a helper nobody calls")

            def _check(item):
                raise ValueError(f"bad item {item}")

            handler = lambda item: item
            for item in items:
                _check(item)
        """,
        [(6, "validate_all.<locals>._check", "ValueError", "bad item {item}")],
    ),
    (
        "a class nested in a validator is its own scope",
        """
        def __post_init__(self):
            class Local:
                def run(self):
                    raise ValueError("not a validator")
            raise ValueError("is")
        """,
        [(5, "__post_init__", "ValueError", "is")],
    ),
    (
        "methods and nested classes, decorated, multi-line raise: the raise keyword's line",
        """
        class Outer:
            class Inner(BaseModel):
                @field_validator("size")
                @classmethod
                def positive(cls, v):
                    if v <= 0:
                        raise ValueError(
                            "size must be positive"
                        )
                    return v
        """,
        [(7, "Outer.Inner.positive", "ValueError", "size must be positive")],
    ),
    (
        "a multi-line string at column 0 inside a method",
        '''
        class Config:
            def __post_init__(self):
                if self.bad:
                    raise ValueError("""first line
        second line""")
                if self.worse:
                    raise ValueError("worse")
        ''',
        [
            (4, "Config.__post_init__", "ValueError", "first line\nsecond line"),
            (7, "Config.__post_init__", "ValueError", "worse"),
        ],
    ),
    (
        "async validators and one-line bodies",
        """
        class Server:
            async def _check_model(self, name):
                if name not in self.models: raise ValueError(f"no model {name!r}")
        """,
        [(3, "Server._check_model", "ValueError", "no model {name!r}")],
    ),
]


@pytest.mark.parametrize(
    ("source", "expected"), [case[1:] for case in CASES], ids=[case[0] for case in CASES]
)
def test_sites(source, expected):
    sites = extract(source)
    assert [(s.lineNumber, s.qualname, s.errorClass, s.errorMessage) for s in sites] == expected


def test_error_classes_are_configurable():
    source = """
    def validate(cfg):
        if cfg.a:
            raise TypeError("wrong type")
        raise ValueError("wrong value")
    """
    sites = extract(source, Rules(error_classes=("TypeError",)))
    assert [(s.lineNumber, s.errorClass) for s in sites] == [(3, "TypeError")]


def test_site_fields_of_a_decorated_method():
    source = textwrap.dedent(
        """\
        class SchedulerConfig(BaseModel):
            max_num_seqs: int = 8

            @model_validator(mode="after")
            def _limits(self):
                if self.max_num_seqs < 1:
                    raise ValueError(f"max_num_seqs must be >= 1, got {self.max_num_seqs}")
                return self
        """
    )
    (site,) = extract_file("vllm/config/scheduler.py", source, Rules()).sites
    assert site.model_dump() == {
        "filePath": "vllm/config/scheduler.py",
        "lineNumber": 7,
        "qualname": "SchedulerConfig._limits",
        "validatorKind": "pydantic",
        "errorClass": "ValueError",
        "errorMessage": "max_num_seqs must be >= 1, got {self.max_num_seqs}",
        "messagePattern": "max_num_seqs must be >= 1, got (.*?)",
        "messageStatus": "template",
        "messageFragments": [],
        "guards": ["self.max_num_seqs < 1"],
        "priorChecks": [],
        "sourceCode": source.rstrip("\n"),
        "sourceCodeStart": 1,
        "sourceCodeEnd": 8,
        "functionSource": (
            '@model_validator(mode="after")\n'
            "def _limits(self):\n"
            "    if self.max_num_seqs < 1:\n"
            '        raise ValueError(f"max_num_seqs must be >= 1, got {self.max_num_seqs}")\n'
            "    return self"
        ),
        "occurrence": 0,
    }


def test_source_window_is_18_lines_either_side_clamped_to_the_file():
    filler = [f"X{i} = {i}" for i in range(40)]
    lines = [
        "def validate(n):",
        "    if n < 0:",
        '        raise ValueError("early")',
        *filler,
        "def check_late(n):",
        '    raise ValueError("late")',
        *filler[:5],
    ]
    text = "\n".join(lines) + "\n"
    early, late = extract_file("m.py", text, Rules()).sites
    assert (early.lineNumber, early.sourceCodeStart, early.sourceCodeEnd) == (3, 1, 21)
    assert early.sourceCode == "\n".join(lines[0:21])
    assert (late.lineNumber, late.sourceCodeStart, late.sourceCodeEnd) == (45, 27, 50)
    assert late.sourceCode == "\n".join(lines[26:50])


def test_source_window_holds_the_files_lines_with_crlf_endings():
    text = 'def validate(n):\r\n    if n:\r\n        raise ValueError("n")\r\n'
    (site,) = extract_file("m.py", text, Rules()).sites
    assert site.lineNumber == 3
    assert site.sourceCode == 'def validate(n):\n    if n:\n        raise ValueError("n")'


def test_occurrence_counts_repeats_of_one_message_within_a_function():
    source = """
    def validate(a, b):
        if a < 0:
            raise ValueError("negative")
        if b < 0:
            raise ValueError("negative")
        if a > b:
            raise ValueError("out of order")

    def check(c):
        raise ValueError("negative")
    """
    sites = extract(source)
    assert [(s.qualname, s.errorMessage, s.occurrence) for s in sites] == [
        ("validate", "negative", 0),
        ("validate", "negative", 1),
        ("validate", "out of order", 0),
        ("check", "negative", 0),
    ]


def test_function_source_removes_the_methods_indentation():
    source = '''
    class Config:
        @property
        def ignored(self): ...

        @field_validator("mode")
        def _mode(cls, v):
            """Doc
    under-indented continuation."""

            if v not in MODES:
                raise ValueError("bad mode")
    '''
    (site,) = extract(source)
    assert site.functionSource == (
        '@field_validator("mode")\n'
        "def _mode(cls, v):\n"
        '    """Doc\n'
        'under-indented continuation."""\n'
        "\n"
        "    if v not in MODES:\n"
        '        raise ValueError("bad mode")'
    )


# (case name, file content, the one-line reason it is skipped)
SKIPPED = [
    (
        "syntax error",
        'def validate(x):\n    if x\n        raise ValueError("x")\n',
        "syntax error at line 2: expected ':'",
    ),
    (
        "Python 2 print statement",
        'def validate(x):\n    print "checking", x\n    raise ValueError("x")\n',
        "Python 2 code at line 2: print statement",
    ),
    (
        "Python 2 except clause",
        "def validate(x):\n    try:\n        pass\n    except KeyError, e:\n"
        '        raise ValueError("x")\n',
        "Python 2 code at line 4: except clause with a comma",
    ),
    (
        "latin-1 bytes without a coding cookie",
        'def validate(x):\n    # café\n    raise ValueError("x")\n'.encode("latin-1"),
        "not UTF-8: invalid byte 0xe9 at line 2",
    ),
    (
        "unknown coding cookie",
        b'# coding: klingon\ndef validate(x):\n    raise ValueError("x")\n',
        "not decodable: unknown encoding: klingon",
    ),
    ("NUL byte in text", 'def validate(x):\n    raise ValueError("x")\n\0', "NUL byte"),
    ("NUL byte in bytes", b'def validate(x):\n    raise ValueError("x")\n\0', "NUL byte"),
    (
        "deeply nested expression",
        "def validate(x):\n    raise ValueError(" + "(" * 300 + "x" + ")" * 300 + ")\n",
        "nesting too deep",
    ),
    (
        "expression too deep for the recursive tree walkers",
        "def validate(x):\n    raise ValueError(" + " + ".join(["x"] * 20000) + ")\n",
        "nesting too deep",
    ),
]


@pytest.mark.parametrize(
    ("content", "reason"), [case[1:] for case in SKIPPED], ids=[case[0] for case in SKIPPED]
)
def test_skipped_file_reason(content, reason):
    extraction = extract_file("pkg/old.py", content, Rules())
    assert (extraction.skipped, extraction.sites) == (reason, [])


def test_coding_cookie_decodes_latin1_bytes():
    content = '# -*- coding: latin-1 -*-\ndef validate(x):\n    raise ValueError("café")\n'
    extraction = extract_file("m.py", content.encode("latin-1"), Rules())
    assert [(s.lineNumber, s.errorMessage) for s in extraction.sites] == [(3, "café")]


def test_utf8_bom_is_not_part_of_the_first_line():
    content = '\ufeffdef validate(x):\n    raise ValueError("x")\n'.encode()
    (site,) = extract_file("m.py", content, Rules()).sites
    assert site.sourceCode == 'def validate(x):\n    raise ValueError("x")'


@pytest.mark.parametrize(
    "content",
    [
        'def load(x):\n    raise ValueError("x")\n',  # no validator
        "def validate(x):\n    raise TypeError('x')\n",  # no configured class
        "print 'python 2 without any validator'\n",  # never parsed
    ],
)
def test_files_without_candidates_come_back_empty(content):
    assert extract_file("m.py", content, Rules()).model_dump() == {
        "filePath": "m.py",
        "sites": [],
        "skipped": None,
        "calls_out": [],
    }
