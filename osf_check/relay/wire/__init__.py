"""System B's reference implementation (in progress): so far the desktop's idempotency
registry; the envelope validation, relay router and desktop router come next."""
