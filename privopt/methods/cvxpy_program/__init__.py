"""The papers' convex programs in cvxpy, one method per installed cvxpy solver."""

from privopt.methods.cvxpy_program.method import CVXPY_CHAINS, CvxpyMethod
from privopt.methods.cvxpy_program.program import PrivacyProblem, build_problem

__all__ = ["CVXPY_CHAINS", "CvxpyMethod", "PrivacyProblem", "build_problem"]
