"""Runs the steps of a composite action (`action.yml`) as a GitHub runner does, on this
machine: the `GITHUB_*` variables and files (event, output, env, path, step summary) in a
temporary folder, `${{ }}` expressions evaluated over the inputs, `github`, `runner`, `env`
and the steps' outputs, `if:` conditions, `run:` steps in bash with `-eo pipefail`, and the
two actions vmine's action uses emulated: `actions/cache` (restore, and save at the end of
the job, in a local cache folder) and `actions/upload-artifact` (copied to an artifacts
folder). Anything else (another action, an expression it does not know) is an error, so a
change to action.yml that this runner cannot check fails the test instead of passing it.

    run = run_action(Path("action.yml"), inputs={...}, workspace=..., event_name="push",
                     event={...}, sha=..., repository="acme/engine", root=tmp_path)
    run.outcome, run.outputs, run.summary, run.artifacts
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

_EXPRESSION = re.compile(r"\$\{\{(.*?)\}\}", re.S)
_TOKEN = re.compile(
    r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<op>==|!=|&&|\|\||!|\(|\))|"
    r"(?P<call>[A-Za-z_]\w*)\(\)|(?P<name>[A-Za-z_][\w.-]*))"
)


class ActionError(Exception):
    """action.yml uses something this runner does not emulate."""


# -- expressions -----------------------------------------------------------------------------


class Expression:
    """GitHub's expression syntax, the part action.yml uses: string literals, context paths
    (`inputs.exit-code`, `steps.diff.outputs.sarif`, `github.event.pull_request.base.sha`),
    `==` / `!=` (case-insensitive on strings), `!`, `&&` / `||` (returning an operand, as
    GitHub does), parentheses, and success() / failure() / always()."""

    def __init__(self, text: str, contexts: dict[str, Any], job_failed: bool) -> None:
        self.tokens = self._tokens(text)
        self.position = 0
        self.contexts = contexts
        self.job_failed = job_failed

    @staticmethod
    def _tokens(text: str) -> list[tuple[str, str]]:
        tokens, position = [], 0
        text = text.strip()
        while position < len(text):
            found = _TOKEN.match(text, position)
            if not found or found.end() == position:
                raise ActionError(f"cannot read the expression {text!r} at {text[position:]!r}")
            kind = found.lastgroup
            tokens.append((kind, found.group(kind)))
            position = found.end()
            while position < len(text) and text[position].isspace():
                position += 1
        return tokens

    def value(self) -> Any:
        result = self._or()
        if self.position != len(self.tokens):
            raise ActionError(f"unexpected {self.tokens[self.position][1]!r} in an expression")
        return result

    def _peek(self) -> str | None:
        return self.tokens[self.position][1] if self.position < len(self.tokens) else None

    def _take(self) -> tuple[str, str]:
        token = self.tokens[self.position]
        self.position += 1
        return token

    def _or(self) -> Any:
        left = self._and()
        while self._peek() == "||":
            self._take()
            right = self._and()
            left = left if truthy(left) else right
        return left

    def _and(self) -> Any:
        left = self._compare()
        while self._peek() == "&&":
            self._take()
            right = self._compare()
            left = right if truthy(left) else left
        return left

    def _compare(self) -> Any:
        left = self._unary()
        while self._peek() in ("==", "!="):
            op = self._take()[1]
            right = self._unary()
            same = _loose(left) == _loose(right)
            left = same if op == "==" else not same
        return left

    def _unary(self) -> Any:
        if self._peek() == "!":
            self._take()
            return not truthy(self._unary())
        if self._peek() == "(":
            self._take()
            inner = self._or()
            if self._take()[1] != ")":
                raise ActionError("unbalanced parentheses in an expression")
            return inner
        kind, text = self._take()
        if kind == "str":
            return text[1:-1].replace("''", "'")
        if kind == "call":
            calls = {
                "success": not self.job_failed,
                "failure": self.job_failed,
                "always": True,
            }
            if text not in calls:
                raise ActionError(f"the function {text}() is not emulated")
            return calls[text]
        return self._lookup(text)

    def _lookup(self, path: str) -> Any:
        head, *rest = path.split(".")
        if head not in self.contexts:
            raise ActionError(f"the context {head!r} is not emulated ({path})")
        value = self.contexts[head]
        for part in rest:
            value = value.get(part, "") if isinstance(value, dict) else ""
        return value


def _loose(value: Any) -> Any:
    return value.lower() if isinstance(value, str) else value


def truthy(value: Any) -> bool:
    return value not in ("", None, False, 0)


def as_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value)
    return "" if value is None else str(value)


def substitute(text: str, contexts: dict[str, Any], job_failed: bool = False) -> str:
    return _EXPRESSION.sub(
        lambda m: as_text(Expression(m.group(1), contexts, job_failed).value()), text
    )


def condition(text: str | None, contexts: dict[str, Any], job_failed: bool) -> bool:
    """An `if:` (bare or in `${{ }}`); no `if:` means success()."""
    if text is None:
        return not job_failed
    text = str(text).strip()
    inner = text[3:-2] if text.startswith("${{") and text.endswith("}}") else text
    uses_status = re.search(r"\b(success|failure|always)\(\)", inner)
    result = truthy(Expression(inner, contexts, job_failed).value())
    return result if uses_status else result and not job_failed


# -- files the runner hands each step ---------------------------------------------------------


def read_key_values(path: Path) -> dict[str, str]:
    """A GITHUB_OUTPUT or GITHUB_ENV file: `name=value` lines and `name<<DELIM` blocks."""
    values: dict[str, str] = {}
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            block = []
            while index < len(lines) and lines[index] != delimiter:
                block.append(lines[index])
                index += 1
            index += 1
            values[name] = "\n".join(block)
        elif "=" in line:
            name, value = line.split("=", 1)
            values[name] = value
    return values


# -- the run ----------------------------------------------------------------------------------


@dataclass
class StepResult:
    name: str
    ran: bool
    code: int = 0
    outputs: dict[str, str] = field(default_factory=dict)


@dataclass
class ActionRun:
    outcome: str  # success | failure
    steps: list[StepResult]
    outputs: dict[str, str]  # the action's outputs
    summary: str  # the job summary, every step's part in order
    artifacts: Path  # artifacts/NAME/... as uploaded
    log: str  # every step's stdout and stderr

    def step(self, name: str) -> StepResult:
        return next(step for step in self.steps if step.name == name)


@dataclass
class _Job:
    root: Path
    env: dict[str, str]
    contexts: dict[str, Any]
    cache_store: Path  # what actions/cache keeps between jobs
    path_entries: list[str] = field(default_factory=list)
    summary: list[str] = field(default_factory=list)
    log: list[str] = field(default_factory=list)
    post: list = field(default_factory=list)  # cache saves, run when the job ends


def _cache(job: _Job, spec: dict[str, str]) -> None:
    """actions/cache: restore the exact key, else the newest entry a restore key prefixes;
    save the path under the key when the job ends (not when the exact key was hit)."""
    store = job.cache_store
    store.mkdir(parents=True, exist_ok=True)
    target = Path(os.path.expanduser(spec["path"].replace("~", job.env["HOME"], 1)))
    key = spec["key"]
    prefixes = [line.strip() for line in spec.get("restore-keys", "").splitlines() if line.strip()]
    hit = store / key if (store / key).is_dir() else None
    if hit is None:
        for prefix in prefixes:
            candidates = sorted(
                (p for p in store.iterdir() if p.name.startswith(prefix)),
                key=lambda p: p.stat().st_mtime_ns,
            )
            if candidates:
                hit = candidates[-1]
                break
    if hit is not None:
        shutil.copytree(hit, target, dirs_exist_ok=True, symlinks=True)
        job.log.append(f"cache restored from {hit.name}")

    def save() -> None:
        if hit is not None and hit.name == key:
            return
        if target.exists():
            shutil.copytree(target, store / key, symlinks=True)

    job.post.append(save)


def _upload(job: _Job, spec: dict[str, str]) -> None:
    """actions/upload-artifact: the path (file or folder) copied under artifacts/NAME."""
    source = Path(spec["path"])
    if not source.is_absolute():
        source = Path(job.env["GITHUB_WORKSPACE"]) / source
    destination = job.root / "artifacts" / spec["name"]
    if destination.exists():
        raise ActionError(f"an artifact named {spec['name']} was uploaded twice")
    if source.is_dir():
        shutil.copytree(source, destination)
    elif source.is_file():
        destination.mkdir(parents=True)
        shutil.copy2(source, destination / source.name)
    else:
        raise ActionError(f"upload-artifact: no file at {source}")


USES = {"actions/cache": _cache, "actions/upload-artifact": _upload}


def _run_step(job: _Job, number: int, step: dict, step_env: dict[str, str]) -> int:
    files = {
        name: job.root / "files" / f"{number}-{name.lower()}"
        for name in ("GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_PATH", "GITHUB_STEP_SUMMARY")
    }
    for path in files.values():
        path.parent.mkdir(exist_ok=True)
        path.write_text("")
    script = job.root / "files" / f"{number}.sh"
    script.write_text(substitute(step["run"], job.contexts))
    env = {**job.env, **step_env, **{name: str(path) for name, path in files.items()}}
    env["PATH"] = os.pathsep.join([*reversed(job.path_entries), env["PATH"]])
    cwd = Path(env["GITHUB_WORKSPACE"]) / substitute(
        step.get("working-directory", "."), job.contexts
    )
    if step.get("shell") != "bash":
        raise ActionError(f"step {step.get('name')!r}: only shell: bash is emulated")
    done = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    job.log.append(f"--- {step.get('name')}\n{done.stdout}{done.stderr}")
    job.summary.append(files["GITHUB_STEP_SUMMARY"].read_text())
    job.env.update(read_key_values(files["GITHUB_ENV"]))
    job.path_entries += [ln for ln in files["GITHUB_PATH"].read_text().splitlines() if ln]
    job.contexts["env"] = dict(job.env)
    job.contexts["steps"].setdefault(step.get("id", f"_{number}"), {})["outputs"] = read_key_values(
        files["GITHUB_OUTPUT"]
    )
    return done.returncode


def run_action(
    action: Path,
    *,
    inputs: dict[str, str],
    workspace: Path,
    event_name: str,
    event: dict,
    sha: str,
    repository: str,
    root: Path,
    env: dict[str, str] | None = None,
    cache_store: Path | None = None,
) -> ActionRun:
    """Run the composite action's steps in order, as the runner does for one job; jobs that
    share `cache_store` (default ROOT/cache-store) share what actions/cache saved."""
    spec = yaml.safe_load(action.read_text())
    if spec["runs"]["using"] != "composite":
        raise ActionError("only composite actions are emulated")
    declared = spec.get("inputs", {})
    unknown = set(inputs) - set(declared)
    if unknown:
        raise ActionError(f"inputs not declared in action.yml: {sorted(unknown)}")
    values = {name: str(item.get("default", "")) for name, item in declared.items()}
    values.update(inputs)
    root.mkdir(parents=True, exist_ok=True)
    home, temp = root / "home", root / "runner-temp"
    home.mkdir(exist_ok=True)
    temp.mkdir(exist_ok=True)
    event_path = root / "event.json"
    event_path.write_text(json.dumps(event))
    base_env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "CI": "true",
        "GITHUB_ACTIONS": "true",
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_ACTION_PATH": str(action.parent),
        "GITHUB_EVENT_NAME": event_name,
        "GITHUB_EVENT_PATH": str(event_path),
        "GITHUB_SHA": sha,
        "GITHUB_REPOSITORY": repository,
        "GITHUB_REF": event.get("ref", "refs/heads/main"),
        "GITHUB_RUN_ID": "1",
        "RUNNER_OS": "Linux",
        "RUNNER_TEMP": str(temp),
        **(env or {}),
    }
    contexts: dict[str, Any] = {
        "inputs": values,
        "github": {
            "sha": sha,
            "repository": repository,
            "event_name": event_name,
            "event": event,
            "workspace": str(workspace),
            "action_path": str(action.parent),
        },
        "runner": {"os": "Linux", "temp": str(temp)},
        "env": dict(base_env),
        "steps": {},
    }
    job = _Job(root, base_env, contexts, cache_store or root / "cache-store")
    results, failed = [], False
    for number, step in enumerate(spec["runs"]["steps"]):
        name = step.get("name", f"step {number}")
        if not condition(step.get("if"), contexts, failed):
            results.append(StepResult(name, ran=False))
            continue
        step_env = {k: substitute(str(v), contexts) for k, v in (step.get("env") or {}).items()}
        if "uses" in step:
            action_name = step["uses"].split("@", 1)[0]
            if action_name not in USES:
                raise ActionError(f"step {name!r}: {step['uses']} is not emulated")
            USES[action_name](
                job, {k: substitute(str(v), contexts) for k, v in step["with"].items()}
            )
            code = 0
        else:
            code = _run_step(job, number, step, step_env)
        results.append(
            StepResult(
                name,
                ran=True,
                code=code,
                outputs=contexts["steps"].get(step.get("id", ""), {}).get("outputs", {}),
            )
        )
        failed = failed or code != 0
    for save in job.post:
        save()
    outputs = {
        name: substitute(str(item["value"]), contexts)
        for name, item in spec.get("outputs", {}).items()
    }
    return ActionRun(
        outcome="failure" if failed else "success",
        steps=results,
        outputs=outputs,
        summary="".join(job.summary),
        artifacts=root / "artifacts",
        log="\n".join(job.log),
    )
