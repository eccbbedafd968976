"""How a command talks to the person (or CI job) running it: progress, events, summaries.

Three modes: `tty` (rich progress bars on stderr), `plain` (one line per event, for pipes
and `CI=true`), `github` (plain, plus `::warning` annotations and a step summary when
`GITHUB_ACTIONS=true`). Data goes to stdout; everything here goes to stderr.
"""

from __future__ import annotations

import os
import re
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Literal, TextIO

if TYPE_CHECKING:
    from rich.progress import Progress

Mode = Literal["tty", "plain", "github"]


def _rate_column():
    """Items per second, once rich has seen enough progress to estimate it (rich is imported
    when a progress bar is first shown: `vmine explain` never needs it)."""
    from rich.progress import ProgressColumn, Task
    from rich.text import Text

    class RateColumn(ProgressColumn):
        def render(self, task: Task) -> Text:
            speed = task.finished_speed or task.speed
            return Text("   -/s" if speed is None else f"{speed:6.1f}/s")

    return RateColumn()


def ignore_parse_warnings() -> None:
    """Hide the warnings Python gives while parsing the analysed code (invalid escapes and
    the like, a SyntaxWarning shown by default from 3.12 on): they are that code's business,
    not the user's. Source parsed from a string is attributed to `<unknown>`."""
    warnings.filterwarnings("ignore", module=re.escape("<unknown>"))


def detect_mode(ci: bool | None = None, stream: TextIO | None = None) -> Mode:
    """`--ci` forces batch mode; otherwise `CI=true` or a non-terminal stderr selects it."""
    stream = stream or sys.stderr
    env_ci = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
    if ci or (ci is None and env_ci) or not stream.isatty():
        return "github" if os.environ.get("GITHUB_ACTIONS") == "true" else "plain"
    return "tty"


# What a terminal may act on instead of showing: C0 controls but tab (ESC starts the sequences
# that set the title, clear the screen or write the clipboard), DEL, C1 controls (U+009B is
# an 8-bit CSI), the Unicode line and paragraph separators, and the bidi marks and overrides
# that make text read other than it runs.
_CONTROLS = r"\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069"
_UNPRINTABLE = re.compile(f"[\\n{_CONTROLS}]")
_UNPRINTABLE_KEEPING_LINES = re.compile(f"[{_CONTROLS}]")


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code == 0x0A:
        return "\\n"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str, *, keep_newlines: bool = False) -> str:
    """Text from a dataset, a repository or the user made safe for a terminal: every control
    character written as an escape (`\\x1b`, `\\x0d`, `\\u2028`, `\\n`); with `keep_newlines`,
    line breaks stay (pages, code blocks, multi-line reports). Tabs stay."""
    pattern = _UNPRINTABLE_KEEPING_LINES if keep_newlines else _UNPRINTABLE
    return pattern.sub(_escaped, text)


def one_line(text: str) -> str:
    """Text for one field of a one-line-per-item listing (a file name in `explain --all`):
    `printable`, and tabs escaped too (`\\t`), so it cannot fake a column or a line."""
    return printable(text).replace("\t", "\\t")


def _escape_annotation(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_annotation(text).replace(":", "%3A").replace(",", "%2C")


def workflow_command(
    level: str,
    message: str,
    *,
    file: str | None = None,
    line: int | None = None,
    title: str | None = None,
) -> str:
    """A GitHub annotation line: `::warning file=a.py,line=3,title=...::message`."""
    props = [
        f"{key}={_escape_property(str(value))}"
        for key, value in (("file", file), ("line", line), ("title", title))
        if value
    ]
    head = f"::{level} " + ",".join(props) if props else f"::{level}"
    return f"{head}::{_escape_annotation(message)}"


def line_of(reason: str) -> int | None:
    """The line a skip reason names (`syntax error at line 3: ...`), for an annotation."""
    found = re.search(r"\bat line (\d+)\b", reason)
    return int(found.group(1)) if found else None


_SUMMARY_SKIPPED_MAX = 50  # a job summary lists this many skipped files, then counts the rest


def skipped_markdown(skipped: list[tuple[str, str]]) -> str:
    """The skipped files (path, reason) as a Markdown list for the job summary; '' if none."""
    if not skipped:
        return ""
    lines = [f"- `{path}`: {reason}\n" for path, reason in skipped[:_SUMMARY_SKIPPED_MAX]]
    if len(skipped) > _SUMMARY_SKIPPED_MAX:
        lines.append(f"- ... and {len(skipped) - _SUMMARY_SKIPPED_MAX} more\n")
    return "\nSkipped files:\n\n" + "".join(lines)


class Tracker:
    """A handle on one running progress task."""

    def __init__(self, console: Console, label: str, total: int, task_id: int | None) -> None:
        self._console = console
        self._label = label
        self.total = total
        self.done = 0
        self._task_id = task_id
        self._last_logged = 0

    def advance(self, count: int = 1, **fields: object) -> None:
        self.done += count
        progress = self._console._progress
        if progress is not None and self._task_id is not None:
            progress.update(self._task_id, advance=count, **fields)
            return
        # Plain mode: a line at every 10% step and at the end, never one per item.
        step = max(1, self.total // 10)
        if self.done == self.total or self.done // step != self._last_logged // step:
            self._last_logged = self.done
            extra = "".join(f" {key}={value}" for key, value in fields.items())
            self._console.line(f"{self._label}: {self.done}/{self.total}{extra}")


class Console:
    """Where a command tells the person running it what happens (stderr), in one `Mode`."""

    def __init__(self, mode: Mode = "plain", stream: TextIO | None = None) -> None:
        self.mode = mode
        self.stream = stream or sys.stderr
        self._progress: Progress | None = None

    @classmethod
    def detect(cls, ci: bool | None = None) -> Console:
        return cls(detect_mode(ci))

    def colours_stdout(self) -> bool:
        """Whether the data printed on stdout may be coloured: an interactive run, stdout a
        terminal, and no `NO_COLOR` in the environment."""
        return self.mode == "tty" and sys.stdout.isatty() and "NO_COLOR" not in os.environ

    def line(self, text: str) -> None:
        """One line for the person running the command; control characters are escaped."""
        text = printable(text)
        if self._progress is not None:
            self._progress.console.print(text, markup=False, highlight=False)
        else:
            print(text, file=self.stream, flush=True)

    def warn(self, text: str, file: str | None = None, line: int | None = None) -> None:
        """A problem the run survived (skipped file, failed site, grounding warning)."""
        where = f"{file}:{line}: " if file and line else f"{file}: " if file else ""
        self.line(f"warning: {where}{text}")
        self.annotate(workflow_command("warning", text, file=file, line=line))

    def annotate(self, command: str) -> None:
        """Print a ready-made workflow command (`::notice file=...::...`) in github mode, on
        the console stream: the runner reads stderr too, and stdout stays data."""
        if self.mode == "github":
            print(printable(command), file=self.stream, flush=True)

    def step_summary(self, markdown: str) -> None:
        """Append Markdown to the GitHub job summary when running under Actions."""
        path = os.environ.get("GITHUB_STEP_SUMMARY")
        if self.mode == "github" and path:
            with open(path, "a", encoding="utf-8") as out:
                out.write(markdown.rstrip("\n") + "\n")

    @contextmanager
    def progress(self, label: str, total: int, *extra_columns: str) -> Iterator[Tracker]:
        """Track `total` units of work; `extra_columns` name fields shown beside the bar."""
        if self.mode != "tty" or self._progress is not None:
            yield Tracker(self, label, total, None)
            return
        from rich.console import Console as RichConsole
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        columns = [
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            _rate_column(),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            *(TextColumn(f"{name}={{task.fields[{name}]}}") for name in extra_columns),
        ]
        rich = RichConsole(file=self.stream, highlight=False)
        progress = Progress(*columns, console=rich, transient=False)
        self._progress = progress
        with progress:
            task_id = progress.add_task(label, total=total, **{n: 0 for n in extra_columns})
            try:
                yield Tracker(self, label, total, task_id)
            finally:
                self._progress = None
