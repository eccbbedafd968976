"""Where a command's output file goes (`-`, stdout, is the command's to print): a regular
file or a new path is replaced atomically (temp file + rename, so a reader never sees half of
it); anything else (a device, a FIFO, a symlink, a socket) is opened and written in place,
never replaced."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

TEMP_PREFIX = ".vmine-tmp-"


def _read_umask() -> int:
    # Read once, while the process has a single thread: setting and restoring it is the only
    # portable way to learn it, and a thread creating a file meanwhile would get mode 0666.
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


UMASK = _read_umask()
FILE_MODE = 0o666 & ~UMASK  # what open() gives a new file, 0644 under the usual umask
DIR_MODE = 0o777 & ~UMASK


def replaceable(status: os.stat_result | None) -> bool:
    """Whether a path with this `lstat` (None: nothing there) may be replaced by a rename:
    only a regular file, or nothing. A device, FIFO, socket or symlink is written into."""
    return status is None or stat.S_ISREG(status.st_mode)


def write_output(path: Path | str, text: str) -> bool:
    """Write `text` to `path` as described above; returns False (and writes nothing) when a
    regular file already holds exactly these bytes."""
    data = text.encode("utf-8")
    path = Path(path)
    try:
        status: os.stat_result | None = path.lstat()
    except FileNotFoundError:
        status = None
    if not replaceable(status):
        with open(path, "wb") as out:  # follows a symlink; blocks on a FIFO until read
            out.write(data)
        return True
    return write_atomic(path, data, mode=None if status is None else stat.S_IMODE(status.st_mode))


def write_atomic(path: Path, data: bytes, mode: int | None = None) -> bool:
    """Replace the regular file `path` (or create it, with its parents) via a temp file in the
    same directory and `os.replace`; it gets `mode`, else the usual mode for a new file.
    Returns False (and writes nothing) when the file already holds exactly these bytes."""
    try:
        if path.stat().st_size == len(data) and path.read_bytes() == data:
            return False
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(prefix=TEMP_PREFIX, dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.chmod(temp, FILE_MODE if mode is None else mode)  # mkstemp makes it 0600
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return True
