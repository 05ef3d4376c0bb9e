"""Assembly of the sparse LP: ``min cᵀx`` s.t. ``row_lo ≤ A x ≤ row_hi``, ``col_lo ≤ x ≤ col_hi``.

The variables are the mechanism entries ``W[i,u]`` (at ``i·U + u``, rows on the prior's
support) followed by the auxiliary variables of the notion's encoding. The objective is
``E[d] = Σ_x p(x) Σ_u W[x,u] d(x,u)`` (Wang, Ying & Zhang 2016, eq. (14); Calmon & Fawaz
2012, eq. (15)); each notion's rows come from its encoding
(:mod:`privopt.methods.sparse_lp.encodings`). The matrix is collected block by block as COO
triplets and converted once to CSC.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

__all__ = ["LinearProgram", "RowBuilder"]


@dataclass
class LinearProgram:
    """``min cᵀx`` s.t. ``row_lo ≤ A x ≤ row_hi``, ``col_lo ≤ x ≤ col_hi`` (A in CSC)."""

    A: sp.csc_matrix
    cost: np.ndarray
    col_lo: np.ndarray
    col_hi: np.ndarray
    row_lo: np.ndarray
    row_hi: np.ndarray

    def residual(self, x: np.ndarray) -> float:
        """The largest bound or row violation of ``x``."""
        act = self.A @ x
        viol = [
            np.max(self.row_lo - act, initial=0.0),
            np.max(act - self.row_hi, initial=0.0),
            np.max(self.col_lo - x, initial=0.0),
            np.max(x - self.col_hi, initial=0.0),
        ]
        return float(max(viol))

    def dual_objective(self, row_dual: np.ndarray, col_dual: np.ndarray) -> float:
        """``Σ_rows y·(bound hit) + Σ_cols r·(bound hit)`` with HiGHS's sign conventions."""
        val = 0.0
        for dual, lo, hi in (
            (row_dual, self.row_lo, self.row_hi),
            (col_dual, self.col_lo, self.col_hi),
        ):
            pos = dual > 0
            neg = dual < 0
            lo_f = np.where(np.isfinite(lo), lo, 0.0)
            hi_f = np.where(np.isfinite(hi), hi, 0.0)
            val += float(np.dot(dual[pos], lo_f[pos]) + np.dot(dual[neg], hi_f[neg]))
        return val


class RowBuilder:
    """Collects the LP's rows as COO triplets, block by block.

    Parameters
    ----------
    n_cols : int
        The number of variables.
    """

    def __init__(self, n_cols: int):
        self.n_cols = n_cols
        self.rows: list[np.ndarray] = []
        self.cols: list[np.ndarray] = []
        self.vals: list[np.ndarray] = []
        self.lo: list[np.ndarray] = []
        self.hi: list[np.ndarray] = []
        self.n_rows = 0

    def block(self, n_rows: int, entries, lo, hi) -> None:
        """Add ``n_rows`` rows; ``entries`` is a list of (local row, column, value) arrays."""
        for r, c, v in entries:
            r = np.asarray(r, dtype=np.int64)
            self.rows.append(r + self.n_rows)
            self.cols.append(np.asarray(c, dtype=np.int64))
            self.vals.append(np.broadcast_to(np.asarray(v, dtype=float), r.shape).copy())
        self.lo.append(np.broadcast_to(np.asarray(lo, dtype=float), (n_rows,)).copy())
        self.hi.append(np.broadcast_to(np.asarray(hi, dtype=float), (n_rows,)).copy())
        self.n_rows += n_rows

    def program(self, cost: np.ndarray, col_lo: np.ndarray, col_hi: np.ndarray) -> LinearProgram:
        """The assembled :class:`LinearProgram`."""
        A = sp.coo_matrix(
            (np.concatenate(self.vals), (np.concatenate(self.rows), np.concatenate(self.cols))),
            shape=(self.n_rows, self.n_cols),
        ).tocsc()
        A.sum_duplicates()
        return LinearProgram(
            A, cost, col_lo, col_hi, np.concatenate(self.lo), np.concatenate(self.hi)
        )
