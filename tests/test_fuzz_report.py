"""The console report of ``osf-check fuzz``: the lists of what a run tried (its data
classes, its late answers) stay readable at the nightly profile's size (grouped, wrapped
at 80 columns, every item still named) and short when they are short."""

from __future__ import annotations

import re

import pytest

from osf_check.fuzz import command as fz
from osf_check.fuzz.driver import make_harness, model_for
from osf_check.fuzz.graph_harness import LATE

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
    answers = [*LATE.values(), "a sync reply", "a control poll's answer"]
    return sorted(f"{a} after {s}" for a in answers for s in steps)


def rendered(title: str, items: list[str]) -> list[str]:
    how, grouping = HOW[title]
    return fz.tried(title, items, how, grouping)


def groups_read_back(lines: list[str]) -> list[tuple[str, list[str]]]:
    """The groups of a grouped report as a reader sees them: a group's line and the more
    indented lines after it are one text, its label, count and members."""
    joined: list[str] = []
    for line in lines[1:]:
        if line.startswith(" " * 6):
            joined[-1] += " " + line.strip()
        else:
            assert line.startswith("    "), line
            joined.append(line.strip())
    out = []
    for text in joined:
        m = re.fullmatch(r"(.+?) \((\d+)\):? ?(.*)", text)
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
    assert [label for label, _ in groups] == sorted(
        {*LATE.values(), "a sync reply", "a control poll's answer"})
    assert sorted(f"{label} after {m}" for label, members in groups for m in members) == items
    assert all(len(members) == 32 for _, members in groups)


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
