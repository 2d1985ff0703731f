"""The figures of the protocol documents, each written once: the reference implementation,
the models' checks, the timing analysis, the fuzzer's book of deadlines and the
simulation all read them here.

Each figure is in seconds, as the document gives it: 000 (the Graph-run relay,
``docs/spec/graph-relay.md``) and 004 (the wire protocol, ``docs/spec/wire-relay.md``,
its table of deadlines).  The reference implementation takes them as its own, so the
fuzzer finds no bug that a wrong figure here would make; ``tests/test_constants.py``
reads each back from the documents instead.
"""

from __future__ import annotations

from .wire import manifest as _manifest

__all__ = ["RELAY_ROUND", "CONTROL_POLL", "RUN_MEDIAN", "RUN_FLOOR", "SLOT", "DISPATCH",
           "DISPATCH_LOAD", "CODEX_LOAD", "ENQUEUE", "PHONE_OLDER_PAGE", "PHONE_FIRST_LOAD",
           "PHONE_OUTBOX_IOS", "PHONE_OUTBOX_ANDROID", "PHONE_OTHER", "RELAY_OLDER_PAGE",
           "RELAY_FIRST_LOAD", "RELAY_OUTBOX", "RELAY_OTHER", "LEASE", "RETENTION",
           "RULES_TTL", "PRECHECK_TIMEOUT", "LOADS"]

# 000: the desktop's relay round, and its control poll while a Graph runs
RELAY_ROUND = 20
CONTROL_POLL = 3
# 000: Graph run times, log-normal: their median and the shortest
RUN_MEDIAN = 60
RUN_FLOOR = 5

# 004, the desktop's bounds: a slot, dispatch (the two first loads: longer), enqueueing
SLOT = 8
DISPATCH = 45
DISPATCH_LOAD = 95
# 004: a Codex session's timeline load has its own deadline inside the 95 s
CODEX_LOAD = 90
ENQUEUE = 5
# 004, how long the phone waits, by method class
PHONE_OLDER_PAGE = 60
PHONE_FIRST_LOAD = 115
PHONE_OUTBOX_IOS = 20
PHONE_OUTBOX_ANDROID = 60
PHONE_OTHER = 60
# 004, how long the relay keeps a request pending, by method class
RELAY_OLDER_PAGE = 90
RELAY_FIRST_LOAD = 120
RELAY_OUTBOX = 31 * 60
RELAY_OTHER = 90
# 004, the idempotency store: a claim's lease, and how long an answer is kept
LEASE = 5 * 60
RETENTION = 48 * 3600
# 004, registration: the compatibility rules' cache, and the HTTP pre-check's timeout
RULES_TTL = 60
PRECHECK_TIMEOUT = 5

#: 004: the two first timeline loads, which have the longer dispatch and relay limits (the
#: method manifest gives each method's deadline class)
LOADS = _manifest.LOADS
