"""Messages on the real trees: statuses, messages built from parts, that every
messagePattern compiles in Python and ECMAScript and fully matches renderings of its
errorMessage (holes filled with random text, optional pieces in and out, repeated pieces
0-3 times), and how many patterns match unrelated text (`loose_patterns`).

Run: `.venv/bin/python bench/messages.py [--save DIR] [--against DIR]`. `--save` keeps the
extracted sites (one JSON Lines file per tree); `--against` compares with sites saved by an
earlier vmine (status moves, changed messages).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.runner import VMINE  # noqa: E402
from bench.trees import ensure_trees  # noqa: E402

RENDERINGS = 5
FILLERS = ["", "x", "(.*?)", 'it\'s "q"', "a\nb", "$1 \\", "{n}", "\u2028", "\U0001f600"]
NODE_SCRIPT = """
const cases = JSON.parse(require("fs").readFileSync(0, "utf8"));
const out = cases.map(([pattern, subjects]) => {
  let re;
  try { re = new RegExp("^(?:" + pattern + ")$", "s"); } catch (e) { return null; }
  return subjects.map((s) => re.test(s));
});
process.stdout.write(JSON.stringify(out));
"""


# --- errorMessage as a tree, to render it ----------------------------------------------------


@dataclass
class Piece:
    """`{?a|b}` (options; an empty one when the piece may be absent) or `{*a}` (repeated)."""

    options: list[list]
    repeated: bool


class _Open(Exception):
    """A piece that never closes (read `}}` inside pieces the other way)."""


def parse(message: str, greedy: bool = True) -> list:
    """The parts of an errorMessage: text, "HOLE" for an `{expr}` and Piece for `{?...}` /
    `{*...}`. Inside a piece `}}` is a literal brace (greedy) unless that leaves a piece
    open; then it closes, as extractors.patterns reads it."""
    try:
        parts, _ = _parts(message, 0, False, greedy)
        return parts
    except _Open:
        if not greedy:
            return [message]
        return parse(message, greedy=False)


def _parts(message: str, start: int, inside: bool, greedy: bool) -> tuple[list, int]:
    parts: list = []
    text: list[str] = []
    index = start
    while index < len(message):
        pair = message[index : index + 2]
        char = message[index]
        if pair == "{{" or (pair == "}}" and (greedy or not inside)):
            text.append(char)
            index += 2
        elif inside and char in "|}":
            parts.append("".join(text))
            return parts, index
        elif char == "{":
            parts.append("".join(text))
            text = []
            if message[index + 1 : index + 2] in ("?", "*"):
                piece, index = _piece(message, index, greedy)
                parts.append(piece)
            else:
                index = _expression_end(message, index)
                parts.append("HOLE")
        else:
            text.append(char)
            index += 1
    if inside:
        raise _Open
    parts.append("".join(text))
    return parts, index


def _piece(message: str, start: int, greedy: bool) -> tuple[Piece, int]:
    repeated = message[start + 1] == "*"
    options = []
    index = start + 2
    while True:
        option, index = _parts(message, index, True, greedy)
        options.append(option)
        if message[index] == "}":
            break
        index += 1  # past `|`
    if not repeated and (len(options) == 1 or options[-1] == [""]):
        options.append([""])  # `{?a}` and `{?a|b|}`: the piece may be absent
    return Piece(options, repeated), index + 1


def _expression_end(message: str, start: int) -> int:
    depth, index = 0, start
    while index < len(message):
        char = message[index]
        if char in "'\"":
            end = message.find(char, index + 1)
            if end > 0:
                index = end + 1
                continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return index + 1
        index += 1
    return len(message)


def render(parts: list, rng: random.Random, shown: list[bool] | None = None) -> str:
    """A rendering: holes filled at random, pieces in and out; `shown` gets a True for each
    piece that rendered with text."""
    out = []
    for part in parts:
        if isinstance(part, str):
            out.append(rng.choice(FILLERS) if part == "HOLE" else part)
            continue
        if part.repeated:
            text = "".join(render(part.options[0], rng) for _ in range(rng.randint(0, 3)))
        else:
            text = render(rng.choice(part.options), rng)
        if shown is not None and text:
            shown.append(True)
        out.append(text)
    return "".join(out)


def renderings(site: dict, parts: list, rng: random.Random) -> list[str]:
    """RENDERINGS renderings of a site's message. A pattern with a lookahead says the code
    tested its list non-empty (`if errors:`): a rendering with no piece is none of them."""
    subjects = []
    while len(subjects) < RENDERINGS:
        shown: list[bool] = []
        subject = render(parts, rng, shown)
        if shown or "(?=" not in site["messagePattern"]:
            subjects.append(subject)
    return subjects


# --- extraction and checks -------------------------------------------------------------------


def extract(git_dir: Path, rev: str, repo: str, tmp: Path, name: str) -> list[dict]:
    out = tmp / f"{name}.jsonl"
    subprocess.run(
        [
            str(VMINE),
            "extract",
            str(git_dir),
            "--rev",
            rev,
            "--repo-name",
            repo,
            "--cache-dir",
            str(tmp / "cache"),
            "-o",
            str(out),
            "--ci",
        ],
        check=False,
        stderr=subprocess.DEVNULL,
    )
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


def check(name: str, sites: list[dict], rng: random.Random) -> bool:
    statuses = Counter(site["messageStatus"] for site in sites)
    built = sum(1 for site in sites if site.get("messageFragments"))
    print(
        f"  {name}: {len(sites)} sites; "
        + ", ".join(
            f"{status} {statuses[status]}"
            for status in ("literal", "template", "partial", "unresolved")
        )
        + f"; built from parts (with messageFragments) {built}"
    )
    cases, bad_python, unmatched = [], 0, []
    bad_patterns = set()
    for site in sites:
        pattern = site["messagePattern"]
        try:
            compiled = re.compile(pattern, re.DOTALL)
        except re.error:
            bad_python += 1
            bad_patterns.add(pattern)
            continue
        subjects = renderings(site, parse(site["errorMessage"]), rng)
        for subject in subjects:
            if compiled.fullmatch(subject) is None:
                unmatched.append((site["filePath"], site["lineNumber"], subject[:120]))
        cases.append((pattern, subjects))
    loose = loose_patterns([s for s in sites if s["messagePattern"] not in bad_patterns])
    print(f"    patterns matching unrelated text (unresolved messages aside): {len(loose)}")
    for site in loose[:5]:
        print(f"      {site['filePath']}:{site['lineNumber']} {site['errorMessage'][:80]!r}")
    print(f"    patterns not compiling in Python: {bad_python}")
    print(f"    renderings not matched in Python: {len(unmatched)} of {len(cases) * RENDERINGS}")
    for where in unmatched[:5]:
        print(f"      {where}")
    ok = bad_python == 0 and not unmatched and not loose
    node = shutil.which("node")
    if node is None:
        print("    ECMAScript: node is not on PATH, not checked")
        return ok
    result = subprocess.run(
        [node, "-e", NODE_SCRIPT],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=True,
    )
    in_js = json.loads(result.stdout)
    bad_js = sum(1 for row in in_js if row is None)
    disagree = sum(
        1
        for row, (pattern, subjects) in zip(in_js, cases, strict=True)
        if row is not None
        and row != [re.fullmatch(pattern, s, re.DOTALL) is not None for s in subjects]
    )
    print(
        f"    patterns not compiling in ECMAScript: {bad_js}; "
        f"Python and ECMAScript disagree on {disagree}"
    )
    return ok and bad_js == 0 and disagree == 0


# Sentences no validator of the trees says: a pattern that fully matches one of them (or
# holds no literal text at all) matches unrelated text, and would claim any pasted error.
UNRELATED = (
    "The quick brown fox jumps over the lazy dog.",
    "Connection refused",
    "x",
    "CUDA out of memory. Tried to allocate 2.00 GiB",
)


def loose_patterns(sites: list[dict]) -> list[dict]:
    """The sites whose messagePattern matches unrelated text; an `unresolved` message (its
    status says nothing of it is known) is not counted."""
    loose = []
    for site in sites:
        if site["messageStatus"] == "unresolved":
            continue
        pattern = site["messagePattern"]
        holes_only = "(.*?)" in pattern and not pattern.replace("(.*?)", "")
        compiled = re.compile(pattern, re.DOTALL)  # (a bare `raise ValueError` matches "")
        if holes_only or any(compiled.fullmatch(text) for text in UNRELATED):
            loose.append(site)
    return loose


def compare(name: str, before: list[dict], after: list[dict]) -> None:
    """Status moves between an earlier extraction and this one, site by site."""
    old = {(s["filePath"], s["lineNumber"]): s for s in before}
    moves: Counter[tuple[str, str]] = Counter()
    reworded = 0
    for site in after:
        earlier = old.get((site["filePath"], site["lineNumber"]))
        if earlier is None:
            continue
        if earlier["messageStatus"] != site["messageStatus"]:
            moves[(earlier["messageStatus"], site["messageStatus"])] += 1
        if earlier["errorMessage"] != site["errorMessage"]:
            reworded += 1
    print(
        f"  {name} against the earlier sites: {reworded} errorMessages differ; status moves: "
        + (", ".join(f"{a} -> {b}: {n}" for (a, b), n in sorted(moves.items())) or "none")
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--save", type=Path, help="keep the extracted sites in this folder")
    parser.add_argument("--against", type=Path, help="compare with sites saved earlier")
    args = parser.parse_args(argv)
    trees = ensure_trees()
    rng = random.Random(20261201)
    targets = [
        ("vllm-0.32.0", trees.vllm, trees.vllm_old, "vllm-project/vllm"),
        ("vllm-0.33.0", trees.vllm, trees.vllm_new, "vllm-project/vllm"),
        ("sglang-0.5.10.post1", trees.sglang, trees.sglang_rev, "sgl-project/sglang"),
    ]
    ok = True
    with tempfile.TemporaryDirectory(prefix="vmine-messages-") as tmp:
        for name, git_dir, rev, repo in targets:
            sites = extract(git_dir, rev, repo, Path(tmp), name)
            ok = check(name, sites, rng) and ok
            if args.save:
                args.save.mkdir(parents=True, exist_ok=True)
                shutil.copy(Path(tmp) / f"{name}.jsonl", args.save / f"{name}.jsonl")
            earlier = args.against / f"{name}.jsonl" if args.against else None
            if earlier is not None and earlier.exists():
                lines = earlier.read_text(encoding="utf-8").splitlines()
                compare(name, [json.loads(line) for line in lines], sites)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
