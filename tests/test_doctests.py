"""Every docstring example of the library runs, once, under the module's installed name.

The rooms stand at the top of the repository (``models/``, ``explorer/`` …) and are
mapped under ``osf_check`` at install time, so pytest's own ``--doctest-modules`` would
import ``models/dsl.py`` as ``models.dsl`` from a clone. The examples are found here
instead by walking the installed package, so each runs as ``osf_check.models.dsl``.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import osf_check


ROOMS = ("models", "properties", "explorer", "fuzz", "traces")


def _modules() -> list[str]:
    # an editable install maps the rooms from elsewhere, so osf_check's own folder does not
    # list them: walk each room from its own path too (a wheel finds them twice: a set)
    names = {"osf_check"}
    roots = [osf_check] + [importlib.import_module(f"osf_check.{r}") for r in ROOMS]
    for root in roots:
        names.add(root.__name__)
        for info in pkgutil.walk_packages(root.__path__, root.__name__ + "."):
            names.add(info.name)
    return sorted(names)


def _with_examples() -> list[str]:
    finder = doctest.DocTestFinder()
    out = []
    for name in _modules():
        module = importlib.import_module(name)
        if any(t.examples for t in finder.find(module, name)):
            out.append(name)
    return out


MODULES = _with_examples()


def test_the_walk_sees_the_mapped_rooms():
    # a walk that missed the rooms mapped from the top of the repository would pass
    # vacuously: each room must contribute modules, and examples are found in them
    found = _modules()
    for room in ("models", "properties", "explorer", "fuzz", "traces"):
        assert any(n.startswith(f"osf_check.{room}.") for n in found), room
    assert any(n.startswith("osf_check.models.") for n in MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in doctest.DocTestFinder().find(module, name):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.attempted > 0
    assert result.failed == 0, f"{result.failed} example(s) of {name} failed (see above)"
