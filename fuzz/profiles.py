"""Hypothesis profiles of osf-check, registered on import (the CLI and the tests use them).

Hypothesis loads its built-in ``ci`` profile by itself when CI=true (derandomized, no
example database).  We add ``dev``, the default elsewhere (an example database in
``.hypothesis/``, so a failure found once is replayed first next time), and ``nightly``
(many examples, Hypothesis's own shrinking too).  The fuzzer's example counts per
profile are in :data:`FUZZ_EXAMPLES`; the test suite's property tests use the
profile's ``max_examples``.

>>> from hypothesis import settings
>>> settings.get_profile("nightly").max_examples
5000
"""

from __future__ import annotations

from hypothesis import settings

settings.register_profile("dev", max_examples=60)
settings.register_profile("nightly", max_examples=5_000, deadline=None)

#: Hypothesis examples per system that ``osf-check fuzz`` runs under each profile
FUZZ_EXAMPLES = {"ci": 300, "dev": 300, "nightly": 10_000}
PROFILES = tuple(FUZZ_EXAMPLES)


def current() -> str:
    """The profile a run uses when none is named: ``ci`` under CI=true, else ``dev``."""
    import os
    return "ci" if os.environ.get("CI") else "dev"
