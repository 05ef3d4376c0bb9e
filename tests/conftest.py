"""The test suite's layout: one folder per layer of the package (``model``, ``measures``,
``notions``, ``methods``, ``solve``, ``faces``) and ``repository`` for the checks of the
repository itself (docs, layering, imports, benchmarks' harnesses); ``crosscheck`` holds the
independent programs the tests compare with.

Each test is marked with its folder's name, so that ``python -m pytest -m methods`` runs one
layer (``-m "not slow"`` still selects as in CI).
"""

from __future__ import annotations

from pathlib import Path

import pytest

#: The repository's root (problem files, docs, notebooks and benchmarks live there).
ROOT = Path(__file__).resolve().parents[1]
#: The folders of the suite, one per layer.
LAYERS = ("model", "measures", "notions", "methods", "solve", "faces", "repository")


def pytest_configure(config: pytest.Config) -> None:
    for layer in LAYERS:
        config.addinivalue_line("markers", f"{layer}: the tests of tests/{layer}/")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    tests = Path(__file__).resolve().parent
    for item in items:
        try:
            folder = Path(str(item.fspath)).resolve().relative_to(tests).parts[0]
        except ValueError:  # pragma: no cover - a test outside tests/
            continue
        if folder in LAYERS:
            item.add_marker(getattr(pytest.mark, folder))


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The repository's root folder.

    Returns
    -------
    pathlib.Path
    """
    return ROOT
