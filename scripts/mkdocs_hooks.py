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


def on_config(config):  # noqa: ANN001, ANN201 (MkDocs' hook signature)
    shutil.rmtree(TREE, ignore_errors=True)
    installed_layout(TREE)
    return config
