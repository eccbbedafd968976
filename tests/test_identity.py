"""Record ids ignore line numbers; slugs are short, ASCII, word-bounded and unique."""

from __future__ import annotations

import pytest

from pipeline.keys import SLUG_MAX, base_slug, identities, record_id, slugs
from tests.site_factory import make_site

RID = "abcdef0123456789"


def test_id_is_16_lowercase_hex_digits():
    rid = record_id(make_site())
    assert len(rid) == 16
    assert rid == rid.lower()
    int(rid, 16)


def test_id_survives_moving_the_raise_to_another_line():
    assert record_id(make_site(line=12)) == record_id(make_site(line=340))


@pytest.mark.parametrize(
    "changed",
    [
        make_site("max_batch must be at least 1"),
        make_site(file_path="engine/scheduler.py"),
        make_site(qualname="SchedulerConfig.validate"),
        make_site(occurrence=1),
    ],
    ids=["message", "file", "qualname", "occurrence"],
)
def test_id_changes_with_what_and_where(changed):
    assert record_id(changed) != record_id(make_site())


# (message, slug): the slug rules as a case table.
SLUG_CASES = [
    # Seed 002: `--` and brackets go, `P/D` becomes `pd`, which would pass 50 characters.
    (
        "--use-replayssm is incompatible with KV connectors (P/D disaggregation, KV cache offload)",
        "use-replayssm-is-incompatible-with-kv-connectors",
    ),
    ("max_model_len must be positive", "max-model-len-must-be-positive"),
    ("got {cfg.mode!r}, expected one of {sorted(MODES)}", "got-expected-one-of"),
    ("nested {d[{1: 2}[1]]} braces", "nested-braces"),
    ("Größe ist ungültig: café", "groe-ist-ungultig-cafe"),
    ("   ", f"error-{RID[:8]}"),
    ("{message}", f"error-{RID[:8]}"),
    ("数据无效", f"error-{RID[:8]}"),
    ("a" * 60, "a" * 50),
    # literal braces are doubled: their words count; an optional piece's do not
    ('expected JSON like {{"mode": 1}}', "expected-json-like-mode-1"),
    ("bad size{? ({hint})}", "bad-size"),
]


@pytest.mark.parametrize(("message", "slug"), SLUG_CASES)
def test_base_slug(message, slug):
    assert base_slug(message, RID) == slug


def test_slug_is_cut_at_a_word_boundary_within_the_limit():
    message = "tensor parallel size must divide the number of attention heads evenly"
    slug = base_slug(message, RID)
    assert slug == "tensor-parallel-size-must-divide-the-number-of"
    assert len(slug) <= SLUG_MAX


def test_equal_slugs_get_suffixes_in_id_order():
    assert slugs({"bbbb": "bad mode", "aaaa": "bad mode", "cccc": "bad mode"}) == {
        "bbbb": "bad-mode-2",
        "aaaa": "bad-mode",
        "cccc": "bad-mode-3",
    }


def test_a_suffix_never_takes_another_message_s_slug():
    assert slugs({"aaaa": "retry", "bbbb": "retry", "cccc": "retry 2"}) == {
        "aaaa": "retry",
        "bbbb": "retry-3",
        "cccc": "retry-2",
    }


def test_suffixed_slug_stays_within_the_limit():
    long = "word " * 20
    result = slugs({"aaaa": long, "bbbb": long})
    assert result["aaaa"] == "-".join(["word"] * 10)
    assert result["bbbb"] == "-".join(["word"] * 9) + "-2"
    assert all(len(slug) <= SLUG_MAX for slug in result.values())


def test_slug_of_a_message_built_from_parts_has_the_words_of_its_pieces():
    built = make_site("{?tp must be positive}{?; pp needs spec}", status="partial")
    built = built.model_copy(update={"messageFragments": ["tp must be positive", "pp needs spec"]})
    ((rid, slug),) = identities([built])
    assert (rid, slug) == (record_id(built), "tp-must-be-positive-pp-needs-spec")
