"""Translation symmetry of the linear programs (uniform prior, invariant distortion).

When the prior is uniform and the distortion and neighbour relation are invariant under the
translations of the alphabet (``Z_mⁿ`` acting digit-wise on databases, ``Z_k`` on a single
alphabet) — e.g. the uniform Hamming instances of Wang, Ying & Zhang (2016) — the LP is
invariant under ``W ↦ W[x+g, u+g]``. Averaging an optimum over the group gives an optimum of
the form ``W[x,u] = f(u − x)`` (convexity and invariance), so the LP shrinks exactly to the
``|U|`` entries of ``f`` (one column's constraints).
"""

from __future__ import annotations

__all__ = ["Translations", "TranslationInvariantMechanism", "translation_group", "first_row"]

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from privopt.errors import InputError
from privopt.model import DatabasePrior, Distortion, NeighborRelation

if TYPE_CHECKING:  # annotations only: nothing more is imported at run time
    from numpy.typing import ArrayLike

    from privopt.model import JointPrior, Prior

#: Largest alphabet whose distortion matrix is compared entry by entry for invariance (the
#: database Hamming distortion is recognised without a matrix).
MAX_CHECKED = 4096


@dataclass(frozen=True)
class Translations:
    """Translations of an alphabet: ``Z_mⁿ`` digit-wise (databases) or ``Z_k`` (``n = 1``).

    Parameters
    ----------
    m : int
        The size of one digit's alphabet ``Z_m`` (``k`` for a single alphabet), ``≥ 1``.
    n : int
        The number of digits, ``≥ 1`` (1 for a single alphabet).
    """

    m: int
    n: int

    @property
    def size(self) -> int:
        """The number of symbols ``mⁿ`` (``int``)."""
        return self.m**self.n

    def digits(self, idx: ArrayLike) -> np.ndarray:
        """The base-``m`` digits of symbol indices (``x_1`` most significant).

        Parameters
        ----------
        idx : array_like of int
            Symbol indices in ``0 … mⁿ−1``, any shape (larger ones wrap modulo ``mⁿ``).

        Returns
        -------
        numpy.ndarray
            Shape ``idx.shape + (n,)``, entries in ``0 … m−1``.
        """
        powers = self.m ** np.arange(self.n - 1, -1, -1)
        return (np.asarray(idx)[..., None] // powers) % self.m

    def combine(self, a: ArrayLike, b: ArrayLike, sign: int) -> np.ndarray:
        """``a + sign·b`` digit-wise mod m, as indices.

        Parameters
        ----------
        a, b : array_like of int
            Symbol indices in ``0 … mⁿ−1``, of broadcastable shapes.
        sign : int
            ``1`` (the group operation) or ``−1`` (``a − b``).

        Returns
        -------
        numpy.ndarray
            Indices in ``0 … mⁿ−1``, of the broadcast shape of ``a`` and ``b``.
        """
        powers = self.m ** np.arange(self.n - 1, -1, -1)
        digits = (self.digits(a) + sign * self.digits(b)) % self.m
        return digits @ powers

    def differences(self, relation: NeighborRelation) -> np.ndarray:
        """The distinct differences ``b − a`` over the pairs ``(a, b)`` of ``relation``.

        Parameters
        ----------
        relation : NeighborRelation
            Ordered pairs of symbol indices in ``0 … mⁿ−1``.

        Returns
        -------
        numpy.ndarray
            The distinct differences as indices, sorted increasingly.
        """
        return np.unique(self.combine(relation.right, relation.left, -1))


class TranslationInvariantMechanism:
    """``W[x,u] = f(u − x)`` on ``Z_mⁿ`` (or ``Z_k``), held by its first row ``f``.

    Parameters
    ----------
    f : array_like
        The first row (a pmf over the group), length ``mⁿ`` (not checked).
    group : Translations
        The group ``Z_mⁿ`` (or ``Z_k``), which also indexes inputs and outputs.
    """

    kind = "translation_invariant"

    def __init__(self, f: ArrayLike, group: Translations) -> None:
        self.f = np.asarray(f, dtype=float)
        self.group = group
        self.shape = (group.size, group.size)

    def row(self, i: int) -> np.ndarray:
        """``W[i, ·] = f(· − i)``.

        Parameters
        ----------
        i : int
            The input index, in ``0 … mⁿ−1``.

        Returns
        -------
        numpy.ndarray
            Shape ``(mⁿ,)``: ``p(u | i)`` over the outputs ``u``.
        """
        i = self._index(i)
        u = np.arange(self.group.size)
        return self.f[self.group.combine(u, np.full_like(u, i), -1)]

    def _index(self, i) -> int:
        """``i`` as an input index, refused outside ``0 … mⁿ−1``."""
        if isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer)):
            raise InputError(f"expected an input index, got {i!r}", "input")
        if not 0 <= int(i) < self.group.size:
            raise InputError(f"input index {i} outside 0..{self.group.size - 1}", "input")
        return int(i)

    def sample(self, i: int, rng: np.random.Generator | int | None = None) -> int:
        """Draw an output for input ``i``: ``u = i + z`` with ``z ~ f``.

        Parameters
        ----------
        i : int
            The input index, in ``0 … mⁿ−1``.
        rng : numpy.random.Generator or int, optional
            The random generator, or a seed for :func:`numpy.random.default_rng` (default:
            fresh entropy).

        Returns
        -------
        int
            The output index, in ``0 … mⁿ−1``.
        """
        i = self._index(i)
        rng = np.random.default_rng(rng)
        z = int(rng.choice(self.group.size, p=self.f / self.f.sum()))
        return int(self.group.combine(np.array(i), np.array(z), 1))

    def to_dense(self, max_size: int = MAX_CHECKED) -> np.ndarray:
        """The full matrix (refused above ``max_size`` rows).

        Parameters
        ----------
        max_size : int
            The largest number of rows ``mⁿ`` accepted (default :data:`MAX_CHECKED`, 4096).

        Returns
        -------
        numpy.ndarray
            ``W[x, u] = f(u − x)``, shape ``(mⁿ, mⁿ)``.

        Raises
        ------
        InputError
            If ``mⁿ > max_size`` (field ``mechanism``).
        """
        n = self.group.size
        if n > max_size:
            raise InputError(
                f"{n} × {n} is too large to hold densely (limit {max_size} rows): use row() "
                "or sample() on the structured mechanism",
                "mechanism",
            )
        x = np.arange(n)
        return self.f[self.group.combine(x[None, :], x[:, None], -1)]

    def mixed(self, theta: float) -> TranslationInvariantMechanism:
        """``(1−θ)·W + θ·(uniform constant mechanism)``, still translation invariant.

        Parameters
        ----------
        theta : float
            θ in ``[0, 1]`` (not checked).

        Returns
        -------
        TranslationInvariantMechanism
            A new mechanism on the same group, first row ``(1−θ) f + θ/mⁿ``.
        """
        return TranslationInvariantMechanism(
            (1 - theta) * self.f + theta / self.group.size, self.group
        )

    def leakage(self, prior: Prior | DatabasePrior) -> dict[str, float]:
        """The standard leakage report under the uniform prior, from ``f`` alone.

        With ``W[x, u] = f(u − x)`` and a uniform prior, ``p(u) = 1/N`` and every output's
        posterior is ``f`` reflected: PML and maximal leakage are ``ln(N max f)``, information
        privacy ``max |ln(N f)|``, LDP (and DP, identifiability over all pairs)
        ``ln(max f / min f)``, mutual information and the maximum information leakage
        ``ln N − H(f)``. DP and identifiability with Hamming neighbours on ``Z_mⁿ`` use the
        one-digit differences.

        Parameters
        ----------
        prior : Prior or DatabasePrior
            The uniform prior the mechanism was designed for (checked: another prior, or
            another size, is refused).

        Returns
        -------
        dict
            Notion → level (nats): the keys ``mutual_information``,
            ``max_information_leakage``, ``pml``, ``maximal_leakage``,
            ``information_privacy``, ``identifiability``, ``dp`` and ``ldp``, each ``≥ 0``
            (``inf`` for the ratio levels when ``f`` has a zero).

        Raises
        ------
        InputError
            If ``prior`` is not uniform on the mechanism's ``mⁿ`` inputs.
        """
        f, N = self.f, self.group.size
        if not _uniform_on(prior, N):
            raise InputError(
                f"the report of a translation-invariant mechanism holds for the uniform prior "
                f"on its {N} inputs only; audit the dense matrix for another prior",
                "prior",
            )
        pos = f[f > 0]
        entropy = float(-(pos * np.log(pos)).sum())
        ratio = float(np.log(f.max() / f.min())) if f.min() > 0 else float("inf")
        out = {
            "mutual_information": max(float(np.log(N)) - entropy, 0.0),
            "max_information_leakage": max(float(np.log(N)) - entropy, 0.0),
            "pml": max(float(np.log(N * f.max())), 0.0),
            "maximal_leakage": max(float(np.log(N * f.max())), 0.0),
            # p(u|x) = 0 < e^{−ε}/N fails the lower ratio at every ε
            "information_privacy": (
                float(np.abs(np.log(N * f)).max()) if f.min() > 0 else float("inf")
            ),
            "identifiability": ratio,
            "dp": ratio,
            "ldp": ratio,
        }
        if self.group.n > 1:  # Hamming neighbours: one digit changes
            level = 0.0
            z = np.arange(N)
            for i in range(self.group.n):
                for shift in range(1, self.group.m):
                    delta = shift * self.group.m ** (self.group.n - 1 - i)
                    other = f[self.group.combine(z, np.full(N, delta), -1)]
                    with np.errstate(divide="ignore", invalid="ignore"):
                        r = np.where((f > 0) | (other > 0), np.log(f) - np.log(other), 0.0)
                    level = max(level, float(np.nanmax(r)))
            out["dp"] = out["identifiability"] = level
        return out

    def describe(self) -> dict:
        """A compact, JSON-ready description (the generating row).

        Returns
        -------
        dict
            Keys ``kind`` (``"translation_invariant"``), ``m``, ``n``, ``rule`` (the formula
            in words) and ``f`` (the first row, a list of ``mⁿ`` floats).
        """
        return {
            "kind": self.kind,
            "m": self.group.m,
            "n": self.group.n,
            "rule": "W[x, u] = f[u - x] (digit-wise mod m)",
            "f": self.f.tolist(),
        }


def _equal_positive(p: np.ndarray) -> bool:
    """Whether the pmf ``p`` is uniform: positive entries equal up to rounding."""
    return bool(p.min() > 0 and p.max() - p.min() <= 1e-15 * p.max() * p.size)


def _uniform_on(prior, size: int) -> bool:
    """Whether ``prior`` is the uniform pmf on ``size`` inputs (i.i.d. database rows are
    read from their row pmf, never materialised), by the test of :func:`translation_group`."""
    if getattr(prior, "is_joint", False):
        return False
    if isinstance(prior, DatabasePrior) and prior.is_iid:
        return prior.size == size and _equal_positive(np.asarray(prior.row_probs, float))
    probs = getattr(prior, "probs", None)
    return probs is not None and np.size(probs) == size and _equal_positive(np.asarray(probs))


def _from_description(data: dict) -> TranslationInvariantMechanism:
    """The mechanism of :meth:`TranslationInvariantMechanism.describe`.

    Parameters
    ----------
    data : dict
        A description with ``m``, ``n`` and ``f`` (``kind`` and ``rule`` are ignored).

    Returns
    -------
    TranslationInvariantMechanism
        The mechanism described (``f`` is taken as given, its length is not checked).

    Raises
    ------
    InputError
        If a key is missing or a value cannot be read as numbers (field ``mechanism``).
    """
    try:
        group = Translations(int(data["m"]), int(data["n"]))
        f = np.asarray(data["f"], dtype=float)
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(
            f"not a translation-invariant mechanism description ({exc})", "mechanism"
        ) from None
    if group.m < 2 or group.n < 1:
        raise InputError(f"needs m ≥ 2 and n ≥ 1, got m = {group.m}, n = {group.n}", "mechanism")
    if f.shape != (group.size,) or not np.isfinite(f).all():
        raise InputError(
            f"f must hold {group.size} finite numbers (one per translation), got shape {f.shape}",
            "mechanism.f",
        )
    if f.min() < -1e-12 or abs(float(f.sum()) - 1.0) > 1e-9:
        raise InputError("f must be a pmf (non-negative, summing to 1)", "mechanism.f")
    return TranslationInvariantMechanism(np.clip(f, 0.0, None), group)


TranslationInvariantMechanism.from_description = staticmethod(_from_description)


def translation_group(
    prior: Prior | JointPrior | DatabasePrior,
    distortion: Distortion,
    relation: NeighborRelation | None,
) -> Translations | None:
    """The translation group if the whole LP is invariant under it, else ``None``.

    Parameters
    ----------
    prior : Prior or DatabasePrior
        The prior of the request (a prior object; a joint prior gives ``None``). Only a
        uniform prior (entries positive and equal up to rounding) can be invariant.
    distortion : Distortion
        The distortion of the request: the database Hamming distortion, or a matrix whose
        rows are translates of its first row (checked up to :data:`MAX_CHECKED` symbols).
    relation : NeighborRelation or None
        The neighbour relation of a pair notion (``None`` for the others).

    Returns
    -------
    Translations or None
        ``Z_mⁿ`` for a database prior, ``Z_k`` for a single alphabet of ``k`` symbols, or
        ``None`` when some part of the LP is not invariant.
    """
    if getattr(prior, "is_joint", False):
        return None
    if relation is not None and getattr(relation, "weights", None) is not None:
        return None  # weighted pairs (metric privacy): the reduced rows hold one ratio
    if isinstance(prior, DatabasePrior) and prior.is_iid:
        uniform = _equal_positive(np.asarray(prior.row_probs))
        group = Translations(prior.m, prior.n)
    else:
        p = np.asarray(prior.probs)
        uniform = _equal_positive(p)
        group = Translations(prior.m, prior.n) if prior.is_database else Translations(p.size, 1)
    if not uniform:
        return None
    N = group.size
    if relation is not None and relation.kind != "all":
        if relation.kind == "hamming" and prior.is_database:
            pass  # invariant by construction: one digit changes by any non-zero amount
        else:
            delta = group.combine(relation.right, relation.left, -1)
            codes, counts = np.unique(delta, return_counts=True)
            if (counts != N).any() or relation.n_pairs != N * codes.size or (codes == 0).any():
                return None
    if distortion.is_database_hamming:
        if not prior.is_database or distortion.params["m"] != prior.m:
            return None
        return group
    if N > MAX_CHECKED:
        return None
    d = distortion.matrix
    if d.shape != (N, N):
        return None
    x = np.arange(N)
    shift = group.combine(x[:, None], x[None, :], 1)  # x + z
    if not np.array_equal(d[x[:, None], shift], np.broadcast_to(d[0], (N, N))):
        return None
    return group


def first_row(distortion: Distortion, group: Translations) -> np.ndarray:
    """``d0(z) = d(0, z)`` (the number of non-zero digits for the database Hamming distortion).

    Parameters
    ----------
    distortion : Distortion
        A translation-invariant distortion (see :func:`translation_group`).
    group : Translations
        Its group, of ``mⁿ`` symbols.

    Returns
    -------
    numpy.ndarray
        Shape ``(mⁿ,)``, float: the distortion of output ``z`` for input 0.
    """
    if distortion.is_database_hamming:
        return (group.digits(np.arange(group.size)) != 0).sum(axis=1).astype(float)
    return distortion.matrix[0].astype(float)
