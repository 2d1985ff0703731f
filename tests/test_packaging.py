"""The wheel installs one import package, ``osf_check``, and lives next to packages named
``traces`` and ``models`` (both are names of other projects) without touching them."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
import textwrap
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _pip(*args: str, cwd: Path | None = None) -> None:
    r = subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", *args],
                       capture_output=True, text=True, cwd=cwd)
    assert r.returncode == 0, r.stdout + r.stderr


def _clone(dest: Path) -> Path:
    """The tracked files only (what a clean clone builds from)."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                           check=True).stdout.decode().split("\0")
    for f in filter(None, files):
        if (ROOT / f).is_file():
            (dest / f).parent.mkdir(parents=True, exist_ok=True)
            (dest / f).write_bytes((ROOT / f).read_bytes())
    return dest


def _other_project(where: Path, name: str) -> Path:
    """A tiny project whose import name is ``name``."""
    (where / name).mkdir(parents=True)
    (where / name / "__init__.py").write_text(f"WHO = 'the other {name}'\n")
    (where / "pyproject.toml").write_text(textwrap.dedent(f"""\
        [build-system]
        requires = ["setuptools>=68"]
        build-backend = "setuptools.build_meta"
        [project]
        name = "other-{name}"
        version = "1.0"
        [tool.setuptools]
        packages = ["{name}"]
        """))
    return where


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    src = _clone(tmp_path_factory.mktemp("clone"))
    out = tmp_path_factory.mktemp("wheels")
    _pip("wheel", "--no-deps", "--no-build-isolation", "--no-index", "-w", str(out), str(src))
    [whl] = out.glob("osf_check-*.whl")
    return whl


def test_the_wheel_has_one_top_level_name(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/")[0] for n in names}
    assert {t for t in top if not t.endswith(".dist-info")} == {"osf_check"}
    assert "osf_check/traces/trace.schema.json" in names
    assert "osf_check/schema/result.schema.json" in names
    record = next(n for n in names if n.endswith("top_level.txt")) if any(
        n.endswith("top_level.txt") for n in names) else None
    if record:
        assert zipfile.ZipFile(wheel).read(record).decode().split() == ["osf_check"]


@pytest.mark.slow
def test_installed_next_to_traces_and_models_both_keep_working(wheel, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = venv / "bin" / "python"
    site = next((venv / "lib").glob("python*/site-packages"))
    # the dependencies come from this environment, through a plain path entry (so its own
    # editable install of osf-check is not seen)
    (site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    for name in ("traces", "models"):
        _pip("--python", str(py), "install", "--no-deps", "--no-index", "--no-build-isolation",
             str(_other_project(tmp_path / f"other-{name}", name)))
    _pip("--python", str(py), "install", "--no-deps", "--no-index", str(wheel))

    def run(code: str, cwd: Path = tmp_path) -> str:
        r = subprocess.run([str(py), "-c", code], capture_output=True, text=True, cwd=cwd)
        assert r.returncode == 0, r.stderr
        return r.stdout.strip()

    assert run("import traces, models; print(traces.WHO, '|', models.WHO)") == \
        "the other traces | the other models"
    assert run("import osf_check; print(osf_check.__file__)").startswith(str(site))
    # a directory with its own models/ package does not break the command line
    (tmp_path / "work" / "models").mkdir(parents=True)
    (tmp_path / "work" / "models" / "__init__.py").write_text("")
    r = subprocess.run([str(py), "-m", "osf_check.cli", "list"], capture_output=True,
                       text=True, cwd=tmp_path / "work")
    assert r.returncode == 0 and "model graph-relay" in r.stdout, r.stderr
    _pip("--python", str(py), "uninstall", "-y", "osf-check")
    assert run("import traces, models; print(traces.WHO, '|', models.WHO)") == \
        "the other traces | the other models"
