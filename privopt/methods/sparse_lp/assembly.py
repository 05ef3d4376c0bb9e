"""Assembly of the sparse LP: ``min cᵀx`` s.t. ``row_lo ≤ A x ≤ row_hi``, ``col_lo ≤ x ≤ col_hi``.

The variables are the mechanism entries ``W[i,u]`` (at ``i·U + u``, rows on the prior's
support) followed by the auxiliary variables of the notion's encoding. The objective is
``E[d] = Σ_x p(x) Σ_u W[x,u] d(x,u)`` (Wang, Ying & Zhang 2016, eq. (14); Calmon & Fawaz
2012, eq. (15)); each notion's rows come from its encoding
(:mod:`privopt.methods.sparse_lp.encodings`). The matrix is collected block by block as COO
triplets and converted once to CSC.
"""

from __future__ import annotations

__all__ = ["LinearProgram", "RowBuilder"]

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

if TYPE_CHECKING:
    from collections.abc import Iterable

    from numpy.typing import ArrayLike


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
        """The largest bound or row violation of ``x``.

        Parameters
        ----------
        x : numpy.ndarray
            A point, shape ``(n_cols,)``.

        Returns
        -------
        float
            ``max`` of the row and column bound violations (``0.0`` when ``x`` is feasible).
        """
        act = self.A @ x
        viol = [
            np.max(self.row_lo - act, initial=0.0),
            np.max(act - self.row_hi, initial=0.0),
            np.max(self.col_lo - x, initial=0.0),
            np.max(x - self.col_hi, initial=0.0),
        ]
        return float(max(viol))

    def lower_bound(self, row_dual: np.ndarray) -> float:
        """A rigorous lower bound on the LP's optimum from any row multipliers ``y``.

        Weak duality with the column bounds kept: a multiplier may only be positive on a row
        with a finite lower bound and negative on one with a finite upper bound (others are
        set to 0), and then for every feasible ``x``
        ``cᵀx ≥ Σ_i y_i b_i + min_{lo ≤ x ≤ hi} (c − Aᵀy)ᵀx``. Every column is boxed (the
        mechanism's entries and the auxiliary variables all lie in ``[0, 1]``), so the bound
        is finite for any ``y``, however inexact the solver's duals: their error weakens the
        bound, it never makes it wrong.

        Parameters
        ----------
        row_dual : numpy.ndarray
            The solver's row duals (HiGHS's convention: ``c − Aᵀy`` are the reduced costs).

        Returns
        -------
        float
            A lower bound on ``min cᵀx``.

        Raises
        ------
        ValueError
            A column bound is not finite.
        """
        y = np.asarray(row_dual, dtype=float).copy()
        y[(y > 0) & ~np.isfinite(self.row_lo)] = 0.0
        y[(y < 0) & ~np.isfinite(self.row_hi)] = 0.0
        side = np.where(y > 0, self.row_lo, self.row_hi)
        rows = float(np.dot(y[y != 0], side[y != 0]))
        reduced = self.cost - self.A.T @ y
        if not (np.isfinite(self.col_lo).all() and np.isfinite(self.col_hi).all()):
            raise ValueError("the lower bound needs every column boxed")
        cols = np.minimum(reduced * self.col_lo, reduced * self.col_hi).sum()
        return rows + float(cols)


class RowBuilder:
    """Collects the LP's rows as COO triplets, block by block.

    Parameters
    ----------
    n_cols : int
        The number of variables.
    """

    def __init__(self, n_cols: int) -> None:
        """Start with no rows; the parameters are the class's."""
        self.n_cols = n_cols
        self.rows: list[np.ndarray] = []
        self.cols: list[np.ndarray] = []
        self.vals: list[np.ndarray] = []
        self.lo: list[np.ndarray] = []
        self.hi: list[np.ndarray] = []
        self.n_rows = 0

    def block(
        self,
        n_rows: int,
        entries: Iterable[tuple[ArrayLike, ArrayLike, ArrayLike]],
        lo: ArrayLike,
        hi: ArrayLike,
    ) -> None:
        """Add ``n_rows`` rows; ``entries`` is a list of (local row, column, value) arrays.

        Parameters
        ----------
        n_rows : int
            Number of rows in the block.
        entries : iterable of (array_like, array_like, array_like)
            ``(r, c, v)``: local row indices in ``[0, n_rows)``, column indices and values
            (``v`` broadcast to the shape of ``r``); duplicates are summed.
        lo, hi : array_like
            Row bounds, scalars or shape ``(n_rows,)`` (``±inf`` for a one-sided row).
        """
        for r, c, v in entries:
            r = np.asarray(r, dtype=np.int64)
            self.rows.append(r + self.n_rows)
            self.cols.append(np.asarray(c, dtype=np.int64))
            self.vals.append(np.broadcast_to(np.asarray(v, dtype=float), r.shape).copy())
        self.lo.append(np.broadcast_to(np.asarray(lo, dtype=float), (n_rows,)).copy())
        self.hi.append(np.broadcast_to(np.asarray(hi, dtype=float), (n_rows,)).copy())
        self.n_rows += n_rows

    def program(self, cost: np.ndarray, col_lo: np.ndarray, col_hi: np.ndarray) -> LinearProgram:
        """The assembled :class:`LinearProgram`.

        Parameters
        ----------
        cost : numpy.ndarray
            Objective ``c``, shape ``(n_cols,)``.
        col_lo, col_hi : numpy.ndarray
            Variable bounds, shape ``(n_cols,)``.

        Returns
        -------
        LinearProgram
            The rows added so far, with ``A`` in CSC (duplicates summed).
        """
        A = sp.coo_matrix(
            (np.concatenate(self.vals), (np.concatenate(self.rows), np.concatenate(self.cols))),
            shape=(self.n_rows, self.n_cols),
        ).tocsc()
        A.sum_duplicates()
        return LinearProgram(
            A, cost, col_lo, col_hi, np.concatenate(self.lo), np.concatenate(self.hi)
        )
