"""The dataset card (`README.md`) of an export, with the YAML header the Hugging Face Hub
reads: license, language, task categories, tags, size category, pretty name, and the
configs that map each table to its Parquet files."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence

from pipeline import __version__
from pipeline.export.tables import Release

# The Hub's size categories, by number of rows.
_SIZES = ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"))
TAGS = ("validation-errors", "error-messages", "configuration", "python", "code", "vmine")
TASK_CATEGORIES = ("text-generation", "question-answering")
# A line of the card that says vmine wrote the folder: a later export may replace it.
MARKER = "<!-- written by vmine export -->"


def size_category(rows: int) -> str:
    for limit, name in _SIZES:
        if rows < limit:
            return name
    return "n>1M"


def _yaml(value: str) -> str:
    """A YAML scalar: JSON strings are valid YAML flow scalars."""
    return json.dumps(value, ensure_ascii=False)


def header(releases: Sequence[Release], files: dict[str, str], license_id: str) -> str:
    repos = sorted({release.repo for release in releases})
    rows = sum(len(release.dataset.entries) for release in releases)
    lines = [
        "---",
        f"license: {_yaml(license_id)}",
        f"pretty_name: {_yaml('Validation errors of ' + ', '.join(repos))}",
        "language:",
        "- en",
        "task_categories:",
        *[f"- {task}" for task in TASK_CATEGORIES],
        "tags:",
        *[f"- {tag}" for tag in TAGS],
        "size_categories:",
        f"- {size_category(rows)}",
        "configs:",
    ]
    for number, (table, path) in enumerate(files.items()):
        lines += [
            f"- config_name: {table}",
            "  data_files:",
            "  - split: train",
            f"    path: {_yaml(path)}",
        ]
        if number == 0:
            lines.append("  default: true")
    return "\n".join([*lines, "---"]) + "\n"


def _counts(releases: Sequence[Release], what) -> str:
    counter: Counter[str] = Counter()
    for release in releases:
        counter.update(what(release))
    return ", ".join(f"{name} {count}" for name, count in sorted(counter.items())) or "none"


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def body(releases: Sequence[Release], files: dict[str, str], name: str | None) -> str:
    records = sum(len(release.dataset.entries) for release in releases)
    repos = sorted({release.repo for release in releases})
    verified = sum(len(release.verification) for release in releases)
    # datasets of the `all` scope hold raises outside validators too
    outside = sum(e.validatorKind == "none" for r in releases for e in r.dataset.entries)
    where = f"in any function, {outside} of them outside validators" if outside else "in validators"
    lines = [
        MARKER,
        "",
        f"# Validation errors of {', '.join(repos)}",
        "",
        f"{records} validation errors (`raise ValueError` {where}) mined from "
        f"{len(releases)} release{'s' if len(releases) != 1 else ''} of "
        f"{', '.join(f'[{repo}](https://github.com/{repo})' for repo in repos)} by vmine "
        f"{__version__}: for each, the exact message and a regular expression that matches it "
        "at run time, the conditions under which it fires, the settings a user changes to "
        "avoid it, the code around it, and an explanation with fixes.",
        "",
        "## Releases",
        "",
        "| release | repo | commit | records | by status | explained by | prompt | mined |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for release in releases:
        manifest = release.dataset.manifest
        status = manifest.counts.byStatus.model_dump()
        lines.append(
            f"| {_md(release.name)} | {release.repo} | `{manifest.analyzedSha}` | "
            f"{len(release.dataset.entries)} | "
            + ", ".join(f"{key} {value}" for key, value in status.items() if value)
            + f" | {_md(_counts([release], _explainers))} | "
            f"{_md(manifest.llm.provider)}/{_md(manifest.llm.model)} "
            f"({_md(manifest.llm.promptVersion)}) | {manifest.datasetVersion} |"
        )
    tools = sorted(
        {
            f"vmine {r.dataset.manifest.tool.version} (extractor {r.dataset.manifest.tool.extractorVersion})"
            for r in releases
        }
    )
    lines += [
        "",
        f"Mined with {', '.join(tools)}; source of each release: "
        + ", ".join(f"`{r.dataset.manifest.source}`" for r in releases)
        + ".",
        f"Records with a verification outcome (`vmine verify`): {verified}.",
        "",
        "## Tables",
        "",
        f"- `records` (`{files['records']}`): one row per error, the schema-v2 record as "
        "`records/{id}.json` holds it, plus `release` and `datasetVersion`.",
        f"- `index` (`{files['index']}`): one row per error with the site facts: qualname, "
        "validator kind, guards, prior checks, message status and fragments, `settings` (a "
        "list of `{expr, class, field, type, default, choices, doc, flags}`), who explained "
        "it, plus `release` and `verification` (the outcome of `vmine verify`, or null).",
        "",
        "Rows of both tables join on `id` and `release`.",
        "",
        "## Load it",
        "",
        "```python",
        "from datasets import load_dataset",
        "",
    ]
    if name:
        lines += [
            f'records = load_dataset("{name}", "records", split="train")',
            f'index = load_dataset("{name}", "index", split="train")',
        ]
    lines += [
        "# from this folder:",
        f'records = load_dataset("parquet", data_files="{files["records"]}", split="train")',
        f'latest = records.filter(lambda row: row["release"] == "{releases[-1].name}")',
        "```",
        "",
        "Each release's code belongs to its authors: the `sourceCode` excerpts are under the "
        "license of the repository they come from.",
        "",
    ]
    return "\n".join(lines)


def _explainers(release: Release) -> Counter[str]:
    """Records by the explainer that wrote them, as the manifest counts them (a dataset of an
    older vmine has no such count: its index lines then say, or `not recorded`)."""
    counted = release.dataset.manifest.counts.explainedBy
    if counted:
        return Counter(counted)
    return Counter(entry.explainedBy or "not recorded" for entry in release.dataset.entries)


def dataset_card(
    releases: Sequence[Release], files: dict[str, str], license_id: str, name: str | None
) -> str:
    """The README.md of the export: the Hub's YAML header, then the card's body."""
    return header(releases, files, license_id) + "\n" + body(releases, files, name)
