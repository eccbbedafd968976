"""`--scope validators|all`: the raises outside validators as sites of kind `none`, the same ids
and records for validator sites in both scopes, caches kept apart, and explainers that do not
take such an error for a configuration error."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from extractors.facts import Rules
from extractors.sites import extract_file
from pipeline.cli import main
from pipeline.console import Console
from pipeline.dataset.reader import load_dataset
from pipeline.explainers.base import ExplainRequest
from pipeline.explainers.llm import LLMExplainer
from pipeline.explainers.offline import OfflineExplainer
from pipeline.explainers.offline.explainer import explain_site
from pipeline.keys import identities
from pipeline.mine.config import ConfigError, load_config
from pipeline.mine.enrich import by_key
from pipeline.mine.targets import run_targets
from tests.outside_repos import SERVE_FILES, SERVE_REPO, make_outside_repos
from tests.site_factory import make_site

REGISTRY = SERVE_FILES["serve/models/registry.py"]
SCHEDULER = SERVE_FILES["serve/config/scheduler.py"]
VERSION = "2026-01-01T00:00:00.000Z"


def _sites(text: str, scope: str) -> list[tuple[str, str, str]]:
    extraction = extract_file("m.py", text, Rules(scope=scope))
    assert extraction.skipped is None
    return [(s.qualname, s.validatorKind, s.errorMessage) for s in extraction.sites]


# -- the extractor -------------------------------------------------------------------------


def test_the_all_scope_takes_every_raise_of_an_error_class_with_kind_none():
    assert _sites(REGISTRY, "all") == [
        (
            "_ModelRegistry.register_model",
            "none",
            "Model architecture {model_arch} is already registered",
        ),
        (
            "_ModelRegistry._raise_for_unsupported",
            "none",
            "Model architectures {architectures} are not supported for now. Supported "
            "architectures: {all_supported_archs}",
        ),
        ("_ModelRegistry.resolve_model_cls", "none", "No model architectures are specified"),
    ]
    assert _sites(REGISTRY, "validators") == []


def test_a_validator_keeps_its_kind_in_the_all_scope():
    text = SCHEDULER + "\n\ndef load(path):\n    raise ValueError(f'no weights in {path}')\n"
    validators = _sites(text, "validators")
    assert [kind for _, kind, _ in validators] == ["post_init", "post_init"]
    assert _sites(text, "all") == [*validators, ("load", "none", "no weights in {path}")]


def test_the_repository_s_subclasses_of_valueerror_count_in_any_function():
    hf_config = SERVE_FILES["serve/transformers_utils/config.py"]
    assert [(q, c) for q, c, _ in _sites(hf_config, "all")] == [("get_config", "none")] * 3
    sites = extract_file("m.py", hf_config, Rules(scope="all")).sites
    assert sites[0].errorClass == "ModelNotFoundError"


def test_the_default_scope_keeps_the_cache_token_it_had_before_scopes():
    before = Rules().model_dump_json(exclude={"scope"})
    assert Rules().cache_token() == before
    assert Rules(scope="all").cache_token() != before


def test_sites_outside_validators_take_their_slugs_after_the_validators():
    validator = make_site("bad mode", qualname="Config.__post_init__")
    outside = make_site("bad mode", qualname="load").model_copy(update={"validatorKind": "none"})
    alone = dict(identities([validator]))
    both = dict(identities([outside, validator]))
    assert both[next(iter(alone))] == "bad-mode"
    assert sorted(both.values()) == ["bad-mode", "bad-mode-2"]


# -- run and extract -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def repos(tmp_path_factory) -> dict[str, Path]:
    return make_outside_repos(tmp_path_factory.mktemp("repos"))


def _run(repo: Path, out: Path, cache: Path, *scope: str) -> Path:
    args = ["run", str(repo), "--repo-name", SERVE_REPO, "-o", str(out), "--llm", "offline"]
    args += ["--cache-dir", str(cache), "--dataset-version", VERSION, *scope]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    [manifest] = out.rglob("manifest.json")
    return manifest.parent


def test_a_validator_record_is_the_same_file_in_both_scopes(repos, tmp_path):
    cache = tmp_path / "cache"
    # the same cache for both: a scope's analyses must not answer for the other's
    narrow = _run(repos[SERVE_REPO], tmp_path / "v", cache)
    wide = _run(repos[SERVE_REPO], tmp_path / "a", cache, "--scope", "all")
    narrow_set, wide_set = load_dataset(narrow), load_dataset(wide)
    assert (narrow_set.manifest.scope, wide_set.manifest.scope) == ("validators", "all")
    versions = (narrow_set.manifest.llm.promptVersion, wide_set.manifest.llm.promptVersion)
    assert versions == ("offline-13", "offline-13, offline-13; outside-1")
    kinds = {entry.validatorKind for entry in narrow_set.entries}
    assert kinds == {"post_init"}
    assert len(wide_set.entries) == 22
    assert {e.id for e in narrow_set.entries} < {e.id for e in wide_set.entries}
    for entry in narrow_set.entries:
        name = f"records/{entry.id}.json"
        assert (wide / name).read_bytes() == (narrow / name).read_bytes()
    by_id = {entry.id: entry for entry in wide_set.entries}
    assert all(by_id[e.id] == e for e in narrow_set.entries)
    outside = [e for e in wide_set.entries if e.validatorKind == "none"]
    assert len(outside) == 20
    # a validators run after the all run gets the validator sites only, from the same cache
    again = _run(repos[SERVE_REPO], tmp_path / "v2", cache)
    assert load_dataset(again).entries == narrow_set.entries


def test_extract_prints_the_sites_outside_validators_with_the_all_scope(repos, tmp_path):
    args = ["extract", str(repos[SERVE_REPO]), "--repo-name", SERVE_REPO]
    args += ["--cache-dir", str(tmp_path / "cache")]
    narrow = CliRunner().invoke(main, args)
    wide = CliRunner().invoke(main, [*args, "--scope", "all"])
    assert (narrow.exit_code, wide.exit_code) == (0, 0)
    kinds = [json.loads(line)["validatorKind"] for line in wide.stdout.splitlines()]
    assert kinds.count("none") == 20 and len(kinds) == 22
    assert narrow.stdout.splitlines() == [
        line for line in wide.stdout.splitlines() if '"validatorKind":"none"' not in line
    ]


def test_diff_extracts_in_the_scope_given_and_warns_of_two_scopes(repos, tmp_path):
    cache = tmp_path / "cache"
    narrow = _run(repos[SERVE_REPO], tmp_path / "v", cache)
    runner = CliRunner()
    spec = f"{repos[SERVE_REPO]}@main"
    base = ["diff", str(narrow), spec, "--cache-dir", str(cache)]
    same = runner.invoke(main, base)
    wide = runner.invoke(main, [*base, "--scope", "all", "--format", "json"])
    assert (same.exit_code, wide.exit_code) == (0, 0)
    assert "warning" not in same.stderr
    assert same.stdout.splitlines()[-1].endswith("2 unchanged")
    assert [line for line in wide.stderr.splitlines() if "warning" in line] == [
        "warning: OLD holds the validators scope and NEW the all scope: the errors outside "
        "validators in NEW show as added (pass --scope, or mine both sides in one scope)"
    ]
    assert json.loads(wide.stdout)["counts"]["added"] == 20


def test_pipeline_toml_takes_a_scope(tmp_path):
    path = tmp_path / "pipeline.toml"
    path.write_text('scope = "all"\n[targets.serve]\nrepo = "acme/serve"\n')
    assert load_config(path).scope == "all"
    calls = []
    run_targets(
        path,
        [],
        {},
        Console("plain", io.StringIO()),
        runner=lambda options, console: calls.append(options) or _Done(),
    )
    assert [options.scope for options in calls] == ["all"]
    path.write_text('scope = "some"\n[targets.serve]\nrepo = "acme/serve"\n')
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value) == "pipeline.toml: scope: expected 'validators' or 'all', got 'some'"


def test_a_target_scope_beats_the_file_s_and_loses_to_the_command_line(tmp_path):
    path = tmp_path / "pipeline.toml"
    path.write_text(
        'scope = "all"\n'
        '[targets.serve]\nrepo = "acme/serve"\nscope = "validators"\n'
        '[targets.fastgen]\nrepo = "acme/fastgen"\n'
    )

    def scopes(overrides: dict) -> list[str]:
        calls = []
        run_targets(
            path,
            [],
            overrides,
            Console("plain", io.StringIO()),
            runner=lambda options, console: calls.append(options) or _Done(),
        )
        return [options.scope for options in calls]

    assert scopes({}) == ["validators", "all"]
    assert scopes({"scope": "all"}) == ["all", "all"]
    path.write_text('[targets.serve]\nrepo = "acme/serve"\nscope = "every"\n')
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert "targets.serve.scope: expected 'validators' or 'all', got 'every'" in str(caught.value)


class _Done:
    exit_code, dataset_dir, manifest = 0, None, None


# -- explainers ----------------------------------------------------------------------------


def _outside_site():
    return make_site(
        "Cannot find any model weights with `{model_name_or_path}`",
        qualname="download_weights_from_hub",
        guards=("not files",),
    ).model_copy(update={"validatorKind": "none"})


def test_the_offline_explainer_does_not_take_an_outside_site_for_a_setting():
    explanation = explain_site(_outside_site())
    assert explanation.documentation.startswith(
        "Raised by download_weights_from_hub, a function, when files is not set. This raise is not "
        "in a configuration check: a ValueError here may come from a programming error"
    )
    assert explanation.handlingStrategy == "fail-fast"
    assert explanation.solutions[-1].startswith(
        "Follow the traceback to the call of download_weights_from_hub"
    )
    validator = explain_site(make_site())
    assert "configuration check" not in validator.documentation
    assert validator.handlingStrategy == "validation"


def test_explainers_key_outside_sites_by_their_own_prompt_version():
    offline, llm = OfflineExplainer(), LLMExplainer("m", "http://127.0.0.1:9/v1", "k")
    site, validator = _outside_site(), make_site()
    assert offline.prompt_version_for(validator) == "offline-13"
    assert offline.prompt_version_for(site) == "offline-13; outside-1"
    assert llm.prompt_version_for(validator) == "explain-v5"
    assert llm.prompt_version_for(site) == "explain-outside-v1"
    # the same raise, reached from a validator or not, is explained and cached apart
    reached = site.model_copy(update={"validatorKind": "reached"})
    for explainer in (offline, llm):
        assert len(by_key([site, reached], explainer)) == 2


def test_the_llm_is_told_that_an_outside_site_need_not_be_a_configuration_error(fake_llm):
    explainer = LLMExplainer("fake-model", fake_llm.base_url, "test", 1, timeout=5.0)

    async def both():
        try:
            for site in (_outside_site(), make_site()):
                await explainer.explain(ExplainRequest(site))
        finally:
            await explainer.aclose()

    asyncio.run(both())
    outside, validator = [request.messages[0]["content"] for request in fake_llm.requests]
    assert "OUTSIDE its\nconfiguration validators" in outside
    assert "Such an error is not necessarily a configuration error." in outside
    assert "a `raise` inside a validator function" in validator
