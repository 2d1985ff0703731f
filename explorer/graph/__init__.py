"""The checks run on the graph a search kept: reach (a goal reachable from every premise
state) and fair (each goal's temporal form on every fair behaviour), with the shortest
counterexample lasso.  :func:`check_graph` takes an
:class:`~osf_check.explorer.result.Exploration` with its edges; :data:`JUDGES` names the
check kinds it decides.
"""

from .checks import JUDGES, GraphReport, check_graph, fairness_of_cycle

__all__ = ["JUDGES", "GraphReport", "check_graph", "fairness_of_cycle"]
