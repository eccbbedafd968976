"""Release archives written by hand for the `pypi:` tests: sdists (also hostile ones, with
symlinks and build scripts that leave a marker), wheels, and the find-links folder pip and
vmine are pointed at."""

from __future__ import annotations

import hashlib
import io
import tarfile
import zipfile
from pathlib import Path

# An in-tree build backend with no build requirements: pip can prepare its metadata
# without reaching any index (which is what an older vmine had pip do, and must not).
BACKEND = """\
import os


def get_requires_for_build_wheel(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    name = NAME + "-" + VERSION + ".dist-info"
    os.makedirs(os.path.join(metadata_directory, name))
    with open(os.path.join(metadata_directory, name, "METADATA"), "w") as out:
        out.write("Metadata-Version: 2.1\\nName: " + NAME + "\\nVersion: " + VERSION + "\\n")
    return name


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    raise RuntimeError("not needed by pip download")
"""

# A backend whose metadata step fails, as a real one does when it is not installed here.
FAILING_BACKEND = """\
def get_requires_for_build_wheel(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    raise RuntimeError("this backend needs a compiler")
"""

LIMITS = """\
def validate_port(port: int) -> None:
    if not 0 < port < 65536:
        raise ValueError(f"--port must be between 1 and 65535, got {port}")
"""


def marker_script(marker: Path) -> str:
    """Python that leaves `marker` behind when anything runs it (a setup.py, a backend)."""
    return f"import pathlib\npathlib.Path({str(marker)!r}).write_text('ran')\n"


def add_file(tar: tarfile.TarFile, name: str, data: str | bytes) -> None:
    raw = data.encode() if isinstance(data, str) else data
    info = tarfile.TarInfo(name)
    info.size = len(raw)
    tar.addfile(info, io.BytesIO(raw))


def add_link(tar: tarfile.TarFile, name: str, target: str, *, hard: bool = False) -> None:
    info = tarfile.TarInfo(name)
    info.type = tarfile.LNKTYPE if hard else tarfile.SYMTYPE
    info.linkname = target
    tar.addfile(info)


def make_sdist(
    index: Path,
    name: str,
    version: str,
    files: dict[str, str],
    backend: str | None = BACKEND,
    *,
    links: dict[str, str] | None = None,
) -> Path:
    """`NAME-VERSION.tar.gz` in `index`: PKG-INFO, a pyproject naming the in-tree `backend`
    (none when None: a setup.py project), `files`, then `links` (name -> symlink target),
    all under the top folder `NAME-VERSION/`."""
    index.mkdir(parents=True, exist_ok=True)
    top = f"{name}-{version}"
    path = index / f"{top}.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        add_file(
            tar, f"{top}/PKG-INFO", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
        )
        if backend is not None:
            add_file(
                tar,
                f"{top}/pyproject.toml",
                '[build-system]\nrequires = []\nbuild-backend = "tinybackend"\n'
                'backend-path = ["."]\n',
            )
            add_file(
                tar, f"{top}/tinybackend.py", f"NAME = {name!r}\nVERSION = {version!r}\n" + backend
            )
        for link, target in (links or {}).items():
            add_link(tar, f"{top}/{link}", target)
        for inner, text in files.items():
            add_file(tar, f"{top}/{inner}", text)
    return path


def make_wheel(
    index: Path, name: str, version: str, files: dict[str, bytes], metadata: str = ""
) -> Path:
    index.mkdir(parents=True, exist_ok=True)
    path = index / f"{name}-{version}-py3-none-any.whl"
    info = f"{name}-{version}.dist-info"
    meta = {
        f"{info}/METADATA": (
            f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n" + metadata
        ).encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\n"
        b"Tag: py3-none-any\n",
    }
    with zipfile.ZipFile(path, "w") as zf:
        for inner, data in {**files, **meta}.items():
            zf.writestr(inner, data)
        zf.writestr(f"{info}/RECORD", "")
    return path


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
