"""Command-line interface: each command parses its arguments and calls one pipeline function."""

from __future__ import annotations

import click

from pipeline import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="vmine")
def main() -> None:
    """Mine the validation errors of a Python code base into explained error records."""
