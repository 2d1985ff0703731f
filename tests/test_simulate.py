"""Timed simulation: statistics against their analytic values, determinism per seed."""

from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner

from osf_check.cli import main
from osf_check.models.errors import BadValue
import numpy as np

from osf_check.simulate.experiments import STRATEGIES, Facts, Relay, _polls, cancellation, idempotency, \
    lost_post, pickup_wait, result_limits, run_all

N = 2_000


def test_mean_pickup_wait_is_half_the_poll_interval():
    t = pickup_wait(N, 0, Facts())
    mean, median, p95, mx, *cdf = t.rows[0][1:]
    # the wait is Uniform(0, 20): sd 20/sqrt(12); a 4-standard-error band for the mean
    se = 20 / math.sqrt(12) / math.sqrt(N)
    assert abs(mean - 10) < 4 * se
    # quantiles of a uniform: the sample p95 is within a few percent of 19
    assert abs(median - 10) < 1.0 and abs(p95 - 19) < 0.5 and 19 < mx < 20
    # the distribution: P(wait <= x) within 4 standard errors of x/20 at 5, 10, 15 s
    for got, want in zip(cdf, (0.25, 0.5, 0.75)):
        assert abs(got - want) < 4 * math.sqrt(want * (1 - want) / N)


def test_other_poll_intervals_scale():
    t = pickup_wait(N, 1, Facts(poll=40))
    se = 40 / math.sqrt(12) / math.sqrt(N)
    assert abs(t.rows[0][1] - 20) < 4 * se


@pytest.mark.slow
def test_same_seed_same_numbers_other_seed_other_numbers():
    a = [t.as_dict() for t in run_all(300, 7)]
    b = [t.as_dict() for t in run_all(300, 7)]
    c = [t.as_dict() for t in run_all(300, 8)]
    assert a == b and a != c


def test_runs_of_a_day_and_more_are_simulated_to_their_end():
    """--min-run 86400 was an internal error (the backoff's 2 ** i overflowed a float),
    a run past 10**6 s one too (its end was never reached), and a run over an hour made
    the outbox look as if it lost the completion (still running after an hour)."""
    backoff = STRATEGIES["backoff 2,4,8… ≤30"]
    # by hand: 2, 6, 14, 30, then 30 s apart: 86,400 s at the 4 + 2,879th call
    calls, late = _polls(backoff, np.array([86_400.0, 3.0]))
    assert backoff(5_000) == 30.0 and calls.tolist() == [2_883, 2] and late.tolist() == [0.0, 3.0]
    f = Facts(control=100_000.0)  # few control polls: the test stays quick
    r = Relay(f, 0.0, [1.5e6])
    cid = r.submit("a-long-run")
    r.settle()
    assert r.ended[cid] >= 1.5e6
    t = lost_post(1, 0, Facts(floor=5_000.0, median_run=5_000.0, sigma=0.0))
    rows = {row[0]: row for row in t.rows}
    assert rows["on"][1] == "completed" and rows["off"][1] == "running"
    assert t.columns[1] == "final status (after 10,046 s)"  # 2 × (5,000 + 20 + 3)
    assert lost_post(1, 0, Facts()).columns[1] == "final status (after 1 h)"


def test_a_shortest_run_above_the_median_is_bad_input():
    """max(floor, log-normal) has the floor as its median then: every table named a
    median that no run had."""
    with pytest.raises(BadValue, match=r"the shortest run time \(500 s\) is above the "
                       r"median \(1 s\)"):
        Facts(floor=500.0, median_run=1.0)
    at_median = Facts(floor=60.0, median_run=60.0)  # accepted
    assert at_median.run_times(np.random.default_rng(0), 100).min() == 60.0


def test_same_key_queues_each_run_once_and_fresh_keys_do_not():
    t = idempotency(N, 0, Facts())
    for rep, client, calls, runs in t.rows:
        if client == "same key":
            assert runs == 200 and calls > 200
        else:
            assert runs == calls
            # 200 / (1 - 0.3) = 285.7 expected calls; binomial spread well within 40
            assert abs(runs - 200 / 0.7) < 40


def test_without_the_outbox_a_lost_post_leaves_the_run_running():
    rows = {r[0]: r for r in lost_post(N, 0, Facts()).rows}
    # delivered at the round after the lost POST: within a poll (and a control poll) of
    # the run's end, counted from its start as 000 does
    assert rows["on"][1] == "completed" and rows["on"][2] <= rows["on"][3] <= rows["on"][2] + 23
    assert rows["off"][1] == "running" and rows["off"][3] == "never"


def test_result_limits_count_utf16_units_not_bytes():
    rows = {r[0]: r for r in result_limits(N, 0, Facts()).rows}
    assert rows["ASCII"][1] == rows["Japanese"][1] > 99_000
    assert rows["Japanese"][3] == 3 * rows["Japanese"][1] > 100_000  # bytes do not count
    # an emoji is two UTF-16 code units: half as many fit
    assert rows["emoji"][2] == 2 * rows["emoji"][1] == rows["ASCII"][2]


def test_cli_writes_tables_and_the_plot(tmp_path):
    res = CliRunner().invoke(main, ["simulate", "--runs", "200", "--json", "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["seed"] == 0 and len(doc["tables"]) == 8
    assert all(t["seed"] == 0 and t["n"] >= 1 for t in doc["tables"])
    for name in ("poll-strategies", "pickup-wait-cdf"):
        assert (tmp_path / f"{name}.svg").read_text().startswith("<?xml")
        assert (tmp_path / f"{name}.png").read_bytes().startswith(b"\x89PNG")
    assert (tmp_path / "simulate.json").exists()
    # progress on stderr, one line an experiment (nothing was said before the tables)
    started = [ln for ln in res.stderr.splitlines() if "simulate: experiment" in ln]
    assert len(started) == 8 and started[2].endswith("experiment 3 of 8, poll strategies")


@pytest.mark.parametrize("args", [["--runs", "1"], ["--loss", "1.5"], ["--poll", "0"]])
def test_bad_parameters_are_bad_input(args):
    res = CliRunner().invoke(main, ["simulate", *args])
    assert res.exit_code == 150 and res.stderr.startswith("osf-check: error: Invalid value")


def test_000s_figures_are_compared_only_where_this_run_sets_what_they_depend_on():
    """With 90 % of answers lost, 000's calls (taken at 30 %) were printed under ours with
    a "difference" of thousands; at --poll 10 the pickup note still said Uniform(0, 20)."""
    t = idempotency(N, 0, Facts(loss=0.9))
    t.compare_at(Facts(loss=0.9), N)
    assert t.ref == [] and "000's figures are for --loss 0.3, not compared here" in t.note
    assert "1/(1 − 0.9)" in t.note and "  000" not in t.text()
    t = idempotency(N, 0, Facts())
    t.compare_at(Facts(), N)
    assert len(t.ref) == 6 and "  000" in t.text() and "not compared" not in t.note
    # a fact a table does not depend on leaves its comparison alone
    t = pickup_wait(N, 0, Facts(loss=0.9))
    t.compare_at(Facts(loss=0.9), N)
    assert t.ref and "  000" in t.text()
    t = pickup_wait(N, 0, Facts(poll=10.0))
    t.compare_at(Facts(poll=10.0), N)
    assert not t.ref and "Uniform(0, 10)" in t.note and "000's figures are for --poll 20, not compared" in t.note


def test_a_difference_beyond_both_samples_noise_is_marked_and_one_within_is_not():
    """000's figure printed with "difference" under ours said nothing of noise: 0.82 s
    (seed 0, 500 runs) read like a deviation.  A mark now says which differences are
    larger than our 95 % interval widened for 000's own 2,000 runs (sqrt 2 at 2,000)."""
    from osf_check.simulate.experiments import Table
    t = Table("t", ["", "a", "b", "c"], [["ours", 10.0, 10.0, 10.0]], 0, 2_000,
              ref=[(("ours",), [None, 11.2, 11.5, 30.0])], spread=[[None, 1.0, 1.0, None]])
    # 1.2 < 1.0 * sqrt(2) < 1.5; c has no interval (a maximum), so no mark whatever it is
    assert t.beyond_noise(0, t.ref[0][1]) == [False, False, True, False]
    text = t.text()
    assert "-1.50*" in text and "-1.20 " in text and "-20.00*" not in text, text
    assert "* beyond both samples' noise (95 %)" in text
    [ref] = t.as_dict()["reference_000"]
    assert ref["beyond_noise"] == ["b"] and t.as_dict()["half_width_95"] == [[None, 1.0, 1.0, None]]
    t.ref = [(("ours",), [None, 10.5, 9.0, 30.0])]
    assert "*" not in t.text() and t.as_dict()["reference_000"][0]["beyond_noise"] == []


def test_the_intervals_hold_the_true_pickup_wait_about_as_often_as_they_say():
    """The wait is Uniform(0, 20): its mean and median are 10.  Over twenty seeds of 300
    runs each, a 95 % interval misses 10 about once; five misses of twenty would mean
    intervals too narrow (the chance of five or more at 95 % is 1.6 %)."""
    from osf_check.simulate.experiments import mean_hw, quantile_hw
    missed = {"mean": 0, "median": 0}
    for seed in range(20):
        w = pickup_wait(300, seed, Facts()).samples
        missed["mean"] += abs(w.mean() - 10) > mean_hw(w)
        missed["median"] += abs(np.median(w) - 10) > quantile_hw(w, 0.5)
    assert max(missed.values()) < 5, missed
    # and the interval narrows with the runs, as one over their square root
    w = pickup_wait(1_200, 0, Facts()).samples
    assert 0.4 < mean_hw(w) / mean_hw(w[:300]) < 0.6


def test_a_running_cancel_ends_after_its_poll_its_stop_and_its_post():
    """000: a running run is terminal a mean 2.0 s, at most 3.5 s after its cancel: the
    3 s control poll, then the stop and the POST (we had neither: mean 1.5, max 3.0)."""
    def running(f):
        return next(r for r in cancellation(400, 0, f).rows if r[0] == "already running")
    bare, timed = running(Facts(stop=0.0, post=0.0)), running(Facts())
    assert bare[4] <= 3.0 and timed[4] > 3.0
    assert timed[4] <= 3.0 + Facts().stop + Facts().post + 1e-9
    assert abs(timed[2] - bare[2] - (Facts().stop + Facts().post)) < 0.05


def test_the_setup_says_which_figures_are_000s_and_which_the_projects():
    src = {r["fact"]: r["source"] for r in Facts().setup()}
    assert src["relay round"] == src["control poll"] == src["run time median"] == "000"
    assert src["run time spread (log-normal sigma)"] == "the project's choice"
    assert src["stop after fleet_cancel_run"] == src["a completion's POST"] == \
        "the project's choice"
    moved = {r["fact"]: r["source"] for r in Facts(poll=10.0).setup()}
    assert moved["relay round"] == "this run's option"
    assert "0.8*" in Facts().setup_text() and "relay round 10 s (option)" in \
        Facts(poll=10.0).setup_text()
