"""Type-check the public API with mypy: ``osf_check`` (its ``__init__``), ``osf_check.api``
and the DSL, ``osf_check.models.dsl``, ``osf_check.models.expr`` and
``osf_check.models.structured``.

    python scripts/typecheck.py        # exit 0 when mypy finds nothing

The rooms of the repository (``models/``, ``explorer/`` ...) are mapped under ``osf_check``
by setuptools' ``package-dir``, which mypy cannot read (nor the editable install's import
hook); so the package is laid out as installed, a tree of links in a temporary directory,
and mypy checks that.  Its settings are ``[tool.mypy]`` in ``pyproject.toml``.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODULES = ("osf_check", "osf_check.api", "osf_check.models.dsl", "osf_check.models.expr",
           "osf_check.models.structured")


def link_tree(dest: Path) -> Path:
    """The installed layout of the package under ``dest``, as links into the clone."""
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    dirs = conf["tool"]["setuptools"]["package-dir"]
    pkg = dest / "osf_check"
    pkg.mkdir()
    mapped = {name.split(".")[1]: ROOT / src for name, src in dirs.items() if "." in name}
    for entry in (ROOT / dirs["osf_check"]).iterdir():
        if entry.name not in mapped and entry.name != "__pycache__":
            (pkg / entry.name).symlink_to(entry)
    for name, src in mapped.items():
        (pkg / name).symlink_to(src)
    return dest


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="osf-typecheck-") as tmp:
        link_tree(Path(tmp))
        cmd = [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml")]
        for m in MODULES:
            cmd += ["-m", m]
        return subprocess.run(cmd, cwd=tmp).returncode


if __name__ == "__main__":
    sys.exit(main())
