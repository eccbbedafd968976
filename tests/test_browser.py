"""The rendered HTML site in real headless Chromium: search as you type, follow a link, read the
record page; served over HTTP and opened from file://.

Chromium is driven over its DevTools protocol through `--remote-debugging-pipe` (JSON
messages separated by NUL bytes on fds 3 and 4), so no driver or client library is needed.
"""

from __future__ import annotations

import base64
import fcntl
import functools
import http.server
import json
import os
import select
import shutil
import signal
import threading
import time
from pathlib import Path

import pytest

from pipeline.site.command import render
from tests.datasets import SHA, write_fixture_dataset

pytestmark = pytest.mark.slow

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--remote-debugging-pipe",
    "--window-size=1100,2400",
]
TIMEOUT = 30.0


class Chromium:
    """A headless Chromium and one page in it, spoken to over the DevTools pipe."""

    def __init__(self, profile: Path) -> None:
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        # posix_spawn, not fork + preexec_fn: safe while the test's HTTP server thread runs.
        # Move the child's ends above 3 and 4 first so the dup2s below cannot clobber them.
        child_in = fcntl.fcntl(to_child_r, fcntl.F_DUPFD_CLOEXEC, 10)
        child_out = fcntl.fcntl(from_child_w, fcntl.F_DUPFD_CLOEXEC, 10)
        for fd in (to_child_r, from_child_w):
            os.close(fd)
        self.pid = os.posix_spawn(
            CHROMIUM,
            [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            os.environ,
            file_actions=[
                (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
                (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
                (os.POSIX_SPAWN_DUP2, child_in, 3),  # the protocol pipe: fd 3 in, fd 4 out
                (os.POSIX_SPAWN_DUP2, child_out, 4),
            ],
        )
        os.close(child_in)
        os.close(child_out)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict] = []
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        for domain in ("Page", "Runtime", "Network"):
            self.send(f"{domain}.enable", session=True)

    def send(self, method: str, params: dict | None = None, session: bool = False) -> dict:
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self.session
        os.write(self._to_child, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._receive()
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]
            self.events.append(reply)

    def _receive(self) -> dict:
        deadline = time.monotonic() + TIMEOUT
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._from_child], [], [], left)[0]:
                raise TimeoutError("Chromium did not answer")
            chunk = os.read(self._from_child, 1 << 16)
            if not chunk:
                raise RuntimeError("Chromium closed the DevTools pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def wait_for(self, method: str) -> dict:
        while True:
            for index, event in enumerate(self.events):
                if event.get("method") == method:
                    return self.events.pop(index)
            self.events.append(self._receive())

    def open(self, url: str) -> None:
        self.events.clear()
        self.send("Page.navigate", {"url": url}, session=True)
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression: str) -> object:
        result = self.send(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
            session=True,
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def type_into(self, selector: str, text: str) -> None:
        self.evaluate(f"document.querySelector({json.dumps(selector)}).focus()")
        for char in text:  # one key at a time, as a person types
            self.send("Input.insertText", {"text": char}, session=True)

    def click(self, selector: str) -> None:
        box = self.evaluate(
            f"(() => {{ const r = document.querySelector({json.dumps(selector)})"
            ".getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()"
        )
        for kind in ("mousePressed", "mouseReleased"):
            self.send(
                "Input.dispatchMouseEvent",
                {"type": kind, "x": box[0], "y": box[1], "button": "left", "clickCount": 1},
                session=True,
            )

    def screenshot(self, path: Path) -> Path:
        data = self.send("Page.captureScreenshot", {"format": "png"}, session=True)["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def requested_urls(self) -> list[str]:
        return [
            event["params"]["request"]["url"]
            for event in self.events
            if event.get("method") == "Network.requestWillBeSent"
        ]

    def exceptions(self) -> list[dict]:
        return [e for e in self.events if e.get("method") == "Runtime.exceptionThrown"]

    def close(self) -> None:
        try:
            self.send("Browser.close")
        except (RuntimeError, TimeoutError, OSError):
            pass
        deadline = time.monotonic() + 10
        while os.waitpid(self.pid, os.WNOHANG) == (0, 0):
            if time.monotonic() > deadline:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
                break
            time.sleep(0.05)
        os.close(self._to_child)
        os.close(self._from_child)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("site")
    dataset = write_fixture_dataset(base / "output")
    render(dataset, "html", base / "site")
    return base / "site"


@pytest.fixture()
def browser(tmp_path: Path):
    if not Path(CHROMIUM).exists():
        pytest.skip("Chromium is not installed (apt-get install chromium)")
    chromium = Chromium(tmp_path / "profile")
    yield chromium
    chromium.close()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # keep test output clean
        pass


@pytest.fixture(scope="module")
def server(site: Path):
    handler = functools.partial(QuietHandler, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


VISIBLE_ROWS = (
    "[...document.querySelectorAll('#errors tr[data-id]')]"
    ".filter(row => !row.hidden).map(row => row.dataset.id)"
)


def _search_and_follow(browser: Chromium, index_url: str, tmp_path: Path) -> None:
    browser.open(index_url)
    assert browser.evaluate(VISIBLE_ROWS) == [
        "aaaa000000000001",
        "aaaa000000000002",
        "aaaa000000000003",
        "aaaa000000000004",
    ]
    browser.type_into("#search", "decode backend")
    assert browser.evaluate(VISIBLE_ROWS) == ["aaaa000000000002"]
    assert browser.evaluate("document.getElementById('count').textContent") == "1 of 4 errors"
    # the scheduler's file group has no visible row left, so it is hidden as a whole
    assert browser.evaluate(
        "[...document.querySelectorAll('#errors tbody')].map(group => group.hidden)"
    ) == [False, True]

    browser.events.clear()
    browser.click('tr[data-id="aaaa000000000002"] a')
    browser.wait_for("Page.loadEventFired")
    assert browser.evaluate("location.pathname").endswith("/errors/aaaa000000000002.html")
    assert browser.evaluate("document.title") == (
        "--use-fast-decode requires --decode-backend flash · acme/serve"
    )
    assert browser.evaluate("document.querySelector('h1').textContent") == (
        "--use-fast-decode requires --decode-backend flash"
    )
    assert browser.evaluate("document.querySelector('.thrown').textContent") == (
        "Thrown at serve/config/engine.py:108"
    )
    assert browser.evaluate("document.querySelector('.source .hll').textContent") == (
        '            raise ValueError("--use-fast-decode requires --decode-backend flash")\n'
    )
    assert browser.evaluate("document.querySelector('a.github').href") == (
        f"https://github.com/acme/serve/blob/{SHA}/serve/config/engine.py#L101-L116"
    )
    assert browser.evaluate("document.querySelector('a.github').textContent") == (
        "View on GitHub (pinned to c0ffee1234)"
    )
    assert (
        browser.evaluate("getComputedStyle(document.querySelector('.source .hll')).backgroundColor")
        != "rgba(0, 0, 0, 0)"
    )
    assert browser.exceptions() == []
    shot = browser.screenshot(tmp_path / "record.png")
    print(f"screenshot: {shot}")
    assert shot.stat().st_size > 1000


def test_search_filters_rows_and_links_to_record_page_over_http(
    browser: Chromium, server: str, tmp_path: Path
) -> None:
    _search_and_follow(browser, server + "index.html", tmp_path)
    external = [url for url in browser.requested_urls() if not url.startswith(server)]
    assert external == []


def test_site_works_from_file_url(browser: Chromium, site: Path, tmp_path: Path) -> None:
    _search_and_follow(browser, (site / "index.html").as_uri(), tmp_path)


def test_copy_button_copies_the_code(browser: Chromium, server: str) -> None:
    browser.open(server + "errors/aaaa000000000002.html")
    # headless has no clipboard to read back: record what the page hands to it
    browser.evaluate(
        "window.copied = []; navigator.clipboard.writeText = text => "
        "{ window.copied.push(text); return Promise.resolve(); }"
    )
    browser.click(".code-block button.copy")
    assert browser.evaluate("window.copied") == [
        "--use-fast-decode requires --decode-backend flash"
    ]
    assert browser.evaluate("document.querySelector('button.copy').textContent") == "Copied"


def test_hostile_dataset_text_stays_text(browser: Chromium, tmp_path: Path) -> None:
    from tests.test_render import HOSTILE

    root = write_fixture_dataset(tmp_path / "output", [HOSTILE])
    render(root, "html", tmp_path / "site")
    browser.send(
        "Page.addScriptToEvaluateOnNewDocument",
        {"source": "window.alerts = []; window.alert = m => window.alerts.push(String(m));"},
        session=True,
    )
    browser.open((tmp_path / "site" / "index.html").as_uri())
    browser.type_into("#search", "script")
    assert browser.evaluate(VISIBLE_ROWS) == ["eeee000000000001"]
    assert browser.evaluate("window.alerts") == []
    browser.open((tmp_path / "site" / "errors" / "eeee000000000001.html").as_uri())
    assert browser.evaluate("window.alerts") == []
    assert browser.evaluate("document.querySelector('h1').textContent") == (
        '<script>alert("message")</script> & {value}'
    )
    assert browser.evaluate("document.querySelectorAll('img, iframe').length") == 0


def test_long_names_wrap_inside_the_page_width(browser: Chromium, tmp_path: Path) -> None:
    from dataclasses import replace

    from tests.datasets import CASES

    long = replace(
        CASES[0],
        qualname="CompressedLinearTransformSchemeConfiguration._validate_transform_schemes_of_layer",
        errorMessage="{sorted(supported_multimodal_dataset_names_for_benchmarking_runs)} only",
        messagePattern="(.*?) only",
        messageStatus="template",
    )
    root = write_fixture_dataset(tmp_path / "output", [long])
    render(root, "html", tmp_path / "site")
    browser.open((tmp_path / "site" / "index.html").as_uri())
    assert (
        browser.evaluate(
            "document.documentElement.scrollWidth <= document.documentElement.clientWidth"
        )
        is True
    )
