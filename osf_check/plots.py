"""Plots drawn with matplotlib (its non-interactive Agg backend: no screen, no system
package): deadline timelines, the poll-strategy trade-off, the pickup-wait CDF, the
states per depth of an explore and the fuzzer's coverage over time.

Every function returns a :class:`matplotlib.figure.Figure`; :func:`save` writes it as
SVG and PNG, reproducibly (no date in the SVG, a fixed hash salt for its ids).
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any, Sequence

import matplotlib

matplotlib.use("Agg")  # before pyplot: never a window
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.text import Text  # noqa: E402

from osf_check.output import atomic_write  # noqa: E402

__all__ = ["timeline", "poll_tradeoff", "pickup_cdf", "depth_histogram", "fuzz_coverage",
           "save", "to_bytes"]

# text stays text in the SVG (searchable, smaller); the fixed salt keeps ids reproducible
plt.rcParams.update({"svg.hashsalt": "osf-check", "svg.fonttype": "none", "font.size": 9, "axes.titlesize": 10,
                     "axes.spines.top": False, "axes.spines.right": False})

BLUE, ORANGE, RED, GREY = "#1f77b4", "#ff7f0e", "#c62828", "#9e9e9e"


def to_bytes(fig: Figure, fmt: str) -> bytes:
    """The figure as ``svg`` or ``png`` bytes (the same bytes for the same figure)."""
    buf = io.BytesIO()
    meta = {"Date": None} if fmt == "svg" else {"Software": None}
    fig.savefig(buf, format=fmt, dpi=110, bbox_inches="tight", metadata=meta)
    return buf.getvalue()


def save(fig: Figure, base: Path, formats: Sequence[str] = ("svg", "png")) -> list[Path]:
    """Write ``base.svg`` and ``base.png`` (atomically); close the figure."""
    out = []
    try:
        for fmt in formats:
            p = base.with_name(f"{base.name}.{fmt}")
            atomic_write(p, to_bytes(fig, fmt))
            out.append(p)
    finally:
        plt.close(fig)
    return out


# ---------------------------------------------------------------------------
# timing: one schedule of one method class

def timeline(c: Any, s: Any, prop: str, title: str) -> Figure:
    """A schedule on a seconds axis: a row per station, the failing interval shaded.

    ``c`` is a method class's report (its ``phone``, ``relay`` and ``lease``), ``s`` a
    schedule (``slot_wait``, ``dispatch``, ``enqueue``, optional ``retry_at``), ``prop``
    ``B9`` (the answer comes after the relay forgot the request) or ``B10`` (the handler
    runs past its claim's lease)."""
    fig, ax = plt.subplots(figsize=(9, 3.2))
    rows = {"phone": 3, "relay": 2, "desktop": 1}
    if prop == "B10":
        rows["lease"] = 0
    # the axis spans what the story needs; a far-off deadline (the relay keeps an outbox
    # submit for 31 min) is cut with an arrow instead of squeezing the rest to a sliver
    end = max(s.answer_at, c.phone, s.claim_at + c.lease if prop == "B10" else c.relay, 1.0)
    h = 0.5
    ax.broken_barh([(0, c.phone)], (rows["phone"] - h / 2, h), color=BLUE)
    ax.text(c.phone, rows["phone"], f"  gives up at {c.phone:g} s", va="center")
    shown = c.relay if c.relay <= 1.2 * end else 1.1 * end
    ax.broken_barh([(0, shown)], (rows["relay"] - h / 2, h), color=BLUE)
    ax.text(shown, rows["relay"], ("  " if shown == c.relay else " … ") +
            f"forgets the request at {c.relay:g} s", va="center")
    parts = [(0, s.slot_wait, "slot wait"), (s.slot_wait, s.dispatch, "handler"),
             (s.stored_at, s.enqueue, "enqueue")]
    ax.broken_barh([(a, w) for a, w, _ in parts], (rows["desktop"] - h / 2, h),
                   color=[GREY, ORANGE, "#ffcc80"], edgecolor="white")
    inside = [(ax.text(a + w / 2, rows["desktop"], f"{name}\n{w:g} s", ha="center",
                       va="center", fontsize=8), a, w) for a, w, name in parts if w > 0]
    ax.text(s.answer_at, rows["desktop"], f"  answer at {s.answer_at:g} s", va="center")
    if prop == "B10":
        lease_end = s.claim_at + c.lease
        ax.broken_barh([(s.claim_at, c.lease)], (rows["lease"] - h / 2, h), color="#90caf9")
        ax.text(lease_end, rows["lease"], f"  lease ends at {lease_end:g} s", va="center")
        bad = (lease_end, s.stored_at)
        why = "handler still running after its lease: a retry may run it again"
    else:
        bad = (c.relay, s.answer_at)
        why = "answer after the relay forgot the request: no route (-32012)"
    if bad[1] > bad[0]:
        ax.axvspan(*bad, color=RED, alpha=0.15, lw=0)
        left = bad[0] < end / 2  # the note grows away from the nearer edge
        ax.text(bad[0] if left else bad[1], max(rows.values()) + 0.75, why,
                ha="left" if left else "right", color=RED, fontsize=8)
    if s.retry_at is not None:
        ax.axvline(s.retry_at, color=RED, ls="--", lw=1)
        ax.text(s.retry_at, -0.6, f"retry at {s.retry_at:g} s", color=RED, ha="center")
    ax.set_yticks(list(rows.values()), list(rows))
    ax.set_ylim(min(rows.values()) - 0.9, max(rows.values()) + 1.1)
    ax.set_xlim(0, end * 1.35)  # room for the labels right of the bars
    ax.set_xlabel("seconds from the request's arrival at the desktop")
    ax.set_title(title)
    ax.grid(axis="x", color="#eeeeee")
    ax.set_axisbelow(True)
    _keep_inside(fig, ax, inside)
    return fig


def _keep_inside(fig: Figure, ax: Any, labels: list[tuple[Any, float, float]]) -> None:
    """Hide a bar's label that does not fit inside its bar (x from ``a`` to ``a + w``)."""
    r = fig.canvas.get_renderer()
    for t, a, w in labels:
        box = t.get_window_extent(r)
        x0, x1 = (ax.transData.transform((x, 0))[0] for x in (a, a + w))
        t.set_visible(box.x0 >= x0 + 2 and box.x1 <= x1 - 2)


#: where a point's label may go, in points from the point: right, then left, above, below
_SPOTS = [(8, 6, "left"), (8, -14, "left"), (-8, 6, "right"), (-8, -14, "right"),
          (8, 20, "left"), (8, -28, "left"), (-8, 20, "right"), (-8, -28, "right"),
          (0, 34, "center"), (0, -42, "center")]


def _label_points(fig: Figure, ax: Any, points: Sequence[tuple[str, float, float]]) -> None:
    """Name each point next to it, at the first spot that overprints no other label or
    point (a thin line joins a label to its point, so it cannot be read as another's)."""
    r = fig.canvas.get_renderer()
    fig.canvas.draw()
    dots = [ax.transData.transform((x, y)) for _, x, y in points]
    taken: list[Any] = []
    for name, x, y in points:
        for dx, dy, ha in _SPOTS:
            a = ax.annotate(name, (x, y), xytext=(dx, dy), textcoords="offset points",
                            ha=ha, fontsize=8,
                            arrowprops={"arrowstyle": "-", "color": GREY, "lw": 0.6})
            a.update_positions(r)
            box = Text.get_window_extent(a, r).expanded(1.05, 1.15)  # the text, not its line
            clear = not any(box.overlaps(b) for b in taken) and not any(
                box.contains(px, py) for px, py in dots)
            if clear or (dx, dy, ha) == _SPOTS[-1]:
                taken.append(box)
                break
            a.remove()


# ---------------------------------------------------------------------------
# simulate

def poll_tradeoff(points: Sequence[tuple[str, float, float]], seed: int, n: int) -> Figure:
    """Calls per run against the mean delay in noticing the end, a labelled point per
    strategy (labels offset by annotation arrows, so each names its own point)."""
    fig, ax = plt.subplots(figsize=(7, 4.5))
    xs, ys = [p[1] for p in points], [p[2] for p in points]
    ax.scatter(xs, ys, color=BLUE, zorder=3)
    ax.set_xlabel("get_graph_run calls per run (mean)")
    ax.set_ylabel("mean delay in noticing the end, s")
    ax.set_title(f"client poll strategies (seed {seed}, N={n:,} runs each)")
    ax.set_xlim(0, max(xs) * 1.35)
    ax.set_ylim(0, max(ys) * 1.25)
    ax.grid(color="#eeeeee")
    _label_points(fig, ax, points)
    return fig


def pickup_cdf(samples: Sequence[float], poll: float, seed: int) -> Figure:
    """The simulated pickup wait's empirical CDF next to the analytic Uniform(0, poll)."""
    import numpy as np
    xs = np.sort(np.asarray(samples, dtype=float))
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.step(xs, np.arange(1, len(xs) + 1) / len(xs), where="post", color=BLUE,
            label=f"simulated (N={len(xs):,})")
    ax.plot([0, poll], [0, 1], color=ORANGE, ls="--", label=f"analytic: Uniform(0, {poll:g})")
    ax.set_xlabel("pickup wait (queued → started), s")
    ax.set_ylabel("P(wait ≤ x)")
    ax.set_title(f"pickup wait, poll every {poll:g} s (seed {seed})")
    ax.set_xlim(0, poll * 1.05)
    ax.set_ylim(0, 1.02)
    ax.legend(loc="lower right")
    ax.grid(color="#eeeeee")
    return fig


# ---------------------------------------------------------------------------
# explore and fuzz

def depth_histogram(histogram: Sequence[int], title: str) -> Figure:
    """New distinct states found at each BFS depth (log scale when it spans decades)."""
    fig, ax = plt.subplots(figsize=(7, 3.6))
    ax.bar(range(len(histogram)), histogram, color=BLUE)
    ax.set_xlabel("depth (steps from the initial state)")
    ax.set_ylabel("new distinct states")
    if histogram and max(histogram) > 100 * max(1, min(h for h in histogram if h) or 1):
        ax.set_yscale("log")
    ax.set_title(title)
    ax.grid(axis="y", color="#eeeeee")
    ax.set_axisbelow(True)
    return fig


def fuzz_coverage(series: Sequence[tuple[float, int, int, int]], states_total: int,
                  edges_total: int, title: str) -> Figure:
    """The tour's coverage over time: (seconds, steps, states, transitions) samples."""
    fig, ax = plt.subplots(figsize=(7, 3.6))
    t = [p[0] for p in series]
    ax.plot(t, [100 * p[2] / max(states_total, 1) for p in series], color=BLUE,
            label=f"states (of {states_total:,})")
    ax.plot(t, [100 * p[3] / max(edges_total, 1) for p in series], color=ORANGE,
            label=f"transitions (of {edges_total:,})")
    ax.set_xlabel("seconds into the tour")
    ax.set_ylabel("covered, %")
    ax.set_ylim(0, 102)
    ax.set_title(title)
    ax.legend(loc="lower right")
    ax.grid(color="#eeeeee")
    return fig
