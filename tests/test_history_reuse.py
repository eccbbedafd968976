"""A history run reuses what earlier releases analysed (the per-blob store, kept open across
the releases): each release must still come out exactly as a cold extract of its tag makes
it, settings included, and an interrupted run must resume from what it stored."""

from __future__ import annotations

import gc
import io
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli import main
from pipeline.console import Console
from pipeline.diff.sides import extract_side
from pipeline.history.command import mine_releases
from tests.git_fixtures import commit, git
from tests.settings_fixture import ENGINE_ARGS, ENGINE_CACHE, FILES

# r2 rewords a check and adds one, moves a config class's file down, and gives the parser a
# new flag; r3 adds an error class another file raises, makes a config field's type an alias
# of another file and drops a check.
ERRORS = '''\
class EngineError(ValueError):
    """An engine setting that cannot work."""
'''
R2_CACHE = ENGINE_CACHE.replace(
    "gpu_memory_utilization must be at most 1", "gpu_memory_utilization must be in (0, 1]"
).replace(
    '            raise ValueError("prefix caching does not support mamba_cache_mode all")\n',
    '            raise ValueError("prefix caching does not support mamba_cache_mode all")\n'
    "        if self.block_size > 512:\n"
    '            raise ValueError(f"block_size {self.block_size} is above 512")\n',
)
R2_ARGS = ENGINE_ARGS.replace(
    "        engine_kwargs = get_kwargs(EngineConfig)\n",
    '        cache_group.add_argument("--swap-block-size", **cache_kwargs["block_size"])\n'
    "        engine_kwargs = get_kwargs(EngineConfig)\n",
)
R3_CACHE = (
    R2_CACHE.replace(
        "from engine.config.utils import config\n",
        "from engine.config.utils import config\nfrom engine.errors import EngineError\n",
    )
    .replace(
        'raise ValueError(f"block_size {self.block_size} is above 512")',
        'raise EngineError(f"block_size {self.block_size} is above 512")',
    )
    .replace(
        "        if self.gpu_memory_utilization > 1:\n"
        '            raise ValueError("gpu_memory_utilization must be in (0, 1]")\n',
        "",
    )
)
RELEASES = {
    "r1": FILES,
    "r2": {
        **FILES,
        "engine/config/cache.py": "\n\n" + R2_CACHE,
        "engine/arg_utils.py": R2_ARGS,
    },
    "r3": {
        **FILES,
        "engine/errors.py": ERRORS,
        "engine/config/cache.py": "\n\n" + R3_CACHE,
        "engine/arg_utils.py": R2_ARGS,
    },
}


@pytest.fixture
def released(tmp_path: Path) -> Path:
    repo = tmp_path / "engine"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    for tag, files in RELEASES.items():
        commit(repo, files, tag)
        git(repo, "tag", tag)
    return repo


def _dumped(errors) -> list[str]:
    return [entry.model_dump_json() for entry in errors.entries] + sorted(errors.urls.items())


def test_each_release_of_a_history_is_its_cold_extract(released, tmp_path):
    mined = mine_releases(str(released), list(RELEASES), cache_dir=tmp_path / "shared")
    # the garbage collector, off and freezing between releases, is as it was
    assert gc.isenabled() and gc.get_freeze_count() == 0
    assert [release.name for release in mined] == list(RELEASES)
    for number, release in enumerate(mined):
        cold = extract_side(
            f"{released}@{release.name}",
            "OLD",
            cache_dir=tmp_path / f"cold-{number}",
            console=None,
        )
        assert _dumped(release.errors) == _dumped(cold)
    # the series really changed between releases, settings included
    settings = [
        {e.errorMessage: [s.model_dump_json() for s in e.settings] for e in r.errors.entries}
        for r in mined
    ]
    assert len({frozenset(found) for found in settings}) == 3
    assert any(entry.errorClass == "EngineError" for entry in mined[-1].errors.entries)


def test_extracts_after_a_history_are_byte_identical_to_cold_ones(released, tmp_path):
    shared = tmp_path / "shared"
    history = ["history", str(released), "--releases", *RELEASES, "--cache-dir", str(shared)]
    assert CliRunner().invoke(main, [*history, "--ci"]).exit_code == 0
    for tag in RELEASES:
        outputs = []
        for cache in (shared, tmp_path / f"cold-{tag}"):
            out = tmp_path / f"{tag}-{cache.name}.jsonl"
            args = ["extract", str(released), "--rev", tag, "--repo-name", "acme/engine"]
            result = CliRunner().invoke(
                main, [*args, "-o", str(out), "--cache-dir", str(cache), "--ci"]
            )
            assert result.exit_code == 0, result.output
            outputs.append(out.read_bytes())
        assert outputs[0] == outputs[1], tag
        assert b"EngineError" in outputs[0] or tag != "r3"


class _Stop(Console):
    """A console that says what it was told, and stops the run (as Ctrl-C would) when a
    line holds `stop_at`."""

    def __init__(self, stop_at: str | None = None) -> None:
        super().__init__("plain", io.StringIO())
        self.stop_at = stop_at

    def line(self, text: str) -> None:
        super().line(text)
        if self.stop_at is not None and self.stop_at in text:
            raise KeyboardInterrupt


def test_an_interrupted_history_resumes_from_what_it_stored(released, tmp_path):
    cache = tmp_path / "cache"
    with pytest.raises(KeyboardInterrupt):
        mine_releases(str(released), list(RELEASES), cache_dir=cache, console=_Stop("(3/3)"))
    console = _Stop()
    resumed = mine_releases(str(released), list(RELEASES), cache_dir=cache, console=console)
    said = console.stream.getvalue()  # type: ignore[attr-defined]
    # the releases done before the interruption cost nothing again; the last one is mined
    assert re.search(r"history: r1: \d+ errors; 0 of \d+ files analysed", said), said
    assert re.search(r"history: r2: \d+ errors; 0 of \d+ files analysed", said), said
    assert not re.search(r"history: r3: \d+ errors; 0 of", said), said
    whole = mine_releases(str(released), list(RELEASES), cache_dir=tmp_path / "whole")
    assert [_dumped(r.errors) for r in resumed] == [_dumped(r.errors) for r in whole]
