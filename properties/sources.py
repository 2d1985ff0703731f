"""Models from outside the tool: a model file anywhere on disk, or a package's entry point.

A *model source* is a module (a file, or what an entry point names) that defines:

- ``SPEC``: a :class:`~osf_check.models.spec.ModelSpec` (or ``SPECS``, several of them);
- ``PROPERTIES``: a sequence of :class:`~osf_check.properties.base.Property` of those
  models (optional: without any, a check looks for deadlocks only);
- ``MUTANTS``: optional; by default each mutant the spec lists is paired with the
  properties that name it;
- ``ASSUMPTIONS``: optional :class:`~osf_check.properties.base.Assumption` entries.

The shipped models are registered through :func:`register_module` too, with the source
``built-in``.  Third-party packages register theirs in the ``osf_check.models``
entry-point group, naming such a module::

    [project.entry-points."osf_check.models"]
    peterson = "my_protocols.peterson"

A mistake inside a user's model (a misspelt actor, ``and`` on a state value, a
property that raises) is bad input, not a bug in osf-check: it is reported as
:class:`UserModelError` with the file and line of the user's code that was running.

>>> import types
>>> from osf_check.models.two_phase import SPEC
>>> src = types.SimpleNamespace(SPEC=SPEC, PROPERTIES=())
>>> names = register_module(src, source="example")
Traceback (most recent call last):
...
osf_check.models.errors.BadValue: model 'two-phase' from example is already defined (built-in): give your model another name
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.metadata
import importlib.util
import sys
import traceback
import types
from pathlib import Path
from typing import Any, Callable, Mapping

from osf_check.models.errors import BadValue, InputError
from osf_check.models.dsl import Param
from osf_check.models.spec import ModelSpec

from . import catalogue
from .base import Assumption, Mutant, Property, mutant_catalogue

__all__ = ["UserModelError", "load_file", "load_module", "load_entry_points",
           "register_module", "specs_of", "GROUP"]

GROUP = "osf_check.models"
#: a digest of each model file's text when it was loaded, by its source
_LOADED: dict[str, str] = {}
#: the modules of the models registered from a file or a module, by source: another
#: process (a Ray actor) may not import them by name, so they travel by value
USER_MODULES: dict[str, Any] = {}


class UserModelError(InputError):
    """The user's model file or package raised: where, what, and what to do."""

    @classmethod
    def located(cls, exc: BaseException, path: Path, doing: str) -> "UserModelError":
        """The innermost frame of the traceback that runs the user's file names the line."""
        where = str(path)
        frames = [f for f in traceback.extract_tb(exc.__traceback__)
                  if Path(f.filename).resolve() == path.resolve()]
        if isinstance(exc, SyntaxError) and exc.lineno:
            where = f"{path}, line {exc.lineno}"
        elif frames:
            where = f"{path}, line {frames[-1].lineno}, in {frames[-1].name}"
        return cls(f"{where}: {type(exc).__name__} {doing}: {exc}".rstrip(": "))


def _located(fn: Callable[..., Any], path: Path, doing: str) -> Callable[..., Any]:
    """``fn`` whose exceptions (but bad-input ones from osf-check itself) name the line of
    the user's file that raised."""
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except UserModelError:
            raise
        except (Exception, SystemExit) as exc:  # the user's code: any exception (and
            # sys.exit, which would end osf-check with the user's status) is bad input
            raise UserModelError.located(exc, path, doing) from exc
    call.__name__ = getattr(fn, "__name__", "call")
    call.__doc__ = fn.__doc__
    call.__wrapped__ = fn  # type: ignore[attr-defined]  # (whose line an error names)
    return call


def _wrap_properties(props: tuple[Property, ...], path: Path) -> tuple[Property, ...]:
    out = []
    for p in props:
        checks = tuple(dataclasses.replace(c, fn=_located(c.fn, path, f"in property {p.id}"))
                       for c in p.checks)
        out.append(dataclasses.replace(p, checks=checks))
    return tuple(out)


def register_module(module: Any, *, source: str, path: Path | None = None) -> list[str]:
    """Register every model ``module`` defines (see the module's docstring); returns their
    names.  ``path``: the user's file, whose lines errors then name."""
    specs = specs_of(module)
    if not specs or not all(isinstance(s, ModelSpec) for s in specs):
        raise BadValue(f"{source} defines no SPEC (an osf_check.ModelSpec) or SPECS: "
                       "see 'Writing your own model' in the README")
    for sp in specs:
        _check_spec(sp, source)
    props = tuple(getattr(module, "PROPERTIES", ()))
    if not all(isinstance(p, Property) for p in props):
        raise BadValue(f"{source}: PROPERTIES holds something that is not an "
                       "osf_check.Property")
    names = [s.name for s in specs]
    for p in props:
        if p.model not in names:
            raise BadValue(f"{source}: property {p.id} is of model {p.model!r}, which the "
                           f"source does not define ({', '.join(names)})")
    mutants = getattr(module, "MUTANTS", None)
    if mutants is None:
        mutants = tuple(m for s in specs for m in mutant_catalogue(
            s.name, [p for p in props if p.model == s.name], dict(s.mutants),
            where={}, default_where="model"))
    assumptions = tuple(getattr(module, "ASSUMPTIONS", ()))
    _check_types(mutants, assumptions)
    if path is not None:
        specs = [dataclasses.replace(s, build_fn=_located(s.build_fn, path,
                                                          f"building model {s.name}"))
                 for s in specs]
        props = _wrap_properties(props, path)
    for s in specs:
        catalogue.register(s, [p for p in props if p.model == s.name],
                           [m for m in mutants if m.model == s.name],
                           [a for a in assumptions if a.model == s.name], source=source)
    return names


def specs_of(module: Any) -> list[Any]:
    """What ``module`` defines as its models: ``SPECS``, or ``[SPEC]``."""
    specs = getattr(module, "SPECS", None)
    if specs is None:
        specs = [getattr(module, "SPEC")] if hasattr(module, "SPEC") else []
    return list(specs)


def load_module(module: Any, *, source: str) -> list[str]:
    """Register ``module``'s models unless they are registered already; a module reloaded
    since (other ModelSpec objects) has its old models taken out first."""
    done = catalogue.from_source(source)
    if done and [catalogue.MODELS[n] for n in done] == specs_of(module):
        return done
    catalogue.unregister(source)
    names = register_module(module, source=source)
    if isinstance(module, types.ModuleType):
        USER_MODULES[source] = module
    return names


def _check_spec(sp: ModelSpec, source: str) -> None:
    """A ModelSpec's fields have the types the engines rely on (positional arguments in
    the wrong order are the usual mistake): a one-line error, not a crash later."""
    def bad(field: str, want: str) -> BadValue:
        return BadValue(f"{source}: ModelSpec {sp.name!r}: {field} must be {want}, not "
                        f"{type(getattr(sp, field)).__name__} (ModelSpec(name, title, params, "
                        "mutants, build_fn))")
    if not isinstance(sp.name, str) or not sp.name:
        raise bad("name", "a non-empty string")
    if not isinstance(sp.title, str):
        raise bad("title", "a string")
    if not isinstance(sp.params, (tuple, list)) or not all(isinstance(x, Param)
                                                           for x in sp.params):
        raise bad("params", "a tuple of osf_check.Param")
    for field in ("mutants", "assumptions"):
        v = getattr(sp, field)
        if not isinstance(v, Mapping) or not all(isinstance(k, str) and isinstance(d, str)
                                                 for k, d in v.items()):
            raise bad(field, "a mapping of names to one-sentence descriptions")
    if not callable(sp.build_fn):
        raise bad("build_fn", "a function build(params, mutant)")


def _check_types(mutants: Any, assumptions: Any) -> None:
    if not all(isinstance(m, Mutant) for m in mutants):
        raise BadValue("MUTANTS holds something that is not an osf_check.Mutant")
    if not all(isinstance(a, Assumption) for a in assumptions):
        raise BadValue("ASSUMPTIONS holds something that is not an osf_check.Assumption")


def load_file(path: str | Path) -> list[str]:
    """Load a model file from anywhere (it need not be importable) and register its
    models; returns their names.  Loading the same file again changes nothing, unless
    it was edited since: its old models are then taken out and the file loaded anew
    (a checker of one of them made before then checks the new one)."""
    p = Path(path)
    if not p.is_file():
        raise BadValue(f"model file {p}: no such file")
    if p.suffix != ".py":
        raise BadValue(f"model file {p}: a model file is Python source ending in .py")
    source = f"file {p.resolve()}"
    try:
        text = hashlib.sha256(p.read_bytes()).hexdigest()
    except OSError as e:
        raise BadValue(f"model file {p}: cannot read it ({e.strerror})") from None
    done = catalogue.from_source(source)
    if done and _LOADED.get(source) == text:
        return done
    catalogue.unregister(source)
    digest = hashlib.sha256(str(p.resolve()).encode()).hexdigest()[:12]
    name = f"osf_check_user_model_{p.stem.replace('-', '_')}_{digest}"
    spec = importlib.util.spec_from_file_location(name, p)
    if spec is None or spec.loader is None:
        raise BadValue(f"model file {p}: Python cannot load it")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # worker processes and dataclasses look modules up by name
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as exc:  # sys.exit too: no silent exit status of its own
        del sys.modules[name]
        raise UserModelError.located(exc, p, "while loading the file") from exc
    names = register_module(module, source=source, path=p)
    _LOADED[source], USER_MODULES[source] = text, module
    return names


def load_entry_points() -> list[str]:
    """Register the models of every installed package's ``osf_check.models`` entry point.
    Returns one warning per entry point that could not be loaded (the others still are)."""
    warnings: list[str] = []
    for ep in sorted(importlib.metadata.entry_points(group=GROUP), key=lambda e: e.name):
        dist = f"{ep.dist.name} {ep.dist.version}" if ep.dist else "unknown package"
        source = f"entry point {ep.name} = {ep.value} ({dist})"
        if catalogue.from_source(source):
            continue
        try:
            module = ep.load()
            file = getattr(module, "__file__", None)
            register_module(module, source=source, path=Path(file) if file else None)
        except Exception as exc:  # a broken plug-in must not stop the others
            warnings.append(f"{source} was not loaded: {type(exc).__name__}: {exc}")
    return warnings
