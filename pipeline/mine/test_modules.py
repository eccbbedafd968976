"""Which files of a tree are test code: their checks guard a test suite, not a user's
settings, so no site comes from them (a `raise ValueError` in `testing_utils.py` is a test
helper refusing a fixture, not a validation error a user meets).

| path | test code |
|---|---|
| `tests/test_config.py`, `sglang/test/lora_utils.py` | yes: a `test`, `tests`, `testing` or `test_utils` folder |
| `src/diffusers/utils/testing_utils.py`, `accelerate/test_utils/testing.py` | yes: a testing module |
| `pkg/test_models.py`, `pkg/models_test.py`, `pkg/conftest.py` | yes: pytest's file names |
| `vllm/config/model.py`, `pkg/attestation.py`, `pkg/contest.py` | no |
"""

from __future__ import annotations

_FOLDERS = frozenset({"test", "tests", "testing", "test_utils"})
_MODULES = frozenset({"testing.py", "testing_utils.py", "test_utils.py", "tests.py", "conftest.py"})


def is_test_module(path: str) -> bool:
    """Whether a `.py` file (its path in the tree, `/`-separated) is test code."""
    *folders, name = path.split("/")
    if _FOLDERS.intersection(folders) or name in _MODULES:
        return True
    return name.startswith("test_") or name.endswith("_test.py")
