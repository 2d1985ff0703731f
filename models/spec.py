"""How a model presents itself to the rest of osf-check: parameters, mutants, builder."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

from .dsl import Model, Param
from .errors import UnknownName, did_you_mean

__all__ = ["ModelSpec"]


@dataclass(frozen=True)
class ModelSpec:
    """A model of the catalogue.

    ``build(params, mutant)`` returns the :class:`~osf_check.models.dsl.Model` for fully
    resolved parameters and a mutant name (or ``None`` for the correct model).
    ``mutants`` maps each mutant name this model implements to what it breaks in
    the system, in one sentence.
    """

    name: str
    title: str
    params: tuple[Param, ...]
    mutants: Mapping[str, str]
    build_fn: Callable[..., Model]
    default: bool = True  # checked by a bare `osf-check explore`
    #: environment assumptions the model enforces unless dropped by name
    assumptions: Mapping[str, str] = field(default_factory=dict)

    def resolve(self, overrides: Mapping[str, Any] | None = None) -> dict[str, int]:
        """Defaults updated by ``overrides``; ``ValueError`` names the bad one."""
        known = {p.name: p for p in self.params}
        out = {p.name: p.default for p in self.params}
        for k, v in (overrides or {}).items():
            if k not in known:
                raise UnknownName(f"model {self.name} has no parameter {k!r} "
                                  f"({did_you_mean(k, known)}it has: "
                                  f"{', '.join(known) or 'none'})")
            out[k] = known[k].check(v)
        return out

    def build(self, overrides: Mapping[str, Any] | None = None, mutant: str | None = None,
              drop: Iterable[str] = ()) -> Model:
        if mutant is not None and mutant not in self.mutants:
            raise UnknownName(f"model {self.name} has no mutant {mutant!r} "
                              f"({did_you_mean(mutant, self.mutants)}it has: "
                              f"{', '.join(self.mutants) or 'none'})")
        dropped = frozenset(drop)
        unknown = dropped - set(self.assumptions)
        if unknown:
            raise UnknownName(f"model {self.name} has no assumption {sorted(unknown)[0]!r} "
                             f"(it has: {', '.join(self.assumptions) or 'none'})")
        if dropped:
            return self.build_fn(self.resolve(overrides), mutant, dropped)
        return self.build_fn(self.resolve(overrides), mutant)
