"""The cvxpy program's dual values as a dual point for certified curves
(:mod:`privopt.methods.multipliers`)."""

from __future__ import annotations

__all__ = ["program_multipliers"]

import numpy as np

from privopt.methods.cvxpy_program.program import PrivacyProblem
from privopt.methods.multipliers import Multipliers
from privopt.notions.base import dual_array


def program_multipliers(
    pp: PrivacyProblem, method: str, *, epsilon: float | None, budget: float | None
) -> Multipliers | None:
    """The solved program's multipliers in the notion's form.

    Parameters
    ----------
    pp : PrivacyProblem
        Solved (its constraints hold the solver's dual values).
    method : str
        The method that solved it.
    epsilon, budget : float or None
        The point (one of the two).

    Returns
    -------
    Multipliers or None
        ``None`` when the program has added constraints (their terms are not the notion's)
        or extra budgets, or no solution.
    """
    if pp.W.value is None or pp.user_constraints or pp.extra_distortions:
        return None
    prior = pp.prior
    support = prior.secret_support
    W = np.clip(np.asarray(pp.W.value, dtype=float), 0.0, None)
    W /= np.maximum(W.sum(axis=1, keepdims=True), 1e-300)
    duals = tuple(
        None if con.dual_value is None else np.array(con.dual_value, dtype=float)
        for con in pp.notion_constraints
    )
    nu = None
    if budget is not None:
        if pp.budget_constraint is None:
            return None
        nu = float(dual_array(pp.budget_constraint.dual_value, ()))
    rows = pp.row_constraint.dual_value
    return Multipliers(
        method=method,
        epsilon=epsilon,
        budget=budget,
        duals=duals,
        distortion=pp.distortion.matrix,
        channel=prior.induced_channel(W)[support],
        budget_multiplier=nu,
        row_duals=None if rows is None else np.array(rows, dtype=float),
    )
