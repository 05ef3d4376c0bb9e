"""Translation symmetry of the linear programs (uniform prior, invariant distortion).

When the prior is uniform and the distortion and neighbour relation are invariant under the
translations of the alphabet (``Z_mⁿ`` acting digit-wise on databases, ``Z_k`` on a single
alphabet) — e.g. the uniform Hamming instances of Wang, Ying & Zhang (2016) — the LP is
invariant under ``W ↦ W[x+g, u+g]``. Averaging an optimum over the group gives an optimum of
the form ``W[x,u] = f(u − x)`` (convexity and invariance), so the LP shrinks exactly to the
``|U|`` entries of ``f`` (one column's constraints).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from privopt.errors import InputError
from privopt.model import DatabasePrior, Distortion, NeighborRelation

__all__ = ["Translations", "TranslationInvariantMechanism", "translation_group", "first_row"]

#: Largest alphabet whose distortion matrix is compared entry by entry for invariance (the
#: database Hamming distortion is recognised without a matrix).
MAX_CHECKED = 4096


@dataclass(frozen=True)
class Translations:
    """Translations of an alphabet: ``Z_mⁿ`` digit-wise (databases) or ``Z_k`` (``n = 1``)."""

    m: int
    n: int

    @property
    def size(self) -> int:
        """The number of symbols ``mⁿ``."""
        return self.m**self.n

    def digits(self, idx: np.ndarray) -> np.ndarray:
        """The base-``m`` digits of symbol indices (``x_1`` most significant)."""
        powers = self.m ** np.arange(self.n - 1, -1, -1)
        return (np.asarray(idx)[..., None] // powers) % self.m

    def combine(self, a: np.ndarray, b: np.ndarray, sign: int) -> np.ndarray:
        """``a + sign·b`` digit-wise mod m, as indices."""
        powers = self.m ** np.arange(self.n - 1, -1, -1)
        digits = (self.digits(a) + sign * self.digits(b)) % self.m
        return digits @ powers

    def differences(self, relation: NeighborRelation) -> np.ndarray:
        """The distinct differences ``b − a`` over the pairs ``(a, b)`` of ``relation``."""
        return np.unique(self.combine(relation.right, relation.left, -1))


class TranslationInvariantMechanism:
    """``W[x,u] = f(u − x)`` on ``Z_mⁿ`` (or ``Z_k``), held by its first row ``f``.

    Parameters
    ----------
    f : array_like
        The first row (a pmf over the group).
    group : Translations
    """

    kind = "translation_invariant"

    def __init__(self, f: np.ndarray, group: Translations):
        self.f = np.asarray(f, dtype=float)
        self.group = group
        self.shape = (group.size, group.size)

    def row(self, i: int) -> np.ndarray:
        """``W[i, ·] = f(· − i)``."""
        u = np.arange(self.group.size)
        return self.f[self.group.combine(u, np.full_like(u, i), -1)]

    def sample(self, i: int, rng: np.random.Generator | int | None = None) -> int:
        """Draw an output for input ``i``: ``u = i + z`` with ``z ~ f``."""
        rng = np.random.default_rng(rng)
        z = int(rng.choice(self.group.size, p=self.f / self.f.sum()))
        return int(self.group.combine(np.array(i), np.array(z), 1))

    def to_dense(self, max_size: int = MAX_CHECKED) -> np.ndarray:
        """The full matrix (refused above ``max_size`` rows)."""
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
        """``(1−θ)·W + θ·(uniform constant mechanism)``, still translation invariant."""
        return TranslationInvariantMechanism(
            (1 - theta) * self.f + theta / self.group.size, self.group
        )

    def leakage(self, prior) -> dict[str, float]:
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
            The uniform prior the mechanism was designed for.

        Returns
        -------
        dict
            Notion → level (nats).
        """
        f, N = self.f, self.group.size
        pos = f[f > 0]
        entropy = float(-(pos * np.log(pos)).sum())
        ratio = float(np.log(f.max() / f.min())) if f.min() > 0 else float("inf")
        out = {
            "mutual_information": max(float(np.log(N)) - entropy, 0.0),
            "max_information_leakage": max(float(np.log(N)) - entropy, 0.0),
            "pml": max(float(np.log(N * f.max())), 0.0),
            "maximal_leakage": max(float(np.log(N * f.max())), 0.0),
            "information_privacy": float(np.abs(np.log(N * pos)).max()),
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
        """A compact, JSON-ready description (the generating row)."""
        return {
            "kind": self.kind,
            "m": self.group.m,
            "n": self.group.n,
            "rule": "W[x, u] = f[u - x] (digit-wise mod m)",
            "f": self.f.tolist(),
        }


def _from_description(data: dict) -> TranslationInvariantMechanism:
    try:
        group = Translations(int(data["m"]), int(data["n"]))
        return TranslationInvariantMechanism(np.asarray(data["f"], dtype=float), group)
    except (KeyError, TypeError, ValueError) as exc:
        from privopt.errors import InputError

        raise InputError(
            f"not a translation-invariant mechanism description ({exc})", "mechanism"
        ) from None


TranslationInvariantMechanism.from_description = staticmethod(_from_description)


def translation_group(
    prior, distortion: Distortion, relation: NeighborRelation | None
) -> Translations | None:
    """The translation group if the whole LP is invariant under it, else ``None``.

    Parameters
    ----------
    prior : Prior or DatabasePrior
    distortion : Distortion
    relation : NeighborRelation or None
        The neighbour relation of a pair notion (``None`` for the others).

    Returns
    -------
    Translations or None
    """
    if getattr(prior, "is_joint", False):
        return None
    if relation is not None and getattr(relation, "weights", None) is not None:
        return None  # weighted pairs (metric privacy): the reduced rows hold one ratio
    if isinstance(prior, DatabasePrior) and prior.is_iid:
        p = prior.row_probs
        uniform = p.min() > 0 and p.max() - p.min() <= 1e-15 * p.max() * p.size
        group = Translations(prior.m, prior.n)
    else:
        p = np.asarray(prior.probs)
        uniform = p.min() > 0 and p.max() - p.min() <= 1e-15 * p.max() * p.size
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
    """``d0(z) = d(0, z)`` (the number of non-zero digits for the database Hamming distortion)."""
    if distortion.is_database_hamming:
        return (group.digits(np.arange(group.size)) != 0).sum(axis=1).astype(float)
    return distortion.matrix[0].astype(float)
