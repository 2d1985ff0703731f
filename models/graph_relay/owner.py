"""The owner: decides which Graph sessions are shared with the connected project.

One project and one session; sharing can change at any moment: the project is
enabled or not, the session shared or not, and its slug can change.
"""

from __future__ import annotations

from ..dsl import Bool, Int, ModelBuilder
from ..expr import Not
from .vocab import Ctx


def declare(b: ModelBuilder, c: Ctx) -> None:
    b.array("enabled", Bool(), c.projects, actor="owner",
            doc="each connected project is enabled on the desktop")
    b.var("shared", Bool(), actor="owner", doc="the session is shared with the project")
    b.var("cur_slug", Int(0, c.slugs - 1), actor="owner", doc="the session's current slug")


def consent(s, c: Ctx, r: int):
    """The desktop's re-check right before executing command ``r``."""
    from ..expr import And
    if c.on("no-consent-recheck"):
        return True
    enabled = project_enabled(s, c, r)
    if c.on("recheck-ignores-slug"):
        return And(enabled, s.shared)
    return And(enabled, s.shared, s.cur_slug == s.slug[r])


def project_enabled(s, c: Ctx, r: int):
    """Run ``r``'s project is enabled."""
    from ..expr import And, Exists
    return Exists(range(c.projects), lambda p: And(s.proj[r] == p, s.enabled[p]))


def actions(b: ModelBuilder, c: Ctx) -> None:
    @b.action("owner", params={"p": range(c.projects)})
    def toggle_project(s, p):
        """The owner enables or disables a project."""
        return True, {s.enabled[p]: Not(s.enabled[p])}

    @b.action("owner")
    def toggle_share(s):
        """The owner shares or unshares the session with the project."""
        return True, {s.shared: Not(s.shared)}

    if c.slugs > 1:
        @b.action("owner")
        def change_slug(s):
            """The owner renames the session: its slug changes."""
            return True, {s.cur_slug: (s.cur_slug + 1) % c.slugs}
