"""Neighbour relations for DP and identifiability, held sparsely.

A relation is stored as two integer arrays ``left``, ``right`` of ordered pairs (both
directions of every unordered pair), never as a dense N × N mask. The Hamming relation on
``Dⁿ`` (databases that differ in exactly one row, Wang et al. [004] §2) has
``mⁿ · n(m−1)`` ordered pairs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from privopt.errors import InputError
from privopt.model._validate import as_positive_int

__all__ = ["NeighborRelation", "hamming_neighbors", "all_pairs", "NEIGHBOR_KINDS"]

NEIGHBOR_KINDS = ("hamming", "all")


@dataclass(frozen=True)
class NeighborRelation:
    """A symmetric relation on ``size`` inputs, as ordered pairs ``(left[k], right[k])``.

    Attributes
    ----------
    size : int
        Number of inputs.
    left, right : numpy.ndarray
        Integer arrays of equal length; both ``(a, b)`` and ``(b, a)`` are present.
    kind : str
        ``"hamming"``, ``"all"`` or ``"custom"``.
    """

    size: int
    left: np.ndarray
    right: np.ndarray
    kind: str = "custom"

    @property
    def n_pairs(self) -> int:
        return int(self.left.size)

    def adjacency(self) -> sp.csr_matrix:
        """The relation as a sparse boolean ``size × size`` matrix."""
        data = np.ones(self.n_pairs, dtype=bool)
        return sp.csr_matrix((data, (self.left, self.right)), shape=(self.size, self.size))

    def restricted(self, keep: np.ndarray) -> NeighborRelation:
        """Only the pairs whose two ends are both in ``keep`` (a boolean mask or index array)."""
        mask = np.zeros(self.size, dtype=bool)
        mask[keep] = True
        sel = mask[self.left] & mask[self.right]
        return NeighborRelation(self.size, self.left[sel], self.right[sel], self.kind)

    @classmethod
    def from_pairs(cls, size: int, pairs) -> NeighborRelation:
        """A custom relation from unordered pairs ``[(a, b), …]`` (symmetrised)."""
        arr = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
        if arr.size and (arr.min() < 0 or arr.max() >= size):
            raise InputError(f"pair indices must lie in 0..{size - 1}", "privacy.neighbors")
        if (arr[:, 0] == arr[:, 1]).any():
            raise InputError("a pair joins an input to itself", "privacy.neighbors")
        both = np.unique(np.vstack([arr, arr[:, ::-1]]), axis=0)
        return cls(size, both[:, 0], both[:, 1], "custom")


def hamming_neighbors(m: int, n: int) -> NeighborRelation:
    """Databases of ``Dⁿ`` (``|D| = m``) that differ in exactly one row ([004] §2).

    Lexicographic enumeration, ``x_1`` most significant. Built vectorised: for every
    database, every row ``i`` and every other value ``v`` of that row.
    """
    m = as_positive_int(m, "prior.database.m", minimum=2)
    n = as_positive_int(n, "prior.database.n", minimum=1)
    size = m**n
    index = np.arange(size, dtype=np.int64)
    lefts, rights = [], []
    for i in range(n):
        weight = m ** (n - 1 - i)
        digit = (index // weight) % m
        for shift in range(1, m):
            new_digit = (digit + shift) % m
            lefts.append(index)
            rights.append(index + (new_digit - digit) * weight)
    return NeighborRelation(size, np.concatenate(lefts), np.concatenate(rights), "hamming")


def all_pairs(size: int) -> NeighborRelation:
    """Every ordered pair of distinct inputs (LDP, leakage capacity, LDI)."""
    size = as_positive_int(size, "size", minimum=1)
    a, b = np.nonzero(~np.eye(size, dtype=bool))
    return NeighborRelation(size, a.astype(np.int64), b.astype(np.int64), "all")
