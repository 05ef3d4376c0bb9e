"""Robust (ε, 𝒫)-PML over a finite set of priors.

[Saeidian-Rethinking] Def. 2.6: a mechanism is (ε, 𝒫)-PML when its PML is at most ε under
every prior of the class 𝒫. Here 𝒫 is the finite list ``priors`` (pmfs over the secret
alphabet) and the constraint is imposed at each listed prior; the distortion is taken under
the problem's own prior.

* **The hull.** The PML constraint ``p(u|x) ≤ e^ε Q_U(u)`` is linear in ``Q`` for the
  secrets ``x`` in ``supp Q``, so it extends from the listed priors to their convex hull
  *when every listed prior has the same support*. Otherwise it does not (vertices
  ``(½,½,0)`` and ``(0,½,½)`` at ε = 0.3: the midpoint prior sees PML 0.6): after a design
  the supremum over the hull (:func:`privopt.measures.robust_pml_hull_level`) is compared
  with ε, and a shortfall is a warning and a ``result.extra`` note.
* **Product classes** (``entry_priors``, databases only): each entry ``D_i`` ranges over the
  hull of its own list of pmfs over ``D`` and the prior is their product
  ([Saeidian-Rethinking] Theorem 4.2(3): DP is PML over product priors). ``Q_U(u)`` is
  multilinear in the entries' pmfs, so its minimum over the product of polytopes is at a
  product of vertices: the class is the list of all such products.
* **All priors** (``priors = "all"``): the supremum of the PML over every full-support prior
  is the leakage capacity ([Saeidian-Rethinking] Theorem 2.8), i.e. LDP over all pairs; the
  request is designed as ``ldp`` and says so in ``result.extra``.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from privopt import measures
from privopt.errors import InputError
from privopt.notions._pairwise import mixing_weight, output_law_rows, repair_terms
from privopt.notions.base import (
    DesignContext,
    LagrangeTerms,
    Notion,
    NotionOption,
    dual_array,
    register,
)
from privopt.validation import as_pmf

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Mapping, Sequence

    import cvxpy as cp

    from privopt.model import DatabasePrior, JointPrior, NeighborRelation, Prior
    from privopt.notions.base import LagrangeContext

#: Most priors a product class may expand to.
MAX_PRODUCT_PRIORS = 4096

#: The note of a design whose guarantee does not extend to the hull of the listed priors.
HULL_NOTE = "robust_pml_hull"


def validate_priors(
    value: Any, prior: Prior | JointPrior | DatabasePrior, field: str
) -> list[np.ndarray] | str:
    """A non-empty list of pmfs over the secret alphabet of ``prior``, or ``"all"``.

    Parameters
    ----------
    value : list of array_like or str
        The pmfs, or ``"all"`` (every full-support prior).
    prior : Prior, JointPrior or DatabasePrior
        The prior of the request (gives the number of secrets).
    field : str
        The key named in messages (e.g. ``privacy.priors``).

    Returns
    -------
    list of numpy.ndarray or str
        The validated pmfs, each of length ``|S|``, or ``"all"``.

    Raises
    ------
    InputError
        For another string, an empty or non-list value, or an entry that is not a pmf over
        the secrets.
    """
    if isinstance(value, str):
        if value == "all":
            return "all"
        raise InputError(f'expected a list of pmfs or "all", got {value!r}', field)
    if isinstance(value, np.ndarray):
        value = list(value)
    if not isinstance(value, (list, tuple)) or not value:
        raise InputError(
            "expected a non-empty list of pmfs over the secret alphabet, e.g. "
            "[[0.5, 0.5], [0.2, 0.8]]",
            field,
        )
    out = []
    for i, q in enumerate(value):
        q = as_pmf(q, f"{field}[{i}]")
        if q.size != prior.n_secrets:
            raise InputError(
                f"has {q.size} entries but the secret has {prior.n_secrets} symbols",
                f"{field}[{i}]",
            )
        out.append(q)
    return out


def validate_entry_priors(
    value: Any, prior: Prior | JointPrior | DatabasePrior, field: str
) -> list[np.ndarray]:
    """Per-entry sets of pmfs over ``D`` (one list per entry, or one list for every entry),
    expanded to the products of their vertices: pmfs over ``Dⁿ`` in lexicographic order.

    Parameters
    ----------
    value : list
        ``n`` lists of pmfs over the ``m`` row values, or a single list for every entry.
    prior : DatabasePrior
        The prior of the request (gives ``n`` and ``m``).
    field : str
        The key named in messages (e.g. ``privacy.priors``).

    Returns
    -------
    list of numpy.ndarray
        The Kronecker products of one pmf per entry, each of length ``mⁿ``.

    Raises
    ------
    InputError
        For a prior that is not a database prior, a wrong number of lists, an entry that is
        not a pmf over the row values, or more than :data:`MAX_PRODUCT_PRIORS` products.
    """
    from privopt.model import DatabasePrior

    if not isinstance(prior, DatabasePrior):
        raise InputError("per-entry prior sets need a database prior ([prior.database])", field)
    if not isinstance(value, (list, tuple)) or not value:
        raise InputError(
            "expected one list of pmfs over the row values per entry (or a single list for "
            "every entry), e.g. [[[0.9, 0.1], [0.1, 0.9]]]",
            field,
        )
    per_entry = list(value) if len(value) == prior.n else None
    if per_entry is None and len(value) == 1:
        per_entry = [value[0]] * prior.n
    if per_entry is None:
        raise InputError(f"give 1 or n = {prior.n} lists, got {len(value)}", field)
    sets = []
    for i, entry in enumerate(per_entry):
        if not isinstance(entry, (list, tuple, np.ndarray)) or len(entry) == 0:
            raise InputError(
                "expected a non-empty list of pmfs over the row values", f"{field}[{i}]"
            )
        pmfs = [as_pmf(q, f"{field}[{i}]") for q in entry]
        if any(q.size != prior.m for q in pmfs):
            raise InputError(f"each pmf needs m = {prior.m} entries", f"{field}[{i}]")
        sets.append(pmfs)
    count = int(np.prod([len(s) for s in sets]))
    if count > MAX_PRODUCT_PRIORS:
        raise InputError(
            f"{count} products of vertices exceed {MAX_PRODUCT_PRIORS}; list fewer pmfs", field
        )
    out = []
    for combo in itertools.product(*sets):
        q = np.ones(1)
        for factor in combo:
            q = np.kron(q, factor)
        out.append(q)
    return out


ABOUT_CHOICES = ("secret", "entries")


def validate_about(value: Any, prior: Prior | JointPrior | DatabasePrior, field: str) -> str:
    """``"secret"`` (PML about ``X``) or ``"entries"`` (about each database entry).

    Parameters
    ----------
    value : str
        The value given.
    prior : Prior, JointPrior or DatabasePrior
        The prior of the request.
    field : str
        The key named in messages (e.g. ``privacy.priors``).

    Returns
    -------
    str
        ``value``, one of :data:`ABOUT_CHOICES`.

    Raises
    ------
    InputError
        For another value, or ``"entries"`` without a database prior.
    """
    from privopt.model import DatabasePrior

    if value not in ABOUT_CHOICES:
        raise InputError(f"expected one of {', '.join(ABOUT_CHOICES)}, got {value!r}", field)
    if value == "entries" and not isinstance(prior, DatabasePrior):
        raise InputError('about = "entries" needs a database prior ([prior.database])', field)
    return value


def condition_rows(
    q: np.ndarray, prior: Prior | JointPrior | DatabasePrior, about: str
) -> np.ndarray:
    """The rows ``r`` whose constraint is ``r · p(u|·) ≤ e^ε Q_U(u)`` under the prior ``q``.

    ``about = "secret"``: the point masses of ``supp q`` (``ℓ(X→u)``). ``about = "entries"``:
    for every entry ``i`` and value ``d`` with ``Q(D_i = d) > 0``, the conditional law
    ``Q(x | D_i = d)``, so that ``r · p(u|·) = P(u | D_i = d)`` and the constraint is
    ``ℓ(D_i→u) ≤ ε`` ([Saeidian-Rethinking] Section 4).

    Parameters
    ----------
    q : numpy.ndarray
        A pmf over the secrets (one prior of the class).
    prior : Prior, JointPrior or DatabasePrior
        The prior of the request (a database prior for ``"entries"``).
    about : str
        ``"secret"`` or ``"entries"``.

    Returns
    -------
    numpy.ndarray
        One row per condition, ``|S|`` columns, each row a pmf over the secrets.
    """
    if about != "entries":
        return np.eye(q.size)[q > 0]
    rows = []
    for i in range(prior.n):
        for d in range(prior.m):
            mask = prior.digits[:, i] == d
            mass = q[mask].sum()
            if mass > 0:
                rows.append(np.where(mask, q, 0.0) / mass)
    return np.array(rows)


@register
class RobustPML(Notion):
    """PML guaranteed for every prior of a class (the convex hull of listed priors, or all
    priors: ε-free-lunch privacy) (Saeidian et al. 2024, Def. 2.6, Thms 2.8 and 4.2)."""

    name = "robust_pml"
    convexity = "linear"
    parameter = "exp"
    source = "Saeidian-Rethinking Def. 2.6, Thms 2.8 and 4.2"
    options = (
        NotionOption(
            "priors",
            'the prior class: a list of pmfs over the secret alphabet, or "all" (every '
            "full-support prior: leakage capacity, designed as ldp)",
            validate_priors,
            example="priors = [[0.5, 0.5], [0.2, 0.8]]",
        ),
        NotionOption(
            "entry_priors",
            "databases: per-entry lists of pmfs over the row values; the class is the products "
            "of one pmf per entry (their hulls' products)",
            validate_entry_priors,
            example="entry_priors = [[[0.9, 0.1], [0.1, 0.9]]]",
        ),
        NotionOption(
            "about",
            'what the PML is about: "secret" (ℓ(X→u), default) or "entries" (ℓ(D_i→u) for '
            "every entry of a database; over product priors this is DP, Theorem 4.2(3))",
            validate_about,
            example='about = "entries"',
        ),
    )

    def sample_options(self, prior: Prior | JointPrior | DatabasePrior) -> dict:
        """The prior itself and the uniform prior on its inputs, as the class.

        Returns
        -------
        dict
            ``{"priors": [pmf, uniform]}``.
        """
        pmf = [float(x) for x in prior.input_probs]
        return {"priors": [pmf, [1.0 / len(pmf)] * len(pmf)]}

    def validate_options(
        self,
        prior: Prior | JointPrior | DatabasePrior,
        given: Mapping[str, Any],
        prefix: str = "privacy",
        keywords: Iterable[str] = (),
    ) -> dict:
        """The base class's checks, then: ``priors`` or ``entry_priors`` is required,
        ``priors = "all"`` excludes ``entry_priors``, and the listed priors of both are merged.

        Returns
        -------
        dict
            With ``priors = "all"``, the validated options as given; otherwise ``priors`` (the
            listed pmfs and the products of ``entry_priors``) and ``about`` unless it is
            ``"secret"``.

        Raises
        ------
        InputError
            For an invalid option, neither ``priors`` nor ``entry_priors``, or both with
            ``priors = "all"``.
        """
        out = super().validate_options(prior, given, prefix, keywords)
        if "priors" not in out and "entry_priors" not in out:
            raise InputError(
                'missing: robust_pml needs priors (a list of pmfs, or "all") or entry_priors '
                "(per-entry lists, databases), e.g. priors = [[0.5, 0.5], [0.2, 0.8]]",
                f"{prefix}.priors",
            )
        if out.get("priors") == "all":
            if "entry_priors" in out:
                raise InputError(
                    'give priors = "all" or entry_priors, not both', f"{prefix}.priors"
                )
            return out
        listed = list(out.pop("priors", [])) + list(out.pop("entry_priors", []))
        about = out.get("about", "secret")
        return {"priors": listed, "about": about} if about != "secret" else {"priors": listed}

    def constraint_nonzeros(
        self, n_secrets: int, n_inputs: int, n_outputs: int, options: Mapping[str, Any]
    ) -> float:
        """Non-zeros in the dense program: one output-law constraint per secret, output and prior
        of the class, ``|Y| + 1`` non-zeros each.

        Returns
        -------
        float
            The count.
        """
        priors = options.get("priors") or ()
        return float(max(len(priors), 1)) * n_secrets * n_outputs * (n_inputs + 1)

    def measure(
        self,
        prior: Prior | JointPrior | DatabasePrior,
        mechanism: np.ndarray,
        neighbors: NeighborRelation | None = None,
        **options: Any,
    ) -> float:
        """The largest PML over the listed priors, about the secret or about each database entry
        (Saeidian et al. 2024, Def. 2.6), or the leakage capacity for ``priors = "all"``
        (Saeidian et al. 2024, Thm 2.8).

        Returns
        -------
        float
            The level in nats, in ``[0, inf]``.

        Raises
        ------
        InputError
            For options that :meth:`validate_options` refuses.
        """
        channel = prior.induced_channel(np.asarray(mechanism, dtype=float))
        valid = self.validate_options(prior, options)
        priors, about = valid["priors"], valid.get("about", "secret")
        if priors == "all":  # the supremum over every full-support prior
            return measures.leakage_capacity(channel)
        if about == "secret":
            return max(measures.pml_level(q, channel) for q in priors)
        level = 0.0
        for q in priors:
            q_u = q @ channel
            seen = q_u > 0
            top = (condition_rows(q, prior, about) @ channel)[:, seen].max(axis=0)
            level = max(level, float(np.log(top / q_u[seen]).max()))
        return level

    def result_notes(
        self,
        prior: Prior | JointPrior | DatabasePrior,
        mechanism: np.ndarray,
        level: float,
        **options: Any,
    ) -> dict:
        """The hull check: the PML supremum over the convex hull of the listed priors, and a
        note when it exceeds the level met at the listed priors.

        Returns
        -------
        dict
            Empty unless the priors are listed, the PML is about the secret and the hull level
            exceeds the level met; then the message :data:`HULL_NOTE` and
            ``robust_pml_hull_level``.
        """
        priors = options.get("priors")
        if not isinstance(priors, list) or options.get("about", "secret") != "secret":
            return {}
        listed = measures.robust_pml_level(prior, mechanism, priors)
        hull = measures.robust_pml_hull_level(prior, mechanism, priors)
        if hull <= max(level, listed) + 1e-7 * (1 + max(level, listed)):
            return {}
        return {
            HULL_NOTE: (
                f"the guarantee holds at the listed priors (PML ≤ {listed:.6g}) but not on "
                f"their convex hull, where the PML reaches {hull:.6g}: the listed priors do "
                "not share one support. List priors of the same support (or every vertex "
                "of the class you mean) to cover the hull."
            ),
            "robust_pml_hull_level": hull,
        }

    def constraints(self, ctx: DesignContext, level: cp.Parameter) -> list[cp.Constraint]:
        """``r · p(u|·) ≤ e^ε Q_U(u)`` for every listed prior ``q`` and each of its condition rows
        ``r`` (:func:`condition_rows`): PML at most ε under each listed prior (Saeidian et al.
        2024, Def. 2.6), on the channel of every secret.

        Returns
        -------
        list of cvxpy.Constraint
            One constraint per listed prior (condition rows × ``|U|``).
        """
        import cvxpy as cp

        channel = ctx.prior.induced_channel(ctx.W)  # all secrets, not only the nominal support
        about = ctx.options.get("about", "secret")
        out = []
        for q in ctx.options["priors"]:
            rows = condition_rows(q, ctx.prior, about)
            q_u = q @ channel  # p_q(u) = Σ_x q(x) p(u|x), linear in W
            lhs = channel[np.flatnonzero(q > 0), :] if about == "secret" else rows @ channel
            out.append(
                lhs
                <= level
                * (np.ones((rows.shape[0], 1)) @ cp.reshape(q_u, (1, ctx.n_outputs), order="C"))
            )
        return out

    def repair_weight(
        self,
        prior: Prior | JointPrior | DatabasePrior,
        channel: np.ndarray,
        anchor: np.ndarray,
        level: float,
        neighbors: NeighborRelation | None = None,
        priors: Sequence[np.ndarray] = (),
        about: str = "secret",
    ) -> float | None:
        """The least weight of the anchor that restores ``r · p(u|·) ≤ e^ε Q_U(u)`` at every listed
        prior, in closed form.

        Parameters
        ----------
        prior : Prior, JointPrior or DatabasePrior
            The prior of the request (only its secret probabilities are used).
        channel : numpy.ndarray
            ``p(u|s)`` of the answer, ``|S| × |U|``.
        anchor : numpy.ndarray
            ``p(u)`` of the constant mechanism mixed in, length ``|U|``.
        level : float
            ε in nats.
        neighbors : NeighborRelation or None
            Ignored (the notion uses no relation).
        priors : sequence of numpy.ndarray
            The listed priors, pmfs over the secrets.
        about : str
            ``"secret"`` (default) or ``"entries"``.

        Returns
        -------
        float or None
            ``θ`` in ``[0, 1)`` (0 when the answer already meets the level), or ``None`` for
            ``"entries"`` when ``channel`` is not given on every secret (then the solver layer
            bisects).
        """
        ratio, slack = repair_terms(level)
        theta = 0.0
        for q in priors:
            if about == "secret":
                ch, q_u, _ = output_law_rows(q, channel, anchor)
            else:  # rows = conditional laws of the database given one entry
                if channel.shape[0] != q.size:
                    return None  # not on every secret: bisect instead
                ch = condition_rows(q, prior, about) @ channel
                q_u = np.broadcast_to(q @ channel, ch.shape)
            c = np.broadcast_to(anchor, ch.shape)
            theta = max(theta, mixing_weight(ch, q_u, c, c, ratio, slack))
        return theta

    def lagrangian(self, lctx: LagrangeContext, duals: list) -> LagrangeTerms:
        """The terms of ``Σ_q Σ λ_q (r · p(u|·) − e^ε Q_U(u))`` over the listed priors and their
        condition rows, on the channel of every secret.

        Returns
        -------
        LagrangeTerms
            All coefficients in ``channel_all`` (``|S| × |U|``); the support channel and output
            coefficients and the constant are 0.
        """
        # Σ_q Σ λ_q (r·p(u|·) − c Σ_x' q(x') p(u|x')) over the condition rows r of q
        c = lctx.level_value
        n_out = lctx.channel.shape[1]
        about = lctx.options.get("about", "secret")
        coef = np.zeros((lctx.prior.n_secrets, n_out))
        for q, dual in zip(lctx.options["priors"], duals, strict=True):
            rows = condition_rows(q, lctx.prior, about)
            lam = dual_array(dual, (rows.shape[0], n_out))
            coef += rows.T @ lam
            coef -= c * np.outer(q, lam.sum(axis=0))
        return LagrangeTerms(np.zeros(lctx.channel.shape), np.zeros(n_out), 0.0, coef)

    def max_level(self, prior: Prior | JointPrior | DatabasePrior) -> float:
        """``inf``: no level beyond which the constraint excludes nothing is computed for a class.

        Returns
        -------
        float
            ``inf``.
        """
        return float("inf")
