"""privopt: optimal privacy mechanisms by convex optimisation.

Layers (a lower one never imports a higher one): :mod:`privopt.model` →
:mod:`privopt.validation` → :mod:`privopt.measures` → :mod:`privopt.notions` →
:mod:`privopt.request` → :mod:`privopt.methods` (the cvxpy program and the fast paths, one
interface) → :mod:`privopt.solve` (the one driver) → faces (:mod:`privopt.cli`,
:mod:`privopt.files`, :mod:`privopt.plotting`).
"""

from privopt import closed_forms, measures
from privopt.errors import (
    InfeasibleError,
    InputError,
    PrivoptError,
    SolverError,
    VerificationError,
)
from privopt.methods import METHODS, method_names
from privopt.methods.cvxpy_program import PrivacyProblem, build_problem
from privopt.model import (
    DatabasePrior,
    Distortion,
    JointPrior,
    Mechanism,
    NeighborRelation,
    Prior,
    all_pairs,
    hamming_neighbors,
)
from privopt.notions import get_notion, notion_names
from privopt.request import DesignRequest, prepare_request
from privopt.solve import (
    CertificateReport,
    Curve,
    DesignResult,
    SolverRun,
    design,
    leakage_report,
    solve_problem,
    sweep,
)
from privopt.status import Status

__version__ = "0.1.0"

__all__ = [
    "CertificateReport",
    "Curve",
    "DatabasePrior",
    "DesignRequest",
    "DesignResult",
    "Distortion",
    "InfeasibleError",
    "InputError",
    "JointPrior",
    "METHODS",
    "Mechanism",
    "NeighborRelation",
    "PrivacyProblem",
    "Prior",
    "PrivoptError",
    "SolverError",
    "SolverRun",
    "Status",
    "VerificationError",
    "all_pairs",
    "build_problem",
    "closed_forms",
    "design",
    "get_notion",
    "hamming_neighbors",
    "leakage_report",
    "measures",
    "method_names",
    "notion_names",
    "prepare_request",
    "solve_problem",
    "sweep",
]
