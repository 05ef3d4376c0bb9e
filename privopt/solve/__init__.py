"""The solve layer: one driver for every method (modes, line search, verification,
certificates, fallback, time limits) and the entry points :func:`design`,
:func:`solve_problem` and :func:`sweep`."""

from privopt.solve.api import design, solve_problem, sweep
from privopt.solve.batch import solve_many, sweep_notions
from privopt.solve.results import (
    Attempt,
    CertificateReport,
    Curve,
    DesignResult,
    LeakageReport,
    LineSearchInfo,
    ResultList,
    SolverRun,
    leakage_report,
)
from privopt.solve.selection import applicable_methods, choose_methods

__all__ = [
    "Attempt",
    "CertificateReport",
    "Curve",
    "DesignResult",
    "LeakageReport",
    "LineSearchInfo",
    "ResultList",
    "SolverRun",
    "applicable_methods",
    "choose_methods",
    "design",
    "leakage_report",
    "solve_many",
    "solve_problem",
    "sweep",
    "sweep_notions",
]
