"""The driver protocol: osf-check drives an implementation in any language through an
adapter process that speaks JSON lines (``docs/driver-protocol.md``).

``protocol`` holds the messages and their schema, ``external`` the harness that drives
an adapter process, ``serve`` the loop a Python adapter runs, and ``reference`` the
adapter of the Python reference implementation in ``osf_check.relay``.
"""
