"""What the CLI shows while it works and when asked what it knows: progress within long
phases (live on a terminal, one line per phase elsewhere), and `list` with aligned
columns and the implementation-only mutants."""

from __future__ import annotations

import re
import textwrap

from click.testing import CliRunner

from osf_check.cli import main
from osf_check.explorer.vector.search import vector_bfs
from osf_check.progress import Display
from osf_check.properties import catalogue


def test_the_bfs_reports_progress_within_a_level():
    m, chosen, _ = __import__("osf_check.explorer.check", fromlist=["prepare"]).prepare(
        "two-phase", params={"rms": 5})
    ticks: list[tuple[int, int]] = []
    vector_bfs(m, chosen, depth=None, chunk=64, tick=lambda d, t: ticks.append((d, t)))
    widest = max(t for _, t in ticks)
    within = [d for d, t in ticks if t == widest]
    assert widest > 64 and within == list(range(0, widest, 64))  # every chunk of the level


def test_without_a_terminal_there_is_one_line_per_phase_and_no_live_display():
    lines: list[str] = []
    with Display(live=False, write=lines.append) as d:
        t = d.phase("fuzz: tour", total=100)
        for k in range(100):
            d.update(t, completed=k)
        d.line("tour: done")
    assert lines == ["osf-check: fuzz: tour", "osf-check: tour: done"]


def test_on_a_terminal_the_display_is_live_and_results_stay_off_stderr(capsys):
    with Display(live=True) as d:
        t = d.phase("exploring", total=10)
        d.update(t, completed=5, description="exploring: depth 3")
        assert d._bar.tasks[0].completed == 5 and d._bar.tasks[0].description.endswith("3")
        d.line("reach A2 run 0: holds")
    out = capsys.readouterr()
    assert out.out == "" and "reach A2 run 0: holds" in out.err


def test_json_runs_are_quiet_but_for_phase_lines():
    r = CliRunner().invoke(main, ["explore", "--model", "two-phase", "--json"])
    assert r.exit_code == 0
    assert r.stderr.splitlines() == ["osf-check: exploring two-phase to depth 12"]


def _columns(lines: list[str], marker: str) -> set[int]:
    return {line.index(marker) for line in lines if marker in line}


def test_list_keeps_its_columns_with_long_names(tmp_path):
    f = tmp_path / "longnames.py"
    f.write_text(textwrap.dedent('''
        from osf_check import Check, ModelBuilder, ModelSpec, Property
        from osf_check.models.dsl import Int

        def build(params, mutant=None):
            b = ModelBuilder("longnames", actors=("a",))
            b.var("n", Int(0, 2), actor="a")

            @b.action("a")
            def inc(s):
                return s.n < 2, {s.n: s.n + 1}
            b.init(n=0)
            return b.build()

        SPEC = ModelSpec("longnames", "a model with long names", (),
                         {"a-mutant-name-longer-than-28-chars": "a bug"}, build)
        PROPERTIES = [Property(
            "LONG1", "a-property-name-far-longer-than-thirty-two-characters", "longnames",
            "n stays small.", (Check("inv", lambda s, m: s.n <= 2),),
            ("a-mutant-name-longer-than-28-chars",))]
    '''))
    r = CliRunner().invoke(main, ["list", "--model-file", str(f)])
    assert r.exit_code == 0, r.output
    block = r.stdout.split("model longnames")[1].split("\n\n")[0].splitlines()
    props = [x for x in block if "broken by:" in x]
    assert len(_columns(props, "broken by:")) == 1
    mutants = [x for x in block if " breaks " in x]
    assert len(_columns(mutants, " breaks ")) == 1
    for name in catalogue.default_models():  # the built-in models too
        part = r.stdout.split(f"model {name}:")[1].split("\n\n")[0].splitlines()
        assert len(_columns([x for x in part if "broken by:" in x], "broken by:")) == 1
        muts = [x for x in part if re.match(r"    \S", x) and " breaks " in x]
        assert len(_columns(muts, " breaks ")) == 1


def test_a_model_spec_with_its_arguments_in_the_wrong_order_is_bad_input(tmp_path):
    f = tmp_path / "wrong.py"
    f.write_text("from osf_check import ModelSpec\n"
                 "SPEC = ModelSpec('w', 'title', lambda p, m: None, (), {})\n")
    r = CliRunner().invoke(main, ["list", "--model-file", str(f)])
    assert r.exit_code == 150, r.output
    assert "params must be a tuple of osf_check.Param, not function" in r.stderr


def test_list_names_the_implementation_only_mutants():
    r = CliRunner().invoke(main, ["list"])
    graph = r.stdout.split("model graph-relay:")[1].split("\n\n")[0]
    only = graph.split("implementation-only mutants")[1]
    for name in ("truncate-by-bytes", "measure-code-points", "half-result"):
        assert re.search(rf"^    {name} +\S", only, re.M), name
    assert "fresh-key-on-retry" not in only  # that one has a twin in the model
    r = CliRunner().invoke(main, ["list", "--json"])
    import json
    doc = {m["name"]: m for m in json.loads(r.stdout)["models"]}
    assert [m["name"] for m in doc["graph-relay"]["implementation_mutants"]] == [
        "truncate-by-bytes", "measure-code-points", "half-result"]


def test_the_cli_starts_without_the_libraries_only_some_commands_need():
    """networkx (drawing a fair cycle) and the schema compiler (loading a trace) cost
    0.3 s at every start when imported eagerly: a quarter of a small run, and time one
    process spends before a partitioned search's workers can start; the plots' matplotlib,
    scipy, z3 and Hypothesis are for the commands that use them."""
    import subprocess
    import sys
    code = ("import sys, osf_check.cli; "
            "print(sorted(m for m in ('networkx', 'fastjsonschema', 'matplotlib', 'scipy', 'z3',"
            " 'hypothesis') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"
    # and the commands that need them still find them
    from osf_check.traces.format import TraceError, load_trace
    import pytest
    with pytest.raises(TraceError):
        load_trace(__file__)


def test_the_live_line_names_each_reach_and_fair_check_as_it_starts():
    """During the reach and fair checks the line stayed on the last BFS level, and each
    check was named only once it had ended."""
    from osf_check import Checker
    seen: list[tuple[str, str]] = []
    Checker("graph-relay").params(intents=1).explore(
        log=lambda s: seen.append(("done", s.strip())),
        running=lambda what, k, n: seen.append(("start", f"{what} ({k} of {n})")))
    done = [(k, s) for k, (kind, s) in enumerate(seen) if kind == "done" and ": " in s
            and s.split(":")[0].split()[0] in ("reach", "fair")]
    assert len(done) == 3, seen
    for n, (k, line) in enumerate(done):  # named as it starts, just before its verdict
        assert seen[k - 1] == ("start", f"{line.split(':')[0]} ({n} of 3)"), seen


def test_the_live_line_separates_thousands_and_never_cuts_its_counts():
    import io

    from rich.console import Console
    with Display(live=True) as d:
        t = d.phase("graph-relay: depth 32, 1,234,567 distinct, 9,876,543 generated, "
                    "123,456 states/s and some more words to fill the line", total=2_345_678)
        d.update(t, completed=1_234_567)
        table = d._bar.make_tasks_table(d._bar.tasks)
        out = io.StringIO()
        Console(file=out, width=80, color_system=None).print(table)
    text = out.getvalue()
    assert "1,234,567/2,345,678" in text, text
    assert "…" not in text  # the description folds onto a second line, uncut


def test_the_progress_depth_is_the_one_the_result_gives():
    """The last level (no new state) was reported as a depth the result then did not
    name: "depth 32" on the line, "depth 31" in the result."""
    from osf_check.explorer.check import check
    depths: list[int] = []
    r = check("two-phase", params={"rms": 3}, depth=None,
              progress=lambda d, *_: depths.append(d))
    assert r.exploration.complete and depths[-1] == r.exploration.depth_reached, depths


class _Screen:
    """A display that records what the live line is told (``live``: a terminal)."""

    def __init__(self, live: bool) -> None:
        self.live = live
        self.told: list[dict] = []

    def update(self, task, **kw) -> None:
        self.told.append(kw)


def test_the_checks_line_estimates_the_time_left_from_the_finished_ones():
    """k of n checks done in t seconds: the n - k left take t / k each (a fake clock)."""
    from osf_check.cli import _running
    now = [100.0]
    screen = _Screen(live=True)
    cb = _running("graph-relay", screen, None, clock=lambda: now[0])
    cb("reach A2 run 0", 0, 5)  # none finished: nothing to estimate from
    now[0] = 120.0
    cb("fair A2 run 0", 2, 5)  # 2 in 20 s: 3 more at 10 s
    now[0] = 200.0
    cb("reach A10 run 0", 4, 5)  # 4 in 100 s: 1 more at 25 s
    assert [t["description"] for t in screen.told] == [
        "graph-relay: checking reach A2 run 0",
        "graph-relay: checking fair A2 run 0, about 30 s left",
        "graph-relay: checking reach A10 run 0, about 25 s left"]
    assert [(t["completed"], t["total"]) for t in screen.told] == [(0, 5), (2, 5), (4, 5)]


def test_without_a_terminal_the_checks_line_comes_once_they_took_a_second(capsys):
    from osf_check.cli import _running
    now = [0.0]
    cb = _running("wire-relay", _Screen(live=False), None, clock=lambda: now[0])
    cb("fair B5 p0", 0, 3)
    now[0] = 0.5
    cb("fair B5 p1", 1, 3)
    now[0] = 90.0
    cb("reach B5 p2", 2, 3)
    assert capsys.readouterr().err == ("  wire-relay: 2 of 3 checks done, about 45 s left; "
                                       "checking reach B5 p2\n")


def test_the_bfs_line_says_the_time_elapsed_and_never_a_time_left(capsys):
    """A BFS does not know how many levels are left: no estimate, the time elapsed."""
    from osf_check.cli import _progress
    now = [0.0]
    quiet, screen = _Screen(live=False), _Screen(live=True)
    bfs, live = (_progress("two-phase", s, None, clock=lambda: now[0]) for s in (quiet, screen))
    bfs(3, 100, 300, 0.5)  # before a second has passed: no line
    now[0] = 75.0
    bfs(4, 200, 600, 1.0)
    live(4, 200, 600, 1.0)
    assert capsys.readouterr().err == ("  two-phase: depth 4, 200 distinct, 600 generated, "
                                       "200 states/s, 1 min 15 s elapsed\n")
    assert screen.told == [{"description": "two-phase: depth 4, 200 distinct, 600 generated, "
                                           "200 states/s"}]  # the display's column has the time
