"""The package's layering: a lower layer never imports a higher one.

Every ``import`` of every module under ``privopt/`` is read from its source (module level,
inside functions and under ``TYPE_CHECKING`` alike) and checked against the layers of the
"Layout" table of docs/architecture.md. Modules of one layer may import each other.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "privopt"

#: Layer of each top-level module or subpackage of ``privopt`` (low to high).
LAYERS = {
    "errors": 0,
    "resources": 0,
    "status": 0,
    "_io": 0,
    "_frames": 0,
    "_docstrings": 0,
    "model": 1,
    "validation": 2,
    "measures": 3,
    # beside the measures: numpy-only quantities and the papers' closed forms
    "audit": 4,
    "papers.closed_forms": 4,
    "papers.closed_form_checks": 4,
    "notions": 5,
    "request": 6,
    "methods": 7,
    "papers.paper_programs": 7,
    "papers": 7,
    "solve": 8,
    # the faces
    "io": 9,
    "plotting": 9,
    "comparison": 9,
    "testing": 9,
    "cli": 9,
    "_entry": 9,
    "__main__": 9,
    "__init__": 10,
}

#: (importing module, imported module) pairs allowed against the order, and why.
EXCEPTIONS = {
    # ``CurveResult.plot()`` forwards to the plotting face when it is called (as
    # ``pandas.DataFrame.plot`` does), never at import time
    ("privopt.solve.results", "privopt.plotting"),
    # ``privopt --version`` reads the package's ``__version__``
    ("privopt.cli.parser", "privopt"),
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _layer(module: str) -> int:
    parts = module.split(".")
    if len(parts) == 1:
        return LAYERS["__init__"]
    # a folder may hold modules of different layers (papers/: the closed forms beside the
    # measures, the papers' programs beside the methods)
    return LAYERS.get(".".join(parts[1:3]), LAYERS[parts[1]])


def _imports(path: Path) -> set[str]:
    """The ``privopt`` modules imported anywhere in ``path`` (``from privopt import x``
    counts as ``privopt.x`` when ``x`` is a module)."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "privopt")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "privopt":
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                as_path = PACKAGE.parent / Path(*sub.split("."))
                if as_path.with_suffix(".py").exists() or (as_path / "__init__.py").exists():
                    found.add(sub)
                else:
                    found.add(target)
    return found


MODULES = sorted(PACKAGE.rglob("*.py"))


def test_every_top_level_module_has_a_layer():
    names = {p.relative_to(PACKAGE).parts[0].removesuffix(".py") for p in MODULES}
    assert names - {"data"} <= set(LAYERS), sorted(names - set(LAYERS))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_imports_a_higher_layer(path):
    module = _module_name(path)
    higher = sorted(
        target
        for target in _imports(path)
        if _layer(target) > _layer(module) and (module, target) not in EXCEPTIONS
    )
    assert not higher, f"{module} (layer {_layer(module)}) imports {higher}"


def test_the_exceptions_are_still_needed():
    """An exception nobody uses any more is removed from the list."""
    used = {
        (_module_name(path), target)
        for path in MODULES
        for target in _imports(path)
        if (_module_name(path), target) in EXCEPTIONS
    }
    assert used == EXCEPTIONS


def test_the_architecture_page_names_every_layer():
    """docs/architecture.md's "Layout" table, the reference for readers, names every top-level
    module and subpackage that ``LAYERS`` places."""
    page = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    table = page.split("## Layout", 1)[1].split("\n## ", 1)[0]
    names = sorted(set(LAYERS) - {"__init__", "__main__"})
    paths = [n.replace(".", "/") for n in names]
    unnamed = [n for n in paths if f"{n}.py`" not in table and f"{n}/`" not in table]
    assert not unnamed, unnamed


def _cycles(modules: dict[str, set[str]]) -> list[list[str]]:
    """Every import cycle among ``modules`` (module → the modules it imports), as paths."""
    found: list[list[str]] = []
    state: dict[str, int] = {}

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        path.append(module)
        for other in sorted(modules[module]):
            if state.get(other) == 1:
                found.append(path[path.index(other) :] + [other])
            elif other not in state:
                visit(other, path)
        path.pop()
        state[module] = 2

    for module in sorted(modules):
        if module not in state:
            visit(module, [])
    return found


def test_the_solve_driver_has_no_import_cycle():
    """Inside ``privopt.solve`` no module imports another that imports it back, at module
    level or inside a function (the settings, the run, the point, the line search, the
    driver, the sweeps and the executors depend one way)."""
    solve = {_module_name(path): path for path in (PACKAGE / "solve").glob("*.py")}
    graph = {
        name: {m for m in _imports(path) if m in solve and m != name}
        for name, path in solve.items()
    }
    graph.pop("privopt.solve", None)  # the package's __init__ re-exports its modules
    graph = {name: {m for m in deps if m != "privopt.solve"} for name, deps in graph.items()}
    assert _cycles(graph) == []
    # the check finds a cycle where there is one
    assert _cycles({"a": {"b"}, "b": {"a"}}) == [["a", "b", "a"]]
