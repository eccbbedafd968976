"""A release archive (an sdist or a wheel) -> the text files vmine keeps of it, read as
streams within bounds. Nothing is unpacked to disk and no link is followed: `../`, absolute,
symlink and hardlink members are dropped, and so is every member whose path runs through a
link. Which members are read at all is decided by name first (`kept_by_name`), so a
compiled library or a data blob is never read."""

from __future__ import annotations

import tarfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO

from pipeline.source.snapshot import MAX_TEXT_FILE, SourceError

SDIST_SUFFIXES = (".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".tar", ".zip")


@dataclass(frozen=True)
class ArchiveLimits:
    """What one release may cost: each kept file at most `file` bytes (declared and read),
    all kept files together at most `total`, at most `members` members looked at, and a tar
    stream walked (read or skipped, once decompressed) through at most `unpacked` bytes."""

    file: int = MAX_TEXT_FILE
    total: int = 256 * 2**20
    members: int = 200_000
    unpacked: int = 4 * 2**30


DEFAULT_LIMITS = ArchiveLimits()


@dataclass
class ArchiveFiles:
    """The text files kept (posix path -> bytes) and the members that were wanted by name
    but left out, with why (too large, damaged, not text)."""

    files: dict[str, bytes] = field(default_factory=dict)
    left_out: list[tuple[str, str]] = field(default_factory=list)


# Which members are read, by name. Python sources, and the text vmine uses besides them:
# the distribution's metadata (where its GitHub repository is named) and the project's
# text configuration and documentation (grounding looks a flag up in every file).
# fmt: off
KEPT_SUFFIXES = (
    ".py", ".pyi",                  # the code
    ".toml", ".cfg",                # pyproject.toml, setup.cfg
    ".md", ".rst", ".txt",          # documentation, entry_points.txt, requirements
)
KEPT_NAMES = (
    "PKG-INFO",                     # an sdist's metadata
    "METADATA", "WHEEL",            # a wheel's (*.dist-info/)
)
# fmt: on


def shown_size(size: int) -> str:
    """`4 MiB`, `2 GiB`, or `4,900 bytes` for a size that is no whole MiB."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size:,} bytes"


def kept_by_name(path: str) -> bool:
    """Whether a member is worth reading: see KEPT_SUFFIXES and KEPT_NAMES (a `.so`, a
    model file, a RECORD of hashes are not)."""
    name = path.rsplit("/", 1)[-1]
    return name in KEPT_NAMES or name.endswith(KEPT_SUFFIXES)


def safe_path(name: str) -> str | None:
    """A member's name as a relative posix path, or None for one that climbs out (`..`),
    is absolute or is empty."""
    path = PurePosixPath(name.replace("\\", "/"))
    if path.is_absolute() or ".." in path.parts or not path.parts:
        return None
    return path.as_posix()


def is_text(path: str, data: bytes) -> bool:
    """A .py file, or other UTF-8 text; never a file holding NUL bytes."""
    if b"\0" in data:
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return path.endswith(".py")  # the parser reports its encoding, as for any repository
    return True


def read_archive(archive: Path, limits: ArchiveLimits = DEFAULT_LIMITS) -> ArchiveFiles:
    """The text files of a wheel or an sdist (an sdist's top folder `NAME-VERSION/` dropped,
    so paths start where the package's tree starts). A SourceError for an archive that is
    damaged or over its limits."""
    found = ArchiveFiles()
    total = 0
    links: set[str] = set()
    for path, kind, size, opener in _members(archive, limits):
        if kind == "link":
            links.add(path)
            continue
        if kind != "file" or not kept_by_name(path):
            continue
        if size > limits.file:
            found.left_out.append((path, f"over {shown_size(limits.file)}"))
            continue
        try:
            assert opener is not None  # every file member has one
            with opener() as stream:
                data = stream.read(limits.file + 1)
        except (zipfile.BadZipFile, zlib.error, EOFError, RuntimeError, NotImplementedError) as exc:
            # a zip member that is encrypted, damaged or lies about its size
            found.left_out.append((path, f"damaged ({_reason(exc)})"))
            continue
        if len(data) != size:
            found.left_out.append((path, f"holds {len(data)} bytes, declares {size}"))
            continue
        if not is_text(path, data):
            found.left_out.append((path, "not text"))
            continue
        total += len(data) - len(found.files.get(path, b""))
        if total > limits.total:
            raise SourceError(
                f"{archive.name} holds more than {shown_size(limits.total)} of text files; "
                "vmine keeps at most that of one release"
            )
        found.files[path] = data
    # A member "through" a symlinked folder would land outside the tree when unpacked.
    for path in [p for p in found.files if _under_link(p, links)]:
        del found.files[path]
        found.left_out.append((path, "inside a linked folder"))
    return found


def archive_paths(archive: Path, limits: ArchiveLimits = DEFAULT_LIMITS) -> list[str]:
    """The paths `read_archive` would consider, without reading any member (an sdist's
    layout, to map a wheel's files onto it)."""
    entries = [(path, kind) for path, kind, _, _ in _members(archive, limits)]
    links = {path for path, kind in entries if kind == "link"}
    return sorted(
        path
        for path, kind in entries
        if kind == "file" and kept_by_name(path) and not _under_link(path, links)
    )


def _under_link(path: str, links: set[str]) -> bool:
    parts = path.split("/")
    return any("/".join(parts[:end]) in links for end in range(1, len(parts)))


Opener = Callable[[], IO[bytes]]
Member = tuple[str, str, int, Opener | None]


def _members(archive: Path, limits: ArchiveLimits) -> Iterator[Member]:
    """(path, kind, declared size, opener) per member: kind is `file`, `link` or `other`
    (a folder, a device); members with unsafe names are left out."""
    name = archive.name
    try:
        if name.endswith(".whl"):
            yield from _zip_members(archive, limits, strip_top=False)
        elif name.endswith(".zip"):
            yield from _zip_members(archive, limits, strip_top=True)
        elif name.endswith(SDIST_SUFFIXES):
            yield from _tar_members(archive, limits)
        else:
            raise SourceError(f"unknown archive type: {name}")
    except (tarfile.TarError, zipfile.BadZipFile, zlib.error, EOFError, OSError) as exc:
        raise SourceError(f"{name} is damaged: {_reason(exc)}") from None


def _reason(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:200]


def _strip(path: str | None, strip_top: bool) -> str | None:
    if path is None or not strip_top:
        return path
    _, _, rest = path.partition("/")
    return rest or None


def _tar_members(archive: Path, limits: ArchiveLimits) -> Iterator[Member]:
    # A stream ("r|*"): members are visited once, in order, and never seeked back to.
    with tarfile.open(archive, mode="r|*") as tar:
        for count, member in enumerate(tar, start=1):
            if count > limits.members:
                raise SourceError(f"{archive.name} holds more than {limits.members:,} members")
            if member.offset_data + member.size > limits.unpacked:
                raise SourceError(
                    f"{archive.name} unpacks to more than {shown_size(limits.unpacked)}"
                )
            tar.members = []  # a stream needs no index of what it passed
            path = _strip(safe_path(member.name), strip_top=True)
            if path is None:
                continue
            if member.issym() or member.islnk():
                yield path, "link", 0, None
            elif member.isfile():
                yield path, "file", member.size, _tar_opener(tar, member)
            else:
                yield path, "other", 0, None


def _tar_opener(tar: tarfile.TarFile, member: tarfile.TarInfo) -> Opener:
    def opener() -> IO[bytes]:
        handle = tar.extractfile(member)
        if handle is None:  # not a regular file after all
            raise RuntimeError("no data")
        return handle

    return opener


def _zip_members(archive: Path, limits: ArchiveLimits, *, strip_top: bool) -> Iterator[Member]:
    with archive.open("rb") as raw:
        entries = _zip_entry_count(raw)
    if entries > limits.members:
        raise SourceError(f"{archive.name} holds more than {limits.members:,} members")
    with zipfile.ZipFile(archive) as zf:
        for info in zf.infolist():
            path = _strip(safe_path(info.filename), strip_top)
            if path is None:
                continue
            mode = info.external_attr >> 16
            if mode & 0o170000 == 0o120000:  # a symlink, as Info-ZIP stores one
                yield path, "link", 0, None
            elif info.is_dir():
                yield path, "other", 0, None
            else:
                yield path, "file", info.file_size, _zip_opener(zf, info)


def _zip_opener(zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> Opener:
    return lambda: zf.open(info)


def _zip_entry_count(handle: IO[bytes]) -> int:
    """How many entries the zip's central directory says it has, read from its end record
    before `ZipFile` builds an object per entry."""
    end = zipfile._EndRecData(handle)  # the stdlib's own reader of that record
    if end is None:
        raise zipfile.BadZipFile("not a zip file")
    return int(end[zipfile._ECD_ENTRIES_TOTAL])
