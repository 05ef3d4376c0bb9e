"""Certified polish of the block interior point's bound: exact duals per column.

Relaxing only the coupling rows (the row sums) with multipliers ``y`` leaves one small LP
per output column,

    φ_u(y) = min { (c_u − Eᵀy)ᵀ v :  G v ≤ 0,  0 ≤ v ≤ upper },

and ``Σ_i b_i y_i + Σ_u φ_u(y)`` is the Lagrangian dual function: a lower bound on the
optimum for any ``y``, the best bound any privacy-row duals ``z`` can give with these ``y``
(Lagrangian relaxation, [Bertsekas-NLP] §6.1). When the interior point stalls, its
privacy-row duals ``z`` (many, on nearly active rows) are often the inexact part; replacing
them by each column's exact duals gives the best bound its ``y`` allow (measured: maximal
leakage, k = 1,000, from a gap of 2e-9 to 4e-13; where the ``y`` themselves are the limit,
as for PML near its stall, the gain is small). This module solves every column's LP with
HiGHS's dual simplex — one model, only the costs change from column to column, each solve
warm-started from the previous basis — and returns each column's row duals ``z_u ≥ 0``. The
bound itself is recomputed by privopt from ``(y, z)``
(:func:`~privopt.methods.block_ipm.interior_point.solve_block_lp`), so it holds whatever
HiGHS's accuracy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from privopt.methods.base import Deadline

if TYPE_CHECKING:
    from privopt.methods.block_ipm.interior_point import BlockLP

__all__ = ["column_duals"]


def column_duals(
    lp: BlockLP, reduced_cost: np.ndarray, deadline: Deadline | None = None
) -> np.ndarray | None:
    """The optimal row duals of every column's LP (see the module docstring).

    Parameters
    ----------
    lp : BlockLP
        The block LP (its kernel's explicit rows,
        :meth:`~privopt.methods.block_ipm.kernels.ColumnKernel.column_rows`, and the
        variables' upper bounds).
    reduced_cost : numpy.ndarray
        ``U × n``: ``c_u − Eᵀy`` of every column.
    deadline : Deadline, optional
        Gives up (returns ``None``) when it passes.

    Returns
    -------
    numpy.ndarray or None
        ``U × m``: ``z_u ≥ 0`` for the kernel's rows; ``None`` if a column's LP did not
        solve to optimality or time ran out.
    """
    import highspy

    from privopt.methods._native import silence_highs_banner
    from privopt.methods.sparse_lp.assembly import LinearProgram
    from privopt.methods.sparse_lp.highs import highs_model

    deadline = deadline or Deadline()
    rows, equal = lp.kernel.column_rows()
    U, n = reduced_cost.shape
    m, width = rows.shape
    k = width - n
    A = rows if equal is None else sp.vstack([rows, equal])
    n_eq = 0 if equal is None else equal.shape[0]
    inf = np.inf
    model = LinearProgram(
        A=sp.csc_matrix(A),
        cost=np.zeros(width),
        col_lo=np.concatenate([np.zeros(n), np.full(k, -inf)]),
        col_hi=np.concatenate([np.asarray(lp.upper, dtype=float), np.full(k, inf)]),
        row_lo=np.concatenate([np.full(m, -inf), np.zeros(n_eq)]),
        row_hi=np.zeros(m + n_eq),
    )
    silence_highs_banner()
    h = highspy.Highs()
    for key, value in (
        ("output_flag", False),
        ("solver", "simplex"),
        ("presolve", "off"),
        ("primal_feasibility_tolerance", 1e-10),
        ("dual_feasibility_tolerance", 1e-10),
    ):
        h.setOptionValue(key, value)
    # no "threads" option: HiGHS refuses to run when it differs from its process-wide
    # scheduler's, set by whichever HiGHS run came first
    h.passModel(highs_model(model))
    index = np.arange(n, dtype=np.int32)
    Z = np.zeros((U, m))
    for u in range(U):
        if deadline.expired():
            return None
        remaining = deadline.remaining()
        if np.isfinite(remaining):
            h.setOptionValue("time_limit", float(max(remaining, 1e-3)))
        h.changeColsCost(n, index, np.ascontiguousarray(reduced_cost[u], dtype=float))
        h.run()
        if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            return None
        # HiGHS's duals of "≤ 0" rows in a minimisation are ≤ 0; z = −dual (clipped ≥ 0)
        Z[u] = np.maximum(-np.asarray(h.getSolution().row_dual)[:m], 0.0)
    return Z
