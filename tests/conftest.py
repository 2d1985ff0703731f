"""Shared fixtures; the Hypothesis profiles come from :mod:`osf_check.fuzz.profiles`.

Hypothesis loads its built-in ``ci`` profile by itself when CI=true (derandomized,
no example database); elsewhere ``dev`` is loaded, or the one HYPOTHESIS_PROFILE names.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

import osf_check.fuzz.profiles  # noqa: F401  (registers dev and nightly)

if os.environ.get("HYPOTHESIS_PROFILE"):
    settings.load_profile(os.environ["HYPOTHESIS_PROFILE"])
elif not os.environ.get("CI"):
    settings.load_profile("dev")


@pytest.fixture(scope="session")
def graph_relay_result():
    """The correct Graph-run relay model at its defaults, depth 12, --strict."""
    from osf_check.explorer.check import check
    return check("graph-relay", depth=12, strict=True)
