"""Shared encoding of ratio constraints ``M[x,u] ≤ c · M[x',u]`` over a neighbour relation."""

from __future__ import annotations

import cvxpy as cp
import numpy as np

from privopt.model import NeighborRelation


def ratio_constraints(
    matrix: cp.Expression, level: cp.Parameter, neighbors: NeighborRelation
) -> list[cp.Constraint]:
    """``matrix[x,u] ≤ level · matrix[x',u]`` for every pair ``x ~ x'`` and every column.

    For the relation "all pairs" this is ``max_x M[x,u] ≤ c · min_x M[x,u]``, written with one
    auxiliary variable per column (``O(|X||U|)`` rows instead of ``O(|X|²|U|)``). Otherwise one
    vectorised constraint over the pair list (never a Python loop over scalar constraints).
    """
    n_rows, n_cols = matrix.shape
    if neighbors.n_pairs == 0:
        return []
    if neighbors.kind == "all":
        low = cp.Variable((1, n_cols), nonneg=True, name="column_min")
        rows = np.ones((n_rows, 1)) @ low
        return [rows <= matrix, matrix <= level * rows]
    return [matrix[neighbors.left, :] <= level * matrix[neighbors.right, :]]
