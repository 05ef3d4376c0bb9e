"""Each linear notion's rows in the sparse LP, registered per notion.

An encoding writes the notion's constraints at level ε on the mechanism entries ``W[i,u]``
(rows of the prior's support), for the full LP and for the translation-reduced LP in
``f(z) = W[x, x+z]``, and measures the level of a reduced answer from ``f`` alone. A new
linear notion with a sparse-LP path is one more class here, registered with
:func:`register_encoding`.
"""

from __future__ import annotations

__all__ = [
    "ENCODINGS",
    "WARM_SIMPLEX_ENTRIES",
    "register_encoding",
    "FullLP",
    "ReducedLP",
    "Encoding",
]

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from privopt._docstrings import complete_overrides
from privopt.methods.sparse_lp.assembly import RowBuilder
from privopt.methods.sparse_lp.translation import Translations
from privopt.model import NeighborRelation

if TYPE_CHECKING:  # pragma: no cover
    from privopt.request import DesignRequest


@dataclass
class FullLP:
    """What an encoding needs to write its rows on the full LP.

    Attributes
    ----------
    p : numpy.ndarray
        The prior on its support (``S`` entries).
    n_outputs : int
        ``U``.
    ratio : float
        ``e^ε``.
    relation : NeighborRelation or None
        Pairs of support rows (re-indexed), for pair notions.
    complete : bool
        Whether the relation is every pair of the support (written with one auxiliary
        variable per column instead of the pair list).
    epsilon : float or None
        The level ε asked (nats); it may exceed ``ln ratio`` when the notion's largest
        written level capped the ratio. Metric privacy writes its exponents ``ε·d`` from it
        (``None``: from ``ln ratio``).
    """

    p: np.ndarray
    n_outputs: int
    ratio: float
    relation: NeighborRelation | None
    complete: bool
    epsilon: float | None = None

    @property
    def n_w(self) -> int:
        """The number of mechanism variables ``S·U`` (``int``)."""
        return self.p.size * self.n_outputs

    @property
    def entries(self) -> np.ndarray:
        """Column index of ``W[i,u]``, as an ``S × U`` ``numpy.ndarray`` of int."""
        return np.arange(self.n_w).reshape(self.p.size, self.n_outputs)

    def aux(self) -> np.ndarray:
        """Column indices of one auxiliary variable per output (after the ``W`` block).

        Returns
        -------
        numpy.ndarray of int
            ``U`` column indices ``S·U, …, S·U + U − 1``, one per output ``u``.
        """
        return self.n_w + np.arange(self.n_outputs)


@dataclass
class ReducedLP:
    """What an encoding needs on the translation-reduced LP (variables ``f(z)``).

    Attributes
    ----------
    group : Translations
        The translations of the alphabet: ``f`` has ``N = group.size`` entries, at columns
        ``0 … N − 1`` (auxiliary variables after them).
    ratio : float
        ``e^ε``.
    relation : NeighborRelation or None
        The neighbour relation on the whole alphabet (the prior is uniform), for pair
        notions.
    complete : bool
        Whether the relation is every pair (kind ``"all"``).
    col_lo, col_hi : numpy.ndarray
        ``N`` bounds on ``f``, which an encoding may tighten in place (the caller starts them
        at 0 and ``inf`` and caps the upper ones at 1).
    """

    group: Translations
    ratio: float
    relation: NeighborRelation | None
    complete: bool
    col_lo: np.ndarray
    col_hi: np.ndarray


class Encoding:
    """A notion's rows in the sparse LP (see the module docstring).

    An override in a subclass documents what it writes; the ``Parameters`` and ``Returns``
    sections it leaves out are those of the method here (:mod:`privopt._docstrings`).
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        complete_overrides(cls)

    def relation(self, request: DesignRequest) -> NeighborRelation | None:
        """The neighbour relation the rows are written over (``None``: no pairs).

        Parameters
        ----------
        request : DesignRequest
            A request of one of the encoding's notions.

        Returns
        -------
        NeighborRelation or None
            On the prior's secret indices (the caller re-indexes its pairs to the support);
            ``None`` for a notion without pairs (this default).
        """
        return None

    def n_aux(self, lp: FullLP) -> int:
        """Auxiliary variables of the full LP (after the ``W`` block).

        Parameters
        ----------
        lp : FullLP
            The full LP to be written.

        Returns
        -------
        int
            How many auxiliary columns :meth:`full` uses, ``≥ 0`` (this default: 0).
        """
        return 0

    def full(self, rows: RowBuilder, lp: FullLP) -> None:
        """Add the notion's rows at level ε to the full LP.

        Parameters
        ----------
        rows : RowBuilder
            The LP's rows so far (the row sums); the notion's blocks are appended. Columns:
            ``W[i,u]`` at ``lp.entries``, then the :meth:`n_aux` auxiliaries from ``lp.n_w``.
        lp : FullLP
            The prior, level and relation to write.
        """
        raise NotImplementedError

    def n_aux_reduced(self, lp: ReducedLP) -> int:
        """Auxiliary variables of the reduced LP.

        Parameters
        ----------
        lp : ReducedLP
            The reduced LP to be written.

        Returns
        -------
        int
            How many auxiliary columns :meth:`reduced` uses (after the ``N`` entries of
            ``f``), ``≥ 0`` (this default: 0).
        """
        return 0

    def reduced(self, rows: RowBuilder, lp: ReducedLP) -> None:
        """Add the notion's rows (or column bounds) to the reduced LP.

        Parameters
        ----------
        rows : RowBuilder
            The LP's rows so far (``Σ_z f(z) = 1``); the notion's blocks are appended.
            Columns: ``f(z)`` at ``z = 0 … N − 1``, then the :meth:`n_aux_reduced`
            auxiliaries.
        lp : ReducedLP
            The group, level and relation; ``lp.col_lo`` and ``lp.col_hi`` may be tightened in
            place.
        """
        raise NotImplementedError

    def reduced_level(
        self, f: np.ndarray, group: Translations, relation: NeighborRelation | None, complete: bool
    ) -> float:
        """The level of ``W[x,u] = f(u − x)`` under the uniform prior, from ``f`` alone.

        Parameters
        ----------
        f : numpy.ndarray
            ``N``: the generating row, a pmf over the group (``N = group.size``).
        group : Translations
            The translations of the alphabet.
        relation : NeighborRelation or None
            The neighbour relation on the alphabet, for pair notions.
        complete : bool
            Whether ``relation`` is every pair.

        Returns
        -------
        float
            The notion's level in nats, ``≥ 0`` (``inf`` when unbounded).
        """
        raise NotImplementedError


#: Encodings by notion name.
ENCODINGS: dict[str, Encoding] = {}
#: Largest mechanism (entries) whose sweeps, and budget line searches, the warm-started dual
#: simplex takes, per notion (given at registration, measured: see
#: :func:`~privopt.methods.sparse_lp.method._auto_simplex`); ``block-ipm`` takes the larger
#: ones of the single-alphabet notions. A notion without an entry is not warm-started.
WARM_SIMPLEX_ENTRIES: dict[str, int] = {}


def register_encoding(instance: Encoding, *notions: str, warm_simplex_entries: int = 0) -> Encoding:
    """Register ``instance`` as the encoding of the named notions.

    Parameters
    ----------
    instance : Encoding
        The encoding.
    *notions : str
        Notion names (the keys of :data:`ENCODINGS`).
    warm_simplex_entries : int
        Largest mechanism whose sweeps go through the warm-started dual simplex
        (:data:`WARM_SIMPLEX_ENTRIES`); 0 (the default) for none.

    Returns
    -------
    Encoding
        ``instance`` itself.

    Raises
    ------
    ValueError
        If a notion has an encoding already (a programming error, raised at import).
    """
    for name in notions:
        if name in ENCODINGS:
            raise ValueError(f"notion {name!r} has a sparse-LP encoding already")
        ENCODINGS[name] = instance
        if warm_simplex_entries > 0:
            WARM_SIMPLEX_ENTRIES[name] = int(warm_simplex_entries)
    return instance


def _ratio_level(f: np.ndarray) -> float:
    return float(np.log(f.max() / f.min())) if f.min() > 0 else float("inf")


class PairRatios(Encoding):
    """``s(a) W[a,u] ≤ e^ε s(b) W[b,u]`` for neighbours ``a ~ b`` (``s = 1`` for dp and ldp,
    ``s = p`` for identifiability): Wang, Ying & Zhang (2016), eq. (15) and the LP form of
    PD-I; Saeidian et al. (2023), Defs 14 and 16. Over all pairs, with one auxiliary
    ``lo_u`` per output: ``lo_u ≤ s(x) W[x,u] ≤ e^ε lo_u`` (``O(|X||U|)`` rows instead of
    ``O(|X|²|U|)``).

    Parameters
    ----------
    scaled : bool
        Scale each entry by its prior probability (``s = p``: identifiability, rows scaled
        to a largest coefficient of 1); otherwise ``s = 1``.
    all_pairs : bool
        Every two inputs are neighbours (ldp), whatever the request's relation.
    """

    def __init__(self, scaled: bool = False, all_pairs: bool = False) -> None:
        self.scaled = scaled
        self.all_pairs = all_pairs

    def relation(self, request: DesignRequest) -> NeighborRelation | None:
        """With ``all_pairs`` a pair-free marker of kind ``"all"``, else ``request.neighbors``."""
        if self.all_pairs:  # every pair, held as a pair-free marker (auxiliary-variable form)
            empty = np.zeros(0, dtype=np.int64)
            return NeighborRelation(request.prior.n_secrets, empty, empty, "all")
        return request.neighbors

    def n_aux(self, lp: FullLP) -> int:
        """``U`` (the column minima ``lo_u``) when the relation is complete, else 0."""
        return lp.n_outputs if lp.complete else 0

    def full(self, rows: RowBuilder, lp: FullLP) -> None:
        """Rows ``lo_u ≤ s(x) W[x,u] ≤ e^ε lo_u`` if ``lp.complete``, else one per pair
        and output."""
        scaled = self.scaled
        S, U = lp.p.size, lp.n_outputs
        widx = lp.entries.ravel()
        if lp.complete:
            scale = lp.p / lp.p.max() if scaled else np.ones(S)
            coef = np.repeat(scale, U)
            every = np.arange(S * U)
            auxcol = np.tile(lp.aux(), S)
            rows.block(S * U, [(every, widx, coef), (every, auxcol, -1.0)], 0.0, np.inf)
            rows.block(S * U, [(every, widx, coef), (every, auxcol, -lp.ratio)], -np.inf, 0.0)
            return
        left, right = lp.relation.left, lp.relation.right
        u = np.arange(U)
        n = left.size * U
        ca = (left[:, None] * U + u[None, :]).ravel()
        cb = (right[:, None] * U + u[None, :]).ravel()
        if scaled:  # p(a)W[a,u] − e^ε p(b)W[b,u] ≤ 0, rows scaled to max coefficient 1
            pa, pb = lp.p[left], lp.ratio * lp.p[right]
            top = np.maximum(pa, pb)
            va, vb = np.repeat(pa / top, U), np.repeat(-pb / top, U)
        else:  # W[a,u] − e^ε W[b,u] ≤ 0
            va, vb = 1.0, -lp.ratio
        rows.block(n, [(np.arange(n), ca, va), (np.arange(n), cb, vb)], -np.inf, 0.0)

    def n_aux_reduced(self, lp: ReducedLP) -> int:
        """1 (the minimum ``lo`` of ``f``) when the relation is complete, else 0."""
        return 1 if lp.complete else 0

    def reduced(self, rows: RowBuilder, lp: ReducedLP) -> None:
        """``lo ≤ f(z) ≤ e^ε lo`` if ``lp.complete``, else ``f(z) ≤ e^ε f(z − δ)`` per
        difference δ."""
        N = lp.group.size
        z = np.arange(N)
        if lp.complete:  # lo ≤ f(z) ≤ e^ε lo: every column holds all values of f
            lo_col = np.full(N, N)
            rows.block(N, [(z, z, 1.0), (z, lo_col, -1.0)], 0.0, np.inf)
            rows.block(N, [(z, z, 1.0), (z, lo_col, -lp.ratio)], -np.inf, 0.0)
            return
        # f(z) ≤ e^ε f(z − δ) for every neighbour difference δ = b − a (uniform prior: the
        # identifiability rows are the dp rows)
        deltas = lp.group.differences(lp.relation)
        n = N * deltas.size
        zz = np.tile(z, deltas.size)
        dd = np.repeat(deltas, N)
        shifted = lp.group.combine(zz, dd, -1)
        rows.block(n, [(np.arange(n), zz, 1.0), (np.arange(n), shifted, -lp.ratio)], -np.inf, 0.0)

    def reduced_level(
        self, f: np.ndarray, group: Translations, relation: NeighborRelation | None, complete: bool
    ) -> float:
        """Largest ``ln f(z) − ln f(z − δ)`` over the differences δ (complete: ``ln(max f/min f)``).

        Returns
        -------
        float
            The level in nats, ``≥ 0``; ``inf`` when a zero of ``f`` faces a positive entry
            (also when the relation is ``None``: then every pair counts).
        """
        if complete or relation is None:
            return _ratio_level(f)
        N = group.size
        z = np.arange(N)
        pos = f > 0
        best = 0.0
        for delta in group.differences(relation):
            other = f[group.combine(z, np.full(N, delta), -1)]
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = np.where(pos | (other > 0), np.log(f) - np.log(other), 0.0)
            best = max(best, float(np.nanmax(ratio)))
        return best


register_encoding(PairRatios(), "dp", warm_simplex_entries=2500)
register_encoding(PairRatios(all_pairs=True), "ldp", warm_simplex_entries=4900)
register_encoding(PairRatios(scaled=True), "identifiability", warm_simplex_entries=2500)


class OutputLawRatios(Encoding):
    """``W[x,u] ≤ e^ε q_u`` (PML, Saeidian et al. 2023, Thm 1) and, for information privacy,
    also ``e^{−ε} q_u ≤ W[x,u]`` (Calmon & Fawaz 2012, Def. 6), with the output law
    ``q_u = Σ_x p(x) W[x,u]`` as auxiliary variables.

    Parameters
    ----------
    two_sided : bool
        Also the lower rows (information privacy); otherwise the upper rows only (PML).
    """

    def __init__(self, two_sided: bool = False) -> None:
        self.two_sided = two_sided

    def n_aux(self, lp: FullLP) -> int:
        """``U``: the output law ``q_u``."""
        return lp.n_outputs

    def full(self, rows: RowBuilder, lp: FullLP) -> None:
        """Rows ``q_u = Σ_x p(x) W[x,u]`` and the ratio rows against ``q_u``."""
        S, U = lp.p.size, lp.n_outputs
        widx = lp.entries.ravel()
        u = np.arange(U)
        aux = lp.aux()
        # q_u − Σ_x p(x) W[x,u] = 0
        rows.block(U, [(np.tile(u, S), widx, -np.repeat(lp.p, U)), (u, aux, 1.0)], 0.0, 0.0)
        every = np.arange(S * U)
        auxcol = np.tile(aux, S)
        rows.block(S * U, [(every, widx, 1.0), (every, auxcol, -lp.ratio)], -np.inf, 0.0)
        if self.two_sided:
            rows.block(S * U, [(every, widx, 1.0), (every, auxcol, -1.0 / lp.ratio)], 0.0, np.inf)

    def reduced(self, rows: RowBuilder, lp: ReducedLP) -> None:
        """No rows: as ``q_u = 1/N``, the bounds ``f ≤ e^ε/N`` (two-sided: also ``f ≥
        e^{−ε}/N``)."""
        N = lp.group.size  # uniform prior: q_u = 1/N
        lp.col_hi[:] = lp.ratio / N
        if self.two_sided:
            lp.col_lo[:] = 1.0 / (lp.ratio * N)

    def reduced_level(
        self, f: np.ndarray, group: Translations, relation: NeighborRelation | None, complete: bool
    ) -> float:
        """``ln(N max f)`` clipped at 0, or (two-sided) ``max |ln(N f)|`` (``inf`` when an
        entry of ``f`` is 0: the lower ratio ``p(u|x) ≥ e^{−ε} p(u)`` fails at every ε).
        """
        N = group.size
        if self.two_sided:
            if not (f > 0).all():  # p(u|x) = 0 < e^{−ε} p(u) = e^{−ε}/N: no finite level
                return float("inf")
            return float(np.abs(np.log(N * f)).max())
        return float(max(np.log(N * f.max()), 0.0))


register_encoding(OutputLawRatios(), "pml", warm_simplex_entries=40_000)
register_encoding(OutputLawRatios(two_sided=True), "information_privacy", warm_simplex_entries=4900)


class ColumnMaxima(Encoding):
    """``W[x,u] ≤ t_u`` and ``Σ_u t_u ≤ e^ε`` (maximal leakage, Saeidian et al. 2023,
    eq. (1); Issa et al.)."""

    def n_aux(self, lp: FullLP) -> int:
        """``U``: the column maxima ``t_u``."""
        return lp.n_outputs

    def full(self, rows: RowBuilder, lp: FullLP) -> None:
        """Rows ``W[x,u] ≤ t_u`` and ``Σ_u t_u ≤ e^ε``."""
        S, U = lp.p.size, lp.n_outputs
        every = np.arange(S * U)
        auxcol = np.tile(lp.aux(), S)
        rows.block(S * U, [(every, lp.entries.ravel(), 1.0), (every, auxcol, -1.0)], -np.inf, 0.0)
        rows.block(1, [(np.zeros(U), lp.aux(), 1.0)], -np.inf, lp.ratio)

    def reduced(self, rows: RowBuilder, lp: ReducedLP) -> None:
        """No rows: the bounds ``f ≤ e^ε/N``, as ``Σ_u max_x W[x,u] = N max f``."""
        lp.col_hi[:] = lp.ratio / lp.group.size  # N max f ≤ e^ε

    def reduced_level(
        self, f: np.ndarray, group: Translations, relation: NeighborRelation | None, complete: bool
    ) -> float:
        """``ln(N max f)`` clipped at 0."""
        return float(max(np.log(group.size * f.max()), 0.0))


register_encoding(ColumnMaxima(), "maximal_leakage", warm_simplex_entries=4900)


class MetricRatios(Encoding):
    """``W[a,u] ≤ e^{ε d(a,b)} W[b,u]`` on the metric's constraint pairs (or the edges of a
    spanner): metric privacy as the LP of [Bordenabe-Chatzikokolakis-Palamidessi], Sec. 4,
    with the pairs implied along geodesics left out, and those with ``ε·d > 20`` too (a
    relaxation: :data:`privopt.notions.metric_dp.RELAXED_EXPONENT`)."""

    def relation(self, request: DesignRequest) -> NeighborRelation | None:
        """The metric's constraint pairs (or spanner edges) on the prior's support, with distances.

        Returns
        -------
        MetricPairs
            In the prior's secret indices (see :meth:`Encoding.relation`).
        """
        from privopt.notions.metric_dp import constraint_pairs

        return constraint_pairs(dict(request.options), request.prior.secret_support)

    def full(self, rows: RowBuilder, lp: FullLP) -> None:
        """Rows ``W[a,u] ≤ e^{ε d(a,b)} W[b,u]`` on the pairs with ``ε·d ≤ 20`` (ε:
        ``lp.epsilon``)."""
        from privopt.notions.metric_dp import written

        pairs = lp.relation
        if pairs is None or pairs.n_pairs == 0:
            return
        eps = float(np.log(lp.ratio)) if lp.epsilon is None else float(lp.epsilon)
        keep = written(pairs.weights, eps)
        left, right, weights = pairs.left[keep], pairs.right[keep], pairs.weights[keep]
        U = lp.n_outputs
        u = np.arange(U)
        n = left.size * U
        ca = (left[:, None] * U + u[None, :]).ravel()
        cb = (right[:, None] * U + u[None, :]).ravel()
        vb = np.repeat(-np.exp(eps * weights), U)
        rows.block(n, [(np.arange(n), ca, 1.0), (np.arange(n), cb, vb)], -np.inf, 0.0)


register_encoding(MetricRatios(), "metric_dp")
