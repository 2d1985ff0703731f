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
:mod:`osf_check.relay` and :mod:`osf_check.simulate`.
"""

from osf_check.api import Checker, ExploreResult, ProveResult, load, models
from osf_check.models.dsl import Bool, Enum, Int, Model, ModelBuilder, ModelError, Param
from osf_check.models.errors import BadValue, InputError, UnknownName
from osf_check.models.expr import (And, Count, If, Iff, Implies, Max, Min, Not, Or, Select,
                                   Sum)
from osf_check.models.spec import ModelSpec
from osf_check.properties.base import (Assumption, Check, Goal, Mutant, Property,
                                       mutant_catalogue, unchanged)
from osf_check.properties.sources import UserModelError, load_file

__all__ = [
    "Checker", "ExploreResult", "ProveResult", "load", "load_file", "models",
    "ModelBuilder", "Model", "ModelSpec", "Param", "Bool", "Enum", "Int", "ModelError",
    "And", "Or", "Not", "If", "Iff", "Implies", "Sum", "Count", "Select", "Min", "Max",
    "Property", "Check", "Goal", "Mutant", "Assumption", "mutant_catalogue", "unchanged",
    "InputError", "BadValue", "UnknownName", "UserModelError",
]
