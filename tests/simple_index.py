"""A package index on 127.0.0.1 that speaks the simple repository API: PEP 691 JSON to a
client that asks for it, else PEP 503 HTML, over the archives of a folder. Started by the
tests; pip and vmine's sdist lookup are pointed at it with PIP_INDEX_URL."""

from __future__ import annotations

import hashlib
import json
import re
import threading
from html import escape
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

JSON_TYPE = "application/vnd.pypi.simple.v1+json"


def _project(filename: str) -> str:
    """The PEP 503 name of the project an archive belongs to (the part before the version)."""
    stem = re.sub(r"(\.tar\.gz|\.zip|\.whl)$", "", filename)
    return re.sub(r"[-_.]+", "-", stem.split("-", 1)[0]).lower()


class SimpleIndex:
    """Serves `folder` at `{url}` (`.../simple/`). `html_only` answers HTML even to a client
    that asks for JSON; `pip_only` refuses (403) every client but pip, as an index behind
    a login only pip is set up for would; `bad_hash` names files whose listed sha256 is
    wrong; `requests` records every path asked for, `agents` the User-Agent of each."""

    def __init__(self, folder: Path, *, html_only: bool = False, pip_only: bool = False) -> None:
        self.folder = Path(folder)
        self.html_only = html_only
        self.pip_only = pip_only
        self.agents: list[str] = []
        self.bad_hash: set[str] = set()
        self.extra_links: list[str] = []  # hrefs every HTML page lists besides its files
        self.requests: list[str] = []
        index = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                index.requests.append(self.path)
                agent = self.headers.get("User-Agent", "")
                index.agents.append(agent)
                if index.pip_only and not agent.startswith("pip/"):
                    self.send_error(403)
                    return
                match = re.fullmatch(r"/simple/([^/]+)/", self.path)
                if match:
                    wants_json = JSON_TYPE in self.headers.get("Accept", "")
                    self._page(match[1], json_page=wants_json and not index.html_only)
                    return
                match = re.fullmatch(r"/files/([^/]+)", self.path)
                path = index.folder / match[1] if match else None
                if path is None or not path.is_file():
                    self.send_error(404)
                    return
                data = path.read_bytes()
                self.send_response(200)
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _page(self, project: str, *, json_page: bool) -> None:
                files = [
                    (path.name, index.listed_hash(path))
                    for path in sorted(index.folder.iterdir())
                    if _project(path.name) == project
                ]
                if not files and not index.extra_links:
                    self.send_error(404)
                    return
                if json_page:
                    body = json.dumps(
                        {
                            "meta": {"api-version": "1.0"},
                            "name": project,
                            "files": [
                                {
                                    "filename": name,
                                    "url": f"../../files/{name}",
                                    "hashes": {"sha256": digest},
                                }
                                for name, digest in files
                            ],
                        }
                    ).encode()
                    kind = JSON_TYPE
                else:
                    links = "".join(
                        f'<a href="../../files/{escape(name)}#sha256={digest}">{escape(name)}</a>\n'
                        for name, digest in files
                    )
                    links += "".join(
                        f'<a href="{escape(href)}">x</a>\n' for href in index.extra_links
                    )
                    body = f"<!DOCTYPE html><html><body>\n{links}</body></html>\n".encode()
                    kind = "text/html"
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def listed_hash(self, path: Path) -> str:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        return "0" * 64 if path.name in self.bad_hash else digest

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/simple/"

    def __enter__(self) -> SimpleIndex:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
