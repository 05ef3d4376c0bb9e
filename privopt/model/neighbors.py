"""Neighbour relations for DP and identifiability, held sparsely.

A relation is stored as two integer arrays ``left``, ``right`` of ordered pairs (both
directions of every unordered pair), never as a dense N × N mask. The Hamming relation on
``Dⁿ`` (databases that differ in exactly one row, Wang et al. [Wang-Ying-Zhang] §2) has
``mⁿ · n(m−1)`` ordered pairs.
"""

from __future__ import annotations

__all__ = [
    "HammingNeighbors",
    "NeighborRelation",
    "hamming_neighbors",
    "pairs_within",
    "all_pairs",
    "NEIGHBOR_KINDS",
]

from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from privopt.errors import InputError
from privopt.model._validate import as_positive_int

if TYPE_CHECKING:  # pragma: no cover
    import scipy.sparse as sp
    from numpy.typing import ArrayLike

NEIGHBOR_KINDS = ("hamming", "all")


def pairs_within(size: int, left: np.ndarray, right: np.ndarray, keep: ArrayLike) -> np.ndarray:
    """Which of the pairs ``(left[i], right[i])`` have both ends in ``keep``.

    Parameters
    ----------
    size : int
        The number of elements the pairs are on.
    left, right : numpy.ndarray
        The pairs' ends, integers in ``0 … size − 1``.
    keep : array_like
        The elements kept: a boolean mask of length ``size``, or integer indices.

    Returns
    -------
    numpy.ndarray
        A boolean mask over the pairs.
    """
    mask = np.zeros(size, dtype=bool)
    mask[keep] = True
    return mask[left] & mask[right]


class NeighborRelation:
    """A symmetric relation on ``size`` inputs, as ordered pairs ``(left[k], right[k])``.

    Parameters
    ----------
    size : int
        Number of inputs (secrets), ``≥ 1``.
    left, right : numpy.ndarray
        Integer arrays of equal length with entries in ``0 … size − 1``; pair ``k`` is
        ``(left[k], right[k])``. Not checked: the caller gives both directions of every pair
        (:meth:`from_pairs` checks and symmetrises a list of pairs).
    kind : str
        ``"hamming"``, ``"all"`` or ``"custom"`` (the default).

    Attributes
    ----------
    size : int
        Number of inputs.
    left, right : numpy.ndarray
        Integer arrays of equal length; both ``(a, b)`` and ``(b, a)`` are present.
    kind : str
        ``"hamming"``, ``"all"`` or ``"custom"``.
    """

    def __init__(
        self, size: int, left: np.ndarray, right: np.ndarray, kind: str = "custom"
    ) -> None:
        self.size = int(size)
        self.left = np.asarray(left, dtype=np.int64)
        self.right = np.asarray(right, dtype=np.int64)
        self.kind = kind

    @property
    def n_pairs(self) -> int:
        """Number of ordered pairs (twice the number of unordered ones)."""
        return int(self.left.size)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(size={self.size}, pairs={self.n_pairs}, kind={self.kind!r})"

    def adjacency(self) -> sp.csr_matrix:
        """The relation as a sparse boolean ``size × size`` matrix.

        Returns
        -------
        scipy.sparse.csr_matrix
            ``size × size``, ``True`` at ``(left[k], right[k])`` for every pair ``k``;
            symmetric, with a zero diagonal.
        """
        import scipy.sparse as sp

        data = np.ones(self.n_pairs, dtype=bool)
        return sp.csr_matrix((data, (self.left, self.right)), shape=(self.size, self.size))

    def restricted(self, keep: np.ndarray) -> NeighborRelation:
        """Only the pairs whose two ends are both in ``keep`` (a boolean mask or index array).

        Parameters
        ----------
        keep : numpy.ndarray
            The inputs kept: a boolean mask of length ``size``, or integer indices in
            ``0 … size − 1``.

        Returns
        -------
        NeighborRelation
            On the same ``size`` inputs (not renumbered) and of the same ``kind``, with the
            pairs of kept inputs only.
        """
        sel = pairs_within(self.size, self.left, self.right, keep)
        return NeighborRelation(self.size, self.left[sel], self.right[sel], self.kind)

    @classmethod
    def from_pairs(cls, size: int, pairs: ArrayLike) -> NeighborRelation:
        """A custom relation from unordered pairs ``[(a, b), …]`` (symmetrised).

        Parameters
        ----------
        size : int
            Number of inputs, ``≥ 1``.
        pairs : array_like
            Pairs of distinct integer indices in ``0 … size − 1`` (a list of pairs or a
            ``k × 2`` array); either direction, repeats allowed.

        Returns
        -------
        NeighborRelation
            Of kind ``"custom"``, holding both directions of every pair once, sorted.

        Raises
        ------
        InputError
            If an index is out of range or a pair joins an input to itself (field
            ``privacy.neighbors``).
        """
        arr = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
        if arr.size and (arr.min() < 0 or arr.max() >= size):
            raise InputError(f"pair indices must lie in 0..{size - 1}", "privacy.neighbors")
        if (arr[:, 0] == arr[:, 1]).any():
            raise InputError("a pair joins an input to itself", "privacy.neighbors")
        both = np.unique(np.vstack([arr, arr[:, ::-1]]), axis=0)
        return cls(size, both[:, 0], both[:, 1], "custom")


class HammingNeighbors(NeighborRelation):
    """Databases of ``Dⁿ`` (``|D| = m``) that differ in exactly one row ([Wang-Ying-Zhang] §2).

    Lexicographic enumeration, ``x_1`` most significant. The pair arrays are built (vectorised:
    for every database, every row ``i`` and every other value of that row) only when first
    used, so that structured fast paths can work on ``Dⁿ`` far too large to enumerate.

    Parameters
    ----------
    m : int
        Row alphabet size ``|D| ≥ 2``.
    n : int
        Number of rows, ``≥ 1``.

    Raises
    ------
    InputError
        If ``m`` or ``n`` is not such an integer (fields ``prior.database.m``,
        ``prior.database.n``).
    """

    def __init__(self, m: int, n: int) -> None:  # noqa: D107 - documented on the class
        self.m = as_positive_int(m, "prior.database.m", minimum=2)
        self.n = as_positive_int(n, "prior.database.n", minimum=1)
        self.size = self.m**self.n
        self.kind = "hamming"

    @property
    def n_pairs(self) -> int:
        """Number of ordered pairs, ``mⁿ · n(m−1)``, computed without enumerating them."""
        return self.size * self.n * (self.m - 1)

    @cached_property
    def _pairs(self) -> tuple[np.ndarray, np.ndarray]:
        m, n, size = self.m, self.n, self.size
        if self.n_pairs > 2**28:
            raise InputError(
                f"{self.n_pairs} neighbour pairs are too many to enumerate; use a structured "
                "fast path",
                "privacy.neighbors",
            )
        index = np.arange(size, dtype=np.int64)
        lefts, rights = [], []
        for i in range(n):
            weight = m ** (n - 1 - i)
            digit = (index // weight) % m
            for shift in range(1, m):
                new_digit = (digit + shift) % m
                lefts.append(index)
                rights.append(index + (new_digit - digit) * weight)
        return np.concatenate(lefts), np.concatenate(rights)

    @property
    def left(self) -> np.ndarray:  # type: ignore[override]
        """First ends of the ordered pairs (``int64``, built on first use; more than
        ``2**28`` pairs raise :class:`~privopt.errors.InputError`)."""
        return self._pairs[0]

    @property
    def right(self) -> np.ndarray:  # type: ignore[override]
        """Second ends of the ordered pairs, aligned with :attr:`left` (built on first use)."""
        return self._pairs[1]


def hamming_neighbors(m: int, n: int) -> HammingNeighbors:
    """Databases of ``Dⁿ`` (``|D| = m``) that differ in exactly one row ([Wang-Ying-Zhang] §2).

    Parameters
    ----------
    m, n : int
        As in :class:`HammingNeighbors`.

    Returns
    -------
    HammingNeighbors
        On the ``m**n`` databases in lexicographic order, with ``mⁿ · n(m−1)`` ordered
        pairs (enumerated only when first used).

    Raises
    ------
    InputError
        If ``m`` or ``n`` is not such an integer.
    """
    return HammingNeighbors(m, n)


def all_pairs(size: int) -> NeighborRelation:
    """Every ordered pair of distinct inputs (LDP, leakage capacity, LDI).

    Parameters
    ----------
    size : int
        Number of inputs, ``≥ 1`` (a ``size × size`` boolean mask is built on the way).

    Returns
    -------
    NeighborRelation
        Of kind ``"all"``, with the ``size · (size − 1)`` ordered pairs ``(a, b)``, ``a ≠ b``,
        sorted by ``a`` then ``b``.

    Raises
    ------
    InputError
        If ``size`` is not a positive integer (field ``size``).
    """
    size = as_positive_int(size, "size", minimum=1)
    a, b = np.nonzero(~np.eye(size, dtype=bool))
    return NeighborRelation(size, a.astype(np.int64), b.astype(np.int64), "all")
