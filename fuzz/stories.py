"""Longer stories: bugs that need two completions, two restarts or two reconnects sit
beyond the tour's depth.  Each model names the features of such stories; the fuzzer
reports how many distinct model states its walks reached that have each one, so a
change that stops reaching them shows as a smaller figure."""

from __future__ import annotations

from typing import Callable, Iterable

from osf_check.models.dsl import Model

#: (feature, condition on a state's variables by name, what rules it out: a function of
#: the model that names the parameter letting it happen, or None if it can)
Feature = tuple[str, Callable[[Callable[[str], tuple[int, ...]]], bool],
                Callable[[Model], "str | None"]]
_TERMINAL = ("completed", "failed", "cancelled")


def _graph_terminal(m: Model) -> set[int]:
    from osf_check.models.graph_relay.vocab import STATUS
    return {STATUS.names.index(n) for n in _TERMINAL}


def _counts_to(var: str, least: int, hint: str) -> Callable[[Model], "str | None"]:
    """Out of reach (``hint``) where ``var``'s domain stops below ``least``."""
    return lambda m: None if m.var_by_name[var].domain.hi >= least else hint


def _slots(var: str, least: int, hint: str) -> Callable[[Model], "str | None"]:
    """Out of reach (``hint``) where the array ``var`` has fewer than ``least`` slots."""
    return lambda m: None if (m.var_by_name[var].length or 1) >= least else hint


STORIES: dict[str, tuple[Feature, ...]] = {
    "wire-relay": (
        ("two restarts", lambda v: v("restarts")[0] >= 2, _counts_to("restarts", 2, "restarts=2")),
        ("two reconnects", lambda v: v("gen")[0] >= 2, _counts_to("gen", 2, "gens=3")),
        ("every operation answered", lambda v: min(v("nfinal")) >= 1, lambda m: None),
    ),
    "graph-relay": (
        ("two runs ended", lambda v: sum(x in v.terminal for x in v("status")) >= 2,  # type: ignore[attr-defined]
         _slots("status", 2, "intents=2")),
        ("a second attempt of an intent", lambda v: max(v("attempts")) >= 2,
         _counts_to("attempts", 2, "retries=1")),
    ),
}


class _View:
    def __init__(self, m: Model, state: tuple[int, ...]):
        self.slots = {v.name: v.slots for v in m.variables}
        self.state = state
        self.terminal = _graph_terminal(m) if m.name == "graph-relay" else set()

    def __call__(self, name: str) -> tuple[int, ...]:
        return tuple(self.state[i] for i in self.slots[name])


def count(m: Model, states: Iterable[tuple[int, ...]]) -> dict[str, int]:
    """How many of ``states`` have each long-story feature of ``m``."""
    feats = STORIES.get(m.name, ())
    out = {name: 0 for name, _, _ in feats}
    for s in states:
        v = _View(m, s)
        for name, f, _ in feats:
            if f(v):
                out[name] += 1
    return out


def out_of_reach(m: Model) -> dict[str, str]:
    """The long stories ``m``'s parameters rule out (its variables cannot hold them),
    each with the parameter that would let it happen (``{"two restarts": "restarts=2"}``):
    their count of 0 says nothing about the walks."""
    return {name: hint for name, _, rules_out in STORIES.get(m.name, ())
            if (hint := rules_out(m)) is not None}
