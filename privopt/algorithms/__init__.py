"""Specialised algorithms ("fast paths") that beat generic cvxpy solves by using structure.

Each algorithm lives in one module and registers an :class:`~privopt.algorithms.base.Algorithm`
in :data:`ALGORITHMS`. The solver layer (:mod:`privopt.solve`) picks one when it applies (or
when asked for by name) and verifies its answer like any other.

This package may import :mod:`privopt.model`, :mod:`privopt.measures` and
:mod:`privopt.closed_forms`, never the builder or the solver layer.
"""

from privopt.algorithms import (  # noqa: F401  (importing a module registers its algorithms)
    blahut_arimoto,
    sparse_lp,
    symmetric,
)
from privopt.algorithms.base import ALGORITHMS, Algorithm, AlgorithmResult, register

__all__ = ["ALGORITHMS", "Algorithm", "AlgorithmResult", "register"]
