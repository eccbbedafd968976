"""Pages -> a folder, all or nothing: every page is written into a temporary folder inside
the output folder first, and only when all of them are on disk are they moved into place
(a rename each, which needs no space). So a render stopped by a full disk, or any failed
write, changes nothing: the old pages stay as they were, and a first render leaves no
folder. Files vmine did not write are left alone; record pages of records no longer in the
dataset are removed."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path

from pipeline.output import DIR_MODE, TEMP_PREFIX

_STRAYS = f"{TEMP_PREFIX}render-*"


class PagesNotWritten(Exception):
    """A page could not be written (a full disk, a folder that cannot be written); nothing
    in the output folder was changed. The message is the system's reason."""


def write_pages(
    pages: Iterable[tuple[str, str]],
    out_dir: Path,
    owned: Iterable[tuple[str, re.Pattern[str]]],
) -> list[Path]:
    """Write `pages` ((relative posix path, text), paths vmine chose) into `out_dir` as
    described above. `owned` says where record pages live ((folder, file name pattern)):
    those not written this time are removed. Returns the files written."""
    out_dir = Path(out_dir)
    created = not out_dir.exists()
    out_dir.mkdir(parents=True, exist_ok=True)
    for stray in out_dir.glob(_STRAYS):  # left by a render that was killed
        shutil.rmtree(stray, ignore_errors=True)
    temp = Path(tempfile.mkdtemp(prefix=_STRAYS[:-1], dir=out_dir))
    try:
        names = _write_all(pages, temp)
        for folder in sorted({Path(name).parent for name in names}):
            (out_dir / folder).mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    except BaseException as error:
        shutil.rmtree(temp, ignore_errors=True)
        if created:
            shutil.rmtree(out_dir, ignore_errors=True)
        if isinstance(error, OSError):
            raise PagesNotWritten(error.strerror or str(error)) from None
        raise
    # Every page is on disk: renames put them in place (`index` last, so a reader that
    # follows its links finds the pages it lists).
    for name in sorted(names, key=lambda name: name.startswith("index.")):
        os.replace(temp / name, out_dir / name)
    shutil.rmtree(temp, ignore_errors=True)
    written = {out_dir / name for name in names}
    for folder, pattern in owned:
        where = out_dir / folder
        for path in where.iterdir() if where.is_dir() else ():
            if pattern.fullmatch(path.name) and path not in written and path.is_file():
                path.unlink()
    return [out_dir / name for name in names]


def _write_all(pages: Iterable[tuple[str, str]], temp: Path) -> list[str]:
    names = []
    for name, text in pages:
        path = temp / name
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "wb") as out:  # a new file: the usual mode for the umask
            out.write(text.encode("utf-8"))
        names.append(name)
    return names
