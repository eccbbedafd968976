"""The simple repository API as pip reads it, as pure functions: a project page (PEP 691
JSON or PEP 503 HTML) or a find-links listing -> its files, and which files are the wheel
and the sdist of NAME==VERSION."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from html.parser import HTMLParser
from urllib.parse import unquote, urldefrag, urljoin, urlsplit

from packaging.tags import Tag
from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from pipeline.source.archives import SDIST_SUFFIXES

JSON_TYPE = "application/vnd.pypi.simple.v1+json"
# What pip asks an index for: JSON first, HTML for the indexes that only have that.
ACCEPT = f"{JSON_TYPE}, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.01"
# Hashes pip checks, strongest first.
HASHES = ("sha512", "sha384", "sha256", "sha224", "sha1", "md5")


@dataclass(frozen=True)
class IndexFile:
    """One file a page lists: its name, absolute URL, hashes ((algorithm, hex), strongest
    first) and whether it is yanked."""

    filename: str
    url: str
    hashes: tuple[tuple[str, str], ...] = ()
    yanked: bool = False


def _hashes(found: dict[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple(
        (name, found[name].lower())
        for name in HASHES
        if isinstance(found.get(name), str) and re.fullmatch(r"[0-9A-Fa-f]+", found[name])
    )


def _file_of(
    url: str, base: str, hashes: dict[str, str], yanked: bool, filename: str | None = None
) -> IndexFile | None:
    absolute, fragment = urldefrag(urljoin(base, url.strip()))
    filename = filename or unquote(urlsplit(absolute).path.rsplit("/", 1)[-1])
    if not filename:
        return None
    from_fragment = dict(part.split("=", 1) for part in fragment.split("&") if "=" in part)
    return IndexFile(filename, absolute, _hashes({**from_fragment, **hashes}), yanked)


def parse_json_page(body: bytes, base: str) -> list[IndexFile]:
    """The files of a PEP 691 project page."""
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        return []
    files = data.get("files") if isinstance(data, dict) else None
    found = []
    for entry in files if isinstance(files, list) else []:
        if not isinstance(entry, dict) or not isinstance(entry.get("url"), str):
            continue
        hashes = entry.get("hashes") if isinstance(entry.get("hashes"), dict) else {}
        yanked = entry.get("yanked", False)
        name = entry.get("filename") if isinstance(entry.get("filename"), str) else None
        made = _file_of(entry["url"], base, hashes, bool(yanked), name)
        if made is not None:
            found.append(made)
    return found


class _Links(HTMLParser):
    def __init__(self, base: str) -> None:
        super().__init__()
        self.base = base
        self.anchors: list[tuple[str, bool]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "base" and values.get("href") and not self.anchors:
            self.base = urljoin(self.base, values["href"] or "")
        elif tag == "a" and values.get("href"):
            self.anchors.append((values["href"] or "", "data-yanked" in values))


def parse_html_page(body: bytes, base: str) -> list[IndexFile]:
    """The files a PEP 503 page (or a find-links page) links to, `<base href>` honoured."""
    parser = _Links(base)
    parser.feed(body.decode("utf-8", "replace"))
    parser.close()
    found = [_file_of(href, parser.base, {}, yanked) for href, yanked in parser.anchors]
    return [item for item in found if item is not None]


def parse_page(body: bytes, content_type: str, base: str) -> list[IndexFile]:
    """A page as its Content-Type says (JSON for PEP 691's type, else HTML)."""
    if content_type.split(";", 1)[0].strip().lower() == JSON_TYPE:
        return parse_json_page(body, base)
    return parse_html_page(body, base)


def is_archive(filename: str) -> bool:
    """Whether a find-links folder's file is one vmine may take: a wheel or an sdist."""
    return filename.lower().endswith(".whl") or sdist_suffix(filename) is not None


def sdist_suffix(filename: str) -> str | None:
    lowered = filename.lower()
    return next((suffix for suffix in SDIST_SUFFIXES if lowered.endswith(suffix)), None)


def sdist_version(filename: str, name: str) -> str | None:
    """The version in an sdist's file name when the file is one of project `name` (PEP 503
    normalised): the name is whatever prefix normalises to it, as pip reads `Foo-Bar-1.0`."""
    suffix = sdist_suffix(filename)
    if suffix is None:
        return None
    stem = filename[: -len(suffix)]
    for position, char in enumerate(stem):
        if char == "-" and canonicalize_name(stem[:position]) == name:
            return stem[position + 1 :] or None
    return None


def same_version(found: str, wanted: str) -> bool:
    """PEP 440 equality (`1-1` is `1.post1`); plain text equality for a version that is
    not PEP 440."""
    try:
        return Version(found) == Version(wanted)
    except InvalidVersion:
        return found == wanted


def pick_sdist(files: list[IndexFile], name: str, version: str) -> IndexFile | None:
    """The sdist of NAME==VERSION among `files` (in the order their sources are searched):
    one that is not yanked before one that is (pip takes a yanked file only when it is all
    there is for a pinned version), then `.tar.gz` before other archives, then first found."""
    matching = [
        item
        for item in files
        if (found := sdist_version(item.filename, name)) is not None
        and same_version(found, version)
    ]
    if not matching:
        return None
    order = {suffix: rank for rank, suffix in enumerate(SDIST_SUFFIXES)}
    return min(
        enumerate(matching),
        key=lambda pair: (pair[1].yanked, order[sdist_suffix(pair[1].filename) or ""], pair[0]),
    )[1]


def pick_wheel(
    files: list[IndexFile], name: str, version: str, supported: list[Tag]
) -> IndexFile | None:
    """The wheel of NAME==VERSION among `files` (in search order): pip's choice where pip
    has one (not yanked before yanked, then the tag this interpreter ranks first in
    `supported`, as `packaging.tags.sys_tags()` orders them, then the higher build
    number), else a wheel for another platform: only its Python files are read, and they
    are the same in every wheel of a release."""
    rank = {tag: position for position, tag in enumerate(supported)}
    ranked = []
    for position, item in enumerate(files):
        try:
            found, found_version, build, tags = parse_wheel_filename(item.filename)
        except (InvalidWheelFilename, InvalidVersion):
            continue
        if found != name or not same_version(str(found_version), version):
            continue
        best = min((rank.get(tag, len(rank)) for tag in tags), default=len(rank))
        # pip ranks a build-tagged wheel above an untagged one, and a higher number above
        ranked.append(((item.yanked, best, -build[0] if build else 1, position), item))
    return min(ranked, key=lambda pair: pair[0])[1] if ranked else None
