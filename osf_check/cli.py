"""The osf-check command line: a thin click shell over the rooms.

Exit codes (TLC's scheme): 0 every checked property holds up to the bound;
11 deadlock; 12 safety violation; 13 liveness violation; 14 a vacuity warning
under ``--strict``; 2 bad usage (an unknown option or command); 150 bad input (a
bad option value; unknown model, property, mutant, parameter; unreadable trace; an
error in a model file); 152 no verdict: a resource bound stopped the run, or a
verdict stayed unknown (prove, check-log);
153 an internal error (a bug in osf-check: one line, the traceback in a file);
154 the implementation's adapter (``--impl``) crashed, hung or broke the driver
protocol; 130 interrupted; 141 the reader of stdout went away before a checking command
said all it had to (a listing's, ``list | head -1``, ends 0: it has no verdict to lose).
"""

from __future__ import annotations

import json
import math
import os
import shlex
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, NoReturn, Sequence

import click

from osf_check.explorer.store.allocator import keep_freed_memory
from osf_check.tracelog import HIDDEN_DEPTH
from osf_check.explorer import engines
from osf_check.explorer.check import EXIT, ModelResult, por_allowed, prepare, verdict_exit
from osf_check.explorer.result import WorkerLost
from osf_check.explorer.store.levels import IdsExhausted
from osf_check.models.dsl import ModelError
from osf_check.models.errors import InputError, did_you_mean
from osf_check.api import MAX_SEED, Checker, ExploreResult
from osf_check.driver.protocol import AdapterError
from osf_check.progress import Display, duration, time_left, time_note
from osf_check.relay import constants
from osf_check.scratch import ScratchFull
from osf_check.properties import catalogue, sources
from osf_check.traces import render as rnd
from osf_check import output
from osf_check.output import atomic_write, escape_halves_on_output, sweep
from osf_check.traces.format import check_actions, dumps, load_trace, to_itf

from . import report
# how a run ends when something outside its verdict stops it: the library's, shared with
# the other entry points (``python -m osf_check.tracelog.record``)
from .exits import BAD_INPUT, INTERNAL, READER_GONE  # noqa: F401  (INTERNAL: the docs' table)
from .exits import internal as _internal, os_error as _os_error, version as _version
from .exits import reader_gone, stdout_gone as _stdout_gone  # noqa: F401  (tests ask it of the CLI)


class BadInput(InputError):
    """Bad input found by the command line itself (an option's value)."""


def _fail(msg: str) -> NoReturn:
    click.echo(f"osf-check: error: {msg}", err=True)
    sys.exit(BAD_INPUT)


#: every command's --seed: what z3 and every engine take
SEEDS = click.IntRange(0, MAX_SEED)

#: how far a long run got (the explore progress callback keeps it), for Ctrl-C
_DONE: dict[str, Any] = {}


def _interrupted() -> NoReturn:
    """Ctrl-C: say what was done so far and where to resume; exit 130, no traceback.
    Files are written atomically, so none is left half-written."""
    done = (f" after depth {_DONE['depth']} of {_DONE['model']} ({_DONE['distinct']:,} "
            f"distinct states)") if "depth" in _DONE else ""
    resume = f"; resume with --resume {_DONE['checkpoint']}" if _DONE.get("checkpoint") else ""
    click.echo(f"osf-check: interrupted{done}{resume}", err=True)
    sys.exit(130)


def _usable_dir(path: Path | None, opt: str) -> Path | None:
    """An output directory is checked before any work starts: it is one, or it can be
    made, and a file can be written in it.  The check writes one (and makes the missing
    directories), then takes them away again: permissions alone do not tell (root may
    write anywhere that access(2) asks about, yet not make a directory in /proc)."""
    if path is None:
        return None
    if path.exists() and not path.is_dir():
        raise BadInput(f"{opt} {path}: it exists and is not a directory")
    anc = path
    while not anc.exists() and anc != anc.parent:
        anc = anc.parent
    if not anc.is_dir():
        raise BadInput(f"{opt} {path}: {anc} is a file, not a directory")
    made = [d for d in [path, *path.parents] if d not in (anc, *anc.parents)]
    try:
        path.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".osf-check-probe-", dir=path)
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        where = "the directory" if path.exists() else anc
        raise BadInput(f"{opt} {path}: cannot write in {where} ({e.strerror or e})") from None
    finally:
        for d in made:  # deepest first: the check leaves nothing behind
            try:
                d.rmdir()
            except OSError:
                pass
    return path


class _Registered(click.Choice):
    """A choice among what a registry holds when the command runs (an engine registered
    after this module was imported is a choice too)."""

    def __init__(self, names: Callable[[], Sequence[str]]):
        self._names = names
        super().__init__(names())

    @property
    def choices(self) -> Sequence[str]:  # type: ignore[override]
        return tuple(self._names())

    @choices.setter
    def choices(self, value: Sequence[str]) -> None:
        pass  # the registry is the list


class _Finite(click.FloatRange):
    """A number in a range that is finite: ``nan`` passes every comparison of a range
    (a ``--poll nan`` crashed the simulation; a ``--checkpoint-every nan`` never saved),
    and ``inf`` every lower bound."""

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        v = super().convert(value, param, ctx)
        if not math.isfinite(v):
            self.fail(f"{v} is not a finite number", param, ctx)
        return v


def _plots_dir(path: Path | None, command: str) -> Path | None:
    """The ``--out`` of a command that draws plots: matplotlib, an optional dependency
    (the ``plots`` extra), must be there, which is said before any work starts."""
    if path is not None:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise BadInput(f"{command} --out draws plots with matplotlib, which is not "
                           "installed: pip install 'osf-check[plots]' (or leave out --out)"
                           ) from None
    return _usable_dir(path, "--out")


def _usable_file(path: Path | None, opt: str) -> Path | None:
    """An output file is checked before any work starts: not a directory, and its
    directory usable."""
    if path is None:
        return None
    if path.is_dir():
        raise BadInput(f"{opt} {path}: it is a directory")
    _usable_dir(path.parent, opt)
    return path


def given_twice(cmd: click.Command, args: Sequence[str]) -> str | None:
    """What is wrong when ``args`` give a single-valued option of ``cmd`` twice with
    different values (click keeps the last without a word: ``--mutant a --mutant b``
    checked b alone, ``prove --model a --model b`` proved b); None if nothing is.  The
    same value twice, and flags, are harmless.

    >>> @click.command()
    ... @click.option("--mutant")
    ... @click.option("--json", is_flag=True)
    ... def cmd(mutant, json): pass
    >>> given_twice(cmd, ["--mutant", "a", "--json", "--mutant=b"])
    "--mutant is given twice ('a' and 'b'): give it once"
    >>> given_twice(cmd, ["--mutant", "a", "--json", "--json", "--mutant", "a"]) is None
    True
    """
    single = {o: p for p in cmd.params if isinstance(p, click.Option) and not p.multiple
              and not p.count for o in p.opts + p.secondary_opts}
    seen: dict[str, tuple[str, str]] = {}  # an option's name: the form and value given
    i, end = 0, _end(args)
    while i < end:
        form, eq, value = args[i].partition("=") if args[i].startswith("--") \
            else (args[i], "", "")
        p = single.get(form)
        i += 1
        if p is None:
            continue
        if p.is_flag:
            value = form
        elif not eq and i < len(args):
            value, i = args[i], i + 1
        name = p.name or form
        if name in seen and seen[name][1] != value:
            return (f"{seen[name][0]} is given twice ({seen[name][1]!r} and {value!r}): "
                    "give it once")
        seen[name] = (form, value)
    return None


def _end(args: Sequence[str]) -> int:
    """Where the options end: at ``--``, or the end."""
    return args.index("--") if "--" in args else len(args)


#: the commands that only list or describe: a reader that stops early (``| head -1``)
#: took what it wanted, and nothing is left unsaid, so they end 0; a command that checks
#: ends 141 there, its verdict unread
DESCRIBING = frozenset({"list", "describe"})


class _Command(click.Command):
    """A command that refuses a single-valued option given twice (:func:`given_twice`)."""

    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:
        try:  # --help writes while the arguments are read: it describes
            return super().make_context(*args, **kwargs)
        except OSError as e:
            if reader_gone(e):
                _os_error(e, describing=True)
            raise

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        asks_help = any(a in ctx.help_option_names for a in args[:_end(args)])
        if not asks_help and (why := given_twice(self, args)) is not None:
            raise BadInput(why)
        return super().parse_args(ctx, args)


class _Group(click.Group):
    """Every command's errors, sorted once: bad input exits 150, a model that is
    inconsistent is bad input too (the model is the user's), an implementation's adapter
    that crashed, hung or broke the driver protocol 154, anything else is a bug in
    osf-check (153)."""

    command_class = _Command

    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:
        try:  # --help and --version write while the arguments are read: they describe
            return super().make_context(*args, **kwargs)
        except OSError as e:
            _os_error(e, describing=True)

    def invoke(self, ctx: click.Context) -> Any:
        output.forget()  # a command's own files are the ones it writes (CliRunner: many)
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            _interrupted()
        except click.BadParameter as e:  # a bad value is bad input, whichever option
            _fail(e.format_message())
        except (click.exceptions.Exit, click.ClickException, click.Abort, SystemExit):
            raise
        except InputError as e:
            _fail(str(e))
        except ModelError as e:
            click.echo(f"osf-check: model error: {e}", err=True)
            sys.exit(BAD_INPUT)
        except AdapterError as e:  # the implementation's adapter, never a verdict
            click.echo(f"osf-check: the implementation's adapter failed ({e.kind}): {e}",
                       err=True)
            sys.exit(EXIT["adapter"])
        except IdsExhausted as e:  # a resource bound too
            click.echo(f"osf-check: {e}; the run stopped before it finished and has no verdict "
                       "(bound it with --max-states, or shrink the model's parameters)", err=True)
            sys.exit(EXIT["incomplete"])
        except (ScratchFull, MemoryError) as e:  # a resource bound, said as such
            click.echo(f"osf-check: out of memory: {e or 'an allocation failed'}; the run "
                       "stopped before it finished and has no verdict", err=True)
            sys.exit(EXIT["incomplete"])
        except OSError as e:  # a full disk, a stdout nobody reads, or a bug
            _os_error(e, describing=ctx.invoked_subcommand in DESCRIBING)
        except WorkerLost as e:  # no verdict, and not a bug: say where to go on from
            click.echo(f"osf-check: the partitioned search lost a worker: {e}; the run has "
                       "no verdict (resume it with --resume DIR if it wrote a --checkpoint)",
                       err=True)
            sys.exit(INTERNAL)
        except Exception as e:  # noqa: BLE001 - the last line of defence
            _internal(e)


def _repro() -> str:
    """The command line that repeats this run: every option not at its default, and the
    seed always (``--out`` and ``--json`` change what is written, not the run)."""
    ctx = click.get_current_context()
    parts = ["osf-check", ctx.info_name or ""]
    for p in ctx.command.params:
        v = ctx.params.get(p.name or "")
        if isinstance(p, click.Argument):
            parts.append(str(v))
            continue
        if not isinstance(p, click.Option) or p.name in ("as_json", "out"):
            continue
        flag = max(p.opts, key=len)
        if p.name == "model_files":  # (the option's value is the models it loaded)
            v = ctx.meta.get("model_file_paths", v)
        if p.name == "seed":
            parts += [flag, str(v)]
        elif v is None or v is False or v == () or v == [] or v == p.default:
            continue
        elif p.is_flag:
            parts.append(flag)
        elif p.multiple or isinstance(v, list):
            for x in v:
                parts += [flag, str(x)]
        else:
            parts += [flag, str(v)]
    return shlex.join(parts)


def _html(doc: dict[str, Any], out: Path, plots: Sequence[Path] = ()) -> Path:
    """The report, the last file a command writes in ``out``: then what an earlier run
    of the command left there and this one did not write again goes."""
    from osf_check import html_report
    page = html_report.write(out, doc, repro=_repro(), version=_version(), plots=plots)
    sweep(out, click.get_current_context().info_name or "osf-check")
    return page


def _record(doc: dict[str, Any], out: Path | None, name: str, as_json: bool, code: int,
            plots: Sequence[Path] = ()) -> None:
    """Keep the machine-readable result and the HTML report in ``out``; with --json,
    print the result and exit."""
    if as_json:  # printed first: a file that cannot be written loses no verdict
        click.echo(json.dumps(doc, indent=2, ensure_ascii=False))
    if out is not None:
        atomic_write(out / name, dumps(doc))
        _html(doc, out, plots)
    if as_json:
        sys.exit(code)


def _parse_params(items: Sequence[str], opt: str = "--param", what: str = "value"
                  ) -> dict[str, str]:
    """``name=value`` pairs; a name given twice is refused, not the last one taken."""
    out: dict[str, str] = {}
    for it in items:
        k, eq, v = it.partition("=")
        k = k.strip()
        if not eq or not k:
            raise BadInput(f"{opt} takes name={what}, got {it!r}")
        if k in out:
            raise BadInput(f"{opt} {k} is given twice ({out[k]!r} and {v.strip()!r}): "
                           f"give it once")
        out[k] = v.strip()
    return out


def _size(s: str | None) -> int | None:
    """``--memory``'s size in bytes (bad input: one line)."""
    if s is None:
        return None
    from osf_check.explorer.store.spill import parse_size
    try:
        return parse_size(s)
    except InputError as e:
        raise BadInput(f"--memory: {e}") from None


def _parse_depth(s: str) -> int | None:
    if s in ("none", "unbounded", "inf"):
        return None
    try:
        d = int(s)
    except ValueError:
        raise BadInput(f"--depth takes a number of steps or 'unbounded', got {s!r}") from None
    if d < 0:
        raise BadInput(f"--depth must be 0 or more, got {d}")
    return d


def _load_files(paths: Sequence[str]) -> list[str]:
    """Register every model of each --model-file; returns their names in order."""
    names: list[str] = []
    for p in paths:
        names += [n for n in sources.load_file(p) if n not in names]
    return names


def _model_files(help: str) -> Any:
    """The --model-file option: each file's models are loaded as the option is read."""
    def load(c: click.Context, p: click.Parameter, v: Sequence[str]) -> list[str]:
        c.meta["model_file_paths"] = list(v)  # as given: what _repro repeats
        return _load_files(v)
    return click.option("--model-file", "model_files", multiple=True, metavar="PATH",
                        callback=load, help=help)


def _owner_of_mutant(mutant: str) -> str:
    """The model a mutant belongs to; an unknown one is bad input naming the known ones."""
    owners = [m.model for m in catalogue.MUTANTS if m.name == mutant]
    if not owners:
        known = sorted({m.name for m in catalogue.MUTANTS})
        raise BadInput(f"unknown mutant {mutant!r} ({did_you_mean(mutant, known)}known: "
                       f"{', '.join(known)})")
    return owners[0]


def _one_model(model: str | None, from_files: Sequence[str], mutant: str | None = None) -> str:
    if model is not None:
        return model
    if len(from_files) == 1:
        return from_files[0]
    if mutant is not None and not from_files:
        return _owner_of_mutant(mutant)  # --mutant alone picks its model, as in explore
    raise BadInput("name the model with --model" + (
        f" (the model files define {', '.join(from_files)})" if from_files else ""))


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="osf-check")
def main() -> None:
    """osf-check: model checker and fuzzing harness for relay protocols.

    \b
    Exit codes: 0 every checked property holds up to the bound; 11 deadlock;
    12 safety violation; 13 liveness violation; 14 vacuity warning (--strict);
    2 unknown option or command; 150 bad input (one line on stderr); 152 no verdict
    (a resource bound stopped the run, or prove or check-log stayed unknown);
    153 internal error (a bug in osf-check); 154 the implementation's adapter
    (--impl) crashed, hung or broke the driver protocol; 130 interrupted; 141 the
    reader of stdout went away (``| head``) before a check's verdict (list, describe
    and --help then end 0).
    """
    # the implementation's text (a failure, a log line) may hold a lone half of a pair
    escape_halves_on_output()
    # the searches free and allocate arrays of megabytes per chunk: reused, not mapped
    # afresh (fewer page faults, and even partitioned workers; explorer/allocator.py)
    keep_freed_memory()
    for w in sources.load_entry_points():  # models that installed packages register
        click.echo(f"osf-check: warning: {w}", err=True)


@main.command("list")
@click.option("--json", "as_json", is_flag=True, help="One JSON document on stdout.")
@_model_files("Also load the models of this Python file.")
def list_cmd(as_json: bool, model_files: list[str]) -> None:
    """Models (with parameters and where each comes from), properties and mutants."""
    data: dict[str, Any] = {"schema_version": report.SCHEMA_VERSION, "command": "list",
                            "models": []}
    for name, spec in catalogue.MODELS.items():
        data["models"].append({
            "name": name, "title": spec.title, "default": spec.default,
            "source": catalogue.SOURCES[name],
            "params": [{"name": p.name, "default": p.default, "min": p.lo, "max": p.hi,
                        "doc": p.doc, "bound": p.bound or None} for p in spec.params],
            "properties": [{"id": p.id, "name": p.name, "kind": p.kinds, "statement": p.statement,
                            "mutants": list(p.mutants), "assumptions": list(p.assumptions)}
                           for p in catalogue.properties_of(name)],
            "assumptions": [{"name": a.name, "statement": a.statement,
                             "needed_by": list(a.needed_by)}
                            for a in catalogue.ASSUMPTIONS if a.model == name],
            "mutants": [{"name": m.name, "breaks": list(m.breaks), "where": m.where,
                         "description": m.description, "params": m.params}
                        for m in catalogue.MUTANTS if m.model == name],
            "implementation_mutants": _impl_only(name),
        })
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    for m in data["models"]:
        dflt = "" if m["default"] else "  (not in the default set: --model " + m["name"] + ")"
        click.echo(f"model {m['name']}: {m['title']}{dflt}")
        click.echo(f"  from: {m['source']}")
        click.echo("  parameters:")
        for p in m["params"]:
            bound = f" [bound: {p['bound']}]" if p["bound"] else ""
            click.echo(f"    {p['name']}={p['default']}  ({p['min']}..{p['max']}){bound} "
                       f"{p['doc']}")
        props = m["properties"]
        w_id, w_name, w_kind = (max((len(p[k]) for p in props), default=0)
                                for k in ("id", "name", "kind"))
        click.echo("  properties:")
        for p in props:
            click.echo(f"    {p['id']:<{w_id}}  {p['name']:<{w_name}}  {p['kind']:<{w_kind}}  "
                       f"broken by: {', '.join(p['mutants'])}")
        if m["assumptions"]:
            click.echo("  assumptions (drop with --drop-assumption NAME):")
            w = max(len(a["name"]) for a in m["assumptions"])
            for a in m["assumptions"]:
                click.echo(f"    {a['name']:<{w}}  needed by {', '.join(a['needed_by'])}: "
                           f"{a['statement']}")
        click.echo("  mutants:")
        w = max((len(mu["name"]) for mu in m["mutants"] + m["implementation_mutants"]), default=0)
        for mu in m["mutants"]:
            extra = f" [runs with {', '.join(f'{k}={v}' for k, v in mu['params'].items())}]" \
                if mu["params"] else ""
            click.echo(f"    {mu['name']:<{w}}  breaks {', '.join(mu['breaks'])} "
                       f"({mu['where']}): {mu['description']}{extra}")
        if m["implementation_mutants"]:
            click.echo("  implementation-only mutants (osf-check fuzz --mutant NAME; the model "
                       "has no twin):")
            for mu in m["implementation_mutants"]:
                click.echo(f"    {mu['name']:<{w}}  {mu['description']}")
        click.echo()


def _impl_only(model: str) -> list[dict[str, str]]:
    """The implementation's mutants with no twin in the model (the fuzzer's alone)."""
    from osf_check.fuzz import mutants as impl
    in_model = {m.name for m in catalogue.MUTANTS if m.model == model}
    return [{"name": n, "description": impl.lookup(model, n).doc}  # type: ignore[union-attr]
            for n in impl.names(model) if n not in in_model]


def _progress(name: str, disp: Any, task: Any,
              clock: Callable[[], float] = time.perf_counter
              ) -> Callable[[int, int, int, float], None]:
    """After each BFS level: the live display's line, or (no terminal) a line on stderr
    once the run has taken a second, with the time elapsed (the live display has its
    own column).  No time left: nobody knows how many levels are still to come."""
    t0 = clock()

    def cb(depth: int, distinct: int, generated: int, secs: float) -> None:
        _DONE.update(model=name, depth=depth, distinct=distinct)
        what = (f"{name}: depth {depth}, {distinct:,} distinct, {generated:,} generated, "
                f"{distinct / secs if secs else 0:,.0f} states/s")
        elapsed = clock() - t0
        if disp.live:
            disp.update(task, description=what)
        elif elapsed >= 1.0:
            click.echo(f"  {what}, {time_note(elapsed, 0, None)}", err=True)
    return cb


def _running(name: str, disp: Any, task: Any,
             clock: Callable[[], float] = time.perf_counter
             ) -> Callable[[str, int, int], None]:
    """As each reach or fair check starts: its name, and the time the checks still to
    run will take at the mean of those done (:func:`~osf_check.progress.time_left`); with
    no terminal, a line on stderr once the checks have taken a second."""
    start: list[float] = []

    def cb(what: str, done: int, total: int) -> None:
        now = clock()
        start[:] = start or [now]
        left = time_left(now - start[0], done, total)
        if disp.live:  # (its own column has the time elapsed)
            eta = "" if left is None else f", about {duration(left)} left"
            disp.update(task, description=f"{name}: checking {what}{eta}",
                        completed=done, total=total)
        elif now - start[0] >= 1.0:
            when = time_note(now - start[0], done, total)
            click.echo(f"  {name}: {done} of {total} checks done, {when}; checking {what}",
                       err=True)
    return cb


@main.command()
@click.option("--depth", default="12", show_default=True, metavar="N|unbounded",
              help="Explore paths of up to N steps.")
@click.option("--model", "models", multiple=True, metavar="M",
              help="Model to check (repeatable; default: every default model).")
@_model_files("Load models and properties from this Python file and check them (see "
              "'Writing your own model').")
@click.option("--property", "props", multiple=True, metavar="ID",
              help="Property id or name (repeatable; default: all of the model's).")
@click.option("--mutant", default=None, metavar="NAME", help="Switch on a known bug.")
@click.option("--param", "params", multiple=True, metavar="NAME=VALUE", help="Model parameter.")
@click.option("--max-states", type=int, default=None, help="Stop (exit 152, no verdict) once this many states are stored with more left to expand (the vector engine: at the end of a level).")
@click.option("--seed", type=SEEDS, default=0, show_default=True, help="Recorded for reproducibility.")
@click.option("--json", "as_json", is_flag=True, help="One JSON result on stdout.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              callback=lambda c, p, v: _plots_dir(v, "explore"),
              help="Directory for traces (JSON, ITF, DOT, Mermaid, SVG) and result.json.")
@click.option("--strict", is_flag=True, help="Vacuity warnings fail the run (exit 14).")
@click.option("--continue", "go_on", is_flag=True,
              help="Keep exploring after a violation (to find the other properties' too).")
@click.option("--no-deadlock", is_flag=True,
              help="Do not report deadlocks: an end state is then one where a behaviour "
                   "stutters forever (fair checks judge it so).")
@click.option("--drop-assumption", "drop", multiple=True, metavar="NAME",
              help="Check without this environment assumption (e.g. retention-window).")
@click.option("--engine", type=_Registered(engines.choices), default="auto",
              show_default=True, help="explicit: compiled Python; vector: numpy (auto: vector).")
@click.option("--checkpoint", type=click.Path(file_okay=False), default=None,
              callback=lambda c, p, v: v and str(_usable_dir(Path(v), "--checkpoint")),
              help="Write the visited set and frontier here now and then (vector engine).")
@click.option("--checkpoint-every", type=_Finite(min=0), default=300.0, show_default=True,
              help="Seconds between checkpoints.")
@click.option("--resume", type=click.Path(file_okay=False), default=None,
              help="Continue an interrupted run from its --checkpoint directory.")
@click.option("--workers", type=click.IntRange(1, 64), default=1, show_default=True,
              help="Processes sharing the search, each owning the states a hash of the "
                   "state names (vector engine; same counts, verdicts and counterexamples "
                   "as one).")
@click.option("--cluster", metavar="ADDRESS", default=None,
              help="Partition the search over the actors of a Ray cluster: its address "
                   "(as `ray start --head` prints it), or `local` for a Ray instance "
                   "started for the run (pip install 'osf-check[cluster]').")
@click.option("--memory", metavar="SIZE", default=None, callback=lambda c, p, v: _size(v),
              help="A memory budget (e.g. 512M, 8G; vector engine, one process): to stay "
                   "within it, the search's older levels, frontier and edges go to disk, and "
                   "the run slows down instead of running out of memory.")
@click.option("--spill-dir", type=click.Path(file_okay=False), default=None,
              callback=lambda c, p, v: v and str(_usable_dir(Path(v), "--spill-dir")),
              help="Where --memory spills (default: the system's temporary directory); "
                   "its files are removed as the run ends.")
@click.option("--symmetry", is_flag=True,
              help="Store one state per class of states equal up to permuting the model's "
                   "symmetric sets, once z3 has proved the model symmetric. Reach and fair "
                   "properties are checked on the classes of a complete search where z3 "
                   "proves their goals (and fair-state conditions and fairness sets) "
                   "symmetric; elsewhere they are inconclusive, with the reason.")
@click.option("--por", is_flag=True,
              help="Partial-order reduction: fire a stubborn set of the enabled actions at "
                   "each state (explicit engine; safety properties and deadlocks only; "
                   "counterexamples may be longer than the shortest).")
def explore(depth: str, models: tuple[str, ...], model_files: list[str],
            props: tuple[str, ...], mutant: str | None,
            params: tuple[str, ...], max_states: int | None, seed: int, as_json: bool,
            out: Path | None, strict: bool, go_on: bool, no_deadlock: bool,
            drop: tuple[str, ...], engine: str, checkpoint: str | None,
            checkpoint_every: float, resume: str | None, workers: int,
            cluster: str | None, memory: int | None, spill_dir: str | None, symmetry: bool,
            por: bool) -> None:
    """Breadth-first exploration to a depth, with shortest counterexamples.

    \b
    Fair checks read each goal on every fair behaviour, as TLA+ does (stuttering and
    halting behaviours included; WF/SF on actions and on sets of actions); the forms
    are P ~> Q, []P, <>P, []<>P and <>[]P (docs/liveness.md), and any other is refused."""
    bound = _parse_depth(depth)
    overrides = _parse_params(params)
    if max_states is not None and max_states < 1:
        raise BadInput("--max-states must be at least 1")
    # a model named twice is checked once, as a property named twice is
    names = list(dict.fromkeys(models)) or model_files or catalogue.default_models()
    for n in names:
        catalogue.spec(n)
    if mutant is not None and not models:
        names = [_owner_of_mutant(mutant)]
    if drop and not models:
        owners = [a.model for a in catalogue.ASSUMPTIONS if a.name in drop]
        names = owners[:1] or names
    if (params or mutant or props or drop) and len(names) > 1:
        raise BadInput("--param, --mutant, --property and --drop-assumption need one --model "
                       f"when several models would run ({', '.join(names)})")
    if out is not None and out.exists() and not out.is_dir():
        raise BadInput(f"--out {out} exists and is not a directory")
    if (checkpoint or resume) and len(names) > 1:
        raise BadInput("--checkpoint and --resume need one --model")
    if resume is not None and not (Path(resume) / "state.npz").exists():
        raise BadInput(f"--resume {resume}: no checkpoint there (state.npz)")
    if checkpoint is not None and (Path(checkpoint) / "state.npz").exists() and \
            (resume is None or Path(resume).resolve() != Path(checkpoint).resolve()):
        # a run started afresh would write over an interrupted one's progress
        raise BadInput(f"--checkpoint {checkpoint} holds a checkpoint already: continue it "
                       f"with --resume {checkpoint}, or choose an empty directory")
    for n in names:  # every name and value checked before any work starts
        _, chosen, _ = prepare(n, params=overrides, mutant=mutant, props=props, drop=drop)
        if por:
            por_allowed(chosen, symmetry)
    _DONE.update(checkpoint=checkpoint)
    explored: list[ExploreResult] = []
    with Display(live=False if as_json else None) as disp:
        for n in names:
            task = disp.phase(f"exploring {n} to depth "
                              f"{bound if bound is not None else 'unbounded'}")
            checker = Checker(n).params(**overrides).mutant(mutant).properties(*props) \
                .drop(*drop).depth(bound).engine(engine).workers(workers) \
                .max_states(max_states).seed(seed).keep_going(go_on) \
                .deadlocks(not no_deadlock).strict(strict).symmetry(symmetry) \
                .cluster(cluster).por(por).memory(memory, spill_dir)
            explored.append(checker.explore(
                progress=_progress(n, disp, task), log=disp.line,
                tick=lambda done, total, t=task: disp.update(t, completed=done, total=total),
                running=_running(n, disp, task),
                checkpoint=checkpoint, checkpoint_every=checkpoint_every, resume=resume))
            disp.finish(task)
    results: list[ModelResult] = [e.raw for e in explored]
    code = verdict_exit([r.verdict for r in results])
    traces: dict[int, list[dict[str, Any]]] = {k: e.traces for k, e in enumerate(explored)}
    if not as_json:  # the verdict first: a file that cannot be written loses none of it
        for e in explored:
            click.echo(e.text(), nl=False)
        if len(results) > 1:
            click.echo(report.summary_table(results))
    written: list[Path] = []
    pictures: list[Path] = []
    if out is not None:
        from osf_check import plots
        for k, r in enumerate(results):
            for v, tr in zip(r.violations, traces[k]):
                written += report.write_outputs(out, tr, report._stem(r, v), report.err)
            mut = f" (mutant {r.model.mutant})" if r.model.mutant else ""
            fig = plots.depth_histogram(explored[k].histogram, f"{r.model.name}{mut}: "
                                        f"{r.exploration.distinct:,} states to depth "
                                        f"{len(explored[k].histogram) - 1}")
            pictures += plots.save(fig, out / f"states-per-depth-{report._stem_model(r)}")
        written += pictures
    doc = report.result_json("explore", seed, bound, results, traces, code)
    if out is not None:
        written += [out / "result.json", out / "report.html"]
    _record(doc, out, "result.json", as_json, code, plots=pictures)
    if written:
        click.echo(f"written to {out}: " + ", ".join(p.name for p in written))
    click.echo(f"result: {doc['result']} (exit {code})")
    sys.exit(code)


@main.command()
@click.option("--model", "model", default=None, metavar="M",
              help="Model to prove (optional with a --model-file of one model).")
@_model_files("Load models and properties from this Python file (see 'Writing your own "
              "model').")
@click.option("--property", "props", multiple=True, metavar="ID", help="Property (repeatable).")
@click.option("--k", "k", type=int, default=4, show_default=True,
              help="BMC depth and the largest k tried for k-induction.")
@click.option("--mutant", default=None, metavar="NAME",
              help="Switch on a known bug (alone, it picks the model that has it).")
@click.option("--param", "params", multiple=True, metavar="NAME=VALUE",
              help="Model parameter (repeatable).")
@click.option("--timeout", type=_Finite(min=0, min_open=True), default=120.0, show_default=True,
              help="Seconds per z3 query.")
@click.option("--seed", type=SEEDS, default=0, show_default=True,
              help="Fed to z3 (smt.random_seed and sat.random_seed).")
@click.option("--mine/--no-mine", default=True, show_default=True,
              help="When induction fails, mine strengthening invariants from reachable states "
                   "(Houdini) and try again.")
@click.option("--assume", "assume", multiple=True, metavar="ID",
              help="Assume another property's invariants in the induction (it must hold too).")
@click.option("--sample-depth", type=int, default=12, show_default=True,
              help="Every reachable state to this depth is checked first (explicit BFS, its "
                   "shortest counterexample wins), then mined; BMC deepens to it before "
                   "'unknown'.")
@click.option("--continue", "go_on", is_flag=True,
              help="Prove the other properties after one is refuted.")
@click.option("--json", "as_json", is_flag=True, help="One JSON result on stdout.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              callback=lambda c, p, v: _usable_dir(v, "--out"),
              help="Directory for traces of refutations and counterexamples to induction.")
def prove(model: str | None, model_files: list[str], props: tuple[str, ...], k: int,
          mutant: str | None, params: tuple[str, ...],
          timeout: float, seed: int, mine: bool, assume: tuple[str, ...], sample_depth: int,
          go_on: bool, as_json: bool, out: Path | None) -> None:
    """z3: bounded model checking and k-induction (proof for every depth)."""
    if k < 1:
        raise BadInput("--k must be at least 1")
    if sample_depth < 0:
        raise BadInput("--sample-depth must be 0 or more")
    checker = Checker(_one_model(model, model_files, mutant)).params(**_parse_params(params)) \
        .mutant(mutant).properties(*props).seed(seed).keep_going(go_on)
    pr = checker.prove(k=k, timeout=timeout, mine=mine, assume=assume,
                       sample_depth=sample_depth,
                       log=lambda s: click.echo(f"osf-check: {s}", err=True))
    doc = report.prove_json(pr)
    code = pr.exit_code
    written: list[Path] = []
    if out is not None:
        for entry in doc["properties"]:
            for label in ("trace", "cti"):
                if label in entry:
                    stem = (f"{pr.model.name}{'-' + mutant if mutant else ''}-{entry['id']}-"
                            f"{'prove' if label == 'trace' else 'cti'}")
                    written += report.write_outputs(out, entry[label], stem, report.err)
    _record(doc, out, "prove.json", as_json, code)
    click.echo(report.prove_text(pr, doc["properties"]), nl=False)
    if written:
        click.echo(f"written to {out}: " + ", ".join(p.name for p in written[:6]) +
                   (" …" if len(written) > 6 else ""))
    click.echo(f"result: exit {code}")
    sys.exit(code)


@main.command()
@click.option("--set", "sets", multiple=True, metavar="NAME=SECONDS",
              help="Change a deadline (see --list-deadlines).")
@click.option("--list-deadlines", is_flag=True, help="Print the deadlines and their values.")
@click.option("--seed", type=SEEDS, default=0, show_default=True,
              help="z3's random seed (recorded in the JSON).")
@click.option("--json", "as_json", is_flag=True, help="One JSON result on stdout.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              callback=lambda c, p, v: _plots_dir(v, "timing"),
              help="Directory for timeline pictures of violating schedules (SVG, PNG), one "
                   "per property and method class.")
def timing(sets: tuple[str, ...], list_deadlines: bool, seed: int, as_json: bool,
           out: Path | None) -> None:
    """z3 deadline analysis of the wire protocol (B9, B10, who gives up first)."""
    from osf_check.explorer.symbolic import timing as tm
    if list_deadlines:
        for k, v in tm.DEADLINES.items():
            click.echo(f"{k}={v:g}")
        return
    overrides: dict[str, float] = {}
    for k, v in _parse_params(sets, "--set", "seconds").items():
        try:
            overrides[k] = float(v)
        except ValueError:
            raise BadInput(f"--set {k}: {v!r} is not a number of seconds") from None
    rep = tm.analyse(overrides, seed=seed)
    code = 0 if rep.ok else 12
    written: list[Path] = []
    if out is not None:
        from osf_check import plots
        for c in rep.classes:
            for prop, sch in (("B9", c.b9_schedule), ("B10", c.b10_schedule)):
                if sch is None:
                    continue
                fig = plots.timeline(c, sch, prop, f"{prop} fails: {c.name}")
                written += plots.save(fig, out / f"timing-{prop}-{tm.slug(c.name)}")
    doc = report.timing_json(rep, seed, code)
    if out is not None:
        atomic_write(out / "timing.json", dumps(doc))
        written += [out / "timing.json", _html(doc, out, written)]
    if as_json:
        click.echo(json.dumps(doc, indent=2))
        sys.exit(code)
    click.echo(tm.text(rep), nl=False)
    if written:
        click.echo(f"written to {out}: " + ", ".join(p.name for p in written))
    sys.exit(code)


def _impl_options(f: Any) -> Any:
    f = click.option("--impl-timeout", type=_Finite(0.1, 3600), default=10.0,
                     show_default=True, metavar="SECONDS",
                     help="How long the adapter may take to answer one request before the "
                          "run stops as a hung adapter (exit 154).")(f)
    return click.option("--impl", default=None, metavar="COMMAND",
                        help="Drive the implementation behind this adapter command (the "
                             "driver protocol, docs/driver-protocol.md) instead of the "
                             "Python reference implementation (fuzz: with --model; replay: "
                             "the trace names the model).")(f)


@main.command()
@click.option("--model", default=None, metavar="M",
              help="graph-relay or wire-relay (default: both; with --mutant, the one that has it).")
@click.option("--mutant", default=None, metavar="NAME",
              help="Switch on a bug in the implementation (see `osf-check list`).")
@click.option("--examples", type=click.IntRange(0, 10**7), default=None,
              help="Hypothesis examples per system (default: the profile's).")
@click.option("--steps", type=click.IntRange(1, 10**4), default=40, show_default=True,
              help="Steps per Hypothesis example.")
@click.option("--seed", type=SEEDS, default=0, show_default=True,
              help="Seed of the implementation's randomness and of Hypothesis (recorded).")
@click.option("--profile", type=click.Choice(["ci", "dev", "nightly"]), default=None,
              help="Hypothesis profile (CI=true selects ci).")
@click.option("--db", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Keep Hypothesis's example database here and replay its failures first "
                   "(default: none, so the same seed gives the same run anywhere).")
@click.option("--tour-depth", type=click.IntRange(0, 20), default=None,
              help="Drive the implementation through every state and transition to this depth "
                   "(default: 8 for graph-relay, 9 for wire-relay).")
@click.option("--json", "as_json", is_flag=True, help="One JSON result on stdout.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              callback=lambda c, p, v: _plots_dir(v, "fuzz"),
              help="Directory for fuzz.json, coverage plots, a failure's trace and "
                   "report.html.")
@click.option("--param", "params", multiple=True, metavar="NAME=VALUE",
              help="Model parameter (with --model), e.g. restarts=2 gens=3 for longer stories.")
@_impl_options
def fuzz(model: str | None, mutant: str | None, examples: int | None, steps: int, seed: int,
         profile: str | None, db: Path | None, tour_depth: int | None, as_json: bool,
         out: Path | None, params: tuple[str, ...], impl: str | None,
         impl_timeout: float) -> None:
    """Fuzz an implementation against the model (tour, goals, then Hypothesis): the Python
    reference implementation, or with --impl any implementation behind an adapter."""
    from osf_check.fuzz import command as fz
    fz.impl_needs(impl, model, mutant)
    systems = fz.systems_for(model, mutant)
    model = systems[0] if len(systems) == 1 else None
    overrides = fz.checked_params(model, mutant, _parse_params(params))
    prof, n_ex = fz.examples_for(profile, examples, tour_depth)
    s = fz.Settings(mutant, seed, steps, n_ex, prof, db, overrides, tour_depth)
    runs: list[dict[str, Any]] = []
    pictures: list[Path] = []
    disp = Display(live=False if as_json else None)
    external = fz.ExternalRun(impl, impl_timeout)
    code = 0
    for name in systems:
        t0 = time.perf_counter()
        rep, t_tour, t_goals = fz.run_system(name, s, external, disp)
        run, drawn = fz.run_json(rep, name, s, external, time.perf_counter() - t0, t_tour,
                                 t_goals, out)
        runs.append(run)
        pictures += drawn
        code = 12 if rep.failure else code
    _record(report.fuzz_json(runs, seed, prof, str(db) if db else None, code), out,
            "fuzz.json", as_json, code, plots=pictures)
    click.echo(fz.text(runs, s), nl=False)
    click.echo(f"result: exit {code}")
    sys.exit(code)


@main.command()
@click.option("--runs", type=click.IntRange(10, 1_000_000), default=2_000, show_default=True,
              help="Simulated runs per experiment (where the experiment is per run).")
@click.option("--seed", type=SEEDS, default=0, show_default=True,
              help="Seed of the simulated randomness (recorded).")
@click.option("--poll", type=_Finite(0.1, 3600), default=float(constants.RELAY_ROUND), show_default=True,
              help="Relay poll interval, seconds.")
@click.option("--control-poll", type=_Finite(0.1, 600), default=float(constants.CONTROL_POLL),
              show_default=True,
              help="Desktop control-poll interval while a Graph runs, seconds.")
@click.option("--median-run", type=_Finite(0.1, 86400), default=float(constants.RUN_MEDIAN),
              show_default=True,
              help="Median Graph run time (log-normal), seconds.")
@click.option("--min-run", type=_Finite(0, 86400), default=float(constants.RUN_FLOOR), show_default=True,
              help="Shortest Graph run time, seconds.")
@click.option("--loss", type=_Finite(0, 0.99), default=0.30, show_default=True,
              help="Share of run_graph_session answers lost (experiment 5).")
@click.option("--json", "as_json", is_flag=True, help="One JSON result on stdout.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              callback=lambda c, p, v: _plots_dir(v, "simulate"),
              help="Directory for the tables (JSON, text) and the plots (poll strategies, "
                   "pickup-wait CDF; SVG and PNG).")
def simulate(runs: int, seed: int, poll: float, control_poll: float, median_run: float,
             min_run: float, loss: float, as_json: bool, out: Path | None) -> None:
    """Timed statistics of the Graph-run relay implementation on a simulated clock."""
    from osf_check.simulate.experiments import EXPERIMENTS, Facts, run_all, to_json
    f = Facts(poll=poll, control=control_poll, median_run=median_run, floor=min_run, loss=loss)
    t0 = time.perf_counter()
    with Display(live=False if as_json else None) as disp:
        tables = run_all(runs, seed, f, starting=lambda i, name: disp.phase(
            f"simulate: experiment {i} of {len(EXPERIMENTS)}, {name}"))
    secs = time.perf_counter() - t0
    if out is not None:
        atomic_write(out / "simulate.json", to_json(tables))
        atomic_write(out / "simulate.txt", "".join(t.text() + "\n" for t in tables))
        from osf_check import plots
        poll_t, pickup_t = tables[2], tables[0]
        pictures = plots.save(plots.poll_tradeoff(poll_t.extra["points"], seed, runs),
                              out / "poll-strategies")
        pictures += plots.save(plots.pickup_cdf(pickup_t.samples, f.poll, seed),
                               out / "pickup-wait-cdf")
    doc = report.simulate_json(json.loads(to_json(tables)), seed, runs, secs)
    doc["setup"] = f.setup()
    if out is not None:
        _html(doc, out, pictures)
    if as_json:
        click.echo(json.dumps(doc, indent=2, ensure_ascii=False))
        return
    click.echo(f.setup_text() + "\n")
    for t in tables:
        click.echo(t.text())
    click.echo(f"{secs:.1f} s, seed {seed}" + (f"; written to {out}" if out else ""))


@main.command()
@click.option("--model", "model", default=None, metavar="M",
              help="Model to describe (optional with a --model-file of one model).")
@_model_files("Load models from this Python file (see 'Writing your own model').")
@click.option("--param", "params", multiple=True, metavar="NAME=VALUE",
              help="Model parameter (repeatable): array sizes and action instances follow it.")
@click.option("--format", "fmt", type=click.Choice(["md", "json"]), default="md",
              show_default=True, help="Markdown, or one JSON document.")
def describe(model: str | None, model_files: list[str], params: tuple[str, ...],
             fmt: str) -> None:
    """A model's reference: actions (arguments, guard, effect, actor, who takes them),
    variables, fairness and properties, generated from the model."""
    from osf_check.describe import reference_text
    click.echo(reference_text(_one_model(model, model_files), _parse_params(params), fmt),
               nl=False)


@main.command()
@click.argument("trace_file", metavar="TRACE.json", type=click.Path(path_type=Path))
@click.option("--mutant", default=None, metavar="NAME",
              help="Replay against this implementation mutant (default: the trace's; 'none': "
                   "the correct implementation).")
@click.option("--emit-pytest", type=click.Path(dir_okay=False, path_type=Path), default=None,
              callback=lambda c, p, v: _usable_file(v, "--emit-pytest"),
              help="Write a standalone regression test that replays this trace.")
@_impl_options
def replay(trace_file: Path, mutant: str | None, emit_pytest: Path | None, impl: str | None,
           impl_timeout: float) -> None:
    """Run a trace against the implementation and say step by step how it went: exit 12
    if it broke a property or did what the model does not, 0 if it followed the trace or
    did what the model does where the trace (a model mutant's) does otherwise."""
    from osf_check.fuzz import command as fz
    from osf_check.fuzz.driver import IMPL_MUTANTS, PARTED, SYSTEMS
    from osf_check.fuzz.driver import replay as run_replay
    tr = load_trace(trace_file)
    if impl is not None:
        fz.impl_needs(impl, tr["model"], mutant)
        if emit_pytest is not None:
            raise BadInput("--emit-pytest writes a test of the Python reference "
                           "implementation; it does not go with --impl")
    if tr["model"] not in SYSTEMS:
        raise BadInput(f"{tr['model']} has no implementation to replay against (replay "
                       f"knows {' and '.join(SYSTEMS)})")
    mu = mutant if mutant is not None else tr.get("mutant")
    if mu == "none":  # the correct implementation
        mu = None
    if mu is not None and mu not in IMPL_MUTANTS[tr["model"]]:
        raise BadInput(f"the {tr['model']} implementation has no mutant {mu!r}")
    with fz.ExternalRun(impl, impl_timeout) as external:
        steps = run_replay(tr, mutant=None if impl else mu, harness=external.harness)
    if impl is not None:
        mu = None
    if emit_pytest is not None:
        # a regression test pins the reference implementation unless --mutant names one:
        # pinned to the trace's mutant, it would pass while the bug is there
        pinned = None if mutant in (None, "none") else mu
        kept = steps if pinned == mu else run_replay(tr, mutant=pinned)
        atomic_write(emit_pytest, _regression_test(tr, pinned, kept, trace_file.name))
        click.echo(f"written {emit_pytest}", err=True)
    for st in steps:
        click.echo(f"  {st.index:>3}. {st.label:<40} "
                   + (st.outcome if st.ok else  # its bugs in capitals
                      f"{st.outcome if st.outcome == PARTED else st.outcome.upper()}: {st.note}"))
    who = f"the implementation{' (mutant ' + mu + ')' if mu else ''}"
    last = steps[-1] if steps else None
    if last is not None and not last.ok:
        click.echo(_replay_verdict(who, last))
        sys.exit(0 if last.outcome == PARTED else 12)
    click.echo(f"{who} followed {'all ' if len(steps) > 1 else ''}{rnd.n_steps(len(steps))}")
    prop = tr.get("property") if isinstance(tr.get("property"), dict) else {}
    if prop.get("kind") in ("reach", "fair"):  # a liveness counterexample: its steps only
        click.echo(f"(replay checks each step; {prop.get('id')} is a {prop['kind']} property, "
                   "about what may follow the last step, which replay does not judge)")


def _replay_verdict(who: str, last: Any) -> str:
    """What a replay that stopped at ``last`` says of the implementation: a property
    broken or a step the correct model does not take is its bug (exit 12); doing what the
    correct model does where the trace does otherwise is not (exit 0): the trace's bug
    does not reproduce on it."""
    from osf_check.fuzz.driver import DIVERGED, VIOLATED
    if last.outcome == VIOLATED:
        return f"{who} breaks a property at step {last.index} (the line above names it)"
    if last.outcome == DIVERGED:
        return f"{who} does not follow the model at step {last.index}"
    return (f"{who} does not reproduce the trace: at step {last.index} it does what the "
            f"model does, not what the trace records (a model mutant's counterexample, or "
            f"a trace of another version of the model), and it broke no property before")


@main.command("check-log")
@click.argument("events", metavar="EVENTS.jsonl", type=click.Path(path_type=Path))
@click.option("--mapping", "mapping_file", required=True, metavar="FILE",
              type=click.Path(path_type=Path),
              help="The deployment's event names and fields mapped to the model's actions "
                   "(TOML or JSON; e.g. examples/graph-relay.logmap.toml).")
@click.option("--model", default=None, metavar="M",
              help="The model (default: the mapping's `model`).")
@_model_files("Load models from this Python file (see 'Writing your own model'): the "
              "mapping's model may be one of them.")
@click.option("--param", "params", multiple=True, metavar="NAME=VALUE",
              help="Model parameter: the deployment's settings (a refusal is a verdict only at stated ones), and bounds large enough for the logged run.")
@click.option("--hidden-depth", type=click.IntRange(0, 50), default=HIDDEN_DEPTH, show_default=True,
              help="Unlogged steps (the actions no rule names) allowed between two lines.")
@click.option("--json", "as_json", is_flag=True, help="One JSON result on stdout.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              callback=lambda c, p, v: _usable_dir(v, "--out"),
              help="Directory for check-log.json, report.html and, when a line is not "
                   "explained, the log up to there as a trace and pictures.")
def check_log_cmd(events: Path, mapping_file: Path, model: str | None,
                  model_files: list[str], params: tuple[str, ...], hidden_depth: int,
                  as_json: bool, out: Path | None) -> None:
    """Decide whether some behaviour of the model explains a recorded log (trace
    validation): exit 0 if one does, 12 at the first line none does, 152 when none does
    only within the --hidden-depth bound, the model's bounds (reconnects, retries, runs)
    that the log reached, or at settings not stated for the log's deployment."""
    from osf_check.tracelog import command as cl
    m, mp, declared = cl.load(events, mapping_file, model, model_files, _parse_params(params))
    disp = Display(live=False if as_json else None)
    with disp:
        task = disp.phase(f"{m.name}: reading {events}")
        res = cl.run(events, m, mp, hidden_depth=hidden_depth, declared=declared,
                     tick=lambda n: disp.update(task, completed=n))
        disp.finish(task)
    code, warnings = cl.exit_code(res), cl.warnings_of(res)
    result = report.check_log_json(res, str(events), str(mapping_file), dict(m.params), code,
                                   warnings)
    if out is not None and res.trace is not None:
        report.write_outputs(out, res.trace, f"{m.name}-log", report.err)
    _record(result, out, "check-log.json", as_json, code)
    click.echo(cl.text(res, m, hidden_depth, warnings, out is not None), nl=False)
    click.echo(f"result: exit {code}")
    sys.exit(code)


def _pinned(mutant: str | None) -> str:
    """Which implementation an emitted regression test pins, said in its docstring."""
    if mutant is None:
        return "the reference implementation (no mutant)"
    return (f"the implementation with mutant {mutant} switched on: it pins the bug's "
            "behaviour, so it passes while the bug is there (emit it without --mutant to "
            "pin the reference implementation)")


def _regression_test(tr: dict[str, Any], mutant: str | None, steps: list[Any], source: str) -> str:
    """A standalone pytest module that replays ``tr`` and expects today's outcome."""
    import re as _re
    name = _re.sub(r"\W+", "_", source.removesuffix(".json")).strip("_") or "trace"
    expected = [(s.index, s.outcome) for s in steps]
    return (f'"""Regression test emitted by `osf-check replay {source} --emit-pytest`.\n\n'
            f"It replays the trace against {_pinned(mutant)} and expects the outcome "
            f'recorded when it was emitted.\n"""\n\n'
            f"import json\n\nfrom osf_check.fuzz.driver import replay\n\n"
            f"TRACE = json.loads({json.dumps(tr, ensure_ascii=False)!r})\n"
            f"MUTANT = {mutant!r}\n"
            f"# (step, outcome): followed; parted (did what the model does, not the trace);\n"
            f"# violated (broke a property); diverged (did what the model does not)\n"
            f"EXPECTED = {expected!r}\n\n\n"
            f"def test_replay_{name}():\n"
            f"    steps = replay(TRACE, mutant=MUTANT)\n"
            f"    assert [(s.index, s.outcome) for s in steps] == EXPECTED\n")


@main.command()
@click.argument("trace_file", metavar="TRACE.json", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["text", "dot", "mermaid", "svg", "png", "itf",
                                                     "json", "html"]),
              default="text", show_default=True,
              help="text, DOT, Mermaid, a picture (svg, png), ITF, the trace's JSON, or a "
                   "self-contained HTML page.")
@click.option("--view", type=click.Choice(["sequence", "graph"]), default="sequence",
              show_default=True, help="Message-sequence chart or state graph.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              callback=lambda c, p, v: _usable_file(v, "-o"),
              help="Write here (default: stdout; for svg/png next to the trace).")
def render(trace_file: Path, fmt: str, view: str, output: Path | None) -> None:
    """Draw a trace (from explore, prove or fuzz; ``-`` reads it from stdin)."""
    if view == "graph" and fmt in ("text", "itf", "json", "html"):  # it was ignored
        raise BadInput(f"--view graph is a picture (dot, mermaid, svg, png); --format {fmt} "
                       "has one form, the trace step by step")
    if output is None and fmt in ("svg", "png"):  # next to the trace: checked first
        if str(trace_file) == "-" or (trace_file.exists() and not trace_file.is_file()):
            raise BadInput(f"{trace_file} is not a file (stdin, a pipe), so a picture cannot "
                           f"go next to it: name one with -o FILE")
        base = trace_file.name.removesuffix(".json").removesuffix(".trace")
        output = _usable_file(trace_file.with_name(f"{base}.{view}.{fmt}"), "the picture")
    tr = load_trace(trace_file)
    check_actions(tr, trace_file)
    if fmt == "text":
        data: str | bytes = rnd.text(tr)
    elif fmt == "mermaid":
        data = rnd.mermaid_sequence(tr) if view == "sequence" else rnd.mermaid_graph(tr)
    elif fmt == "itf":
        data = dumps(to_itf(tr))
    elif fmt == "json":
        data = dumps(tr)
    elif fmt == "html":  # the trace's own page: chart, step-by-step view, Mermaid text
        from osf_check import html_report
        doc = {"command": "render", "result": "trace", "exit_code": 0, "seed": tr["seed"],
               "traces": [tr]}
        data = html_report.build(doc, repro=_repro(), version=_version())
    else:
        dot = (rnd.dot_sequence(tr) if view == "sequence" else rnd.dot_graph(tr)).to_string()
        if fmt == "dot":
            data = dot
        else:
            try:
                data = rnd.render_dot(dot, fmt)
            except rnd.RenderError as e:
                click.echo(f"osf-check: {e}", err=True)
                sys.exit(BAD_INPUT)
    if output is None:
        click.echo(data, nl=False)
        return
    atomic_write(output, data)
    click.echo(f"written {output}", err=True)


if __name__ == "__main__":  # pragma: no cover
    main()
