"""Whether a refusal is the protocol's, or the model's settings'.

A model's parameters are of two sorts.  A bound (``bound="count"`` or ``"size"``) only
cuts behaviour off, and :mod:`.bounds` judges a refusal met at one.  A setting (every
other parameter: how many projects a deployment connects, which workload runs, a pending
limit) changes what the protocol does: a deployment with two projects syncs what one with
one never does, a limit of 2 forwards what a limit of 1 answers with an error.  A log says
nothing of its deployment's settings, so the model checks it at its defaults, and a line
the defaults do not explain may be a correct step of a deployment set otherwise.

A refusal therefore stands only when every setting is settled for the log: stated (under
``params`` in the mapping, or with ``--param``), or of so few values (projects 1..2,
slugs 1..3) that the log is read again up to the refused line at every other combination
of them, and none explains it.  Otherwise the verdict is unknown, and a combination that
explains the line is named (``rerun with --param projects=2``).
"""

from __future__ import annotations

import itertools
from typing import Any, Callable, Iterable, Protocol

from osf_check.models.dsl import Model

from .bounds import Bounds
from .mapping import Mapping

#: how the log checker reads a log again at other settings: (checker, result, mapping,
#: reread, params) -> (model, result) or, where the mapping does not fit, why not
ReadAgain = Callable[..., Any]


class LogChecker(Protocol):
    """What the judging reads of :class:`.check.LogChecker` (named here, not imported:
    the checker imports this module)."""

    model: Model
    bounds: Bounds


class LogResult(Protocol):
    """What the judging reads and writes of :class:`.check.LogResult`."""

    failing: dict[str, Any] | None

__all__ = ["settings_of", "judge_settings"]

#: a setting is tried at its other values only when it has at most this many (a limit of
#: 1..4096 is not searched: the deployment's value must be stated)
FEW_VALUES = 4
#: at most this many readings of the log again per refusal (more combinations: unknown)
MAX_READS = 16


def settings_of(chk: LogChecker) -> dict[str, int]:
    """The settings of the checked model (parameters that are no bound and can take more
    than one value), at their values."""
    spec = chk.bounds.spec
    if spec is None:  # a model built by hand: it has no parameters to be set otherwise
        return {}
    return {p.name: chk.model.params[p.name] for p in spec.params
            if not p.bound and isinstance(chk.model.params.get(p.name), int) and p.lo < p.hi}


def judge_settings(res: LogResult, chk: LogChecker, mapping: Mapping,
                   reread: Callable[[], Iterable[str]] | None, declared: set[str],
                   read_again: ReadAgain) -> None:
    """Turn a refusal into unknown unless the model's settings are settled for the log:
    each stated, or of a few values every combination of which was tried and refused the
    log by its line too.  ``res.failing["settings"]`` then names the unsettled ones (at
    their values) and, where one combination explains the line, that one.

    ``read_again(chk, res, mapping, reread, params)`` reads the log again up to the
    refused line with ``params`` changed (the log checker's own reader, passed in so that
    this module does not import the checker that imports it)."""
    fail = res.failing
    assert fail is not None
    own = settings_of(chk)
    spec = chk.bounds.spec
    few = {p.name: range(p.lo, p.hi + 1) for p in (spec.params if spec else ())
           if p.name in own and p.name not in declared and p.hi - p.lo < FEW_VALUES}
    unstated = {k: v for k, v in own.items() if k not in declared and k not in few}
    tried, at = _search(res, chk, mapping, reread, few, read_again)
    if at is None and tried and not unstated:
        return  # every value of the few the log left open refuses it too
    fail["bounded"] = True
    fail["settings"] = {"unstated": {k: own[k] for k in own
                                     if k in unstated or (k in few and not tried)},
                        "explained_at": at}


def _search(res: LogResult, chk: LogChecker, mapping: Mapping,
            reread: Callable[[], Iterable[str]] | None, few: dict[str, range],
            read_again: ReadAgain) -> tuple[bool, dict[str, int] | None]:
    """Read the log again up to the refused line at every other combination of the
    ``few`` settings' values: whether all were tried, and the first that explains the
    line (None if none does)."""
    if not few:
        return True, None
    if reread is None or mapping.doc is None:
        return False, None
    names = list(few)
    combos = [dict(zip(names, vs)) for vs in itertools.product(*few.values())]
    combos = [c for c in combos if any(c[k] != chk.model.params[k] for k in names)]
    if len(combos) > MAX_READS:
        return False, None
    for c in combos:
        # a mapping that does not fit the model there (it names an action the model at
        # slugs=1 does not have) describes no deployment set so: nothing to try
        got = read_again(chk, res, mapping, reread, c)
        if not isinstance(got, str) and got[1].explained:
            return True, {k: v for k, v in c.items() if v != chk.model.params[k]}
    return True, None


def settings_text(settings: dict[str, Any]) -> str:
    """What the CLI says of unstated settings.

    >>> settings_text({"unstated": {"projects": 1, "slugs": 2},
    ...                "explained_at": {"projects": 2}})
    'the model explains it at projects=2: rerun with --param projects=2 (or set it under params in the mapping)'
    >>> settings_text({"unstated": {"projects": 1}, "explained_at": None})
    "the deployment's settings were not stated: rerun with --param NAME=VALUE for projects (or set them under params in the mapping) for a verdict"
    """
    at = settings["explained_at"]
    if at:
        kv = ", ".join(f"{k}={v}" for k, v in at.items())
        return (f"the model explains it at {kv}: rerun with "
                + " ".join(f"--param {k}={v}" for k, v in at.items())
                + " (or set it under params in the mapping)")
    return ("the deployment's settings were not stated: rerun with --param NAME=VALUE for "
            + ", ".join(settings["unstated"]) + " (or set them under params in the mapping) "
            "for a verdict")
