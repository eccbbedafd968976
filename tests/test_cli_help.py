"""`vmine --help` lists every command with a whole sentence, not a cut one."""

from __future__ import annotations

from click.testing import CliRunner

from pipeline.cli import main


def test_command_list_shows_complete_sentences() -> None:
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0
    commands = result.output.split("Commands:\n", 1)[1].splitlines()
    assert commands == [
        "  diff     Compare the error sets of two datasets or revisions.",
        "  explain  Find the record that explains an error message or traceback.",
        "  export   Write datasets as a Hugging Face dataset (Parquet and a card).",
        "  extract  Print the raise sites of SOURCE as JSON Lines.",
        "  history  Trace every error of SOURCE across its releases.",
        "  render   Render a dataset as Markdown pages or a static HTML site.",
        "  run      Mine SOURCE, or the targets of a pipeline.toml, into a dataset.",
        "  schema   Print the JSON Schema of a dataset file.",
        "  verify   Run each site's validator in the target's environment (executes it).",
    ]
