"""What `vmine render` does: load one dataset, then write Markdown pages or the HTML site."""

from __future__ import annotations

from pathlib import Path

from pipeline.dataset.reader import DatasetError, load_dataset, one_dataset
from pipeline.site.html import SITE_OWNED, site_files
from pipeline.site.markdown import MARKDOWN_OWNED, markdown_files
from pipeline.site.writer import PagesNotWritten, write_pages


class RenderError(Exception):
    """A dataset that cannot be rendered or an output problem (one line for the user)."""


def render(dataset_path: Path, fmt: str, out_dir: Path) -> list[Path]:
    """The `render` command: load the dataset, write the pages (all of them, or none: see
    pipeline/site/writer.py), return the files written."""
    try:
        dataset = load_dataset(one_dataset(dataset_path))
    except DatasetError as error:
        raise RenderError(str(error)) from None
    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise RenderError(f"{out_dir}: exists and is not a directory")
    pages, owned = (
        (site_files(dataset), SITE_OWNED)
        if fmt == "html"
        else (markdown_files(dataset), MARKDOWN_OWNED)
    )
    try:
        return write_pages(pages, out_dir, owned)
    except PagesNotWritten as error:  # a full disk, a folder that cannot be written
        raise RenderError(
            f"{out_dir}: cannot write the pages ({error}); nothing was changed"
        ) from None
