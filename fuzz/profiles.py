"""Hypothesis profiles of osf-check, registered on import (the CLI and the tests use them).

Hypothesis loads its built-in ``ci`` profile by itself when CI=true (derandomized, no
example database).  We add ``dev``, the default elsewhere, and ``nightly`` (many
examples, Hypothesis's own shrinking too).  None of them keeps an example database:
the same command and seed give the same run wherever it is started, whatever an
earlier run left in the current directory.  A database is used only when asked for
(``osf-check fuzz --db DIR``; the nightly workflow passes one).  The fuzzer's example counts per
profile are in :data:`FUZZ_EXAMPLES`; the test suite's property tests use the
profile's ``max_examples``.

>>> from hypothesis import settings
>>> settings.get_profile("nightly").max_examples
5000
"""

from __future__ import annotations

import os

from hypothesis import configuration, settings

# Hypothesis keeps caches (its Unicode tables) in ./.hypothesis of whatever directory it
# runs in: ours go to the user's cache directory, so that a run leaves nothing behind
# where it was started (HYPOTHESIS_STORAGE_DIRECTORY still wins)
if not os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
    _cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    configuration.set_hypothesis_home_dir(os.path.join(_cache, "osf-check", "hypothesis"))

# no deadline in any profile: a verdict must not depend on how busy the machine is
settings.register_profile("dev", max_examples=60, deadline=None, database=None)
settings.register_profile("nightly", max_examples=5_000, deadline=None, database=None)

#: Hypothesis examples per system that ``osf-check fuzz`` runs under each profile
FUZZ_EXAMPLES = {"ci": 300, "dev": 300, "nightly": 10_000}
PROFILES = tuple(FUZZ_EXAMPLES)
#: how many Hypothesis seeds share those examples: a deviation only one seed's draws
#: show is missed by a run of the other seeds, whatever their number of examples
FUZZ_SEEDS = {"ci": 3, "dev": 1, "nightly": 10}


def seeds(profile: str, seed: int, examples: int) -> list[int]:
    """The seeds a run of ``profile`` walks with: ``seed`` first, then the next ones, at
    most one per example.

    >>> seeds("ci", 0, 300), seeds("ci", 2**32 - 1, 300), seeds("ci", 5, 2), seeds("dev", 7, 300)
    ([0, 1, 2], [4294967295, 0, 1], [5, 6], [7])
    """
    n = max(1, min(FUZZ_SEEDS.get(profile, 1), examples))
    return [(seed + k) % 2**32 for k in range(n)]


def current() -> str:
    """The profile a run uses when none is named: ``ci`` when the CI variable says so (as
    CI services set it: true, 1, yes), else ``dev`` (``CI=false`` picked ``ci``)."""
    import os
    ci = os.environ.get("CI", "").strip().lower()
    return "dev" if ci in ("", "0", "false", "no", "off") else "ci"
