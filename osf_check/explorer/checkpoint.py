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
import os
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from osf_check.models.dsl import Model
from osf_check.models.errors import BadValue
from osf_check.properties.base import Property

from .store import STORE_VERSION

__all__ = ["run_identity", "save", "load"]


def run_identity(model: Model, props: Sequence[Property], *, keep_graph: bool,
                 check_deadlock: bool, symmetry: Sequence[str] = ()) -> dict[str, Any]:
    """What a checkpoint belongs to: resuming it under anything else would mix two runs.
    ``structure`` is a digest of every guard and update, so a mutant, a dropped
    assumption or an edited model changes it even where the names stay the same."""
    from importlib.metadata import PackageNotFoundError, version
    try:
        tool = version("osf-check")
    except PackageNotFoundError:
        tool = "unknown"
    h = hashlib.sha256()
    for v in model.variables:
        h.update(repr((v.name, [str(model.slot_domains[i]) for i in v.slots])).encode())
    for inst in model.instances:
        h.update(repr((inst.label, inst.guard, sorted(inst.updates.items()))).encode())
    return {"tool": f"osf-check {tool}", "engine": "vector", "model": model.name,
            "params": dict(model.params), "mutant": model.mutant,
            "properties": [p.id for p in props], "graph": keep_graph,
            "deadlock": check_deadlock, "symmetry": list(symmetry),
            "structure": h.hexdigest()[:16]}


def save(d: Path, meta: dict[str, Any], **arrays: object) -> None:
    """Write the search state atomically: a new file, then a rename."""
    d.mkdir(parents=True, exist_ok=True)
    tmp = d / ".state.npz.tmp"
    try:
        with open(tmp, "wb") as f:
            np.savez(f, store_version=STORE_VERSION, meta=np.array(json.dumps(meta)),
                     **{k: np.asarray(v) for k, v in arrays.items()})
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, d / "state.npz")
    except BaseException:  # interrupted mid-write: the last whole checkpoint stays
        tmp.unlink(missing_ok=True)
        raise


def load(d: Path, ident: dict[str, Any]) -> dict[str, Any]:
    """The arrays and the metadata of ``d``'s checkpoint, if it belongs to ``ident``."""
    p = d / "state.npz"
    if not p.exists():
        raise BadValue(f"--resume {d}: no checkpoint there (state.npz)")
    try:
        with np.load(p) as z:
            st = {k: z[k] for k in z.files}
        meta = json.loads(str(st["meta"]))
    except (OSError, ValueError, KeyError, EOFError) as e:
        raise BadValue(f"--resume {d}: not a checkpoint of this osf-check "
                       f"({type(e).__name__})") from None
    if int(st.get("store_version", 0)) != STORE_VERSION:
        raise BadValue(f"--resume {d}: the checkpoint was written by an older osf-check "
                       "(another layout of the visited set): start the run again")
    theirs = meta.get("identity", {})
    for k, mine in ident.items():
        if theirs.get(k) != mine:
            raise BadValue(f"--resume {d}: the checkpoint belongs to another run: {k} is "
                           f"{theirs.get(k)!r} there and {mine!r} here")
    st["meta"] = meta
    return st
