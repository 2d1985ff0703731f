"""osf-check: a model checker and fuzzing harness for relay protocols.

The stable surface: write a model with :class:`ModelBuilder` and the expression helpers,
state its properties with :class:`Property` and :class:`Check`, and check it with a
:class:`Checker`:

>>> import osf_check
>>> r = osf_check.Checker("two-phase").params(rms=3).depth(None).explore()
>>> r.distinct, r.generated  # TLC's figures for TwoPhase.tla with N = 3
(288, 1146)

Everything else (the engines, the fuzzer, the reference implementation) lives in the
subpackages: :mod:`osf_check.models`, :mod:`osf_check.properties`,
:mod:`osf_check.explorer`, :mod:`osf_check.fuzz`, :mod:`osf_check.traces`,
:mod:`osf_check.relay` and :mod:`osf_check.simulate`.  The names below are imported on
first use, so that ``import osf_check.relay.wire`` (the reference implementation) does
not load the checker.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "osf_check.api": ("Checker", "ExploreResult", "ProveResult", "load", "models"),
    "osf_check.models.dsl": ("Bool", "Enum", "Int", "Model", "ModelBuilder", "ModelError",
                             "Param"),
    "osf_check.models.errors": ("BadValue", "InputError", "UnknownName"),
    "osf_check.models.expr": ("And", "Choose", "Count", "Exists", "ForAll", "If", "Iff",
                              "Implies", "Max", "Min", "Not", "Or", "Select", "Sum"),
    "osf_check.models.spec": ("ModelSpec",),
    "osf_check.models.structured": ("Array", "Record", "SetOf", "SetTable", "Tuple"),
    "osf_check.properties.base": ("Assumption", "Check", "Goal", "Mutant", "Property",
                                  "mutant_catalogue", "unchanged"),
    "osf_check.properties.sources": ("UserModelError", "load_file"),
}
_WHERE = {name: module for module, names in _EXPORTS.items() for name in names}
__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'osf_check' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # the next lookup is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
