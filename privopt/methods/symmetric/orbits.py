"""Joint types: the orbits of database pairs ``(x, y)`` under permutations of the rows.

A row-permutation-invariant mechanism on ``Dⁿ`` depends on ``(x, y)`` only through the joint
type ``T[a, b] = #{i : x_i = a, y_i = b}`` (an ``m × m`` count matrix summing to ``n``;
``C(n + m² − 1, m² − 1)`` of them). This module enumerates them and their combinatorial
weights, with log-domain group sums.
"""

from __future__ import annotations

__all__ = ["MAX_ORBITS", "OrbitTable", "orbit_count", "joint_types", "log_prior_power"]

import itertools
import math

import numpy as np
from scipy.special import gammaln

from privopt._docstrings import sections_of
from privopt.errors import InputError

#: Largest number of orbits (joint types) that is enumerated.
MAX_ORBITS = 4_000_000


def orbit_count(m: int, n: int) -> int:
    """Number of joint types (orbits of ``(x, y)`` pairs under row permutations):
    ``C(n + m² − 1, m² − 1)``.

    Parameters
    ----------
    m : int
        Row alphabet size.
    n : int
        Number of rows.

    Returns
    -------
    int
        The number of ``m × m`` non-negative integer matrices summing to ``n`` (a Python
        int, possibly huge).
    """
    return math.comb(n + m * m - 1, m * m - 1)


@sections_of(orbit_count, ("Parameters",))
def joint_types(m: int, n: int) -> np.ndarray:
    """Every ``m × m`` non-negative integer matrix with entries summing to ``n``.

    Entry ``T[a, b]`` counts the rows ``i`` with ``x_i = a`` and ``y_i = b``. Enumerated by
    stars and bars.

    Returns
    -------
    numpy.ndarray
        Shape ``(orbit_count(m, n), m, m)``, dtype int64.

    Raises
    ------
    InputError
        If there are more than :data:`MAX_ORBITS` joint types (field ``prior.database``).
    """
    k = m * m
    count = orbit_count(m, n)
    if count > MAX_ORBITS:
        raise InputError(
            f"{count} joint types for m = {m}, n = {n} are too many to enumerate "
            f"(limit {MAX_ORBITS})",
            "prior.database",
        )
    if k == 1:
        return np.full((1, 1, 1), n, dtype=np.int64)
    flat = np.fromiter(
        itertools.chain.from_iterable(itertools.combinations(range(n + k - 1), k - 1)),
        dtype=np.int64,
        count=count * (k - 1),
    ).reshape(count, k - 1)
    bars = np.empty((count, k + 1), dtype=np.int64)
    bars[:, 0] = -1
    bars[:, 1:k] = flat
    bars[:, k] = n + k - 1
    return (np.diff(bars, axis=1) - 1).reshape(count, m, m)


def _key_weights(m: int, n: int, size: int) -> np.ndarray:
    """Mixed-radix weights ``(n+1)^j`` that turn a count vector into a unique int64 key."""
    if (n + 1) ** size >= 2**62:
        raise InputError(
            f"joint types for m = {m}, n = {n} do not fit an integer key", "prior.database"
        )
    return (n + 1) ** np.arange(size, dtype=np.int64)


@sections_of(orbit_count, ("Parameters",))
class OrbitTable:
    """The joint types of ``(m, n)`` with their combinatorial weights, cached per ``(m, n)``.

    Raises
    ------
    InputError
        If the joint types are too many to enumerate, or their integer keys overflow int64.
    """

    _cache: dict[tuple[int, int], OrbitTable] = {}

    def __init__(self, m: int, n: int):
        self.m, self.n = m, n
        self.types = joint_types(m, n)
        self.size = len(self.types)
        self.key_weights = _key_weights(m, n, m * m)
        self.keys = self.types.reshape(self.size, -1) @ self.key_weights
        self._lut: np.ndarray | None = None
        self.order = np.argsort(self.keys, kind="stable")
        self.sorted_keys = self.keys[self.order]
        self.x_types = self.types.sum(axis=2)  # r_a = #{i : x_i = a}
        self.y_types = self.types.sum(axis=1)  # s_b = #{i : y_i = b}
        lg_T = gammaln(self.types + 1.0).sum(axis=(1, 2))
        # number of y with joint type T for a fixed x: Π_a r_a! / Π_ab T_ab!
        self.log_k = gammaln(self.x_types + 1.0).sum(axis=1) - lg_T
        # number of x with joint type T for a fixed y: Π_b s_b! / Π_ab T_ab!
        self.log_c = gammaln(self.y_types + 1.0).sum(axis=1) - lg_T
        # number of (x, y) pairs in the orbit: n! / Π_ab T_ab!
        self.log_pairs = gammaln(n + 1.0) - lg_T
        self.distance = n - np.trace(self.types, axis1=1, axis2=2)
        self.x_group, self.n_x_groups = _group(self.x_types, n)
        self.y_group, self.n_y_groups = _group(self.y_types, n)

    @classmethod
    @sections_of(orbit_count, ("Parameters",))
    def get(cls, m: int, n: int) -> OrbitTable:
        """The table of ``(m, n)``, built on first use and cached (the cache is cleared once
        it holds more than 8 tables).

        Returns
        -------
        OrbitTable
            The cached table of ``(m, n)``.
        """
        key = (m, n)
        if key not in cls._cache:
            if len(cls._cache) > 8:
                cls._cache.clear()
            cls._cache[key] = cls(m, n)
        return cls._cache[key]

    def index(self, types: np.ndarray) -> np.ndarray:
        """Orbit indices of an array of joint types.

        Parameters
        ----------
        types : numpy.ndarray
            Integer joint types of shape ``(..., m, m)`` whose entries sum to ``n`` (not
            checked).

        Returns
        -------
        numpy.ndarray
            Shape ``(...)``: the index of each type in :attr:`types`.
        """
        return self.lookup(types.reshape(*types.shape[:-2], -1) @ self.key_weights)

    def lookup(self, keys: np.ndarray) -> np.ndarray:
        """Orbit indices of integer keys (a direct table when the key range is small).

        Parameters
        ----------
        keys : numpy.ndarray
            Keys ``T.ravel() @ key_weights`` of joint types (of this table; not checked).

        Returns
        -------
        numpy.ndarray
            The index in :attr:`types` of each key, of the shape of ``keys``.
        """
        if self._lut is None and (self.n + 1) ** (self.m * self.m) <= 2**24:
            self._lut = np.full((self.n + 1) ** (self.m * self.m), -1, dtype=np.int64)
            self._lut[self.keys] = np.arange(self.size)
        if self._lut is not None:
            return self._lut[keys]
        return self.order[np.searchsorted(self.sorted_keys, keys)]

    def moves(self):
        """Neighbour moves: for each ``(a, b, a')`` with ``a ≠ a'`` the orbits ``T`` with
        ``T[a,b] ≥ 1`` and ``T' = T − e_ab + e_a'b`` (change ``x_i`` from ``a`` to ``a'`` in a
        row with ``y_i = b``). Yields ``(a, b, a2, src, dst)``."""
        m = self.m
        for a in range(m):
            for b in range(m):
                src = np.flatnonzero(self.types[:, a, b] >= 1)
                for a2 in range(m):
                    if a2 == a:
                        continue
                    moved = self.types[src].copy()
                    moved[:, a, b] -= 1
                    moved[:, a2, b] += 1
                    yield a, b, a2, src, self.index(moved)


def _group(counts: np.ndarray, n: int) -> tuple[np.ndarray, int]:
    keys = counts @ ((n + 1) ** np.arange(counts.shape[1], dtype=np.int64))
    _, inverse = np.unique(keys, return_inverse=True)
    return inverse.ravel(), int(inverse.max()) + 1


def _group_logsumexp(values: np.ndarray, groups: np.ndarray, n_groups: int) -> np.ndarray:
    """``log Σ_{k in group g} exp(values[k])`` for every group (−inf for empty sums)."""
    top = np.full(n_groups, -np.inf)
    np.maximum.at(top, groups, values)
    safe = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(invalid="ignore"):
        shifted = np.exp(values - safe[groups])
    shifted[~np.isfinite(values)] = 0.0
    total = np.zeros(n_groups)
    np.add.at(total, groups, shifted)
    with np.errstate(divide="ignore"):
        return np.log(total) + safe


def _log(x: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.log(x)


def _all_digits(m: int, n: int) -> np.ndarray:
    index = np.arange(m**n, dtype=np.int64)
    powers = m ** np.arange(n - 1, -1, -1, dtype=np.int64)
    return (index[:, None] // powers[None, :]) % m


def log_prior_power(x_types: np.ndarray, row_probs: np.ndarray) -> np.ndarray:
    """``ln Π_a π_a^{r_a}`` (−inf when a zero-probability symbol occurs).

    Parameters
    ----------
    x_types : numpy.ndarray
        Row counts ``r_a = #{i : x_i = a}``, shape ``(k, m)``.
    row_probs : array_like
        The row pmf ``π``, ``m`` entries.

    Returns
    -------
    numpy.ndarray
        Shape ``(k,)``: the log-probability of one database of each row-count vector.
    """
    log_pi = _log(np.asarray(row_probs, dtype=float))
    with np.errstate(invalid="ignore"):
        terms = np.where(x_types > 0, x_types * log_pi, 0.0)
    return terms.sum(axis=1)
