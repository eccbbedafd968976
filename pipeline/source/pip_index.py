"""A release's wheel and sdist, fetched as files from the indexes pip is configured with,
and never built: pip prepares an sdist's metadata (it runs its setup.py or build backend)
before it saves one, so vmine reads pip's index settings and fetches both archives itself
(pip is asked, for a wheel only, when a place could not be read here).

The settings are pip's own (the pip.conf files pip reads, in its order, then `PIP_*`
environment variables, which win): find-links (folders, files, pages), index-url and
extra-index-url (PEP 691 JSON or PEP 503 HTML pages, also `file://` ones), no-index, cert,
client-cert, trusted-host, proxy and timeout. Like pip, an `http://` index is used only on
this machine or a trusted host. A file's hash, when its page lists one, is checked."""

from __future__ import annotations

import ast
import base64
import configparser
import http.client
import ipaddress
import locale
import netrc
import os
import re
import ssl
import stat
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit, urlunsplit
from urllib.request import url2pathname

from packaging.tags import sys_tags

from pipeline.keys import file_digest
from pipeline.source.simple_api import (
    ACCEPT,
    IndexFile,
    is_archive,
    parse_page,
    pick_sdist,
    pick_wheel,
    sdist_suffix,
)
from pipeline.source.snapshot import SourceError

DEFAULT_INDEX = "https://pypi.org/simple"
MAX_PAGE = 64 * 2**20  # a project page (PyPI's largest are a few MB)
MAX_ARCHIVE = 2 * 2**30  # a wheel or an sdist
_CHUNK = 1 << 16


@dataclass(frozen=True)
class PipSettings:
    """pip's index settings, as `pip download` would use them."""

    index_url: str = DEFAULT_INDEX
    extra_index_urls: tuple[str, ...] = ()
    find_links: tuple[str, ...] = ()
    no_index: bool = False
    cert: str | None = None
    client_cert: str | None = None
    trusted_hosts: tuple[str, ...] = ()
    proxy: str | None = None
    timeout: float = 15.0

    def indexes(self) -> tuple[str, ...]:
        return () if self.no_index else (self.index_url, *self.extra_index_urls)

    def described(self) -> str:
        """Where an sdist was looked for, in a few words."""
        places = [*self.find_links, *self.indexes()]
        shown = ", ".join(_without_password(place) for place in places[:4])
        more = f" and {len(places) - 4} more" if len(places) > 4 else ""
        return shown + more if places else "nowhere: no-index and no find-links"


def _true(value: str) -> bool:
    return value.strip().lower() in ("1", "y", "yes", "t", "true", "on")


def settings_from(config: Mapping[str, str], environ: Mapping[str, str]) -> PipSettings:
    """PipSettings from pip's configuration (`section.key` values) and the environment,
    with pip's precedence: `global`, then the `download` section, then `PIP_*` variables,
    an empty value ignored as pip ignores it. A list (find-links, extra-index-url,
    trusted-host) is split on whitespace, and a later source replaces an earlier one's
    whole list, as pip does."""
    values: dict[str, str] = {}
    for section in ("global", "download"):
        for key, value in config.items():
            where, _, name = key.partition(".")
            if where == section and value:
                values[name] = value
    for key, value in environ.items():
        if key.startswith("PIP_") and key != "PIP_CONFIG_FILE" and value:
            values[key[4:].lower().replace("_", "-")] = value
    timeout = values.get("timeout") or values.get("default-timeout") or ""
    try:
        seconds = float(timeout) if timeout else 15.0
    except ValueError:
        seconds = 15.0
    return PipSettings(
        index_url=values.get("index-url", "").strip() or DEFAULT_INDEX,
        extra_index_urls=tuple(values.get("extra-index-url", "").split()),
        find_links=tuple(values.get("find-links", "").split()),
        no_index=_true(values.get("no-index", "")),
        cert=values.get("cert") or None,
        client_cert=values.get("client-cert") or None,
        trusted_hosts=tuple(values.get("trusted-host", "").split()),
        proxy=values.get("proxy") or None,
        timeout=seconds if 0 < seconds <= 3600 else 15.0,
    )


_WINDOWS = sys.platform.startswith("win")
_CONFIG_NAME = "pip.ini" if _WINDOWS else "pip.conf"


def config_files(site_dirs: Sequence[str], user_dir: str, environ: Mapping[str, str]) -> list[str]:
    """The files pip reads its configuration from, the later winning (pip's `Configuration`
    loads them so): the site-wide ones, the user's (legacy, then new; none when
    PIP_CONFIG_FILE names a file that exists), the environment's (`sys.prefix`), then
    PIP_CONFIG_FILE; none at all when that is the null device."""
    env_file = environ.get("PIP_CONFIG_FILE")
    if env_file == os.devnull:
        return []
    files = [os.path.join(path, _CONFIG_NAME) for path in site_dirs]
    if not (env_file and os.path.exists(env_file)):
        legacy = os.path.join(os.path.expanduser("~"), "pip" if _WINDOWS else ".pip")
        files += [os.path.join(legacy, _CONFIG_NAME), os.path.join(user_dir, _CONFIG_NAME)]
    files.append(os.path.join(sys.prefix, _CONFIG_NAME))
    if env_file is not None:
        files.append(env_file)
    return files


def _option_name(name: str) -> str:
    """pip's one spelling of an option name, from a file or the environment."""
    return name.lower().replace("_", "-").removeprefix("--")


class _ConfigParser(configparser.RawConfigParser):
    def optionxform(self, optionstr: str) -> str:
        return _option_name(optionstr)


def pip_config() -> dict[str, str]:
    """pip's configuration files as {`section.key`: value}, read here as pip reads them
    (`config_files`, with the folders pip's own `appdirs` names; parsed by configparser,
    in pip's encoding): a `pip config list` subprocess costs a quarter of a second, and
    lists the files by name, not in the order pip applies them. A pip with no such
    `appdirs` is asked instead. Environment variables are left out: `settings_from` reads
    the environment itself."""
    try:
        from pip._internal.utils import appdirs

        paths = config_files(
            appdirs.site_config_dirs("pip"), appdirs.user_config_dir("pip"), os.environ
        )
    except Exception:  # a pip whose internals differ: ask it the documented way
        return pip_config_list()
    encoding = "utf-8" if sys.flags.utf8_mode else locale.getencoding()
    config: dict[str, str] = {}
    for path in paths:
        if not os.path.exists(path):
            continue
        parser = _ConfigParser()
        try:
            parser.read(path, encoding=encoding)
        except (UnicodeDecodeError, configparser.Error):
            return {}  # pip stops on a file it cannot read, and uses no configuration
        for section in parser.sections():
            for name, value in parser.items(section):
                config[f"{section}.{_option_name(name)}"] = value
    return config


def pip_config_list() -> dict[str, str]:
    """`pip config list` of the pip vmine runs, as {`section.key`: value}, a later line
    winning (its environment entries are left out)."""
    try:
        done = subprocess.run(
            [sys.executable, "-m", "pip", "config", "list"],
            capture_output=True,
            timeout=120,
        )
    except (OSError, subprocess.TimeoutExpired):
        return {}
    config = {}
    for line in done.stdout.decode("utf-8", "replace").splitlines():
        key, sep, raw = line.partition("=")
        if not sep or key.startswith(":env:"):
            continue
        try:
            value = ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            continue
        if isinstance(value, str):
            config[key.strip()] = value
    return config


def pip_settings() -> PipSettings:
    return settings_from(pip_config(), os.environ)


# --- fetching -----------------------------------------------------------------------------


@dataclass
class _Fetcher:
    settings: PipSettings
    deadline: float
    _context: ssl.SSLContext | None = field(default=None, init=False)
    _credentials: dict[str, tuple[str, str]] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        for url in (*self.settings.indexes(), *self.settings.find_links):
            parts = urlsplit(url)
            if parts.username is not None:
                self._credentials[parts.hostname or ""] = (
                    unquote(parts.username),
                    unquote(parts.password or ""),
                )

    def _ssl(self, host: str) -> ssl.SSLContext:
        if host in self.settings.trusted_hosts:  # pip's trusted-host: no verification
            unverified = ssl.create_default_context()
            unverified.check_hostname = False
            unverified.verify_mode = ssl.CERT_NONE
            return unverified
        if self._context is None:
            self._context = ssl.create_default_context(cafile=self.settings.cert)
            if self.settings.client_cert:
                self._context.load_cert_chain(self.settings.client_cert)
        return self._context

    def _allowed(self, url: str) -> str | None:
        """Why pip would not use this URL, or None (pip's secure origins)."""
        parts = urlsplit(url)
        if parts.scheme == "https":
            return None
        if parts.scheme != "http":
            return f"{parts.scheme or 'no'} scheme"
        host = parts.hostname or ""
        if host == "localhost" or host in self.settings.trusted_hosts:
            return None
        try:
            if ipaddress.ip_address(host).is_loopback:
                return None
        except ValueError:
            pass
        return "not https, and not a trusted host (pip's --trusted-host)"

    def open(self, url: str, accept: str) -> tuple[Iterator[bytes], str, str]:
        """(chunks, content type, final URL) of an http(s) URL."""
        reason = self._allowed(url)
        if reason is not None:
            raise SourceError(f"{_without_password(url)}: {reason}")
        parts = urlsplit(url)
        host = parts.hostname or ""
        clean = urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))
        request = urllib.request.Request(clean, headers={"Accept": accept, "User-Agent": "vmine"})
        login = self._credentials.get(host) or _netrc_login(host)
        if login is not None:
            token = base64.b64encode(f"{login[0]}:{login[1]}".encode()).decode()
            request.add_header("Authorization", f"Basic {token}")
        handlers: list[urllib.request.BaseHandler] = [
            urllib.request.HTTPSHandler(context=self._ssl(host)),
            _Redirects(self),
        ]
        if self.settings.proxy:
            proxy = self.settings.proxy
            handlers.append(urllib.request.ProxyHandler({"http": proxy, "https": proxy}))
        opener = urllib.request.build_opener(*handlers)
        response = opener.open(request, timeout=self.settings.timeout)
        final = response.geturl()
        kind = response.headers.get("Content-Type", "")

        def chunks() -> Iterator[bytes]:
            with response:
                while chunk := response.read(_CHUNK):
                    if time.monotonic() > self.deadline:
                        raise SourceError(f"{_without_password(url)}: took too long")
                    yield chunk

        return chunks(), kind, final


class _Redirects(urllib.request.HTTPRedirectHandler):
    """Redirects go only where pip would go, and credentials never follow one to another
    host (as requests does for pip)."""

    def __init__(self, fetcher: _Fetcher) -> None:
        self.fetcher = fetcher

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[override]
        reason = self.fetcher._allowed(newurl)
        if reason is not None:
            raise SourceError(
                f"{_without_password(req.full_url)}: redirected to {newurl}: {reason}"
            )
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        if new is not None and urlsplit(newurl).hostname != urlsplit(req.full_url).hostname:
            new.headers.pop("Authorization", None)
        return new


# What a failed transfer raises (a refused connection, a timeout, a cut body).
_NETWORK_ERRORS = (urllib.error.URLError, http.client.HTTPException, ConnectionError, TimeoutError)


def _netrc_login(host: str) -> tuple[str, str] | None:
    try:
        found = netrc.netrc().authenticators(host)
    except (OSError, netrc.NetrcParseError):
        return None
    return (found[0], found[2] or "") if found else None


def _without_password(url: str) -> str:
    parts = urlsplit(url)
    if parts.password is None:
        return url
    return urlunsplit(parts._replace(netloc=f"{parts.username}:***@{parts.hostname}"))


def _local_path(place: str) -> Path | None:
    """The local path a find-links entry or index URL names (a path or a file: URL)."""
    parts = urlsplit(place)
    if parts.scheme == "file":
        return Path(url2pathname(parts.path))
    if parts.scheme in ("http", "https"):
        return None
    return Path(place).expanduser()


def _read_local(path: Path, limit: int) -> Iterator[bytes]:
    """A regular file's bytes in chunks (opened so that a FIFO cannot block), at most
    `limit` of them."""
    handle = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        if not stat.S_ISREG(os.fstat(handle).st_mode):
            raise SourceError(f"{path}: not a regular file")
        os.set_blocking(handle, True)
        with os.fdopen(handle, "rb") as source:
            handle = -1
            read = 0
            while chunk := source.read(_CHUNK):
                read += len(chunk)
                if read > limit:
                    raise SourceError(f"{path}: larger than {limit // 2**20} MiB")
                yield chunk
    finally:
        if handle != -1:
            os.close(handle)


def _page_files(fetcher: _Fetcher, url: str) -> list[IndexFile]:
    """The files a page (http(s), or a local HTML file) lists; [] for a page not found."""
    local = _local_path(url)
    if local is not None:
        page = local / "index.html" if local.is_dir() else local
        if not page.is_file():
            return []
        body = b"".join(_read_local(page, MAX_PAGE))
        return parse_page(body, "text/html", page.resolve().as_uri())
    try:
        chunks, kind, final = fetcher.open(url, ACCEPT)
        body = bytearray()
        for chunk in chunks:
            body += chunk
            if len(body) > MAX_PAGE:
                raise SourceError(f"{_without_password(url)}: page over {MAX_PAGE // 2**20} MiB")
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            return []
        raise SourceError(f"{_without_password(url)}: HTTP {exc.code}") from None
    except (*_NETWORK_ERRORS, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise SourceError(f"{_without_password(url)}: {reason}") from None
    # a page from the network names files on the network, never one on this machine
    files = parse_page(bytes(body), kind, final)
    return [item for item in files if urlsplit(item.url).scheme in ("http", "https")]


def _find_links_files(fetcher: _Fetcher, place: str) -> list[IndexFile]:
    """A find-links entry's files: a folder's files, one archive, or a page's links."""
    local = _local_path(place)
    if local is not None and local.is_dir():
        return [
            IndexFile(entry.name, entry.resolve().as_uri())
            for entry in sorted(local.iterdir())
            if is_archive(entry.name)
        ]
    if local is not None and is_archive(local.name):
        return [IndexFile(local.name, local.resolve().as_uri())] if local.exists() else []
    return _page_files(fetcher, place)


def candidates(settings: PipSettings, name: str, deadline: float) -> tuple[list[IndexFile], str]:
    """Every file the find-links and indexes list for project `name`, in pip's search
    order, and the problems met on the way ('' when none)."""
    fetcher = _Fetcher(settings, deadline)
    files: list[IndexFile] = []
    problems = []
    places = [(place, True) for place in settings.find_links]
    places += [
        (urljoin(index.rstrip("/") + "/", f"{name}/"), False) for index in settings.indexes()
    ]
    for place, is_find_links in places:
        try:
            files += (
                _find_links_files(fetcher, place) if is_find_links else _page_files(fetcher, place)
            )
        except SourceError as exc:
            problems.append(str(exc))
        except OSError as exc:  # a find-links folder or file that cannot be read
            problems.append(f"{place}: {exc.strerror or exc}")
    return files, "; ".join(problems)


@dataclass(frozen=True)
class Fetched:
    """An archive fetched into a folder, or None and why not. `unread` says that a place
    pip is configured with could not be read (pip itself may still reach it)."""

    path: Path | None
    why: str = ""
    unread: bool = False


def fetch_archives(
    name: str, version: str, into: Path, settings: PipSettings, *, timeout: float
) -> tuple[Fetched, Fetched]:
    """The wheel and the sdist of NAME==VERSION (PEP 503 name), each chosen from one
    listing of the find-links and indexes pip is configured with, downloaded side by side
    into `into`, hash checked. A file whose hash differs from its listing is a
    SourceError."""
    deadline = time.monotonic() + timeout
    files, problems = candidates(settings, name, deadline)
    wheel = pick_wheel(files, name, version, list(sys_tags()))
    sdist = pick_sdist(files, name, version)
    with ThreadPoolExecutor(max_workers=2) as pool:  # both wait on the network
        wheel_job = pool.submit(_fetch, wheel, "wheel", into / "wheel", settings, deadline)
        sdist_job = pool.submit(_fetch, sdist, "sdist", into / "sdist", settings, deadline)
        done = [wheel_job.result(), sdist_job.result()]
    for index, (chosen, kind) in enumerate(((wheel, "wheel"), (sdist, "sdist"))):
        if chosen is None:
            why = f"no {kind} of {name}=={version} in {settings.described()}"
            done[index] = Fetched(None, f"{why} ({problems})" if problems else why, bool(problems))
    return done[0], done[1]


def _fetch(
    chosen: IndexFile | None, kind: str, into: Path, settings: PipSettings, deadline: float
) -> Fetched:
    if chosen is None:
        return Fetched(None)
    into.mkdir(parents=True, exist_ok=True)
    # the index's file name, unless it could name another folder
    plain = re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._+!-]*", chosen.filename)
    suffix = ".whl" if kind == "wheel" else sdist_suffix(chosen.filename)
    target = into / (chosen.filename if plain else f"{kind}{suffix}")
    fetcher = _Fetcher(settings, deadline)
    local = _local_path(chosen.url)
    try:
        chunks = (
            _read_local(local, MAX_ARCHIVE)
            if local is not None
            else fetcher.open(chosen.url, "*/*")[0]
        )
        digests = {algorithm: file_digest(algorithm) for algorithm, _ in chosen.hashes[:1]}
        size = 0
        with open(target, "wb") as out:
            for chunk in chunks:
                size += len(chunk)
                if size > MAX_ARCHIVE:
                    raise SourceError(f"{chosen.filename}: larger than {MAX_ARCHIVE // 2**30} GiB")
                for digest in digests.values():
                    digest.update(chunk)
                out.write(chunk)
    except urllib.error.HTTPError as exc:
        target.unlink(missing_ok=True)
        return Fetched(None, f"{_without_password(chosen.url)}: HTTP {exc.code}", True)
    except _NETWORK_ERRORS as exc:
        target.unlink(missing_ok=True)
        reason = getattr(exc, "reason", exc)
        return Fetched(None, f"{_without_password(chosen.url)}: {reason}", True)
    for algorithm, expected in chosen.hashes[:1]:
        actual = digests[algorithm].hexdigest()
        if actual != expected:
            target.unlink()
            raise SourceError(
                f"{chosen.filename} from {_without_password(chosen.url)}: its {algorithm} is "
                f"{actual}, the index lists {expected}; refusing it"
            )
    return Fetched(target)
