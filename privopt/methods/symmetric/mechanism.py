"""A row-permutation-invariant mechanism on ``Dⁿ``, held by orbit (joint type)."""

from __future__ import annotations

__all__ = ["SymmetricMechanism", "MAX_DENSE", "MAX_DENSE_ROW"]

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from scipy.special import logsumexp

from privopt._docstrings import sections_of
from privopt.errors import InputError
from privopt.methods.symmetric.orbits import (
    OrbitTable,
    _all_digits,
    _log,
    log_prior_power,
    orbit_count,
)
from privopt.model import DatabasePrior

if TYPE_CHECKING:  # annotations only: nothing more is imported at run time
    from numpy.typing import ArrayLike

#: Largest ``m**n`` for which the dense mechanism is returned in an answer.
MAX_DENSE = 4096
#: Largest ``m**n`` for which :meth:`SymmetricMechanism.row` builds a dense row.
MAX_DENSE_ROW = 2**22


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
        The one-row channel ``B`` (rows sum to 1), shape ``(m, m)``. Only the shape is
        checked.
    log_weights : array_like, optional
        ``ln W[x, y]`` per orbit (``−inf`` for zero): :func:`orbit_count` ``(m, n)`` entries
        in the order of :func:`joint_types`.

    Raises
    ------
    InputError
        If not exactly one of ``kernel`` and ``log_weights`` is given, the kernel is not
        ``m × m``, or ``log_weights`` does not hold one entry per joint type.
    """

    def __init__(
        self,
        m: int,
        n: int,
        *,
        kernel: ArrayLike | None = None,
        log_weights: ArrayLike | None = None,
    ) -> None:
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
        """``mⁿ``, the number of databases (``int``: a Python int, possibly huge)."""
        return self.m**self.n

    @property
    def shape(self) -> tuple[int, int]:
        """``(mⁿ, mⁿ)``: the shape of the mechanism it stands for (``tuple[int, int]``)."""
        return (self.size, self.size)

    @property
    def is_product(self) -> bool:
        """Whether the mechanism is stored as a product ``B^{⊗n}`` of its kernel (``bool``)."""
        return self.kernel is not None

    @property
    def n_orbits(self) -> int:
        """Number of orbits (joint types) ``C(n + m² − 1, m² − 1)`` (``int``, a Python int)."""
        return orbit_count(self.m, self.n)

    @property
    def types(self) -> np.ndarray:
        """The joint types (``numpy.ndarray`` of int64, shape ``(n_orbits, m, m)``), enumerated
        on demand."""
        return OrbitTable.get(self.m, self.n).types

    @property
    def log_weights(self) -> np.ndarray:
        """``ln W[x, y]`` for one pair of each orbit, in the order of :attr:`types`
        (``numpy.ndarray`` of float, ``n_orbits`` entries; computed from the kernel on first
        use)."""
        if self._log_weights is None:
            self._log_weights = self.log_weight(self.types)
        return self._log_weights

    def log_weight(self, types: np.ndarray) -> np.ndarray:
        """``ln W[x, y]`` for joint types of shape ``(..., m, m)``.

        Parameters
        ----------
        types : numpy.ndarray
            Joint types, integer arrays of shape ``(..., m, m)`` whose entries sum to ``n``
            (see :meth:`joint_type`); not checked.

        Returns
        -------
        numpy.ndarray
            Shape ``(...)``: ``ln W[x, y]`` of a pair of each type (``−inf`` where it is 0).
        """
        types = np.asarray(types)
        if self.kernel is not None:
            log_b = _log(self.kernel)
            with np.errstate(invalid="ignore"):
                terms = np.where(types > 0, types * log_b, 0.0)
            return terms.sum(axis=(-2, -1))
        table = OrbitTable.get(self.m, self.n)
        return self._log_weights[table.index(types)]

    def orbit_log_masses(self, prior: DatabasePrior) -> np.ndarray:
        """``ln P(joint type = T)`` under the prior (the orbit's probability mass).

        Parameters
        ----------
        prior : DatabasePrior
            A prior with i.i.d. rows (its ``row_probs``, length ``m``, are used; its ``n``
            is not compared with the mechanism's).

        Returns
        -------
        numpy.ndarray
            Shape ``(n_orbits,)``, in the order of :attr:`types`: natural logs of
            probabilities, so ``≤ 0`` (``−inf`` for an orbit of probability 0).
        """
        table = OrbitTable.get(self.m, self.n)
        log_px = log_prior_power(table.x_types, prior.row_probs)
        return table.log_pairs + log_px + self.log_weights

    # --- indices ------------------------------------------------------------------------
    def digits(self, x: int | Sequence[int] | np.ndarray) -> np.ndarray:
        """The entries ``(x_1, …, x_n)`` of a database given by index or digit sequence.

        Parameters
        ----------
        x : int or sequence of int
            A database: its index in ``0 … mⁿ−1`` (lexicographic, ``x_1`` most significant)
            or its ``n`` symbols in ``0 … m−1``.

        Returns
        -------
        numpy.ndarray
            Shape ``(n,)``, int64, entries in ``0 … m−1``.

        Raises
        ------
        InputError
            If an index lies outside ``0 … mⁿ−1`` or a sequence is not ``n`` symbols in
            ``0 … m−1`` (field ``x``).
        """
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
        """Lexicographic index (x_1 most significant) of a digit sequence.

        Parameters
        ----------
        digits : sequence of int
            ``n`` symbols in ``0 … m−1`` (an index is accepted too and returned unchanged).

        Returns
        -------
        int
            The index, in ``0 … mⁿ−1`` (a Python int, possibly huge).

        Raises
        ------
        InputError
            If ``digits`` is not ``n`` symbols in ``0 … m−1`` (field ``x``).
        """
        out = 0
        for d in self.digits(digits):
            out = out * self.m + int(d)
        return out

    def joint_type(
        self, x: int | Sequence[int] | np.ndarray, y: int | Sequence[int] | np.ndarray
    ) -> np.ndarray:
        """``T[a, b] = #{i : x_i = a, y_i = b}``.

        Parameters
        ----------
        x, y : int or sequence of int
            The input and the output database: each an index in ``0 … mⁿ−1`` (lexicographic,
            ``x_1`` most significant) or ``n`` symbols in ``0 … m−1``.

        Returns
        -------
        numpy.ndarray
            Shape ``(m, m)``, int64, entries summing to ``n``.

        Raises
        ------
        InputError
            If ``x`` or ``y`` is an index outside ``0 … mⁿ−1`` or not ``n`` symbols in
            ``0 … m−1`` (field ``x``).
        """
        dx, dy = self.digits(x), self.digits(y)
        out = np.zeros((self.m, self.m), dtype=np.int64)
        np.add.at(out, (dx, dy), 1)
        return out

    # --- entries ------------------------------------------------------------------------
    @sections_of(joint_type)
    def log_probability(
        self, x: int | Sequence[int] | np.ndarray, y: int | Sequence[int] | np.ndarray
    ) -> float:
        """``ln p(y | x)``.

        Returns
        -------
        float
            ``ln p(y | x) ≤ 0`` (``−inf`` when it is 0).
        """
        return float(self.log_weight(self.joint_type(x, y)))

    @sections_of(joint_type)
    def probability(
        self, x: int | Sequence[int] | np.ndarray, y: int | Sequence[int] | np.ndarray
    ) -> float:
        """``p(y | x)`` for databases given by index or digit sequence.

        Returns
        -------
        float
            ``p(y | x)``, in ``[0, 1]``.
        """
        return float(np.exp(self.log_probability(x, y)))

    @sections_of(digits, ("Parameters",))
    def row(self, x: int | Sequence[int] | np.ndarray) -> np.ndarray:
        """``p(· | x)`` as a dense vector over the ``mⁿ`` outputs (lexicographic order).

        Returns
        -------
        numpy.ndarray
            Shape ``(mⁿ,)``, entries in ``[0, 1]`` summing to 1.

        Raises
        ------
        InputError
            If ``mⁿ`` exceeds :data:`MAX_DENSE_ROW` (field ``mechanism``) or ``x`` is not a
            database (field ``x``).
        """
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
        table = OrbitTable.get(self.m, self.n)
        dy = _all_digits(self.m, self.n)
        keys = np.zeros(dy.shape[0], dtype=np.int64)
        kw = table.key_weights.reshape(self.m, self.m)
        for j in range(self.n):
            keys += kw[dx[j], dy[:, j]]
        return np.exp(self._log_weights)[table.lookup(keys)]

    def to_dense(self, max_size: int = MAX_DENSE) -> np.ndarray:
        """The ``mⁿ × mⁿ`` matrix (only when ``mⁿ ≤ max_size``).

        Parameters
        ----------
        max_size : int
            The largest number of databases ``mⁿ`` accepted (default :data:`MAX_DENSE`,
            4096).

        Returns
        -------
        numpy.ndarray
            ``W[x, y] = p(y | x)``, shape ``(mⁿ, mⁿ)``, rows and columns in lexicographic
            order.

        Raises
        ------
        InputError
            If ``mⁿ > max_size`` (field ``mechanism``).
        """
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
        table = OrbitTable.get(self.m, self.n)
        kw = table.key_weights.reshape(self.m, self.m)
        keys = np.zeros((1, 1), dtype=np.int64)
        for _ in range(self.n):
            keys = (keys[:, None, :, None] + kw[None, :, None, :]).reshape(
                keys.shape[0] * self.m, keys.shape[1] * self.m
            )
        return np.exp(self._log_weights)[table.lookup(keys)]

    # --- sampling -----------------------------------------------------------------------
    def sample(
        self,
        x: int | Sequence[int] | np.ndarray,
        rng: np.random.Generator | int | None = None,
        size: int | None = None,
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
            The random generator, or a seed for :func:`numpy.random.default_rng` (default:
            fresh entropy).
        size : int, optional
            Number of independent draws; ``None`` for one.

        Returns
        -------
        numpy.ndarray
            The digits ``(y_1, …, y_n)``, shape ``(n,)`` or ``(size, n)``;
            :meth:`index` converts one to an index.

        Raises
        ------
        InputError
            If ``x`` is not a database (field ``x``).
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
            table = OrbitTable.get(self.m, self.n)
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

    # --- description and leakage --------------------------------------------------------
    kind = "symmetric"

    def describe(self) -> dict:
        """A compact, JSON-ready description: the one-row kernel of a product mechanism
        (``W[x, y] = Π_i B[x_i, y_i]``), else ``ln w_T`` per joint type.

        Returns
        -------
        dict
            Keys ``kind`` (``"symmetric"``), ``m``, ``n``, ``rule`` (the formula in words)
            and either ``kernel`` (a list of ``m`` rows) or ``log_weights`` (a list of
            floats, one per joint type).
        """
        out = {"kind": self.kind, "m": self.m, "n": self.n}
        if self.kernel is not None:
            out["rule"] = "W[x, y] = prod_i B[x_i, y_i] (rows x and y in lexicographic order)"
            out["kernel"] = self.kernel.tolist()
        else:
            out["rule"] = "W[x, y] = exp(log_weights[T]) with T the joint type of (x, y)"
            out["log_weights"] = [float(v) for v in self.log_weights]
        return out

    @classmethod
    def from_description(cls, data: dict) -> SymmetricMechanism:
        """The mechanism of :meth:`describe`.

        Parameters
        ----------
        data : dict
            A description as :meth:`describe` writes it: ``m``, ``n`` and either ``kernel``
            or ``log_weights`` (``kind`` and ``rule`` are ignored).

        Returns
        -------
        SymmetricMechanism
            The mechanism described.

        Raises
        ------
        InputError
            If a key is missing, a value cannot be read as numbers, ``m < 2`` or ``n < 1``,
            the kernel is not ``m × m`` with rows that are pmfs, or a log-weight is positive
            or nan.
        """
        try:
            m, n = int(data["m"]), int(data["n"])
            kernel = np.asarray(data["kernel"], dtype=float) if "kernel" in data else None
            log_weights = (
                None if kernel is not None else np.asarray(data["log_weights"], dtype=float)
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(
                f"not a symmetric mechanism description ({exc})", "mechanism"
            ) from None
        if m < 2 or n < 1:
            raise InputError(f"needs m ≥ 2 and n ≥ 1, got m = {m}, n = {n}", "mechanism")
        if kernel is not None:
            if kernel.shape != (m, m) or not np.isfinite(kernel).all():
                raise InputError(f"kernel must be {m}×{m} finite numbers", "mechanism.kernel")
            if kernel.min() < -1e-12 or np.abs(kernel.sum(axis=1) - 1.0).max() > 1e-9:
                raise InputError(
                    "kernel rows must be pmfs (non-negative, summing to 1)", "mechanism.kernel"
                )
            return cls(m, n, kernel=np.clip(kernel, 0.0, None))
        if np.isnan(log_weights).any() or (log_weights > 1e-12).any():
            raise InputError(
                "log_weights must be logs of probabilities (≤ 0, no nan)", "mechanism.log_weights"
            )
        return cls(m, n, log_weights=log_weights)

    def leakage(self, prior: DatabasePrior) -> dict[str, float]:
        """The standard leakage report, computed on the one-row kernel (product mechanisms on
        i.i.d. priors; nothing of size ``mⁿ`` is built).

        For ``W = B^{⊗n}`` and rows i.i.d. ``π``, the joint law is a product over the rows, so
        every per-output or per-pair measure adds up row by row: mutual information, maximum
        information leakage, PML, maximal leakage, information privacy and LDP are ``n`` times
        the one-row measure of ``(π, B)``; with Hamming neighbours (one row changes) the DP
        level is the one-row LDP level and the identifiability level the one-row LDI level.

        Parameters
        ----------
        prior : DatabasePrior
            With ``row_probs`` on the same ``(m, n)`` (both checked).

        Returns
        -------
        dict
            Notion → level (nats): the keys ``mutual_information``,
            ``max_information_leakage``, ``pml``, ``maximal_leakage``,
            ``information_privacy``, ``identifiability``, ``dp`` and ``ldp``, each ``≥ 0``.

        Raises
        ------
        InputError
            If the mechanism is not a product or the prior's rows are not i.i.d., or the
            prior's ``(m, n)`` differs from the mechanism's.
        """
        from privopt import measures

        if self.kernel is None or not getattr(prior, "is_iid", False):
            raise InputError(
                "the structured report needs a product mechanism and i.i.d. rows", "mechanism"
            )
        if (prior.m, prior.n) != (self.m, self.n):
            raise InputError(
                f"the prior is on {prior.m}^{prior.n} databases, the mechanism on "
                f"{self.m}^{self.n}",
                "prior",
            )
        one, kern, n = prior.row_probs, self.kernel, self.n
        return {
            "mutual_information": n * measures.mutual_information(one, kern),
            "max_information_leakage": n * measures.max_information_leakage(one, kern),
            "pml": n * measures.pml_level(one, kern),
            "maximal_leakage": n * measures.maximal_leakage(one, kern),
            "information_privacy": n * measures.information_privacy_level(one, kern),
            "identifiability": measures.ldi_level(one, kern),
            "dp": measures.ldp_level(one, kern),
            "ldp": n * measures.ldp_level(one, kern),
        }

    def __repr__(self) -> str:
        form = "product kernel" if self.kernel is not None else f"{self.n_orbits} orbits"
        return f"SymmetricMechanism(m={self.m}, n={self.n}, {form})"
