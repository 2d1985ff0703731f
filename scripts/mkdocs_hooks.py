"""MkDocs hook: lay the package out as installed before the API pages are read.

The rooms of the repository (``models/``, ``explorer/`` ...) are mapped under
``osf_check`` by setuptools' ``package-dir``, which griffe (mkdocstrings' reader) cannot
follow; so the build reads a copy of the package in its installed layout,
``build/api-src/osf_check``, named by the Python handler's ``paths`` in ``mkdocs.yml``.
(A copy, not links: griffe resolves a link to the file it names, and looks for the
submodules beside that.)
"""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TREE = ROOT / "build" / "api-src"


def installed_layout(dest: Path) -> None:
    """Copy the package's sources under ``dest`` as the wheel lays them out."""
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    dirs = conf["tool"]["setuptools"]["package-dir"]
    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(ROOT / dirs["osf_check"], dest / "osf_check", ignore=skip)
    for name, src in dirs.items():
        if "." in name:
            shutil.copytree(ROOT / src, dest / name.replace(".", "/"), ignore=skip)


def _fresh_tree() -> None:
    shutil.rmtree(TREE, ignore_errors=True)
    installed_layout(TREE)


# made when MkDocs loads this hook, while it reads mkdocs.yml: mkdocstrings keeps only the
# `paths` that exist when it reads its own configuration, which comes before any hook's
# on_config (a first build in a fresh clone could not find the package otherwise)
_fresh_tree()


def on_config(config):  # noqa: ANN001, ANN201 (MkDocs' hook signature)
    _fresh_tree()  # again: `mkdocs serve` reloads the configuration after an edit
    return config
