"""The console report of ``osf-check fuzz``: the lists of what a run tried (its data
classes, its late answers) stay readable at the nightly profile's size (grouped, wrapped
at 80 columns, every item still named) and short when they are short."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from osf_check.cli import main

from osf_check.fuzz import command as fz
from osf_check.fuzz.driver import make_harness, model_for
from osf_check.fuzz.graph_harness import LATE
from osf_check.fuzz.sweep import configurations
from osf_check.properties import catalogue

HOW = {"data classes tried": ("by subject", fz.by_prefix),
       "late answers tried": ("by answer, each after the steps listed", fz.by_answer)}


@pytest.fixture(scope="module")
def wire_classes() -> list[str]:
    """wire-relay's data classes as a run reports them (the probes', which every run
    tries): as many as a nightly run's."""
    h = make_harness(model_for("wire-relay", None, {}), None, None)
    h.probe_data()
    return sorted(h.classes)


def late_answers() -> list[str]:
    """Every late answer the graph harness can deliver, after every step of the model
    and after a restart: more than a nightly run tries."""
    steps = model_for("graph-relay", None, {}).action_names + ["a restart"]
    answers = list(LATE.values())  # the sync reply and the control poll's answer among them
    return sorted(f"{a} after {s}" for a in answers for s in steps)


def rendered(title: str, items: list[str]) -> list[str]:
    how, grouping = HOW[title]
    return fz.tried(title, items, how, grouping)


def groups_read_back(lines: list[str]) -> list[tuple[str, list[str]]]:
    """The groups of a grouped report as a reader sees them: a group's line and the more
    indented lines after it are one text, its label, count (and what is said of its
    members after it) and members.  The header may go on over more lines."""
    joined: list[str] = []
    first = next((k for k, line in enumerate(lines)
                  if line.startswith("    ") and not line.startswith(" " * 6)), len(lines))
    for line in lines[first:]:
        if line.startswith(" " * 6):
            joined[-1] += " " + line.strip()
        else:
            assert line.startswith("    "), line
            joined.append(line.strip())
    out = []
    for text in joined:
        m = re.fullmatch(r"(.+?) \((\d+)(?:, [^)]*)?\):? ?(.*)", text)
        assert m, text
        members = m.group(3).split("; ")
        assert len(members) == int(m.group(2)), text
        out.append((m.group(1), members))
    return out


def broken_between_members(lines: list[str]) -> bool:
    """Every line that a group goes on after ends with a member (and its ``;``)."""
    return all(line.endswith(";") for line, after in zip(lines, lines[1:])
               if after.startswith(" " * 6))


def test_many_data_classes_fit_80_columns_and_each_is_named(wire_classes):
    assert len(wire_classes) >= 150
    one_line = f"  data classes tried: {len(wire_classes)} ({'; '.join(wire_classes)})"
    assert len(one_line) > 1_000  # what the report printed before: one line
    lines = rendered("data classes tried", wire_classes)
    assert lines[0] == f"  data classes tried: {len(wire_classes)}, by subject"
    assert max(map(len, lines)) <= fz.WIDTH == 80 and broken_between_members(lines)
    groups = groups_read_back(lines)
    assert sum(len(m) for _, m in groups) == len(wire_classes)
    labels = [label for label, _ in groups]
    assert {"method", "registration", "dispatch limit of", "pending id",
            "others"} <= set(labels), labels
    for item in wire_classes:  # each item is its group's label and one of its members
        assert any(label == "others" and item in members
                   or any(re.sub(r"[:,]? ", " ", item) == re.sub(r"[:,]? ", " ",
                                                                  f"{label} {m}")
                          for m in members)
                   for label, members in groups), item


def test_many_late_answers_fit_80_columns_grouped_by_answer():
    items = late_answers()
    assert len(items) >= 140
    lines = rendered("late answers tried", items)
    assert lines[0] == f"  late answers tried: {len(items)}, by answer, each after the steps " \
                       "listed"
    assert max(map(len, lines)) <= 80 and broken_between_members(lines)
    groups = groups_read_back(lines)
    assert [label for label, _ in groups] == sorted(LATE.values())
    assert sorted(f"{label} after {m}" for label, members in groups for m in members) == items
    # each answer after every step of the model and after a restart
    steps = len(model_for("graph-relay", None, {}).action_names) + 1
    assert steps == 34 and all(len(members) == steps for _, members in groups)


def test_the_real_report_shape_from_a_nightly_run():
    """The items of a graph-relay run at the nightly profile's examples: the classes
    without a shared first word are one group, named whole."""
    items = ["arguments: nested, non-ASCII, each intent its own",
             "completion at the 100,000 limit", "completion under the limit",
             "error past the 2,000 cut", "error: UTF-16 length differs from code points",
             "error: none", "key ASCII, 128 characters", "key blanks only",
             "key equal to another once trimmed, a tab and a newline after it",
             "result: ASCII", "result: non-ASCII"]
    assert rendered("data classes tried", items) == [
        "  data classes tried: 11, by subject",
        "    completion (2): at the 100,000 limit; under the limit",
        "    error (3): none; past the 2,000 cut; UTF-16 length differs from code points",
        "    key (3): ASCII, 128 characters; blanks only;",
        "      equal to another once trimmed, a tab and a newline after it",
        "    result (2): ASCII; non-ASCII",
        "    others (1): arguments: nested, non-ASCII, each intent its own"]


def test_a_member_wider_than_a_line_is_cut_between_its_words():
    long = "a class named at such length that no line of eighty columns holds it " * 2
    items = [f"key {long.strip()}", "key short"]
    lines = rendered("data classes tried", items)
    assert max(map(len, lines)) <= 80 and len(lines) >= 4
    assert not broken_between_members(lines)  # the check sees a member cut
    (label, members), = groups_read_back(lines)
    assert label == "key" and members == [long.strip(), "short"]


def test_a_short_list_stays_on_one_line():
    items = ["a sync reply after sync", "a POST after tick"]
    assert rendered("late answers tried", items) == [
        "  late answers tried: 2 (a sync reply after sync; a POST after tick)"]
    assert rendered("data classes tried", []) == []


def test_the_one_line_form_ends_at_80_columns():
    fits = ["x" * (80 - len("  data classes tried: 1 ()"))]
    assert len(rendered("data classes tried", fits)) == 1
    assert len(rendered("data classes tried", [fits[0] + "x"])) == 2


def nightly_run(model: str, failure_at: int | None = None) -> dict:
    """A run's ``fuzz.json`` part as the nightly profile fills it: the sweep's own
    configurations (:func:`~osf_check.fuzz.sweep.configurations`), the one at
    ``failure_at`` failed (a failure stops the sweep: it is the last)."""
    cfgs = configurations(catalogue.spec(model), {}, "nightly")
    if failure_at is not None:
        cfgs = cfgs[:failure_at + 1]
    rows = [{"params": c, "examples": 3, "failure": "A1 violated" if k == failure_at
             else None} for k, c in enumerate(cfgs)]
    return {"model": model, "configurations": [{**rows[0], "own": True}, *rows[1:]]}


def configurations_read_back(lines: list[str]) -> list[tuple[list, bool]]:
    """Each configuration a grouped report names (its parameters, as words) and whether
    it is marked failed: a group ``name`` lists values, ``name=value`` the other moves."""
    out = []
    for label, members in groups_read_back(lines):
        for m in members:
            failed = m.endswith(fz.FAILED)
            words = m.removesuffix(fz.FAILED)
            if "=" in label:
                k, v = label.split("=")
                params = {k: v, **dict(w.split("=") for w in words.split(" "))}
            else:
                params = {label: words}
            out.append((as_words(params), failed))
    return out


def as_words(params: dict) -> list[tuple[str, str]]:
    """A configuration as a reader compares it: its parameters and their words, sorted."""
    return sorted((k, str(v)) for k, v in params.items())


@pytest.mark.parametrize("model", ["graph-relay", "wire-relay"])
def test_the_nightly_configurations_fit_80_columns_and_each_is_named(model):
    run = nightly_run(model)
    other = [c["params"] for c in run["configurations"][1:]]
    assert len(other) >= {"graph-relay": 100, "wire-relay": 20}[model]
    lines = fz.other_configurations(run)
    assert max(map(len, lines)) <= 80
    assert lines[0] == f"  other configurations: {len(other)}, {3 * len(other):,} examples, " \
                       "all clean, by first parameter moved"
    back = configurations_read_back(lines)
    assert sorted(p for p, _ in back) == sorted(map(as_words, other))
    assert not any(failed for _, failed in back)
    labels = [label for label, _ in groups_read_back(lines)]
    first = {"graph-relay": ["agents", "agents=3", "intents", "intents=1", "intents=3"],
             "wire-relay": ["workload=1", "workload=2", "workload=3"]}[model]
    assert labels[:len(first)] == first, labels
    assert all(re.search(r"\(\d+, all clean\):( |$)", line) for line in lines[1:]
               if not line.startswith(" " * 6))


def test_graph_relay_nightly_groups_by_first_parameter_moved():
    lines = fz.other_configurations(nightly_run("graph-relay"))
    sizes = {label: len(m) for label, m in groups_read_back(lines)}
    # the product of agents 2-3, intents 1-3, retries 0-2, slugs 1-3, projects 1-2,
    # listing 0-1, less the defaults (hand count): 108 move agents first, 72 intents, 24
    # retries, 8 slugs, 2 projects, 1 listing alone
    assert sizes == {"agents": 1, "agents=3": 107, "intents": 2, "intents=1": 35,
                     "intents=3": 35, "retries": 2, "retries=0": 11, "retries=2": 11,
                     "slugs": 2, "slugs=1": 3, "slugs=3": 3, "projects": 1, "projects=2": 1,
                     "listing": 1}
    assert "    intents (2, all clean): 1; 3" in lines


def test_a_failed_configuration_is_marked_and_its_group_says_so():
    clean = fz.other_configurations(nightly_run("graph-relay", failure_at=20))
    failed = [{**c, "failure": "A1 violated" if k == 20 else None}
              for k, c in enumerate(nightly_run("graph-relay", failure_at=20)
                                    ["configurations"])]
    assert clean == fz.other_configurations({"model": "graph-relay",
                                             "configurations": failed})
    assert "1 failed" in clean[0] and "all clean" not in clean[0]
    marked = [(p, f) for p, f in configurations_read_back(clean) if f]
    assert marked == [(as_words(failed[20]["params"]), True)]
    assert sum("1 failed)" in line for line in clean) == 1
    fine = [{**c, "failure": None} for c in failed]  # the same run, clean: it reads better
    ok = fz.other_configurations({"model": "graph-relay", "configurations": fine})
    assert "all clean" in ok[0] and not any("failed" in line for line in ok)


def test_a_few_configurations_stay_on_one_line():
    run = {"model": "graph-relay", "configurations": [
        {"params": {}, "examples": 6, "own": True},
        {"params": {"agents": 3}, "examples": 2, "failure": None},
        {"params": {"intents": 1}, "examples": 2, "failure": None}]}
    assert fz.other_configurations(run) == [
        "  other configurations: 2, 4 examples, all clean (agents=3; intents=1)"]
    assert fz.other_configurations({**run, "configurations": run["configurations"][:1]}) == []


def test_the_run_own_parameters_are_said_once_not_in_each_configuration():
    base = {"agents": 3, "slugs": 3}
    cfgs = configurations(catalogue.spec("graph-relay"), base, "nightly")
    run = {"model": "graph-relay", "configurations": [
        {"params": c, "examples": 1, "failure": None} for c in cfgs]}
    lines = fz.other_configurations(run)
    # intents 1-3, retries 0-2, projects 1-2, listing 0-1, less the run's own (hand count)
    assert lines[0].startswith("  other configurations (each also agents=3 slugs=3): 35, ")
    assert max(map(len, lines)) <= 80
    body = [line for line in lines if not line.startswith("  other")]
    assert not any("agents=" in line or "slugs=" in line for line in body)
    back = [p for p, _ in configurations_read_back(lines)]
    assert sorted(sorted(as_words(base) + p) for p in back) == sorted(
        map(as_words, cfgs[1:]))


@pytest.mark.slow
def test_a_run_of_one_example_gives_it_to_the_others_and_reports_them(tmp_path):
    """One example in all: the run's own share rounds to none (Hypothesis refuses to run
    no example), the other configurations have one each; the report is the real run's."""
    res = CliRunner().invoke(main, ["fuzz", "--model", "graph-relay", "--profile", "ci",
                                    "--examples", "1", "--steps", "5", "--tour-depth", "1",
                                    "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    run, = json.loads((tmp_path / "fuzz.json").read_text())["runs"]
    assert run["configurations"][0]["examples"] == 0
    assert all(c["examples"] == 1 for c in run["configurations"][1:])
    lines = res.stdout.splitlines()
    at = next(k for k, line in enumerate(lines) if line.startswith("  other configurations"))
    shown = fz.other_configurations(run)
    assert lines[at:at + len(shown)] == shown and max(map(len, shown)) <= 80
    assert sorted(p for p, _ in configurations_read_back(shown)) == sorted(
        as_words(c["params"]) for c in run["configurations"][1:])
