"""Checkpoints of the vector engine: what a run is (its identity), saved and loaded.

A checkpoint is one ``state.npz`` in its directory: the store's arrays, the frontier,
the counts, the edges (with the graph) and, as JSON, the identity of the run and what
its judge had learnt.  It is written to a new file and renamed, so an interrupted
save leaves the last whole checkpoint.  Resuming under anything else than the run
that wrote it (another model, mutant, property set, symmetry, tool version or model
text) is refused: the two runs would be mixed.
"""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from osf_check.models.dsl import Model
from osf_check.models.errors import BadValue
from osf_check.output import write_whole
from osf_check.properties.base import CheckList, Property

from .levels import STORE_VERSION

__all__ = ["run_identity", "checks_digest", "save", "load", "damaged"]


def run_identity(model: Model, props: Sequence[Property], *, keep_graph: bool,
                 check_deadlock: bool, symmetry: Sequence[str] = (),
                 checks: CheckList | None = None) -> dict[str, Any]:
    """What a checkpoint belongs to: resuming it under anything else would mix two runs.
    ``structure`` is the model's :meth:`~osf_check.models.dsl.Model.fingerprint` (every
    guard and update, the initial and end states, fairness), so that a mutant, a dropped
    assumption or an edited model changes it even where the names stay the same;
    ``checks`` a digest of every property's expressions (a checkpoint keeps the verdicts
    its levels were judged to, by the properties of then); ``checks``: the run's
    :class:`CheckList` of ``props``, if it has one already."""
    from importlib.metadata import PackageNotFoundError, version
    try:
        tool = version("osf-check")
    except PackageNotFoundError:
        tool = "unknown"
    return {"tool": f"osf-check {tool}", "engine": "vector", "model": model.name,
            "params": dict(model.params), "mutant": model.mutant,
            "properties": [p.id for p in props], "graph": keep_graph,
            "deadlock": check_deadlock, "symmetry": list(symmetry),
            "structure": model.fingerprint(), "checks": checks_digest(model, props, checks)}


def checks_digest(model: Model, props: Sequence[Property],
                  checks: CheckList | None = None) -> str:
    """A digest of what ``props`` check on ``model``: invariants, witnesses and limits,
    transition checks, and the premises and goals of reach and fair checks."""
    cl = checks if checks is not None else CheckList.of(model, props)
    h = hashlib.sha256()
    h.update(repr((cl.invs, cl.witnesses, cl.trans, cl.trans_props)).encode())
    for p in props:
        for c in p.checks:
            if c.kind in ("reach", "fair"):
                h.update(repr((p.id, c.kind, [(g.label, g.premise, g.goal)
                                              for g in c.goals(model)])).encode())
    return h.hexdigest()[:16]


def save(d: Path, meta: dict[str, Any], **arrays: object) -> None:
    """Write the search state whole (interrupted, the last whole checkpoint stays; a
    full disk is said as such, not as a bug)."""
    write_whole(d / "state.npz", lambda f: np.savez(
        f, store_version=STORE_VERSION, meta=np.array(json.dumps(meta)),
        **{k: np.asarray(v) for k, v in arrays.items()}), what="the checkpoint ")


def load(d: Path, ident: dict[str, Any], depth: int | None = None) -> dict[str, Any]:
    """The arrays and the metadata of ``d``'s checkpoint, if it belongs to ``ident`` and
    has not gone deeper than ``depth`` (its counts and verdicts are of all its levels)."""
    p = d / "state.npz"
    if not p.exists():
        raise BadValue(f"--resume {d}: no checkpoint there (state.npz)")
    try:
        with np.load(p) as z:
            st = {k: z[k] for k in z.files}
        meta = json.loads(str(st["meta"]))
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as e:
        raise BadValue(f"--resume {d}: not a checkpoint of this osf-check, or one cut "
                       f"short ({type(e).__name__})") from None
    if int(st.get("store_version", 0)) != STORE_VERSION:
        raise BadValue(f"--resume {d}: the checkpoint was written by an older osf-check "
                       "(another layout of the visited set): start the run again")
    theirs = meta.get("identity", {})
    for k, mine in ident.items():
        if theirs.get(k) != mine:
            what = _CHANGED.get(k) or (f"it was written with {_said(k, theirs.get(k))}, and "
                                       f"this run has {_said(k, mine)}")
            raise BadValue(f"--resume {d}: the checkpoint belongs to another run: {what}")
    why = damaged(st, graph=bool(ident.get("graph")))
    if why is not None:
        raise BadValue(f"--resume {d}: the checkpoint is damaged ({why}): resume an intact "
                       "copy, or start the run again")
    if depth is not None and int(st["level"]) > depth:
        raise BadValue(f"--resume {d}: the checkpoint has explored to depth {int(st['level'])} "
                       f"already, past --depth {depth}: resume it with --depth "
                       f"{int(st['level'])} or more, or start again with --depth {depth}")
    st["meta"] = meta
    return st


def _said(key: str, value: Any) -> str:
    """An identity's value as a sentence says it.

    >>> _said("mutant", None), _said("mutant", "outbox-off"), _said("params", {"rms": 4})
    ('no mutant', "mutant 'outbox-off'", 'parameters rms=4')
    >>> _said("properties", ["A1", "A2"]), _said("graph", False)
    ('properties A1, A2', 'graph False')
    """
    if value is None:
        return f"no {key}"
    if isinstance(value, dict):
        return "parameters " + (", ".join(f"{a}={b}" for a, b in value.items()) or "none") \
            if key == "params" else f"{key} {value}"
    if isinstance(value, list):
        return f"{key} {', '.join(map(str, value)) or 'none'}"
    return f"{key} {value!r}" if isinstance(value, str) else f"{key} {value}"


#: what a difference in a digest of the identity means, said without the digests
_CHANGED = {
    "structure": "the model is not the one it was written for (its variables, actions, "
                 "initial states, end states or fairness changed since): start the run again",
    "checks": "the properties' expressions are not the ones its levels were judged by "
              "(edited since): start the run again",
}


def damaged(st: dict[str, Any], *, graph: bool) -> str | None:
    """What makes the arrays of a checkpoint disagree with each other, if anything: a
    save writes them together, so only a file changed since can (read further, they
    would fail deep inside a search as a bug of osf-check's).

    >>> ok = {"keys": np.zeros((3, 1)), "parent": np.array([-1, 0, 0]),
    ...       "via": np.array([-1, 0, 1]), "level_start": np.array([0, 1]),
    ...       "frontier": np.array([1, 3]), "generated": np.array(5),
    ...       "fired": np.array([2, 2]), "level": np.array(1), "seconds": np.array(0.1)}
    >>> damaged(ok, graph=False) is None
    True
    >>> damaged({**ok, "parent": np.array([-1, 0])}, graph=False)
    'keys has 3 rows and parent 2'
    """
    need = ["keys", "parent", "via", "level_start", "frontier", "generated", "fired",
            "level", "seconds"] + (["src_e", "dst_e", "act_e"] if graph else [])
    missing = [k for k in need if k not in st]
    if missing:
        return f"no {', '.join(missing)}"
    keys, n = st["keys"], len(st["keys"])
    if keys.ndim != 2:
        return "keys is not a table"
    for k in ("parent", "via"):
        if st[k].shape != (n,):
            return f"keys has {n} rows and {k} {len(st[k])}"
    starts, fr = st["level_start"], st["frontier"]
    if starts.ndim != 1 or not len(starts) or starts[0] != 0 or \
            (np.diff(starts) < 0).any() or starts[-1] > n:
        return f"the levels' starts {starts.tolist()[:6]} do not fit {n} states"
    if fr.shape != (2,) or not 0 <= fr[0] <= fr[1] <= n:
        return f"the frontier {fr.tolist()} does not fit {n} states"
    if fr.tolist() not in ([int(starts[-1]), n], [n, n]):  # the last level, or none left
        return f"the frontier {fr.tolist()} is not the last level {[int(starts[-1]), n]}"
    if n and not ((st["parent"] >= -1) & (st["parent"] < n)).all():
        return "a parent link points outside the states"
    if int(st["generated"]) < n:
        return f"{int(st['generated'])} states generated, fewer than the {n} stored"
    if graph:
        src, dst = st["src_e"], st["dst_e"]
        if not src.shape == dst.shape == st["act_e"].shape:
            return "the edges' sources, targets and actions differ in number"
        if len(src) and not (min(src.min(), dst.min()) >= 0 and max(src.max(), dst.max()) < n):
            return "an edge points outside the states"
    return None
