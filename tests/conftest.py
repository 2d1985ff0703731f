"""Shared fixtures and Hypothesis profiles.

Hypothesis loads its built-in ``ci`` profile by itself when CI=true (derandomized,
no example database); we only add ``dev`` (the default elsewhere) and ``nightly``.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

settings.register_profile("dev", max_examples=60)
settings.register_profile("nightly", max_examples=5_000, deadline=None)
if os.environ.get("HYPOTHESIS_PROFILE"):
    settings.load_profile(os.environ["HYPOTHESIS_PROFILE"])
elif not os.environ.get("CI"):
    settings.load_profile("dev")


@pytest.fixture(scope="session")
def graph_relay_result():
    """The correct Graph-run relay model at its defaults, depth 12, --strict."""
    from explorer.check import check
    return check("graph-relay", depth=12, strict=True)
