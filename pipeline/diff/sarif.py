"""Renders a `DatasetDiff` as SARIF 2.1.0, the log GitHub code scanning reads (upload-sarif):
one result per error added, reworded or changed in NEW, each at its raise line in NEW.

What a result holds, by kind (removed and moved errors have no line in NEW worth flagging):

| kind     | rule             | level   | message                                  |
|----------|------------------|---------|------------------------------------------|
| added    | `added-error`    | note    | the new message                          |
| reworded | `reworded-error` | warning | the old and the new wording              |
| changed  | `changed-error`  | warning | the message and what changed (the note)  |

Its `partialFingerprints` hold the record id of NEW (ids hold no line number), so code
scanning follows a result across commits that only move it."""

from __future__ import annotations

import json
import re
from typing import Any

from pipeline import __version__
from pipeline.diff.changes import Change, ChangeKind, DatasetDiff, Reworded
from pipeline.diff.report import note

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
# The key of the record id among a result's partial fingerprints (versioned, as SARIF asks).
FINGERPRINT = "vmineRecordId/v1"
_URL = re.compile(r"^https://github\.com/(?P<repo>[^/]+/[^/]+)/blob/(?P<ref>[^/]+)/")
_SHA = re.compile(r"^[0-9a-f]{40}$")


# The rules, one per change kind that gives a result: (kind, id, name, level, short, help).
# fmt: off
RULES: tuple[tuple[ChangeKind, str, str, str, str, str], ...] = (
    ("added", "added-error", "AddedValidationError", "note",
     "A validation error was added",
     "This raise is new since the base: users can now hit this message. Check that its "
     "wording says what to change, and that the dataset's record explains it."),
    ("reworded", "reworded-error", "RewordedValidationError", "warning",
     "A validation error was reworded",
     "The same check raises a different message than at the base. Anything that matches "
     "the old wording (log alerts, documentation, tests, client code) no longer sees it."),
    ("changed", "changed-error", "ChangedValidationError", "warning",
     "A validation error fires under other conditions",
     "The message is the same, but its guards, its pattern, or a setting it reads (accepted "
     "values, default, flags) changed: the fix a user was told may no longer be right."),
)
# fmt: on
_RULE_INDEX = {kind: index for index, (kind, *_) in enumerate(RULES)}


def _rule(kind: str, rule_id: str, name: str, level: str, short: str, text: str) -> dict:
    return {
        "id": rule_id,
        "name": name,
        "shortDescription": {"text": short},
        "fullDescription": {"text": text},
        "help": {"text": text},
        "defaultConfiguration": {"level": level},
        "properties": {"tags": ["validation-error", kind]},
    }


def message(change: Change) -> str:
    """What code scanning shows for a result: function, kind, wording(s), what else changed."""
    entry = change.entry
    if isinstance(change, Reworded):
        assert change.old is not None
        said = (
            f"{entry.qualname}: {entry.errorClass} reworded from "
            f"{json.dumps(change.old.errorMessage, ensure_ascii=False)} to "
            f"{json.dumps(entry.errorMessage, ensure_ascii=False)}"
        )
    else:
        verb = "new" if change.kind == "added" else "changed"
        said = (
            f"{entry.qualname}: {verb} {entry.errorClass} "
            f"{json.dumps(entry.errorMessage, ensure_ascii=False)}"
        )
    more = note(change)
    return f"{said} ({more})" if more else said


def result(change: Change, urls: dict[str, str]) -> dict[str, Any]:
    entry = change.entry
    kind, rule_id, _, level, _, _ = RULES[_RULE_INDEX[change.kind]]
    properties: dict[str, Any] = {
        "changeKind": kind,
        "errorClass": entry.errorClass,
        "errorMessage": entry.errorMessage,
        "fields": change.fields,
    }
    if isinstance(change, Reworded):
        assert change.old is not None
        properties["oldErrorMessage"] = change.old.errorMessage
        properties["similarity"] = round(change.similarity, 3)
    if change.old is not None and change.moved:
        properties["oldLocation"] = f"{change.old.filePath}:{change.old.lineNumber}"
    if urls.get(entry.id):
        properties["githubUrl"] = urls[entry.id]
    return {
        "ruleId": rule_id,
        "ruleIndex": _RULE_INDEX[change.kind],
        "level": level,
        "message": {"text": message(change)},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": entry.filePath, "uriBaseId": "%SRCROOT%"},
                    "region": {"startLine": entry.lineNumber},
                },
                "logicalLocations": [{"fullyQualifiedName": entry.qualname, "kind": "function"}],
            }
        ],
        "partialFingerprints": {FINGERPRINT: entry.id},
        "properties": properties,
    }


def provenance(urls: dict[str, str]) -> list[dict[str, str]]:
    """The GitHub repository and revision NEW's links pin (a commit, or a release's tag),
    when NEW has links; a tree with no GitHub origin has none, and says nothing."""
    for url in sorted(urls.values()):
        found = _URL.match(url)
        if found:
            ref = found["ref"]
            where = {"repositoryUri": f"https://github.com/{found['repo']}"}
            where["revisionId" if _SHA.match(ref) else "revisionTag"] = ref
            return [where]
    return []


def sarif_log(diff: DatasetDiff) -> dict[str, Any]:
    urls = dict(diff.new.urls)
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "vmine",
                "version": __version__,
                "semanticVersion": __version__,
                "rules": [_rule(*rule) for rule in RULES],
            }
        },
        "results": [result(change, urls) for change in diff.changes if change.kind in _RULE_INDEX],
        "columnKind": "unicodeCodePoints",
        "properties": {
            "base": diff.old.title,
            "head": diff.new.title,
            "counts": diff.counts,
        },
    }
    found = provenance(urls)
    if found:
        run["versionControlProvenance"] = found
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}


def render_sarif(diff: DatasetDiff) -> str:
    return json.dumps(sarif_log(diff), indent=2, ensure_ascii=False) + "\n"
