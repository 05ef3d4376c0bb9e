"""Symmetry reduction for exchangeable (i.i.d.-row) database priors with Hamming distortion.

Setting ([004] Wang, Ying, Zhang §2): databases ``x = (x_1, …, x_n) ∈ Dⁿ``, ``|D| = m``,
rows i.i.d. with pmf ``π`` (:class:`~privopt.model.DatabasePrior` with ``row_probs``), the
row-wise Hamming distortion ``d(x, y) = #{i : x_i ≠ y_i}`` and Hamming neighbours (databases
that differ in one row). Three programs are solved:

* ``"dp"`` — PD-DP, [004] eqs (14)–(17): ``min E d`` s.t. ``W[x,y] ≤ e^ε W[x',y]`` (x ~ x');
* ``"identifiability"`` — PD-I as an LP in the joint ``q = p(x) W[x,y]`` (spec §2.8, [004]
  eqs (8)–(13)): ``p(x) W[x,y] ≤ e^ε p(x') W[x',y]`` (x ~ x');
* ``"mutual_information"`` — PD-MIP, [004] eqs (31)–(34): ``min I(X;Y)`` s.t. ``E d ≤ D``
  (``max_distortion`` mode), or ``min E d`` s.t. ``I(X;Y) ≤ ε`` (``epsilon`` mode).

Two reductions
--------------
**Orbits.** All three programs are convex and invariant under permutations of the n rows
(applied to x and y together), so an optimal mechanism can be taken invariant: ``W[x, y]``
depends only on the *joint type* ``T[a, b] = #{i : x_i = a, y_i = b}`` (an ``m × m`` count
matrix summing to n; ``C(n + m² − 1, m² − 1)`` of them, 5,456 for m = 2, n = 30).
:class:`SymmetricMechanism` stores a mechanism in this form (``ln w_T`` per orbit, or a
one-row kernel ``B`` with ``W = B^{⊗n}``) and :func:`verify_symmetric` measures level,
distortion and row sums on it without ever materialising the ``mⁿ × mⁿ`` matrix.
``method="orbit_lp"`` solves the orbit LP itself (parametrisation chosen by
``parametrisation=``) and ``method="orbit_ba"`` runs Blahut–Arimoto on orbits; both are
independent cross-checks of the default method (see Notes for what they achieve).

**Single letter (default, exact).** With independent rows all three programs *single-letterise*
(derived here; checked against the dense LP / exponential-cone program for small n in
``tests/test_fastpath_symmetric.py``):

* DP and identifiability. Let ``W`` be feasible and ``W_i(b|a) = Σ_{x_{−i}} p(x_{−i})
  Σ_{y: y_i = b} W[(a, x_{−i}), y]`` the channel from row i to output row i. For fixed
  ``x_{−i}`` the channel ``a ↦ W[(a, x_{−i}), ·]`` obeys the constraint between every pair of
  values (those inputs are neighbours; for identifiability ``p(x) = π_a p(x_{−i})``);
  marginalising ``y`` to ``y_i`` and averaging over ``x_{−i}`` (whose law does not depend on
  ``a``, as the rows are independent) keeps it. So ``W_i`` is feasible for the one-row
  problem, and ``E d = Σ_i P(x_i ≠ y_i) = Σ_i D₁(W_i) ≥ n D₁*``. Conversely the product
  ``B^{⊗n}`` of a one-row optimum ``B`` is feasible (neighbours differ in one factor) with
  ``E d = n D₁*``. Hence ``D*(ε) = n · D₁*(ε)``: one LP on ``m`` symbols
  (:func:`single_row_lp`, solved in a ray form whose coefficients all lie in ``[e^{−ε}, 1]``).
  This reproduces [004] Thm 1 (``h(ε)`` for a uniform prior, ``D*_I = h(ε)`` for
  ``ε ≥ ε̃_X``, PD-I infeasible below ``ε_X``) and proves the observation of spec §7
  (``D*_DP = h(ε)`` for ``ε ≥ ε̃_X``) for i.i.d. priors.
* Mutual information. ``I(Xⁿ; Yⁿ) ≥ Σ_i I(X_i; Y_i)`` for independent rows, and the
  one-row rate–distortion function ``R₁`` is convex, so ``min I = n R₁(D/n)``, attained by
  ``B^{⊗n}`` (the converse of the rate–distortion theorem). ``R₁`` for Hamming distortion is
  solved in closed form at each slope (a water-filling over the most likely symbols, from the
  Blahut–Arimoto / KKT fixed point, :func:`rate_distortion_hamming`), the slope by a scalar
  root search, and Csiszár's bound certifies the gap (~1e-16). On ``D ≤ h(ε̃_X)`` this is
  [004] Thm 2 / spec §3.7, ``H(X) − n h_b(D/n) − D ln(m−1)``.

Notes
-----
Measured on this machine (2 cores), m = 2, ε = 1, priors (½, ½) and (0.7, 0.3):

* single letter: n = 30 in 10–25 ms per notion including the re-measurement on all 5,456
  orbits, error against the closed forms ≤ 1e-13; n = 100 in 0.5 s when its 176,851 orbits
  are re-measured (``verify_symmetric``; a solve itself re-measures on orbits up to
  :data:`MAX_VERIFY_ORBITS` and from the product kernel beyond). Levels exceed ε by ≤ 1e-13.
* orbit LP (HiGHS dual simplex, feasibility tolerances 1e-9): n = 8 exact in 0.01 s; n = 16
  0.2–0.8 s, n = 24 0.5–10 s, n = 30 3–35 s; objective within 1e-9 relative where HiGHS
  finishes, but HiGHS stops with "numerical difficulties" or a model error for several
  (parametrisation, prior) pairs at n ≥ 24, and from n = 16 on (n = 8 for identifiability with
  the skewed prior) every parametrisation returns a mechanism whose re-measured level is
  *infinite* (an orbit set to 0 next to a positive neighbour) with row sums off by up to 2e-2.
  "mass" (conditional orbit mass, constraints carry ratios of order n) is not better than
  "representative": all parametrisations differ by a diagonal column scaling, which HiGHS
  largely undoes by its own scaling; the obstacle is the dynamic range of the *solution*
  (orbit values down to ``e^{−εn}``), which no rescaling by multinomial coefficients removes.
* orbit Blahut–Arimoto (log domain, Csiszár stopping rule, bisection on the slope): agrees
  with the single-letter value to 1e-11 at n = 8, 16, 30 (0.07, 0.10, 0.30 s).
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.optimize import brentq, linprog
from scipy.special import gammaln, logsumexp

from privopt.algorithms.base import Algorithm, AlgorithmResult, register
from privopt.errors import InputError
from privopt.model import DatabasePrior, Distortion, NeighborRelation

__all__ = [
    "SymmetricMechanism",
    "verify_symmetric",
    "joint_types",
    "orbit_count",
    "single_row_lp",
    "rate_distortion_hamming",
    "solve_symmetric",
    "applies_symmetric",
    "ALGORITHM",
    "MAX_ORBITS",
    "MAX_DENSE",
]

#: Largest ``m**n`` for which the dense mechanism is returned in :class:`AlgorithmResult`.
MAX_DENSE = 4096
#: Largest ``m**n`` for which :meth:`SymmetricMechanism.row` builds a dense row.
MAX_DENSE_ROW = 2**22
#: Largest number of orbits (joint types) that is enumerated.
MAX_ORBITS = 4_000_000
#: Largest number of orbits on which a solve re-measures its own product answer orbit by orbit
#: (beyond, from the one-row kernel; both are exact for a product mechanism).
MAX_VERIFY_ORBITS = 20_000
#: Largest number of orbits for which the orbit LP / orbit BA methods are offered.
MAX_ORBIT_SOLVE = 60_000

NOTION_ALIASES = {
    "dp": "dp",
    "identifiability": "identifiability",
    "mutual_information": "mutual_information",
    "average_leakage": "mutual_information",
}
METHODS = ("single_letter", "orbit_lp", "orbit_ba")


# ==========================================================================================
# Combinatorics of joint types
# ==========================================================================================
def orbit_count(m: int, n: int) -> int:
    """Number of joint types (orbits of ``(x, y)`` pairs under row permutations):
    ``C(n + m² − 1, m² − 1)``."""
    return math.comb(n + m * m - 1, m * m - 1)


def joint_types(m: int, n: int) -> np.ndarray:
    """Every ``m × m`` non-negative integer matrix with entries summing to ``n``.

    Entry ``T[a, b]`` counts the rows ``i`` with ``x_i = a`` and ``y_i = b``. Enumerated by
    stars and bars.

    Returns
    -------
    numpy.ndarray
        Shape ``(orbit_count(m, n), m, m)``, dtype int64.
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


class _OrbitTable:
    """The joint types of ``(m, n)`` with their combinatorial weights, cached per ``(m, n)``."""

    _cache: dict[tuple[int, int], _OrbitTable] = {}

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
    def get(cls, m: int, n: int) -> _OrbitTable:
        key = (m, n)
        if key not in cls._cache:
            if len(cls._cache) > 8:
                cls._cache.clear()
            cls._cache[key] = cls(m, n)
        return cls._cache[key]

    def index(self, types: np.ndarray) -> np.ndarray:
        """Orbit indices of an array of joint types (shape ``(..., m, m)``)."""
        return self.lookup(types.reshape(*types.shape[:-2], -1) @ self.key_weights)

    def lookup(self, keys: np.ndarray) -> np.ndarray:
        """Orbit indices of integer keys (a direct table when the key range is small)."""
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


# ==========================================================================================
# The mechanism in reduced form
# ==========================================================================================
class SymmetricMechanism:
    """A row-permutation-invariant mechanism on ``Dⁿ`` held by orbit (joint type).

    ``W[x, y] = w_T`` where ``T`` is the joint type of ``(x, y)``. Two storage forms:

    * ``kernel`` — an ``m × m`` row-stochastic matrix ``B``; the mechanism is the product
      ``B^{⊗n}`` and ``log w_T = Σ_ab T_ab ln B_ab`` (what the single-letter method returns);
    * ``log_weights`` — ``ln w_T`` for every orbit, in the order of :func:`joint_types`.

    Databases are indexed lexicographically with ``x_1`` most significant (as
    :class:`~privopt.model.DatabasePrior`); methods accept an index or a digit sequence.

    Parameters
    ----------
    m, n : int
        Row alphabet size and number of rows.
    kernel : array_like, optional
        The one-row channel ``B`` (rows sum to 1).
    log_weights : array_like, optional
        ``ln W[x, y]`` per orbit (``−inf`` for zero).
    """

    def __init__(self, m: int, n: int, *, kernel=None, log_weights=None):
        self.m, self.n = int(m), int(n)
        if (kernel is None) == (log_weights is None):
            raise InputError("give exactly one of 'kernel' and 'log_weights'", "mechanism")
        self.kernel = None if kernel is None else np.asarray(kernel, dtype=float)
        if self.kernel is not None and self.kernel.shape != (self.m, self.m):
            raise InputError(f"kernel must be {self.m}×{self.m}", "mechanism.kernel")
        self._log_weights = None if log_weights is None else np.asarray(log_weights, float)
        if self._log_weights is not None and self._log_weights.size != orbit_count(m, n):
            raise InputError("one log-weight per joint type", "mechanism.log_weights")

    # --- structure ----------------------------------------------------------------------
    @property
    def size(self) -> int:
        """``mⁿ``, the number of databases (a Python int, possibly huge)."""
        return self.m**self.n

    @property
    def is_product(self) -> bool:
        """True when stored as a product ``B^{⊗n}``."""
        return self.kernel is not None

    @property
    def n_orbits(self) -> int:
        return orbit_count(self.m, self.n)

    @property
    def types(self) -> np.ndarray:
        """The joint types, shape ``(n_orbits, m, m)`` (enumerated on demand)."""
        return _OrbitTable.get(self.m, self.n).types

    @property
    def log_weights(self) -> np.ndarray:
        """``ln W[x, y]`` for one pair of each orbit, in the order of :attr:`types`."""
        if self._log_weights is None:
            self._log_weights = self.log_weight(self.types)
        return self._log_weights

    def log_weight(self, types: np.ndarray) -> np.ndarray:
        """``ln W[x, y]`` for joint types of shape ``(..., m, m)``."""
        types = np.asarray(types)
        if self.kernel is not None:
            log_b = _log(self.kernel)
            with np.errstate(invalid="ignore"):
                terms = np.where(types > 0, types * log_b, 0.0)
            return terms.sum(axis=(-2, -1))
        table = _OrbitTable.get(self.m, self.n)
        return self._log_weights[table.index(types)]

    def orbit_log_masses(self, prior: DatabasePrior) -> np.ndarray:
        """``ln P(joint type = T)`` under the prior (the orbit's probability mass)."""
        table = _OrbitTable.get(self.m, self.n)
        log_px = _log_prior_power(table.x_types, prior.row_probs)
        return table.log_pairs + log_px + self.log_weights

    # --- indices ------------------------------------------------------------------------
    def digits(self, x) -> np.ndarray:
        """The entries ``(x_1, …, x_n)`` of a database given by index or digit sequence."""
        if isinstance(x, (int, np.integer)):
            x = int(x)
            if not 0 <= x < self.size:
                raise InputError(f"database index {x} outside 0..{self.size - 1}", "x")
            out = np.empty(self.n, dtype=np.int64)
            for j in range(self.n - 1, -1, -1):
                x, out[j] = divmod(x, self.m)
            return out
        out = np.asarray(x, dtype=np.int64).reshape(-1)
        if out.size != self.n or (out < 0).any() or (out >= self.m).any():
            raise InputError(f"a database is {self.n} symbols in 0..{self.m - 1}", "x")
        return out

    def index(self, digits: Sequence[int]) -> int:
        """Lexicographic index (x_1 most significant) of a digit sequence."""
        out = 0
        for d in self.digits(digits):
            out = out * self.m + int(d)
        return out

    def joint_type(self, x, y) -> np.ndarray:
        """``T[a, b] = #{i : x_i = a, y_i = b}``."""
        dx, dy = self.digits(x), self.digits(y)
        out = np.zeros((self.m, self.m), dtype=np.int64)
        np.add.at(out, (dx, dy), 1)
        return out

    # --- entries ------------------------------------------------------------------------
    def log_probability(self, x, y) -> float:
        """``ln p(y | x)``."""
        return float(self.log_weight(self.joint_type(x, y)))

    def probability(self, x, y) -> float:
        """``p(y | x)`` for databases given by index or digit sequence."""
        return float(np.exp(self.log_probability(x, y)))

    def row(self, x) -> np.ndarray:
        """``p(· | x)`` as a dense vector over the ``mⁿ`` outputs (lexicographic order)."""
        if self.size > MAX_DENSE_ROW:
            raise InputError(
                f"a dense row has m**n = {self.size} entries (limit {MAX_DENSE_ROW}); use "
                "probability() or sample()",
                "mechanism",
            )
        dx = self.digits(x)
        if self.kernel is not None:
            out = np.ones(1)
            for a in dx:
                out = np.kron(out, self.kernel[a])
            return out
        table = _OrbitTable.get(self.m, self.n)
        dy = _all_digits(self.m, self.n)
        keys = np.zeros(dy.shape[0], dtype=np.int64)
        kw = table.key_weights.reshape(self.m, self.m)
        for j in range(self.n):
            keys += kw[dx[j], dy[:, j]]
        return np.exp(self._log_weights)[table.lookup(keys)]

    def to_dense(self, max_size: int = MAX_DENSE) -> np.ndarray:
        """The ``mⁿ × mⁿ`` matrix (only when ``mⁿ ≤ max_size``)."""
        if self.size > max_size:
            raise InputError(
                f"m**n = {self.size} databases exceed the dense limit {max_size}", "mechanism"
            )
        if self.kernel is not None:
            out = np.ones((1, 1))
            for _ in range(self.n):
                out = np.kron(out, self.kernel)
            return out
        # key(x, y) = Σ_j kw[x_j, y_j] is additive over rows: build it as a Kronecker sum
        table = _OrbitTable.get(self.m, self.n)
        kw = table.key_weights.reshape(self.m, self.m)
        keys = np.zeros((1, 1), dtype=np.int64)
        for _ in range(self.n):
            keys = (keys[:, None, :, None] + kw[None, :, None, :]).reshape(
                keys.shape[0] * self.m, keys.shape[1] * self.m
            )
        return np.exp(self._log_weights)[table.lookup(keys)]

    # --- sampling -----------------------------------------------------------------------
    def sample(
        self, x, rng: np.random.Generator | int | None = None, size: int | None = None
    ) -> np.ndarray:
        """Draw output databases ``y ~ p(· | x)`` without materialising anything.

        First the joint type ``T`` given the type ``r`` of ``x``: probability ``K(T) w_T``
        with ``K(T) = Π_a r_a!/Π_ab T_ab!`` outputs per orbit (for a product mechanism the
        rows ``T[a, :]`` are independent ``Multinomial(r_a, B[a, :])``). Then a uniformly
        random ``y`` with that joint type relative to ``x``: for each symbol ``a``, the
        multiset of ``y`` values given by ``T[a, :]`` in random order over the rows where
        ``x_i = a``.

        Parameters
        ----------
        x : int or sequence of int
            The input database (index or digits).
        rng : numpy.random.Generator or int, optional
        size : int, optional
            Number of independent draws; ``None`` for one.

        Returns
        -------
        numpy.ndarray
            The digits ``(y_1, …, y_n)``, shape ``(n,)`` or ``(size, n)``;
            :meth:`index` converts one to an index.
        """
        rng = np.random.default_rng(rng)
        dx = self.digits(x)
        r = np.bincount(dx, minlength=self.m)
        count = 1 if size is None else int(size)
        if self.kernel is not None:
            types = np.stack(
                [rng.multinomial(r[a], self.kernel[a], size=count) for a in range(self.m)],
                axis=1,
            )
        else:
            table = _OrbitTable.get(self.m, self.n)
            cand = np.flatnonzero((table.x_types == r).all(axis=1))
            logp = table.log_k[cand] + self._log_weights[cand]
            prob = np.exp(logp - logsumexp(logp))
            types = table.types[cand[rng.choice(cand.size, size=count, p=prob / prob.sum())]]
        rows = [np.flatnonzero(dx == a) for a in range(self.m)]
        out = np.empty((count, self.n), dtype=np.int64)
        symbols = np.arange(self.m)
        for k in range(count):
            for a in range(self.m):
                out[k, rows[a]] = rng.permutation(np.repeat(symbols, types[k, a]))
        return out[0] if size is None else out

    def __repr__(self) -> str:
        form = "product kernel" if self.kernel is not None else f"{self.n_orbits} orbits"
        return f"SymmetricMechanism(m={self.m}, n={self.n}, {form})"


def _all_digits(m: int, n: int) -> np.ndarray:
    index = np.arange(m**n, dtype=np.int64)
    powers = m ** np.arange(n - 1, -1, -1, dtype=np.int64)
    return (index[:, None] // powers[None, :]) % m


def _log_prior_power(x_types: np.ndarray, row_probs: np.ndarray) -> np.ndarray:
    """``ln Π_a π_a^{r_a}`` (−inf when a zero-probability symbol occurs)."""
    log_pi = _log(np.asarray(row_probs, dtype=float))
    with np.errstate(invalid="ignore"):
        terms = np.where(x_types > 0, x_types * log_pi, 0.0)
    return terms.sum(axis=1)


# ==========================================================================================
# Single-letter solvers
# ==========================================================================================
#: Largest support size for the ray formulation of the one-row LP (2^k − 1 columns).
MAX_RAY_SUPPORT = 12


def single_row_lp(
    row_probs, notion: str, epsilon: float, tol: float = 1e-10
) -> tuple[str, np.ndarray | None, float, dict]:
    """The one-row LP behind the single-letter reduction (see the module docstring).

    ``min Σ_a π_a Σ_{b≠a} B[a,b]`` s.t. rows of ``B`` sum to 1, ``B ≥ 0`` and, for all
    ``a ≠ a'`` in ``supp π`` and all ``b``:

    * ``"dp"``: ``B[a,b] ≤ e^ε B[a',b]`` ([004] eq. 15 with n = 1);
    * ``"identifiability"``: ``π_a B[a,b] ≤ e^ε π_{a'} B[a',b]`` ([004] eq. 9 in the joint
      ``q[a,b] = π_a B[a,b]``, spec §2.8).

    Solved in *ray form* (derived): both constraints say that every column (of ``B`` for DP,
    of ``q`` for identifiability) lies in the cone ``C = {v ≥ 0 : max v ≤ e^ε min v}``, whose
    extreme rays are ``r_S = e^{−ε} 1 + (1 − e^{−ε}) 1_S`` for non-empty ``S ⊆ supp π``
    (layer-cake decomposition of ``v`` between ``max v / e^ε`` and ``min v``). So the LP is
    over weights ``φ_S ≥ 0`` of ``2^k − 1`` rays, each sent to its best output label, with
    ``k`` row equalities ``Σ_S φ_S r_S[a] = 1`` (DP) or ``= π_a`` (identifiability). Every
    coefficient lies in ``[e^{−ε}, 1]``, whatever ε, and the privacy constraint holds by
    construction (each column is a non-negative combination of rays of ``C``); the direct
    formulation (``B[a,b] − e^ε B[a',b] ≤ 0``) makes HiGHS misreport infeasibility from
    ε ≈ 35 on. Supports larger than :data:`MAX_RAY_SUPPORT` use the direct formulation.

    Rows of zero-probability symbols are unconstrained and set to the identity.

    Returns
    -------
    status : str
        ``"optimal"``, ``"infeasible"`` or ``"failed"``.
    kernel : numpy.ndarray or None
    value : float
        ``D₁*`` (nan when not optimal).
    certificate : dict
        ``dual_value`` (the LP dual objective, a lower bound on ``D₁*``) and ``duality_gap``.
    """
    pi = np.asarray(row_probs, dtype=float)
    m = pi.size
    sup = np.flatnonzero(pi > 0)
    k = sup.size
    kernel = np.eye(m)
    if k <= 1:
        return "optimal", kernel, 0.0, {"dual_value": 0.0, "duality_gap": 0.0}
    ps = pi[sup]
    if notion == "identifiability" and epsilon < np.log(ps.max() / ps.min()) - 1e-13:
        # [004] Lemma 3: summing π_a B[a,b] ≤ e^ε π_a' B[a',b] over b gives π_a ≤ e^ε π_a'
        return "infeasible", None, float("nan"), {}
    if k > MAX_RAY_SUPPORT:
        return _single_row_lp_direct(pi, notion, epsilon, tol)
    # e^{−ε} underflows past ε ≈ 745; a min(ε, 700)-private answer is ε-private and within
    # e^{−700} of optimal
    r = float(np.exp(-min(epsilon, 700.0)))
    members = (np.arange(1, 2**k)[None, :] >> np.arange(k)[:, None]) & 1  # k × (2^k − 1)
    rays = np.where(members == 1, 1.0, r)  # r_S[a]
    weight = ps if notion == "dp" else np.ones(k)  # distortion of q-column entries
    # best label of each ray: the b maximising weight_b r_S[b] (kept diagonal mass)
    label = np.argmax(weight[:, None] * rays, axis=0)
    kept = (weight[:, None] * rays)[label, np.arange(rays.shape[1])]
    cost = weight @ rays - kept  # Σ_{a ≠ b} weight_a r_S[a]
    rhs = np.ones(k) if notion == "dp" else ps
    res = linprog(
        cost,
        A_eq=rays,
        b_eq=rhs,
        bounds=(0, None),
        method="highs-ds",
        options={"primal_feasibility_tolerance": tol, "dual_feasibility_tolerance": tol},
    )
    if _infeasible(res):
        return "infeasible", None, float("nan"), {}
    if res.status != 0:
        return "failed", None, float("nan"), {"message": res.message}
    phi = np.clip(res.x, 0.0, None)
    cols = np.zeros((k, m))  # columns of B (dp) or q (identifiability) on the support rows
    for lab in np.unique(label):
        sel = label == lab
        cols[:, sup[lab]] = rays[:, sel] @ phi[sel]
    if notion == "identifiability":
        cols = cols / ps[:, None]
    cols /= cols.sum(axis=1, keepdims=True)  # removes rounding-level row-sum residue
    kernel[sup] = cols
    value = float(np.sum(pi[:, None] * kernel * (1 - np.eye(m))))
    dual = float(rhs @ res.eqlin.marginals)
    return "optimal", kernel, value, {"dual_value": dual, "duality_gap": abs(value - dual)}


def _infeasible(res) -> bool:
    """True only for a genuine infeasibility verdict: scipy maps HiGHS "model error" (e.g.
    coefficients out of range) to the same status 2."""
    return res.status == 2 and "infeasible" in str(res.message).lower()


def _single_row_lp_direct(
    pi: np.ndarray, notion: str, epsilon: float, tol: float
) -> tuple[str, np.ndarray | None, float, dict]:
    """The one-row LP written as printed ([004] eqs 15 / 9 with n = 1): variables ``B[a,b]``,
    constraints ``c_a B[a,b] − e^ε c_{a'} B[a',b] ≤ 0``. Reliable for moderate ε only."""
    m = pi.size
    sup = np.flatnonzero(pi > 0)
    k = sup.size
    kernel = np.eye(m)
    c = (pi[sup, None] * (sup[:, None] != np.arange(m)[None, :])).ravel()
    rows, cols, vals = [], [], []
    count = 0
    for i, a in enumerate(sup):
        for j, a2 in enumerate(sup):
            if i == j:
                continue
            coef = epsilon if notion == "dp" else epsilon + np.log(pi[a2] / pi[a])
            for b in range(m):
                rows += [count, count]
                cols += [i * m + b, j * m + b]
                vals += [1.0, -float(np.exp(coef))]
                count += 1
    a_ub = sp.csr_matrix((vals, (rows, cols)), shape=(count, k * m))
    a_eq = sp.kron(sp.eye(k), np.ones((1, m)), format="csr")
    res = linprog(
        c,
        A_ub=a_ub,
        b_ub=np.zeros(count),
        A_eq=a_eq,
        b_eq=np.ones(k),
        bounds=(0, None),
        method="highs-ds",
        options={"primal_feasibility_tolerance": tol, "dual_feasibility_tolerance": tol},
    )
    if _infeasible(res):
        return "infeasible", None, float("nan"), {}
    if res.status != 0:
        return "failed", None, float("nan"), {"message": res.message}
    sol = np.clip(res.x.reshape(k, m), 0.0, None)
    sol /= sol.sum(axis=1, keepdims=True)
    kernel[sup] = sol
    value = float(np.sum(pi[:, None] * kernel * (1 - np.eye(m))))
    dual = float(np.ones(k) @ res.eqlin.marginals)  # b_ub = 0 contributes nothing
    return "optimal", kernel, value, {"dual_value": dual, "duality_gap": abs(value - dual)}


def _rd_slope_point(pi: np.ndarray, r: float) -> tuple[np.ndarray, np.ndarray, float, float]:
    """One-row rate–distortion point at slope ``λ = −ln r`` for Hamming distortion.

    Closed-form Blahut–Arimoto fixed point (KKT): ``W(b|a) = q_b r^{[a≠b]} / Z_a`` with
    ``Z_a = r + (1−r) q_a``; the output pmf ``q`` is positive exactly on the ``k`` most likely
    symbols ``S``, where ``π_b / Z_b = c = π(S)/(1 + r(k−1))``, i.e. ``q_b = (π_b/c − r)/(1−r)``;
    ``k`` is the largest with ``π_(k) > r c_k`` (water-filling).

    Returns ``(kernel, q, D₁, R₁)`` with ``R₁ = −λ D₁ − Σ_a π_a ln Z_a`` in nats.
    """
    m = pi.size
    order = np.argsort(-pi, kind="stable")
    ps = pi[order]
    cum = np.cumsum(ps)
    k = 1
    for j in range(1, m + 1):
        cj = cum[j - 1] / (1 + r * (j - 1))
        if ps[j - 1] > r * cj:
            k = j
    c = cum[k - 1] / (1 + r * (k - 1))
    q = np.zeros(m)
    q[order[:k]] = np.clip((ps[:k] / c - r) / (1 - r), 0.0, None)
    q /= q.sum()
    z = r + (1 - r) * q
    kernel = q[None, :] * np.where(np.eye(m, dtype=bool), 1.0, r) / z[:, None]
    kernel /= kernel.sum(axis=1, keepdims=True)
    dist = float(np.sum(pi * (1 - np.diag(kernel))))
    lam = -np.log(r)
    rate = float(-lam * dist - np.sum(pi[pi > 0] * np.log(z[pi > 0])))
    return kernel, q, dist, max(rate, 0.0)


def _entropy(p: np.ndarray) -> float:
    p = p[p > 0]
    return float(-np.sum(p * np.log(p)))


def _one_row_mi(pi: np.ndarray, kernel: np.ndarray) -> float:
    q = pi @ kernel
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(kernel > 0, kernel * np.log(kernel / q[None, :]), 0.0)
    return float(np.sum(pi[:, None] * terms))


def rate_distortion_hamming(
    row_probs, *, distortion: float | None = None, rate: float | None = None
) -> tuple[np.ndarray, float, float, dict]:
    """One-row Hamming rate–distortion: the optimal channel for a per-row distortion or rate.

    Give exactly one of ``distortion`` (per row, ``min I s.t. E d ≤ distortion``) or ``rate``
    (per row, nats; ``min E d s.t. I ≤ rate``).

    Returns
    -------
    kernel : numpy.ndarray
        The optimal one-row channel.
    dist, rate : float
        Its distortion and mutual information (nats).
    certificate : dict
        ``slope`` (λ) and ``duality_gap``: the rate minus Csiszár's lower bound
        ``−λD − Σ π_a ln Z_a − ln max_b Σ_a π_a e^{−λ d(a,b)}/Z_a`` (≈ 0 at the optimum).
    """
    pi = np.asarray(row_probs, dtype=float)
    m = pi.size
    d_max = 1.0 - pi.max()  # constant output at the most likely symbol
    h_x = _entropy(pi)
    const = np.zeros((m, m))
    const[:, int(np.argmax(pi))] = 1.0
    if distortion is not None:
        if distortion >= d_max:
            return const, d_max, 0.0, {"slope": 0.0, "duality_gap": 0.0}
        if distortion <= 0:
            return np.eye(m), 0.0, h_x, {"slope": float("inf"), "duality_gap": 0.0}

        def gap(t: float) -> float:
            return _rd_slope_point(pi, t)[2] - distortion
    else:
        if rate >= h_x:
            return np.eye(m), 0.0, h_x, {"slope": float("inf"), "duality_gap": 0.0}
        if rate <= 0:
            return const, d_max, 0.0, {"slope": 0.0, "duality_gap": 0.0}

        def gap(t: float) -> float:
            return rate - _rd_slope_point(pi, t)[3]

    # D₁(r) increases and R₁(r) decreases in r = e^{−λ} ∈ (0, 1); search in ln r.
    lo = -1.0
    while gap(np.exp(lo)) > 0:
        lo *= 2.0
        if lo < -700:  # e^{-700}: the identity up to rounding
            break
    hi = -1e-13
    if gap(np.exp(lo)) > 0:
        log_r = lo
    elif gap(np.exp(hi)) <= 0:  # the target is within rounding of the constant mechanism
        log_r = hi
    else:
        log_r = brentq(
            lambda u: gap(float(np.exp(u))), lo, hi, xtol=1e-300, rtol=1e-15, maxiter=500
        )
    r = float(np.exp(log_r))
    kernel, q, dist, rate_val = _rd_slope_point(pi, r)
    lam = -log_r
    z = r + (1 - r) * q
    sup = pi > 0
    expo = np.where(np.eye(m, dtype=bool), 1.0, r)
    colsum = np.sum((pi[sup] / z[sup])[:, None] * expo[sup], axis=0)
    lower = float(-lam * dist - np.sum(pi[sup] * np.log(z[sup])) - np.log(colsum.max()))
    rate_val = _one_row_mi(pi, kernel)
    return kernel, dist, rate_val, {"slope": lam, "duality_gap": rate_val - lower}


# ==========================================================================================
# Orbit methods (cross-checks; see the module Notes for their measured limits)
# ==========================================================================================
def _orbit_lp(
    prior: DatabasePrior,
    notion: str,
    epsilon: float,
    parametrisation: str = "mass",
    tol: float = 1e-9,
    time_limit: float = 120.0,
) -> tuple[str, np.ndarray | None, float, dict]:
    """Solve PD-DP / PD-I directly on orbits.

    Variables ``z_T = w_T / s_T`` with the column scale ``s_T`` given by ``parametrisation``:

    * ``"representative"`` — ``s_T = 1``: the entry ``W[x, y]`` of one representative pair;
    * ``"mass"`` — ``s_T = 1/K(T)``: the conditional orbit mass ``P(T | x) = K(T) w_T``, so each
      row constraint is ``Σ_T z_T = 1`` and each neighbour constraint carries only the ratio
      ``K(T)/K(T') = (r_a (T_{a'b} + 1)) / ((r_{a'} + 1) T_ab)`` (order n);
    * ``"joint_mass"`` — ``s_T = 1/(K(T) P(r))``: the joint orbit mass ``P(T)``; neighbour
      constraints carry ``T_ab/(T_{a'b}+1)`` only.

    Neighbour constraint ([004] eq. 15 / eq. 9): ``c_a w_T ≤ e^ε c_{a'} w_{T'}`` with
    ``c ≡ 1`` (DP) or ``c = π`` (identifiability), for every move of :meth:`_OrbitTable.moves`.
    Row constraints: ``Σ_{T: x-type r} K(T) w_T = 1``. Objective ``Σ_T P(r_T) K(T) w_T d(T)``.
    """
    m, n = prior.m, prior.n
    pi = prior.row_probs
    table = _OrbitTable.get(m, n)
    log_pi = _log(pi)
    log_pr = gammaln(n + 1.0) - gammaln(table.x_types + 1.0).sum(axis=1)
    log_pr = log_pr + _log_prior_power(table.x_types, pi)  # ln P(x-type r)
    active = np.isfinite(log_pr)  # x-types inside the support
    if parametrisation == "representative":
        log_s = np.zeros(table.size)
    elif parametrisation == "mass":
        log_s = -table.log_k
    elif parametrisation == "joint_mass":
        log_s = -table.log_k - np.where(active, log_pr, 0.0)
    else:
        raise InputError(
            f"unknown parametrisation {parametrisation!r}: use 'representative', 'mass' or "
            "'joint_mass'",
            "options.parametrisation",
        )
    var = np.flatnonzero(active)
    pos = np.full(table.size, -1)
    pos[var] = np.arange(var.size)
    rows, cols, vals = [], [], []
    count = 0
    for a, _b, a2, src, dst in table.moves():
        if pi[a] <= 0 or pi[a2] <= 0:
            continue
        keep = active[src]
        src, dst = src[keep], dst[keep]
        coef = epsilon if notion == "dp" else epsilon + log_pi[a2] - log_pi[a]
        nr = src.size
        idx = np.arange(count, count + nr)
        rows += [idx, idx]
        cols += [pos[src], pos[dst]]
        vals += [np.ones(nr), -np.exp(coef + log_s[dst] - log_s[src])]
        count += nr
    a_ub = sp.csr_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
        shape=(count, var.size),
    )
    groups, n_groups = np.unique(table.x_group[var], return_inverse=True)
    a_eq = sp.csr_matrix(
        (np.exp(table.log_k[var] + log_s[var]), (n_groups.ravel(), np.arange(var.size))),
        shape=(groups.size, var.size),
    )
    c = np.exp(log_pr[var] + table.log_k[var] + log_s[var]) * table.distance[var]
    t0 = time.perf_counter()
    res = linprog(
        c,
        A_ub=a_ub,
        b_ub=np.zeros(count),
        A_eq=a_eq,
        b_eq=np.ones(groups.size),
        bounds=(0, None),
        method="highs",
        options={
            "primal_feasibility_tolerance": tol,
            "dual_feasibility_tolerance": tol,
            "time_limit": time_limit,
        },
    )
    info = {
        "lp_variables": int(var.size),
        "lp_inequalities": int(count),
        "lp_time_s": time.perf_counter() - t0,
        "parametrisation": parametrisation,
        "highs_message": res.message,
    }
    if _infeasible(res):
        return "infeasible", None, float("nan"), info
    if res.status != 0:
        return "failed", None, float("nan"), info
    log_w = np.full(table.size, -np.inf)
    log_w[var] = _log(np.clip(res.x, 0.0, None)) + log_s[var]
    # rows outside the support: the identity (any row-stochastic choice is valid)
    log_w[~active] = np.where(table.distance[~active] == 0, 0.0, -np.inf)
    return "optimal", log_w, float(res.fun), info


def _orbit_ba(
    prior: DatabasePrior,
    slope: float,
    tol: float = 1e-12,
    max_iter: int = 200_000,
    log_q0: np.ndarray | None = None,
) -> tuple[np.ndarray, float, float, dict]:
    """Blahut–Arimoto for ``min I(X;Y) + λ E d`` on orbits ([002] Remark 2; [004] eq. 94).

    Iterates ``W[x,y] = p_Y(y) e^{−λ d(x,y)} / Z(x)`` and ``p_Y(y) = Σ_x p(x) W[x,y]``, both
    invariant, in log domain: ``p_Y`` depends on the y-type ``s`` only and ``Z`` on the x-type
    only. Stops when the Csiszár bound gap falls below ``tol``.

    Returns ``(log_w, distortion, mutual_information, info)``.
    """
    m, n = prior.m, prior.n
    table = _OrbitTable.get(m, n)
    lpx = _log_prior_power(table.x_types, prior.row_probs)  # ln p(x) for x of type r
    log_q = np.full(table.n_y_groups, -n * np.log(m)) if log_q0 is None else log_q0.copy()
    base = -slope * table.distance
    gap = np.inf
    it = 0
    while it < max_iter:
        it += 1
        # ln Z(r) = ln Σ_{T: r} K(T) p_Y(s_T) e^{−λ d(T)}
        log_z = _group_logsumexp(
            table.log_k + log_q[table.y_group] + base, table.x_group, table.n_x_groups
        )
        # c(y) = Σ_x p(x) e^{−λ d(x,y)} / Z(x) = Σ_{T: s} C(T) π^{r_T} e^{−λ d(T)} / Z(r_T)
        log_c = _group_logsumexp(
            table.log_c + lpx + base - log_z[table.x_group], table.y_group, table.n_y_groups
        )
        # Csiszár: min(I + λD) ≥ −Σ_x p(x) ln Z(x) − ln max_y c(y), and Σ_y p_Y(y) c(y) = 1,
        # so ln max_y c(y) ≥ 0 bounds the gap of the current iterate; it vanishes at the optimum
        gap = float(log_c.max())
        if gap < tol:
            break
        log_q = log_q + log_c  # p_Y ← p_Y · c (the BA update)
    log_w = log_q[table.y_group] + base
    log_z = _group_logsumexp(table.log_k + log_w, table.x_group, table.n_x_groups)
    log_w = log_w - log_z[table.x_group]
    mech = SymmetricMechanism(m, n, log_weights=log_w)
    stats = _orbit_measures(mech, prior, "mutual_information")
    return (
        log_w,
        stats["distortion"],
        stats["level"],
        {"iterations": it, "ba_gap": gap, "log_q": log_q},
    )


# ==========================================================================================
# Measures on the reduced representation
# ==========================================================================================
def _orbit_measures(mech: SymmetricMechanism, prior: DatabasePrior, notion: str) -> dict:
    """Level, distortion and row sums computed orbit by orbit (no dense matrix)."""
    table = _OrbitTable.get(mech.m, mech.n)
    pi = np.asarray(prior.row_probs, dtype=float)
    log_w = mech.log_weights
    lpx = _log_prior_power(table.x_types, pi)
    active = np.isfinite(lpx)
    # row sums: Σ_{T: x-type r} K(T) w_T for every x-type (all rows, not only the support)
    row_log = _group_logsumexp(table.log_k + log_w, table.x_group, table.n_x_groups)
    row_err = float(np.max(np.abs(np.expm1(row_log))))
    log_mass = table.log_pairs + lpx + log_w  # ln P(T)
    mass = np.exp(log_mass)
    distortion = float(mass @ table.distance)
    if notion == "mutual_information":
        # p_Y(y) for y of type s: Σ_{T: s} C(T) p(x_T) w_T
        log_py = _group_logsumexp(table.log_c + lpx + log_w, table.y_group, table.n_y_groups)
        used = mass > 0
        level = float(np.sum(mass[used] * (log_w[used] - log_py[table.y_group[used]])))
        level = max(level, 0.0)
    else:
        log_pi = _log(pi)
        level = 0.0
        for a, _b, a2, src, dst in table.moves():
            if pi[a] <= 0 or pi[a2] <= 0:
                continue
            keep = active[src]
            num, den = log_w[src[keep]], log_w[dst[keep]]
            if notion == "identifiability":
                num, den = num + log_pi[a], den + log_pi[a2]
            fin_num, fin_den = np.isfinite(num), np.isfinite(den)
            if (fin_num & ~fin_den).any():  # w_T > 0 = w_T' on a used output
                return {"level": float("inf"), "distortion": distortion, "row_error": row_err}
            both = fin_num & fin_den  # pairs with w_T = 0 bound nothing
            diff = num[both] - den[both]
            if diff.size:
                level = max(level, float(diff.max()))
    return {"level": level, "distortion": distortion, "row_error": row_err}


def _kernel_measures(mech: SymmetricMechanism, prior: DatabasePrior, notion: str) -> dict:
    """The same measures for a product mechanism ``B^{⊗n}``, from the one-row channel:
    DP / identifiability level = one-row level over pairs of supported values (neighbours
    differ in one factor), ``E d = n Σ π_a (1 − B_aa)``, ``I = n I(π, B)``."""
    pi = np.asarray(prior.row_probs, dtype=float)
    kern, n = mech.kernel, mech.n
    row_err = float(np.max(np.abs(kern.sum(axis=1) - 1.0)))
    distortion = float(n * np.sum(pi * (1 - np.diag(kern))))
    if notion == "mutual_information":
        return {"level": n * _one_row_mi(pi, kern), "distortion": distortion, "row_error": row_err}
    sup = np.flatnonzero(pi > 0)
    sub = kern[sup]
    if notion == "identifiability":
        sub = sub * pi[sup, None]
    used = sub.max(axis=0) > 0
    sub = sub[:, used]
    if sub.size == 0 or sup.size < 2:
        return {"level": 0.0, "distortion": distortion, "row_error": row_err}
    if (sub.min(axis=0) == 0).any():
        return {"level": float("inf"), "distortion": distortion, "row_error": row_err}
    level = float(np.max(np.log(sub.max(axis=0) / sub.min(axis=0))))
    return {"level": max(level, 0.0), "distortion": distortion, "row_error": row_err}


def verify_symmetric(
    result: AlgorithmResult | SymmetricMechanism,
    prior: DatabasePrior,
    notion: str,
    epsilon: float | None = None,
    *,
    tol: float = 1e-9,
    use: str = "auto",
) -> dict[str, Any]:
    """Re-measure a symmetric mechanism on its reduced representation.

    * DP / identifiability level: ``max`` over neighbouring orbits ``T → T'`` (one row of x
      changed) of ``ln w_T/w_{T'}`` (DP, [004] Def. 3) or ``ln π_a w_T/(π_{a'} w_{T'})``
      (identifiability, [004] Def. 2), over secrets in the support and outputs with
      ``p(y) > 0``;
    * mutual information ``Σ_T P(T) ln(w_T / p_Y(s_T))`` ([004] Def. 4) with ``p_Y`` per y-type;
    * distortion ``Σ_T P(T) d(T)`` with the orbit mass ``P(T) = (n!/Π T_ab!) Π π_a^{r_a} w_T``;
    * row sums ``Σ_{T: x-type r} K(T) w_T`` for every x-type.

    Parameters
    ----------
    result : AlgorithmResult or SymmetricMechanism
    prior : DatabasePrior
        With ``row_probs``.
    notion : str
        ``"dp"``, ``"identifiability"`` or ``"mutual_information"``.
    epsilon : float, optional
        If given, ``level_ok`` reports ``level ≤ epsilon + tol``.
    tol : float
        Tolerance for ``row_sums_ok`` and ``level_ok``.
    use : str
        ``"orbits"`` (enumerate joint types), ``"kernel"`` (product form only) or ``"auto"``
        (orbits when there are at most :data:`MAX_ORBITS`, else the kernel).

    Returns
    -------
    dict
        ``level``, ``distortion``, ``row_sums_ok``, ``max_row_sum_error``, ``level_ok`` (or
        None), ``via`` (``"orbits"`` or ``"kernel"``), ``n_orbits``.
    """
    mech = result.lazy_mechanism if isinstance(result, AlgorithmResult) else result
    if not isinstance(mech, SymmetricMechanism):
        raise InputError("needs a SymmetricMechanism (or a result holding one)", "result")
    notion = _notion(notion)
    if not isinstance(prior, DatabasePrior) or not prior.is_iid:
        raise InputError("needs a DatabasePrior with row_probs (i.i.d. rows)", "prior")
    if (prior.m, prior.n) != (mech.m, mech.n):
        raise InputError("prior and mechanism disagree on m or n", "prior")
    if use == "auto":
        use = "orbits" if mech.n_orbits <= MAX_ORBITS or mech.kernel is None else "kernel"
    if use == "kernel":
        if mech.kernel is None:
            raise InputError("kernel verification needs a product mechanism", "use")
        stats = _kernel_measures(mech, prior, notion)
    elif use == "orbits":
        stats = _orbit_measures(mech, prior, notion)
    else:
        raise InputError(f"unknown mode {use!r}: 'auto', 'orbits' or 'kernel'", "use")
    return {
        "level": stats["level"],
        "distortion": stats["distortion"],
        "row_sums_ok": bool(stats["row_error"] <= tol),
        "max_row_sum_error": stats["row_error"],
        "level_ok": None if epsilon is None else bool(stats["level"] <= epsilon + tol),
        "via": use,
        "n_orbits": mech.n_orbits,
    }


# ==========================================================================================
# Algorithm glue
# ==========================================================================================
def _notion(notion: str) -> str:
    try:
        return NOTION_ALIASES[notion]
    except KeyError:
        raise InputError(
            f"the symmetric fast path solves {sorted(NOTION_ALIASES)}, not {notion!r}", "notion"
        ) from None


def _hamming_ok(prior, neighbors) -> bool:
    if neighbors is None or neighbors == "hamming":
        return True
    if isinstance(neighbors, NeighborRelation):
        return neighbors.kind == "hamming" and neighbors.size == prior.m**prior.n
    return False


def applies_symmetric(prior, distortion, notion, mode, **options) -> bool:
    """Whether the symmetric fast path solves this instance.

    Needs a :class:`~privopt.model.DatabasePrior` with i.i.d. rows (``row_probs``), the
    row-wise Hamming distortion on the same ``(m, n)``, Hamming neighbours, and a notion
    among dp / identifiability (epsilon or max_distortion mode) and mutual_information.
    """
    if notion not in NOTION_ALIASES or mode not in ("epsilon", "max_distortion"):
        return False
    if not isinstance(prior, DatabasePrior) or not prior.is_iid:
        return False
    if not isinstance(distortion, Distortion) or not distortion.is_database_hamming:
        return False
    if (distortion.params.get("m"), distortion.params.get("n")) != (prior.m, prior.n):
        return False
    if not _hamming_ok(prior, options.get("neighbors")):
        return False
    method = options.get("method", "single_letter")
    if method not in METHODS:
        return False
    if method != "single_letter":
        if orbit_count(prior.m, prior.n) > MAX_ORBIT_SOLVE:
            return False
        if method == "orbit_lp" and (
            NOTION_ALIASES[notion] == "mutual_information" or mode != "epsilon"
        ):
            return False
        if method == "orbit_ba" and NOTION_ALIASES[notion] != "mutual_information":
            return False
    return True


def _dp_like_max_distortion(pi, notion, n, budget, tol):
    """Least ε with ``n D₁*(ε) ≤ budget`` by bisection on the one-row LP (D₁* is
    non-increasing in ε, [002] Thm 2 proof / spec §2.5)."""
    per_row = budget / n
    lo = 0.0
    if notion == "identifiability":
        p = pi[pi > 0]
        lo = float(np.log(p.max() / p.min()))  # ε_X: PD-I infeasible below ([004] Lemma 3)

    def value(eps):
        status, kern, val, cert = single_row_lp(pi, notion, eps)
        return (val if status == "optimal" else np.inf), kern, cert

    v_lo, k_lo, c_lo = value(lo)
    if v_lo <= per_row + 1e-15:
        return "optimal", lo, k_lo, c_lo, 0
    if per_row <= 0:
        return "infeasible", float("inf"), None, {}, 0
    hi = max(1.0, 2 * lo)
    v_hi, k_hi, c_hi = value(hi)
    while v_hi > per_row:
        hi *= 2
        if hi > 2048:  # single_row_lp caps ε at 700 (e^{−ε} underflows past 745)
            return "infeasible", float("inf"), None, {}, 0
        v_hi, k_hi, c_hi = value(hi)
    it = 0
    while hi - lo > min(tol, 1e-12) * max(1.0, hi) and it < 200:
        mid = 0.5 * (lo + hi)
        v_mid, k_mid, c_mid = value(mid)
        if v_mid <= per_row:
            hi, k_hi, c_hi = mid, k_mid, c_mid
        else:
            lo = mid
        it += 1
    return "optimal", hi, k_hi, {**c_hi, "lower_bound_epsilon": lo}, it


def solve_symmetric(
    prior: DatabasePrior,
    distortion: Distortion,
    notion: str,
    *,
    epsilon: float | None = None,
    max_distortion: float | None = None,
    neighbors=None,
    tol: float = 1e-9,
    warm_start=None,
    method: str = "single_letter",
    parametrisation: str = "mass",
    **options,
) -> AlgorithmResult:
    """Solve PD-DP, PD-I or PD-MIP on an exchangeable database prior by symmetry reduction.

    Parameters
    ----------
    prior : DatabasePrior
        With ``row_probs`` (i.i.d. rows).
    distortion : Distortion
        :meth:`Distortion.database_hamming` on the same ``(m, n)``.
    notion : str
        ``"dp"``, ``"identifiability"`` or ``"mutual_information"``.
    epsilon, max_distortion : float
        Exactly one: epsilon mode (``min E d`` s.t. level ≤ ε) or max_distortion mode (least
        level s.t. ``E d ≤ max_distortion``).
    neighbors : None, "hamming" or NeighborRelation of kind "hamming"
    tol : float
        Solver tolerance.
    warm_start : ignored
    method : str
        ``"single_letter"`` (default, exact; see the module docstring), ``"orbit_lp"``
        (dp / identifiability in epsilon mode, orbit LP) or ``"orbit_ba"`` (mutual
        information, Blahut–Arimoto on orbits at the slope found by bisection).
    parametrisation : str
        For ``"orbit_lp"``: ``"mass"``, ``"joint_mass"`` or ``"representative"``.

    Returns
    -------
    AlgorithmResult
        ``lazy_mechanism`` is a :class:`SymmetricMechanism`; ``mechanism`` is dense when
        ``mⁿ ≤`` :data:`MAX_DENSE`. ``certificate["verification"]`` is the output of
        :func:`verify_symmetric` on the answer (level, distortion, row sums, measured on the
        orbits); ``info["kernel"]`` holds the one-row channel of a product answer. An
        infeasible answer carries ``least_achievable`` and ``quantity`` in ``info`` and
        ``certificate``.
    """
    t0 = time.perf_counter()
    notion = _notion(notion)
    mode = "epsilon" if epsilon is not None else "max_distortion"
    if (epsilon is None) == (max_distortion is None):
        raise InputError("give exactly one of epsilon and max_distortion", "privacy")
    given = float(epsilon if epsilon is not None else max_distortion)
    if not given >= 0:
        raise InputError(f"must be a number ≥ 0, got {given}", mode)
    if not applies_symmetric(prior, distortion, notion, mode, neighbors=neighbors, method=method):
        raise InputError(
            "the symmetric fast path needs a DatabasePrior with row_probs, the database Hamming "
            "distortion on the same (m, n), Hamming neighbours and a supported method/notion",
            "solver",
        )
    m, n = prior.m, prior.n
    pi = np.asarray(prior.row_probs, dtype=float)
    info: dict[str, Any] = {"method": method, "m": m, "n": n, "n_orbits": orbit_count(m, n)}
    certificate: dict[str, Any] = {}
    iterations = 0
    mech: SymmetricMechanism | None = None

    if method == "orbit_lp":
        if mode != "epsilon":
            raise InputError("orbit_lp solves epsilon mode only", "solver.method")
        status, log_w, value, lp_info = _orbit_lp(
            prior, notion, float(epsilon), parametrisation, tol
        )
        info.update(lp_info)
        if status == "optimal":
            mech = SymmetricMechanism(m, n, log_weights=log_w)
    elif method == "orbit_ba":
        status, mech, ba_info = _solve_orbit_ba(prior, epsilon, max_distortion, tol)
        info.update(ba_info)
        iterations = ba_info.get("iterations", 0)
    elif notion == "mutual_information":
        if mode == "epsilon":
            kern, d1, r1, cert = rate_distortion_hamming(pi, rate=float(epsilon) / n)
        else:
            kern, d1, r1, cert = rate_distortion_hamming(pi, distortion=max_distortion / n)
        status = "optimal"
        certificate = {
            "slope": cert["slope"],
            "duality_gap": n * cert["duality_gap"],
            "reduction": "single-letter rate-distortion",
        }
        mech = SymmetricMechanism(m, n, kernel=kern)
    elif mode == "epsilon":
        status, kern, value, cert = single_row_lp(pi, notion, float(epsilon), min(tol, 1e-10))
        if status == "optimal":
            mech = SymmetricMechanism(m, n, kernel=kern)
            certificate = {
                "lower_bound": n * cert["dual_value"],
                "duality_gap": n * cert["duality_gap"],
                "reduction": "single-letter LP",
            }
    else:
        status, _eps, kern, cert, iterations = _dp_like_max_distortion(
            pi, notion, n, float(max_distortion), tol
        )
        if status == "optimal":
            mech = SymmetricMechanism(m, n, kernel=kern)
            certificate = {**cert, "reduction": "single-letter LP + bisection"}

    if status != "optimal" or mech is None:
        if status == "infeasible":
            p = pi[pi > 0]
            if notion == "identifiability" and mode == "epsilon":
                certificate = {
                    "least_achievable": float(np.log(p.max() / p.min())),
                    "quantity": "epsilon",
                }
            elif mode == "max_distortion":
                certificate = {"least_achievable": 0.0, "quantity": "distortion"}
            info.update(certificate)
        info["time_s"] = time.perf_counter() - t0
        return AlgorithmResult(
            status=status, certificate=certificate, info=info, iterations=iterations
        )

    use = "orbits" if mech.kernel is None or mech.n_orbits <= MAX_VERIFY_ORBITS else "kernel"
    stats = verify_symmetric(mech, prior, notion, epsilon, tol=max(tol, 1e-9), use=use)
    if mech.kernel is not None:
        info["kernel"] = mech.kernel
    # the structured re-measurement, independent of the solve, for the solver layer to check
    certificate["verification"] = stats
    dense = mech.to_dense() if mech.size <= MAX_DENSE else None
    # epsilon mode: the optimal E[d]; max_distortion mode: the least level (measured)
    objective = stats["distortion"] if mode == "epsilon" else stats["level"]
    info["time_s"] = time.perf_counter() - t0
    return AlgorithmResult(
        status="optimal",
        objective=float(objective),
        mechanism=dense,
        lazy_mechanism=mech,
        level=stats["level"],
        distortion=stats["distortion"],
        iterations=iterations,
        certificate=certificate,
        info=info,
    )


def _solve_orbit_ba(prior, epsilon, max_distortion, tol):
    """Orbit Blahut–Arimoto with bisection on the slope (cross-check for the MI fast path)."""
    n = prior.n
    target_is_distortion = max_distortion is not None
    target = max_distortion if target_is_distortion else epsilon
    pi = np.asarray(prior.row_probs, dtype=float)
    h_x = n * _entropy(pi)
    d_max = n * (1 - pi.max())
    m = prior.m
    if (target_is_distortion and target >= d_max) or (not target_is_distortion and target <= 0):
        kern = np.zeros((m, m))
        kern[:, int(np.argmax(pi))] = 1.0
        return "optimal", SymmetricMechanism(m, n, kernel=kern), {"iterations": 0}
    if (target_is_distortion and target <= 0) or (not target_is_distortion and target >= h_x):
        return "optimal", SymmetricMechanism(m, n, kernel=np.eye(m)), {"iterations": 0}
    total = 0
    lo, hi = 0.0, 1.0
    log_q = None

    def run(lam, log_q):
        log_w, d, i_xy, inf = _orbit_ba(prior, lam, tol=min(tol, 1e-11), log_q0=log_q)
        return log_w, d, i_xy, inf

    # D(λ) decreases, I(λ) increases in λ
    def too_loose(d, i_xy):
        return d > target if target_is_distortion else i_xy < target

    while True:
        log_w, d, i_xy, inf = run(hi, log_q)
        total += inf["iterations"]
        if not too_loose(d, i_xy):
            break
        lo, hi = hi, 2 * hi
        if hi > 1e3:
            return "failed", None, {"iterations": total}
    best = log_w
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        log_w, d, i_xy, inf = run(mid, log_q)
        total += inf["iterations"]
        log_q = inf["log_q"]
        if too_loose(d, i_xy):
            lo = mid
        else:
            hi, best = mid, log_w
        if hi - lo < 1e-12 * max(1.0, hi):
            break
    return "optimal", SymmetricMechanism(m, n, log_weights=best), {"iterations": total, "slope": hi}


ALGORITHM = register(
    Algorithm(
        name="symmetric",
        notions=("dp", "identifiability", "mutual_information"),
        applies=applies_symmetric,
        solve=solve_symmetric,
        priority=50,
        description=(
            "Exchangeable (i.i.d.-row) database priors with row-wise Hamming distortion and "
            "Hamming neighbours: exact single-letter reduction (one-row LP for dp / "
            "identifiability, water-filling rate-distortion for mutual information), answer held "
            "by orbit (joint type) in a SymmetricMechanism"
        ),
    )
)
