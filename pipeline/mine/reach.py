"""Validators followed into the other files of the repository, through their imports.

A validator that calls a function of another file (`from .environment import str_to_bool`,
then `str_to_bool(value)`) reaches it as it reaches a function of its own file: the file
that defines it is analysed again with the function named in its rules (`Rules.reached`),
and what that function calls is followed in turn, round by round (at most `MAX_ROUNDS`,
each import followed through at most `MAX_HOPS` re-exports, `from .utils import x` of a
package whose `__init__.py` imports `x` from elsewhere). Only a top-level function whose
text raises a configured class is followed: any other has no site to give. Each analysis is cached under its rules, as the first ones are.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from extractors.facts import FileExtraction, Rules
from extractors.imports import imported, raising_functions
from pipeline.mine.settings.modules import ModuleIndex

MAX_ROUNDS = 8
MAX_HOPS = 4

# blob -> its bytes, for the blobs asked (in any order)
ReadBlobs = Callable[[Iterable[str]], Iterator[tuple[str, bytes]]]


@dataclass
class Reach:
    """What the validators of a tree reach in other files, grown round by round."""

    paths_of: Mapping[str, list[str]]  # blob -> its paths in the tree
    read: ReadBlobs
    error_classes: Callable[[str], tuple[str, ...]]  # blob -> the classes its sites raise
    modules: ModuleIndex = field(init=False)
    reached: dict[str, set[str]] = field(default_factory=dict)  # blob -> names reached
    _blob_at: dict[str, str] = field(default_factory=dict)  # path -> blob
    _texts: dict[str, str] = field(default_factory=dict)  # blob -> its text, once read
    _imported: dict[str, dict[str, tuple[str, str | None]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._blob_at = {path: blob for blob, paths in self.paths_of.items() for path in paths}
        self.modules = ModuleIndex(self._blob_at)

    def grown(self, results: Mapping[str, FileExtraction]) -> list[str]:
        """Add what the validators of `results` (blob -> analysis) call in other files; the
        blobs whose reached names grew, in tree order."""
        # (caller's blob, path of the module, name), resolved one import hop per pass
        pending = [
            (blob, path, call)
            for blob, extraction in results.items()
            for call in extraction.calls_out
            for path in self.paths_of.get(blob, ())
        ]
        wanted: dict[str, set[str]] = {}
        for hops in range(MAX_HOPS + 1):
            found = [
                (caller, target, name)
                for caller, path, call in pending
                if (target := self._module_file(path, call)) is not None
                for name in [call.rsplit(":", 1)[1]]
            ]
            self._load({self._blob_at[target] for _, target, _ in found})
            pending = []
            for caller, target, name in found:
                blob = self._blob_at[target]
                text = self._texts[blob]
                again = self._imports(blob).get(name) if f"def {name}" not in text else None
                if again is not None and again[1] is not None and hops < MAX_HOPS:
                    pending.append((caller, target, f"{again[0]}:{again[1]}"))  # a re-export
                elif blob != caller:
                    wanted.setdefault(blob, set()).add(name)
        grown = []
        for blob, names in wanted.items():
            new = names - self.reached.get(blob, set())
            if not new:
                continue
            new = raising_functions(self._texts[blob], sorted(new), self.error_classes(blob))
            if new:
                self.reached.setdefault(blob, set()).update(new)
                grown.append(blob)
        order = {blob: index for index, blob in enumerate(self.paths_of)}
        return sorted(grown, key=order.__getitem__)

    def rules(self, blob: str, base: Rules) -> Rules:
        """The rules of a blob's file with the names reached in it."""
        return base.model_copy(update={"reached": tuple(sorted(self.reached[blob]))})

    def _module_file(self, path: str, call: str) -> str | None:
        """The tree path of the module a `module:name` call of the file at `path` names
        (a relative module from that file), when the name is a plain one."""
        written, name = call.rsplit(":", 1)
        if "." in name:
            return None
        level = len(written) - len(written.lstrip("."))
        return self.modules.path_of(self.modules.absolute(written[level:], level, path))

    def _imports(self, blob: str) -> dict[str, tuple[str, str | None]]:
        if blob not in self._imported:
            self._imported[blob] = imported(self._texts[blob])
        return self._imported[blob]

    def _load(self, blobs: Iterable[str]) -> None:
        for blob, data in self.read([blob for blob in blobs if blob not in self._texts]):
            self._texts[blob] = data.decode("utf-8", "surrogateescape")
