"""privopt: optimal privacy mechanisms by convex optimisation.

Layers (lower never imports higher): :mod:`privopt.model` → :mod:`privopt.measures` →
:mod:`privopt.notions` → :mod:`privopt.builder` → :mod:`privopt.solve` → faces
(:mod:`privopt.cli`, :mod:`privopt.files`, :mod:`privopt.plotting`).
"""

from privopt import closed_forms, measures
from privopt.builder import PrivacyProblem, build_problem
from privopt.errors import (
    InfeasibleError,
    InputError,
    PrivoptError,
    SolverError,
    VerificationError,
)
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
from privopt.solve import Curve, DesignResult, design, leakage_report, solve_problem, sweep

__version__ = "0.1.0"

__all__ = [
    "Curve",
    "DatabasePrior",
    "DesignResult",
    "PrivacyProblem",
    "build_problem",
    "design",
    "get_notion",
    "leakage_report",
    "notion_names",
    "solve_problem",
    "sweep",
    "Distortion",
    "InfeasibleError",
    "InputError",
    "JointPrior",
    "Mechanism",
    "NeighborRelation",
    "Prior",
    "PrivoptError",
    "SolverError",
    "VerificationError",
    "all_pairs",
    "closed_forms",
    "hamming_neighbors",
    "measures",
]
