"""`vmine verify`: run each site's validator in the target's environment and write what
happened beside the dataset (verification.jsonl, and counts in the manifest).

Before anything runs, each site's installed file is read: its raise line must be the one the
record holds, else the site is `stale`; a dataset whose release is not the one installed, or
whose raise lines mostly differ, is refused in one line. Then each site is tried: its guards
and priorChecks solved (solve.py), its reproducer planned (plan.py) and run by a worker
(workers.py), the next way through an `or` tried when one fails, and a run that raised at
another site of the dataset tried again with that site's guards negated. With the run's model
(`vmine run --llm openai --verify`), a site none of these runs triggered is given to the model,
whose program is run the same way and kept only when it verifies (retry.py).
"""

from __future__ import annotations

import ast
import re
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.dataset.models import IndexEntry, Site
from pipeline.dataset.reader import Dataset, load_dataset
from pipeline.dataset.verification import OUTCOMES, Verification, VerificationSummary
from pipeline.dataset.writer import write_verification
from pipeline.explainers.offline.candidates import fix_candidates
from pipeline.verify.commandline import (
    CommandLine,
    arguments,
    changed,
    command_arguments,
    command_text,
    find_entry,
    model_field,
    program,
)
from pipeline.verify.fixes import (
    after_half,
    as_compared,
    command_words,
    fix_changes,
    flag_values,
    through_locals,
)
from pipeline.verify.installed import (
    function_at,
    not_none_test,
    passing_test,
    passing_test_through_call,
    raise_line,
)
from pipeline.verify.outcome import judged
from pipeline.verify.parsers import (
    Builder,
    command_line,
    find_builder,
    parse_program,
    parse_result,
)
from pipeline.verify.plan import plan, with_changes
from pipeline.verify.probe import ABSENT
from pipeline.verify.solve import solutions
from pipeline.verify.stated import stated_variables, with_environment
from pipeline.verify.turns import Turns
from pipeline.verify.workers import Worker, worker_environment

if TYPE_CHECKING:  # the model's client (openai) is imported only by a run that has one
    from pipeline.verify.retry import ModelFixes

_RELEASE = re.compile(r"^pypi:(?P<name>[^=]+)==(?P<version>.+)$")
MAX_RUNS = 12  # runs per site at most
COMMAND_LINES = 3  # command lines per site at most (each a different way through its guards)
# The outcomes of a site the solver could not trigger: the run's model may write a program
UNTRIGGERED = ("raised-elsewhere", "other-exception", "no-raise")


class VerifyError(Exception):
    """A dataset that cannot be verified with this interpreter (one line for the user)."""


@dataclass(frozen=True)
class VerifyOptions:
    python: str = sys.executable
    jobs: int = 2
    timeout: float = 20.0  # seconds per run of a reproducer
    memory: int = 4 << 30  # bytes a run may map beyond the imports
    environ: Mapping[str, str] = field(default_factory=dict)  # added to the workers'
    # the model that wrote the records (`run --llm openai --verify`): a fix of its that
    # fails is sent back to it once (retry.ModelFixes)
    model: ModelFixes | None = None


@dataclass(frozen=True)
class VerifyOutcome:
    root: Path
    summary: VerificationSummary
    verifications: list[Verification]


@dataclass(frozen=True)
class _Site:
    entry: IndexEntry
    installed: str  # the installed file's path
    module: str
    text: str  # the installed file's text


def verify_dataset(
    path: Path, options: VerifyOptions, progress: Callable[[int, int], None] | None = None
) -> VerifyOutcome:
    """Verify the dataset in `path` and write the outcomes into it."""
    started = time.perf_counter()
    dataset = load_dataset(path)
    environ = worker_environment(options.environ)
    variables = stated_variables(options.environ)
    turns = Turns()
    workers = [Worker(options.python, environ, turns) for _ in range(max(1, options.jobs))]
    try:
        release, python, sites, stale, missing = _survey(dataset, workers[0])
        verifications = {entry.id: stale_site(entry, release) for entry in stale}
        for entry in missing:
            verifications[entry.id] = Verification(
                id=entry.id,
                outcome="not-importable",
                release=release,
                message=f"{entry.filePath} is not installed",
            )
        by_line = {(entry.filePath, entry.lineNumber): entry for entry in dataset.entries}
        builder, line = _command_line(dataset, sites)
        done = [len(verifications)]
        lock = threading.Lock()
        pool: list[Worker] = list(workers)
        pool_lock = threading.Lock()

        def one(site: _Site) -> Verification:
            with pool_lock:
                worker = pool.pop()
            try:
                with turns:  # ast is not thread-safe in CPython 3.11.7 (turns.py)
                    result = verify_site(site, dataset, by_line, worker, options, release, line)
            finally:
                with pool_lock:
                    pool.append(worker)
            with lock:
                done[0] += 1
                if progress:
                    progress(done[0], len(dataset.entries))
            if result.reproducer:
                stated = with_environment(result.reproducer, variables)
                result = result.model_copy(update={"reproducer": stated})
            return result

        ordered = sorted(sites, key=lambda site: (site.module, site.entry.lineNumber))
        with ThreadPoolExecutor(max_workers=len(workers)) as executor:
            for result in executor.map(one, ordered):
                verifications[result.id] = result
        if builder is not None:
            for entry in dataset.entries:
                checked = _command_check(entry, dataset, builder, workers[0], options)
                if checked:
                    verifications[entry.id] = verifications[entry.id].model_copy(update=checked)
    finally:
        for worker in workers:
            worker.close()
    in_order = [verifications[entry.id] for entry in dataset.entries]
    summary = _summary(dataset, in_order, release, python, time.perf_counter() - started)
    if builder is not None:
        where = ".".join([builder.module, *builder.classes, builder.name])
        summary = summary.model_copy(update={"parser": where})
    manifest = dataset.manifest.model_copy(update={"verification": summary})
    write_verification(dataset.root, in_order, manifest)
    return VerifyOutcome(dataset.root, summary, in_order)


def stale_site(entry: IndexEntry, release: str) -> Verification:
    return Verification(id=entry.id, outcome="stale", release=release)


def _survey(dataset: Dataset, worker: Worker):
    """The release that runs, the interpreter's version, the sites to run, the stale ones and
    those whose file is not installed; VerifyError when the installed release is not the
    dataset's."""
    wanted = _RELEASE.match(dataset.manifest.source)
    distribution = wanted["name"] if wanted else None
    paths = sorted({entry.filePath for entry in dataset.entries})
    answer = worker.ask({"op": "survey", "files": paths, "distribution": distribution})
    if "files" not in answer:
        raise VerifyError(f"{worker.python}: the verify worker did not start ({answer})")
    python = answer.get("python", "?")
    if wanted:
        installed = answer.get("version")
        if installed is None:
            raise VerifyError(
                f"{worker.python} has no {distribution} installed; the dataset is "
                f"{distribution} {wanted['version']} (pass --python of an environment with it)"
            )
        if installed != wanted["version"]:
            raise VerifyError(
                f"{worker.python} has {distribution} {installed}; the dataset is "
                f"{distribution} {wanted['version']} (install that release, or pass --python)"
            )
        release = f"{distribution} {installed}"
    else:
        release = f"python {python}"
    texts: dict[str, str] = {}
    sites: list[_Site] = []
    stale: list[IndexEntry] = []
    missing: list[IndexEntry] = []
    for entry in dataset.entries:
        found = answer["files"].get(entry.filePath)
        record = dataset.records[entry.id]
        recorded = raise_line(record.sourceCode, entry.lineNumber - record.sourceCodeStart + 1)
        if found is None:
            missing.append(entry)
            continue
        if found["path"] not in texts:
            try:
                texts[found["path"]] = Path(found["path"]).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                texts[found["path"]] = ""
        text = texts[found["path"]]
        if raise_line(text, entry.lineNumber) != recorded:
            stale.append(entry)
            continue
        sites.append(_Site(entry, found["path"], found["module"], text))
    if dataset.entries and len(stale + missing) * 2 > len(dataset.entries):
        raise VerifyError(
            f"{dataset.root}: {len(stale + missing)} of {len(dataset.entries)} raise lines "
            f"differ from (or are missing in) what {worker.python} has installed ({release}); it is not the release the "
            f"dataset was mined from"
        )
    return release, python, sites, stale, missing


def verify_site(
    site: _Site,
    dataset: Dataset,
    by_line: Mapping[tuple[str, int], IndexEntry],
    worker: Worker,
    options: VerifyOptions,
    release: str,
    line: CommandLine | None = None,
) -> Verification:
    """The best outcome of the runs of one site's reproducers: the target's own command line
    first, when the site's settings have flags and the target has a configuration path that
    takes them (commandline.py), else the validator called directly."""
    entry = site.entry
    function = function_at(site.text, entry.qualname, entry.lineNumber)
    if function is None:
        return Verification(
            id=entry.id,
            outcome="not-callable",
            release=release,
            message=f"no function {entry.qualname} holds line {entry.lineNumber}",
        )
    if line is not None and any(setting.flags for setting in entry.settings):
        found = _by_command_line(site, function, line, dataset, by_line, worker, options, release)
        if found is not None:
            return found
    called = _by_call(site, function, dataset, by_line, worker, options, release)
    if options.model is not None and called.outcome in UNTRIGGERED:
        written = _by_model(site, called, dataset, worker, options, release)
        if written is not None:
            return written
    return called


def _by_model(
    site: _Site,
    called: Verification,
    dataset: Dataset,
    worker: Worker,
    options: VerifyOptions,
    release: str,
) -> Verification | None:
    """The site verified by a program the run's model wrote, told what the solver's runs did;
    None when it wrote none, or its program does not raise the message at this line."""
    assert options.model is not None
    mined = _mined_site(site, dataset)
    if mined is None:
        return None
    where = f" at {called.filePath or ''}:{called.lineNumber}" if called.lineNumber else ""
    raised = f"{called.raisedClass}: " if called.raisedClass else ""
    observed = f"{called.outcome}{where}" + (
        f" ({raised}{called.message})" if called.message else ""
    )
    with worker.turns.waiting():
        written = options.model.program(mined, release, site.module, observed)
    if written is None:
        return None
    entry = site.entry
    header = f"# vmine verify: {entry.filePath}:{entry.lineNumber} ({release}), the model's program"
    code = f"{header}\n{written}"
    answer = _run(worker, site.module, code, options)
    result = judged(entry, answer, site.installed, release, code, called.attempts + 1)
    if result.outcome != "verified":
        return None
    return _verified_call(result, "model", site, worker, dataset, options, release)


def _verified_call(
    result: Verification,
    kind: str,
    site: _Site,
    worker: Worker,
    dataset: Dataset,
    options: VerifyOptions,
    release: str,
) -> Verification:
    """A site verified by running a program (`kind`: the solver's call or the model's):
    its fix tried on that program."""
    result = result.model_copy(update={"reproducerKind": kind})
    return _with_fix(
        result,
        site,
        worker,
        dataset,
        options,
        release,
        lambda fix: _fix_result(fix, result, site, worker, options, release),
    )


def _by_call(
    site: _Site,
    function,
    dataset: Dataset,
    by_line: Mapping[tuple[str, int], IndexEntry],
    worker: Worker,
    options: VerifyOptions,
    release: str,
) -> Verification:
    """The validator called directly, with inputs solved from its guards."""
    entry = site.entry
    header = f"vmine verify: {entry.filePath}:{entry.lineNumber} ({release})"
    best: Verification | None = None
    runs = 0
    tried: set[str] = set()
    # Test lists to solve, the site's own first; a raise that fired first at another site
    # puts that site's guards, negated, in front.
    pending = [[*entry.guards, *entry.priorChecks]]
    while pending and runs < MAX_RUNS:
        tests = pending.pop(0)
        plans = [
            plan(site.module, function, way, entry.settings, header)
            for way in solutions(tests, function.locals)
        ]
        plans.sort(key=lambda planned: len(planned.unplaced))  # the most complete first
        for planned in plans:
            if planned.code in tried or runs >= MAX_RUNS:
                continue
            tried.add(planned.code)
            runs += 1
            answer = _run(worker, site.module, planned.code, options)
            code = with_absent(planned.code, answer.get("absent"), site.module)
            result = judged(entry, answer, site.installed, release, code, runs)
            if best is None or result.better_than(best):
                best = result
            if result.outcome == "verified":
                return _verified_call(result, "call", site, worker, dataset, options, release)
            if result.outcome == "not-importable":
                return result
            before = _earlier_site(result, site, entry, by_line, answer.get("frames") or [])
            if before is not None and before not in tests:
                pending.insert(0, [*tests, before])
                break
    if best is None:
        return Verification(id=entry.id, outcome="no-raise", release=release)
    return best.model_copy(update={"attempts": runs})


def _by_command_line(
    site: _Site,
    function,
    line: CommandLine,
    dataset: Dataset,
    by_line: Mapping[tuple[str, int], IndexEntry],
    worker: Worker,
    options: VerifyOptions,
    release: str,
) -> Verification | None:
    """The site verified from the target's own command line (the flags of a way through its
    guards, a tiny model folder); None when no such run raises its message at its line."""
    entry = site.entry
    header = f"vmine verify: {entry.filePath}:{entry.lineNumber} ({release}), from the command line"
    tried: set[tuple[str, ...]] = set()
    # Tests and settings to solve, the site's own first; a run that raised first at another
    # site of the dataset puts that site's guards, negated, and its settings beside them.
    # the settings of the function's other sites too: its prior checks read them
    own = {setting.expr for setting in entry.settings}
    beside = [
        setting
        for other in dataset.entries
        if (other.filePath, other.qualname) == (entry.filePath, entry.qualname)
        for setting in other.settings
        if setting.expr not in own
    ]
    pending = [([*entry.guards, *entry.priorChecks], [*entry.settings, *beside])]
    while pending and len(tried) < COMMAND_LINES:
        tests, settings = pending.pop(0)
        for way in solutions(tests, function.locals):
            words = arguments(way, settings, function.locals, model_field(line.entry))
            argv = command_arguments(line.entry, words)
            if not words or tuple(argv) in tried or len(tried) >= COMMAND_LINES:
                continue
            tried.add(tuple(argv))
            result, code = _command_run(line, argv, header, site, worker, options, release)
            if result.outcome == "verified":
                result = result.model_copy(
                    update={
                        "reproducerKind": "command-line",
                        "commandLine": command_text(argv),
                        "reproducer": code,
                        "attempts": len(tried),
                    }
                )
                return _command_verified(
                    result,
                    words,
                    line,
                    header,
                    site,
                    function,
                    dataset,
                    by_line,
                    worker,
                    options,
                    release,
                )
            first = _other_site(result, site, by_line)
            if first is not None and first.guards:
                negated = "not (" + " and ".join(f"({guard})" for guard in first.guards) + ")"
                if negated not in tests:
                    pending.insert(0, ([*tests, negated], [*settings, *first.settings]))
                    break
    return None


def _other_site(
    result: Verification, site: _Site, by_line: Mapping[tuple[str, int], IndexEntry]
) -> IndexEntry | None:
    """The site of the dataset where a run raised first, when it is one."""
    prefix = site.installed[: -len(site.entry.filePath)]
    where = result.filePath or ""
    if result.outcome not in ("raised-elsewhere", "other-exception") or not where.startswith(
        prefix
    ):
        return None
    other = by_line.get((where[len(prefix) :], result.lineNumber or 0))
    return other if other is not None and other.id != site.entry.id else None


def _command_verified(
    result: Verification,
    words: dict[str, list[str]],
    line: CommandLine,
    header: str,
    site: _Site,
    function,
    dataset: Dataset,
    by_line: Mapping[tuple[str, int], IndexEntry],
    worker: Worker,
    options: VerifyOptions,
    release: str,
) -> Verification:
    """A site verified from the command line, with its fix run by putting the fix's flags on
    that command line (the direct call's fix check when the fix sets no flag)."""

    def trial(fix: str) -> tuple[str, str | None]:
        return _command_fix(fix, words, line, header, site, worker, options, release)

    record = dataset.records[site.entry.id]
    if trial(record.exampleFix)[0] == "untested":
        called = _by_call(site, function, dataset, by_line, worker, options, release)
        kept = ("fix", "fixMessage", "chosenFix", "fixRetry")
        if called.outcome == "verified":
            return result.model_copy(update={key: getattr(called, key) for key in kept})
        return result.model_copy(update={"fix": "untested"})
    return _with_fix(result, site, worker, dataset, options, release, trial)


def _command_run(
    line: CommandLine,
    argv: list[str],
    header: str,
    site: _Site,
    worker: Worker,
    options: VerifyOptions,
    release: str,
) -> tuple[Verification, str]:
    """One run of the target's configuration path on `argv`: its outcome, and the program."""
    code = program(line, argv, header)
    answer = _run(worker, line.entry.module, code, options)
    code = with_absent(code, answer.get("absent"), line.entry.module)
    return judged(site.entry, answer, site.installed, release, code, 1), code


def _command_fix(
    example_fix: str,
    words: dict[str, list[str]],
    line: CommandLine,
    header: str,
    site: _Site,
    worker: Worker,
    options: VerifyOptions,
    release: str,
) -> tuple[str, str | None]:
    """Whether `example_fix`'s flags, put on the verified command line, stop the raise:
    (`verified`, None), (`fails`, what it raised) or (`untested`, None: the fix sets no flag
    of the site's settings, or the parser refused the line)."""
    changes = fix_changes(example_fix, site.entry.settings)
    fixed = changed(words, changes, site.entry.settings) if changes else None
    if fixed is None:
        return "untested", None
    argv = command_arguments(line.entry, fixed)
    after, _ = _command_run(line, argv, header, site, worker, options, release)
    if after.outcome in ("verified", "mismatch"):
        return "fails", after.message
    if after.raisedClass == "SystemExit":
        return "untested", None
    return "verified", None


def with_absent(code: str, absent: list[str] | None, module: str) -> str:
    """A reproducer that needs stand-ins for modules not installed (`absent`) with them,
    after its first line (the comment that says what it is), made as the worker made them:
    after a first import of `module` failed (what that import read first, such as which
    packages are available, is read without them)."""
    if not absent:
        return code
    header, _, rest = code.partition("\n")
    first = f"try:\n    import {module}\nexcept ModuleNotFoundError:\n    pass\n"
    return f"{header}\n{ABSENT}{first}absent({sorted(absent)!r})\n{rest}"


def _with_fix(
    result: Verification,
    site: _Site,
    worker: Worker,
    dataset: Dataset,
    options: VerifyOptions,
    release: str,
    trial: Callable[[str], tuple[str, str | None]],
) -> Verification:
    """A verified site's exampleFix applied to its reproducer (`trial`): this raise must not
    fire. When it still fires (or the fix changes nothing that can be applied), the offline
    explainer's other fixes for the site are tried in its order, and the first that stops
    the raise is kept (`chosenFix`)."""
    record = dataset.records[site.entry.id]
    fix, message = trial(record.exampleFix)
    found = result.model_copy(update={"fix": fix, "fixMessage": message})
    mined = _mined_site(site, dataset)
    if fix == "verified" or not result.reproducer or mined is None:
        return found
    if fix == "fails" and options.model is not None and site.entry.explainedBy != "offline":
        # the model that wrote the fix is told what running it showed, once
        with worker.turns.waiting():
            again = options.model.fix_again(mined, record, release, message or "")
        retried = trial(again)[0] if again else None
        found = found.model_copy(update={"fixRetry": retried})
        if retried == "verified":
            return found.model_copy(update={"chosenFix": again})
    for candidate in fix_candidates(mined, command_words(record.exampleFix)):
        if candidate == record.exampleFix:
            continue  # the record's own (the offline explainer's first, when it wrote it)
        if trial(candidate)[0] == "verified":
            return found.model_copy(update={"chosenFix": candidate})
    return found


def _fix_result(
    example_fix: str,
    result: Verification,
    site: _Site,
    worker: Worker,
    options: VerifyOptions,
    release: str,
) -> tuple[str, str | None]:
    """Whether `example_fix`, applied to the verified site's reproducer, stops the raise:
    (`verified`, None), (`fails`, what it raised) or (`untested`, None)."""
    entry = site.entry
    changes = fix_changes(example_fix, entry.settings)
    if changes:
        changes = as_compared(changes, [*entry.guards, *entry.priorChecks])
        function = function_at(site.text, entry.qualname, entry.lineNumber)
        changes = through_locals(changes, function.locals if function else {})
    code = None
    if changes and result.reproducer:
        code = with_changes(result.reproducer, [(change.expr, change.value) for change in changes])
    if code is None:
        return "untested", None
    answer = _run(worker, site.module, code, options)
    after = judged(entry, answer, site.installed, release, code, result.attempts)
    if after.outcome in ("verified", "mismatch"):
        return "fails", after.message
    return "verified", None


def _mined_site(site: _Site, dataset: Dataset) -> Site | None:
    """The site as mining saw it (what the explainers are given), from its record and the
    installed function."""
    entry, record = site.entry, dataset.records[site.entry.id]
    function = function_at(site.text, entry.qualname, entry.lineNumber)
    if function is None:
        return None
    return Site(
        repo=record.repo,
        analyzedSha=record.analyzedSha,
        filePath=entry.filePath,
        lineNumber=entry.lineNumber,
        qualname=entry.qualname,
        validatorKind=entry.validatorKind,
        errorClass=entry.errorClass,
        errorMessage=entry.errorMessage,
        messagePattern=entry.messagePattern,
        messageStatus=entry.messageStatus,
        messageFragments=entry.messageFragments,
        guards=entry.guards,
        priorChecks=entry.priorChecks,
        sourceCode=record.sourceCode,
        sourceCodeStart=record.sourceCodeStart,
        sourceCodeEnd=record.sourceCodeEnd,
        githubUrl=record.githubUrl,
        settings=entry.settings,
        functionSource=function.source(site.text),
    )


def _command_line(
    dataset: Dataset, sites: list[_Site]
) -> tuple[Builder | None, CommandLine | None]:
    """The installed function that builds the parser of the dataset's flags (parsers.py), and
    the configuration path it feeds (commandline.py), read from the packages the sites are
    in."""
    flags = {
        flag for entry in dataset.entries for setting in entry.settings for flag in setting.flags
    }
    if not flags:
        return None, None
    files = _package_files(sites)
    builder = find_builder(
        {name: text for name, text in files.items() if "add_argument" in text}, flags
    )
    if builder is None:
        return None, None
    classes = {
        setting.cls.rsplit(".", 1)[-1]
        for entry in dataset.entries
        for setting in entry.settings
        if setting.cls
    }
    # the entry point uses the parser's builder: files that name it and define a classmethod
    beside = {
        name: text for name, text in files.items() if builder.name in text and "classmethod" in text
    }
    entry = find_entry(beside, builder, classes)
    return builder, CommandLine(builder, entry) if entry is not None else None


def _package_files(sites: list[_Site]) -> dict[str, str]:
    """The texts of the installed packages' modules, by module name."""
    packages: set[Path] = set()
    for site in sites:
        parts = site.module.split(".")
        path = Path(site.installed)
        up = len(parts) if path.name == "__init__.py" else len(parts) - 1
        packages.add(path.parents[up] / parts[0])  # the top package's folder
    files: dict[str, str] = {}
    for package in sorted(packages):
        for path in sorted(package.rglob("*.py")):
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            parts = path.relative_to(package.parent).with_suffix("").parts
            names = parts[:-1] if parts[-1] == "__init__" else parts
            files[".".join(names)] = text
    return files


def _command_check(
    entry: IndexEntry, dataset: Dataset, builder: Builder, worker: Worker, options: VerifyOptions
) -> dict | None:
    """The exampleFix's "after" command line parsed by the target's parser, compared with
    the values the fix means to set (fields of a Verification), or None without one."""
    after = after_half(dataset.records[entry.id].exampleFix)
    argv = command_line(after) if after else None
    flags = {flag for setting in entry.settings for flag in setting.flags}
    meant = flag_values(" ".join(argv), flags) if argv else None
    if not argv or not meant:
        return None
    program = parse_program(builder, argv, [flag for flag, _ in meant])
    answer = _run(worker, builder.module, program, options)
    result = parse_result(answer.get("message")) if answer.get("class") == "SystemExit" else None
    if result is None:
        return None  # the parser could not be built here: nothing said of the fix
    if "rejected" in result:
        return {"fixCommand": "rejected", "fixCommandMessage": result["rejected"][:500]}
    parsed = result.get("parsed", {})
    judged_flags = [(flag, value) for flag, value in meant if flag in parsed]
    if not judged_flags:
        return None  # flags of another of the target's parsers: nothing said of the fix
    differs = [
        f"{flag} parsed as {parsed[flag]}, the fix means {value}"
        for flag, value in judged_flags
        if not _same_value(parsed[flag], value)
    ]
    if differs:
        return {"fixCommand": "differs", "fixCommandMessage": "; ".join(differs)[:500]}
    return {"fixCommand": "accepted"}


def _same_value(parsed: str, meant: str) -> bool:
    """Whether the parser's value (its repr) is the one the fix means; a JSON flag parsed into
    a config object holds each key the fix gives (`PoolerConfig(task='embed', ...)`)."""
    try:
        return ast.literal_eval(parsed) == ast.literal_eval(meant)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        pass
    try:
        wanted = ast.literal_eval(meant)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        wanted = None
    if isinstance(wanted, dict):
        return all(
            f"{key}={value!r}" in parsed or f"{key!r}: {value!r}" in parsed
            for key, value in wanted.items()
        )
    return parsed == meant or parsed.strip("'\"") == meant.strip("'\"")


def _earlier_site(
    result: Verification,
    site: _Site,
    entry: IndexEntry,
    by_line: Mapping[tuple[str, int], IndexEntry],
    frames: list,
) -> str | None:
    """The test that keeps the exit that was taken first from being taken again, when it is
    in the site's own file: a site of the dataset, its guards negated; any other `raise` (of
    any class) or `assert`, read from the installed file (passing_test); an exit in a function
    of that file that the site's function called, through that call."""
    if result.outcome not in ("raised-elsewhere", "other-exception"):
        return None
    if result.filePath != site.installed or not result.lineNumber:
        return None
    if result.raisedClass in ("AttributeError", "TypeError") and result.message:
        # a None read on the way (`self.draft.tokenizer` with draft None): not None next time
        function = function_at(site.text, entry.qualname, entry.lineNumber)
        if function is not None:
            own = _same_function(site.text, result.lineNumber, entry.lineNumber)
            roots = set(function.params) if own else set(function.params[:1])
            if not own and function.binding != "instance":
                roots = set()
            found = not_none_test(site.text, result.lineNumber, result.message, roots)
            if found is not None:
                return found
    # a function of the same file that the site's function called: its test in our terms
    if len(frames) >= 2 and list(frames[-2])[:1] == [site.installed]:
        caller_line = frames[-2][1]
        if caller_line != result.lineNumber and _same_function(
            site.text, caller_line, entry.lineNumber
        ):
            return passing_test_through_call(site.text, result.lineNumber, caller_line)
    other = by_line.get((entry.filePath, result.lineNumber))
    if other is not None and other.guards:
        return "not (" + " and ".join(f"({guard})" for guard in other.guards) + ")"
    return passing_test(site.text, result.lineNumber)


def _summary(
    dataset: Dataset, verifications: list[Verification], release: str, python: str, seconds
) -> VerificationSummary:
    kinds = {entry.id: entry.validatorKind for entry in dataset.entries}
    by_outcome = Counter(verification.outcome for verification in verifications)
    by_kind: dict[str, Counter] = {}
    for verification in verifications:
        by_kind.setdefault(kinds[verification.id], Counter())[verification.outcome] += 1
    ordered = {outcome: by_outcome[outcome] for outcome in OUTCOMES if by_outcome[outcome]}
    fixes = Counter(verification.fix for verification in verifications if verification.fix)
    commands = Counter(item.fixCommand for item in verifications if item.fixCommand)
    retries = Counter(item.fixRetry for item in verifications if item.fixRetry)
    return VerificationSummary(
        release=release,
        python=python,
        byOutcome=ordered,
        byKind={
            kind: {outcome: counts[outcome] for outcome in OUTCOMES if counts[outcome]}
            for kind, counts in sorted(by_kind.items())
        },
        byFix={fix: fixes[fix] for fix in ("verified", "fails", "untested") if fixes[fix]},
        chosenFixes=sum(1 for verification in verifications if verification.chosenFix),
        byFixRetry={
            said: retries[said] for said in ("verified", "fails", "untested") if retries[said]
        },
        byFixCommand={
            said: commands[said] for said in ("accepted", "differs", "rejected") if commands[said]
        },
        commandLines=sum(1 for item in verifications if item.reproducerKind == "command-line"),
        modelPrograms=sum(1 for item in verifications if item.reproducerKind == "model"),
        seconds=round(seconds, 1),
    )


def _same_function(text: str, line: int, other: int) -> bool:
    """Whether two lines of a file are in one innermost function."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False

    def innermost(at: int):
        found = [
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and node.lineno <= at <= (node.end_lineno or node.lineno)
        ]
        return max(found, key=lambda node: node.lineno) if found else None

    inner = innermost(line)
    return inner is not None and inner is innermost(other)


def _run(worker: Worker, module: str, code: str, options: VerifyOptions) -> dict:
    """The worker's answer to running `code` after importing `module`, under the run's
    time and memory limits."""
    request = {"op": "run", "module": module, "code": code}
    return worker.ask({**request, "timeout": options.timeout, "memory": options.memory})
