"""Plots drawn with matplotlib: timing timelines (a seconds axis, the failing interval
shaded, the lease for B10, labels that do not overprint, a file per method class and
platform), the poll-strategy trade-off, the pickup-wait CDF, states per depth, fuzz
coverage over time."""

from __future__ import annotations

import itertools

import matplotlib.pyplot as plt
from matplotlib.text import Text
import pytest
from click.testing import CliRunner

from osf_check import plots
from osf_check.cli import main
from osf_check.explorer.symbolic import timing as tm
from osf_check.plots import RED


def _overlaps(fig) -> list[tuple[str, str]]:
    """Pairs of visible texts whose boxes on the canvas intersect."""
    r = fig.canvas.get_renderer()
    texts = [t for ax in fig.axes for t in ax.texts + [a for a in ax.get_children()
             if isinstance(a, plt.Annotation)] if t.get_visible() and t.get_text()]
    texts = list(dict.fromkeys(texts))
    fig.canvas.draw()
    boxes = [(t.get_text(), Text.get_window_extent(t, r)) for t in texts]  # text, not arrow
    return [(a, b) for (a, x), (b, y) in itertools.combinations(boxes, 2) if x.overlaps(y)]


def _shaded(ax) -> list[tuple[float, float]]:
    out = []
    for p in ax.patches:
        if p.get_facecolor()[:3] == plt.matplotlib.colors.to_rgb(RED):
            x0 = p.get_x() if hasattr(p, "get_x") else p.get_xy()[0][0]
            out.append((round(x0, 6), round(x0 + p.get_width(), 6)))
    return out


@pytest.mark.parametrize("prop, overrides", [("B9", {"relay_other": 50}), ("B10", {"lease": 30})])
def test_a_timeline_has_a_seconds_axis_the_failing_interval_shaded_and_clear_labels(prop, overrides):
    rep = tm.analyse(overrides)
    c = next(c for c in rep.classes if getattr(c, f"{prop.lower()}_schedule"))
    s = getattr(c, f"{prop.lower()}_schedule")
    fig = plots.timeline(c, s, prop, f"{prop} fails: {c.name}")
    ax = fig.axes[0]
    assert ax.get_xlabel().startswith("seconds") and len(ax.get_xticks()) >= 4
    bad = (c.relay, s.answer_at) if prop == "B9" else (s.claim_at + c.lease, s.stored_at)
    assert _shaded(ax) == [pytest.approx(bad)]
    labels = [t.get_text() for t in ax.texts]
    assert any(("lease ends" in x) for x in labels) == (prop == "B10")
    assert not _overlaps(fig), _overlaps(fig)
    plt.close(fig)


def test_the_overlap_check_can_fail():
    fig, ax = plt.subplots()
    ax.text(0.5, 0.5, "one label")
    ax.text(0.5, 0.5, "another label")
    assert _overlaps(fig)
    plt.close(fig)


def test_timing_writes_a_file_per_method_class_and_platform_and_names_what_fails(tmp_path):
    res = CliRunner().invoke(main, ["timing", "--set", "lease=30", "--out", str(tmp_path)])
    assert res.exit_code == 12
    names = sorted(p.name for p in tmp_path.iterdir())
    assert "timing-B10-outbox-submit-ios.svg" in names
    assert "timing-B10-outbox-submit-android.svg" in names
    assert "lease ends at 30 s" in (tmp_path / "timing-B10-outbox-submit-ios.svg").read_text()
    res = CliRunner().invoke(main, ["timing", "--set", "relay_other=50"])
    assert res.stdout.rstrip().endswith(
        "B9 fails for anything else; B10 holds for every method class")


def test_the_poll_trade_off_names_each_point_next_to_it_and_has_axis_titles():
    pts = [("every 30 s", 3.6, 14.9), ("backoff 2,4,8... ≤30", 6.7, 15.3),
           ("every 15 s", 6.7, 7.4), ("every 2 s", 46.9, 1.0)]
    fig = plots.poll_tradeoff(pts, seed=0, n=2000)
    ax = fig.axes[0]
    assert ax.get_xlabel() and ax.get_ylabel()
    notes = {a.get_text(): a.xy for a in ax.get_children() if isinstance(a, plt.Annotation)}
    assert notes == {name: (x, y) for name, x, y in pts}  # each label points at its own point
    assert not _overlaps(fig), _overlaps(fig)
    plt.close(fig)


def test_the_pickup_cdf_is_next_to_the_analytic_one():
    fig = plots.pickup_cdf([1.0, 5.0, 9.0, 19.0], poll=20.0, seed=0)
    ax = fig.axes[0]
    sim, analytic = ax.get_lines()
    assert list(sim.get_ydata()) == [0.25, 0.5, 0.75, 1.0]
    assert list(analytic.get_xdata()) == [0, 20.0] and list(analytic.get_ydata()) == [0, 1]
    plt.close(fig)


def test_states_per_depth_and_fuzz_coverage_plot_their_data():
    fig = plots.depth_histogram([1, 7, 30, 101], "t")
    assert [b.get_height() for b in fig.axes[0].patches] == [1, 7, 30, 101]
    plt.close(fig)
    series = [(0.0, 0, 1, 0), (1.0, 256, 5, 10), (2.0, 300, 8, 15)]
    fig = plots.fuzz_coverage(series, states_total=10, edges_total=20, title="t")
    st, ed = fig.axes[0].get_lines()
    assert list(st.get_ydata()) == [10.0, 50.0, 80.0]  # a tour that stops short shows it
    assert list(ed.get_ydata()) == [0.0, 50.0, 75.0]
    plt.close(fig)


def test_saved_plots_are_reproducible(tmp_path):
    a = plots.to_bytes(plots.depth_histogram([1, 2, 3], "t"), "svg")
    b = plots.to_bytes(plots.depth_histogram([1, 2, 3], "t"), "svg")
    assert a == b and b"<text" in a
