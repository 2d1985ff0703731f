"""The Python API: a checker builder over a model, and the results it returns.

A :class:`Checker` says *what* to check (a model, its parameters, a mutant, which
properties, which assumptions to drop) and *how* (depth, engine, workers, limits).
Each setter returns a new checker, so one configured checker can be varied:

>>> import osf_check
>>> base = osf_check.Checker("two-phase").params(rms=2)
>>> r = base.depth(None).explore()
>>> r.verdict, r.distinct, r.generated, r.complete
('ok', 56, 154, True)
>>> r.status
{'T1': 'holds'}
>>> bad = base.mutant("commit-without-all-prepared").explore()
>>> bad.verdict, bad.exit_code, len(bad.traces[0]["steps"]) - 1
('safety', 12, 5)

The model can be a catalogue name, a :class:`~osf_check.models.spec.ModelSpec`, a
built :class:`~osf_check.models.dsl.Model`, a module (or object) with ``SPEC`` and
``PROPERTIES``, or the path of a model file.  The defaults are the command line's:
depth 12, engine ``auto``, seed 0, stop at the first violation, deadlocks reported,
and ``prove`` mines strengthening invariants.  Results serialise as the CLI's
``--json`` does (:meth:`ExploreResult.to_json`) and print as its text
(:meth:`ExploreResult.text`).
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import os
import time
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from osf_check.explorer import engines
from osf_check.explorer.check import EXIT, ModelResult, check, prepare
from osf_check.models.dsl import Model
from osf_check.models.errors import BadValue
from osf_check.models.spec import ModelSpec
from osf_check.properties import catalogue, sources
from osf_check.properties.base import PROVED

__all__ = ["Checker", "ExploreResult", "ProveResult", "load", "models"]

#: the largest seed: z3 takes an unsigned 32-bit one (anything else it ignores, with a
#: warning printed on stdout), and every engine takes the same seeds
MAX_SEED = 2**32 - 1


def _integer(name: str, n: Any, lo: int, hi: int | None = None, *, none: bool = False) -> Any:
    """``n`` if it is an integer from ``lo`` to ``hi`` (or None where ``none``); a bool is
    not one (``depth(True)`` explored to depth 1), nor is 2.5 (``prove(k=2.5)`` was told
    k must be at least 1).

    >>> _integer("depth", True, 0)
    Traceback (most recent call last):
    osf_check.models.errors.BadValue: depth is an integer of 0 or more, got True
    """
    if n is None and none:
        return n
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or int(n) < lo or \
            (hi is not None and int(n) > hi):
        span = f"from {lo} to {hi}" if hi is not None else f"of {lo} or more"
        raise BadValue(f"{name} is an integer {span}{' (or None)' if none else ''}, got {n!r}")
    return int(n)


def _seconds(name: str, v: Any, *, zero: bool) -> float:
    """``v`` if it is a finite number of seconds, above 0 (or 0 too where ``zero``): nan
    passes every comparison, and a string failed one with a TypeError."""
    ok = isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v) and \
        (float(v) >= 0 if zero else float(v) > 0)
    if not ok:
        raise BadValue(f"{name} is a finite number of seconds, {'0 or more' if zero else 'above 0'}"
                       f", got {v!r}")
    return float(v)


def models() -> dict[str, str]:
    """Every model the catalogue holds, with where it came from."""
    return dict(catalogue.SOURCES)


def load(model: Any) -> str:
    """Register ``model`` if needed and return its catalogue name (see the module doc for
    what a model may be).  A file or module with several models needs a name instead."""
    if isinstance(model, str) and model in catalogue.MODELS:
        return model
    if isinstance(model, (str, os.PathLike)):
        p = Path(model)
        if p.suffix != ".py":
            catalogue.spec(str(model))  # raises with the names that exist
        return _one(sources.load_file(p), str(p))
    if isinstance(model, ModelSpec):
        if catalogue.MODELS.get(model.name) is not model:
            catalogue.register(model, source=f"python object {model.build_fn.__module__}")
        return model.name
    if isinstance(model, Model):
        if model.name not in catalogue.MODELS:
            spec = ModelSpec(model.name, model.name, (), {}, lambda params, mutant: model)
            catalogue.register(spec, source=BUILT)
        elif not _same_model(model):
            raise BadValue(
                f"a model named {model.name!r} is registered already (from "
                f"{catalogue.SOURCES[model.name]}), and this Model is another one (its "
                "variables, actions, initial or end states differ"
                + (" from that model's at its parameters and mutant; one built with "
                   "assumptions dropped is Checker(name).drop(...)"
                   if catalogue.SOURCES[model.name] != BUILT else "")
                + "): give it a name of its own (ModelBuilder's first argument)")
        return model.name
    if isinstance(model, types.ModuleType) or hasattr(model, "SPEC") or hasattr(model, "SPECS"):
        source = f"module {getattr(model, '__name__', type(model).__name__)}"
        return _one(sources.load_module(model, source=source), source)
    raise BadValue(f"cannot check a {type(model).__name__}: give a model name, a ModelSpec, "
                   "a built Model, a module with SPEC, or a model file's path")


#: where a built Model passed to a Checker is registered from
BUILT = "python object (a built Model)"


def _same_model(model: Model) -> bool:
    """Whether the catalogue's model of ``model``'s name, built at its parameters and
    mutant, is ``model`` (the one a checker of that name would check)."""
    spec = catalogue.MODELS[model.name]
    try:
        theirs = spec.build({} if catalogue.SOURCES[model.name] == BUILT else model.params,
                            model.mutant)
    except Exception:  # noqa: BLE001 (parameters or a mutant that model does not take,
        return False   # or its build fails on them: either way not this model)
    return theirs.fingerprint() == model.fingerprint()


def _one(names: list[str], where: str) -> str:
    if len(names) != 1:
        raise BadValue(f"{where} defines {len(names)} models ({', '.join(names)}): "
                       "choose one by its name")
    return names[0]


@dataclass(frozen=True)
class Checker:
    """What to check and how.  Every setter returns a new :class:`Checker`."""

    model: Any
    _params: Mapping[str, Any] = field(default_factory=dict)
    _mutant: str | None = None
    _properties: tuple[str, ...] = ()
    _drop: tuple[str, ...] = ()
    _depth: int | None = 12
    _engine: str = "auto"
    _workers: int = 1
    _max_states: int | None = None
    _seed: int = 0
    _keep_going: bool = False
    _deadlocks: bool = True
    _strict: bool = False
    _symmetry: bool = False
    _cluster: str | None = None
    _por: bool = False
    _memory: int | None = None
    _spill_dir: str | None = None

    def __post_init__(self) -> None:
        name = load(self.model)
        if isinstance(self.model, Model):  # a built model brings its parameters
            object.__setattr__(self, "_params", {**self.model.params, **self._params})
            object.__setattr__(self, "_mutant", self._mutant or self.model.mutant)
            if catalogue.SOURCES[name] == BUILT:
                object.__setattr__(self, "_params", {})
        object.__setattr__(self, "model", name)

    def _with(self, **kw: Any) -> "Checker":
        return dataclasses.replace(self, **kw)

    # what ----------------------------------------------------------------------------------
    def params(self, **values: Any) -> "Checker":
        """Model parameters by name (checked against the model's ranges when run)."""
        return self._with(_params={**self._params, **values})

    def mutant(self, name: str | None) -> "Checker":
        """Switch on one of the model's mutants (a known bug), or ``None``."""
        return self._with(_mutant=name)

    def properties(self, *ids: str) -> "Checker":
        """Check only these properties (ids like ``A2`` or names); none: all of them."""
        return self._with(_properties=tuple(ids))

    def drop(self, *assumptions: str) -> "Checker":
        """Check without these environment assumptions."""
        return self._with(_drop=tuple(assumptions))

    # how -------------------------------------------------------------------------------------
    def depth(self, n: int | None) -> "Checker":
        """Explore paths of up to ``n`` steps; ``None``: every reachable state."""
        return self._with(_depth=_integer("depth", n, 0, none=True))

    def engine(self, name: str) -> "Checker":
        """``explicit`` (compiled Python), ``vector`` (numpy), ``auto`` (vector), or an
        engine registered in :mod:`osf_check.explorer.engines`."""
        engines.get(name)  # an unknown name is refused with the known ones
        return self._with(_engine=name)

    def workers(self, n: int) -> "Checker":
        """Processes sharing the search, each owning the states a hash names (the vector
        engine; the same counts, verdicts and counterexamples as one)."""
        return self._with(_workers=_integer("workers", n, 1, 64))

    def cluster(self, address: str | None) -> "Checker":
        """Partition the search over the actors of a Ray cluster: its address, ``"local"``
        (a Ray instance started for the run) or None (processes of this machine)."""
        if address is not None and (not isinstance(address, str) or not address.strip()):
            raise BadValue(f"cluster is an address, 'local' or None, got {address!r}")
        return self._with(_cluster=address)

    def memory(self, size: int | str | None, spill_dir: str | os.PathLike[str] | None = None
               ) -> "Checker":
        """A memory budget for the vector engine: bytes, or a size such as ``"512M"``
        or ``"8G"`` (``None``: no budget).  To stay within it, the store's older arrays
        go to files in a directory made under ``spill_dir`` (the system's temporary one
        by default) and removed as the search ends; the run slows down, its counts and
        verdicts are the same.  Python, the level being expanded and the checks after
        the search cannot spill."""
        from osf_check.explorer.store.spill import parse_size
        if isinstance(size, str):
            size = parse_size(size)
        elif size is not None:
            size = _integer("memory", size, 1)
        where = None if spill_dir is None else os.fspath(spill_dir)
        return self._with(_memory=size, _spill_dir=where)

    def max_states(self, n: int | None) -> "Checker":
        """Stop (verdict ``incomplete``) once this many distinct states are stored with
        more left to expand."""
        return self._with(_max_states=_integer("max_states", n, 1, none=True))

    def seed(self, n: int) -> "Checker":
        """Recorded in results and traces (and fed to z3 by :meth:`prove`): an integer
        from 0 to :data:`MAX_SEED`."""
        return self._with(_seed=_integer("seed", n, 0, MAX_SEED))

    def keep_going(self, on: bool = True) -> "Checker":
        """Keep exploring after a violation, to find the other properties' too."""
        return self._with(_keep_going=on)

    def deadlocks(self, on: bool = True) -> "Checker":
        """Report deadlocks (states with nothing enabled that are not quiescent)."""
        return self._with(_deadlocks=on)

    def strict(self, on: bool = True) -> "Checker":
        """Vacuity warnings make the verdict ``vacuous``."""
        return self._with(_strict=on)

    def symmetry(self, on: bool = True) -> "Checker":
        """Store one state per class of states equal up to permuting the model's declared
        symmetric sets (the claim is tested first; reach and fair properties are judged
        on the classes of a complete search where they are proved exact there, else
        inconclusive: see :mod:`osf_check.explorer.symmetry`)."""
        return self._with(_symmetry=bool(on))

    def por(self, on: bool = True) -> "Checker":
        """Partial-order reduction: fire a stubborn set of the enabled actions at each
        state (safety properties only; counterexamples are replayed on the model and
        may be longer than the shortest, see :mod:`osf_check.explorer.por`)."""
        return self._with(_por=bool(on))

    # run -------------------------------------------------------------------------------------
    def explore(self, *, progress: Callable[[int, int, int, float], None] | None = None,
                log: Callable[[str], None] | None = None, checkpoint: str | None = None,
                checkpoint_every: float = 300.0, resume: str | None = None,
                tick: Callable[[int, int], None] | None = None,
                running: Callable[[str, int, int], None] | None = None) -> "ExploreResult":
        """Breadth-first exploration to the depth, with shortest counterexamples.

        ``progress(depth, distinct, generated, seconds)`` is called after each level,
        ``tick(done, total)`` within one (frontier states expanded), ``log`` with a line
        per phase and per reach/fair goal, ``running(what, done, total)`` as each reach
        or fair goal starts."""
        # (a nan never saved a checkpoint, and said nothing)
        checkpoint_every = _seconds("checkpoint_every", checkpoint_every, zero=True)
        r = check(self.model, params=dict(self._params), mutant=self._mutant,
                  props=self._properties, drop=self._drop, depth=self._depth,
                  max_states=self._max_states, check_deadlock=self._deadlocks,
                  stop_on_violation=not self._keep_going, strict=self._strict,
                  progress=progress, log=log, engine=self._engine, checkpoint=checkpoint,
                  checkpoint_every=checkpoint_every, resume=resume, workers=self._workers,
                  tick=tick, symmetry=self._symmetry, cluster=self._cluster,
                  running=running, por=self._por, memory=self._memory,
                  spill_dir=self._spill_dir)
        return ExploreResult(r, self._depth, self._seed)

    def prove(self, *, k: int = 4, timeout: float = 120.0, mine: bool = True,
              assume: Sequence[str] = (), sample_depth: int = 12,
              log: Callable[[str], None] | None = None) -> "ProveResult":
        """z3: bounded model checking to ``k`` and k-induction (a proof for every depth)."""
        from osf_check.explorer.prove import prove as run_prove
        k, sample_depth = _integer("k", k, 1), _integer("sample_depth", sample_depth, 0)
        timeout = _seconds("timeout", timeout, zero=False)
        _, chosen, _ = prepare(self.model, params=dict(self._params), mutant=self._mutant,
                               props=self._properties)
        if not [p for p in chosen if any(c.kind in PROVED for c in p.checks)]:
            raise BadValue(f"{', '.join(p.id for p in chosen) or 'no property'}: reach and "
                           "fair properties are checked by explore, not prove")
        t0 = time.perf_counter()
        m, results = run_prove(self.model, params=dict(self._params), mutant=self._mutant,
                               props=self._properties, k=k, timeout=timeout, seed=self._seed,
                               mine=mine, assume=assume, sample_depth=sample_depth,
                               stop_on_refutation=not self._keep_going, log=log)
        return ProveResult(m, results, self._seed, k, sample_depth, mine,
                           time.perf_counter() - t0)

    def check_log(self, log: str | os.PathLike[str] | Sequence[str],
                  mapping: str | os.PathLike[str] | Mapping[str, Any], *,
                  hidden_depth: int | None = None) -> Any:
        """Whether some behaviour of the model explains a recorded log (``check-log``).

        ``log`` is a file of JSON lines or the lines themselves; ``mapping`` a mapping
        file or its document, whose ``params`` this checker's override.  A refusal is
        unknown unless the model's settings (its parameters that are no bound) are all
        stated, here or in the mapping: the log does not say how its deployment was set.  Returns a
        :class:`~osf_check.tracelog.check.LogResult` (``verdict``: explained, refused or
        unknown; ``failing``: the first line none explains, and why).

        >>> from pathlib import Path
        >>> ex = Path(__file__).parent.parent / "examples"
        >>> twice = ex / "desktop-reconnects-twice.jsonl"  # a desktop that reconnects twice
        >>> r = Checker("wire-relay").check_log(twice, ex / "wire-relay.logmap.toml")
        >>> r.verdict, r.failing["line"], r.failing["limits"]["verdict"]
        ('unknown', 4, 'explained by the model at gens=3, switches=2')
        >>> Checker("wire-relay").params(gens=3).check_log(
        ...     twice, ex / "wire-relay.logmap.toml").verdict
        'explained'
        """
        from osf_check.tracelog.check import check_log as run_check_log
        from osf_check.tracelog.mapping import compile_mapping, read_document
        from osf_check.tracelog import HIDDEN_DEPTH
        hidden_depth = _integer("hidden_depth", HIDDEN_DEPTH if hidden_depth is None
                                else hidden_depth, 0, 50)
        if isinstance(mapping, (str, os.PathLike)):
            doc, source = read_document(Path(mapping)), str(mapping)
        elif isinstance(mapping, Mapping):
            doc, source = dict(mapping), ""
        else:
            raise BadValue(f"mapping is a mapping file or its document, not "
                           f"{type(mapping).__name__}")
        params = {**doc.get("params", {}), **self._params} \
            if isinstance(doc.get("params", {}), Mapping) else self._params
        m, _, _ = prepare(self.model, params=dict(params), mutant=self._mutant)
        mp = compile_mapping(m, doc, source)
        if isinstance(log, (str, os.PathLike)):
            path = Path(log)

            def lines() -> Any:
                try:
                    with path.open(encoding="utf-8-sig") as f:
                        yield from f
                except OSError as e:
                    raise BadValue(f"cannot read the log {path}: {e.strerror or e}") from None
            return run_check_log(lines(), m, mp, hidden_depth=hidden_depth, reread=lines,
                                 declared=set(params))
        if isinstance(log, Sequence):
            return run_check_log(iter(log), m, mp, hidden_depth=hidden_depth,
                                 reread=lambda: iter(log), declared=set(params))
        raise BadValue(f"log is a file or a sequence of lines, not {type(log).__name__}")


class ExploreResult:
    """One model's exploration: counts, histogram, verdicts, warnings and traces."""

    def __init__(self, r: ModelResult, bound: int | None, seed: int):
        from osf_check import report
        self.raw, self.bound, self.seed = r, bound, seed
        self.traces = [report.violation_trace(r, v, seed) for v in r.violations]

    model = property(lambda self: self.raw.model)
    verdict = property(lambda self: self.raw.verdict, doc="ok, safety, liveness, deadlock, "
                       "vacuous or incomplete")
    exit_code = property(lambda self: EXIT.get(self.raw.verdict, 0))
    distinct = property(lambda self: self.raw.exploration.distinct)
    generated = property(lambda self: self.raw.exploration.generated)
    complete = property(lambda self: self.raw.exploration.complete)
    histogram = property(lambda self: self.raw.exploration.histogram(),
                         doc="distinct states first reached at each depth")
    status = property(lambda self: dict(self.raw.status), doc="property id -> holds, violated…")
    warnings = property(lambda self: list(self.raw.warnings))
    violations = property(lambda self: list(self.raw.violations))

    def to_json(self, command: str = "explore") -> dict[str, Any]:
        """The document ``osf-check explore --json`` prints for this model."""
        from osf_check import report
        return report.result_json(command, self.seed, self.bound, [self.raw],
                                  {0: self.traces}, self.exit_code)

    def text(self) -> str:
        """What ``osf-check explore`` prints for this model (without the final line)."""
        from osf_check import report
        from osf_check.traces import render
        out = report.explore_text(self.raw, self.bound, self.seed) + "\n"
        for v, tr in zip(self.raw.violations, self.traces):
            out += (f"VIOLATION of {v.prop} ({v.kind}): shortest counterexample, "
                    f"{render.n_steps(len(tr['steps']) - 1)}\n") + render.text(tr) + "\n"
        return out

    def write(self, out: str | Path) -> list[Path]:
        """Every trace (JSON, ITF, DOT, Mermaid, SVG where Graphviz renders) into ``out``."""
        from osf_check import report
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        written: list[Path] = []
        for v, tr in zip(self.raw.violations, self.traces):
            written += report.write_outputs(out, tr, report._stem(self.raw, v), report.err)
        return written

    def __repr__(self) -> str:
        return (f"<ExploreResult {self.model.name}: {self.verdict}, {self.distinct:,} distinct "
                f"states, depth {self.raw.exploration.depth_reached}>")


class ProveResult:
    """z3's verdict per property: proved, proved in part (its reach and fair checks left
    to explore), refuted (with a trace), unknown, timeout, skipped or not checked."""

    def __init__(self, model: Model, results: list[Any], seed: int, k: int,
                 sample_depth: int, mine: bool, seconds: float):
        self.model, self.results, self.seed, self.k = model, results, seed, k
        self.sample_depth, self.mine, self.seconds = sample_depth, mine, seconds

    @property
    def status(self) -> dict[str, str]:
        return {r.prop.id: r.status for r in self.results}

    @property
    def exit_code(self) -> int:
        statuses = list(self.status.values())
        if "refuted" in statuses:
            return EXIT["safety"]
        return EXIT["incomplete"] if any(s in ("unknown", "timeout") for s in statuses) else 0

    def to_json(self) -> dict[str, Any]:
        """The document ``osf-check prove --json`` prints."""
        from osf_check import report
        return report.prove_json(self)

    def text(self) -> str:
        from osf_check import report
        return report.prove_text(self)

    def __repr__(self) -> str:
        return f"<ProveResult {self.model.name}: {self.status}>"
