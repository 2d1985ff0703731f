"""``osf-check describe``: a model's reference, for whoever writes an adapter or a log
mapping for it.  The words come from the model (:mod:`osf_check.models.describe`); this
module gathers what the catalogue and the fuzz harness know of the model besides.
"""

from __future__ import annotations

from typing import Any, Mapping

from osf_check.models.describe import describe, to_markdown

__all__ = ["reference", "reference_text", "FORMATS"]

#: what ``--format`` takes
FORMATS = ("md", "json")


def reference(model: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The reference of catalogue model ``model`` (loaded from a model file first, if it
    is one) at ``params`` (unnamed ones at their defaults).  An unknown model or a bad
    parameter raises :class:`~osf_check.models.errors.InputError` naming what exists.

    >>> doc = reference("two-phase", {"rms": 2})
    >>> [a["signature"] for a in doc["actions"]][:2]
    ['TMRcvPrepared(r)', 'TMCommit']
    """
    from osf_check.driver.external import decides, idle_events
    from osf_check.properties import catalogue
    spec = catalogue.spec(model)
    m = spec.build(params or {})
    return describe(m, title=spec.title, params=spec.params,
                    properties=catalogue.properties_of(model), decides=decides(model),
                    idle=idle_events(model), mutants=spec.mutants)


def reference_text(model: str, params: Mapping[str, Any] | None = None,
                   fmt: str = "md") -> str:
    """The reference as ``fmt`` prints it: Markdown, or JSON (one document)."""
    import json
    doc = reference(model, params)
    if fmt == "json":
        return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    return to_markdown(doc)
