"""No test depends on the machine's speed: every Hypothesis profile the tests or the
fuzzer load has no deadline (a busy machine once failed a test on the 200 ms default)."""

from __future__ import annotations

import pytest
from hypothesis import settings

from osf_check.fuzz import profiles


@pytest.mark.parametrize("name", ["ci", *profiles.PROFILES])
def test_no_profile_has_a_deadline(name):
    assert settings.get_profile(name).deadline is None


def test_the_check_sees_a_deadline():
    settings.register_profile("osf-test-timed", deadline=200)
    assert settings.get_profile("osf-test-timed").deadline is not None
