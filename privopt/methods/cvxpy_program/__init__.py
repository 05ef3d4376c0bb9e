"""The papers' convex programs in cvxpy, one method per installed cvxpy solver.

Importing the package registers the methods without importing cvxpy; :class:`PrivacyProblem`
and :func:`build_problem`, which need it, are imported on first use.
"""

from typing import TYPE_CHECKING

from privopt.methods.base import deferred_exports
from privopt.methods.cvxpy_program.method import CVXPY_CHAINS, CvxpyMethod

if TYPE_CHECKING:  # pragma: no cover
    from privopt.methods.cvxpy_program.program import PrivacyProblem, build_problem

__all__ = ["CVXPY_CHAINS", "CvxpyMethod", "PrivacyProblem", "build_problem"]

__getattr__ = deferred_exports(__name__, {"PrivacyProblem": "program", "build_problem": "program"})
