"""The partitioned search on a local Ray cluster of 2 workers (issue 16): the same run as
one process, on every model and mutant; bad addresses are bad input; a killed run
resumes from its checkpoint."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from osf_check.explorer.check import check, prepare
from osf_check.explorer.vector.partition import WorkerLost
from osf_check.explorer.vector.search import vector_bfs
from osf_check.properties import catalogue

from test_partition import SMALL, _same

if os.environ.get("CI") != "true":
    ray = pytest.importorskip("ray", reason="the cluster extra is not installed")
else:  # CI installs the extra: a missing Ray there is a failure, not a skip
    import ray


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             logging_level="ERROR")
    yield
    ray.shutdown()


@pytest.mark.slow  # minutes on a busy 2-core machine: the full suite runs it
@pytest.mark.parametrize("model", sorted(SMALL))
def test_every_model_and_mutant_is_the_same_run_on_the_cluster(local_ray, model):
    params, depth = SMALL[model]
    mutants = [None, *(x.name for x in catalogue.MUTANTS if x.model == model)]
    for mu in mutants:
        m, props, _ = prepare(model, params=params, mutant=mu)
        one = vector_bfs(m, props, depth=depth, stop_on_violation=False)
        on = vector_bfs(m, props, depth=depth, stop_on_violation=False, cluster="auto")
        assert on.partitions == 2  # one actor per CPU of the cluster
        _same(one, on)
        local = vector_bfs(m, props, depth=depth, stop_on_violation=False, workers=2)
        # the same bytes, either way: these levels are narrower than a chunk, which
        # worker processes expand each its own states of, as actors always do
        assert on.shuffled_levels == local.shuffled_levels
        _same(vector_bfs(m, props, depth=depth),
              vector_bfs(m, props, depth=depth, cluster="auto", workers=2))


def test_the_graph_and_its_checks_are_the_same_on_the_cluster(local_ray, tmp_path):
    """Graph-relay's reach and fair properties: the actors keep the edges, which come
    back in one process's order, so every verdict and lasso is one process's; a
    checkpoint of a cluster run with the graph resumes on worker processes."""
    for mu in (None, "outbox-off", "queue-on-desktop"):
        kw = dict(params={"intents": 1, "slugs": 1}, mutant=mu, depth=None,
                  stop_on_violation=False)
        one, on = check("graph-relay", **kw), check("graph-relay", cluster="auto", **kw)
        assert on.workers["partitions"] == 2 and on.status == one.status
        _same(one.exploration, on.exploration)
    m, props, _ = prepare("graph-relay", params={"intents": 1}, mutant="outbox-off")
    whole = vector_bfs(m, props, depth=None, keep_graph=True, stop_on_violation=False)
    vector_bfs(m, props, depth=None, keep_graph=True, stop_on_violation=False,
               cluster="auto", checkpoint=tmp_path, checkpoint_every=0, stop_after_levels=6)
    for where in ({"workers": 2}, {"cluster": "auto"}):  # and its edges loaded by actors
        _same(whole, vector_bfs(m, props, depth=None, keep_graph=True,
                                stop_on_violation=False, resume=tmp_path, **where))


def test_a_lost_actor_is_no_verdict(local_ray, monkeypatch):
    """An actor killed mid-run: WorkerLost (exit 153 in the CLI), never a verdict."""
    from osf_check.explorer.vector import cluster as cl
    orig = cl.RayShards.merge

    def merge_after_a_kill(self):
        ray.kill(self.actors[1])
        return orig(self)
    monkeypatch.setattr(cl.RayShards, "merge", merge_after_a_kill)
    m, props, _ = prepare("two-phase", params={"rms": 4})
    with pytest.raises(WorkerLost):
        vector_bfs(m, props, depth=None, cluster="auto", workers=2)


def _cli(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "osf_check.cli", "explore", *args],
                          capture_output=True, text=True, timeout=600, **kw)


def test_the_cli_runs_a_local_cluster_and_reports_it():
    r = _cli("--model", "two-phase", "--param", "rms=6", "--depth", "unbounded",
             "--cluster", "local", "--json")
    assert r.returncode == 0, r.stderr[-2000:]
    got = json.loads(r.stdout)["models"][0]
    one = check("two-phase", params={"rms": 6}, depth=None)
    assert (got["distinct_states"], got["generated_states"], got["states_per_depth"]) == \
        (one.exploration.distinct, one.exploration.generated, one.exploration.histogram())
    assert got["workers"]["cluster"] == "local" and got["workers"]["partitions"] >= 2
    assert got["workers"]["shuffled_bytes"] > 0


def test_a_model_file_runs_on_the_cluster(tmp_path):
    """A model file is loaded under a module name only this process knows: its
    functions, pickled by reference, killed every actor (exit 153, "lost a worker")."""
    from test_user_models import DIEHARD
    p = tmp_path / "jugs.py"
    p.write_text(DIEHARD.read_text())
    args = ["--model-file", str(p), "--depth", "unbounded", "--continue", "--json"]
    on, one = _cli(*args, "--cluster", "local"), _cli(*args)
    assert on.returncode == one.returncode == 12, on.stderr[-2000:]
    got, want = (json.loads(r.stdout)["models"][0] for r in (on, one))
    assert (got["distinct_states"], got["generated_states"]) == (16, 97)  # a hand count
    assert [v["length"] for v in json.loads(on.stdout)["violations"]] == \
        [v["length"] for v in json.loads(one.stdout)["violations"]]
    assert got["workers"]["cluster"] == "local" and want["workers"]["partitions"] == 1


@pytest.mark.parametrize("args, says", [
    (["--cluster", "127.0.0.1:1"], "nothing answers at 127.0.0.1:1"),
    (["--cluster", "no-port"], "an address is HOST:PORT"),
    (["--cluster", "local", "--engine", "explicit"], "needs the vector engine"),
])
def test_bad_cluster_arguments_are_one_line_and_exit_150(args, says):
    r = _cli("--model", "two-phase", "--depth", "3", *args)
    assert r.returncode == 150, (r.returncode, r.stderr[-2000:])
    assert says in r.stderr and "Traceback" not in r.stderr
    assert len([x for x in r.stderr.splitlines() if x.startswith("osf-check: error")]) == 1


def test_more_workers_than_the_clusters_cpus_is_bad_input(local_ray):
    from osf_check.models.errors import BadValue
    m, props, _ = prepare("two-phase", params={"rms": 3})
    with pytest.raises(BadValue, match="has 2 CPUs, one per worker"):
        vector_bfs(m, props, cluster="auto", workers=3)


def test_without_ray_the_cluster_asks_for_the_extra():
    code = ("import sys; sys.modules['ray'] = None; from osf_check.cli import main; "
            "sys.argv = ['osf-check', 'explore', '--model', 'two-phase', '--cluster', 'local']; "
            "main()")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 150 and "pip install 'osf-check[cluster]'" in r.stderr


@pytest.mark.slow  # minutes on a busy 2-core machine: the full suite runs it
def test_a_sigkilled_cluster_run_resumes_to_the_same_verdict(tmp_path):
    cp = tmp_path / "cp"
    base = ["--model", "two-phase", "--param", "rms=8", "--depth", "unbounded", "--json",
            "--cluster", "local"]
    p = subprocess.Popen([sys.executable, "-m", "osf_check.cli", "explore", *base,
                          "--checkpoint", str(cp), "--checkpoint-every", "0"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    deadline = time.time() + 300
    while not (cp / "state.npz").exists() and time.time() < deadline and p.poll() is None:
        time.sleep(0.05)
    assert (cp / "state.npz").exists(), p.stderr.read() if p.poll() is not None else ""
    os.killpg(p.pid, signal.SIGKILL)  # the driver and the Ray instance it started
    p.wait(timeout=60)
    r = _cli(*base, "--resume", str(cp))
    assert r.returncode == 0, r.stderr[-2000:]
    got = json.loads(r.stdout)["models"][0]
    assert (got["distinct_states"], got["generated_states"]) == (1_745_408, 18_507_778)
