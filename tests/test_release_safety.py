"""`pypi:` releases are hostile input: mining one runs none of its code, unpacks nothing,
writes nothing outside the cache, and reads its archives within bounds (issue 17)."""

from __future__ import annotations

import io
import json
import os
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from packaging.tags import Tag

from pipeline.cli import main
from pipeline.source import SourceError, open_source
from pipeline.source.archives import ArchiveLimits, kept_by_name, read_archive
from pipeline.source.pip_index import PipSettings, pip_config, pip_config_list, settings_from
from pipeline.source.release import pip_wheel_command
from pipeline.source.simple_api import JSON_TYPE, IndexFile, parse_page, pick_sdist, pick_wheel
from tests.release_fixtures import BACKEND, LIMITS, make_sdist, make_wheel, marker_script
from tests.simple_index import SimpleIndex

SETUP_PY = "from setuptools import setup\n\nsetup(name='evilpkg', version='1.0')\n"
PACKAGE = {"evilpkg/__init__.py": "", "evilpkg/limits.py": LIMITS}


def _evil_release(folder: Path, marker: Path, kind: str, with_wheel: bool) -> None:
    """evilpkg 1.0, whose setup.py or build backend leaves `marker` when anything runs it."""
    script = marker_script(marker)
    if kind == "setup.py":
        make_sdist(folder, "evilpkg", "1.0", {**PACKAGE, "setup.py": script + SETUP_PY}, None)
    else:
        make_sdist(folder, "evilpkg", "1.0", PACKAGE, script + BACKEND)
    if with_wheel:
        make_wheel(folder, "evilpkg", "1.0", {"evilpkg/limits.py": LIMITS.encode()})


def _extract(tmp_path: Path, spec: str = "pypi:evilpkg==1.0", *args: str):
    return CliRunner().invoke(
        main,
        [
            "extract",
            spec,
            "--repo-name",
            "acme/evil",
            "--cache-dir",
            str(tmp_path / "cache"),
            *args,
        ],
    )


def _error_line(result) -> str:
    """The one `Error:` line of a failed command (progress lines may come before it)."""
    assert "Traceback" not in result.stderr
    (line,) = [ln for ln in result.stderr.splitlines() if ln.startswith("Error: ")]
    return line


@pytest.mark.parametrize("with_wheel", [False, True], ids=["sdist only", "wheel beside"])
@pytest.mark.parametrize("kind", ["setup.py", "build backend"])
def test_mining_a_release_runs_none_of_its_code(
    index: Path, tmp_path: Path, kind: str, with_wheel: bool
) -> None:
    marker = tmp_path / "marker"
    _evil_release(index, marker, kind, with_wheel)
    result = _extract(tmp_path)
    assert result.exit_code == 0, result.stderr
    assert not marker.exists()
    assert json.loads(result.stdout)["filePath"] == "evilpkg/limits.py"


def test_diff_of_two_releases_runs_none_of_their_code(index: Path, tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    _evil_release(index, marker, "build backend", with_wheel=False)
    script = marker_script(marker)
    make_sdist(index, "evilpkg", "1.1", PACKAGE, script + BACKEND)
    result = CliRunner().invoke(
        main,
        ["diff", "pypi:evilpkg==1.0", "pypi:evilpkg==1.1", "--cache-dir", str(tmp_path / "c")],
    )
    assert result.exit_code == 0, result.stderr
    assert not marker.exists()


def test_pip_is_only_ever_asked_for_wheels(tmp_path: Path) -> None:
    # Whatever pip's version, it builds and unpacks nothing when it may take only wheels.
    command = pip_wheel_command("evilpkg", "1.0", tmp_path)
    assert "--only-binary=:all:" in command and "--no-deps" in command
    assert not any(arg.startswith(("--no-binary", "--no-build-isolation")) for arg in command)


# --- the sdist comes from the index pip is configured with ----------------------------------


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A local simple index (JSON and HTML), the only index pip and vmine see."""

    def start(html_only: bool = False, pip_only: bool = False) -> SimpleIndex:
        folder = tmp_path / "served"
        folder.mkdir(exist_ok=True)
        server = SimpleIndex(folder, html_only=html_only, pip_only=pip_only)
        monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
        monkeypatch.delenv("PIP_NO_INDEX", raising=False)
        monkeypatch.delenv("PIP_FIND_LINKS", raising=False)
        monkeypatch.delenv("PIP_EXTRA_INDEX_URL", raising=False)
        return server

    return start


@pytest.mark.parametrize(
    ("html_only", "with_wheel"),
    [(False, False), (True, True)],
    ids=["PEP 691 JSON, sdist only", "PEP 503 HTML, wheel beside"],
)
def test_the_sdist_is_fetched_from_the_configured_index_hash_checked(
    served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, html_only: bool, with_wheel: bool
) -> None:
    marker = tmp_path / "marker"
    with served(html_only) as index:
        _evil_release(index.folder, marker, "build backend", with_wheel)
        monkeypatch.setenv("PIP_INDEX_URL", index.url)
        result = _extract(tmp_path)
    assert result.exit_code == 0, result.stderr
    assert not marker.exists()
    assert "/files/evilpkg-1.0.tar.gz" in index.requests
    snap = open_source("pypi:evilpkg==1.0", None, repo_name=None, cache_dir=tmp_path / "cache")
    if not with_wheel:
        assert "tinybackend.py" in [f.path for f in snap.files]


def test_an_sdist_whose_hash_differs_from_the_index_is_refused(
    served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with served() as index:
        _evil_release(index.folder, tmp_path / "marker", "build backend", with_wheel=False)
        index.bad_hash.add("evilpkg-1.0.tar.gz")
        monkeypatch.setenv("PIP_INDEX_URL", index.url)
        result = _extract(tmp_path)
    assert result.exit_code == 2
    line = _error_line(result)
    assert line.startswith("Error: evilpkg-1.0.tar.gz from http://127.0.0.1:")
    assert line.endswith(f"the index lists {'0' * 64}; refusing it")
    assert not (tmp_path / "cache" / "releases" / "evilpkg.git").exists()


def test_the_wheel_is_fetched_from_the_index_by_vmine_not_pip(
    served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with served() as index:
        _evil_release(index.folder, tmp_path / "marker", "build backend", with_wheel=True)
        monkeypatch.setenv("PIP_INDEX_URL", index.url)
        result = _extract(tmp_path)
    assert result.exit_code == 0, result.stderr
    assert "/files/evilpkg-1.0-py3-none-any.whl" in index.requests
    assert not [agent for agent in index.agents if agent.startswith("pip/")]
    assert json.loads(result.stdout)["filePath"] == "evilpkg/limits.py"


def test_a_wheel_whose_hash_differs_from_the_index_is_refused(
    served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with served() as index:
        _evil_release(index.folder, tmp_path / "marker", "build backend", with_wheel=True)
        index.bad_hash.add("evilpkg-1.0-py3-none-any.whl")
        monkeypatch.setenv("PIP_INDEX_URL", index.url)
        result = _extract(tmp_path)
    assert result.exit_code == 2
    line = _error_line(result)
    assert line.startswith("Error: evilpkg-1.0-py3-none-any.whl from http://127.0.0.1:")
    assert line.endswith("; refusing it")
    assert not (tmp_path / "cache" / "releases" / "evilpkg.git").exists()


def test_pip_fetches_the_wheel_from_an_index_vmine_cannot_read(
    served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "marker"
    with served(pip_only=True) as index:
        _evil_release(index.folder, marker, "build backend", with_wheel=True)
        monkeypatch.setenv("PIP_INDEX_URL", index.url)
        result = _extract(tmp_path)
    assert result.exit_code == 0, result.stderr
    assert not marker.exists()
    assert any(agent.startswith("pip/") for agent in index.agents)
    assert json.loads(result.stdout)["filePath"] == "evilpkg/limits.py"


def test_a_release_pip_cannot_find_either_names_both_reasons(
    served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with served(pip_only=True) as index:
        monkeypatch.setenv("PIP_INDEX_URL", index.url)
        result = _extract(tmp_path)
    assert result.exit_code == 2
    line = _error_line(result)
    assert line.startswith("Error: cannot download evilpkg==1.0: pip found no wheel (")
    assert line.endswith(
        f"and no sdist of evilpkg==1.0 in {index.url} ({index.url}evilpkg/: HTTP 403)"
    )


def test_an_index_on_the_network_cannot_point_at_a_file_on_this_machine(
    served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    local = make_sdist(tmp_path / "here", "evilpkg", "1.0", PACKAGE, BACKEND)
    with served(html_only=True) as index:
        index.extra_links.append(local.as_uri())
        monkeypatch.setenv("PIP_INDEX_URL", index.url)
        result = _extract(tmp_path)
    assert result.exit_code == 2
    assert "and no sdist of evilpkg==1.0 in http://127.0.0.1:" in _error_line(result)


def test_find_links_of_a_pip_conf_file_are_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "wheelhouse"
    make_sdist(folder, "evilpkg", "1.0", PACKAGE, marker_script(tmp_path / "marker") + BACKEND)
    conf = tmp_path / "pip.conf"
    conf.write_text(
        f"[global]\nno-index = true\nfind-links =\n    {tmp_path / 'none'}\n    {folder}\n"
    )
    monkeypatch.setenv("PIP_CONFIG_FILE", str(conf))
    for name in ("PIP_NO_INDEX", "PIP_FIND_LINKS", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL"):
        monkeypatch.delenv(name, raising=False)
    result = _extract(tmp_path)
    assert result.exit_code == 0, result.stderr
    assert not (tmp_path / "marker").exists()


def test_a_release_nowhere_to_be_found_says_where_it_looked(index: Path, tmp_path: Path) -> None:
    result = _extract(tmp_path, "pypi:nothere==1.0")
    assert result.exit_code == 2
    line = _error_line(result)
    assert line.startswith(
        f"Error: cannot download nothere==1.0: no wheel of nothere==1.0 in {index},"
    )
    assert line.endswith(f"and no sdist of nothere==1.0 in {index}")


# --- nothing is unpacked: links are never followed -----------------------------------------


@pytest.mark.parametrize("with_wheel", [False, True], ids=["sdist only", "wheel beside"])
def test_an_sdist_with_a_symlinked_folder_writes_nothing_outside_the_cache(
    index: Path, tmp_path: Path, with_wheel: bool
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    files = {**PACKAGE, "escape/planted.py": "planted = True\n", "up/x.py": "x = 1\n"}
    make_sdist(index, "evilpkg", "1.0", files, links={"escape": str(outside), "up": "../.."})
    if with_wheel:
        make_wheel(index, "evilpkg", "1.0", {"evilpkg/limits.py": LIMITS.encode()})
    result = _extract(tmp_path)
    assert result.exit_code == 0, result.stderr
    assert list(outside.iterdir()) == []
    assert not (tmp_path / "planted.py").exists() and not (tmp_path / "x.py").exists()
    snap = open_source("pypi:evilpkg==1.0", None, repo_name=None, cache_dir=tmp_path / "cache")
    paths = [f.path for f in snap.files]
    assert "escape/planted.py" not in paths and "up/x.py" not in paths
    assert "evilpkg/limits.py" in paths


# --- archives are read by name, as streams, within bounds -----------------------------------


# (case, member name, kept)
NAMES = [
    ("a Python source", "pkg/limits.py", True),
    ("a stub", "pkg/limits.pyi", True),
    ("an sdist's metadata", "PKG-INFO", True),
    ("a wheel's metadata", "pkg-1.0.dist-info/METADATA", True),
    ("pyproject", "pyproject.toml", True),
    ("a compiled library", "pkg/_C.cpython-311-x86_64-linux-gnu.so", False),
    ("a RECORD of hashes", "pkg-1.0.dist-info/RECORD", False),
    ("model weights", "pkg/data/model.bin", False),
    ("a JSON blob", "pkg/configs/E=64,N=1408.json", False),
]


@pytest.mark.parametrize(
    ("name", "kept"), [case[1:] for case in NAMES], ids=[case[0] for case in NAMES]
)
def test_members_are_chosen_by_name_before_reading(name: str, kept: bool) -> None:
    assert kept_by_name(name) is kept


def _corrupt_zip(path: Path, members: dict[str, bytes], corrupt: set[str]) -> Path:
    """A wheel whose `corrupt` members' compressed data is garbage: reading one fails."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    raw = bytearray(path.read_bytes())
    with zipfile.ZipFile(io.BytesIO(bytes(raw))) as zf:
        for info in zf.infolist():
            if info.filename in corrupt:
                start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
                raw[start : start + info.compress_size] = b"\xff" * info.compress_size
    path.write_bytes(bytes(raw))
    return path


def test_a_compiled_library_and_an_oversized_file_are_never_read(tmp_path: Path) -> None:
    wheel = _corrupt_zip(
        tmp_path / "pkg-1.0-py3-none-any.whl",
        {
            "pkg/limits.py": LIMITS.encode(),
            "pkg/_C.so": b"\x7fELF" + b"\0" * 100_000,
            "pkg/huge.py": b"x = 1\n" * 200_000,
        },
        corrupt={"pkg/_C.so", "pkg/huge.py"},
    )
    found = read_archive(wheel, ArchiveLimits(file=2**20))
    assert list(found.files) == ["pkg/limits.py"]
    assert found.left_out == [("pkg/huge.py", "over 1 MiB")]


def _declare_size(raw: bytearray, name: str, size: int) -> None:
    """Patch the size member `name` declares, in its local and its central header."""
    encoded = name.encode()
    for signature, name_at, size_at in ((b"PK\x03\x04", 30, 22), (b"PK\x01\x02", 46, 24)):
        at = raw.find(signature)
        while at != -1:
            if raw[at + name_at : at + name_at + len(encoded)] == encoded:
                raw[at + size_at : at + size_at + 4] = size.to_bytes(4, "little")
            at = raw.find(signature, at + 4)


def test_a_member_that_lies_about_its_size_is_left_out(tmp_path: Path) -> None:
    path = tmp_path / "pkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("pkg/limits.py", LIMITS)
        zf.writestr("pkg/bomb.py", b"#" * 5_000_000)  # unpacks to 5 MB, declares 100 bytes
    raw = bytearray(path.read_bytes())
    _declare_size(raw, "pkg/bomb.py", 100)
    path.write_bytes(bytes(raw))
    found = read_archive(path)
    assert list(found.files) == ["pkg/limits.py"]
    assert [(name, reason.split(" (")[0]) for name, reason in found.left_out] == [
        ("pkg/bomb.py", "damaged")
    ]


def test_the_text_kept_of_one_release_is_capped(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path, "pkg", "1.0", {f"pkg/m{n}.py": b"x = 1\n" * 200 for n in range(5)})
    with pytest.raises(SourceError) as info:
        read_archive(wheel, ArchiveLimits(total=4 * 1200 + 100))
    assert str(info.value) == (
        "pkg-1.0-py3-none-any.whl holds more than 4,900 bytes of text files; vmine keeps at most "
        "that of one release"
    )


def test_a_damaged_sdist_is_refused_in_one_line(index: Path, tmp_path: Path) -> None:
    (index / "evilpkg-1.0.tar.gz").write_bytes(b"\x1f\x8b\x08 not really gzip")
    result = _extract(tmp_path)
    assert result.exit_code == 2
    assert _error_line(result).startswith("Error: evilpkg-1.0.tar.gz is damaged: ")


def test_a_damaged_wheel_is_refused(tmp_path: Path) -> None:
    wheel = tmp_path / "pkg-1.0-py3-none-any.whl"
    wheel.write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(SourceError, match=r"^pkg-1.0-py3-none-any.whl is damaged: "):
        read_archive(wheel)


# --- one cache entry per release -------------------------------------------------------------


def test_two_releases_never_share_a_cache_entry(index: Path, tmp_path: Path) -> None:
    # `hx-col` 1-1 (1.post1) and `hx-col-1` 1: the same name and version joined by a dash
    make_wheel(
        index,
        "hx_col",
        "1.post1",
        {"hx_col/limits.py": LIMITS.encode()},
        "Project-URL: Source, https://github.com/first/hx-col\n",
    )
    make_wheel(
        index,
        "hx_col_1",
        "1",
        {"hx_col_1/limits.py": LIMITS.encode()},
        "Project-URL: Source, https://github.com/second/hx-col-1\n",
    )
    cache = tmp_path / "cache"
    first = open_source("pypi:hx-col==1-1", None, repo_name=None, cache_dir=cache)
    second = open_source("pypi:hx-col-1==1", None, repo_name=None, cache_dir=cache)
    again = open_source("pypi:hx-col==1-1", None, repo_name=None, cache_dir=cache)
    assert (first.repo, second.repo, again.repo) == (
        "first/hx-col",
        "second/hx-col-1",
        "first/hx-col",
    )


# --- pip's settings and the simple API, as pure functions -----------------------------------


def test_pip_settings_take_pips_precedence() -> None:
    config = {
        "global.index-url": "https://global.example/simple",
        "global.find-links": "/global/a /global/b",
        "download.index-url": "https://download.example/simple",
        "install.index-url": "https://install.example/simple",  # not pip download's
        "global.no-index": "false",
        "global.timeout": "60",
    }
    settings = settings_from(config, {"PIP_FIND_LINKS": "/env/only", "PIP_NO_INDEX": "yes"})
    assert settings == PipSettings(
        index_url="https://download.example/simple",
        find_links=("/env/only",),
        no_index=True,
        timeout=60.0,
    )
    assert settings.indexes() == ()
    # an empty value is no value, in a file or the environment, as pip has it
    empty = settings_from(
        {"global.index-url": "https://g.example/simple", "download.index-url": ""},
        {"PIP_INDEX_URL": "", "PIP_FIND_LINKS": ""},
    )
    assert empty == PipSettings(index_url="https://g.example/simple")
    assert settings_from({}, {"PIP_EXTRA_INDEX_URL": "file:///a\n  file:///b"}).indexes() == (
        "https://pypi.org/simple",
        "file:///a",
        "file:///b",
    )


@pytest.mark.parametrize(
    "env_file", ["env.conf", os.devnull, "broken.conf"], ids=["PIP_CONFIG_FILE", "null", "broken"]
)
def test_pip_config_file_of_the_environment_is_read_as_pip_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, env_file: str
) -> None:
    (tmp_path / "env.conf").write_text("[download]\nindex-url = https://env.example/simple\n")
    (tmp_path / "broken.conf").write_text("index-url = https://no.section.example\n")
    monkeypatch.setenv("PIP_CONFIG_FILE", str(tmp_path / env_file))
    config = pip_config()
    assert config == pip_config_list()
    assert config.get("download.index-url") == (
        "https://env.example/simple" if env_file == "env.conf" else None
    )


@pytest.mark.parametrize("with_env_file", [False, True], ids=["user files", "PIP_CONFIG_FILE"])
def test_pips_config_files_are_read_as_pip_reads_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, with_env_file: bool
) -> None:
    home = tmp_path / "home"
    (home / ".pip").mkdir(parents=True)
    (home / ".config" / "pip").mkdir(parents=True)
    (home / ".pip" / "pip.conf").write_text(
        "[global]\nindex-url = https://legacy.example/simple\ntimeout = 10\n"
    )
    (home / ".config" / "pip" / "pip.conf").write_text(
        "[global]\nindex_url = https://user.example/simple\n"
        "[download]\nfind-links =\n    /a\n    /b\n"
    )
    env_file = tmp_path / "env.conf"
    env_file.write_text("[global]\ntrusted-host = mirror.example\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    if with_env_file:
        monkeypatch.setenv("PIP_CONFIG_FILE", str(env_file))  # pip then skips the user's files
    else:
        monkeypatch.delenv("PIP_CONFIG_FILE", raising=False)
    config = pip_config()
    listed = pip_config_list()  # the same values, one file's after another's, by file name
    if not with_env_file:
        # both user files set the index: pip takes the new file's over the legacy one's
        assert config.pop("global.index-url") == "https://user.example/simple"
        assert listed.pop("global.index-url") == "https://legacy.example/simple"
    assert config == listed
    assert ("global.trusted-host" in config) is with_env_file
    assert ("download.find-links" in config) is not with_env_file


# (case, file name, is the sdist of acme-ports 1.post1)
SDIST_NAMES = [
    ("PEP 625 name", "acme_ports-1.post1.tar.gz", True),
    ("a legacy name with dashes", "Acme-Ports-1.post1.zip", True),
    ("the same version spelt another way", "acme.ports-1-1.tar.gz", True),
    ("another version", "acme_ports-1.0.tar.gz", False),
    ("another project whose name continues", "acme_ports_extra-1.post1.tar.gz", False),
    ("a wheel", "acme_ports-1.post1-py3-none-any.whl", False),
]


@pytest.mark.parametrize(
    ("filename", "wanted"),
    [case[1:] for case in SDIST_NAMES],
    ids=[case[0] for case in SDIST_NAMES],
)
def test_the_sdist_of_a_release_is_known_by_its_file_name(filename: str, wanted: bool) -> None:
    found = pick_sdist(
        [IndexFile(filename, f"https://files.example/{filename}")], "acme-ports", "1-1"
    )
    assert (found is not None) is wanted


# The interpreter's tags, best first, for the wheel table: an x86_64 Linux CPython 3.11.
SUPPORTED = [
    Tag("cp311", "cp311", "manylinux_2_17_x86_64"),
    Tag("cp38", "abi3", "manylinux_2_17_x86_64"),
    Tag("py3", "none", "any"),
]
LINUX = "acme_ports-1.post1-cp38-abi3-manylinux_2_17_x86_64.whl"
MAC = "acme_ports-1.post1-cp38-abi3-macosx_11_0_arm64.whl"
PURE = "acme_ports-1.post1-py3-none-any.whl"

# (case, the files an index lists in search order, (file name, yanked), the wheel chosen)
WHEEL_CHOICES = [
    ("this platform's wheel, as pip would choose", [(PURE, False), (LINUX, False)], LINUX),
    ("a pure wheel before another platform's", [(MAC, False), (PURE, False)], PURE),
    ("another platform's wheel when it is all there is", [(MAC, False)], MAC),
    ("a wheel that is not yanked before one that is", [(LINUX, True), (MAC, False)], MAC),
    ("a yanked wheel when it is all there is", [(PURE, True)], PURE),
    (
        "the higher build number",
        [(PURE, False), ("acme_ports-1.post1-2-py3-none-any.whl", False)],
        "acme_ports-1.post1-2-py3-none-any.whl",
    ),
    ("the first found of equals", [(PURE, False), (PURE.replace("_", "."), False)], PURE),
    (
        "the name spelt another way",
        [("Acme_Ports-1.post1-py3-none-any.whl", False)],
        "Acme_Ports-1.post1-py3-none-any.whl",
    ),
    (
        "another version or project, an sdist",
        [
            ("acme_ports-1.0-py3-none-any.whl", False),
            ("acme_ports_x-1.post1-py3-none-any.whl", False),
            ("acme_ports-1.post1.tar.gz", False),
            ("acme_ports-1.post1-bad.whl", False),
        ],
        None,
    ),
]


@pytest.mark.parametrize(
    ("listed", "chosen"),
    [case[1:] for case in WHEEL_CHOICES],
    ids=[case[0] for case in WHEEL_CHOICES],
)
def test_the_wheel_of_a_release_is_chosen_as_pip_would(
    listed: list[tuple[str, bool]], chosen: str | None
) -> None:
    files = [
        IndexFile(name, f"https://files.example/{name}", yanked=yanked) for name, yanked in listed
    ]
    found = pick_wheel(files, "acme-ports", "1-1", SUPPORTED)
    assert (found and found.filename) == chosen


def test_simple_pages_give_absolute_urls_hashes_and_yanked_files() -> None:
    html = (
        b'<html><head><base href="https://cdn.example/base/"></head><body>'
        b'<a href="../f/acme-1.0.tar.gz#sha256=ABCD">acme-1.0.tar.gz</a>'
        b'<a href="acme-1.0.zip" data-yanked="">acme-1.0.zip</a></body></html>'
    )
    assert parse_page(html, "text/html", "https://index.example/simple/acme/") == [
        IndexFile(
            "acme-1.0.tar.gz", "https://cdn.example/f/acme-1.0.tar.gz", (("sha256", "abcd"),)
        ),
        IndexFile("acme-1.0.zip", "https://cdn.example/base/acme-1.0.zip", (), yanked=True),
    ]
    page = json.dumps(
        {
            "files": [
                {"filename": "acme-1.0.zip", "url": "../../f/acme-1.0.zip", "hashes": {}},
                {
                    "url": "/f/acme-1.0.tar.gz",
                    "hashes": {"sha256": "ef", "md5": "01"},
                    "yanked": "bad",
                },
                {"filename": "no url"},
            ]
        }
    ).encode()
    files = parse_page(page, JSON_TYPE, "https://index.example/simple/acme/")
    assert files == [
        IndexFile("acme-1.0.zip", "https://index.example/f/acme-1.0.zip"),
        IndexFile(
            "acme-1.0.tar.gz",
            "https://index.example/f/acme-1.0.tar.gz",
            (("sha256", "ef"), ("md5", "01")),
            yanked=True,
        ),
    ]
    # a file that is not yanked wins; then .tar.gz over .zip
    assert pick_sdist(files, "acme", "1.0") == files[0]
    assert pick_sdist([files[1], IndexFile("acme-1.0.zip", "z")], "acme", "1.0").url == "z"
