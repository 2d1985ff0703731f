"""The rooms import one another in one direction: no module of ``osf_check`` is part of an
import circle, and none but the command line itself imports the command line.

The imports are read from the source (``ast``), not from a running interpreter, so an
import inside a function or under ``if TYPE_CHECKING:`` counts like one at the top of
the module: an import moved into a function to dodge a circle still closes it.
"""

from __future__ import annotations

import pytest
import ast
import tomllib
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[1]
#: the only modules that may import ``osf_check.cli``
CLI_ENTRIES = {"osf_check.cli", "osf_check.__main__"}


def modules(root: Path) -> dict[str, Path]:
    """Every module of the import name ``osf_check``, by dotted name, from the
    ``package-dir`` mapping of ``pyproject.toml`` (the rooms stand at the top level)."""
    tool = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]
    out: dict[str, Path] = {}
    for name, folder in tool["package-dir"].items():
        for f in (root / folder).rglob("*.py"):
            parts = list(f.relative_to(root / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join([name, *parts])] = f
    return out


def _imported(mod: str, path: Path, node: ast.Import | ast.ImportFrom,
              known: dict[str, Path]) -> set[str]:
    """The modules of ``known`` that one import statement loads by name: ``from p import
    x`` names the module ``p.x`` where there is one, else ``p``."""
    if isinstance(node, ast.Import):
        found = set()
        for alias in node.names:
            name = alias.name
            while name and name not in known:  # import a.b.c of a package's attribute
                name = name.rpartition(".")[0]
            found |= {name} if name else set()
        return found
    base = node.module or ""
    if node.level:
        pkg = mod.split(".")[:None if path.name == "__init__.py" else -1]
        pkg = pkg[:len(pkg) - node.level + 1]
        base = ".".join(pkg + ([node.module] if node.module else []))
    found = set()
    for alias in node.names:
        sub = f"{base}.{alias.name}"
        found |= {sub} if sub in known else {base} if base in known else set()
    return found


def import_graph(root: Path) -> nx.DiGraph:
    """Module -> modules it imports (each edge with the lines), at every level."""
    known = modules(root)
    g = nx.DiGraph()
    g.add_nodes_from(known)
    for mod, path in known.items():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for dep in _imported(mod, path, node, known) - {mod}:
                    g.add_edge(mod, dep)
                    g.edges[mod, dep].setdefault("lines", []).append(node.lineno)
    return g


def circles(g: nx.DiGraph) -> list[str]:
    """Each circle, as its modules with the line of each import that closes it."""
    out = []
    for comp in nx.strongly_connected_components(g):
        if len(comp) > 1:
            cycle = nx.find_cycle(g.subgraph(comp))
            out.append(" -> ".join(f"{a} (line {g.edges[a, b]['lines'][0]})"
                                   for a, b in cycle) + f" -> {cycle[0][0]}")
    return sorted(out)


def cli_importers(g: nx.DiGraph) -> list[str]:
    return sorted(m for m in g.predecessors("osf_check.cli") if m not in CLI_ENTRIES) \
        if "osf_check.cli" in g else []


def test_no_module_is_part_of_an_import_circle():
    found = circles(import_graph(ROOT))
    assert not found, "import circles (break each by moving what both sides need into a " \
        "module of its own):\n" + "\n".join(found)


@pytest.mark.slow
def test_the_library_never_imports_the_command_line():
    assert not cli_importers(import_graph(ROOT)), (
        "only the command line imports osf_check.cli; move what these need into the "
        f"library: {cli_importers(import_graph(ROOT))}")


def test_the_graph_sees_the_rooms_and_their_relative_imports():
    """The walk reads every room under its import name, and resolves ``from . import``."""
    g = import_graph(ROOT)
    assert {"osf_check.cli", "osf_check.models.dsl", "osf_check.explorer.vector.search",
            "osf_check.fuzz.driver", "osf_check.traces.format",
            "osf_check.properties.catalogue"} <= set(g)
    assert g.has_edge("osf_check.cli", "osf_check.report")  # from . import report
    assert g.has_edge("osf_check.models.wire_relay.phone", "osf_check.models.wire_relay.relay")


def _project(tmp: Path, files: dict[str, str]) -> Path:
    (tmp / "pyproject.toml").write_text(
        '[tool.setuptools]\npackage-dir = {"osf_check" = "osf_check", '
        '"osf_check.models" = "models"}\n')
    for name, text in {"osf_check/__init__.py": "", "models/__init__.py": "", **files}.items():
        (tmp / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp / name).write_text(text)
    return tmp


def test_a_circle_through_a_function_level_import_is_found(tmp_path):
    root = _project(tmp_path, {
        "models/a.py": "from osf_check.models import b\n",
        "models/b.py": "def f():\n    from .a import g\n",
        "models/c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                       "    from osf_check.models.d import X\n",
        "models/d.py": "import osf_check.models.c\n"})
    found = circles(import_graph(root))
    assert len(found) == 2
    assert any("osf_check.models.a (line 1)" in c and "osf_check.models.b (line 2)" in c
               for c in found)


def test_a_library_module_importing_the_cli_is_found(tmp_path):
    root = _project(tmp_path, {
        "osf_check/cli.py": "from osf_check.models import lib\n",
        "osf_check/__main__.py": "from .cli import main\n",
        "models/lib.py": "def f():\n    from osf_check.cli import BAD_INPUT\n"})
    g = import_graph(root)
    assert cli_importers(g) == ["osf_check.models.lib"]
    assert circles(g)  # and it closes a circle with the CLI that imports it


def test_each_explorer_sub_package_states_its_one_interface():
    """A docstring saying what the sub-package is for, and ``__all__`` naming what the
    rest of the code imports from it, each name there."""
    import importlib
    for sub in ("compiled", "explicit", "graph", "store", "symbolic", "vector"):
        pkg = importlib.import_module(f"osf_check.explorer.{sub}")
        assert pkg.__doc__ and "to be documented" not in pkg.__doc__, sub
        assert pkg.__all__, sub
        missing = [n for n in pkg.__all__ if not hasattr(pkg, n)]
        assert not missing, (sub, missing)
