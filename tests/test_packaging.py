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


@pytest.mark.slow
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


ROOMS = ("models", "properties", "explorer", "fuzz", "traces")


def _listed() -> tuple[dict, list]:
    import tomllib
    setup = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    return setup["package-dir"], setup["packages"]


def test_the_brief_s_rooms_stand_at_the_top_and_every_package_is_listed():
    mapping, packages = _listed()
    assert mapping == {"osf_check": "osf_check", **{f"osf_check.{r}": r for r in ROOMS}}
    on_disk = set()
    for name, folder in mapping.items():
        assert (ROOT / folder / "__init__.py").is_file(), folder
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder).parts
            on_disk.add(".".join((name, *rel)))
    # a package missing from the list would be left out of the wheel silently
    assert sorted(on_disk) == sorted(packages)


@pytest.mark.slow
def test_every_module_of_the_wheel_imports_under_the_one_name(wheel, tmp_path):
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    modules = sorted(n[:-3].replace("/", ".").removesuffix(".__init__")
                     for n in zipfile.ZipFile(wheel).namelist() if n.endswith(".py"))
    assert all(m.startswith("osf_check") for m in modules)
    for room in ROOMS:
        assert any(m.startswith(f"osf_check.{room}.") for m in modules), room
    code = ("import importlib, sys\n"
            f"for m in {modules!r}:\n"
            "    mod = importlib.import_module(m)\n"
            f"    assert mod.__file__.startswith({str(site)!r}), (m, mod.__file__)\n"
            "print(len([m for m in sys.modules if m.split('.')[0] in "
            f"{set(ROOMS)!r}]))\n")
    # run from an empty folder, so that the clone's own top-level rooms are not on the path
    r = subprocess.run([sys.executable, "-S", "-c",
                        f"import sys; sys.path[:0] = [{str(site)!r}, "
                        f"*{[p for p in sys.path if 'site-packages' in p]!r}]\n" + code],
                       capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "0"  # nothing was imported as a bare `models`, `fuzz` …
