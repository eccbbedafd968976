"""`vmine diff`: matching two datasets into typed changes, and the text/markdown/json reports."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from pipeline.cli import main
from pipeline.dataset.manifest import Counts, LLMUsage, Manifest, Tool
from pipeline.dataset.models import ErrorRecord, Explanation, IndexEntry, Setting
from pipeline.dataset.reader import load_dataset
from pipeline.dataset.writer import write_dataset
from pipeline.diff.changes import (
    Added,
    Changed,
    ErrorSet,
    Moved,
    Removed,
    Reworded,
    diff_error_sets,
)
from pipeline.diff.report import markdown_row, render_json, render_markdown, render_text
from pipeline.keys import record_id

REPO = "acme/engine"
OLD_SHA = "a" * 40
NEW_SHA = "b" * 40
VERSION = "2026-01-02T03:04:05.678Z"
EXPLANATION = Explanation(
    documentation="d",
    triggerScenarios="t",
    commonSituations="c",
    solutions=["s"],
    exampleFix="e",
    handlingStrategy="validation",
    validationCode="v",
    typeGuard="g",
    tryCatchPattern=None,
    preventionTips=[],
    tags=["engine"],
)


def raise_site(
    qualname: str,
    message: str,
    *,
    path: str = "engine/config.py",
    line: int = 10,
    guards: tuple[str, ...] = (),
    pattern: str | None = None,
    occurrence: int = 0,
) -> dict:
    """The facts of one raise, as a test writes them."""
    return {
        "qualname": qualname,
        "errorMessage": message,
        "filePath": path,
        "lineNumber": line,
        "guards": list(guards),
        "messagePattern": pattern if pattern is not None else message,
        "occurrence": occurrence,
    }


def entry_of(site: dict, repo: str = REPO) -> IndexEntry:
    rid = record_id(
        SimpleNamespace(
            repo=repo,
            errorClass="ValueError",
            **{key: site[key] for key in ("filePath", "qualname", "errorMessage", "occurrence")},
        )
    )
    return IndexEntry(
        id=rid,
        slug=rid,
        filePath=site["filePath"],
        lineNumber=site["lineNumber"],
        qualname=site["qualname"],
        validatorKind="name",
        errorClass="ValueError",
        errorMessage=site["errorMessage"],
        messagePattern=site["messagePattern"],
        messageStatus="literal",
        guards=site["guards"],
    )


def write_fixture_dataset(out: Path, sha: str, sites: list[dict], repo: str = REPO) -> Path:
    """A dataset written by the real writer, with placeholder explanations."""
    entries = [entry_of(site, repo) for site in sites]
    records = [
        ErrorRecord(
            id=entry.id,
            repo=repo,
            slug=entry.slug,
            errorMessage=entry.errorMessage,
            messagePattern=entry.messagePattern,
            errorClass="ValueError",
            filePath=entry.filePath,
            lineNumber=entry.lineNumber,
            sourceCode="raise",
            sourceCodeStart=entry.lineNumber,
            sourceCodeEnd=entry.lineNumber,
            githubUrl=f"https://github.com/{repo}/blob/{sha}/{entry.filePath}"
            f"#L{entry.lineNumber}-L{entry.lineNumber}",
            analyzedSha=sha,
            analyzedAt=VERSION,
            **EXPLANATION.model_dump(),
        )
        for entry in entries
    ]
    manifest = Manifest(
        repo=repo,
        analyzedSha=sha,
        datasetVersion=VERSION,
        source="local",
        counts=Counts(records=len(records)),
        llm=LLMUsage(provider="offline", model="offline", promptVersion="offline-1"),
        tool=Tool(version="0.1.0", extractorVersion="1"),
    )
    return write_dataset(out, repo, sha, records, entries, manifest)


def error_set(sha: str, sites: list[dict]) -> ErrorSet:
    return ErrorSet(
        label=sha[:4], repo=REPO, sha=sha, entries=tuple(entry_of(site) for site in sites)
    )


# One of each change kind, plus one record that stays as it was.
OLD_SITES = [
    raise_site("CacheConfig.__post_init__", "block_size must be a power of two", line=12),
    raise_site("CacheConfig.__post_init__", "swap_space must be non-negative", line=20),
    raise_site(
        "SchedulerConfig._verify_args",
        "max_num_seqs must be positive",
        line=40,
        guards=("self.max_num_seqs <= 0",),
    ),
    raise_site(
        "ParallelConfig.check_world",
        "world size {ws} exceeds the device count",
        line=60,
        pattern="world size (.*?) exceeds the device count",
    ),
    raise_site("LoRAConfig.validate_rank", "rank must be at most 64", line=80),
    raise_site("TokenizerConfig.check_mode", "tokenizer_mode must be auto or slow", line=90),
]
NEW_SITES = [
    raise_site("CacheConfig.__post_init__", "block_size must be a power of two", line=12),
    raise_site("CacheConfig.__post_init__", "swap_space must be non-negative", line=24),
    raise_site("SpecConfig.__post_init__", "num_speculative_tokens must be set", line=30),
    raise_site(
        "SchedulerConfig._verify_args",
        "max_num_seqs must be positive",
        line=44,
        guards=("self.max_num_seqs < 1",),
    ),
    raise_site(
        "ParallelConfig.check_world",
        "world size {ws} exceeds the number of devices",
        line=64,
        pattern="world size (.*?) exceeds the number of devices",
    ),
    raise_site(
        "TokenizerConfig.check_mode",
        "tokenizer_mode must be auto or slow",
        path="engine/tokenizer.py",
        line=5,
    ),
]

EXPECTED_TEXT = """\
acme/engine@aaaaaaaaaaaa -> acme/engine@bbbbbbbbbbbb
+ added    engine/config.py:30  SpecConfig.__post_init__: "num_speculative_tokens must be set"
- removed  engine/config.py:80  LoRAConfig.validate_rank: "rank must be at most 64"
~ reworded engine/config.py:64  ParallelConfig.check_world: "world size {ws} exceeds the device count" -> "world size {ws} exceeds the number of devices" (was engine/config.py:60)
> moved    engine/config.py:24  CacheConfig.__post_init__: "swap_space must be non-negative" (was engine/config.py:20)
> moved    engine/tokenizer.py:5  TokenizerConfig.check_mode: "tokenizer_mode must be auto or slow" (was engine/config.py:90)
! changed  engine/config.py:44  SchedulerConfig._verify_args: "max_num_seqs must be positive" (guards ["self.max_num_seqs <= 0"] -> ["self.max_num_seqs < 1"]; was engine/config.py:40)
1 added, 1 removed, 1 reworded, 2 moved, 1 changed, 1 unchanged
"""


def test_every_change_kind_in_text():
    diff = diff_error_sets(error_set(OLD_SHA, OLD_SITES), error_set(NEW_SHA, NEW_SITES))
    assert render_text(diff) == EXPECTED_TEXT
    assert [type(change) for change in diff.changes] == [
        Added,
        Removed,
        Reworded,
        Moved,
        Moved,
        Changed,
    ]
    assert diff.differs is True


def test_text_colours_each_kind_on_a_terminal():
    diff = diff_error_sets(error_set(OLD_SHA, OLD_SITES[:1]), error_set(NEW_SHA, []))
    assert render_text(diff, color=True).splitlines()[1] == (
        "\x1b[31m- removed  engine/config.py:12  CacheConfig.__post_init__: "
        '"block_size must be a power of two"\x1b[0m'
    )


def _lines(old: list[dict], new: list[dict]) -> list[str]:
    diff = diff_error_sets(error_set(OLD_SHA, old), error_set(NEW_SHA, new))
    return render_text(diff).splitlines()[1:]


def test_dissimilar_message_in_the_same_function_is_added_and_removed():
    old = [raise_site("LoadConfig.check_format", "load_format must be a string", line=5)]
    new = [
        raise_site("LoadConfig.check_format", "unknown loader; pick one of the registry", line=5)
    ]
    assert _lines(old, new) == [
        "+ added    engine/config.py:5  LoadConfig.check_format: "
        '"unknown loader; pick one of the registry"',
        '- removed  engine/config.py:5  LoadConfig.check_format: "load_format must be a string"',
        "1 added, 1 removed, 0 reworded, 0 moved, 0 changed, 0 unchanged",
    ]


def test_similar_message_in_another_function_is_not_reworded():
    old = [raise_site("LoadConfig.check_format", "load_format must be a string", line=5)]
    new = [raise_site("LoadConfig.check_dtype", "load_format must be a str", line=5)]
    assert _lines(old, new)[-1] == "1 added, 1 removed, 0 reworded, 0 moved, 0 changed, 0 unchanged"


def test_rewordings_pair_best_first():
    # "x must be > 0" is closer to "x must be >= 1" than "y must be > 0" is, whatever the order.
    old = [
        raise_site("Limits.check", "y must be > 0", line=3),
        raise_site("Limits.check", "x must be > 0", line=4),
    ]
    new = [
        raise_site("Limits.check", "x must be > 0 (got {x})", line=3),
        raise_site("Limits.check", "y must be > 0 (got {y})", line=4),
    ]
    assert _lines(old, new) == [
        '~ reworded engine/config.py:3  Limits.check: "x must be > 0" -> "x must be > 0 (got {x})" '
        "(was engine/config.py:4)",
        '~ reworded engine/config.py:4  Limits.check: "y must be > 0" -> "y must be > 0 (got {y})" '
        "(was engine/config.py:3)",
        "0 added, 0 removed, 2 reworded, 0 moved, 0 changed, 0 unchanged",
    ]


def test_pattern_change_alone_is_changed():
    old = [raise_site("Quant.verify", "bits {b} unsupported", pattern="bits (.*) unsupported")]
    new = [raise_site("Quant.verify", "bits {b} unsupported", pattern="bits (.*?) unsupported")]
    assert _lines(old, new) == [
        '! changed  engine/config.py:10  Quant.verify: "bits {b} unsupported" '
        '(messagePattern "bits (.*) unsupported" -> "bits (.*?) unsupported")',
        "0 added, 0 removed, 0 reworded, 0 moved, 1 changed, 0 unchanged",
    ]


def _spec_method(
    choices: list[str] | None,
    default: str | None = '"ngram"',
    flags: tuple[str, ...] = ("--speculative-method",),
    doc: str = "The method.",
) -> Setting:
    return Setting(
        expr="self.method",
        cls="SpecConfig",
        field="method",
        type="SpecMethod",
        default=default,
        choices=choices,
        doc=doc,
        flags=list(flags),
    )


def _read(settings: list[Setting], sha: str) -> ErrorSet:
    site = raise_site(
        "SpecConfig.__post_init__",
        "unknown speculative method {m}",
        line=30,
        guards=("self.method not in get_args(SpecMethod)",),
    )
    entry = entry_of(site).model_copy(update={"settings": settings})
    return ErrorSet(label=sha[:4], repo=REPO, sha=sha, entries=(entry,))


@pytest.mark.parametrize(
    ("old", "new", "note"),
    [
        # a value is no longer accepted, another is: the fix a record gives may be wrong now
        (
            _spec_method(["ngram", "medusa"]),
            _spec_method(["ngram", "mtp"]),
            "self.method: choices -medusa +mtp",
        ),
        (
            _spec_method(["ngram"]),
            _spec_method(["ngram"], default='"mtp"'),
            'self.method: default "ngram" -> "mtp"',
        ),
        (
            _spec_method(["ngram"]),
            _spec_method(["ngram"], flags=("--spec-method", "-m")),
            "self.method: flags --speculative-method -> --spec-method -m",
        ),
        (
            _spec_method(["ngram", "mtp"], default=None),
            _spec_method(None),
            'self.method: choices ngram mtp -> (not listed), default (none) -> "ngram"',
        ),
    ],
)
def test_a_setting_set_differently_is_changed(old, new, note):
    diff = diff_error_sets(_read([old], OLD_SHA), _read([new], NEW_SHA))
    assert [type(change) for change in diff.changes] == [Changed]
    assert diff.changes[0].fields == ["settings"]
    assert render_text(diff).splitlines()[1] == (
        "! changed  engine/config.py:30  SpecConfig.__post_init__: "
        f'"unknown speculative method {{m}}" ({note})'
    )


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ([_spec_method(["ngram"])], [_spec_method(["ngram"], doc="Which method to use.")]),
        ([], [_spec_method(["ngram"])]),  # a dataset of an older vmine has no settings
        ([_spec_method(["ngram"])], []),
    ],
)
def test_a_setting_documented_differently_or_read_on_one_side_is_unchanged(old, new):
    diff = diff_error_sets(_read(old, OLD_SHA), _read(new, NEW_SHA))
    assert (diff.changes, diff.unchanged) == ((), 1)


def test_json_names_each_setting_change():
    diff = diff_error_sets(
        _read([_spec_method(["ngram", "medusa"])], OLD_SHA),
        _read([_spec_method(["ngram", "mtp"], default=None)], NEW_SHA),
    )
    change = json.loads(render_json(diff))["changes"][0]
    assert (change["fields"], change["settings"]) == (
        ["settings"],
        [
            {
                "expr": "self.method",
                "class": "SpecConfig",
                "field": "method",
                "flags": ["--speculative-method"],
                "old": {"choices": ["ngram", "medusa"], "default": '"ngram"'},
                "new": {"choices": ["ngram", "mtp"], "default": None},
            }
        ],
    )


def test_dropping_the_first_of_two_identical_raises_removes_one():
    # The second raise takes occurrence 0 (the first's id): it stays, at its own line.
    old = [
        raise_site("Device.check", "device must be set", line=4),
        raise_site("Device.check", "device must be set", line=9, occurrence=1),
    ]
    new = [raise_site("Device.check", "device must be set", line=7)]
    assert _lines(old, new) == [
        '- removed  engine/config.py:9  Device.check: "device must be set"',
        '> moved    engine/config.py:7  Device.check: "device must be set" '
        "(was engine/config.py:4)",
        "0 added, 1 removed, 0 reworded, 1 moved, 0 changed, 0 unchanged",
    ]


def test_identical_sets_have_no_changes():
    diff = diff_error_sets(error_set(OLD_SHA, OLD_SITES), error_set(NEW_SHA, OLD_SITES))
    assert diff.changes == ()
    assert diff.summary() == "0 added, 0 removed, 0 reworded, 0 moved, 0 changed, 6 unchanged"
    assert render_markdown(diff) == (
        "### vmine diff: `acme/engine@aaaaaaaaaaaa` → `acme/engine@bbbbbbbbbbbb`\n\n"
        "**0 added, 0 removed, 0 reworded, 0 moved, 0 changed, 6 unchanged**\n\n"
        "No error was added, removed, reworded, moved or changed.\n"
    )


@pytest.fixture
def two_datasets(tmp_path: Path) -> tuple[Path, Path]:
    old = write_fixture_dataset(tmp_path / "old", OLD_SHA, OLD_SITES)
    new = write_fixture_dataset(tmp_path / "new", NEW_SHA, NEW_SITES)
    return old, new


def _url(sha: str, path: str, line: int) -> str:
    return f"https://github.com/acme/engine/blob/{sha}/{path}#L{line}-L{line}"


def test_markdown_links_each_change_to_its_line(two_datasets):
    old, new = two_datasets
    diff = diff_error_sets(
        ErrorSet.from_dataset(load_dataset(old)), ErrorSet.from_dataset(load_dataset(new))
    )
    b = NEW_SHA
    assert (
        render_markdown(diff)
        == f"""\
### vmine diff: `acme/engine@aaaaaaaaaaaa` → `acme/engine@bbbbbbbbbbbb`

**1 added, 1 removed, 1 reworded, 2 moved, 1 changed, 1 unchanged**

| change | where | validator | error | note |
|---|---|---|---|---|
| added | [`engine/config.py:30`]({_url(b, "engine/config.py", 30)}) | `SpecConfig.__post_init__` | `num_speculative_tokens must be set` |  |
| removed | [`engine/config.py:80`]({_url(OLD_SHA, "engine/config.py", 80)}) | `LoRAConfig.validate_rank` | `rank must be at most 64` |  |
| reworded | [`engine/config.py:64`]({_url(b, "engine/config.py", 64)}) | `ParallelConfig.check_world` | `world size {{ws}} exceeds the device count` → `world size {{ws}} exceeds the number of devices` | was engine/config.py:60 |
| changed | [`engine/config.py:44`]({_url(b, "engine/config.py", 44)}) | `SchedulerConfig._verify_args` | `max_num_seqs must be positive` | guards ["self.max_num_seqs <= 0"] -> ["self.max_num_seqs < 1"]; was engine/config.py:40 |

<details><summary>2 moved</summary>

| change | where | validator | error | note |
|---|---|---|---|---|
| moved | [`engine/config.py:24`]({_url(b, "engine/config.py", 24)}) | `CacheConfig.__post_init__` | `swap_space must be non-negative` | was engine/config.py:20 |
| moved | [`engine/tokenizer.py:5`]({_url(b, "engine/tokenizer.py", 5)}) | `TokenizerConfig.check_mode` | `tokenizer_mode must be auto or slow` | was engine/config.py:90 |

</details>
"""
    )


def test_markdown_cells_escape_pipes_and_backticks():
    old = [raise_site("Fmt.check", "use `a|b` here", line=2)]
    diff = diff_error_sets(error_set(OLD_SHA, old), error_set(NEW_SHA, []))
    assert markdown_row(diff.changes[0]) == (
        "| removed | `engine/config.py:2` | `Fmt.check` | `` use `a\\|b` here `` |  |"
    )


def test_markdown_caps_the_rows_and_says_how_many_it_left_out():
    new = [raise_site(f"Cfg{n}.check", f"value {n} is wrong", line=n) for n in range(1, 6)]
    diff = diff_error_sets(error_set(OLD_SHA, []), error_set(NEW_SHA, new))
    report = render_markdown(diff, max_rows=2)
    assert report.count("| added |") == 2
    assert report.endswith("… and 3 more changes (run `vmine diff --format json` for all).\n")


def test_json_shape(two_datasets):
    old, new = two_datasets
    report = json.loads(
        render_json(
            diff_error_sets(
                ErrorSet.from_dataset(load_dataset(old)), ErrorSet.from_dataset(load_dataset(new))
            )
        )
    )
    assert list(report) == ["version", "old", "new", "counts", "changes"]
    assert report["version"] == 1
    assert report["old"] == {"label": str(old), "repo": REPO, "analyzedSha": OLD_SHA, "records": 6}
    assert report["counts"] == {
        "added": 1,
        "removed": 1,
        "reworded": 1,
        "moved": 2,
        "changed": 1,
        "unchanged": 1,
    }
    assert [change["kind"] for change in report["changes"]] == [
        "added",
        "removed",
        "reworded",
        "moved",
        "moved",
        "changed",
    ]
    reworded = report["changes"][2]
    assert reworded == {
        "kind": "reworded",
        "qualname": "ParallelConfig.check_world",
        "errorClass": "ValueError",
        "fields": ["lineNumber", "errorMessage", "messagePattern"],
        "similarity": 0.8,
        "settings": [],
        "old": {
            "id": entry_of(OLD_SITES[3]).id,
            "filePath": "engine/config.py",
            "lineNumber": 60,
            "errorMessage": "world size {ws} exceeds the device count",
            "messagePattern": "world size (.*?) exceeds the device count",
            "guards": [],
            "githubUrl": _url(OLD_SHA, "engine/config.py", 60),
        },
        "new": {
            "id": entry_of(NEW_SITES[4]).id,
            "filePath": "engine/config.py",
            "lineNumber": 64,
            "errorMessage": "world size {ws} exceeds the number of devices",
            "messagePattern": "world size (.*?) exceeds the number of devices",
            "guards": [],
            "githubUrl": _url(NEW_SHA, "engine/config.py", 64),
        },
    }
    assert report["changes"][0]["old"] is None
    assert report["changes"][1]["new"] is None


# --- the command -----------------------------------------------------------------------


def test_cli_text_report_and_exit_code(two_datasets):
    old, new = two_datasets
    result = CliRunner().invoke(main, ["diff", str(old), str(new), "--exit-code"])
    assert result.exit_code == 1
    assert result.stdout == EXPECTED_TEXT


def test_cli_exit_code_zero_when_nothing_differs(two_datasets):
    old, _ = two_datasets
    result = CliRunner().invoke(main, ["diff", str(old), str(old), "--exit-code"])
    assert result.exit_code == 0
    assert result.stdout.splitlines()[-1] == (
        "0 added, 0 removed, 0 reworded, 0 moved, 0 changed, 6 unchanged"
    )


def test_cli_without_exit_code_flag_exits_zero_on_differences(two_datasets):
    old, new = two_datasets
    result = CliRunner().invoke(main, ["diff", str(old), str(new), "--format", "json"])
    assert result.exit_code == 0
    assert json.loads(result.stdout)["counts"]["added"] == 1


def test_cli_accepts_a_folder_holding_one_dataset(two_datasets, tmp_path):
    result = CliRunner().invoke(main, ["diff", str(tmp_path / "old"), str(tmp_path / "new")])
    assert result.exit_code == 0
    assert result.stdout == EXPECTED_TEXT


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            "{tmp}",
            "Error: OLD {tmp}: 2 datasets under this folder "
            "(new/acme/engine/{b}, old/acme/engine/{a}); name one",
        ),
        (
            "{tmp}/empty",
            "Error: OLD {tmp}/empty: no dataset (manifest.json) under this folder; "
            "write one with `vmine run`",
        ),
        (
            "no-such-thing",
            "Error: OLD no-such-thing: not a dataset folder, SOURCE@REV or pypi:NAME==VERSION",
        ),
    ],
)
def test_cli_refuses_unusable_old_in_one_line(two_datasets, tmp_path, spec, message):
    (tmp_path / "empty").mkdir()
    _, new = two_datasets
    result = CliRunner().invoke(main, ["diff", spec.format(tmp=tmp_path), str(new)])
    assert result.exit_code == 2
    assert result.stderr == message.format(tmp=tmp_path, a=OLD_SHA, b=NEW_SHA) + "\n"


def test_cli_reports_a_broken_dataset_in_one_line(two_datasets):
    old, new = two_datasets
    (old / "index.jsonl").write_text("{}\n")
    result = CliRunner().invoke(main, ["diff", str(old), str(new)])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"Error: OLD {old}: {old}/index.jsonl:1: ")
    assert len(result.stderr.splitlines()) == 1


def _num_tokens(cls: str, field: str, default: str, flags: tuple[str, ...]) -> Setting:
    """One of the two settings a property with two branches reads under one expr."""
    return Setting(
        expr="self.num_speculative_tokens",
        cls=cls,
        field=field,
        type="int | None",
        default=default,
        choices=None,
        doc=None,
        flags=list(flags),
    )


SPEC_TOKENS = _num_tokens("SpeculativeConfig", "num_speculative_tokens", "None", ("--spec-k",))
LOOKAHEAD = _num_tokens("SchedulerConfig", "num_lookahead_slots", "0", ())


@pytest.mark.parametrize(
    "new",
    [[SPEC_TOKENS, LOOKAHEAD], [LOOKAHEAD, SPEC_TOKENS]],
    ids=["same order", "other order"],
)
def test_two_settings_of_one_expr_pair_by_their_field(new, tmp_path):
    old = [SPEC_TOKENS, LOOKAHEAD]
    diff = diff_error_sets(_read(old, OLD_SHA), _read(new, NEW_SHA))
    assert (diff.changes, diff.unchanged) == ((), 1)


def test_a_dataset_with_two_settings_of_one_expr_against_itself_has_no_change(tmp_path):
    site = raise_site("SpecConfig.__post_init__", "k must be positive", line=30)
    path = write_fixture_dataset(tmp_path / "d", OLD_SHA, [site])
    index = path / "index.jsonl"
    line = json.loads(index.read_text())
    line["settings"] = [
        setting.model_dump(mode="json", by_alias=True) for setting in (SPEC_TOKENS, LOOKAHEAD)
    ]
    index.write_text(json.dumps(line) + "\n")
    result = CliRunner().invoke(main, ["diff", str(path), str(path), "--exit-code"])
    assert (result.exit_code, result.output.splitlines()[-1]) == (
        0,
        "0 added, 0 removed, 0 reworded, 0 moved, 0 changed, 1 unchanged",
    )


@pytest.mark.parametrize(
    ("old", "new", "changed"),
    [
        # one of the two fields gained a flag: that one is the change, the other is not
        (
            [SPEC_TOKENS, LOOKAHEAD],
            [SPEC_TOKENS, LOOKAHEAD.model_copy(update={"flags": ["--lookahead"]})],
            ["self.num_speculative_tokens: flags (none) -> --lookahead"],
        ),
        # the field moved to another class, one setting of the expr on each side: paired
        (
            [SPEC_TOKENS],
            [SPEC_TOKENS.model_copy(update={"cls": "DraftConfig", "default": "1"})],
            ["self.num_speculative_tokens: default None -> 1"],
        ),
        # two settings become one other: no telling which it was, so nothing is compared
        ([SPEC_TOKENS, LOOKAHEAD], [SPEC_TOKENS.model_copy(update={"field": "k"})], []),
    ],
)
def test_settings_of_one_expr_pair_as_the_case_table_says(old, new, changed):
    from pipeline.diff.report import setting_note

    diff = diff_error_sets(_read(old, OLD_SHA), _read(new, NEW_SHA))
    notes = [setting_note(item) for change in diff.changes for item in change.settings]
    assert notes == changed
