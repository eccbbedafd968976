"""Command-line interface: each command parses its arguments and calls one pipeline function."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from pipeline import __version__
from pipeline.exits import Exit


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="vmine")
def main() -> None:
    """Mine the validation errors of a Python code base into explained error records."""
    from pipeline.console import ignore_parse_warnings

    ignore_parse_warnings()


class InputError(click.ClickException):
    """A problem with the user's input: one line on stderr, exit code 2."""

    exit_code = Exit.INPUT

    def __init__(self, message: str) -> None:
        from pipeline.console import printable

        super().__init__(printable(message))  # it may quote a hostile path or value


def _store_problem(error, hint: str) -> str:
    """A cache file SQLite cannot use (a StoreError), and how to get past it."""
    return f"{error}; {error.advice(hint)}"


def _one_line(error: Exception) -> str:
    """A pydantic ValidationError as one line: the first problem, with the value given."""
    from pydantic import ValidationError

    if isinstance(error, ValidationError):
        first = error.errors()[0]
        loc = first["loc"]
        # A single field is an option the user typed: name it as they typed it.
        where = "--" + str(loc[0]).replace("_", "-") if len(loc) == 1 else ".".join(map(str, loc))
        message = first["msg"].removeprefix("Value error, ")
        given = "" if "got" in message else f" (got {first.get('input')!r})"
        return f"{where}: {message}{given}"
    return str(error).splitlines()[0] if str(error) else type(error).__name__


def _path_problem(error: OSError, path: Path | None = None) -> str:
    """An output or cache path that cannot be created or written, as one line; `path` names
    the file the user gave when the error is about a temporary file beside it."""
    import errno

    name = path or error.filename
    where = f"{name}: " if name else ""
    if error.errno == errno.ENOSPC:
        return f"{where}{error.strerror}; free some space, or pass a directory on another disk"
    return f"{where}{error.strerror or error}; pass a directory you can write to"


# The errors a command turns into one line on stderr and exit 2, and how that line reads
# (`hint`: what the command's options offer against a cache file SQLite cannot use). Named,
# not imported: a command imports only the modules it uses (start-up time), and an error
# whose module was never imported cannot have been raised. OSError, the widest, is last.
_INPUT_ERRORS: tuple[tuple[str, str, Callable[[Any, str], str]], ...] = (
    ("pipeline.source.snapshot", "SourceError", lambda error, hint: _one_line(error)),
    ("pipeline.mine.run", "RunError", lambda error, hint: _one_line(error)),
    ("pipeline.mine.config", "ConfigError", lambda error, hint: _one_line(error)),
    ("pydantic", "ValidationError", lambda error, hint: _one_line(error)),
    ("pipeline.dataset.writer", "DatasetBusy", lambda error, hint: _one_line(error)),
    ("pipeline.explainers.base", "BatchError", lambda error, hint: _one_line(error)),
    ("pipeline.diff.sides", "DiffInputError", lambda error, hint: _one_line(error)),
    ("pipeline.site.command", "RenderError", lambda error, hint: str(error)),
    ("pipeline.history.releases", "HistoryError", lambda error, hint: _one_line(error)),
    ("pipeline.export.tables", "ExportError", lambda error, hint: _one_line(error)),
    ("pipeline.verify.run", "VerifyError", lambda error, hint: _one_line(error)),
    ("pipeline.verify.workers", "WorkerError", lambda error, hint: _one_line(error)),
    ("pipeline.store", "StoreError", _store_problem),
    # an output or cache path that cannot be written
    ("builtins", "OSError", lambda error, hint: _path_problem(error)),
)


def _input_error_line(error: Exception, hint: str) -> str | None:
    """The one line `_INPUT_ERRORS` gives `error`, or None when it is none of them (a bug:
    its traceback is worth more than a line)."""
    for module, name, line in _INPUT_ERRORS:
        kind = getattr(sys.modules.get(module), name, None)
        if kind is not None and isinstance(error, kind):
            return line(error, hint)
    return None


@contextmanager
def _user_errors(
    hint: str = "pass --cache-dir DIR",
    console: Any = None,
    interrupted: str | None = None,
) -> Iterator[None]:
    """A command's body: an error the user can fix becomes one line and exit 2 (see
    `_INPUT_ERRORS`); with `interrupted`, Ctrl-C prints it and exits 130."""
    try:
        yield
    except KeyboardInterrupt:
        if interrupted is None or console is None:
            raise
        console.line(interrupted)
        raise SystemExit(Exit.SIGINT) from None
    except click.ClickException:
        raise
    except Exception as error:
        line = _input_error_line(error, hint)
        if line is None:
            raise
        raise InputError(line) from None


# -- options more than one command takes, declared once ------------------------------------


def _source_options(command):
    """`--rev`, `--repo-name` and the release options `--tag-format` and `--path-prefix`,
    shared by `run` and `extract`."""
    for option in reversed(
        (
            click.option(
                "--rev",
                help="Commit SHA (full or abbreviated), tag or branch to analyse (default: HEAD).",
            ),
            click.option(
                "--repo-name",
                help="OWNER/NAME of the repository; needed when the origin is not a GitHub "
                "URL (for a pypi: SOURCE, when its metadata names no GitHub repository).",
            ),
            click.option(
                "--tag-format",
                "tag",
                metavar="FORMAT",
                help="For a pypi: SOURCE, the release's GitHub tag that githubUrl pins, with "
                "{version} for the version (default: v{version}; e.g. {version}, or "
                "langchain-core=={version}).",
            ),
            click.option(
                "--path-prefix",
                metavar="DIR/",
                help="For a pypi: SOURCE, the folder of the GitHub tree that holds the "
                "release's files (default: found from the sdist's layout and the project "
                "URL, e.g. src/).",
            ),
        )
    ):
        command = option(command)
    return command


# The rules' lists as options of `extract` and `run`: (Rules field, option, what a name
# given to it does); pipeline.toml's [targets.NAME.rules] takes the same fields.
_RULE_LISTS = (
    (
        "decorators",
        "--decorator",
        "Also count functions with this decorator as validators (kind pydantic), e.g. "
        "register_to_config for diffusers' configuration __init__s.",
    ),
    ("method_names", "--method-name", "Also count methods of this name (kind post_init)."),
    ("error_classes", "--error-class", "Also count raises of this exception class as sites."),
    (
        "init_methods",
        "--init-method",
        "Also count this method of a configuration class (kind init), as __init__.",
    ),
    (
        "config_suffixes",
        "--config-suffix",
        "Also count classes whose name ends in this as configuration classes.",
    ),
    (
        "config_decorators",
        "--config-decorator",
        "Also count classes with this decorator as configuration classes.",
    ),
    (
        "config_bases",
        "--config-base",
        "Also count classes deriving from this one as configuration classes.",
    ),
)


def _rule_options(command):
    """The validator rules of pipeline.toml's [targets.NAME.rules] as options of `run` and
    `extract`: each list option is repeatable and adds to the defaults; `--name-pattern`
    and `--follow-calls/--no-follow-calls` replace theirs."""
    options = [
        click.option(flag, field, multiple=True, metavar="NAME", help=text + " Repeatable.")
        for field, flag, text in _RULE_LISTS
    ]
    options += [
        click.option(
            "--name-pattern",
            metavar="REGEX",
            help="Count functions whose name this regular expression finds as validators "
            "(kind name), instead of the default name rule.",
        ),
        click.option(
            "--follow-calls/--no-follow-calls",
            default=None,
            help="Count what validators call, in their file or through an import in another "
            "file of the repository, as validators (kind reached; the default), or not.",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def _rules(options: dict[str, Any]):
    """The Rules the rule options in `options` give (taken out of it), or None when none was
    given."""
    added = {field: options.pop(field) for field, _, _ in _RULE_LISTS}
    name_pattern, follow_calls = options.pop("name_pattern"), options.pop("follow_calls")
    if not any(added.values()) and name_pattern is None and follow_calls is None:
        return None
    from pipeline.mine.config import command_line_rules

    flags = {field: flag for field, flag, _ in _RULE_LISTS}
    return command_line_rules(added, flags, name_pattern, follow_calls)


_cache_dir_option = click.option(
    "--cache-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Cache directory for git mirrors, releases and store.sqlite (default: "
    "$VMINE_CACHE_DIR, else the user cache directory).",
)
_scope_option = click.option(
    "--scope",
    type=click.Choice(["validators", "all"]),
    help="Which raises are sites: validators (the default) takes the raises of ValueError "
    "(and the repository's subclasses of it) inside validators; all takes them in any "
    "function, a function that is no validator giving validatorKind none.",
)
_ci_option = click.option(
    "--ci",
    is_flag=True,
    help="Batch mode (also when CI=true): plain progress lines, and annotations and a "
    "job summary under GitHub Actions.",
)


def _verify_options(command):
    """`--python`, `--jobs`, `--timeout`, `--memory` and `--env`, shared by `verify` and
    `run --verify`."""
    for option in reversed(
        [
            click.option(
                "--python",
                "python",
                default=None,
                help="The interpreter of an environment where the dataset's release is "
                "installed (default: the one running vmine). Its code is executed.",
            ),
            click.option(
                "--jobs",
                type=click.IntRange(1, 64),
                default=2,
                show_default=True,
                help="Worker processes of that interpreter running sites at once.",
            ),
            click.option(
                "--site-timeout",
                "site_timeout",
                type=click.FloatRange(0.1, 3600),
                default=20.0,
                show_default=True,
                help="Seconds one run of a site's reproducer may take.",
            ),
            click.option(
                "--memory",
                type=click.IntRange(64, 1 << 20),
                default=4096,
                show_default=True,
                help="MiB one run may map beyond what its imports mapped.",
            ),
            click.option(
                "--env",
                "environ",
                multiple=True,
                metavar="NAME=VALUE",
                help="An environment variable for the workers, which each reproducer also sets; repeatable.",
            ),
        ]
    ):
        command = option(command)
    return command


def _verify_settings(python, jobs, site_timeout, memory, environ):
    import sys as _sys

    from pipeline.verify.run import VerifyOptions

    pairs = {}
    for item in environ:
        name, equals, value = item.partition("=")
        if not equals or not name:
            raise InputError(f"--env: {item!r} is not NAME=VALUE")
        pairs[name] = value
    return VerifyOptions(
        python=python or _sys.executable,
        jobs=jobs,
        timeout=site_timeout,
        memory=memory << 20,
        environ=pairs,
    )


@main.command("run", short_help="Mine SOURCE, or the targets of a pipeline.toml, into a dataset.")
@click.argument("args", nargs=-1, metavar="SOURCE | TARGET...")
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Mine the targets of this pipeline.toml (all, or the TARGETs named) "
    "instead of one SOURCE.",
)
@_source_options
@click.option(
    "-o",
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Directory that receives OWNER/NAME/SHA/ (default: output).",
)
@click.option(
    "--llm",
    type=click.Choice(["auto", "openai", "offline"]),
    help="Explainer: openai when OPENAI_API_KEY or a base URL is set, else "
    "offline (auto, the default); or force one.",
)
@click.option("--model", help="Model name for the openai explainer.")
@click.option("--base-url", help="OpenAI-compatible server URL (default: $OPENAI_BASE_URL).")
@click.option(
    "--concurrency",
    type=click.IntRange(min=1),
    help="Explanation requests in flight at once (default: 8).",
)
@click.option(
    "--max-requests",
    type=click.IntRange(min=0),
    help="Stop starting requests after this many HTTP requests; the rest stay "
    "pending (exit code 3) and a rerun resumes.",
)
@click.option(
    "--max-tokens",
    type=click.IntRange(min=0),
    help="Stop starting requests after this many tokens; as --max-requests.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    metavar="SECONDS",
    help="Time limit of each LLM request in all, its whole answer included (default: 600).",
)
@click.option(
    "--idle-timeout",
    type=click.FloatRange(min=0, min_open=True),
    metavar="SECONDS",
    help="Longest an LLM request may wait for the next token of its streamed answer, the "
    "first one included (default: 120): a slow model still sending tokens is not stuck. A "
    "server that does not stream has only --timeout.",
)
@click.option(
    "--response-format",
    type=click.Choice(["auto", "json_schema", "json_object"]),
    help="How the answer's shape is asked for: json_schema (structured output), "
    "json_object (JSON mode, the schema in the prompt), or auto (the default): "
    "json_schema, falling back once to json_object for a server that refuses it.",
)
@click.option(
    "--batch",
    is_flag=True,
    default=None,
    help="Explain through the Batch API (half the price, no rate limits): upload "
    "the requests, poll the batch, ingest its results; repairs and what a batch "
    "left go out in a second batch. The batch id is stored in the cache, so an "
    "interrupted run resumes polling it.",
)
@click.option(
    "--batch-file",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="Only write the requests the cache cannot answer to FILE (Batch API JSONL, "
    "e.g. for python -m vllm.entrypoints.openai.run_batch), and nothing else.",
)
@click.option(
    "--batch-results",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="Take the answers from FILE, the results of a --batch-file "
    "run elsewhere, and write the dataset.",
)
@click.option(
    "--batch-poll",
    type=click.FloatRange(min=0, min_open=True),
    metavar="SECONDS",
    help="How often --batch asks how the batch is doing (default: 30).",
)
@click.option(
    "--dry-run",
    is_flag=True,
    default=None,
    help="Count sites (cached and to request) and estimate tokens; write nothing.",
)
@click.option(
    "--cache",
    type=click.Path(dir_okay=False, path_type=Path),
    help="SQLite cache file (default: store.sqlite in the cache directory).",
)
@_cache_dir_option
@click.option(
    "--dataset-version",
    help="Pin the datasetVersion timestamp (YYYY-MM-DDTHH:MM:SS.mmmZ) instead of the current time.",
)
@click.option(
    "--command",
    help="The entry point users run, e.g. 'vllm serve MODEL': example "
    "fixes start their command lines with it (pipeline.toml: a target's command).",
)
@_rule_options
@_scope_option
@click.option(
    "--verify",
    "verify",
    is_flag=True,
    help="Then verify the dataset (`vmine verify`: executes the target's code) with the "
    "interpreter of --python; with --llm openai, a fix of the model's that fails is sent back "
    "to it once with what it raised, and the model writes a program for a site the solver "
    "could not trigger (run, and kept only when it verifies).",
)
@_verify_options
@_ci_option
def run_command(
    args: tuple[str, ...],
    config_path: Path | None,
    ci: bool,
    verify: bool,
    python,
    jobs,
    site_timeout,
    memory,
    environ,
    **options,
) -> None:
    """Mine SOURCE (a path, git URL, OWNER/NAME or pypi:NAME==VERSION) into explained records
    under OUT/OWNER/NAME/SHA/. The dataset is written whole beside the old one and swapped in,
    and a run that leaves sites unexplained keeps a complete dataset already there.
    Exit codes: 0 done, 1 some files skipped, sites failed or records fell back to the
    offline explainer, 2 usage or input error (also: another run is writing the same
    output, or --llm openai and the server refused the connection), 3 a budget ran out
    (rerun to resume), 130/143 interrupted (what finished is written and cached)."""
    from pipeline.console import Console
    from pipeline.mine.run import RunOptions, run_dataset

    console = Console.detect(ci or None)
    checks = _verify_settings(python, jobs, site_timeout, memory, environ) if verify else None
    with _user_errors("pass --cache PATH", console, interrupted="interrupted"):
        rules = _rules(options)
        overrides = {key: value for key, value in options.items() if value is not None}
        if config_path is not None:
            from pipeline.mine.config import ConfigError
            from pipeline.mine.targets import run_targets

            if rules is not None:
                raise ConfigError(
                    "the rule options do not apply with --config: each target sets its own "
                    "in [targets.NAME.rules]"
                )
            code = run_targets(config_path, list(args), overrides, console, verify=checks)
        else:
            if len(args) != 1:
                raise click.UsageError("give exactly one SOURCE (or --config FILE [TARGET...])")
            if rules is not None:
                overrides["rules"] = rules
            run_options = RunOptions(source=args[0], **overrides)
            outcome = run_dataset(run_options, console)
            code = outcome.exit_code
            if checks is not None and outcome.dataset_dir is not None:
                from pipeline.verify.command import run_verify, with_model

                run_verify(outcome.dataset_dir, with_model(checks, run_options), console)
    raise SystemExit(code)


@main.command("extract", short_help="Print the raise sites of SOURCE as JSON Lines.")
@click.argument("source")
@_source_options
@click.option(
    "-o",
    "--output",
    "output",
    type=click.Path(dir_okay=False, allow_dash=True, path_type=Path),
    help="Write the JSON Lines to this file instead of stdout (- is stdout). A "
    "regular file is replaced atomically; a device, FIFO or symlink is written "
    "into.",
)
@_cache_dir_option
@click.option(
    "--no-cache",
    is_flag=True,
    help="Analyse every file again instead of reusing cached per-file analyses.",
)
@click.option(
    "--strict",
    is_flag=True,
    help="Treat a skipped file as fatal: report it, write no output and exit 1.",
)
@click.option(
    "--include",
    multiple=True,
    metavar="GLOB",
    help="Only analyse .py files whose path matches this glob (* also matches /); repeatable.",
)
@click.option(
    "--exclude",
    multiple=True,
    metavar="GLOB",
    help="Leave out .py files whose path matches this glob; repeatable.",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    help="Processes that analyse files (default: the number of CPUs).",
)
@_rule_options
@_scope_option
@_ci_option
def extract_command(
    source: str,
    rev: str | None,
    repo_name: str | None,
    tag: str | None,
    path_prefix: str | None,
    output: Path | None,
    cache_dir: Path | None,
    no_cache: bool,
    strict: bool,
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    workers: int | None,
    scope: str | None,
    ci: bool,
    **rule_options: Any,
) -> None:
    """Print every raise site of SOURCE (a path, git URL, OWNER/NAME or pypi:NAME==VERSION)
    as JSON Lines, one site per line, sorted by filePath then lineNumber; the same input
    always gives the same bytes. Each site lists the settings its guards and message read:
    the config field, its type, default and accepted values, and the flags that set it.
    Skipped files are listed on stderr, followed by a summary
    line. Exit codes: 0 done, 1 some files were skipped (with --strict: nothing is written),
    2 usage or input error, 130 interrupted (files analysed so far stay cached)."""
    from pipeline.cache_dir import resolve_cache_dir
    from pipeline.console import Console
    from pipeline.mine.opening import open_importing

    console = Console.detect(ci or None)
    with _user_errors(
        "pass --no-cache or --cache-dir DIR",
        console,
        interrupted="interrupted: analyses finished so far are cached; rerun to resume",
    ):
        rules = _rules(rule_options)
        cache_dir = resolve_cache_dir(cache_dir)
        # the source opens while the extract stage imports (pipeline/mine/opening.py)
        snapshot = open_importing(
            source,
            rev,
            cache_dir=cache_dir,
            repo_name=repo_name,
            tag=tag,
            path_prefix=path_prefix,
            console=console,
        )
        from pipeline.mine.extract import run_extract

        code, text = run_extract(
            source,
            rev,
            output=output,
            strict=strict,
            console=console,
            snapshot=snapshot,
            cache_dir=cache_dir,
            use_cache=not no_cache,
            include=list(include),
            exclude=list(exclude),
            workers=workers,
            rules=rules,
            scope=scope,
        )
    if text is not None:
        click.echo(text, nl=False)
    raise SystemExit(code)


@main.command("schema", short_help="Print the JSON Schema of a dataset file.")
@click.argument(
    "kind",
    type=click.Choice(["record", "envelope", "index", "manifest", "verification"]),
    default="record",
)
def schema_command(kind: str) -> None:
    """Print the JSON Schema of a dataset file: a record (default), the envelope of a
    records/ID.json file, a line of index.jsonl, manifest.json, or a line of
    verification.jsonl (`vmine verify`)."""
    from pipeline.dataset.schema import json_schema

    click.echo(json_schema(kind), nl=False)


@main.command("diff", short_help="Compare the error sets of two datasets or revisions.")
@click.argument("old")
@click.argument("new")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "markdown", "json", "sarif"]),
    default="text",
    show_default=True,
    help="text for a terminal, markdown for a pull-request comment or job summary, "
    "json for programs (shape in docs/diff.md), sarif (2.1.0) for GitHub code scanning: "
    "a result per added, reworded or changed error at its line in NEW.",
)
@click.option(
    "--exit-code",
    is_flag=True,
    help="Exit with 1 when anything was added, removed, reworded, moved or changed.",
)
@_cache_dir_option
@_scope_option
@_ci_option
def diff_command(
    old: str,
    new: str,
    fmt: str,
    exit_code: bool,
    cache_dir: Path | None,
    scope: str | None,
    ci: bool,
) -> None:
    """Compare the error sets of OLD and NEW: which errors were added, removed, reworded,
    moved or changed. Each is a dataset folder (one holding manifest.json, or a folder with
    exactly one dataset under it), SOURCE@REV, or pypi:NAME==VERSION (extracted, not
    explained, in --scope). Exit codes: 0 done (with --exit-code: no difference), 1 with
    --exit-code when something differs, 2 usage or input error."""
    from pipeline.console import Console
    from pipeline.diff.command import run_diff

    console = Console.detect(ci or None)
    color = console.colours_stdout()
    with _user_errors("pass --cache-dir DIR"):
        output, diff = run_diff(
            old,
            new,
            fmt=fmt,
            console=console,
            color=color,
            cache_dir=cache_dir,
            scope=scope or "validators",
        )
    click.echo(output, nl=False, color=color)
    raise SystemExit(Exit.PROBLEMS if exit_code and diff.differs else Exit.OK)


# A message often starts with `--` (`--use-x requires ...`): take it as MESSAGE, not an option.
@main.command(
    "explain",
    context_settings={"ignore_unknown_options": True},
    short_help="Find the record that explains an error message or traceback.",
)
@click.argument("message")
@click.option(
    "--dataset",
    "datasets",
    multiple=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="A dataset folder, or a folder holding datasets; repeatable (default: every "
    "dataset under ./output and under datasets/ in the cache directory, for the release "
    "of each target installed in this environment when there is a dataset of it).",
)
@click.option(
    "--release",
    metavar="NAME==VERSION",
    help="Search this published release alone (e.g. vllm==0.28.0); the first time, it is "
    "mined from PyPI with the offline explainer into datasets/ in the cache directory.",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the best matching records (with --all: every candidate) as JSON "
    "Lines, best first: how each matched, the releases holding it, its envelope.",
)
@click.option(
    "--all",
    "show_all",
    is_flag=True,
    help="List every candidate record with its score instead of the best page.",
)
@_cache_dir_option
def explain_command(
    message: str,
    datasets: tuple[Path, ...],
    release: str | None,
    as_json: bool,
    show_all: bool,
    cache_dir: Path | None,
) -> None:
    """Find the record that explains MESSAGE: an error message, a `ValueError: ...` line, a
    whole pasted traceback, or a client's or logger's wrapping of it (pydantic items, HTTP
    errors, JSON bodies, log prefixes, colours, wrapped lines); `-` reads it from stdin. A
    message in another release's wording matches when one record clearly explains it.
    Without --dataset it looks in ./output and in the cache directory's datasets/ (where
    --release keeps what it mines), and says which release it searched. When several
    functions raise the same text, the traceback's frames pick the one that ran; without
    them the result is ambiguous. Exit codes: 0 a record matches, 1 ambiguous or only
    approximate (similar) records, 2 no dataset."""
    import sys

    from pipeline.lookup.command import explain
    from pipeline.lookup.index import ExplainError

    text = sys.stdin.read() if message == "-" else message
    if not text.strip():
        raise InputError("MESSAGE is empty: pass the error message, or - and paste it on stdin")
    from pipeline.lookup.page import printable

    try:
        with _user_errors("pass --cache-dir DIR"):
            explained = explain(
                text,
                list(datasets),
                fmt="json" if as_json else "text",
                show_all=show_all,
                release=release,
                cache_dir=cache_dir,
            )
    except ExplainError as error:
        for warning in error.warnings:
            click.echo(f"warning: {printable(warning)}", err=True)
        raise InputError(str(error)) from None  # InputError escapes it
    for warning in explained.warnings:
        click.echo(f"warning: {warning}", err=True)
    for note in explained.notes:
        click.echo(f"note: {note}", err=True)
    click.echo(explained.output, nl=False)
    raise SystemExit(explained.code)


@main.command(
    "verify", short_help="Run each site's validator in the target's environment (executes it)."
)
@click.argument("dataset", type=click.Path(file_okay=False, path_type=Path))
@_verify_options
@click.option("--ci", is_flag=True, help="Plain progress lines, as on CI.")
def verify_command(dataset: Path, ci: bool, **options) -> None:
    """Run the validator of every site of DATASET in an environment where its release is
    installed (`--python`), with inputs solved from each site's guards, and write what
    happened to verification.jsonl beside index.jsonl (counts in the manifest). This
    EXECUTES THE TARGET'S CODE, in worker processes with a time limit and a memory cap, the
    network refused and no GPU. A site whose installed raise line differs from the record is
    `stale`; a dataset of another release is refused. Outcomes: verified (this line, the
    message matched by messagePattern; with a reproducer: the target's own parser and
    configuration path on a command line with a tiny model folder where that raises it,
    else the validator called directly), mismatch, raised-elsewhere,
    other-exception, no-raise, not-importable, not-callable, stale. A verified site's
    exampleFix is applied to its reproducer (fix: verified, fails, untested), and every
    exampleFix command line is parsed by the target's own parser (fixCommand: accepted,
    differs, rejected)."""
    from pipeline.console import Console
    from pipeline.verify.command import run_verify

    settings = _verify_settings(**options)
    console = Console.detect(ci=ci or None)
    with _user_errors():
        run_verify(dataset, settings, console)


@main.command("render", short_help="Render a dataset as Markdown pages or a static HTML site.")
@click.argument("dataset", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["markdown", "html"]),
    default="markdown",
    show_default=True,
    help="markdown: a page per record and index.md; html: a static site (index.html "
    "with search, errors/ID.html, api/errors/ID.json) that works from file://.",
)
@click.option(
    "-o",
    "--out",
    "out_dir",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Directory to write the pages into (created if missing).",
)
def render_command(dataset: Path, fmt: str, out_dir: Path) -> None:
    """Render the dataset in DATASET (a folder holding manifest.json, or one dataset under
    it) as Markdown pages or a static HTML site."""
    from pipeline.site.command import render

    with _user_errors():
        written = render(dataset, fmt, out_dir)
    from pipeline.console import printable

    click.echo(printable(f"wrote {len(written)} files to {out_dir}"))


@main.command(
    "history",
    short_help="Trace every error of SOURCE across its releases.",
    options_metavar="--releases R1 [R2 ...] [OPTIONS]",
)
@click.argument("source")
@click.argument("more_releases", nargs=-1, metavar="")
@click.option(
    "--releases",
    "releases",
    multiple=True,
    metavar="R1 [R2 ...]",
    help="The releases, oldest first: versions for a pypi:NAME SOURCE (or a range "
    "FIRST..LAST of its published versions, e.g. 0.28.0..0.33.0), else commits or tags.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "markdown", "json"]),
    default="text",
    show_default=True,
    help="text for a terminal, markdown for a page or job summary, json for programs "
    "(shape in docs/history.md).",
)
@click.option(
    "--match",
    "match",
    metavar="TEXT",
    help="Only the errors whose message, function or file contains TEXT (any case).",
)
@_cache_dir_option
@_scope_option
@_ci_option
def history_command(
    source: str,
    more_releases: tuple[str, ...],
    releases: tuple[str, ...],
    fmt: str,
    match: str | None,
    cache_dir: Path | None,
    scope: str | None,
    ci: bool,
) -> None:
    """Give each error of SOURCE its timeline across releases: where it was first and last
    seen, and the releases where it was reworded, moved or changed (its guards, pattern or
    settings). SOURCE is pypi:NAME (releases are versions) or a path, git URL or OWNER/NAME
    (releases are commits or tags). Each release is extracted once, without explanations;
    the per-file cache makes each release after the first pay only for what it changed.
    Exit codes: 0 done, 2 usage or input error, 130 interrupted."""
    from pipeline.console import Console
    from pipeline.history.command import run_history

    if more_releases and not releases:
        raise click.UsageError("name the releases after --releases: --releases R1 R2 ...")
    console = Console.detect(ci or None)
    interrupted = "interrupted: releases extracted so far are cached; rerun to resume"
    with _user_errors("pass --cache-dir DIR", console, interrupted=interrupted):
        output, _ = run_history(
            source,
            [*releases, *more_releases],
            fmt=fmt,
            match=match,
            cache_dir=cache_dir,
            console=console,
            scope=scope or "validators",
        )
    click.echo(output, nl=False)


@main.command("export", short_help="Write datasets as a Hugging Face dataset (Parquet and a card).")
@click.argument("datasets", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["hf"]),
    default="hf",
    show_default=True,
    help="hf: Parquet files (the records, and the index with settings and verification as "
    "nested columns) and a README.md dataset card with the Hub's YAML header.",
)
@click.option(
    "-o",
    "--out",
    "out_dir",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder to write into (created if missing; other files in it, such as a clone's "
    ".git, are left alone).",
)
@click.option(
    "--license",
    "license_id",
    default="unknown",
    show_default=True,
    help="The license id the card declares (a Hub license id, e.g. apache-2.0).",
)
@click.option(
    "--name",
    metavar="OWNER/NAME",
    help="The dataset's name on the Hub, for the card's loading example.",
)
def export_command(
    datasets: tuple[Path, ...], fmt: str, out_dir: Path, license_id: str, name: str | None
) -> None:
    """Export each DATASET (a dataset folder, or a folder holding several, e.g. every release
    mined under output/vllm-project/vllm) as one Hugging Face dataset: a `records` and an
    `index` table with a `release` column, and a dataset card. Needs pyarrow
    (pip install 'vmine[export]'). Exit codes: 0 done, 2 usage or input error."""
    from pipeline.console import Console
    from pipeline.export.command import export_hf

    console = Console.detect(None)
    with _user_errors():
        export_hf(list(datasets), out_dir, license_id=license_id, name=name, console=console)
