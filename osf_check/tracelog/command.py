"""``osf-check check-log`` as a library: the model and mapping a run names, the log read
from a file, stdin or a pipe, the verdict's exit code, and the text the command prints.
The command line only parses its options, calls these, prints and exits.
"""

from __future__ import annotations

import contextlib
import json
import sys
import tempfile
from pathlib import Path
from typing import IO, Any, Callable, Iterable, Iterator

from osf_check.models.dsl import Model
from osf_check.models.errors import InputError

from .check import LogResult, check_log, failure_trace, params_text
from .mapping import Mapping, compile_mapping, read_document
from .settings import settings_text

__all__ = ["load", "run", "exit_code", "warnings_of", "text", "open_log", "compact"]

#: the command's exits by verdict (the command line's codes: holds, safety, no verdict)
EXITS = {"explained": 0, "refused": 12, "unknown": 152}


def open_log(path: str) -> IO[str]:  # a byte-order mark (Windows' editors) is no event
    return open(path, encoding="utf-8-sig", errors="strict")


@contextlib.contextmanager
def log_source(events: Path) -> Iterator[tuple[Iterable[str], Callable[[], str]]]:
    """The log's lines, and how to get a path that reads them again (the failure trace
    reads the log up to its line once more): the file itself, or, for stdin (``-``) or a
    pipe (``<(kubectl logs ...)``), a copy of the lines read so far, written as they
    stream by (a live log is checked as it comes, not once it ends)."""
    if str(events) != "-" and events.is_file():
        with open_log(str(events)) as f:
            yield f, lambda: str(events)
        return
    stdin = str(events) == "-"
    with open(sys.stdin.fileno() if stdin else events, encoding="utf-8-sig",
              closefd=not stdin) as f, \
            tempfile.NamedTemporaryFile("w", encoding="utf-8", prefix="osf-check-log-",
                                        suffix=".jsonl") as copy:
        def tee() -> Iterator[str]:
            for line in f:
                copy.write(line)
                yield line

        def again() -> str:
            copy.flush()
            return copy.name
        yield tee(), again


def load(events: Path, mapping_file: Path, model: str | None, model_files: list[str],
         params: dict[str, str]) -> tuple[Model, Mapping, set[str]]:
    """The model (at the mapping's params and ``params`` over them), the compiled mapping,
    and the parameters stated for the log; bad input raises :class:`InputError`."""
    from osf_check.explorer.check import prepare
    from osf_check.properties import catalogue
    if str(events) != "-" and not events.exists():
        raise InputError(f"no log file {events}")
    if events.is_dir():
        raise InputError(f"{events} is a directory, not a log")
    doc = read_document(mapping_file)
    name = model or doc.get("model") or (model_files[0] if len(model_files) == 1 else None)
    if not isinstance(name, str):
        raise InputError("name the model with --model or in the mapping (model = \"...\")" + (
            f" (the model files define {', '.join(model_files)})" if model_files else ""))
    if name not in catalogue.MODELS:
        raise InputError(f"unknown model {name!r} (known: {', '.join(catalogue.MODELS)}; a "
                         f"model of your own is loaded with --model-file PATH)")
    if doc.get("model") not in (None, name):  # before its params are read as the model's
        raise InputError(f"the mapping is for {doc['model']!r}, not {name!r}")
    merged = {**{k: str(v) for k, v in doc.get("params", {}).items()}, **params}
    m, _, _ = prepare(name, params=merged)
    return m, compile_mapping(m, doc, str(mapping_file)), set(merged)


def run(events: Path, m: Model, mp: Mapping, *, hidden_depth: int, declared: set[str],
        tick: Callable[[int], None] | None = None) -> LogResult:
    """The log at ``events`` (a file, ``-`` for stdin, or a pipe) checked, with the trace
    of a failure read once more up to its line."""
    with log_source(events) as (lines, again):
        def reread() -> Iterator[str]:  # the log once more, up to where it was read
            with open_log(again()) as f:
                yield from f
        try:
            res = check_log(lines, m, mp, hidden_depth=hidden_depth, reread=reread,
                            tick=tick, declared=declared)
            if not res.explained:  # the log read once more, up to the line
                res.trace = failure_trace(again(), m, mp, res, open_log)
        except UnicodeDecodeError as e:
            raise InputError(f"{events} is not UTF-8 text ({e.reason} at byte {e.start})") \
                from None
    return res


def exit_code(res: LogResult) -> int:
    return EXITS[res.verdict]


def warnings_of(res: LogResult) -> list[str]:
    """What the run should be told besides its verdict."""
    out = [] if res.events else [
        "the log holds no event the mapping reads (every line ignored, or none at all): "
        "nothing was checked; is it the right log, and the right mapping?"]
    if res.backwards:  # a merge of several stations' logs that was not sorted
        out.append(
            f"{res.backwards:,} line(s) have a time earlier than the line before them (the "
            f"first: line {res.first_backwards}): the log is read in the order of its "
            f"lines; merge several stations' logs by time before checking")
    return out


def text(res: LogResult, m: Model, hidden_depth: int, warnings: list[str],
         out_given: bool) -> str:
    """What ``check-log`` prints (the result line aside)."""
    from osf_check.traces import render as rnd
    name = m.name
    lines = [f"{name}: {rnd.counted(res.lines, 'line')}, {rnd.counted(res.events, 'event')} "
             f"({res.ignored:,} ignored) in {res.seconds:.2f} s, "
             f"{res.events_per_second:,.0f} lines/s; up to "
             f"{rnd.counted(hidden_depth, 'unlogged step')} between two lines"]
    if res.explained:
        lines += _explained(res, name, rnd) + [f"warning: {w}" for w in warnings]
    else:
        lines += _refused(res, m, hidden_depth, rnd) + [f"  warning: {w}" for w in warnings]
        lines += _behaviour(res, out_given, rnd)
    return "\n".join(lines) + "\n"


def _explained(res: LogResult, name: str, rnd: Any) -> list[str]:
    out = [f"explained: a behaviour of {name} explains the whole log "
           f"({rnd.counted(res.possible, 'state')} still possible at its end, at most "
           f"{res.peak_possible:,} on the way)",
           "properties the logged run exercised: " + (", ".join(res.exercised) or "none")]
    if res.unwitnessed:
        out.append("reached, but the log does not show their witness met (they may have "
                   "been checked only vacuously): "
                   + "; ".join(f"{pid} ({doc})" for pid, doc in res.unwitnessed.items()))
    return out


def _refused(res: LogResult, m: Model, hidden_depth: int, rnd: Any) -> list[str]:
    """The first line no behaviour explains: why, and what the model allowed before it."""
    fail = res.failing
    assert fail is not None
    out = [_headline(res, m, hidden_depth), f"  {compact(fail['event'])}"]
    out += [f"  {w}" for w in fail["why"]]
    lim = fail.get("limits")
    if lim:
        out.append(f"  bounds: {lim['verdict']}" + (
            " (set them under params in the mapping, or with --param, and check again)"
            if lim["verdict"].startswith("explained by") else
            f" (reached on the way: {params_text(lim['reached'])})"))
    return out + _possible(fail, rnd)


def _headline(res: LogResult, m: Model, hidden_depth: int) -> str:
    fail = res.failing
    assert fail is not None
    name, settings, lim = m.name, fail.get("settings"), fail.get("limits")
    if res.verdict == "unknown" and settings:
        shown = {k: m.params[k] for k in settings["explained_at"] or settings["unstated"]}
        return (f"UNKNOWN: line {fail['line']} is the first event no behaviour of {name} "
                f"at {params_text(shown)} explains, but the log may come from a "
                f"deployment set otherwise (outside the model's settings):\n"
                f"  settings: {settings_text(settings)}")
    if res.verdict == "unknown" and fail["hidden_cut"]:
        return (f"UNKNOWN: line {fail['line']} is the first event no behaviour of {name} "
                f"with at most {hidden_depth} unlogged steps in a row explains; more "
                f"might (raise --hidden-depth):")
    if res.verdict == "unknown":
        return (f"UNKNOWN: line {fail['line']} is the first event no behaviour of {name} "
                f"at {params_text(lim['reached'])} explains, and the log reached "
                f"those bounds of the model; a larger model might explain it:")
    return f"NOT EXPLAINED: line {fail['line']} is the first event no behaviour of {name} " \
           f"explains:"


def _possible(fail: dict[str, Any], rnd: Any) -> list[str]:
    """The model states possible just before the line, where they differ."""
    shown = fail["possible_before"][:3]
    differ = [k for k in shown[0] if len({json.dumps(x[k]) for x in shown}) > 1] \
        if shown else []
    were = "was" if fail["possible_count"] == 1 else "were"
    out = [f"  {rnd.counted(fail['possible_count'], 'model state')} {were} possible just "
           f"before it" + (f"; {len(shown)} of them, where they differ:" if differ else "")]
    for st in shown if differ else shown[:1]:
        part = {k: st[k] for k in differ} if differ else st
        out.append("    " + json.dumps(part, ensure_ascii=False, separators=(",", ":")))
    if differ:
        out.append("    (alike in every other variable: " + json.dumps(
            {k: v for k, v in shown[0].items() if k not in differ}, ensure_ascii=False,
            separators=(",", ":")) + ")")
    return out


def _behaviour(res: LogResult, out_given: bool, rnd: Any) -> list[str]:
    """The behaviour of the model that explains the log up to the failing line."""
    fail = res.failing
    if res.trace is None or fail is None:
        return []
    steps = [st["label"] for st in res.trace["steps"][1:]]
    last = (f"the last the model's own version of line {fail['line']}"
            if res.trace["property"]["read"] else
            f"which explain the lines before it; the model has no version of line "
            f"{fail['line']} after them")
    more = len(steps) - 8
    out = [f"  a behaviour of the model up to there ({rnd.n_steps(len(steps))}, {last}):",
           "    " + ("… " if more > 0 else "") + " → ".join(steps[-8:])]
    if not out_given:
        out.append("  (--out DIR writes it as a trace, a sequence chart and a report)")
    return out


def compact(ev: Any, limit: int = 60) -> str:
    """A log line as one short line: a field's long text or object stands as its size."""
    def short(v: Any) -> Any:
        text = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
        if len(text) <= limit:
            return v
        return f"{v[:20]}…<{len(v):,} characters>" if isinstance(v, str) else \
            f"<{type(v).__name__} of {len(text):,} characters>"
    fields = ev.get("fields", {})
    return json.dumps({**ev, "fields": {k: short(v) for k, v in fields.items()}},
                      ensure_ascii=False)
