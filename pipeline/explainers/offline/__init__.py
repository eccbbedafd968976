"""The offline explainer: deterministic, honest text built from what the static analysis knows
(`explainer.py`), from guards read as conditions (`conditions.py`), the checks of a site's
function with the flags that set them (`checks.py`) and the code snippets (`snippets.py`)."""

from pipeline.explainers.offline.explainer import PROMPT_VERSION, OfflineExplainer, explain_site

__all__ = ["PROMPT_VERSION", "OfflineExplainer", "explain_site"]
