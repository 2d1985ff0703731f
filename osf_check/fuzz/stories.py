"""Longer stories: bugs that need two completions, two restarts or two reconnects sit
beyond the tour's depth.  Each model names the features of such stories; the fuzzer
reports how many distinct model states its walks reached that have each one, so a
change that stops reaching them shows as a smaller figure."""

from __future__ import annotations

from typing import Callable, Iterable

from osf_check.models.dsl import Model

#: model -> (feature, condition on a state's variables by name)
Feature = tuple[str, Callable[[Callable[[str], tuple[int, ...]]], bool]]
_TERMINAL = ("completed", "failed", "cancelled")


def _graph_terminal(m: Model) -> set[int]:
    from osf_check.models.graph_relay.vocab import STATUS
    return {STATUS.names.index(n) for n in _TERMINAL}


STORIES: dict[str, tuple[Feature, ...]] = {
    "wire-relay": (
        ("two restarts", lambda v: v("restarts")[0] >= 2),
        ("two reconnects", lambda v: v("gen")[0] >= 2),
        ("every operation answered", lambda v: min(v("nfinal")) >= 1),
    ),
    "graph-relay": (
        ("two runs ended", lambda v: sum(x in v.terminal for x in v("status")) >= 2),  # type: ignore[attr-defined]
        ("a second attempt of an intent", lambda v: max(v("attempts")) >= 2),
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
    out = {name: 0 for name, _ in feats}
    for s in states:
        v = _View(m, s)
        for name, f in feats:
            if f(v):
                out[name] += 1
    return out
