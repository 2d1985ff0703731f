"""A test adapter: the Python reference implementation behind the driver protocol, made
to misbehave at its N-th step request in one chosen way.

    python tests/adapters/faulty.py crash|hang|garbage|bad-schema|wrong-type|bad-state|refuse|no-post N

(no-post: from the N-th step on, the completions the implementation posts are left out of
``sent``.)
"""

from __future__ import annotations

import json
import os
import sys
import time

from osf_check.driver.reference import Reference
from osf_check.driver.serve import serve


def main() -> int:
    how, at = sys.argv[1], int(sys.argv[2])
    count = {"steps": 0}

    class Faulty(Reference):
        def step(self, action, args, label, data):
            count["steps"] += 1
            if count["steps"] == at:
                if how == "crash":
                    print("faulty adapter: giving up", file=sys.stderr, flush=True)
                    os._exit(3)
                if how == "hang":
                    time.sleep(3600)
                if how == "refuse":
                    raise LookupError(f"no handler for {label}")
                if how in ("garbage", "bad-schema", "wrong-type"):
                    line = {"garbage": "Traceback (most recent call last): oops",
                            "bad-schema": json.dumps({"type": "observed", "id": 10**6,
                                                      "state": {}, "offers": "start"}),
                            "wrong-type": json.dumps({"type": "ok", "id": 10**6})}[how]
                    sys.stdout.write(line + "\n")
                    sys.stdout.flush()
            return super().step(action, args, label, data)

        def observe(self):
            out = super().observe()
            if how == "bad-state" and count["steps"] >= at:
                out["state"] = dict(out["state"], call=["flying"] * len(out["state"]["call"]))
            if how == "no-post" and count["steps"] >= at:
                out["sent"] = []
            return out

    return serve(lambda m, p, s: Faulty(m, p, s, None), name=f"faulty ({how} at {at})")


if __name__ == "__main__":
    sys.exit(main())
