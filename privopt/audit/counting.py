"""Counting queries: the Calmon–Fawaz counting-query prior and the Laplace counting mechanism.

* :func:`counting_query_prior` — ``S = (S_1, …, S_n)`` i.i.d. Bernoulli(p), ``Y = Σ S_i``
  ([Calmon-Fawaz] Examples 1–2), as a :class:`~privopt.model.JointPrior`.
* :func:`laplace_mutual_information` — ``I(Y;U)`` for ``U = Y + Lap(1/ε)`` with ``Y``
  uniform on ``{0, k, 2k, …, n}``: the quantity [Calmon-Fawaz] Theorem 4 bounds below by
  ``α log₂(1 + n/k) − 1`` bits
  (:func:`privopt.papers.closed_forms.dp_mutual_information_lower_bound`).
* :class:`LaplaceCounting` — ``Y ∼ Lap(K/n, b)`` with ``K`` the number of entries with
  ``f(D_i) = 1`` ([Saeidian-Rethinking] Prop. 4.6): its exact PML about one entry (densities),
  its supremum, the Prop. 4.6 bound, and finite (binned) versions as
  :class:`~privopt.model.Mechanism` objects that every measure accepts.

All in nats unless said otherwise.
"""

from __future__ import annotations

__all__ = [
    "counting_query_prior",
    "laplace_mutual_information",
    "LaplaceCounting",
    "MAX_COUNTING_ENTRIES",
    "MAX_QUADRATURE_POINTS",
]

import itertools
from typing import TYPE_CHECKING

import numpy as np
from scipy import signal, special, stats

from privopt.errors import InputError
from privopt.measures import pml_per_output, with_unit
from privopt.model import JointPrior, Mechanism
from privopt.papers import closed_forms as cf
from privopt.validation import as_positive_int, check_number, check_numbers

if TYPE_CHECKING:  # annotations only: nothing more is imported at run time
    from numpy.typing import ArrayLike

#: Largest ``n`` for which the ``2ⁿ`` binary databases are enumerated.
MAX_COUNTING_ENTRIES = 16
#: Largest number of quadrature points ``(n/k + 240) · nodes`` that
#: :func:`laplace_mutual_information` evaluates (about a second of work per 10⁷ points).
MAX_QUADRATURE_POINTS = 20_000_000


def _probability(p, field: str = "p", open_interval: bool = True) -> float:
    p = check_number(p, field)
    ok = 0 < p < 1 if open_interval else 0 <= p <= 1
    if not ok:
        raise InputError(f"must lie in {'(0, 1)' if open_interval else '[0, 1]'}, got {p}", field)
    return p


def counting_query_prior(n: int, p: float) -> JointPrior:
    """The counting-query prior of [Calmon-Fawaz] Examples 1–2: a private
    ``S = (S_1, …, S_n) ∈ {0,1}ⁿ`` with i.i.d. Bernoulli(p) entries and the observed count
    ``Y = Σ_i S_i``.

    For binary entries ``H(S|Y=y) = ln C(n, y)`` and ``ζ(y) = C(n, y)/2ⁿ``
    (:func:`privopt.papers.closed_forms.zeta`), whatever ``p``.

    Parameters
    ----------
    n : int
        Number of entries, ``1 ≤ n ≤`` :data:`MAX_COUNTING_ENTRIES`.
    p : float
        ``P(S_i = 1)`` in ``(0, 1)``.

    Returns
    -------
    JointPrior
        ``p(s, y)``: ``2ⁿ`` secrets (labelled by their bits) × ``n + 1`` counts.

    Raises
    ------
    InputError
        If ``n`` is not an integer in ``1 … 16`` or ``p`` is not in ``(0, 1)``.
    """
    n = as_positive_int(n, "n", minimum=1)
    if n > MAX_COUNTING_ENTRIES:
        raise InputError(f"at most {MAX_COUNTING_ENTRIES} entries (2^n secrets)", "n")
    p = _probability(p)
    bits = np.array(list(itertools.product([0, 1], repeat=n)))
    p_s = np.prod(np.where(bits == 1, p, 1 - p), axis=1)
    joint = np.zeros((2**n, n + 1))
    joint[np.arange(2**n), bits.sum(axis=1)] = p_s
    return JointPrior(
        joint,
        secret_labels=["".join(map(str, s)) for s in bits],
        labels=[str(y) for y in range(n + 1)],
    )


@with_unit
def laplace_mutual_information(eps: float, k: int, n: int, nodes: int = 60) -> float:
    """``I(Y;U)`` for ``U = Y + Lap(1/ε)`` and ``Y`` uniform on ``{0, k, 2k, …, n}``: the
    mechanism of [Calmon-Fawaz] Theorem 4 (ε-DP for a counting query, yet ``I(Y;U)`` grows
    without bound in ``n/k``).

    ``I(Y;U) = h(U) − h(U|Y)`` with ``h(U|Y) = 1 + ln(2b)`` (``b = 1/ε``) and ``h(U)`` by
    Gauss–Legendre quadrature of ``−f ln f`` on pieces between the support points and on
    60 scales ``b`` of tail each side. Between two support points the density is a sum of
    two exponentials whose weights follow from a running sum over the support, so the work
    is linear in ``n/k``.

    Parameters
    ----------
    eps : float
        ε > 0 (nats), finite.
    k : int
        Spacing of the support (``k`` divides ``n``), ``k ≥ 1``.
    n : int
        The largest count, ``n ≥ 1``. The work is ``(n/k + 240) · nodes`` density
        evaluations, at most :data:`MAX_QUADRATURE_POINTS` (``n/k`` up to about 330 000 with
        60 nodes).
    nodes : int
        Quadrature nodes per piece (60 is converged to ~1e-10 for the paper's cases),
        ``≥ 2``.

    Returns
    -------
    float
        ``I(Y;U)`` in nats (``unit="bits"`` for bits, the paper's unit), in
        ``[0, ln(n/k + 1)]`` up to the quadrature error.

    Raises
    ------
    InputError
        If ε is not a finite number ``> 0`` (field ``eps``), ``k``, ``n`` or ``nodes``
        is not an integer in range, ``k`` does not divide ``n``, the work would exceed
        :data:`MAX_QUADRATURE_POINTS` (field ``n``), or ``unit`` is neither ``"nats"`` nor
        ``"bits"``.
    """
    eps = check_number(eps, "eps", strict=True)
    k = as_positive_int(k, "k", minimum=1)
    n = as_positive_int(n, "n", minimum=1)
    nodes = as_positive_int(nodes, "nodes", minimum=2)
    if n % k:
        raise InputError(f"k = {k} must divide n = {n}", "k")
    m = n // k + 1  # support points
    if (m + 239) * nodes > MAX_QUADRATURE_POINTS:
        fit = MAX_QUADRATURE_POINTS // nodes - 240
        raise InputError(
            f"n/k = {n // k} with {nodes} nodes needs {(m + 239) * nodes} quadrature points, "
            f"above the bound of {MAX_QUADRATURE_POINTS} (MAX_QUADRATURE_POINTS): use "
            f"n/k ≤ {fit} or fewer nodes",
            "n",
        )
    ys = np.arange(0, n + 1, k, dtype=float)
    b = 1.0 / eps
    x, w = np.polynomial.legendre.leggauss(nodes)
    # left[i] = Σ_{j≤i} e^{−(y_i − y_j)/b}; by symmetry right[i] = Σ_{j≥i} e^{−(y_j − y_i)/b}
    left = signal.lfilter([1.0], [1.0, -np.exp(-k / b)], np.ones(m))
    right = left[::-1]
    norm = 2 * b * m

    def entropy_of_pieces(lo, hi, density) -> float:
        u = ((hi - lo)[:, None] * x[None, :] + (lo + hi)[:, None]) / 2
        f = density(u) / norm
        with np.errstate(divide="ignore", invalid="ignore"):
            integrand = np.where(f > 0, -f * np.log(f), 0.0)
        return float(np.sum((hi - lo)[:, None] / 2 * w[None, :] * integrand))

    tail = np.linspace(0.0, 60 * b, 121)
    h_u = entropy_of_pieces(-tail[:0:-1], -tail[-2::-1], lambda u: np.exp(u / b) * right[0])
    h_u += entropy_of_pieces(n + tail[:-1], n + tail[1:], lambda u: np.exp(-(u - n) / b) * left[-1])
    for start in range(0, m - 1, 65536):  # chunks keep memory small for large n/k
        i = np.arange(start, min(start + 65536, m - 1))
        h_u += entropy_of_pieces(
            ys[i],
            ys[i + 1],
            lambda u, i=i: (
                np.exp(-(u - ys[i, None]) / b) * left[i, None]
                + np.exp(-(ys[i + 1, None] - u) / b) * right[i + 1, None]
            ),
        )
    return h_u - (1.0 + np.log(2 * b))


class LaplaceCounting:
    """The Laplace counting mechanism ``Y ∼ Lap(K/n, b)`` of [Saeidian-Rethinking] Prop. 4.6.

    The database has ``n`` entries; ``K`` counts those with ``f(D_i) = 1``. With i.i.d.
    entries and ``P(f(D_i) = 1) = p``, ``K − f(D_i) ∼ Bin(n − 1, p)`` independently of entry
    ``i``, so the output density given the entry is a binomial mixture of Laplace densities.

    Parameters
    ----------
    n : int
        Number of entries.
    b : float
        Laplace scale (> 0); the mechanism is ``1/(nb)``-DP.

    Raises
    ------
    InputError
        If ``n`` is not an integer ``≥ 1`` or ``b`` is not a finite number ``> 0``.

    Examples
    --------
    >>> lap = LaplaceCounting(10, 0.5)
    >>> round(lap.entry_pml_sup(0.3), 9)
    0.13569198
    """

    def __init__(self, n: int, b: float) -> None:
        self.n = as_positive_int(n, "n", minimum=1)
        self.b = check_number(b, "b", strict=True)

    @property
    def dp_level(self) -> float:
        """``1/(nb)``: the DP level in nats (``float``; sensitivity ``1/n``, scale ``b``)."""
        return 1.0 / (self.n * self.b)

    def density(self, y: ArrayLike) -> np.ndarray:
        """``f(y | K = k) = e^{−|y − k/n|/b}/(2b)`` for ``k = 0 … n``.

        Parameters
        ----------
        y : array_like
            Output values: a number or a 1-D array of numbers.

        Returns
        -------
        numpy.ndarray
            Shape ``(n + 1, len(y))`` (one column for a number); row ``k`` holds the densities
            given ``K = k``, each in ``[0, 1/(2b)]``.
        """
        y = np.atleast_1d(np.asarray(y, dtype=float))
        centres = np.arange(self.n + 1) / self.n
        return np.exp(-np.abs(y[None, :] - centres[:, None]) / self.b) / (2 * self.b)

    def _entry_mixtures(self, p: float, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``Σ_k Bin(k; n−1, p) rows[k + d]`` for the entry values d = 0 and 1."""
        w = stats.binom.pmf(np.arange(self.n), self.n - 1, p)
        return w @ rows[:-1], w @ rows[1:]

    def entry_pml(self, p: float, y: ArrayLike) -> np.ndarray:
        """Exact ``ℓ(D_i→y) = ln max_d f(y | f(D_i) = d) / f(y)`` at the points ``y``
        ([Saeidian-Rethinking] Def. 2.3 with densities, as in the proof of Prop. 4.6).

        Parameters
        ----------
        p : float
            ``P(f(D_i) = 1)`` in ``(0, 1)``.
        y : array_like
            Output values: a number or a 1-D array of numbers.

        Returns
        -------
        numpy.ndarray
            ``ℓ(D_i→y)`` (nats) per point: shape ``(len(y),)``, each between 0 and
            :meth:`entry_pml_sup`. Computed in log space, so far outside ``[0, 1]`` (where
            every density underflows) it is the supremum, not nan.

        Raises
        ------
        InputError
            If ``p`` is not in ``(0, 1)`` or ``y`` is not a finite number or a 1-D list of
            finite numbers (field ``y``).
        """
        p = _probability(p)
        y = check_numbers(y, "y", minimum=-np.inf)
        if y.ndim > 1 or not np.isfinite(y).all():
            raise InputError("must be a finite number or a 1-D list of finite numbers", "y")
        y = np.atleast_1d(y)
        centres = np.arange(self.n + 1) / self.n
        log_dens = -np.abs(y[None, :] - centres[:, None]) / self.b  # up to −ln(2b)
        log_w = stats.binom.logpmf(np.arange(self.n), self.n - 1, p)[:, None]
        l0 = special.logsumexp(log_w + log_dens[:-1], axis=0)
        l1 = special.logsumexp(log_w + log_dens[1:], axis=0)
        mix = np.logaddexp(np.log1p(-p) + l0, np.log(p) + l1)
        return np.maximum(np.maximum(l0, l1) - mix, 0.0)

    def entry_pml_sup(self, p: float) -> float:
        """``sup_y ℓ(D_i→y) = a − ln(min(p,1−p) e^a + max(p,1−p))``, ``a = 1/(nb)``
        (attained for ``y ≥ 1`` or ``y ≤ 0``; the bound of [Saeidian-Rethinking] Prop. 4.6
        is this at ``p = c``).

        Parameters
        ----------
        p : float
            ``P(f(D_i) = 1)`` in ``(0, 1)``.

        Returns
        -------
        float
            The supremum (nats), in ``[0, 1/(nb)]``.

        Raises
        ------
        InputError
            If ``p`` is not in ``(0, 1)``.
        """
        return cf.laplace_counting_pml_sup(self.n, self.b, _probability(p))

    def pml_bound(self, c: float) -> float:
        """[Saeidian-Rethinking] Prop. 4.6: ``sup_y ℓ(D_i→y) ≤ a − ln((1−c) + c e^a)`` for
        every ``p ∈ (c, 1−c)``.

        Parameters
        ----------
        c : float
            In ``[0, 1/2)``.

        Returns
        -------
        float
            The bound (nats), in ``(0, 1/(nb)]`` (``1/(nb)`` at ``c = 0``).

        Raises
        ------
        InputError
            If ``c`` is not in ``[0, 1/2)``.
        """
        c = _probability(c, "c", open_interval=False)
        if c >= 0.5:
            raise InputError(f"must lie in [0, 1/2), got {c}", "c")
        return cf.laplace_counting_pml_bound(self.n, self.b, c)

    def _edges(self, edges) -> np.ndarray:
        e = np.asarray(edges, dtype=float)
        if e.ndim != 1 or e.size == 0 or not np.isfinite(e).all() or (np.diff(e) <= 0).any():
            raise InputError("must be a strictly increasing list of finite cut points", "edges")
        return e

    def count_mechanism(self, edges: ArrayLike) -> Mechanism:
        """The mechanism binned at ``edges``: rows the counts ``K = 0 … n``, outputs the
        intervals ``(−∞, e₁], (e₁, e₂], …, (e_L, ∞)``; entries are exact Laplace CDF
        differences (a post-processing of the continuous mechanism, so every PML of it is
        at most the continuous one's).

        Parameters
        ----------
        edges : array_like
            Strictly increasing cut points: 1-D, finite, at least one (``L`` of them).

        Returns
        -------
        Mechanism
            ``(n + 1) × (L + 1)``, row-stochastic; inputs labelled ``"0" … "n"``, outputs by
            their intervals (cut points printed to 4 significant digits).

        Raises
        ------
        InputError
            If ``edges`` is not a non-empty, strictly increasing 1-D list of finite numbers,
            or two intervals print alike (cut points equal to 4 significant digits; field
            ``mechanism.outputs``).
        """
        e = self._edges(edges)
        centres = np.arange(self.n + 1) / self.n
        rows = self.n + 1
        cdf = stats.laplace.cdf(e[None, :], loc=centres[:, None], scale=self.b)
        cdf = np.column_stack([np.zeros(rows), cdf, np.ones(rows)])
        sf = stats.laplace.sf(e[None, :], loc=centres[:, None], scale=self.b)
        sf = np.column_stack([np.ones(rows), sf, np.zeros(rows)])
        # bins right of the centre from the survival function: no cancellation in the tail
        lower = np.broadcast_to(np.r_[-np.inf, e][None, :], (rows, e.size + 1))
        probs = np.where(lower >= centres[:, None], sf[:, :-1] - sf[:, 1:], np.diff(cdf, axis=1))
        labels = [
            f"({lo:.4g}, {hi:.4g}]"
            for lo, hi in zip(np.r_[-np.inf, e], np.r_[e, np.inf], strict=True)
        ]
        return Mechanism(probs, [str(k) for k in range(rows)], labels)

    def database_mechanism(self, edges: ArrayLike) -> Mechanism:
        """:meth:`count_mechanism` on the ``2ⁿ`` binary databases (``f`` the identity),
        in lexicographic order: usable with a ``DatabasePrior(2, n, …)`` and
        :func:`privopt.audit.disclosure.entry_pml_per_output`.

        Parameters
        ----------
        edges : array_like
            Strictly increasing cut points, as for :meth:`count_mechanism`.

        Returns
        -------
        Mechanism
            ``2ⁿ × (L + 1)``, row-stochastic; rows unlabelled, outputs labelled as in
            :meth:`count_mechanism`.

        Raises
        ------
        InputError
            If ``n`` exceeds :data:`MAX_COUNTING_ENTRIES` or ``edges`` is refused by
            :meth:`count_mechanism`.
        """
        if self.n > MAX_COUNTING_ENTRIES:
            raise InputError(f"at most {MAX_COUNTING_ENTRIES} entries (2^n databases)", "n")
        counts = np.array(list(itertools.product([0, 1], repeat=self.n))).sum(axis=1)
        base = self.count_mechanism(edges)
        return Mechanism(base.matrix[counts], None, base.output_labels)

    def binned_entry_pml(self, p: float, edges: ArrayLike) -> np.ndarray:
        """``ℓ(D_i→bin)`` of :meth:`count_mechanism` for i.i.d. entries with
        ``P(f(D_i) = 1) = p`` (exact for the binned mechanism).

        Parameters
        ----------
        p : float
            In ``(0, 1)``.
        edges : array_like
            Strictly increasing cut points, as for :meth:`count_mechanism`.

        Returns
        -------
        numpy.ndarray
            Per bin (nats): shape ``(L + 1,)``, each between 0 and :meth:`entry_pml_sup`
            (0 for a bin of probability 0).

        Raises
        ------
        InputError
            If ``p`` is not in ``(0, 1)`` or ``edges`` is refused by :meth:`count_mechanism`.
        """
        p = _probability(p)
        f0, f1 = self._entry_mixtures(p, self.count_mechanism(edges).matrix)
        return pml_per_output([1 - p, p], np.vstack([f0, f1]))

    def __repr__(self) -> str:
        return f"LaplaceCounting(n={self.n}, b={self.b})"
