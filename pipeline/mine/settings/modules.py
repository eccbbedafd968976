"""The dotted module name of each `.py` file of a tree, as its imports name it."""

from __future__ import annotations

import sys
from collections.abc import Iterable


class ModuleIndex:
    """Dotted module names of a tree's `.py` files: by their whole path, and from their
    source root (the directories above the topmost `__init__.py` taken off, so that
    `python/sglang/srt/x.py` is `sglang.srt.x`, as imports name it)."""

    def __init__(self, paths: Iterable[str]) -> None:
        python = sorted(p for p in paths if p.endswith(".py"))
        packages = {p.rsplit("/", 1)[0] for p in python if p.endswith("/__init__.py")}
        self._modules: dict[str, str] = {}
        rooted: dict[str, str] = {}
        for path in python:
            parts = path[:-3].split("/")
            if parts[-1] == "__init__":
                parts = parts[:-1]
            if not parts:
                continue
            self._modules.setdefault(".".join(parts), path)
            directories = path.split("/")[:-1]
            root = len(directories)
            while root > 0 and "/".join(directories[:root]) in packages:
                root -= 1
            top = parts[root] if root < len(parts) else ""
            if root and top not in sys.stdlib_module_names:
                rooted.setdefault(".".join(parts[root:]), path)
        for module, path in rooted.items():
            self._modules.setdefault(module, path)

    def path_of(self, module: str) -> str | None:
        """The file of a module, or None when the tree does not hold it."""
        return self._modules.get(module) if module else None

    @staticmethod
    def package_of(path: str) -> list[str]:
        """The package parts a relative import in this file starts from."""
        parts = path[:-3].split("/")
        return parts[:-1]

    def absolute(self, module: str, level: int, path: str) -> str:
        """`from ..x import y` in `a/b/c.py` -> `a.x` (a relative module made absolute)."""
        if level == 0:
            return module
        package = self.package_of(path)
        if level > 1:
            package = package[: len(package) - (level - 1)]
        return ".".join([*package, *([module] if module else [])])
