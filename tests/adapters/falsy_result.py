"""A test adapter: the Python reference implementation behind the driver protocol, whose
desktop leaves an empty result out of the completion it posts (a JavaScript
``if (result)``).  The tour's results are never empty: only data the checker draws shows
it.

    python tests/adapters/falsy_result.py
"""

from __future__ import annotations

import sys
from typing import Any

from osf_check.driver import reference
from osf_check.relay.graph import desktop
from osf_check.relay.graph.payload import completion_payload


def falsy_payload(*args: Any, **kwargs: Any) -> dict[str, Any]:
    out = completion_payload(*args, **kwargs)
    if out.get("result") == "":
        del out["result"]
    return out


def install() -> None:
    desktop.DesktopRelay.payload = staticmethod(falsy_payload)


if __name__ == "__main__":
    install()
    sys.exit(reference.main([]))
