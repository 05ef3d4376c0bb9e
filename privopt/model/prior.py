"""Priors: what the designer knows about the secret and the observed data.

Three forms share one small protocol (the ``[prior]`` table of a problem file):

* :class:`Prior` — a single secret ``X``; the mechanism sees ``X`` itself.
* :class:`JointPrior` — [Calmon-Fawaz]: a private ``S`` and an observed ``Y`` with joint
  ``p(s, y)``; the mechanism maps ``Y`` to ``U`` and the adversary's channel is
  ``p(u|s) = Σ_y p(y|s) p(u|y)`` ([Calmon-Fawaz] eq. 16), linear in the design variable.
* :class:`DatabasePrior` — [Wang-Ying-Zhang]: a database ``X = (x_1, …, x_n)`` in ``Dⁿ`` with
  ``|D| = m``, enumerated lexicographically (``x_1`` most significant).

The protocol, used by every later layer:

``input_probs`` / ``input_labels``
    the pmf and labels of what the mechanism sees (``Y``; ``X`` for a single secret).
``secret_probs`` / ``secret_labels``
    the pmf and labels of what must stay private (``S``; ``X`` for a single secret).
``observation``
    ``p(y|s)`` as an ``|S| × |Y|`` matrix, or ``None`` when the secret is the input.
``induced_channel(W)``
    ``p(u|s)`` for a mechanism ``W = p(u|y)``; works on numpy arrays and cvxpy expressions.
"""

from __future__ import annotations

__all__ = ["Prior", "JointPrior", "DatabasePrior", "as_prior", "MAX_MATERIALISED_DATABASES"]

from collections.abc import Sequence
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from privopt.errors import InputError
from privopt.model._validate import (
    SUM_TOLERANCE,
    as_labels,
    as_pmf,
    as_positive_int,
    as_real_array,
    check_nonnegative,
)
from privopt.resources import check_database_size

if TYPE_CHECKING:  # pragma: no cover
    import cvxpy as cp
    from numpy.typing import ArrayLike

    from privopt.model.types import PriorLike

#: Largest database alphabet m**n whose pmf is materialised as a dense vector.
MAX_MATERIALISED_DATABASES = 2**24


class Prior:
    """A prior over a single finite secret ``X`` that the mechanism observes directly.

    Parameters
    ----------
    probs : array_like
        The pmf ``p(x)``: finite, non-negative, summing to 1 within 1e-9.
    labels : sequence of str, optional
        Distinct symbol names; default ``"0", "1", …``.

    Raises
    ------
    InputError
        If ``probs`` is not such a pmf (field ``prior.probs``) or the labels are not one
        distinct name per symbol (field ``prior.labels``).

    Examples
    --------
    >>> Prior([0.5, 0.3, 0.2], labels=["a", "b", "c"]).support
    array([0, 1, 2])
    """

    is_joint = False
    is_database = False

    def __init__(self, probs: ArrayLike, labels: Sequence | None = None) -> None:
        self.probs = as_pmf(probs, "prior.probs")
        self.labels = as_labels(labels, self.probs.size, "prior.labels")

    # --- protocol -------------------------------------------------------------------------
    @property
    def input_probs(self) -> np.ndarray:
        """The pmf of what the mechanism sees: :attr:`probs`, ``p(x)`` (length ``|X|``)."""
        return self.probs

    @property
    def input_labels(self) -> tuple[str, ...]:
        """The names of the inputs: :attr:`labels` (one per symbol of ``X``)."""
        return self.labels

    @property
    def secret_probs(self) -> np.ndarray:
        """The pmf of what must stay private: :attr:`probs`, since the secret is the input."""
        return self.probs

    @property
    def secret_labels(self) -> tuple[str, ...]:
        """The names of the secrets: :attr:`labels`, since the secret is the input."""
        return self.labels

    @property
    def observation(self) -> np.ndarray | None:
        """``None``: the mechanism observes the secret itself (no ``p(y|s)`` matrix)."""
        return None

    def induced_channel(self, mechanism: np.ndarray | cp.Expression) -> np.ndarray | cp.Expression:
        """``p(u|x)``: the mechanism itself, since the secret is the input.

        Parameters
        ----------
        mechanism : numpy.ndarray or cvxpy.Expression
            The mechanism ``W[x, u] = p(u|x)``, shape ``|X| × |U|`` (rows = inputs).

        Returns
        -------
        numpy.ndarray or cvxpy.Expression
            ``mechanism`` itself (the same object, not a copy), ``|X| × |U|``.
        """
        return mechanism

    # --- conveniences ---------------------------------------------------------------------
    @property
    def size(self) -> int:
        """Number of symbols ``|X|`` (the length of :attr:`probs`, zero-mass symbols included)."""
        return int(self.probs.size)

    @property
    def n_inputs(self) -> int:
        """Number of inputs ``|X|`` of the mechanism (the same as :attr:`size`)."""
        return self.size

    @property
    def n_secrets(self) -> int:
        """Number of secrets ``|X|`` (the same as :attr:`size`)."""
        return self.size

    @property
    def support(self) -> np.ndarray:
        """Indices of the symbols with positive mass."""
        return np.flatnonzero(self.probs > 0)

    @property
    def secret_support(self) -> np.ndarray:
        """Indices of the secrets with positive mass, increasing (here :attr:`support`)."""
        return np.flatnonzero(self.secret_probs > 0)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(probs={np.array2string(self.probs, precision=4)})"


class JointPrior:
    """A joint prior ``p(s, y)`` of a private ``S`` and an observed ``Y`` ([Calmon-Fawaz]).

    Parameters
    ----------
    joint : array_like
        ``|S| × |Y|`` matrix with entries ``p(s, y)``: finite, non-negative, summing to 1.
        The sum may be off by at most 1e-9; the matrix is then divided by it.
    secret_labels, labels : sequence of str, optional
        Names of the values of ``S`` (one per row) and of ``Y`` (one per column), distinct;
        default ``"0", "1", …``.

    Raises
    ------
    InputError
        If ``joint`` is not such a matrix (field ``prior.joint``) or the labels do not fit
        (fields ``prior.secret_labels``, ``prior.labels``).

    Notes
    -----
    ``p(y|s)`` for a secret of zero mass is undefined; its row of :attr:`observation` is left at
    zero and every measure leaves such secrets out (support conventions).
    """

    is_joint = True
    is_database = False

    def __init__(
        self,
        joint: ArrayLike,
        secret_labels: Sequence | None = None,
        labels: Sequence | None = None,
    ) -> None:
        joint = as_real_array(joint, "prior.joint", ndim=2)
        check_nonnegative(joint, "prior.joint")
        total = float(joint.sum())
        if abs(total - 1.0) > SUM_TOLERANCE:
            raise InputError(
                f"entries sum to {total:.12g}, off by {total - 1:+.3g}: a joint pmf must sum "
                f"to 1 (within {SUM_TOLERANCE:g})",
                "prior.joint",
            )
        self.joint = joint / total
        self.secret_labels = as_labels(secret_labels, joint.shape[0], "prior.secret_labels")
        self.labels = as_labels(labels, joint.shape[1], "prior.labels")

    @cached_property
    def p_s(self) -> np.ndarray:
        """Marginal ``p(s)``."""
        return self.joint.sum(axis=1)

    @cached_property
    def p_y(self) -> np.ndarray:
        """Marginal ``p(y)``."""
        return self.joint.sum(axis=0)

    @cached_property
    def p_y_given_s(self) -> np.ndarray:
        """``p(y|s)`` (rows ``s``); zero rows for secrets of zero mass."""
        out = np.zeros_like(self.joint)
        mask = self.p_s > 0
        out[mask] = self.joint[mask] / self.p_s[mask, None]
        return out

    @cached_property
    def p_s_given_y(self) -> np.ndarray:
        """``p(s|y)`` as a ``|Y| × |S|`` matrix; zero rows for observations of zero mass."""
        out = np.zeros_like(self.joint.T)
        mask = self.p_y > 0
        out[mask] = self.joint.T[mask] / self.p_y[mask, None]
        return out

    @property
    def input_probs(self) -> np.ndarray:
        """The pmf of what the mechanism sees: the marginal :attr:`p_y` (length ``|Y|``)."""
        return self.p_y

    @property
    def input_labels(self) -> tuple[str, ...]:
        """The names of the inputs ``y``: :attr:`labels` (length ``|Y|``)."""
        return self.labels

    @property
    def secret_probs(self) -> np.ndarray:
        """The pmf of what must stay private: the marginal :attr:`p_s` (length ``|S|``)."""
        return self.p_s

    @property
    def observation(self) -> np.ndarray:
        """``p(y|s)`` as an ``|S| × |Y|`` matrix (:attr:`p_y_given_s`)."""
        return self.p_y_given_s

    def induced_channel(self, mechanism: np.ndarray | cp.Expression) -> np.ndarray | cp.Expression:
        """``p(u|s) = Σ_y p(y|s) p(u|y)`` ([Calmon-Fawaz] eq. 16); linear, works on cvxpy
        expressions.

        Parameters
        ----------
        mechanism : numpy.ndarray or cvxpy.Expression
            The mechanism ``W[y, u] = p(u|y)``, shape ``|Y| × |U|`` (rows = inputs).

        Returns
        -------
        numpy.ndarray or cvxpy.Expression
            ``p(u|s)``, shape ``|S| × |U|`` (an expression for an expression); the rows of
            secrets of zero mass are zero.
        """
        return self.p_y_given_s @ mechanism

    @property
    def n_inputs(self) -> int:
        """Number of inputs ``|Y|`` (columns of :attr:`joint`)."""
        return int(self.joint.shape[1])

    @property
    def n_secrets(self) -> int:
        """Number of secrets ``|S|`` (rows of :attr:`joint`)."""
        return int(self.joint.shape[0])

    @property
    def support(self) -> np.ndarray:
        """Indices of the inputs ``y`` with positive mass ``p(y)``, increasing."""
        return np.flatnonzero(self.p_y > 0)

    @property
    def secret_support(self) -> np.ndarray:
        """Indices of the secrets ``s`` with positive mass ``p(s)``, increasing."""
        return np.flatnonzero(self.p_s > 0)

    def __repr__(self) -> str:
        return f"JointPrior(shape={self.joint.shape})"


class DatabasePrior(Prior):
    """A prior over databases ``X = (x_1, …, x_n) ∈ Dⁿ``, ``|D| = m`` (Wang et al.
    [Wang-Ying-Zhang]).

    Databases are enumerated in lexicographic order of ``(x_1, …, x_n)`` with ``x_1`` most
    significant. Give exactly one of ``row_probs`` (i.i.d. rows) and
    ``probs`` (a full pmf of length ``m**n``).

    Parameters
    ----------
    m, n : int
        Row alphabet size (``m ≥ 2``) and number of rows (``n ≥ 1``); ``m**n`` may not exceed
        ``2**1000`` (:func:`privopt.resources.check_database_size`).
    row_probs : array_like, optional
        The pmf of one row; the database pmf is its ``n``-fold product, computed lazily.
        Length ``m``, finite, non-negative, summing to 1 within 1e-9.
    probs : array_like, optional
        Any pmf over the ``m**n`` databases, in lexicographic order.
    symbols : sequence of str, optional
        Names of the ``m`` row values; database labels join them (``"010"``). Distinct;
        default ``"0", "1", …``.

    Raises
    ------
    InputError
        If ``m`` or ``n`` is not such an integer, both or neither of ``row_probs`` and
        ``probs`` are given, either is not a pmf of the right length, or the symbols do not
        fit (fields under ``prior.database``).
    """

    is_database = True

    def __init__(
        self,
        m: int,
        n: int,
        row_probs: ArrayLike | None = None,
        probs: ArrayLike | None = None,
        symbols: Sequence | None = None,
    ) -> None:
        self.m = as_positive_int(m, "prior.database.m", minimum=2)
        self.n = as_positive_int(n, "prior.database.n", minimum=1)
        check_database_size(self.m, self.n)
        if (row_probs is None) == (probs is None):
            raise InputError(
                "give exactly one of 'row_probs' (i.i.d. rows) and 'probs' (full pmf over D^n)",
                "prior.database",
            )
        self.row_probs: np.ndarray | None = None
        if row_probs is not None:
            self.row_probs = as_pmf(row_probs, "prior.database.row_probs")
            if self.row_probs.size != self.m:
                raise InputError(
                    f"has {self.row_probs.size} entries but m = {self.m}: give one probability "
                    "per row value",
                    "prior.database.row_probs",
                )
        else:
            full = as_pmf(probs, "prior.database.probs")
            if full.size != self.m**self.n:
                raise InputError(
                    f"has {full.size} entries but m**n = {self.m**self.n}: give one probability "
                    "per database, in lexicographic order",
                    "prior.database.probs",
                )
            self.__dict__["probs"] = full
        # after the pmf, whose length bounds m: default labels of an absurd m are not built
        self.symbols = as_labels(symbols, self.m, "prior.database.symbols")

    @property
    def is_iid(self) -> bool:
        """True when the rows are i.i.d. (exchangeable prior)."""
        return self.row_probs is not None

    @property
    def size(self) -> int:
        """Number of databases ``m**n`` (an exact integer, even when too many to enumerate)."""
        return self.m**self.n

    @cached_property
    def probs(self) -> np.ndarray:  # type: ignore[override]
        """The pmf over ``Dⁿ`` (Kronecker power of the row pmf for i.i.d. rows)."""
        if self.size > MAX_MATERIALISED_DATABASES:
            raise InputError(
                f"m**n = {self.size} databases are too many to hold as a dense pmf; use the "
                "symmetric fast path (i.i.d. rows) instead",
                "prior.database",
            )
        out = np.ones(1)
        for _ in range(self.n):
            out = np.kron(out, self.row_probs)
        return out

    @cached_property
    def labels(self) -> tuple[str, ...]:  # type: ignore[override]
        """One name per database, in lexicographic order: its rows' :attr:`symbols` joined
        (without separator when every symbol is one character, else with ``","``)."""
        sep = "" if all(len(s) == 1 for s in self.symbols) else ","
        return tuple(sep.join(self.symbols[d] for d in row) for row in self.digits)

    @cached_property
    def digits(self) -> np.ndarray:
        """``(m**n, n)`` array: row ``k`` holds the entries ``(x_1, …, x_n)`` of database ``k``."""
        return database_digits(self.m, self.n)

    @cached_property
    def is_product(self) -> bool:
        """True when the pmf factorises over the rows (checked numerically)."""
        if self.is_iid:
            return True
        return self.marginals() is not None

    def marginals(self) -> list[np.ndarray] | None:
        """Per-row marginals if the pmf is a product of them (to 1e-12), else ``None``.

        Returns
        -------
        list of numpy.ndarray or None
            ``n`` pmfs of length ``m`` (entry ``i`` is the marginal of row ``x_{i+1}``; the
            same array ``n`` times for i.i.d. rows), or ``None`` when their product differs
            from :attr:`probs` by more than 1e-12 in some entry.
        """
        if self.is_iid:
            return [self.row_probs] * self.n
        tensor = self.probs.reshape((self.m,) * self.n)
        margs = [tensor.sum(axis=tuple(j for j in range(self.n) if j != i)) for i in range(self.n)]
        product = margs[0]
        for marg in margs[1:]:
            product = np.multiply.outer(product, marg)
        return margs if np.allclose(product, tensor, rtol=0, atol=1e-12) else None

    def __repr__(self) -> str:
        if self.is_iid:
            return f"DatabasePrior(m={self.m}, n={self.n}, row_probs={self.row_probs})"
        return f"DatabasePrior(m={self.m}, n={self.n}, probs=<{self.size} entries>)"


def database_digits(m: int, n: int) -> np.ndarray:
    """Entries of every database of ``Dⁿ`` in lexicographic order (``x_1`` most significant).

    Parameters
    ----------
    m : int
        Row alphabet size ``|D| ≥ 1`` (not checked).
    n : int
        Number of rows ``≥ 1`` (not checked); the result has ``m**n · n`` entries, so the
        caller keeps ``m**n`` small enough to enumerate.

    Returns
    -------
    numpy.ndarray
        Integer array of shape ``(m**n, n)``: row ``k`` holds ``(x_1, …, x_n)`` of database
        ``k``, each entry in ``0 … m − 1``.
    """
    index = np.arange(m**n)
    powers = m ** np.arange(n - 1, -1, -1)
    return (index[:, None] // powers[None, :]) % m


def as_prior(prior: PriorLike) -> Prior | JointPrior:
    """Accept a prior object or a plain pmf (read as a single-secret :class:`Prior`).

    Parameters
    ----------
    prior : Prior, JointPrior, DatabasePrior or array_like
        A prior object, or a pmf ``p(x)``: a flat list of finite, non-negative numbers summing
        to 1 within 1e-9.

    Returns
    -------
    Prior or JointPrior
        ``prior`` itself when it is a prior object (a :class:`DatabasePrior` is a
        :class:`Prior`), else a new :class:`Prior` on the pmf.

    Raises
    ------
    InputError
        If ``prior`` is neither a prior object nor a valid pmf (field ``prior.probs``).
    """
    if isinstance(prior, (Prior, JointPrior)):
        return prior
    return Prior(prior)
