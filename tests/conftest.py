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


@pytest.fixture(autouse=True)
def _catalogue_as_it_was():
    """A test that loads a model file or registers a model leaves the process-wide
    catalogue as it found it (the next test may load a model of the same name)."""
    from osf_check.properties import catalogue as c
    saved = dict(c.MODELS), dict(c.SOURCES), c.PROPERTIES, c.MUTANTS, c.ASSUMPTIONS
    yield
    c.MODELS.clear()
    c.MODELS.update(saved[0])
    c.SOURCES.clear()
    c.SOURCES.update(saved[1])
    c.PROPERTIES, c.MUTANTS, c.ASSUMPTIONS = saved[2:]
