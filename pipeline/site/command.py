"""What `vmine render` does: load one dataset, then write Markdown pages or the HTML site."""

from __future__ import annotations

from pathlib import Path

from pipeline.dataset.reader import DatasetError, load_dataset, one_dataset
from pipeline.site.html import render_site
from pipeline.site.markdown import render_markdown


class RenderError(Exception):
    """A dataset that cannot be rendered or an output problem (one line for the user)."""


def render(dataset_path: Path, fmt: str, out_dir: Path) -> list[Path]:
    """The `render` command: load the dataset, write the pages, return the files written."""
    try:
        dataset = load_dataset(one_dataset(dataset_path))
    except DatasetError as error:
        raise RenderError(str(error)) from None
    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise RenderError(f"{out_dir}: exists and is not a directory")
    if fmt == "html":
        return render_site(dataset, out_dir)
    return render_markdown(dataset, out_dir)
