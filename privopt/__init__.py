"""privopt: optimal privacy mechanisms by convex optimisation.

Layers (a lower one never imports a higher one): :mod:`privopt.model` →
:mod:`privopt.validation` → :mod:`privopt.measures` → :mod:`privopt.notions` →
:mod:`privopt.request` → :mod:`privopt.methods` (the cvxpy program and the fast paths, one
interface) → :mod:`privopt.solve` (the one driver) → faces (:mod:`privopt.cli`,
:mod:`privopt.io.files`, :mod:`privopt.plotting`).

``import privopt`` is cheap: the public names below are imported on first use (PEP 562), so
that the command line can handle Ctrl-C before numpy, scipy and cvxpy load, and so that
``import privopt`` never pulls in matplotlib.
"""

from __future__ import annotations

__all__ = [
    "CertificateReport",
    "Comparison",
    "Curve",
    "DatabasePrior",
    "DesignRequest",
    "DesignResult",
    "Distortion",
    "InfeasibleError",
    "InputError",
    "TaskLostError",
    "JointPrior",
    "LaplaceComparison",
    "LaplaceCounting",
    "LocationGrid",
    "LocationPoints",
    "METHODS",
    "Mechanism",
    "Metric",
    "NeighborRelation",
    "OutputGrid",
    "PrivacyProblem",
    "Prior",
    "PrivoptError",
    "ResultList",
    "SolverError",
    "SolverRun",
    "Status",
    "VerificationError",
    "all_pairs",
    "build_problem",
    "closed_form_checks",
    "closed_forms",
    "compare",
    "compare_with_laplace",
    "counting",
    "counting_query_prior",
    "design",
    "disclosure",
    "f_information",
    "files",
    "gain",
    "get_notion",
    "guarantees",
    "hamming_neighbors",
    "leakage_report",
    "measures",
    "method_names",
    "methods",
    "notion_names",
    "paper_programs",
    "persuasive",
    "planar_laplace",
    "prepare_request",
    "query_distortion",
    "read_location_csv",
    "solve_many",
    "solve_problem",
    "sweep",
    "sweep_notions",
    "validation",
]

from privopt.errors import (
    InfeasibleError,
    InputError,
    PrivoptError,
    SolverError,
    TaskLostError,
    VerificationError,
)

__version__ = "0.1.0"

#: Public submodules: name → module.
_SUBMODULES = {
    "closed_forms": "privopt.papers.closed_forms",
    "measures": "privopt.measures",
    "closed_form_checks": "privopt.papers.closed_form_checks",
    "paper_programs": "privopt.papers.paper_programs",
    "f_information": "privopt.audit.f_information",
    "guarantees": "privopt.audit.guarantees",
    "gain": "privopt.audit.gain",
    "disclosure": "privopt.audit.disclosure",
    "counting": "privopt.audit.counting",
    "persuasive": "privopt.audit.persuasive",
    "methods": "privopt.methods",
    "validation": "privopt.validation",
    "files": "privopt.io.files",
    "batch_files": "privopt.io.batch_files",
}
#: Public names, by the module that defines them.
_NAMES_FROM = {
    "privopt.audit.counting": ("LaplaceCounting", "counting_query_prior"),
    "privopt.comparison": ("compare", "Comparison"),
    "privopt.methods.cvxpy_program": ("PrivacyProblem", "build_problem"),
    "privopt.methods": ("METHODS", "method_names"),
    "privopt.request": ("DesignRequest", "prepare_request"),
    "privopt.status": ("Status",),
    "privopt.solve": (
        "CertificateReport",
        "SolverRun",
        "Curve",
        "DesignResult",
        "ResultList",
        "design",
        "leakage_report",
        "solve_problem",
        "sweep",
        "solve_many",
        "sweep_notions",
    ),
    "privopt.model": (
        "DatabasePrior",
        "Distortion",
        "JointPrior",
        "Mechanism",
        "NeighborRelation",
        "Metric",
        "Prior",
        "all_pairs",
        "hamming_neighbors",
    ),
    "privopt.model.location": ("LocationGrid", "LocationPoints", "OutputGrid"),
    "privopt.model.location_csv": ("read_location_csv",),
    "privopt.model.planar_laplace": ("planar_laplace",),
    "privopt.solve.location": ("compare_with_laplace", "LaplaceComparison"),
    "privopt.model.queries": ("query_distortion",),
    "privopt.notions": ("get_notion", "notion_names"),
}
#: Public name → (the module that defines it, the attribute; ``None``: the module itself).
_LAZY: dict[str, tuple[str, str | None]] = {
    **{name: (module, None) for name, module in _SUBMODULES.items()},
    **{name: (module, name) for module, names in _NAMES_FROM.items() for name in names},
}

# typing.TYPE_CHECKING without importing typing (it would cost start-up time, see _entry.py)
TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs
    from typing import Any

    from privopt import measures, methods, validation
    from privopt.audit import counting, disclosure, f_information, gain, guarantees, persuasive
    from privopt.audit.counting import LaplaceCounting, counting_query_prior
    from privopt.comparison import Comparison, compare
    from privopt.io import files
    from privopt.methods import METHODS, method_names
    from privopt.methods.cvxpy_program import PrivacyProblem, build_problem
    from privopt.model import (
        DatabasePrior,
        Distortion,
        JointPrior,
        Mechanism,
        Metric,
        NeighborRelation,
        Prior,
        all_pairs,
        hamming_neighbors,
    )
    from privopt.model.location import LocationGrid, LocationPoints, OutputGrid
    from privopt.model.location_csv import read_location_csv
    from privopt.model.planar_laplace import planar_laplace
    from privopt.model.queries import query_distortion
    from privopt.notions import get_notion, notion_names
    from privopt.papers import closed_forms, paper_programs
    from privopt.request import DesignRequest, prepare_request
    from privopt.solve import (
        CertificateReport,
        Curve,
        DesignResult,
        ResultList,
        SolverRun,
        design,
        leakage_report,
        solve_many,
        solve_problem,
        sweep,
        sweep_notions,
    )
    from privopt.solve.location import LaplaceComparison, compare_with_laplace
    from privopt.status import Status
del TYPE_CHECKING, annotations  # not public names (``from __future__`` binds ``annotations``)


def __getattr__(name: str) -> Any:
    """Import a public name on first use (PEP 562).

    Parameters
    ----------
    name : str
        The attribute asked for.

    Returns
    -------
    object
        The class, function or submodule.

    Raises
    ------
    AttributeError
        If ``name`` is not a public name of privopt.
    """
    try:
        module_name, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'privopt' has no attribute {name!r}") from None
    from importlib import import_module  # loaded with the interpreter: no start-up cost

    module = import_module(module_name)
    value = module if attr is None else getattr(module, attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The public names, loaded or not (and the module's dunder attributes).

    Returns
    -------
    list of str
    """
    dunders = {n for n in globals() if n.startswith("__") and n.endswith("__")}
    return sorted(set(__all__) | set(_LAZY) | {"errors"} | dunders)
